"""Reading a window of a journal for analytics: only the entries the window needs, found by time
(entry numbers grow with time, so a window's first entry is found by bisection, not a scan)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.analytics.edges import edges_for
from controller.analytics.pace import PaceReader, iso
from controller.analytics.ratings import CLOSE_AFTER, Ratings
from controller.journal.log import Journal

#: Entries this long before a window are read too: a round opened (or a fault raised) before the
#: window and ended in it is timed from its start.
MARGIN_S = 6 * 3600.0


def seq_at(journal: Journal, t: float) -> int:
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
    journal: Journal, start: float, end: float, *, recent_ends: Mapping[int, int] | None = None
) -> PaceReader:
    """A reader fed the entries of [start - MARGIN_S, end]; `recent_ends`: the rounds a live table
    ended since its last snapshot (not in the round index yet), round -> the seq that ended it."""
    after = max(seq_at(journal, start - MARGIN_S), 0)
    upto = seq_at(journal, end)
    ends = journal.round_ends(after, upto)
    ends.update(recent_ends or {})
    reader = PaceReader(ends.get)
    for row in journal.rows(after, upto):
        reader.feed_row(*row)
    return reader


def ratings_window(
    journal: Journal,
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
    ratings = Ratings(lambda game, rules: edges_for(game, rules, cache_dir), close_after)
    recent = dict(recent_records or {})

    def add(number: int, record: Mapping[str, Any]) -> None:
        times = reader.rounds.get(number)
        if times is not None and times.settled is not None and start <= times.settled <= end:
            ratings.add(times, record)

    # Streamed in round order (the index gives them so), one record at a time: memory does not
    # grow with the window; the rounds a live table has not indexed yet are the newest.
    for number, _, indexed in journal.indexed_records(seq_at(journal, start - MARGIN_S), seq_at(journal, end)):
        add(number, recent.pop(number, indexed))
    for number in sorted(recent):
        add(number, recent[number])
    return reader, ratings
