"""`tablectl journal verify | rebuild | synth | retain`: the journal's own maintenance commands."""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from controller.app.config import Config
from controller.journal.log import Journal, JournalError
from controller.journal.rounds import RoundBook

if TYPE_CHECKING:
    from controller.table import TableState


def run(args: argparse.Namespace, config: Config, state_dir: Path) -> int:
    path = state_dir / "journal.sqlite3"
    command = args.journal_command
    if command == "synth":
        return _synth(args, config, state_dir)
    if not path.exists():
        raise JournalError(f"{path}: there is no journal here")
    if command == "verify":
        return _verify(config, path)
    if command == "retain" and config.source.endswith("no --config)"):
        raise JournalError(
            f"{path}: retention needs the table's configuration (how many days to keep, whether a floor must "
            "have the rounds first): add --config FILE"
        )
    if command == "rebuild":
        return _rebuild(config, path)
    if command == "accept-loss":
        if not args.by.strip() or not args.reason.strip():
            raise JournalError("accepting a loss needs who accepts it (--by) and why (--reason)")
        lost = Journal.accept_loss(path, args.by, args.reason)
        if lost is None:
            print(f"{path}: nothing is missing; nothing was written")
        else:
            print(f"{path}: entries {lost[0]} to {lost[1]} recorded as lost by {args.by}; numbering goes on after them")
        return 0
    return _retain(args, config, state_dir, path)


def config_of_journal(state_dir: Path) -> Config:
    """The configuration a journal read on its own is checked with (`journal verify --state-dir D`
    on a machine with no table.toml, a copy of another table's): its game and rules as its last
    round opened them. Retention needs the table's own configuration (how long, whether a floor
    must have the rounds first), so it is refused here."""
    from controller.table import TableError

    path = state_dir / "journal.sqlite3"
    if not path.exists():
        raise JournalError(f"{path}: there is no journal here")
    journal = Journal(path, readonly=True)
    try:
        game = journal_game(journal)
        opened = journal.last_of_kinds(("round-open",), 1)
    finally:
        journal.close()
    source = f"{path} (its own game and rules: no --config)"
    if game is None or not opened:
        return Config(source=source)
    event = opened[0].body.get("event", {})
    rules = event.get("rules", {}) if isinstance(event, dict) else {}
    if not isinstance(rules, dict):
        raise TableError(f"{path}: entry {opened[0].seq}: the round's rules are not a table of options")
    return Config(source=source, game=game, rules=rules)


def journal_game(journal: Journal) -> str | None:
    """The game whose rounds the journal holds, from its first round's opening (None before any)."""
    for entry in journal.entries():
        if entry.kind == "round-open":
            kind = entry.body.get("event", {}).get("kind", "") if isinstance(entry.body, dict) else ""
            return str(kind).removesuffix(".open") if str(kind).endswith(".open") else None
    return None


def _same_game(config: Config, journal: Journal) -> None:
    """A journal is read with its own game's rules: another game's configuration is refused
    (TableError, exit 2) before anything is read with the wrong rules or written."""
    from controller.table import TableError

    game = journal_game(journal)
    if game is not None and game != config.game:
        raise TableError(
            f"the journal is of a {game} table, but the configuration says {config.game} ({config.source}): "
            f'give that table\'s configuration with --config FILE (its [table] says game = "{game}")'
        )


def _restore(config: Config, journal: Journal) -> TableState:
    """The table's state from the journal, as start-up restores it: the last snapshot checked
    against its entries, then the entries after it, through the table's reducer (snapshots are
    kept as start-up keeps them)."""
    from controller.table import TableSetup, snapshots

    _same_game(config, journal)
    return snapshots.restore(journal, TableSetup.of(config.game, config.rules))


def _verify(config: Config, path: Path) -> int:
    journal = Journal(path, readonly=True)  # without a head file beside it (a backup), the entries alone
    try:
        count = journal.check()
        _restore(config, journal)  # the last snapshot checked against its entries
    finally:
        journal.close()
    print(
        f"{path}: {count} entries of a {config.game} table: integrity, checksums, sequence, hash chain, head file "
        "and snapshots all pass"
    )
    return 0


def _rebuild(config: Config, path: Path) -> int:
    from controller.journal.head import HeadFile

    # The entries first, read-only and without the snapshots: a damaged file is refused as it is.
    reader = Journal(path, readonly=True, derived=False)
    try:
        reader.check(derived=False)
        _same_game(config, reader)
    finally:
        reader.close()
    # The derived tables go first, straight in SQLite: a damaged snapshot must not be read to open.
    db = sqlite3.connect(path)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for derived in ("snapshots", "rounds"):  # a journal from before snapshots has neither yet
            if derived in tables:
                db.execute(f"DELETE FROM {derived}")
        head_missing = not HeadFile(path.with_name(path.stem + ".head")).exists()
        if head_missing:
            db.execute("DELETE FROM meta WHERE key = 'head'")
        db.commit()
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: cannot rebuild: {exc}") from None
    finally:
        db.close()
    if head_missing:
        print(f"{path}: the head file was missing; a new one is written from the database as it stands now")
    started = time.monotonic()
    journal = Journal(path)
    try:
        journal.check()
        state = _restore(config, journal)
        rounds = len(RoundBook(journal, state.rounds))
    finally:
        journal.close()
    print(
        f"{path}: rebuilt snapshots and the round index from {journal.last_seq} entries ({rounds} rounds) "
        f"in {time.monotonic() - started:.1f} s"
    )
    return 0


def _synth(args: argparse.Namespace, config: Config, state_dir: Path) -> int:
    from controller.cli.synth import synthesize

    if args.rounds < 1:
        raise JournalError(f"--rounds {args.rounds}: a whole number of rounds, 1 or more")
    game = args.game or config.game
    rules = config.rules if game == config.game else {}
    started = time.monotonic()

    def progress(rounds: int, entries: int) -> None:
        if sys.stderr.isatty():
            print(f"\r{rounds} rounds, {entries} entries", end="", file=sys.stderr)

    journal = synthesize(state_dir, args.rounds, game=game, rules=rules, seed=args.seed, progress=progress)
    try:
        print(
            f"{journal.path}: {args.rounds} {game} rounds written through the table, journal at entry "
            f"{journal.last_seq}, in {time.monotonic() - started:.1f} s"
        )
    finally:
        journal.close()
    return 0


def _retain(args: argparse.Namespace, config: Config, state_dir: Path, path: Path) -> int:
    from controller.journal.retention import retain

    days = args.days if args.days is not None else config.retain_days
    archive = Path(config.archive_dir) if config.archive_dir else state_dir / "archive"
    journal = Journal(path)
    try:
        _restore(config, journal)  # the snapshots retention relies on, checked first
        done = retain(journal, archive, days=days, floor_required=config.floor is not None, most=None)
    finally:
        journal.close()
    if done.directory is None:
        print(f"{path}: nothing exported: {done.why}")
    else:
        print(
            f"{path}: entries up to {done.through} (rounds {done.rounds}) exported to {done.directory} and "
            "removed from the live journal"
        )
    return 0
