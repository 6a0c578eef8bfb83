"""The table's journal: an append-only SQLite log of every input, committed before any effect.

Every card, every opened or voided round, every fault and every supervisor action is an entry
with a gapless sequence number, the time, the round it belongs to, a kind and a JSON body. The
table state is never stored as truth: it is what replaying the entries gives, so recovery after
a power cut, game recall and the WebSocket feed all read the same thing.

Durability: WAL mode with synchronous=FULL, so a committed entry survives a power cut; the WAL is
checkpointed at each round's end, so it never grows with history, and its file is kept allocated
(WAL_RESERVE), so a card's fsync overwrites blocks the file has instead of growing it, and a round
needs no new space on the disk. A disk without room for the next round is found at the round's end
(`checkpoint`): the next entry is then refused as a full disk, as it is when a write fails. Integrity: a
CRC-32 over each entry, gapless sequence numbers, and a hash chain over every entry whose last
value is also kept in `journal.head` (controller/journal/head.py), synced (fdatasync) after each entry (the
table's entries: once the entry's effects have gone out, before the shoe's acknowledgement), so a
database that comes back shorter or different is caught. Entries can be neither changed nor
deleted (triggers refuse it; retention may remove only entries it has exported and verified,
controller/journal/retention.py). A journal that fails any check stops the table with `JournalCorrupt`;
it is never repaired or cleared automatically (GLI-style critical-memory rule).

Derived data, kept beside the entries and rebuilt from them by `tablectl journal rebuild`:
snapshots of the table state at round boundaries (start-up replays only what follows the last
one, after checking it against the entries it summarises) and the round index recall reads.

What start-up checks, and what the full check adds: opening checks the head file against the
database, and the CRC, sequence and hash chain of every entry after the last snapshot (the table
then replays the round before that snapshot to check it). `check()` (run by `tablectl doctor`,
`tablectl journal verify`, and by the daemon in the background after it is ready) also runs
SQLite's integrity check and walks every entry from the first.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from controller.journal.head import HeadFile, HeadMark

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
GENESIS = "0" * 32
#: The writer's SQLite page cache, in KiB (SQLite's default is 2 MB): the table appends and reads
#: back its latest entries, which a small cache holds; older pages come from the OS's file cache.
#: The daemon's RSS no longer grows by 2 MB over its first day (benchmarks/bench_day_memory.py);
#: CPU per card and `recall` / `journal verify` unchanged within the noise (README, day_memory).
CACHE_KIB = 256
#: The journal meta key the floor store (issue 18) sets to the last seq it has confirmed it holds;
#: retention never removes an entry above it.
#: The floor stores' confirmed marks, {store id: every entry up to this seq is in that store},
#: kept by the floor's catch-up (controller/adapters/floor/catchup.py); retention never goes beyond the least.
FLOOR_CONFIRMED_KEY = "floor.stored"
RETAINED_KEY = "retained.through"  # entries up to this seq were exported and removed
SNAPSHOTS_KEPT = 3
#: The write-ahead file's size, kept allocated (written once, never truncated below it: SQLite's
#: journal_size_limit): each round's entries overwrite its blocks from its start after the round
#: before was checkpointed, so their fdatasync writes no size or extent change (the card path's
#: largest cost: benchmarks/HISTORY.md, daemon), and a round up to this size needs no new space.
#: A 7-seat round of Grand Slam takes about 160 KB. The disk must keep this much room for the
#: next round's checkpoint (`Journal.checkpoint`), or the journal refuses its next entry.
WAL_RESERVE = 512 * 1024
SQLITE_INTS = range(-(2**63), 2**63)  # the integers SQLite can hold; a round number outside it is in no index

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
CREATE TABLE IF NOT EXISTS snapshots (
    seq  INTEGER PRIMARY KEY,
    at   TEXT    NOT NULL,
    hash TEXT    NOT NULL,
    body TEXT    NOT NULL,
    crc  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
    round    INTEGER PRIMARY KEY,
    last_seq INTEGER NOT NULL,
    body     TEXT    NOT NULL,
    crc      INTEGER NOT NULL
);
"""
# Only entries retention has exported (at or below the retained mark) may ever be deleted.
_NO_DELETE = """
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
    WHEN OLD.seq > COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'retained.through'), 0)
    BEGIN SELECT RAISE(ABORT, 'the journal is append-only: entries cannot be deleted'); END;
"""


class JournalError(RuntimeError):
    """The journal cannot be used; the text says which file and why."""


class JournalCorrupt(JournalError):
    """The journal failed a check. Play stops until a person restores a good copy."""


class JournalUnwritable(JournalError):
    """An entry could not be written: the disk is full (`reason` "full") or failing ("failing").
    Nothing was written; the same input may be offered again once the disk can take it."""

    def __init__(self, path: Path, reason: Literal["full", "failing"], detail: str) -> None:
        self.reason = reason
        self.detail = detail
        if reason == "full":
            words = (
                "the journal cannot be written: the disk is full; no card is being accepted. "
                f"Free space on the disk that holds {path} (tablectl doctor shows what uses it); "
                "play resumes by itself as soon as the journal can be written"
            )
        else:
            words = (
                f"the journal cannot be written: the disk is failing ({detail}); no card is being accepted. "
                f"Check the disk that holds {path} (tablectl doctor); play resumes by itself as soon as "
                "the journal can be written, but plan to replace the disk"
            )
        super().__init__(words)


@dataclass(frozen=True)
class Entry:
    seq: int
    at: str  # UTC, ISO 8601
    round: int | None
    kind: str
    body: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "round": self.round, "kind": self.kind, "body": self.body}


@dataclass(frozen=True)
class Snapshot:
    """The table state after entry `seq` (derived; `hash` is the chain's value at `seq`)."""

    seq: int
    at: str
    hash: str
    body: dict[str, Any]


def _content(seq: int, at: str, round_no: int | None, kind: str, body: str) -> bytes:
    return f"{seq}\x1f{at}\x1f{round_no}\x1f{kind}\x1f{body}".encode()


def _crc(seq: int, at: str, round_no: int | None, kind: str, body: str) -> int:
    return zlib.crc32(_content(seq, at, round_no, kind, body))


def link(previous: str, seq: int, at: str, round_no: int | None, kind: str, body: str) -> str:
    """The hash chain's value after one entry (over the previous value and the whole entry)."""
    return _linked(previous, _content(seq, at, round_no, kind, body))


def _linked(previous: str, content: bytes) -> str:
    """`link` over an entry's content already encoded (a check encodes each entry once for its CRC
    and its link)."""
    return hashlib.sha256(previous.encode() + b"\x1e" + content).hexdigest()[:32]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _unwritable(path: Path, exc: BaseException) -> JournalUnwritable:
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc)
    full = code == sqlite3.SQLITE_FULL or getattr(exc, "errno", None) == errno.ENOSPC or "disk is full" in text
    return JournalUnwritable(path, "full" if full else "failing", text)


def _cannot_open(path: Path, exc: sqlite3.Error) -> JournalError:
    """Why a sound journal cannot be opened: a full disk (SQLite cannot even make its -shm file,
    and says "disk I/O error") is JournalUnwritable, never taken for damage."""
    if _damaged(exc):
        return JournalCorrupt(damage_message(path, str(exc)))
    try:
        full = os.statvfs(path.parent).f_bavail == 0
    except OSError:
        full = False
    if full or (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_FULL:
        return JournalUnwritable(path, "full", str(exc))
    return JournalError(f"{path}: the journal cannot be opened: {exc}")


def _damaged(exc: sqlite3.Error) -> bool:
    """Whether SQLite's error says the file's content is damaged (not that the disk is full,
    failing or busy): a malformed page, not a database at all, or text that is not text."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "Could not decode" in str(exc)


def damage_message(path: Path, detail: str) -> str:
    """What a journal file SQLite cannot read is, in the words of the other JournalCorrupt texts."""
    return (
        f"{path}: the journal file is damaged ({detail}). The table will not start on it. What to do: keep the "
        f"files for the investigation, and restore {path.name} together with its -wal and -shm files from a good "
        f"copy (hardware/install.md, step 13), leaving {path.stem}.head as it is; rounds already exported are in "
        f"the archive ({path.parent / 'archive'} unless state.archive_dir says otherwise)"
    )


def _as_damage(path: Path, exc: sqlite3.Error) -> Exception:
    """JournalCorrupt naming the file for a damage error; any other SQLite error as it is."""
    return JournalCorrupt(damage_message(path, str(exc))) if _damaged(exc) else exc


class _Rows:
    """A cursor whose damage errors are JournalCorrupt."""

    def __init__(self, cursor: sqlite3.Cursor, path: Path) -> None:
        self._cursor = cursor
        self._path = path

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except sqlite3.Error as exc:
            raise _as_damage(self._path, exc) from None

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except sqlite3.Error as exc:
            raise _as_damage(self._path, exc) from None

    def __iter__(self) -> Iterator[Any]:
        rows = iter(self._cursor)
        while True:
            try:
                row = next(rows)
            except StopIteration:
                return
            except sqlite3.Error as exc:
                raise _as_damage(self._path, exc) from None
            yield row


class _Db:
    """The journal's SQLite connection: every read and write reports damage as JournalCorrupt
    (SQLite's other errors, a full or failing disk, pass unchanged to the callers that handle them)."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.raw = db
        self.path = path

    def execute(self, sql: str, args: Iterable[Any] = ()) -> _Rows:
        try:
            return _Rows(self.raw.execute(sql, tuple(args)), self.path)
        except sqlite3.Error as exc:
            raise _as_damage(self.path, exc) from None

    def executescript(self, script: str) -> None:
        try:
            self.raw.executescript(script)
        except sqlite3.Error as exc:
            raise _as_damage(self.path, exc) from None

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def close(self) -> None:
        self.raw.close()


#: The journal's files are the service user's alone, whatever the umask (the unit's UMask=0077
#: gives the same): every command that reads them runs as that user (hardware/install.md).
FILE_MODE = 0o600


def _private(path: Path, *, create: bool = False) -> None:
    """Make `path` (created empty if `create`) readable and writable by its owner only."""
    try:
        if create:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            try:
                os.fchmod(fd, FILE_MODE)  # the umask may have taken bits away, or left others
            finally:
                os.close(fd)
        elif path.exists() and path.stat().st_mode & 0o777 != FILE_MODE:
            path.chmod(FILE_MODE)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if create:
            raise JournalError(f"{path}: a new journal cannot be made: {exc.strerror or exc}") from None
        log.warning("journal: cannot make %s private to its owner: %s", path, exc)


def _check_file(path: Path) -> None:
    """Refuse, before SQLite sees it, a journal file that cannot be one: SQLite would take an empty
    file for a new database (and delete a -wal beside it), and says little about a foreign one."""
    try:
        with path.open("rb") as file:
            start = file.read(16)
    except OSError as exc:
        raise JournalError(f"{path}: the journal cannot be read: {exc.strerror or exc}") from None
    if not start:
        raise JournalCorrupt(damage_message(path, "it is empty: 0 bytes"))
    if start != b"SQLite format 3\x00":
        raise JournalCorrupt(damage_message(path, "it is not a SQLite database: another file is in its place"))


class Journal:
    """The append-only journal in `path` (created if absent; checked when opened).

    journal = Journal(state_dir / "journal.sqlite3")
    entry = journal.append("card", {"card": "AS"}, round_no=12)   # committed on return
    for entry in journal.entries(): ...
    """

    def __init__(
        self,
        path: Path | str,
        *,
        readonly: bool = False,
        durable: bool = True,
        require_head: bool = True,
        derived: bool = True,
    ) -> None:
        """Open (or, unless `readonly`, create) the journal. Read-only is for recall and checks
        beside a running daemon: SQLite's WAL lets them read while the daemon writes.
        `durable=False` (bulk writing by `tablectl journal synth` only) skips the fsync after each
        entry; `sync()` makes everything durable at the end. `require_head=False` is for checking
        a backup copy, which has no head file beside it (the entries are checked alone).
        `derived=False` (read-only, for `tablectl journal rebuild`) checks every entry from the
        first instead of trusting the snapshots, which are about to be made again."""
        self.require_head = require_head
        self._derived = derived
        self.path = Path(path)
        self.readonly = readonly
        self.durable = durable
        memory = str(path) == ":memory:"
        self.head: HeadFile | None = None if memory else HeadFile(self.head_path, readonly=readonly)
        self._head_failing = False
        self._head_due: tuple[int, str, str] | None = None  # (seq, chain, at) left for write_head
        # The disk has no room for the next round (found at a round's end, or at opening): every
        # entry is refused with it, having written nothing, until `_room_again` finds room.
        self._short: JournalUnwritable | None = None
        self._checkpoint_owed = False  # the last checkpoint failed for want of space
        # Entries committed without their own fsync (append(sync=False)): the first of them not yet
        # known to be on disk (None: every committed entry is), and its head file write, left for
        # made_durable. Read by the floor publisher's thread (durable_seq): set before the entry.
        self._undurable_from: int | None = None
        self._head_waiting: tuple[int, str, str] | None = None
        #: Told (on the writer's thread) when made_durable moves durable_seq on: the floor publisher.
        self.durable_watchers: list[Callable[[int], None]] = []
        self._memory = memory
        if memory:
            self._db = _Db(sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False), self.path)
            self._create()
            self._last_seq, self._hash = 0, GENESIS
            return
        if not self.path.exists():
            if readonly:
                raise JournalError(f"{self.path}: there is no journal here")
            self._refuse_missing()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _private(self.path, create=True)  # SQLite gives the -wal and -shm the database's mode
            self._db = self._connect()
            self._create()
            self._last_seq, self._hash = 0, GENESIS
            self._kept_head(None, 0, GENESIS, 0)
            self._short = self._room()
            return
        # An existing file is checked read-only first: a damaged one is never written to, and its
        # -wal is never checkpointed into it or deleted (SQLite does both when a writer closes).
        _check_file(self.path)
        self._db = _Db(
            sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False), self.path
        )
        try:
            version = self._schema()
            mark, first, last, chain = self._verify_open(version)
            if not readonly and self.require_head:
                self._refuse_headless(mark, first, last)
        except sqlite3.Error as exc:  # not damage (that is JournalCorrupt): a full or failing disk
            self._db.close()
            raise _cannot_open(self.path, exc) from None
        except BaseException:
            self._db.close()
            raise
        self._last_seq, self._hash = last, chain
        if readonly:
            return
        self._db.close()
        for part in (self.path, *(self.path.with_name(self.path.name + x) for x in ("-wal", "-shm")), self.head_path):
            _private(part)  # a journal made by an older tablectl, outside systemd, was 0644
        self._db = self._connect()
        if version == 1:
            self._upgrade_from_1()
        self._kept_head(mark, first, chain, last)
        # An entry a killed writer committed without its fsync (a signed head) is on disk before it
        # counts as durable here (and the floor publisher sends it).
        self.flush()
        self._short = self._room()

    def _connect(self) -> _Db:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = _Db(sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=1.0), self.path)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'OFF'}")
            db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            db.execute(f"PRAGMA journal_size_limit={WAL_RESERVE}")  # a round that outgrew it: back to it
        except sqlite3.Error as exc:
            raise _cannot_open(self.path, exc) from None
        return db

    def _create(self) -> None:
        """A new journal: the schema, in the file just made (removed again if that fails)."""
        try:
            self._db.executescript(_SCHEMA)
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            self._db.execute(_NO_DELETE)
        except sqlite3.Error as exc:
            self._db.close()
            if str(self.path) != ":memory:":
                for made in (self.path, self.path.with_name(self.path.name + "-wal")):
                    made.unlink(missing_ok=True)  # made by this call, empty: a later start makes it again
            raise JournalError(f"{self.path}: a new journal cannot be made: {exc}") from None

    def _refuse_missing(self) -> None:
        """No database, but a -wal or a head file that says entries were written: the database was
        deleted or moved, and making a new one would lose them (SQLite would delete the -wal)."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            mark = self.head.read() if self.head is not None else None
        except ValueError as exc:
            raise JournalCorrupt(f"{exc}, and the database is missing: {self._restore_advice()}") from None
        if wal.exists() or (mark is not None and mark.seq > 0):
            if mark is not None and mark.seq > 0:
                said = f"{self.head_path.name} says {mark.seq} entries were written"
            else:
                said = f"{wal.name} is still there"
            raise JournalCorrupt(
                f"{self.path}: the journal database is missing, but {said}: it was deleted or moved. "
                f"The table will not start a new journal over it. What to do: restore {self.path.name} with its "
                f"-wal and -shm files from a good copy (hardware/install.md, step 13), leaving {self.head_path.name} "
                "as it is"
            )

    def _schema(self) -> int:
        """The schema version of a tablectl journal; anything else is refused as not one."""
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "entries"} <= tables:
            held = ", ".join(sorted(str(t) for t in tables)) or "none"
            raise JournalCorrupt(damage_message(self.path, f"it is not a tablectl journal: its tables are {held}"))
        row = self._db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        version = str(row[0]) if row is not None else ""
        if version == "1":
            if self.readonly and self._derived:
                raise JournalError(
                    f"{self.path}: the journal was written by an older tablectl; start the table once to upgrade it"
                )
            return 1
        if version != str(SCHEMA_VERSION):
            raise JournalCorrupt(
                f"{self.path}: journal schema {version or '(none)'} is not the {SCHEMA_VERSION} this tablectl writes"
            )
        if not {"snapshots", "rounds"} <= tables:
            raise JournalCorrupt(damage_message(self.path, "its snapshots or round index table is missing"))
        return SCHEMA_VERSION

    @property
    def head_path(self) -> Path:
        return self.path.with_name(self.path.stem + ".head")

    @property
    def last_seq(self) -> int:
        return self._last_seq

    def read_last_seq(self) -> int:
        """The newest committed seq, read now: a read-only journal's `last_seq` is as of its opening,
        and the daemon may have written since (the floor's catch-up asks this)."""
        row = self._db.execute("SELECT MAX(seq) FROM entries").fetchone()
        return int(row[0] or 0)

    @property
    def chain(self) -> str:
        """The hash chain's value after the last entry."""
        return self._hash

    def _upgrade_from_1(self) -> None:
        # Version 2 adds the derived tables and lets retention remove exported entries.
        self._db.executescript(_SCHEMA)
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("DROP TRIGGER IF EXISTS entries_no_delete")
        self._db.execute(_NO_DELETE)
        self._db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
        self._db.execute("COMMIT")

    # -- checks ---------------------------------------------------------------------------------

    def _retained(self) -> tuple[int, str]:
        through = self.get_meta(RETAINED_KEY)
        if through is None:
            return 0, GENESIS
        return int(through), self.get_meta("retained.hash") or GENESIS

    def _walk(self, after: int, chain: str, want: Iterable[int] = ()) -> tuple[int, str, dict[int, str]]:
        """Check every entry after `after` (CRC, no gap, the chain from `chain`); return the last
        seq, the chain after it, and the chain's value at each seq in `want` the walk passes."""
        expected = after + 1
        wanted = set(want)
        at_want = {after: chain} if after in wanted else {}
        for seq, at, round_no, kind, body, crc in self._db.execute(
            "SELECT seq, at, round, kind, body, crc FROM entries WHERE seq > ? ORDER BY seq", (after,)
        ):
            content = self._check_crc(seq, at, round_no, kind, body, crc)
            if seq != expected:
                chain = self._accepted_loss(expected, seq, kind, body)
            chain = _linked(chain, content)
            if seq in wanted:
                at_want[seq] = chain
            expected = seq + 1
        return expected - 1, chain, at_want

    def _check_crc(self, seq: int, at: str, round_no: int | None, kind: str, body: str, crc: int) -> bytes:
        """The entry's content as its CRC and the chain read it, once its CRC is checked."""
        content = _content(seq, at, round_no, kind, body) if isinstance(body, str) else None
        if content is None or zlib.crc32(content) != crc:
            raise JournalCorrupt(
                f"{self.path}: entry {seq} ({kind if isinstance(kind, str) else '?'}) does not match its checksum: "
                f"{self._restore_advice()}"
            )
        return content

    def _accepted_loss(self, expected: int, seq: int, kind: str, body: str) -> str:
        """A gap is allowed only where a person accepted it (`tablectl journal accept-loss`): the
        entry after it names exactly the lost numbers and the chain's value the head file had."""
        if kind == "journal-loss":
            doc = json.loads(body)
            if doc.get("lost") == [expected, seq - 1]:
                return str(doc["head_hash"])
        raise JournalCorrupt(f"{self.path}: entry {expected} is missing (next is {seq})")

    def _verify_open(self, version: int = SCHEMA_VERSION) -> tuple[HeadMark | None, int, int, str]:
        """The checks at opening, read only: the head file against the database, and every entry
        the table reads to start (from the snapshot before the last one: the table checks the last
        snapshot by replaying the round before it). Returns the head mark, the first seq kept,
        the last seq and the chain after it."""
        try:
            mark = self.head.read() if self.head is not None else None
        except ValueError as exc:
            raise JournalCorrupt(f"{exc}: {self._restore_advice()}") from None
        first, first_hash = self._retained()
        base, base_hash = first, first_hash
        kept: list[tuple[int, str]] = []
        if version >= 2 and self._derived:
            newest = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM entries").fetchone()[0]
            limit = min(int(newest), mark.seq) if mark is not None else int(newest)
            for seq, chain, text, crc in self._db.execute(
                "SELECT seq, hash, body, crc FROM snapshots WHERE seq <= ? ORDER BY seq DESC LIMIT 2", (limit,)
            ):
                if not isinstance(text, str) or zlib.crc32(f"{seq}\x1f{chain}\x1f{text}".encode()) != crc:
                    raise JournalCorrupt(
                        f"{self.path}: the snapshot after entry {seq} does not match its checksum; "
                        "run `tablectl journal rebuild` to make the snapshots again from the entries"
                    )
                kept.append((int(seq), str(chain)))
        if len(kept) == 2 and kept[1][0] >= first:
            base, base_hash = kept[1]
        want = [seq for seq, _ in kept] + ([mark.seq] if mark is not None else [])
        last, chain, at_want = self._walk(base, base_hash, want)
        for seq, kept_hash in kept:
            if seq in at_want and at_want[seq] != kept_hash:
                raise JournalCorrupt(
                    f"{self.path}: the snapshot after entry {seq} is not of these entries (another hash chain); "
                    "run `tablectl journal rebuild` to make the snapshots again from the entries"
                )
        if mark is not None and mark.seq > last:
            lost = mark.seq - last
            raise JournalCorrupt(
                f"{self.path}: {lost} journal entr{'y' if lost == 1 else 'ies'} lost: the database holds entries "
                f"up to {last}, but {self.head_path.name} says {mark.seq} were written (the last at {mark.at}), "
                f"so entries {last + 1} to {mark.seq} are gone: the -wal file beside it was deleted or damaged, or "
                f"the database was restored from an older copy. {self._restore_advice(mark.at)}"
            )
        if mark is not None and at_want.get(mark.seq) != mark.hash:
            raise JournalCorrupt(
                f"{self.path}: entry {mark.seq} is not the entry that was written ({self.head_path.name} holds "
                "another hash chain): the database was replaced by another copy or changed outside the table. "
                f"{self._restore_advice(mark.at)}"
            )
        return mark, first, last, chain

    def _refuse_headless(self, mark: HeadMark | None, first: int, last: int) -> None:
        if mark is None and self.get_meta("head") == "kept" and last > first:
            raise JournalCorrupt(
                f"{self.head_path}: the head file is missing, so nothing shows that no entries were lost. "
                "Restore it from the same copy as the database; a person who is sure the database is "
                "complete may accept it as it is with `tablectl journal rebuild` (which writes a new head)."
            )

    def _kept_head(self, mark: HeadMark | None, first: int, chain: str, last: int) -> None:
        """After the checks, on the writer only: the head file brought up to the database."""
        if self.head is None or self.readonly or not self.require_head:
            return
        if mark is None or mark.seq < last:
            self._write_head(last, chain, utc_now())
        if self.get_meta("head") != "kept":
            try:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('head', 'kept')")
            except sqlite3.Error as exc:
                log.warning("journal: cannot note the head file in the database: %s", exc)

    def _restore_advice(self, since: str | None = None) -> str:
        copy = f"a copy made after {since}" if since else "a good copy"
        return (
            f"The table will not start on it. What to do: keep these files for the investigation, and restore "
            f"{self.path.name} together with its -wal and -shm files from {copy}, leaving {self.head_path.name} as "
            "it is (it is the record of how far the table got). If no copy holds the lost entries, a supervisor "
            "records the loss with `tablectl journal accept-loss --by NAME --reason TEXT`; numbering goes on after "
            "them: no sequence number already written is ever used again."
        )

    def check(self, derived: bool = True) -> int:
        """The full check: SQLite's integrity, every entry's CRC, the sequence and the whole hash
        chain, each kept snapshot's place in it, and the head file; return the entry count.
        `derived=False` leaves out the snapshots and the round index (rebuild makes them again)."""
        try:
            result = self._db.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupt(damage_message(self.path, str(exc))) from None
        if result != [("ok",)]:
            found = "; ".join(str(row[0]) for row in result[:3])
            raise JournalCorrupt(damage_message(self.path, f"SQLite's integrity check failed: {found}"))
        first, chain = self._retained()
        marks: dict[int, str] = {}
        if derived:
            marks = dict(self._db.execute("SELECT seq, hash FROM snapshots").fetchall())
            self.snapshots(len(marks) + 1)  # each one's checksum
            for number, text, crc in self._db.execute("SELECT round, body, crc FROM rounds"):
                if not isinstance(text, str) or zlib.crc32(f"{number}\x1f{text}".encode()) != crc:
                    raise JournalCorrupt(
                        f"{self.path}: round {number} in the round index does not match its checksum; "
                        "run `tablectl journal rebuild` to index the rounds again from the entries"
                    )
        # The head first: a daemon writing meanwhile only takes the entries further than it.
        try:
            mark = self.head.read() if self.head is not None else None
        except ValueError as exc:
            raise JournalCorrupt(f"{exc}: {self._restore_advice()}") from None
        at_mark = chain if mark is not None and mark.seq == first else None
        expected, count = first + 1, 0
        for seq, at, round_no, kind, body, crc in self._db.execute(
            "SELECT seq, at, round, kind, body, crc FROM entries ORDER BY seq"
        ):
            count += 1
            content = self._check_crc(seq, at, round_no, kind, body, crc)
            if seq != expected:
                chain = self._accepted_loss(expected, seq, kind, body)
            chain = _linked(chain, content)
            if seq in marks and marks[seq] != chain:
                raise JournalCorrupt(
                    f"{self.path}: the snapshot after entry {seq} is not of these entries (another hash chain); "
                    "run `tablectl journal rebuild` to make the snapshots again from the entries"
                )
            if mark is not None and seq == mark.seq:
                at_mark = chain
            expected = seq + 1
        if mark is not None and (mark.seq > expected - 1 or at_mark != mark.hash):
            raise JournalCorrupt(f"{self.path}: the entries do not reach what {self.head_path.name} says was written")
        return count

    # -- writing --------------------------------------------------------------------------------

    def append(
        self,
        kind: str,
        body: dict[str, Any],
        round_no: int | None = None,
        *,
        head_later: bool = False,
        sync: bool = True,
    ) -> Entry:
        """Write one entry and commit it (fsync'd by synchronous=FULL) before returning it.
        Raises JournalUnwritable, having written nothing, when the disk is full or failing.
        `head_later`: the head file is written by `write_head` (the table's, once the entry's
        effects have gone out: the commit is what comes first, and a head one entry behind is
        harmless at the next start), not before this returns.

        `sync=False` (a signed chain head: nothing a player sees waits on it, and nothing else
        depends on it): committed without its own fsync. It is durable once `flush` (on any
        thread) or the next entry's fsync has put it on disk: until `made_durable` says so, it is
        beyond `durable_seq` (the floor publisher sends nothing beyond it) and the head file is not
        written for it (a head file ahead of the database after a power cut would be a loss). A
        power cut before then loses it alone, and its sequence number, which nobody outside the Pi
        has seen, is written again."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        if self._short is not None:
            self._room_again()
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        seq = self._last_seq + 1
        at = utc_now()
        lazy = not sync and self.durable and not self._memory
        content = _content(seq, at, round_no, kind, text)  # encoded once, for its CRC and its link
        if lazy and self._undurable_from is None:
            self._undurable_from = seq  # before the entry is there to read
        try:
            if lazy:
                self._db.execute("PRAGMA synchronous=NORMAL")  # in WAL mode: the commit is not fsync'd
            try:
                self._db.execute(
                    "INSERT INTO entries (seq, at, round, kind, body, crc) VALUES (?, ?, ?, ?, ?, ?)",
                    (seq, at, round_no, kind, text, zlib.crc32(content)),
                )
            finally:
                if lazy:
                    self._db.execute("PRAGMA synchronous=FULL")
        except sqlite3.OperationalError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if lazy and self._undurable_from == seq:
                self._undurable_from = None
            raise _unwritable(self.path, exc) from None
        self._last_seq = seq
        self._hash = _linked(self._hash, content)
        if lazy:
            self._head_waiting = (seq, self._hash, at)
        else:
            self._durable_through(seq)  # its fsync put every entry before it on disk too
            if head_later:
                self._head_due = (seq, self._hash, at)
            else:
                self._write_head(seq, self._hash, at)
        return Entry(seq, at, round_no, kind, json.loads(text))

    @property
    def durable_seq(self) -> int:
        """The last entry known to be on disk (every entry up to it is): `last_seq` but after an
        entry committed with `append(sync=False)` not yet made durable. Read from any thread."""
        undurable = self._undurable_from
        return self._last_seq if undurable is None else undurable - 1

    def flush(self) -> None:
        """Put every entry committed so far on disk: fsync the write-ahead file. From any thread
        (the signer's worker: the table's loop does not wait for it); then `made_durable` on the
        writer's thread. OSError when the disk fails."""
        if self.readonly or self._memory or not self.durable:
            return
        try:
            fd = os.open(self.path.with_name(self.path.name + "-wal"), os.O_RDONLY)
        except FileNotFoundError:
            return  # checkpointed into the database, which the checkpoint fsync'd
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def made_durable(self, seq: int) -> None:
        """Every entry up to `seq` is on disk (`flush` returned after `seq` was committed): on the
        writer's thread. The head file is written for it (not fsync'd: the next entry's is), and
        the durable watchers (the floor publisher) are told."""
        if self._undurable_from is None or seq < self._undurable_from:
            return
        waiting = self._head_waiting
        self._durable_through(seq)
        if waiting is not None and waiting[0] <= seq:
            self._write_head(*waiting, sync=False)
        for watcher in self.durable_watchers:
            try:
                watcher(seq)
            except Exception:  # a watcher never stops the journal
                log.exception("journal: a durable watcher failed")

    def _durable_through(self, seq: int) -> None:
        if self._undurable_from is None or seq < self._undurable_from:
            return
        if seq >= self._last_seq:
            self._undurable_from = None
            self._head_waiting = None
        else:
            self._undurable_from = seq + 1
            if self._head_waiting is not None and self._head_waiting[0] <= seq:
                self._head_waiting = None

    def write_head(self, *, sync: bool = True) -> None:
        """Write the head file for the last entry, if `append(head_later=True)` left it due.
        `sync=False`: written, not fsync'd on its own (a quiet entry's, controller/table/table.py
        QUIET_KINDS): the next entry's head, fsync'd, makes the file durable, and a head one entry
        behind after a power cut is caught as harmless at the next start, as any head written late."""
        if self._head_due is not None:
            self._write_head(*self._head_due, sync=sync)

    def append_many(self, items: Sequence[tuple[str, dict[str, Any], int | None]]) -> list[Entry]:
        """Write several entries (kind, body, round) in one transaction: all committed, with one
        fsync and one head written, before returning them; or, when the disk is full or failing,
        none (JournalUnwritable). For the audit trail's bursts (a crowd of refused logins), so a
        flood of them costs the disk one commit, not one each."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        if not items:
            return []
        if self._short is not None:
            self._room_again()
        seq, chain = self._last_seq, self._hash
        rows, out = [], []
        for kind, body, round_no in items:
            text = json.dumps(body, separators=(",", ":"), sort_keys=True)
            seq += 1
            at = utc_now()
            rows.append((seq, at, round_no, kind, text, _crc(seq, at, round_no, kind, text)))
            chain = link(chain, seq, at, round_no, kind, text)
            out.append(Entry(seq, at, round_no, kind, json.loads(text)))
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for row in rows:
                self._db.execute("INSERT INTO entries (seq, at, round, kind, body, crc) VALUES (?, ?, ?, ?, ?, ?)", row)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise _unwritable(self.path, exc) from None
        self._last_seq, self._hash = seq, chain
        self._durable_through(seq)
        self._write_head(seq, chain, out[-1].at)
        return out

    def probe_writable(self, on_unwritable: Callable[[JournalUnwritable], object] | None = None) -> bool:
        """Whether the journal can be written right now, found by committing one small meta value
        (`probed`, when): a full or failing disk is otherwise found only by the first input after
        start-up, and the table says healthy until then. Writes no entry. When the journal cannot
        be written, `on_unwritable` (the table's journal fault) is told so, with the same words
        and reason an entry's write would give; returns False."""
        if self.readonly or str(self.path) == ":memory:":
            return True
        try:
            self._room_again()  # room for a round, not only for this small write (WAL_RESERVE)
        except JournalUnwritable as exc:
            if on_unwritable is not None:
                on_unwritable(exc)
            return False
        try:
            self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('probed', ?)", (utc_now(),))
        except sqlite3.OperationalError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            if on_unwritable is not None:
                on_unwritable(_unwritable(self.path, exc))
            return False
        return True

    def _write_head(self, seq: int, chain: str, at: str, *, sync: bool = True) -> None:
        self._head_due = None  # this is the newest head: none older is left to write
        if self.head is None:
            return
        try:
            self.head.write(HeadMark(seq, chain, at), fsync=self.durable and sync)
            self._head_failing = False
        except OSError as exc:
            # The entry is committed; a head one behind is caught as harmless at the next start.
            if not self._head_failing:
                log.error("journal: cannot write %s: %s", self.head_path, exc)
            self._head_failing = True

    def sync(self) -> None:
        """Everything written so far on disk (after a bulk write with `durable=False`)."""
        if self.readonly:
            return
        self._db.execute("PRAGMA synchronous=FULL")
        self.checkpoint()
        if self.head is not None and self._last_seq:
            self.head.write(HeadMark(self._last_seq, self._hash, utc_now()))

    def checkpoint(self) -> None:
        """Copy the WAL into the database and restart it (at each round's end): the -wal file never
        grows with history, and a backup of the database alone misses at most one round. The file
        keeps its blocks (WAL_RESERVE): the next round's entries overwrite them from its start.

        Then the disk must have room for the next round. When it has not, the journal refuses its
        next entry, having written nothing, with the words a failed write gives (JournalUnwritable,
        a full disk), and each entry after it, until there is room again: so a full disk stops the
        table between rounds, not inside one, though the round's writes need no new space. Two
        ways to have none: this checkpoint failed for want of space (the database must grow to take
        the round; the round's entries are safe in the write-ahead file, each fsync'd at its
        commit, and are copied once there is room), or the disk has less free than WAL_RESERVE,
        the most the next round's checkpoint can need (`_room`)."""
        if self.readonly or str(self.path) == ":memory:":
            return
        try:
            busy = self._db.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()[0][0]
        except sqlite3.Error as exc:
            if _unwritable(self.path, exc).reason != "full":
                log.warning("journal: checkpoint failed: %s", exc)
                return
            if not self._checkpoint_owed:
                log.warning("journal: checkpoint failed, the disk is full: %s", exc)
            self._checkpoint_owed = True
            self._short = JournalUnwritable(
                self.path,
                "full",
                f"{exc}, at the round's checkpoint: entries up to {self._last_seq} are safe in the write-ahead "
                "file, and are copied into the database once there is room",
            )
            return
        if busy and self._checkpoint_owed:
            return  # a reader kept it from copying everything: still owed
        self._checkpoint_owed = False
        self._short = self._room()

    @property
    def short_of_room(self) -> JournalUnwritable | None:
        """Why the disk cannot take the next round (found at the last checkpoint, at a round's end,
        or at opening): the next entry will be refused with it. None when it can."""
        return self._short

    def _room_again(self) -> None:
        """While the disk had no room for the next round: look again (the checkpoint still owed,
        the write-ahead file's blocks, the room); JournalUnwritable while there is none."""
        if self._checkpoint_owed:
            self.checkpoint()
        else:
            self._short = self._room()
        if self._short is not None:
            raise JournalUnwritable(self.path, "full", self._short.detail)

    def _room(self) -> JournalUnwritable | None:
        """None when the disk can take the next round: the write-ahead file holds WAL_RESERVE bytes
        of its own (written, not only reserved, so an fsync over them changes no extent), and the
        disk has WAL_RESERVE more free for this user (with the database's free pages), the most a
        round that fits in the file needs in the database at its checkpoint. Else why not."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            self._db.execute("BEGIN IMMEDIATE")  # no other writer extends the file meanwhile
        except sqlite3.Error as exc:
            log.warning("journal: the write-ahead file's room not checked: %s", exc)
            return None
        try:
            fd = os.open(wal, os.O_WRONLY)
        except OSError:
            fd = -1  # not there yet: SQLite makes it at the next write
        try:
            if fd >= 0 and (held := os.fstat(fd).st_size) < WAL_RESERVE:
                while held < WAL_RESERVE:  # beyond SQLite's last frame: read as the end of its frames
                    held += os.pwrite(fd, bytes(WAL_RESERVE - held), held)
                if self.durable:
                    os.fdatasync(fd)  # its size on disk now, not at the next card's fsync
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                log.warning("journal: the write-ahead file cannot be kept at %d bytes: %s", WAL_RESERVE, exc)
                return None
            return JournalUnwritable(
                self.path, "full", f"the write-ahead file cannot be given the {WAL_RESERVE // 1024} KB a round needs"
            )
        finally:
            if fd >= 0:
                os.close(fd)
            self._db.execute("ROLLBACK")
        try:
            disk = os.statvfs(self.path.parent)
            pages = self._db.execute("PRAGMA freelist_count").fetchone()[0] * self._page_size()
        except (OSError, sqlite3.Error) as exc:
            log.warning("journal: the disk's free space not read: %s", exc)
            return None
        free = disk.f_bavail * disk.f_frsize + int(pages)
        if free >= WAL_RESERVE:
            return None
        return JournalUnwritable(
            self.path,
            "full",
            f"{free // 1024} KB free on the disk, and the next round needs up to {WAL_RESERVE // 1024} KB "
            "when it is copied into the database",
        )

    def _page_size(self) -> int:
        return int(self._db.execute("PRAGMA page_size").fetchone()[0])

    # -- reading --------------------------------------------------------------------------------

    def entries(self, after: int = 0, round_no: int | None = None, upto: int | None = None) -> Iterator[Entry]:
        """Entries with seq > `after` (and <= `upto`) in order (only those of `round_no` if given).
        Each is checked against its checksum as it is read: a damaged one raises JournalCorrupt."""
        limit = upto if upto is not None else 2**62
        if round_no is None:
            rows = self._db.execute(
                "SELECT seq, at, round, kind, body, crc FROM entries WHERE seq > ? AND seq <= ? ORDER BY seq",
                (after, limit),
            )
        else:
            rows = self._db.execute(
                "SELECT seq, at, round, kind, body, crc FROM entries WHERE seq > ? AND seq <= ? AND round = ? "
                "ORDER BY seq",
                (after, limit, round_no),
            )
        for row in rows:  # row by row: a year of entries never sits in memory
            yield self._entry(*row)

    def _entry(self, seq: int, at: str, round_no: int | None, kind: str, body: str, crc: int) -> Entry:
        self._check_crc(seq, at, round_no, kind, body, crc)
        return Entry(seq, at, round_no, kind, json.loads(body))

    def retained(self) -> tuple[int, str]:
        """(seq, chain) of the last entry retention removed; (0, GENESIS) when none was."""
        return self._retained()

    def retention_point(self, before: str, limit: int) -> tuple[int, int] | None:
        """(round, cut): the newest indexed round that ended before `before` (UTC ISO time) with
        cut, the seq just before the next round opened, at most `limit`; None if there is none.
        Rounds end in time order, so this is a binary search, whatever the journal's length."""
        numbers = self._db.execute("SELECT MIN(round), MAX(round) FROM rounds").fetchone()
        if numbers[0] is None:
            return None

        def ended(number: int) -> tuple[str, int] | None:
            row = self._db.execute(
                "SELECT e.at, r.last_seq FROM rounds r JOIN entries e ON e.seq = r.last_seq WHERE r.round <= ? "
                "ORDER BY r.round DESC LIMIT 1",
                (number,),
            ).fetchone()
            return None if row is None else (str(row[0]), int(row[1]))

        low, high = int(numbers[0]), int(numbers[1])
        if (first := ended(low)) is None or first[0] >= before or first[1] > limit:
            return None
        while low < high:  # the newest round ending before `before` and at or below `limit`
            middle = (low + high + 1) // 2
            end = ended(middle)
            if end is not None and end[0] < before and end[1] <= limit:
                low = middle
            else:
                high = middle - 1
        for number in range(low, max(int(numbers[0]) - 1, low - 50), -1):
            row = self._db.execute(
                "SELECT MIN(seq) FROM entries WHERE round = ? AND kind = 'round-open'", (number + 1,)
            ).fetchone()
            if row[0] is not None and int(row[0]) - 1 <= limit:
                return number, int(row[0]) - 1
        return None

    def first_seq(self) -> int:
        """The first entry still in the database (1 unless retention has removed older ones)."""
        return self._retained()[0] + 1

    def get_meta(self, key: str) -> str | None:
        """A small named value kept beside the entries (e.g. how far the floor has received)."""
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a named value, committed on return. Entries stay append-only; meta values are
        bookkeeping about them (never the table's state)."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        if key in ("schema", "head", RETAINED_KEY, "retained.hash"):
            raise JournalError(f"the journal's {'schema version' if key == 'schema' else key} is not a setting")
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = ?", (key, value, value)
        )

    def floor_confirmed(self) -> int | None:
        """The last seq every floor store has confirmed it holds (None: no store has confirmed any;
        0 when the marks cannot be read, so nothing is trimmed on a guess)."""
        value = self.get_meta(FLOOR_CONFIRMED_KEY)
        if not value:
            return None
        try:
            marks = json.loads(value)
            seqs = [int(seq) for seq in marks.values()] if isinstance(marks, dict) else []
        except (ValueError, TypeError):
            return 0
        return min(seqs) if seqs else None

    def last_of_kinds(self, kinds: tuple[str, ...], count: int) -> list[Entry]:
        """The last `count` entries of the given kinds, oldest first."""
        marks = ",".join("?" * len(kinds))
        rows = self._db.execute(
            f"SELECT seq, at, round, kind, body, crc FROM entries WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (*kinds, count),
        ).fetchall()
        return [self._entry(*row) for row in reversed(rows)]

    def last_rounds(self, count: int) -> list[int]:
        """The numbers of the last `count` rounds, oldest first."""
        rows = self._db.execute(
            "SELECT DISTINCT round FROM entries WHERE round IS NOT NULL ORDER BY round DESC LIMIT ?", (count,)
        ).fetchall()
        return sorted(r[0] for r in rows)

    # -- derived: snapshots and the round index -------------------------------------------------

    def write_snapshot(self, body: dict[str, Any], rounds: Iterable[tuple[int, int, dict[str, Any]]]) -> bool:
        """Keep the table state after the last entry and the rounds (number, last seq, record)
        finished since the last snapshot, in one transaction, then checkpoint. Returns False (and
        keeps nothing) when the disk cannot take it: a snapshot is derived and can wait."""
        if self.readonly:
            return False
        text = json.dumps(body, separators=(",", ":"), sort_keys=True)
        seq, at = self._last_seq, utc_now()
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for number, last_seq, record in rounds:
                rtext = json.dumps(record, separators=(",", ":"), sort_keys=True)
                self._db.execute(
                    "INSERT OR REPLACE INTO rounds (round, last_seq, body, crc) VALUES (?, ?, ?, ?)",
                    (number, last_seq, rtext, zlib.crc32(f"{number}\x1f{rtext}".encode())),
                )
            self._db.execute(
                "INSERT OR REPLACE INTO snapshots (seq, at, hash, body, crc) VALUES (?, ?, ?, ?, ?)",
                (seq, at, self._hash, text, zlib.crc32(f"{seq}\x1f{self._hash}\x1f{text}".encode())),
            )
            self._db.execute(
                "DELETE FROM snapshots WHERE seq NOT IN (SELECT seq FROM snapshots ORDER BY seq DESC LIMIT ?)",
                (SNAPSHOTS_KEPT,),
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            log.warning("journal: snapshot after entry %d not kept: %s", seq, exc)
            self.checkpoint()  # the round's end all the same: the disk's room for the next one is checked
            return False
        self.checkpoint()
        return True

    def snapshots(self, count: int = 2) -> list[Snapshot]:
        """The last `count` snapshots, oldest first; a damaged one raises JournalCorrupt."""
        rows = self._db.execute(
            "SELECT seq, at, hash, body, crc FROM snapshots WHERE seq <= ? ORDER BY seq DESC LIMIT ?",
            (self._last_seq, count),
        ).fetchall()
        out = []
        for seq, at, chain, text, crc in reversed(rows):
            if zlib.crc32(f"{seq}\x1f{chain}\x1f{text}".encode()) != crc:
                raise JournalCorrupt(
                    f"{self.path}: the snapshot after entry {seq} does not match its checksum; "
                    "run `tablectl journal rebuild` to make the snapshots again from the entries"
                )
            out.append(Snapshot(int(seq), str(at), str(chain), json.loads(text)))
        return out

    def round_record(self, number: int) -> dict[str, Any] | None:
        """Round `number` from the round index (None when it is not indexed)."""
        if number not in SQLITE_INTS:  # SQLite cannot even be asked (OverflowError): no such round
            return None
        row = self._db.execute("SELECT body, crc FROM rounds WHERE round = ?", (number,)).fetchone()
        if row is None:
            return None
        if zlib.crc32(f"{number}\x1f{row[0]}".encode()) != row[1]:
            raise JournalCorrupt(
                f"{self.path}: round {number} in the round index does not match its checksum; "
                "run `tablectl journal rebuild` to index the rounds again from the entries"
            )
        record: dict[str, Any] = json.loads(row[0])
        return record

    def indexed_rounds(self, last: int | None = None, *, through_seq: int | None = None) -> list[int]:
        """Numbers in the round index, oldest first (only the `last` ones if given; only rounds
        that ended at or before `through_seq` if given)."""
        where, args = ("WHERE last_seq <= ?", [through_seq]) if through_seq is not None else ("", [])
        if last is None:
            rows = self._db.execute(f"SELECT round FROM rounds {where} ORDER BY round", args).fetchall()
            return [int(r[0]) for r in rows]
        found = self._db.execute(f"SELECT round FROM rounds {where} ORDER BY round DESC LIMIT ?", [*args, last])
        return sorted(int(r[0]) for r in found.fetchall())

    def round_ends(self, after_seq: int = 0, upto_seq: int | None = None) -> dict[int, int]:
        """Round number -> the seq of the entry that ended it, for the indexed rounds that ended
        after entry `after_seq` (and at or before `upto_seq`): when each round was settled."""
        rows = self._db.execute(
            "SELECT round, last_seq FROM rounds WHERE last_seq > ? AND last_seq <= ?",
            (after_seq, upto_seq if upto_seq is not None else 2**62),
        )
        return {int(r[0]): int(r[1]) for r in rows}

    def indexed_records(
        self, after_seq: int = 0, upto_seq: int | None = None
    ) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """(round, the seq that ended it, its record) from the round index, in round order, for
        the rounds that ended after entry `after_seq` (and at or before `upto_seq`)."""
        rows = self._db.execute(
            "SELECT round, last_seq, body, crc FROM rounds WHERE last_seq > ? AND last_seq <= ? ORDER BY round",
            (after_seq, upto_seq if upto_seq is not None else 2**62),
        )
        for number, last, body, crc in rows:
            if zlib.crc32(f"{number}\x1f{body}".encode()) != crc:
                raise JournalCorrupt(
                    f"{self.path}: round {number} in the round index does not match its checksum; "
                    "run `tablectl journal rebuild` to index the rounds again from the entries"
                )
            yield int(number), int(last), json.loads(body)

    def rows(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, str, int | None, str, str]]:
        """(seq, at, round, kind, body as stored) of the entries after `after` (and up to `upto`),
        each checked against its checksum as `entries` does, its body left unparsed (analytics:
        a long read that needs few entries' bodies)."""
        rows = self._db.execute(
            "SELECT seq, at, round, kind, body, crc FROM entries WHERE seq > ? AND seq <= ? ORDER BY seq",
            (after, upto if upto is not None else 2**62),
        )
        for seq, at, round_no, kind, body, crc in rows:
            self._check_crc(seq, at, round_no, kind, body, crc)
            yield seq, at, round_no, kind, body

    def at_of(self, seq: int) -> str | None:
        """The time entry `seq` was written (None when it is not in the database)."""
        row = self._db.execute("SELECT at FROM entries WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else str(row[0])

    def chain_through(self, seq: int) -> str:
        """The hash chain's value after entry `seq` (every entry up to it checked on the way)."""
        first, chain = self._retained()
        last, chain, at = self._walk_until(first, chain, seq)
        if at is None:
            raise JournalCorrupt(f"{self.path}: entry {seq} is not in the journal (it ends at {last})")
        return at

    def _walk_until(self, after: int, chain: str, want: int) -> tuple[int, str, str | None]:
        expected = after + 1
        for seq, at, round_no, kind, body, crc in self._db.execute(
            "SELECT seq, at, round, kind, body, crc FROM entries WHERE seq > ? AND seq <= ? ORDER BY seq", (after, want)
        ):
            content = self._check_crc(seq, at, round_no, kind, body, crc)
            if seq != expected:
                chain = self._accepted_loss(expected, seq, kind, body)
            chain = _linked(chain, content)
            expected = seq + 1
        return expected - 1, chain, chain if expected - 1 == want else None

    def retire(self, through: int, chain: str, last_round: int) -> None:
        """Remove entries up to `through` and rounds up to `last_round` from the index: only
        retention calls this, after it has exported them and read the export back."""
        if self.readonly:
            raise JournalError(f"{self.path}: opened read-only; only the daemon writes the journal")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (RETAINED_KEY, str(through)))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('retained.hash', ?)", (chain,))
            self._db.execute("DELETE FROM entries WHERE seq <= ?", (through,))
            self._db.execute("DELETE FROM rounds WHERE round <= ?", (last_round,))
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise _unwritable(self.path, exc) from None
        self.checkpoint()

    @staticmethod
    def accept_loss(path: Path, by: str, reason: str) -> tuple[int, int] | None:
        """A person accepts that entries the head file says were written are gone for good (no
        copy holds them): one `journal-loss` entry after them names the lost numbers, who and
        why, so the journal opens again and no lost number is ever used again. Returns the lost
        range, or None when nothing is missing."""
        head = HeadFile(path.with_name(path.stem + ".head"))
        try:
            mark = head.read()
        except ValueError as exc:
            raise JournalCorrupt(f"{exc}: restore it from the same copy as the database") from None
        if mark is None:
            raise JournalError(f"{head.path}: there is no head file, so nothing shows which entries were lost")
        # Read first, read-only: a damaged database is refused as it is, not written to.
        _check_file(path)
        reader = _Db(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True), path)
        try:
            tables = {row[0] for row in reader.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "entries" not in tables:
                raise JournalCorrupt(damage_message(path, "it is not a tablectl journal: it has no entries table"))
            found = reader.execute("PRAGMA quick_check").fetchall()
            if found != [("ok",)]:
                raise JournalCorrupt(damage_message(path, f"SQLite's check failed: {found[0][0]}"))
            last = 0
            for seq, at, round_no, kind, text, crc in reader.execute(
                "SELECT seq, at, round, kind, body, crc FROM entries ORDER BY seq"
            ):
                if not isinstance(text, str) or _crc(seq, at, round_no, kind, text) != crc:
                    raise JournalCorrupt(
                        f"{path}: entry {seq} does not match its checksum: the database is damaged, not only "
                        "short; nothing was written. Restore it from a good copy (hardware/install.md, step 13)"
                    )
                last = int(seq)
        finally:
            reader.close()
        if mark.seq <= last:
            head.close()
            return None
        db = _Db(sqlite3.connect(path, isolation_level=None), path)
        try:
            body = {"lost": [last + 1, mark.seq], "written_until": mark.at, "by": by, "reason": reason}
            text = json.dumps({**body, "head_hash": mark.hash}, separators=(",", ":"), sort_keys=True)
            seq, at = mark.seq + 1, utc_now()
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM snapshots")  # made again from the entries at the next start
            db.execute("DELETE FROM rounds")
            db.execute(
                "INSERT INTO entries (seq, at, round, kind, body, crc) VALUES (?, ?, NULL, 'journal-loss', ?, ?)",
                (seq, at, text, _crc(seq, at, None, "journal-loss", text)),
            )
            db.execute("COMMIT")
            head.write(HeadMark(seq, link(mark.hash, seq, at, None, "journal-loss", text), at))
        finally:
            db.close()
            head.close()
        return last + 1, mark.seq

    def clear_derived(self) -> None:
        """Forget every snapshot and the round index (`tablectl journal rebuild` makes them again)."""
        self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("DELETE FROM snapshots")
        self._db.execute("DELETE FROM rounds")
        self._db.execute("COMMIT")

    # -- size -----------------------------------------------------------------------------------

    def disk_usage(self) -> dict[str, int]:
        """Bytes on disk: the database, its -wal, the head file, and the archive beside them."""
        return journal_disk_usage(self.path)

    def close(self) -> None:
        self.write_head()
        if self.head is not None:
            self.head.close()
        self._db.close()


def journal_disk_usage(path: Path) -> dict[str, int]:
    """Bytes the journal takes on disk, by part (for `tablectl doctor` and /metrics)."""

    def size(p: Path) -> int:
        try:
            return p.stat().st_size
        except OSError:
            return 0

    archive = path.parent / "archive"
    parts = {
        "database": size(path),
        "wal": size(path.with_name(path.name + "-wal")),
        "shm": size(path.with_name(path.name + "-shm")),
        "head": size(path.with_name(path.stem + ".head")),
        "archive": sum(size(p) for p in archive.rglob("*") if p.is_file()) if archive.is_dir() else 0,
    }
    parts["total"] = sum(parts.values())
    return parts
