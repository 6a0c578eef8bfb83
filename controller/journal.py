"""The table's journal: an append-only SQLite log of every input, committed before any effect.

Every card, every opened or voided round, every fault and every supervisor action is an entry
with a gapless sequence number, the time, the round it belongs to, a kind and a JSON body. The
table state is never stored as truth: it is what replaying the entries gives, so recovery after
a power cut, game recall and the WebSocket feed all read the same thing.

Durability: WAL mode with synchronous=FULL, so a committed entry survives a power cut. Integrity:
SQLite's own `integrity_check` at start, plus a CRC-32 over each entry and a check that sequence
numbers have no gaps. Entries can be neither changed nor deleted (triggers refuse it). A journal
that fails any check stops the table with `JournalCorrupt`; it is never repaired or cleared
automatically (GLI-style critical-memory rule).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    seq   INTEGER PRIMARY KEY,
    at    TEXT    NOT NULL,
    round INTEGER,
    kind  TEXT    NOT NULL,
    body  TEXT    NOT NULL,
    crc   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_round ON entries (round);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: entries cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: entries cannot be deleted'); END;
"""


class JournalError(RuntimeError):
    """The journal cannot be used; the text says which file and why."""


class JournalCorrupt(JournalError):
    """The journal failed a check. Play stops until a person restores a good copy."""


@dataclass(frozen=True)
class Entry:
    seq: int
    at: str  # UTC, ISO 8601
    round: int | None
    kind: str
    body: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "round": self.round, "kind": self.kind, "body": self.body}


def _crc(seq: int, at: str, round_no: int | None, kind: str, body: str) -> int:
    return zlib.crc32(f"{seq}\x1f{at}\x1f{round_no}\x1f{kind}\x1f{body}".encode())


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Journal:
    """The append-only journal in `path` (created if absent; checked when opened).

    journal = Journal(state_dir / "journal.sqlite3")
    entry = journal.append("card", {"card": "AS"}, round_no=12)   # committed on return
    for entry in journal.entries(): ...
    """

    def __init__(self, path: Path | str, *, readonly: bool = False) -> None:
        """Open (or, unless `readonly`, create) the journal. Read-only is for recall and checks
        beside a running daemon: SQLite's WAL lets them read while the daemon writes."""
        self.path = Path(path)
        self.readonly = readonly
        if readonly and not self.path.exists():
            raise JournalError(f"{self.path}: there is no journal here")
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if readonly:
                self._db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            else:
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.executescript(_SCHEMA)
            version = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if version is None and not readonly:
                self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif version is not None and int(version[0]) != SCHEMA_VERSION:
                raise JournalCorrupt(
                    f"{self.path}: journal schema {version[0]} is not the {SCHEMA_VERSION} this tablectl writes"
                )
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"{self.path}: the journal cannot be opened: {exc}") from None
        self.check()
        row = self._db.execute("SELECT MAX(seq) FROM entries").fetchone()
        self._last_seq: int = row[0] or 0

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def read_last_seq(self) -> int:
        """The newest committed seq, read now: a read-only journal's `last_seq` is as of its opening,
        and the daemon may have written since (the floor's catch-up asks this)."""
        row = self._db.execute("SELECT MAX(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    def check(self) -> int:
        """Check SQLite's integrity, every entry's CRC and the sequence; return the entry count."""
        try:
            result = self._db.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(f"{self.path}: the journal file is damaged: {exc}") from None
        if result != [("ok",)]:
            raise JournalCorrupt(f"{self.path}: SQLite integrity check failed: {result[:3]}")
        expected = 1
        for seq, at, round_no, kind, body, crc in self._db.execute(
            "SELECT seq, at, round, kind, body, crc FROM entries ORDER BY seq"
        ):
            if seq != expected:
                raise JournalCorrupt(f"{self.path}: entry {expected} is missing (next is {seq})")
            if _crc(seq, at, round_no, kind, body) != crc:
                raise JournalCorrupt(f"{self.path}: entry {seq} ({kind}) does not match its checksum")
            expected += 1
        return expected - 1

    def append(self, kind: str, body: dict[str, Any], round_no: int | None = None) -> Entry:
        """Write one entry and commit it (fsync'd by synchronous=FULL) before returning it."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        seq = self._last_seq + 1
        at = _now()
        self._db.execute(
            "INSERT INTO entries (seq, at, round, kind, body, crc) VALUES (?, ?, ?, ?, ?, ?)",
            (seq, at, round_no, kind, text, _crc(seq, at, round_no, kind, text)),
        )
        self._last_seq = seq
        return Entry(seq, at, round_no, kind, json.loads(text))

    def entries(self, after: int = 0, round_no: int | None = None) -> Iterator[Entry]:
        """Entries with seq > `after` in order (only those of `round_no` if given)."""
        if round_no is None:
            rows = self._db.execute(
                "SELECT seq, at, round, kind, body FROM entries WHERE seq > ? ORDER BY seq", (after,)
            )
        else:
            rows = self._db.execute(
                "SELECT seq, at, round, kind, body FROM entries WHERE seq > ? AND round = ? ORDER BY seq",
                (after, round_no),
            )
        for seq, at, rnd, kind, body in rows:  # row by row: a year of entries never sits in memory
            yield Entry(seq, at, rnd, kind, json.loads(body))

    def get_meta(self, key: str) -> str | None:
        """A small named value kept beside the entries (e.g. how far the floor has received)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a named value, committed on return. Entries stay append-only; meta values are
        bookkeeping about them (never the table's state)."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        if key == "schema":
            raise JournalError("the journal's schema version is not a setting")
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = ?", (key, value, value)
        )

    def last_of_kinds(self, kinds: tuple[str, ...], count: int) -> list[Entry]:
        """The last `count` entries of the given kinds, oldest first."""
        marks = ",".join("?" * len(kinds))
        rows = self._db.execute(
            f"SELECT seq, at, round, kind, body FROM entries WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (*kinds, count),
        ).fetchall()
        return [Entry(seq, at, rnd, kind, json.loads(body)) for seq, at, rnd, kind, body in reversed(rows)]

    def last_rounds(self, count: int) -> list[int]:
        """The numbers of the last `count` rounds, oldest first."""
        rows = self._db.execute(
            "SELECT DISTINCT round FROM entries WHERE round IS NOT NULL ORDER BY round DESC LIMIT ?", (count,)
        ).fetchall()
        return sorted(r[0] for r in rows)

    def close(self) -> None:
        self._db.close()
