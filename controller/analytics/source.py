"""Reading a window of a journal for analytics: only the entries the window needs, found by time
(entry numbers grow with time, so a window's first entry is found by bisection, not a scan)."""

from __future__ import annotations

from collections.abc import Mapping

from controller.analytics.pace import PaceReader, iso
from controller.journal import Journal

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
    ends = journal.round_ends(after)
    ends.update(recent_ends or {})
    reader = PaceReader(ends.get)
    for entry in journal.entries(after=after, upto=upto):
        reader.feed(entry)
    return reader
