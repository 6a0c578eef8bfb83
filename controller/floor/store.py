"""The floor store: every table's journal entries, once each and in order, in a real database.

    store = open_store("sqlite:///var/lib/tablectl-floor/floor.db")   # or postgresql://...
    result = store.add([StoredEntry(...), ...])     # one transaction; repeats are dropped
    store.progress("main-floor", "GS-01")           # how far the store holds every entry
    for row in store.entries("main-floor", "GS-01"): ...

SQLite (stdlib, WAL, synchronous=FULL: what the store has confirmed to a table survives a power
cut) is the default; PostgreSQL (psycopg) when the floor outgrows one file. Both get the same
schema, created and migrated here (`MIGRATIONS`, one transaction each, the version in
`floor_meta`). A row is keyed by (site, table, seq): the table's journal numbers its entries
without gaps or reuse, so a resend (a new boot), a catch-up reply and a second consumer all land
on the row that is already there and add nothing. The `boot` kept is the one that delivered it
first. A row that comes again with different content is not overwritten: it is recorded in
`floor_conflicts` and logged, because it means a replaced journal or a table id used twice.

`floor_tables` keeps, per table, `contiguous` (every seq from 1 to it is stored: what the store
confirms to the table) and `reported_last` (the last seq the table itself said it has).

The store also checks the history it holds (controller/security/chainhead.py): it recomputes each table's
hash chain over the contiguous entries and checks every signed chain head against it and against
the key enrolled for the table (`enroll`: an operator enrols a table's key by its fingerprint,
`tablectl floor enroll`; a key is never learned from the feed, and a key change is an explicit
re-enrolment, each one kept in `floor_enrolments`). A head signed by a key not enrolled for the
table is a floor alert naming the table and the key's fingerprint. A gap, a fork (a head or an
entry that does not follow the chain the floor holds), a sequence number offered again with other
content, or a bad signature is a **floor alert**: logged at ERROR naming the table and the first
bad entry, and kept in `floor_alerts`. The chain is checked no further than the first bad entry,
so the alert stands (an enrolment lets the check go on past a head it could not accept before).
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger("tablectl.floor.store")

SCHEMA_VERSION = 5

#: Each migration takes the store from the version before it to its index + 1. Plain SQL that
#: SQLite and PostgreSQL both read (BIGINT is an INTEGER in SQLite).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE floor_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE floor_entries (
            site        TEXT   NOT NULL,
            table_id    TEXT   NOT NULL,
            seq         BIGINT NOT NULL,
            boot        TEXT   NOT NULL,
            at          TEXT   NOT NULL,
            round       BIGINT,
            kind        TEXT   NOT NULL,
            body        TEXT   NOT NULL,
            received_at TEXT   NOT NULL,
            PRIMARY KEY (site, table_id, seq)
        )""",
    ),
    (
        """CREATE TABLE floor_tables (
            site          TEXT   NOT NULL,
            table_id      TEXT   NOT NULL,
            contiguous    BIGINT NOT NULL DEFAULT 0,
            reported_last BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (site, table_id)
        )""",
        """CREATE TABLE floor_conflicts (
            site        TEXT   NOT NULL,
            table_id    TEXT   NOT NULL,
            seq         BIGINT NOT NULL,
            boot        TEXT   NOT NULL,
            stored      TEXT   NOT NULL,
            offered     TEXT   NOT NULL,
            received_at TEXT   NOT NULL
        )""",
        "INSERT INTO floor_tables (site, table_id) SELECT DISTINCT site, table_id FROM floor_entries",
    ),
    (
        # The hash chain recomputed over the contiguous entries (controller/security/chainhead.py): how far it
        # is checked, its value there, the table's signing key and its last signed head.
        "ALTER TABLE floor_tables ADD COLUMN chain_seq BIGINT NOT NULL DEFAULT 0",
        f"ALTER TABLE floor_tables ADD COLUMN chain TEXT NOT NULL DEFAULT '{'0' * 32}'",
        "ALTER TABLE floor_tables ADD COLUMN table_key TEXT",
        "ALTER TABLE floor_tables ADD COLUMN head_seq BIGINT NOT NULL DEFAULT 0",
        """CREATE TABLE floor_alerts (
            site        TEXT   NOT NULL,
            table_id    TEXT   NOT NULL,
            seq         BIGINT NOT NULL,
            what        TEXT   NOT NULL,
            raised_at   TEXT   NOT NULL,
            PRIMARY KEY (site, table_id, seq, what)
        )""",
    ),
    (
        # Every enrolment of a table's key, in order (the last one is the table's key now): who
        # enrolled which fingerprint when, and which one it replaced. Rows are only ever added.
        """CREATE TABLE floor_enrolments (
            site        TEXT   NOT NULL,
            table_id    TEXT   NOT NULL,
            number      BIGINT NOT NULL,
            fingerprint TEXT   NOT NULL,
            replaces    TEXT,
            enrolled_by TEXT   NOT NULL,
            enrolled_at TEXT   NOT NULL,
            PRIMARY KEY (site, table_id, number)
        )""",
    ),
    (
        # Who is asking a table for what the store lacks (consumer.py): one ask per table at a time,
        # whichever of several consumers makes it; a claim not released by `expires_ms` lapses.
        """CREATE TABLE floor_claims (
            site        TEXT   NOT NULL,
            table_id    TEXT   NOT NULL,
            consumer    TEXT   NOT NULL,
            correlation TEXT   NOT NULL,
            expires_ms  BIGINT NOT NULL,
            PRIMARY KEY (site, table_id)
        )""",
    ),
)


class FloorStoreError(RuntimeError):
    """The store cannot be used; the text names the store (never its password) and why."""


class EnrolmentRefused(ValueError):
    """An enrolment that would change a table's key without saying so (`replace`)."""


@dataclass(frozen=True)
class Enrolment:
    """One enrolment of a table's key on the floor."""

    site: str
    table: str
    number: int
    fingerprint: str
    replaces: str | None
    by: str
    at: str


@dataclass(frozen=True)
class StoredEntry:
    """One journal entry of one table, as the floor keeps it."""

    site: str
    table: str
    seq: int
    boot: str
    at: str
    round: int | None
    kind: str
    body: dict[str, Any]
    #: The body as the journal writes it (`text`), kept once made: stored and walked, encoded once.
    _text: str | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        if self._text is None:
            object.__setattr__(self, "_text", _body_text(self.body))
        assert self._text is not None
        return self._text

    def to_json(self) -> dict[str, Any]:
        """The export's line: table, boot, seq, kind and the entry as the table journaled it."""
        return {
            "site": self.site,
            "table": self.table,
            "boot": self.boot,
            "seq": self.seq,
            "kind": self.kind,
            "entry": {"seq": self.seq, "at": self.at, "round": self.round, "kind": self.kind, "body": self.body},
        }

    def same_as(self, other: StoredEntry) -> bool:
        return (self.at, self.round, self.kind, self.body) == (other.at, other.round, other.kind, other.body)


@dataclass(frozen=True)
class AddResult:
    added: int
    repeats: int
    conflicts: int
    #: The tables of the batch that the store holds only in part after it (a gap, or the table
    #: said it has more): whoever wrote the rest may not have committed yet, or it was lost.
    behind: tuple[tuple[str, str], ...] = ()
    #: PostgreSQL: each of those tables with how many entries past its contiguous mark it lacks or
    #: holds only in part (the consumer asks at once for a table far behind; consumer.FAR_BEHIND).
    lacking: Mapping[tuple[str, str], int] = field(default_factory=dict)


@dataclass(frozen=True)
class Progress:
    """How far the store holds one table: every seq up to `contiguous`, some up to `highest`."""

    site: str
    table: str
    contiguous: int
    highest: int
    reported_last: int

    @property
    def behind(self) -> bool:
        return self.highest > self.contiguous or self.reported_last > self.contiguous


class _Db(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int: ...


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


#: A chain walk reads the entries it has not walked back from PostgreSQL at most this many at a time.
WALK_MOST = 2_000
#: The kinds whose body the walk reads (a chain head, a journal loss): every other entry is linked
#: over its text as stored, never decoded.
WALK_DECODED = frozenset({"chain-head", "journal-loss"})

#: json.dumps(body, separators=(",", ":"), sort_keys=True), the journal's spelling, with its encoder
#: made once (json.dumps builds one a call with these options: a fifth of a table-day's encoding).
_BODY_ENCODER = json.JSONEncoder(separators=(",", ":"), sort_keys=True)


def _body_text(body: dict[str, Any]) -> str:
    return _BODY_ENCODER.encode(body)  # as the journal writes it


def _rows(**columns: Sequence[Any]) -> str:
    """Columns of equal length as one JSON parameter for PostgreSQL's json_to_recordset: a whole
    batch in one text value (psycopg's pure-Python array adaptation costs more than the query)."""
    names = list(columns)
    return json.dumps([dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)])


def _copy_text(value: str) -> str:
    """A text value in COPY's text format: its backslashes, tabs and line ends escaped."""
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return value


def redact(url: str) -> str:
    """The store URL as logs and errors show it: without a password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


class FloorStore:
    """One open store. Not shared between threads: each thread opens its own (`open_store`)."""

    def __init__(self, url: str, db: Any, dialect: str) -> None:
        self.url = url
        self.dialect = dialect  # "sqlite" or "postgresql"
        self._db = db
        self._lock = threading.Lock()
        #: PostgreSQL: seconds spent taking the batches' tables' rows (SKIP LOCKED: never a wait).
        self.lock_wait_s = 0.0
        self._deferred: set[tuple[str, str]] = set()  # tables whose rows another consumer held
        self._migrate()
        self.store_id = self._meta("store_id") or ""
        if dialect == "postgresql":  # where a batch's COPY lands: this session's own, emptied at each commit
            self._run(
                "CREATE TEMPORARY TABLE floor_incoming (LIKE floor_entries INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
            )

    # -- SQL in one spelling ----------------------------------------------------------------------

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._db.execute(self._sql(sql), params)

    def _json_rows(
        self, sql: str, columns: int, params: Sequence[Any] = (),
        wrap: str = "SELECT COALESCE(json_agg(json_build_array({names})), '[]') FROM ({sql}) AS q({names})",
    ) -> list[list[Any]]:
        """PostgreSQL: the rows of `sql` (`columns` wide) as one JSON value, each row a list: a row
        a table of 1,000 tables, read value by value, cost more in psycopg's Python than the query.
        (`wrap`: the statement around it; a statement that writes goes in a WITH.)"""
        names = ", ".join(f"c{n}" for n in range(columns))
        row = self._run(wrap.format(sql=sql, names=names), params).fetchone()
        return list(row[0]) if row is not None else []

    def _transaction(self) -> Any:
        return _Transaction(self)

    def _meta(self, key: str) -> str | None:
        row = self._run("SELECT value FROM floor_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # -- schema -----------------------------------------------------------------------------------

    def _version(self) -> int:
        if self.dialect == "sqlite":
            exists = self._run("SELECT 1 FROM sqlite_master WHERE type='table' AND name='floor_meta'").fetchone()
        else:
            exists = self._run("SELECT to_regclass('floor_meta')").fetchone()
            exists = exists if exists and exists[0] else None
        if not exists:
            return 0
        text = self._meta("schema")
        return int(text) if text and text.isdigit() else 0

    def _migrate(self) -> None:
        with self._transaction():
            if self.dialect == "postgresql":  # two consumers starting together migrate once
                self._run("SELECT pg_advisory_xact_lock(7216318)")
            version = self._version()
            if version > SCHEMA_VERSION:
                raise FloorStoreError(
                    f"{redact(self.url)}: the store has schema {version}, newer than the {SCHEMA_VERSION} this "
                    "tablectl knows; upgrade tablectl on this machine"
                )
            for number in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[number - 1]:
                    self._run(statement)
                if number == 1:
                    self._run("INSERT INTO floor_meta (key, value) VALUES ('schema', '1')")
                    self._run("INSERT INTO floor_meta (key, value) VALUES ('store_id', ?)", (secrets.token_hex(8),))
                if number == 2:
                    for site, table in self._run("SELECT site, table_id FROM floor_tables").fetchall():
                        self._advance(str(site), str(table))
                self._run("UPDATE floor_meta SET value = ? WHERE key = 'schema'", (str(number),))
                if version:
                    log.info("floor store %s: migrated to schema %d", redact(self.url), number)

    @property
    def schema_version(self) -> int:
        return self._version()

    # -- writing ------------------------------------------------------------------------------------

    def add(self, entries: Iterable[StoredEntry]) -> AddResult:
        """Store what is new, in one transaction; drop repeats; record (never apply) conflicts."""
        groups: dict[tuple[str, str], list[StoredEntry]] = {}
        for entry in entries:
            groups.setdefault((entry.site, entry.table), []).append(entry)
        if self.dialect == "postgresql":
            return self._add_batch(groups)
        added = repeats = conflicts = 0
        behind: list[tuple[str, str]] = []
        now = _now()
        with self._transaction():
            for (site, table), group in groups.items():
                low, high = min(e.seq for e in group), max(e.seq for e in group)
                there = {
                    int(row[0]): StoredEntry(site, table, int(row[0]), "", row[1], row[2], row[3], json.loads(row[4]))
                    for row in self._run(
                        "SELECT seq, at, round, kind, body FROM floor_entries "
                        "WHERE site = ? AND table_id = ? AND seq >= ? AND seq <= ?",
                        (site, table, low, high),
                    ).fetchall()
                }
                fresh, again, differ = self._sort_out(group, there, lambda e: e.seq, now)
                repeats += again
                conflicts += differ
                if fresh:
                    # One statement for the lot (psycopg pipelines it); a row another consumer wrote
                    # a moment ago is left as it is (ON CONFLICT), and counted as a repeat.
                    inserted = self._db.executemany(
                        self._sql(
                            "INSERT INTO floor_entries (site, table_id, seq, boot, at, round, kind, body, received_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (site, table_id, seq) DO NOTHING"
                        ),
                        [(site, table, e.seq, e.boot, e.at, e.round, e.kind, e.text, now) for e in fresh],
                    )
                    added += inserted
                    repeats += len(fresh) - inserted
                self._advance(site, table)
                self._check_chain(site, table)
                if self.progress(site, table).behind:
                    behind.append((site, table))
        return AddResult(added, repeats, conflicts, tuple(behind))

    def _add_batch(self, groups: dict[tuple[str, str], list[StoredEntry]]) -> AddResult:
        """PostgreSQL: the whole batch in a few set-wise statements, however many tables it spans.

        First the entries go in (COPY into a temporary table, then one INSERT .. ON CONFLICT DO
        NOTHING in key order, RETURNING what went in), with no table's row locked: several
        consumers write at once (shared subscriptions spread one table's entries over all of
        them), and the rows they insert never collide unless both hold the same entry, which
        then waits for the other's commit, in one order (never a deadlock). An entry the batch
        did not insert is then compared with the one stored (a reuse is recorded and alerted).
        Last, `_settle`: each table's contiguous mark and chain walk, under its row's lock."""
        keys = sorted(groups)
        now = _now()
        with self._transaction():
            # A batch's second copy of an entry is compared with its first here, never inserted twice.
            first: dict[tuple[str, str, int], StoredEntry] = {}
            fresh, repeats, conflicts = self._sort_out(
                (e for key in keys for e in sorted(groups[key], key=lambda e: e.seq)), first,
                lambda e: (e.site, e.table, e.seq), now,
            )  # fmt: skip
            inserted: set[tuple[str, str, int]] = set()
            if fresh:
                self._copy_in(fresh, now)
                inserted = {
                    (str(r[0]), str(r[1]), int(r[2]))
                    for r in self._json_rows(
                        "INSERT INTO floor_entries SELECT * FROM floor_incoming ORDER BY site, table_id, seq "
                        "ON CONFLICT (site, table_id, seq) DO NOTHING RETURNING site, table_id, seq",
                        3,
                        wrap="WITH q AS ({sql}) SELECT COALESCE(json_agg(json_build_array({names})), '[]') "
                        "FROM q AS q2({names})",
                    )
                }
            others = [e for e in fresh if (e.site, e.table, e.seq) not in inserted]
            if others:  # stored before (by this store, or another consumer): the same, or a reuse
                there: dict[tuple[str, str, int], StoredEntry] = {}
                for r in self._json_rows(
                    "SELECT e.site, e.table_id, e.seq, e.at, e.round, e.kind, e.body FROM floor_entries e "
                    "JOIN json_to_recordset(?::json) AS b(site text, table_id text, seq bigint) "
                    "ON e.site = b.site AND e.table_id = b.table_id AND e.seq = b.seq",
                    7,
                    (_rows(site=[e.site for e in others], table_id=[e.table for e in others],
                           seq=[e.seq for e in others]),),
                ):  # fmt: skip
                    stored = StoredEntry(str(r[0]), str(r[1]), int(r[2]), "", r[3], r[4], r[5], json.loads(r[6]), r[6])
                    there[(stored.site, stored.table, stored.seq)] = stored
                _, again, differ = self._sort_out(others, there, lambda e: (e.site, e.table, e.seq), now)
                repeats += again
                conflicts += differ
            lacking = self._settle(keys, {k: e for k, e in first.items() if k in inserted})
        return AddResult(len(inserted), repeats, conflicts, tuple(sorted(lacking)), lacking)

    def settle(self) -> dict[tuple[str, str], int]:
        """PostgreSQL: move the marks and walk the chains of the tables an earlier batch found
        locked by another consumer (`_settle`); the tables then held only in part (behind), each
        with how many entries it lacks or holds only in part."""
        if not self._deferred:
            return {}
        with self._transaction():
            return self._settle([], {})

    @property
    def unsettled(self) -> int:
        """How many tables wait for `settle` (their rows were locked by another consumer)."""
        return len(self._deferred)

    def _settle(
        self, keys: Sequence[tuple[str, str]], known: dict[tuple[str, str, int], StoredEntry]
    ) -> dict[tuple[str, str], int]:
        """The tables' contiguous marks moved over what is stored and their chains walked, each
        under its row in floor_tables, locked in one order (FOR UPDATE), so the mark and the walk
        see every entry other consumers committed and no two consumers walk a table at once.

        A row another consumer's batch holds is skipped (SKIP LOCKED), never waited for: with
        every consumer's batch spanning most tables (the shared subscription deals a table's
        entries to all of them), a wait here made them take turns, and four did worse than two.
        A skipped table is settled by this store's next batch or `settle` (the consumer calls it
        when idle); the other consumer's walk may already cover it. `known`: the batch's entries
        (walked from memory). The tables held only in part after it are returned (behind), each with
        how many entries past its mark it lacks or holds only in part."""
        wanted = sorted(set(keys) | self._deferred)
        if not wanted:
            return {}
        sites, tables = [k[0] for k in wanted], [k[1] for k in wanted]
        self._run(
            "INSERT INTO floor_tables (site, table_id) "
            "SELECT * FROM json_to_recordset(?::json) AS b(site text, table_id text) ORDER BY 1, 2 "
            "ON CONFLICT (site, table_id) DO NOTHING",
            (_rows(site=sites, table_id=tables),),
        )
        waited = time.monotonic()
        locked = {
            (str(r[0]), str(r[1]))
            for r in self._run(
                "SELECT t.site, t.table_id FROM floor_tables t "
                "JOIN json_to_recordset(?::json) AS b(site text, table_id text) "
                "ON t.site = b.site AND t.table_id = b.table_id "
                "ORDER BY t.site, t.table_id FOR UPDATE OF t SKIP LOCKED",
                (_rows(site=sites, table_id=tables),),
            ).fetchall()
        }
        self.lock_wait_s += time.monotonic() - waited
        self._deferred = set(wanted) - locked
        if not locked:
            return {}
        mine = sorted(locked)
        behind: dict[tuple[str, str], int] = {}
        # Each table's run of stored seqs from its contiguous mark up (gaps and islands), and
        # the highest seq held, in one statement for the batch's tables.
        runs = self._json_rows(
            "SELECT site, table_id, contiguous, reported_last, "
            "COALESCE(MAX(seq) FILTER (WHERE island = 0), contiguous), COALESCE(MAX(seq), contiguous) FROM ("
            "  SELECT t.site, t.table_id, t.contiguous, t.reported_last, e.seq, "
            "    e.seq - t.contiguous - row_number() OVER (PARTITION BY t.site, t.table_id ORDER BY e.seq) "
            "      AS island "
            "  FROM floor_tables t JOIN json_to_recordset(?::json) AS b(site text, table_id text) "
            "    ON t.site = b.site AND t.table_id = b.table_id "
            "  LEFT JOIN floor_entries e ON e.site = t.site AND e.table_id = t.table_id AND e.seq > t.contiguous"
            ") x GROUP BY site, table_id, contiguous, reported_last",
            6,
            (_rows(site=[k[0] for k in mine], table_id=[k[1] for k in mine]),),
        )
        moved: list[tuple[str, str, int]] = []
        for site, table, contiguous, reported_last, reach, highest in runs:
            if int(reach) > int(contiguous):
                moved.append((str(site), str(table), int(reach)))
            if int(highest) > int(reach) or int(reported_last) > int(reach):
                behind[(str(site), str(table))] = max(int(highest), int(reported_last)) - int(reach)
        if moved:
            self._run(
                "UPDATE floor_tables t SET contiguous = GREATEST(t.contiguous, u.reach) "
                "FROM json_to_recordset(?::json) AS u(site text, table_id text, reach bigint) "
                "WHERE t.site = u.site AND t.table_id = u.table_id",
                (_rows(site=[m[0] for m in moved], table_id=[m[1] for m in moved], reach=[m[2] for m in moved]),),
            )
            self._check_chains([(site, table) for site, table, _ in moved], known)
        return behind

    def _copy_in(self, fresh: Sequence[StoredEntry], now: str) -> None:
        """The batch's new rows into the session's floor_incoming (emptied at each commit), by COPY.
        A row is joined as it is and escaped field by field only if it holds a character COPY's
        text format escapes (a tab beyond its eight separators, a backslash but a null round's `\\N`,
        a line end): most rows need none, and the check is a few passes over the line."""
        lines = []
        for e in fresh:
            rnd = "\\N" if e.round is None else str(e.round)
            line = "\t".join((e.site, e.table, str(e.seq), e.boot, e.at, rnd, e.kind, e.text, now))
            if line.count("\\") != (e.round is None) or "\n" in line or "\r" in line or line.count("\t") != 8:
                line = "\t".join((_copy_text(e.site), _copy_text(e.table), str(e.seq), _copy_text(e.boot),
                                  _copy_text(e.at), rnd, _copy_text(e.kind), _copy_text(e.text), now))  # fmt: skip
            lines.append(line)
        self._db.copy(
            "COPY floor_incoming (site, table_id, seq, boot, at, round, kind, body, received_at) FROM STDIN",
            ("\n".join(lines) + "\n").encode(),
        )

    def _sort_out(
        self, entries: Iterable[StoredEntry], there: dict[Any, StoredEntry], key: Callable[[StoredEntry], Any], now: str
    ) -> tuple[list[StoredEntry], int, int]:
        """The entries the store does not hold yet (`there`: what it holds, by `key`), and how many
        came again the same (repeats) or with other content (conflicts, recorded and alerted)."""
        fresh: list[StoredEntry] = []
        repeats = conflicts = 0
        for entry in entries:
            old = there.get(key(entry))
            if old is None:
                there[key(entry)] = entry  # a second copy in this batch is compared with it
                fresh.append(entry)
            elif old.same_as(entry):
                repeats += 1
            else:
                conflicts += 1
                self._conflict(old, entry, now)
        return fresh, repeats, conflicts

    def _conflict(self, old: StoredEntry, entry: StoredEntry, now: str) -> None:
        """An entry offered again with other content: recorded and alerted, never applied."""
        site, table = entry.site, entry.table
        self._run(
            "INSERT INTO floor_conflicts (site, table_id, seq, boot, stored, offered, received_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (site, table, entry.seq, entry.boot, json.dumps(old.to_json()["entry"]),
             json.dumps(entry.to_json()["entry"]), now),
        )  # fmt: skip
        log.error(
            "floor store: %s/%s entry %d came again (boot %s) different from the one stored; the "
            "stored one is kept and the difference recorded in floor_conflicts: a replaced journal "
            "or a table id used twice?",
            site, table, entry.seq, entry.boot,
        )  # fmt: skip
        self._alert(
            site, table, entry.seq,
            f"sequence number {entry.seq} reused: the table sent entry {entry.seq} again with other "
            "content (its journal was rewritten or restored from an earlier copy)",
        )  # fmt: skip

    # -- the catch-up claims (several consumers, one ask per table at a time) ----------------------

    def claim(self, site: str, table: str, consumer: str, correlation: str, hold_s: float) -> bool:
        """Take the table's catch-up claim for `hold_s` seconds; False while another ask holds it."""
        now = int(time.time() * 1000)
        with self._transaction():
            row = self._run(
                "INSERT INTO floor_claims (site, table_id, consumer, correlation, expires_ms) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (site, table_id) DO UPDATE SET consumer = excluded.consumer, "
                "correlation = excluded.correlation, expires_ms = excluded.expires_ms "
                "WHERE floor_claims.expires_ms < ? RETURNING consumer",
                (site, table, consumer, correlation, now + int(hold_s * 1000), now),
            ).fetchone()
        return row is not None

    def claim_many(self, asks: Sequence[tuple[str, str, str]], consumer: str, hold_s: float) -> set[tuple[str, str]]:
        """`claim` for many tables at once, (site, table, correlation) each: the tables claimed."""
        if self.dialect != "postgresql":
            return {(s, t) for s, t, c in asks if self.claim(s, t, consumer, c, hold_s)}
        now = int(time.time() * 1000)
        with self._transaction():
            rows = self._run(
                "INSERT INTO floor_claims (site, table_id, consumer, correlation, expires_ms) "
                "SELECT site, table_id, ?, correlation, ? FROM json_to_recordset(?::json) "
                "AS b(site text, table_id text, correlation text) ORDER BY site, table_id "
                "ON CONFLICT (site, table_id) DO UPDATE SET consumer = excluded.consumer, "
                "correlation = excluded.correlation, expires_ms = excluded.expires_ms "
                "WHERE floor_claims.expires_ms < ? RETURNING site, table_id",
                (consumer, now + int(hold_s * 1000),
                 _rows(site=[a[0] for a in asks], table_id=[a[1] for a in asks], correlation=[a[2] for a in asks]),
                 now),
            ).fetchall()  # fmt: skip
        return {(str(r[0]), str(r[1])) for r in rows}

    def lagging(self) -> dict[tuple[str, str], int]:
        """The tables whose own word (status, catch-up answer) says they have entries past the
        store's contiguous mark, each with how many."""
        rows = self._run(
            "SELECT site, table_id, reported_last - contiguous FROM floor_tables WHERE reported_last > contiguous"
        ).fetchall()
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}

    def claims_held(self, consumer: str) -> int:
        """How many tables `consumer` has an ask out to now (its claims not lapsed)."""
        row = self._run(
            "SELECT COUNT(*) FROM floor_claims WHERE consumer = ? AND expires_ms >= ?",
            (consumer, int(time.time() * 1000)),
        ).fetchone()
        return int(row[0])

    def marks(self) -> dict[tuple[str, str], int]:
        """Every table's contiguous mark (what the store confirms to it), in one read."""
        sql = "SELECT site, table_id, contiguous FROM floor_tables"
        rows = self._json_rows(sql, 3) if self.dialect == "postgresql" else self._run(sql).fetchall()
        return {(str(r[0]), str(r[1])): int(r[2]) for r in rows}

    def pass_on(self, site: str, table: str, correlation: str, consumer: str, then: str, hold_s: float) -> bool:
        """The answer to `correlation` says the table has more: the claim goes to the next ask
        (`then`) in one statement, so no other ask slips in between two chunks."""
        with self._transaction():
            moved = self._run(
                "UPDATE floor_claims SET consumer = ?, correlation = ?, expires_ms = ? "
                "WHERE site = ? AND table_id = ? AND correlation = ?",
                (consumer, then, int(time.time() * 1000) + int(hold_s * 1000), site, table, correlation),
            ).rowcount
        return bool(moved)

    def extend_many(self, asks: Sequence[tuple[str, str, str]], hold_s: float) -> None:
        """The answers to these asks, (site, table, correlation) each, are arriving: each claim still
        held by its ask is held `hold_s` seconds from now."""
        expires = int(time.time() * 1000) + int(hold_s * 1000)
        with self._transaction():
            if self.dialect != "postgresql":
                for site, table, correlation in asks:
                    self._run(
                        "UPDATE floor_claims SET expires_ms = ? WHERE site = ? AND table_id = ? AND correlation = ?",
                        (expires, site, table, correlation),
                    )
                return
            self._run(
                "UPDATE floor_claims c SET expires_ms = ? FROM json_to_recordset(?::json) AS b(site text, "
                "table_id text, correlation text) WHERE c.site = b.site AND c.table_id = b.table_id "
                "AND c.correlation = b.correlation",
                (expires, _rows(site=[a[0] for a in asks], table_id=[a[1] for a in asks],
                                correlation=[a[2] for a in asks])),
            )  # fmt: skip

    def release(self, site: str, table: str, correlation: str) -> bool:
        """The answer to the ask `correlation` came (to whichever consumer): its claim ends. False
        when that ask no longer holds the claim (it lapsed and another ask took it)."""
        with self._transaction():
            gone = self._run(
                "DELETE FROM floor_claims WHERE site = ? AND table_id = ? AND correlation = ?",
                (site, table, correlation),
            ).rowcount
        return bool(gone)

    def release_many(self, asks: Sequence[tuple[str, str, str]]) -> None:
        """`release` for many answered asks at once, (site, table, correlation) each."""
        if self.dialect != "postgresql":
            for site, table, correlation in asks:
                self.release(site, table, correlation)
            return
        with self._transaction():
            self._run(
                "DELETE FROM floor_claims c USING json_to_recordset(?::json) AS b(site text, table_id text, "
                "correlation text) WHERE c.site = b.site AND c.table_id = b.table_id AND c.correlation = b.correlation",
                (_rows(site=[a[0] for a in asks], table_id=[a[1] for a in asks], correlation=[a[2] for a in asks]),),
            )

    def reported(self, site: str, table: str, last: int) -> None:
        """Record the last seq the table says it has (from a catch-up reply or its status)."""
        greatest = "max" if self.dialect == "sqlite" else "GREATEST"
        with self._transaction():
            self._run(
                "INSERT INTO floor_tables (site, table_id, reported_last) VALUES (?, ?, ?) "
                f"ON CONFLICT (site, table_id) DO UPDATE SET reported_last = "
                f"{greatest}(floor_tables.reported_last, excluded.reported_last)",
                (site, table, last),
            )

    def reported_many(self, lasts: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        """`reported` for many tables in one transaction (a batch's status messages); the tables
        whose journal goes further than the store holds them whole, each with how many entries
        past its contiguous mark the store lacks or holds only in part."""
        if self.dialect != "postgresql":
            for (site, table), last in lasts.items():
                self.reported(site, table, last)
            progress = [self.progress(*key) for key in lasts]
            return {(p.site, p.table): max(p.highest, p.reported_last) - p.contiguous for p in progress if p.behind}
        keys = sorted(lasts)
        with self._transaction():
            rows = self._run(
                "INSERT INTO floor_tables (site, table_id, reported_last) "
                "SELECT * FROM json_to_recordset(?::json) AS b(site text, table_id text, last bigint) ORDER BY 1, 2 "
                "ON CONFLICT (site, table_id) DO UPDATE SET reported_last = "
                "GREATEST(floor_tables.reported_last, excluded.reported_last) "
                "RETURNING site, table_id, contiguous, reported_last",
                (_rows(site=[k[0] for k in keys], table_id=[k[1] for k in keys], last=[lasts[k] for k in keys]),),
            ).fetchall()
        return {(str(r[0]), str(r[1])): int(r[3]) - int(r[2]) for r in rows if int(r[3]) > int(r[2])}

    def _advance(self, site: str, table: str) -> None:
        row = self._run("SELECT contiguous FROM floor_tables WHERE site = ? AND table_id = ?", (site, table)).fetchone()
        start = int(row[0]) if row else 0
        contiguous = start
        for (seq,) in self._run(
            "SELECT seq FROM floor_entries WHERE site = ? AND table_id = ? AND seq > ? ORDER BY seq",
            (site, table, start),
        ).fetchall():
            if seq != contiguous + 1:
                break
            contiguous = int(seq)
        greatest = "max" if self.dialect == "sqlite" else "GREATEST"
        self._run(
            "INSERT INTO floor_tables (site, table_id, contiguous) VALUES (?, ?, ?) "
            f"ON CONFLICT (site, table_id) DO UPDATE SET contiguous = "
            f"{greatest}(floor_tables.contiguous, excluded.contiguous)",
            (site, table, contiguous),
        )

    def _check_chain(self, site: str, table: str) -> None:
        """Walk the chain over the contiguous entries not walked yet; stop at the first bad one.
        SQLite reads them one at a time from its cursor; PostgreSQL (whose cursor holds every row
        it returns) in pages, `_check_chains`."""
        if self.dialect == "postgresql":
            self._check_chains([(site, table)])
            return
        row = self._run(
            "SELECT contiguous, chain_seq, chain, table_key, head_seq FROM floor_tables "
            "WHERE site = ? AND table_id = ?",
            (site, table),
        ).fetchone()
        if int(row[1]) >= int(row[0]):
            return
        cursor = self._run(
            "SELECT seq, boot, at, round, kind, body FROM floor_entries "
            "WHERE site = ? AND table_id = ? AND seq > ? AND seq <= ? ORDER BY seq",
            (site, table, int(row[1]), int(row[0])),
        )
        entries = (
            StoredEntry(site, table, int(seq), boot, at, None if rnd is None else int(rnd), kind,
                        json.loads(body) if kind in WALK_DECODED else {}, body)
            for seq, boot, at, rnd, kind, body in cursor
        )  # fmt: skip
        walked = self._walk_chain(site, table, row, entries, self.enrolled(site, table))
        self._run(
            "UPDATE floor_tables SET chain_seq = ?, chain = ?, table_key = ?, head_seq = ? "
            "WHERE site = ? AND table_id = ?",
            (*walked, site, table),
        )

    def _walk_chain(
        self, site: str, table: str, row: Sequence[Any], entries: Iterable[StoredEntry], enrolled: str | None
    ) -> tuple[int, str, str | None, int]:
        """The walk itself, over `entries` (in order, from the row's chain_seq on): where it ends
        (chain_seq, chain, table_key, head_seq). `row`: contiguous, chain_seq, chain, table_key,
        head_seq as floor_tables holds them; `enrolled`: the fingerprint enrolled for the table."""
        walk = _Walk(self, site, table, row, enrolled)
        walk.feed(entries)
        return walk.end()

    def _check_chains(
        self, keys: Sequence[tuple[str, str]], known: dict[tuple[str, str, int], StoredEntry] | None = None
    ) -> None:
        """PostgreSQL: `_check_chain` for many tables in a few statements (their rows with the key
        enrolled for each, their entries not walked yet in pages, the walks' ends), the walk the
        same, never a statement per table. `known`: entries the caller holds (the batch, as
        stored): a table whose entries to walk are all there is not read back.

        The entries read back come in pages of at most WALK_MOST, each walked before the next is
        read: a table whose mark jumped by a day (another consumer stored its catch-up) was read
        back whole, in one JSON value, and the consumer grew by tens of MB at each. Only a
        chain head's body (and a journal loss's) is decoded: the walk links every other entry
        over its text as stored."""
        sites, tables = [k[0] for k in keys], [k[1] for k in keys]
        rows = {
            (str(r[0]), str(r[1])): r[2:]
            for r in self._json_rows(
                "SELECT t.site, t.table_id, t.contiguous, t.chain_seq, t.chain, t.table_key, t.head_seq, "
                "(SELECT n.fingerprint FROM floor_enrolments n WHERE n.site = t.site AND n.table_id = t.table_id "
                "ORDER BY n.number DESC LIMIT 1) "
                "FROM floor_tables t JOIN json_to_recordset(?::json) AS b(site text, table_id text) "
                "ON t.site = b.site AND t.table_id = b.table_id WHERE t.chain_seq < t.contiguous",
                8,
                (_rows(site=sites, table_id=tables),),
            )
        }
        if not rows:
            return
        walks = {key: _Walk(self, key[0], key[1], row[:5], row[5]) for key, row in rows.items()}
        fetch: list[tuple[str, str]] = []
        for key, row in rows.items():
            first, last = int(row[1]) + 1, int(row[0])
            if known and last - first < len(known):  # (at most what the batch holds: never a long range built)
                held = [known.get((key[0], key[1], seq)) for seq in range(first, last + 1)]
                if all(e is not None for e in held):
                    walks[key].feed(e for e in held if e is not None)
                    continue
            fetch.append(key)
        # The rest read back in pages (one JSON value each: psycopg's pure-Python rows cost more
        # than the query), each body's text as stored: the chain is walked over it. A page is the
        # next WALK_MOST entries of the tables in turn, each table's range cut to what fits (every
        # entry up to a table's contiguous mark is stored: a range's length is its count), read
        # through the primary key (a LATERAL index scan a table). Joined to the ranges as a whole and
        # cut by a LIMIT, every entry of every range was read before the cut, and PostgreSQL planned
        # a parallel scan of every stored entry once the ranges were long (two consumers catching
        # up an hour of 1,000 tables read back 0.2-0.5 s a batch at 3 M entries stored).
        while fetch:
            ranges: list[tuple[tuple[str, str], int, int]] = []
            room = WALK_MOST
            for key in sorted(fetch):
                if room <= 0:
                    break
                after = walks[key].walk.seq
                take = min(walks[key].contiguous - after, room)
                ranges.append((key, after, after + take))
                room -= take
            page = self._json_rows(
                "SELECT x.* FROM json_to_recordset(?::json) AS b(site text, table_id text, after bigint, "
                "through bigint) CROSS JOIN LATERAL (SELECT e.site, e.table_id, e.seq, e.boot, e.at, e.round, "
                "e.kind, e.body FROM floor_entries e WHERE e.site = b.site AND e.table_id = b.table_id "
                "AND e.seq > b.after AND e.seq <= b.through ORDER BY e.seq) AS x",
                8,
                (_rows(site=[k[0] for k, _, _ in ranges], table_id=[k[1] for k, _, _ in ranges],
                       after=[a for _, a, _ in ranges], through=[t for _, _, t in ranges]),),
            )  # fmt: skip
            grouped: dict[tuple[str, str], list[StoredEntry]] = {}
            for site, table, seq, boot, at, rnd, kind, body in page:
                # An entry the batch holds (this consumer's share of a table another consumer also
                # writes) is taken from it; of the others only a head's body is decoded.
                mine = known.get((site, table, seq)) if known else None
                if mine is None:
                    decoded = json.loads(body) if kind in WALK_DECODED else {}
                    mine = StoredEntry(site, table, seq, boot, at, rnd, kind, decoded, body)
                grouped.setdefault((site, table), []).append(mine)
            for key, entries in grouped.items():
                entries.sort(key=lambda e: e.seq)
                walks[key].feed(entries)
            moved = any(walks[key].done or walks[key].walk.seq > after for key, after, _ in ranges)
            fetch = [k for k in fetch if not walks[k].done]
            if not moved:
                break  # nothing more to read (a range the store no longer holds whole): walked as far as it goes
        ends = [(key, walk.end()) for key, walk in walks.items()]
        self._run(
            "UPDATE floor_tables t SET chain_seq = u.seq, chain = u.chain, table_key = u.key, head_seq = u.head "
            "FROM json_to_recordset(?::json) AS u(site text, table_id text, seq bigint, chain text, key text, "
            "head bigint) WHERE t.site = u.site AND t.table_id = u.table_id",
            (_rows(site=[k[0] for k, _ in ends], table_id=[k[1] for k, _ in ends], seq=[e[0] for _, e in ends],
                   chain=[e[1] for _, e in ends], key=[e[2] for _, e in ends], head=[e[3] for _, e in ends]),),
        )  # fmt: skip

    def enrolled(self, site: str, table: str) -> str | None:
        """The fingerprint of the key enrolled for the table now (None: none is)."""
        row = self._run(
            "SELECT fingerprint FROM floor_enrolments WHERE site = ? AND table_id = ? ORDER BY number DESC LIMIT 1",
            (site, table),
        ).fetchone()
        return None if row is None else str(row[0])

    def enrolments(self, site: str | None = None, table: str | None = None) -> list[Enrolment]:
        """Every enrolment (of one site or table), oldest first per table."""
        where = [(c, v) for c, v in (("site", site), ("table_id", table)) if v is not None]
        rows = self._run(
            "SELECT site, table_id, number, fingerprint, replaces, enrolled_by, enrolled_at FROM floor_enrolments"
            + (" WHERE " + " AND ".join(f"{c} = ?" for c, _ in where) if where else "")
            + " ORDER BY site, table_id, number",
            [v for _, v in where],
        ).fetchall()
        return [Enrolment(str(r[0]), str(r[1]), int(r[2]), str(r[3]), r[4], str(r[5]), str(r[6])) for r in rows]

    def enroll(self, site: str, table: str, fingerprint: str, by: str, *, replace: bool = False) -> Enrolment | None:
        """Enrol `fingerprint` as table `table`'s key: from now on the store accepts the table's
        signed heads under that key only. A table enrolled with another key keeps it unless
        `replace` (EnrolmentRefused naming the key enrolled); enrolling the same key again adds
        nothing (None). The chain check then goes on at once from where it stopped (a head the
        store could not accept before the enrolment)."""
        with self._transaction():
            if self.dialect == "postgresql":  # two enrolments of one table at once: one after the other
                self._run("SELECT pg_advisory_xact_lock(7216319)")
            rows = self.enrolments(site, table)
            last = rows[-1] if rows else None
            if last is not None and last.fingerprint == fingerprint:
                return None
            if last is not None and not replace:
                raise EnrolmentRefused(
                    f"table {table} on site {site} is enrolled with key {last.fingerprint} (by {last.by} at "
                    f"{last.at}); a new key is a re-enrolment: give --replace"
                )
            entry = Enrolment(site, table, (last.number + 1) if last else 1, fingerprint,
                              last.fingerprint if last else None, by, _now())  # fmt: skip
            self._run(
                "INSERT INTO floor_enrolments (site, table_id, number, fingerprint, replaces, enrolled_by, "
                "enrolled_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (site, table, entry.number, entry.fingerprint, entry.replaces, entry.by, entry.at),
            )
            self._run(
                "INSERT INTO floor_tables (site, table_id) VALUES (?, ?) ON CONFLICT (site, table_id) DO NOTHING",
                (site, table),
            )
            if entry.replaces:
                log.warning("floor store: %s/%s: key %s enrolled by %s, replacing %s", site, table, fingerprint, by,
                            entry.replaces)  # fmt: skip
            else:
                log.info("floor store: %s/%s: key %s enrolled by %s", site, table, fingerprint, by)
            self._check_chain(site, table)
        return entry

    def _alert(self, site: str, table: str, seq: int, what: str) -> None:
        """A floor alert: logged and kept (once for the same entry and words)."""
        there = self._run(
            "SELECT 1 FROM floor_alerts WHERE site = ? AND table_id = ? AND seq = ? AND what = ?",
            (site, table, seq, what),
        ).fetchone()
        if there:
            return
        self._run(
            "INSERT INTO floor_alerts (site, table_id, seq, what, raised_at) VALUES (?, ?, ?, ?, ?)",
            (site, table, seq, what, _now()),
        )
        log.error("FLOOR ALERT: table %s/%s: entry %d: %s", site, table, seq, what)

    def alert(self, site: str, table: str, seq: int, what: str) -> None:
        """A floor alert about the table's entry `seq` found outside the store (a catch-up reply)."""
        with self._transaction():
            self._alert(site, table, seq, what)

    def gap_reported(self, site: str, table: str, through: int) -> None:
        """The table answered a catch-up through `through` and the store still misses entries before
        it: the table itself does not have them (deleted from its journal), a gap."""
        with self._transaction():
            gaps = self.missing(site, table, through)
            if gaps:
                first, last = gaps[0]
                self._alert(site, table, first, f"a gap: entries {first} to {last} are not in the table's journal")

    def alerts(self, site: str, table: str) -> list[tuple[int, str]]:
        """The table's floor alerts, (first bad entry, what), oldest entry first."""
        rows = self._run(
            "SELECT seq, what FROM floor_alerts WHERE site = ? AND table_id = ? ORDER BY seq, raised_at", (site, table)
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def history(self, site: str, table: str) -> dict[str, Any]:
        """What the store answers a starting table: how far it has checked the table's chain and its
        value there, the last signed head, and whether an alert stands."""
        row = self._run(
            "SELECT chain_seq, chain, head_seq FROM floor_tables WHERE site = ? AND table_id = ?", (site, table)
        ).fetchone()
        seq, chain, head = (int(row[0]), str(row[1]), int(row[2])) if row else (0, "0" * 32, 0)
        return {"seq": seq, "chain": chain, "head_seq": head, "alerts": [a[0] for a in self.alerts(site, table)]}

    # -- reading ------------------------------------------------------------------------------------

    def tables(self) -> list[tuple[str, str]]:
        """Every (site, table) the store has heard of, sorted."""
        rows = self._run("SELECT site, table_id FROM floor_tables ORDER BY site, table_id").fetchall()
        return [(str(s), str(t)) for s, t in rows]

    def progress(self, site: str, table: str) -> Progress:
        row = self._run(
            "SELECT contiguous, reported_last FROM floor_tables WHERE site = ? AND table_id = ?", (site, table)
        ).fetchone()
        highest = self._run(
            "SELECT MAX(seq) FROM floor_entries WHERE site = ? AND table_id = ?", (site, table)
        ).fetchone()
        contiguous, reported = (int(row[0]), int(row[1])) if row else (0, 0)
        return Progress(site, table, contiguous, int(highest[0] or 0), reported)

    def entries(self, site: str, table: str, after: int = 0) -> Iterator[StoredEntry]:
        """The table's stored entries with seq > `after`, in journal order."""
        cursor = self._run(
            "SELECT seq, boot, at, round, kind, body FROM floor_entries "
            "WHERE site = ? AND table_id = ? AND seq > ? ORDER BY seq",
            (site, table, after),
        )
        for seq, boot, at, rnd, kind, body in cursor:
            rnd = None if rnd is None else int(rnd)
            yield StoredEntry(site, table, int(seq), boot, at, rnd, kind, json.loads(body))

    def missing(self, site: str, table: str, through: int) -> list[tuple[int, int]]:
        """The ranges of seqs from 1 to `through` the store does not hold, as (first, last)."""
        gaps: list[tuple[int, int]] = []
        expected = 1
        for (seq,) in self._run(
            "SELECT seq FROM floor_entries WHERE site = ? AND table_id = ? AND seq <= ? ORDER BY seq",
            (site, table, through),
        ).fetchall():
            if seq > expected:
                gaps.append((expected, int(seq) - 1))
            expected = int(seq) + 1
        if expected <= through:
            gaps.append((expected, through))
        return gaps

    def conflicts(self, site: str, table: str) -> list[int]:
        rows = self._run(
            "SELECT seq FROM floor_conflicts WHERE site = ? AND table_id = ? ORDER BY seq", (site, table)
        ).fetchall()
        return [int(r[0]) for r in rows]

    def count(self) -> int:
        return int(self._run("SELECT COUNT(*) FROM floor_entries").fetchone()[0])

    def close(self) -> None:
        self._db.close()


class _Transaction:
    """BEGIN .. COMMIT (ROLLBACK on an error) on the store's one connection."""

    def __init__(self, store: FloorStore) -> None:
        self.store = store

    def __enter__(self) -> None:
        self.store._lock.acquire()
        try:
            self.store._db.begin()
        except BaseException:
            self.store._lock.release()
            raise

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        try:
            if kind is None:
                self.store._db.commit()
            else:
                self.store._db.rollback()
        finally:
            self.store._lock.release()


class _Walk:
    """One table's chain walk, fed its entries in order (in pages or at once): it stops at the
    first bad one (a floor alert) or past the table's contiguous mark."""

    def __init__(self, store: FloorStore, site: str, table: str, row: Sequence[Any], enrolled: str | None) -> None:
        from controller.security.chainhead import ChainWalk

        self.store, self.site, self.table = store, site, table
        self.contiguous, chain_seq, chain, key = int(row[0]), int(row[1]), str(row[2]), row[3]
        self.head_seq = int(row[4])
        self.walk = ChainWalk(table, chain_seq, chain, key, enrolled)
        self.stopped = False

    @property
    def done(self) -> bool:
        return self.stopped or self.walk.seq >= self.contiguous

    def feed(self, entries: Iterable[StoredEntry]) -> None:
        if self.stopped:
            return
        walk = self.walk
        for entry in entries:
            if entry.seq > self.contiguous:
                self.stopped = True
                return
            problem = walk.add(entry.seq, entry.at, entry.round, entry.kind, entry.body, entry.text)
            if problem is not None:
                self.store._alert(self.site, self.table, entry.seq, problem)
                self.stopped = True
                return
            if entry.kind == "chain-head":
                self.head_seq = entry.seq

    def end(self) -> tuple[int, str, str | None, int]:
        """chain_seq, chain, table_key, head_seq where the walk stands."""
        return self.walk.seq, self.walk.chain, self.walk.key, self.head_seq


def open_store(url: str) -> FloorStore:
    """`sqlite:///path/floor.db` (`sqlite://floor.db` is relative) or `postgresql://user@host/db`
    (any libpq URL; `?host=/dir` for a socket). Created and migrated if needed."""
    if url.startswith("sqlite://"):
        path = url[len("sqlite://") :]
        if not path:
            raise FloorStoreError(f"--store {url}: name the file, as sqlite:///var/lib/tablectl-floor/floor.db")
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            return FloorStore(url, _SqliteDb(db), "sqlite")
        except (OSError, sqlite3.Error) as exc:
            raise FloorStoreError(f"{url}: cannot open the store: {exc}") from None
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme in ("postgresql", "postgres"):
        try:
            import psycopg
        except ImportError:
            raise FloorStoreError(
                f"{redact(url)}: a PostgreSQL store needs psycopg: pip install 'tablectl[floor]' (and libpq5)"
            ) from None
        try:
            conn = psycopg.connect(url, autocommit=True)  # transactions are explicit (_Transaction)
        except psycopg.Error as exc:
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise FloorStoreError(f"{redact(url)}: cannot connect to the store: {why}") from None
        try:
            return FloorStore(url, _PgDb(conn), "postgresql")
        except psycopg.Error as exc:
            conn.close()
            raise FloorStoreError(f"{redact(url)}: cannot set up the store: {exc}") from None
    raise FloorStoreError(
        f"--store {redact(url)}: the scheme must be sqlite:// (one file) or postgresql:// (a server), not {scheme!r}"
    )


class _SqliteDb:
    """sqlite3 in autocommit mode, with the commit/rollback the transaction helper calls."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self._db.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """How many rows were written."""
        return int(self._db.executemany(sql, rows).rowcount)

    def begin(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")  # the writer's lock at once: two consumers never deadlock

    def commit(self) -> None:
        if self._db.in_transaction:
            self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def close(self) -> None:
        self._db.close()


class _PgDb:
    """A psycopg connection in autocommit mode: reads see the latest commit; writes are in BEGIN."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> int:
        """How many rows were written."""
        with self._conn.cursor() as cursor:
            cursor.executemany(sql, rows)
            return int(cursor.rowcount)

    def copy(self, sql: str, data: bytes) -> None:
        with self._conn.cursor() as cursor, cursor.copy(sql) as copy:
            copy.write(data)

    def begin(self) -> None:
        self._conn.execute("BEGIN")

    def commit(self) -> None:
        self._conn.execute("COMMIT")

    def rollback(self) -> None:
        self._conn.execute("ROLLBACK")

    def close(self) -> None:
        self._conn.close()
