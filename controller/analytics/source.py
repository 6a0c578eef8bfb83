"""Reading a window of a journal for analytics: only the entries the window needs, found by time
(entry numbers grow with time, so a window's first entry is found by bisection, not a scan)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from controller.analytics.edges import edges_for
from controller.analytics.pace import PaceReader, iso
from controller.analytics.ratings import CLOSE_AFTER, Ratings


class JournalReader(Protocol):
    """What the analytics read of a journal: a table's (controller/journal.py, read-only) or its
    entries in the floor store (store_source.py)."""

    path: Path

    @property
    def last_seq(self) -> int: ...

    def first_seq(self) -> int: ...

    def at_of(self, seq: int) -> str | None: ...

    def rows(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, str, int | None, str, str]]: ...

    def round_ends(self, after_seq: int = 0, upto_seq: int | None = None) -> dict[int, int]: ...

    def indexed_records(
        self, after_seq: int = 0, upto_seq: int | None = None
    ) -> Iterator[tuple[int, int, dict[str, Any]]]: ...


#: Entries this long before a window are read too: a round opened (or a fault raised) before the
#: window and ended in it is timed from its start.
MARGIN_S = 6 * 3600.0


def seq_at(journal: JournalReader, t: float) -> int:
    """The last entry written at or before time `t` (seconds), or the one before the first."""
    lo, hi = journal.first_seq(), journal.last_seq
    when = iso(t)
    while lo <= hi:
        mid = (lo + hi) // 2
        at = journal.at_of(mid)
        if at is not None and at <= when:
            lo = mid + 1
        else:
            hi = mid - 1
    return hi


def read_window(
    journal: JournalReader, start: float, end: float, *, recent_ends: Mapping[int, int] | None = None
) -> PaceReader:
    """A reader fed the entries of [start - MARGIN_S, end]; `recent_ends`: the rounds a live table
    ended since its last snapshot (not in the round index yet), round -> the seq that ended it."""
    after = max(seq_at(journal, start - MARGIN_S), 0)
    upto = seq_at(journal, end)
    ends = journal.round_ends(after, upto)
    ends.update(recent_ends or {})
    reader = PaceReader(ends.get, at_of=journal.at_of)
    for row in journal.rows(after, upto):
        reader.feed_row(*row)
    return reader


def ratings_window(
    journal: JournalReader,
    start: float,
    end: float,
    *,
    cache_dir: Path | None,
    recent_ends: Mapping[int, int] | None = None,
    recent_records: Mapping[int, Mapping[str, Any]] | None = None,
    close_after: int = CLOSE_AFTER,
    reader: PaceReader | None = None,
) -> tuple[PaceReader, Ratings]:
    """The pace reader of the window and the rating sessions of the rounds settled in it (the
    records from the round index, and `recent_records` for those a live table has not indexed)."""
    if reader is None:
        reader = read_window(journal, start, end, recent_ends=recent_ends)
    ratings = Ratings(lambda game, rules: edges_for(game, rules, cache_dir), close_after, marks=reader.rating_marks)
    recent = dict(recent_records or {})

    def add(number: int, record: Mapping[str, Any]) -> None:
        times = reader.rounds.get(number)
        if times is None:
            return
        cards = record.get("cards")
        if isinstance(cards, list):
            times.dealt = len(cards)  # the dead cards are those read beyond these
        if times.settled is not None and start <= times.settled <= end:
            ratings.add(times, record)

    # Streamed in round order (the index gives them so), one record at a time: memory does not
    # grow with the window; the rounds a live table has not indexed yet are the newest.
    for number, _, indexed in journal.indexed_records(seq_at(journal, start - MARGIN_S), seq_at(journal, end)):
        add(number, recent.pop(number, indexed))
    for number in sorted(recent):
        add(number, recent[number])
    ratings.marks_until(end)
    return reader, ratings


def dealer_figures(reader: PaceReader, ratings: Ratings, start: float, end: float) -> dict[str, Any]:
    """Each dealer's figures (with the money of their rounds) and each down's, over [start, end]
    (`reader.pace(start, end)` worked out first)."""
    from controller.analytics.dealers import figures

    dealers, downs = figures(reader, start, end)
    for name, d in dealers.items():
        d["money"] = ratings.money(name) if name in ratings.by_dealer else None
    return {"dealers": dealers, "downs": downs, "names": dict(reader.dealer_names)}
