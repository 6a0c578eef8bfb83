"""`tablectl verify [--seed HEX] [--json]`: authenticate the installed software on demand.

Prints one line per component (pass, or FAIL and the file), the SHA-256 of the whole program and,
with --seed, its HMAC-SHA256 under the seed (hardware/authentication.md computes the same with
standard tools). Exit 0 when the software is the signed release, 1 otherwise. The run is
journaled as a `software-check` entry when no table holds the journal; while the table runs it
holds the journal alone, and the supervisor's screen (or `POST /api/verify`) runs the check the
table journals.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from controller.authentication import Report, SeedError, authenticate, parse_seed

EXIT_FAILED = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", metavar="HEX", help="a verifier's seed: print the program's HMAC-SHA256 under it")
    parser.add_argument("--json", action="store_true", help="the result as JSON")
    parser.add_argument("--release-key", type=Path, metavar="FILE", help="the release key's public half "
                        "(default: config security.release_key, /etc/tablectl/release-key.pub)")  # fmt: skip
    parser.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    parser.add_argument("--sim", action="store_true", help="the journal of a simulated table")
    parser.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")


def run(args: argparse.Namespace, config: Any, state_dir: Path) -> int:
    try:
        seed = parse_seed(args.seed) if args.seed is not None else None
    except SeedError as exc:
        print(f"tablectl: refused: {exc}", file=sys.stderr)
        return 2
    key = args.release_key or Path(config.security.release_key)
    report = authenticate(key, seed)
    journaled = journal_run(report, config, state_dir, simulated=args.sim)
    if args.json:
        print(json.dumps(report.to_json() | {"journaled": journaled}, indent=2))
    else:
        for line in report.lines():
            print(line)
        print(f"journal: {journaled}")
    return 0 if report.ok else EXIT_FAILED


def journal_run(report: Report, config: Any, state_dir: Path, *, simulated: bool) -> str:
    """Journal this run as the table's `software-check` entry, if the journal is here and free:
    what happened, in words."""
    from controller.journal import Journal, JournalError
    from controller.startup import StartRefused, StateDirBusy, lock_state_dir
    from controller.table import Table, TableError

    path = state_dir / "journal.sqlite3"
    if not path.exists():
        return f"not journaled: there is no journal at {path}"
    try:
        lock = lock_state_dir(state_dir, "tablectl verify")
    except StateDirBusy as exc:
        return (
            f"not journaled by this command: {exc}; ask the running table for a journaled check "
            "(the supervisor screen's Configuration panel, or POST /api/verify)"
        )
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
