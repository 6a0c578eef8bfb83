"""Records of every install, upgrade and removal of the table's software, in the journal.

A `software-install` entry says what changed (installed, upgraded, downgraded, reinstalled,
removed), the version, the SHA-256 of the release's signed manifest (the digest a regulator
compares with the approved release's master list), who and when. The install step records it
(`tablectl software record --action ... --by NAME`, with the table stopped), and the table itself
records at start any release it finds that differs from the last one recorded ("found at start",
with the user that owns the installed files), so an install that bypassed the install step is
on the record too. `tablectl recall --software` and the supervisor's Configuration panel list
them.
"""

from __future__ import annotations

import hashlib
import pwd
from pathlib import Path
from typing import Any

from controller.journal.log import Entry, Journal
from controller.security.authentication import installed_root
from controller.security.release import MANIFEST

KIND = "software-install"
ACTIONS = ("installed", "upgraded", "downgraded", "reinstalled", "removed")


def installed_release(root: Path | None = None) -> dict[str, Any] | None:
    """The signed release the running code comes from: version, manifest digest and the user who
    owns its files; None for a checkout (no signed manifest)."""
    root = root or installed_root()
    found = sorted(root.glob(f"tablectl-*.dist-info/{MANIFEST}"))
    if len(found) != 1:
        return None
    manifest = found[0]
    try:
        owner = pwd.getpwuid(manifest.stat().st_uid).pw_name
    except KeyError:
        owner = f"uid {manifest.stat().st_uid}"
    return {
        "version": manifest.parent.name.removeprefix("tablectl-").removesuffix(".dist-info"),
        "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
        "owner": owner,
    }


def history(journal: Journal, count: int = 1000) -> list[Entry]:
    """The last `count` install records, oldest first."""
    return journal.last_of_kinds((KIND,), count)


def _key(version: str) -> tuple[Any, ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in version.replace("-", ".").split("."))


def action_for(previous: dict[str, Any] | None, release: dict[str, Any]) -> str | None:
    """What installing `release` over the last record `previous` was (None: nothing changed)."""
    if previous is None or previous.get("action") == "removed":
        return "installed"
    if previous.get("manifest_sha256") == release["manifest_sha256"]:
        return None
    old, new = str(previous.get("version", "")), release["version"]
    if old == new:
        return "reinstalled"
    return "upgraded" if _key(new) > _key(old) else "downgraded"


def body(action: str, release: dict[str, Any], by: str, previous: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "action": action,
        "version": release["version"],
        "manifest_sha256": release["manifest_sha256"],
        "by": by,
        "previous": previous.get("version") if previous else None,
    }


def describe(entry: Entry) -> str:
    """One line: when, what, which release, who (recall --software, the Configuration panel)."""
    b = entry.body
    digest = str(b.get("manifest_sha256") or "")
    was = f" (was {b['previous']})" if b.get("previous") and b.get("action") != "removed" else ""
    return (
        f"{entry.at}  {b.get('action')} tablectl {b.get('version')}{was}  manifest sha256 {digest}  by {b.get('by')}"
    )
