"""A table's entries in the floor store, read as the analytics read a table's journal: so that
`tablectl report --store URL` gives the same figures as the table's own journal.

    journal = StoredJournal.load(open_store(url), site, table, setup)
    report.build(journal, start, end, ...)

The floor store (controller/floor/store.py, read through its public functions only, opened by
the command) keeps every
entry of every table, as the table journaled it (seq, time, round, kind, body), but not the
table's derived round index. That is made here the way `tablectl journal rebuild` makes it: the
entries replayed through the table's own reducer (`TableState.apply`) from the first, each
round's record taken when the entry that ended it is applied. The entries are read once, into
memory; the bodies are written back as the journal writes them (keys sorted, no spaces).

A table whose entries the store does not hold from the first one without a gap is refused
(naming what is missing): a report from part of a table's history would be short, not wrong-
looking.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from controller.table.state import TableSetup


class StoreReader(Protocol):
    """What is read of the floor store (controller/floor/store.py's FloorStore, opened by the
    command: the analytics sit below the floor's server side and do not import it)."""

    def tables(self) -> list[tuple[str, str]]: ...

    def progress(self, site: str, table: str) -> Any: ...

    def missing(self, site: str, table: str, through: int) -> list[tuple[int, int]]: ...

    def entries(self, site: str, table: str, after: int = 0) -> Iterator[Any]: ...


class StoredJournal:
    """What the analytics read of a journal (`first_seq`, `last_seq`, `at_of`, `rows`,
    `round_ends`, `indexed_records`), from a table's entries in the floor store."""

    def __init__(
        self,
        path: Path,
        rows: list[tuple[int, str, int | None, str, str]],
        ends: dict[int, int],
        records: dict[int, dict[str, Any]],
    ) -> None:
        self.path = path
        self._rows = rows
        self._seqs = [r[0] for r in rows]
        self._ends = ends
        self._records = records
        self._by_end = sorted((seq, n) for n, seq in ends.items())

    @classmethod
    def load(
        cls,
        store: StoreReader,
        site: str | None,
        table: str,
        setup: TableSetup,
        *,
        name: str,
        until: float | None = None,
    ) -> StoredJournal:
        """Table `table`'s entries (at `site`; None: the one site that has a table so named),
        refused when the store holds them without a gap only up to a time before `until`;
        `name`: the store as it may be shown (its URL without a password)."""
        from controller.analytics.pace import iso
        from controller.journal.entries import parse_entry
        from controller.journal.log import Entry
        from controller.table.state import TableState

        sites = sorted(s for s, t in store.tables() if t == table)
        if site is None:
            if not sites:
                raise ValueError(f"--table {table}: the floor store holds no table of that id")
            if len(sites) > 1:
                raise ValueError(f"--table {table}: tables of that id at {', '.join(sites)}: name the site, --site S")
            site = sites[0]
        elif site not in sites:
            raise ValueError(f"--site {site} --table {table}: the floor store holds no such table")
        progress = store.progress(site, table)
        rows: list[tuple[int, str, int | None, str, str]] = []
        ends: dict[int, int] = {}
        records: dict[int, dict[str, Any]] = {}
        state = TableState.initial(setup)
        for stored in store.entries(site, table):
            if stored.seq > progress.contiguous:
                break
            text = json.dumps(stored.body, separators=(",", ":"), sort_keys=True)
            rows.append((stored.seq, stored.at, stored.round, stored.kind, text))
            entry = Entry(stored.seq, stored.at, stored.round, stored.kind, json.loads(text))
            state, _ = state.apply(parse_entry(entry))
            if state.ended_by(stored.seq) and state.round_no is not None:
                ends[state.round_no] = stored.seq
                records[state.round_no] = state.rounds[state.round_no].record_json()
                state.rounds.forget_finished(state.round_no)  # kept here now: memory stays flat
        if not rows:
            raise ValueError(f"table {table} at {site}: the floor store holds none of its entries yet")
        if progress.behind and (until is None or rows[-1][1] < iso(until)):
            through = max(progress.highest, progress.reported_last)
            gaps = store.missing(site, table, through)
            where = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in gaps[:5])
            raise ValueError(
                f"table {table} at {site}: the floor store holds its entries without a gap only up to "
                f"{progress.contiguous} ({rows[-1][1]}; missing {where}), before the report's end: a report from it "
                "would be short. Wait for the floor to catch up, or report from the table's own journal"
            )
        return cls(Path(f"{name}#{site}/{table}"), rows, ends, records)

    @property
    def last_seq(self) -> int:
        return self._seqs[-1]

    def first_seq(self) -> int:
        return self._seqs[0]

    def at_of(self, seq: int) -> str | None:
        i = bisect.bisect_left(self._seqs, seq)
        return self._rows[i][1] if i < len(self._seqs) and self._seqs[i] == seq else None

    def rows(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, str, int | None, str, str]]:
        i = bisect.bisect_right(self._seqs, after)
        j = len(self._seqs) if upto is None else bisect.bisect_right(self._seqs, upto)
        yield from self._rows[i:j]

    def round_ends(self, after_seq: int = 0, upto_seq: int | None = None) -> dict[int, int]:
        top = upto_seq if upto_seq is not None else 2**62
        return {n: seq for n, seq in self._ends.items() if after_seq < seq <= top}

    def indexed_records(
        self, after_seq: int = 0, upto_seq: int | None = None
    ) -> Iterator[tuple[int, int, dict[str, Any]]]:
        top = upto_seq if upto_seq is not None else 2**62
        for number in sorted(n for n, seq in self._ends.items() if after_seq < seq <= top):
            yield number, self._ends[number], self._records[number]

    def close(self) -> None:
        self._rows = []
