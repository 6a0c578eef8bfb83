"""The process's memory: the garbage collector settled after start-up, the C heap's free pages
given back. Both of the daemon's processes (the table's and the API's) use them."""

from __future__ import annotations

import ctypes
import gc

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
