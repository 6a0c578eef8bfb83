"""What install.sh asks the running table, with Python's standard library only (no tablectl import):

    probe.py round  --root R                    is a round open? exit 0 no, 3 yes, 4 cannot tell
    probe.py health --root R --version V --timeout S
                                                wait until tablectl V answers GET /api/health with
                                                its software up; exit 0 healthy, 1 not (within S s)

Healthy judges the software, not the devices: tablectl V answers, and its software
authentication did not fail. A table that answers `fault` only for latched faults of its devices
or its journal (a shoe unplugged, a camera moved) is healthy: the release that was running had
the same fault and going back would not clear it; the supervisor screen does. A failed software
authentication (`software-authentication`) is not healthy, at once: waiting longer would not
change it, and going back to the release that passed it is what the operator needs.

The address is the table's own (`[http]` of R/etc/tablectl/table.toml, 127.0.0.1:8000 by default;
0.0.0.0 is asked on 127.0.0.1); the token is the service's supervisor (or dealer) token file under
R/etc/tablectl/credentials/, readable by root only. Over HTTPS the certificate is not checked: this
asks the daemon on this machine whether it is up, and sends the token to that address only.
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

CANNOT_TELL = 4
ROUND_OPEN = 3
#: Latched faults that say the software itself is wrong: a release with one is not healthy.
SOFTWARE_FAULTS = ("software-authentication",)


class Table:
    def __init__(self, root: Path) -> None:
        config: dict[str, Any] = {}
        path = root / "etc/tablectl/table.toml"
        if path.is_file():
            with path.open("rb") as f:
                config = tomllib.load(f)
        http = config.get("http", {})
        host = str(http.get("host", "127.0.0.1"))
        host = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        self.tls = bool(http.get("tls_cert"))
        self.base = f"{'https' if self.tls else 'http'}://{host}:{int(http.get('port', 8000))}"
        self.token = ""
        for name in ("supervisor-token", "dealer-token"):
            token_file = root / "etc/tablectl/credentials" / name
            if token_file.is_file():
                self.token = token_file.read_text(encoding="utf-8").strip()
                break

    def get(self, path: str) -> dict[str, Any]:
        request = urllib.request.Request(self.base + path)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        context = ssl._create_unverified_context() if self.tls else None  # the local daemon, see above
        with urllib.request.urlopen(request, timeout=10, context=context) as answer:
            body: dict[str, Any] = json.load(answer)
            return body


def round_open(table: Table) -> int:
    if not table.token:
        print("cannot tell whether a round is open: no token in /etc/tablectl/credentials/")
        return CANNOT_TELL
    try:
        state = table.get("/api/state")
    except (OSError, ValueError) as err:
        print(f"cannot tell whether a round is open: {table.base}/api/state: {err}")
        return CANNOT_TELL
    if state.get("round_status") == "open":
        print(f"round {state.get('round')} is open")
        return ROUND_OPEN
    print(f"no round is open (last round {state.get('round')}, {state.get('round_status') or 'none yet'})")
    return 0


def healthy(table: Table, version: str, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while True:
        try:
            health = table.get("/api/health")
            seen = health.get("version")
            status = health.get("status")
            if status == "ok" and (not table.token or seen == version):
                print(f"healthy: {table.base}/api/health answers ok" + (f" from tablectl {seen}" if seen else ""))
                return 0
            if status == "fault" and table.token and seen == version:
                return latched(table, version)
            last = f"status {status!r}" + (f" from tablectl {seen}" if seen else "")
        except (OSError, ValueError) as err:
            last = str(getattr(err, "reason", err))
        if time.monotonic() >= deadline:
            print(f"not healthy within {timeout:g} s: {table.base}/api/health: {last}")
            return 1
        time.sleep(1)  # polling a daemon that is starting; the deadline above is the bound


def latched(table: Table, version: str) -> int:
    """tablectl `version` answers with play stopped by latched faults: healthy unless one of them
    is the software's own (see the top of this file)."""
    faults = [f for f in table.get("/api/state").get("faults", []) if isinstance(f, dict)]
    words = "; ".join(f"{f.get('title') or f.get('code')} ({f.get('code')})" for f in faults) or "none listed"
    software = [f for f in faults if f.get("code") in SOFTWARE_FAULTS]
    if software:
        print(f"tablectl {version} answers, but its software authentication failed: "
              + "; ".join(str(f.get("message") or f.get("code")) for f in software))
        return 1
    print(f"healthy: {table.base}/api/health answers from tablectl {version}, its software up; play is stopped "
          f"by latched faults of the table, not of the release: {words} (the supervisor screen clears them)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    parser.add_argument("what", choices=("round", "health"))
    parser.add_argument("--root", type=Path, default=Path("/"))
    parser.add_argument("--version", default="")
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()
    table = Table(args.root)
    return round_open(table) if args.what == "round" else healthy(table, args.version, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
