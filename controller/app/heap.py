"""The process's memory: the garbage collector settled after start-up, the C heap's free pages
given back. Both of the daemon's processes (the table's and the API's) use them."""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Callable

#: The collector's thresholds once started: young collections far less often (what requests make
#: and drop is freed by reference counts), the older generations as CPython sets them.
GC_THRESHOLDS = (10_000, 20, 10)


def settle_garbage_collector() -> None:
    """Once started: what start-up made (modules, the app, the game's tables) is moved out of the
    cyclic collector's sight for good (`gc.freeze`), so a full collection walks only what the
    process made since, and stops every thread, the card path's included, for a fraction of the
    time."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def give_back_memory() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim): memory a burst of
    requests or screens used and freed is otherwise kept by the process for good."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim this way
        return


class TrimWhenScreensLeave:
    """Gives the C heap's free pages back (`trim`, on the API's loop, `schedule`d) as soon as the
    screens that came have all gone again: when the number of screens falls back to what it was
    before the first of them came (the feed at rest), not up to `_trim_every`'s 10 s later. A crowd
    of screens catching up leaves the C heap's pages it used free; the daemon's memory counted once
    right after 50 screens left was 0.5-0.8 MB lower trimmed (benchmarks/bench_day_memory.py).
    One trim a crowd: screens coming and going while others stay open (the dealer's) count from
    where they stood. A trim (malloc_trim, 50-130 µs here) runs on the API's loop, never the table's."""

    def __init__(self, schedule: Callable[[Callable[[], None]], object], trim: Callable[[], None]) -> None:
        self._schedule = schedule
        self._trim = trim
        self._count = 0
        self._rest: int | None = None  # how many screens there were before those open now came

    def counted(self, count: int) -> None:
        """The feed has `count` screens now."""
        if count > self._count and self._rest is None:
            self._rest = self._count
        elif self._rest is not None and count <= self._rest:
            self._rest = None
            self._schedule(self._trim)
        self._count = count

    def rested(self) -> None:
        """The heap was trimmed anyway (the periodic trim): the screens open now are the feed at rest."""
        self._rest = None
