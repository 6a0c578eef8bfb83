"""`tablectl verify [--seed HEX] [--json]`: authenticate the installed software on demand.

Prints one line per component (pass, or FAIL and the file), the SHA-256 of the whole program and,
with --seed, its HMAC-SHA256 under the seed (hardware/authentication.md computes the same with
standard tools). Exit 0 when the software is the signed release, 1 otherwise. The run is
journaled as a `software-check` entry when no table holds the journal; while the table runs it
holds the journal alone, so the command asks it (`POST /api/verify`, with the surveillance or
supervisor token of the environment) to run the check itself and journal it.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from controller.security.authentication import Report, SeedError, authenticate, parse_seed

EXIT_FAILED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", metavar="HEX", help="a verifier's seed: print the program's HMAC-SHA256 under it")
    parser.add_argument("--json", action="store_true", help="the result as JSON")
    parser.add_argument("--release-key", type=Path, metavar="FILE", help="the release key's public half "
                        "(default: config security.release_key, /etc/tablectl/release-key.pub)")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    parser.add_argument("--sim", action="store_true", help="the journal of a simulated table")
    parser.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    parser.add_argument("--http", metavar="HOST:PORT", help="where the running table's API listens (config http)")


def run(args: argparse.Namespace, config: Any, state_dir: Path) -> int:
    try:
        seed = parse_seed(args.seed) if args.seed is not None else None
    except SeedError as exc:
        print(f"tablectl: refused: {exc}", file=sys.stderr)
        return 2
    key = args.release_key or Path(config.security.release_key)
    report = authenticate(key, seed)
    journaled = journal_run(report, config, state_dir, simulated=args.sim, http=args.http)
    key_path = Path(config.security.table_key or state_dir / "table.key")
    fingerprint, key_line = table_key(key_path, config)
    if args.json:
        print(json.dumps(report.to_json() | {"journaled": journaled, "table_key": fingerprint}, indent=2))
    else:
        for line in report.lines():
            print(line)
        print(key_line)
        print(f"journal: {journaled}")
    return 0 if report.ok else EXIT_FAILED


def table_key(path: Path, config: Any) -> tuple[str | None, str]:
    """The fingerprint of the table's signing key (controller/security/chainhead.py), and the line that says
    it: what an operator enrols on the floor (`tablectl floor enroll`, hardware/floor.md)."""
    from controller.security.chainhead import fingerprint_at

    try:
        found = fingerprint_at(path)
    except ValueError as exc:
        return None, f"table key: cannot be read: {exc}"
    if found is None:
        return None, f"table key: none yet at {path} (the table makes it at its first start with a floor)"
    site = f" --site {config.floor.site}" if config.floor is not None else ""
    enrol = f"tablectl floor enroll{site} --table {config.table_id} --key {found}"
    return found, f"table key: {found} ({path}); enrol it on the floor: {enrol}"


def ask_running_table(config: Any, report: Report, busy: Exception, address: str | None = None) -> str:
    """The table runs and alone writes its journal: ask it (POST /api/verify, with the surveillance
    or supervisor token from the environment, as the service has them) to run the check itself and
    journal it. What happened, in words."""
    import os
    import ssl
    import urllib.error
    import urllib.request

    token = None
    for role in ("SURVEILLANCE", "SUPERVISOR"):
        name = f"TABLECTL_{role}_TOKEN"
        token = os.environ.get(name)
        if token is None and os.environ.get(f"{name}_FILE"):
            try:
                token = Path(os.environ[f"{name}_FILE"]).read_text(encoding="utf-8").strip()
            except OSError:
                token = None
        if token:
            break
    if not token:
        return (
            f"not journaled by this command: {busy}; set TABLECTL_SURVEILLANCE_TOKEN (or _FILE) so that it asks "
            "the running table for a journaled check, or use POST /api/verify"
        )
    http = config.http
    host, port = http.host, http.port
    if address:  # as `tablectl run --http` was given it
        host, _, port_text = address.rpartition(":")
        port = int(port_text) if port_text.isdigit() else port
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    scheme = "https" if http.tls else "http"
    context = ssl.create_default_context(cafile=http.tls_cert) if http.tls else None
    if context is not None:
        context.check_hostname = False  # the table's own certificate, for its LAN address, checked by its CA
    body = json.dumps({"seed": report.seed} if report.seed else {}).encode()
    request = urllib.request.Request(
        f"{scheme}://{host}:{port}/api/verify", data=body, method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json", "X-Tablectl": "1"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=120, context=context) as answer:
            said = json.loads(answer.read())
    except (OSError, ValueError) as exc:
        return f"not journaled: {busy}, and asking it at {scheme}://{host}:{port} failed: {exc}"
    result = {True: "passed", False: "FAILED", None: "not a signed release"}[said.get("ok")]
    return f"the running table checked itself too ({result}) and journaled it as entry {said.get('seq')}"


def journal_run(report: Report, config: Any, state_dir: Path, *, simulated: bool, http: str | None = None) -> str:
    """Journal this run as the table's `software-check` entry, if the journal is here and free:
    what happened, in words."""
    from controller.app.startup import StartRefused, StateDirBusy, lock_state_dir
    from controller.journal.log import Journal, JournalError
    from controller.table import Table, TableError

    path = state_dir / "journal.sqlite3"
    if not path.exists():
        return f"not journaled: there is no journal at {path}"
    try:
        lock = lock_state_dir(state_dir, "tablectl verify")
    except StateDirBusy as exc:
        return ask_running_table(config, report, exc, http)
    except StartRefused as exc:
        return f"not journaled: {exc}"
    try:
        journal = Journal(path)
        try:
            table = Table(journal, game=config.game, rules=config.rules, table_id=config.table_id, simulated=simulated)
            entry = table.software_check(report.to_json(), "on demand by tablectl verify", by=getpass.getuser())
        finally:
            journal.close()
    except (JournalError, TableError, ValueError, OSError) as exc:
        return f"not journaled: {exc}"
    finally:
        lock.close()
    return f"journaled as entry {entry.seq} of {path}"
