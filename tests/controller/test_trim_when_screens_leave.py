"""The API's process gives the C heap's free pages back as soon as a crowd of screens has gone
(controller/app/heap.py's `TrimWhenScreensLeave`, issue 35 point 5): once when the screens that came
have all left, counted from the screens that stay open (the dealer's), not while some are still
open, and not again for nothing."""

from __future__ import annotations

from collections.abc import Callable

from controller.app.heap import TrimWhenScreensLeave


def _trims(counts: list[int], rested_after: int | None = None) -> list[int]:
    """The counts after which a trim was scheduled, given the feed's screen counts in turn."""
    trimmed: list[int] = []
    at: list[int] = []

    def schedule(trim: Callable[[], None]) -> None:
        trim()
        trimmed.append(at[-1])

    screens = TrimWhenScreensLeave(schedule, lambda: None)
    for i, count in enumerate(counts):
        at.append(count)
        screens.counted(count)
        if rested_after == i:
            screens.rested()
    return trimmed


def test_a_crowd_is_trimmed_for_once_it_has_all_gone() -> None:
    crowd = list(range(1, 51)) + list(range(49, -1, -1))
    assert _trims(crowd) == [0]
    assert _trims(crowd + crowd) == [0, 0]


def test_the_dealers_screen_staying_open_does_not_hold_the_trim_off() -> None:
    dealer = [1]  # open when the periodic trim came
    crowd = list(range(2, 52)) + list(range(50, 0, -1))  # 50 more come and go, the dealer's stays
    assert _trims(dealer + crowd, rested_after=0) == [1]
    assert _trims(dealer + crowd + [2, 1], rested_after=0) == [1, 1]  # one more comes and goes


def test_no_trim_while_screens_that_came_are_still_open() -> None:
    assert _trims([1, 2, 3, 4, 3, 2]) == []


def test_after_a_periodic_trim_the_screens_open_are_at_rest() -> None:
    # The periodic trim came while 3 screens were open: they are the feed at rest; 2 more come and go.
    assert _trims([1, 2, 3, 4, 5, 4, 3], rested_after=2) == [3]
