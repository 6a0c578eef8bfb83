"""The time the conformance kit judges a shoe by, and the time a simulated shoe keeps.

A real shoe is judged on real time: `WallClock`, the kit's default, is the host's monotonic clock.
A simulated shoe checked by the kit in the same process can share a `SharedClock` with it: time
then moves only when the kit has read everything the shoe sent, the shoe has read everything the
kit sent and has done all it had to do at the present instant, and only as far as the next thing
either side waits for (the kit's deadline, the shoe's next heartbeat, resend or holdoff). Each
frame is then read at the very instant the shoe sent it, so a verdict on resend timing is the same
on a quiet machine and on one loaded with ten other jobs: the firmware bugs the kit must catch are
still caught, and a correct shoe is never failed for a thread that was not scheduled in time.

Both sides tell the clock what they did (bytes written and read, going idle); a `WallClock`
ignores it.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

#: How long (real seconds) a shared clock waits for a side that does not settle before it lets
#: time pass all the same: a backstop for a shoe that hung, never reached by a working one.
PATIENCE_S = 60.0
SEND_S = 1e-6

T = TypeVar("T")


class WallClock:
    """Real time: what a real shoe is judged on, and what a simulated shoe keeps on its own."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    # ---- the kit's side (the host): nothing to do on real time
    def host_open(self, opener: Callable[[], T]) -> T:
        """Open the host's port with `opener`."""
        return opener()

    def host_closed(self) -> None:
        pass

    def host_wrote(self, count: int) -> None:
        pass

    def host_read(self, count: int) -> None:
        pass

    def let_pass(self, until: float) -> None:
        """The host has nothing to read now and waits for time `until`. On real time its port's
        read timeout is the wait."""

    # ---- the simulated shoe's side
    def attach(self, wake: Callable[[], None]) -> None:
        pass

    def shoe_wait(self, now: float, due: float) -> float | None:
        """The shoe's I/O thread, at `now`, has nothing to do before `due`: how long its select
        may block (None: until it is woken)."""
        return max(0.0, due - now)

    def shoe_woke(self) -> None:
        pass

    def shoe_write(self, fd: int, chunk: bytes) -> int:
        """Write `chunk` to the shoe's side of the line; how many bytes went."""
        return os.write(fd, chunk)

    def shoe_read(self, count: int) -> None:
        pass


class SharedClock(WallClock):
    """Virtual time shared by one simulated shoe and the kit checking it (see the module's text).
    The kit's host moves it (`let_pass`, `sleep`); the shoe's thread only reads it."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._changed = threading.Condition()
        self._wake: Callable[[], None] = lambda: None
        self._shoe_idle_at: float | None = None  # the instant the shoe went idle at, if idle
        self._shoe_due = math.inf
        self._shoe_wrote = self._host_read = 0
        self._host_wrote = self._shoe_read = 0
        self._host_open = False
        self._stuck_at, self._stuck_since = start, time.monotonic()

    def now(self) -> float:
        with self._changed:
            return self._now

    def _settled(self) -> bool:
        return (
            self._shoe_idle_at == self._now
            and self._shoe_read >= self._host_wrote
            and (not self._host_open or self._host_read >= self._shoe_wrote)
        )

    def _advance(self, until: float, patience_end: float) -> bool:
        """Move to the next instant either side waits for, at most `until`, once both sides have
        settled (waiting up to 5 ms for the shoe); False if they have not settled yet."""
        with self._changed:
            if self._now >= until:
                return True
            self._changed.wait_for(self._settled, 0.005)
            if not self._settled() and time.monotonic() < patience_end:
                return False
            self._now = min(until, self._shoe_due) if self._settled() else until
        self._wake()
        return True

    def sleep(self, seconds: float) -> None:
        end = self.now() + seconds
        patience_end = time.monotonic() + PATIENCE_S
        while self.now() < end:
            if self._advance(end, patience_end):
                patience_end = time.monotonic() + PATIENCE_S

    # ---- the kit's side
    def host_open(self, opener: Callable[[], T]) -> T:
        # Opening the port flushes what the shoe sent before (pyserial resets the input): the
        # shoe writes nothing meanwhile, and what it wrote before counts as gone.
        with self._changed:
            port = opener()
            self._host_open, self._host_read = True, self._shoe_wrote
            self._changed.notify_all()
        return port

    def host_closed(self) -> None:
        with self._changed:
            self._host_open = False
            self._changed.notify_all()

    def host_wrote(self, count: int) -> None:
        # Sending takes the host a microsecond (a byte at 115200 baud takes 87): what it read
        # before it sent is stamped earlier than the send, as it would be on real time.
        with self._changed:
            self._host_wrote += count
            self._now += SEND_S
        self._wake()

    def host_read(self, count: int) -> None:
        with self._changed:
            self._host_read += count
            self._changed.notify_all()

    def let_pass(self, until: float) -> None:
        self._advance(until, self._patience_end())

    def _patience_end(self) -> float:
        # let_pass is called in a loop by the host's pump: the backstop counts from the first call
        # at this instant, so a shoe that never settles holds time back for PATIENCE_S at most.
        with self._changed:
            if self._stuck_at != self._now:
                self._stuck_at, self._stuck_since = self._now, time.monotonic()
            return self._stuck_since + PATIENCE_S

    # ---- the simulated shoe's side
    def attach(self, wake: Callable[[], None]) -> None:
        self._wake = wake

    def shoe_wait(self, now: float, due: float) -> float | None:
        with self._changed:
            if due <= now or now != self._now:
                return 0.0  # due already, or time moved on meanwhile: look again
            self._shoe_idle_at, self._shoe_due = now, due
            self._changed.notify_all()
        return None

    def shoe_woke(self) -> None:
        with self._changed:
            self._shoe_idle_at = None

    def shoe_write(self, fd: int, chunk: bytes) -> int:
        with self._changed:
            if not self._host_open:
                return len(chunk)  # nobody listens: lost, as the host's port would flush it
            written = os.write(fd, chunk)
            self._shoe_wrote += written
            return written

    def shoe_read(self, count: int) -> None:
        with self._changed:
            self._shoe_read += count
            self._changed.notify_all()
