"""The blinker: plays one pattern per lamp against one clock and writes frames to the sinks.

All lamps share one clock, so two blinking lamps blink in step on GPIO and on the shift-register
chain alike. `tick()` renders the frame for "now" and returns when the next change is due; the
background thread is nothing more than `tick()` then sleep until that moment (or until a new
pattern arrives). Tests pass a fake clock, never start the thread, and call `tick()` at each
deadline, so every pattern is checked step by step without sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from drivers.indicators.patterns import DARK, Pattern
from drivers.indicators.sinks import LampId, LedSink

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class Blinker:
    """Owns every lamp's current pattern and when it started; renders frames on demand."""

    def __init__(self, lamps: Iterable[LampId], sinks: Sequence[LedSink], *, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._sinks = tuple(sinks)
        now = self._now_ms()
        self._playing: dict[LampId, tuple[Pattern, int]] = {lamp: (DARK, now) for lamp in lamps}
        # The same, split: the lamps whose pattern has no steps (dark or steady: one level, never a
        # change) by their level, and the others. A frame asks only the others what they show now
        # and when they change next (most of a table's lamps are dark or steady).
        self._still: dict[LampId, bool] = {lamp: DARK.then for lamp in self._playing}
        self._moving: dict[LampId, tuple[Pattern, int]] = {}
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._stopping = False
        # When the thread's sleep ends (inf: until woken), while it sleeps; None while it runs.
        self._sleeping_until: float | None = None
        self.last_error: str | None = None
        # Or run by an asyncio loop's timers (`run_on`): the loop, its thread, the timer set.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._timer: asyncio.TimerHandle | None = None

    def _now_ms(self) -> int:
        return round(self._clock() * 1000)

    def play(self, lamp: LampId, pattern: Pattern) -> None:
        """Start `pattern` on `lamp` now (a lamp not in the map is a caller's mistake)."""
        with self._lock:
            if lamp not in self._playing:
                raise KeyError(f"no lamp {lamp!r} in this pin map")
            self._playing[lamp] = playing = (pattern, self._now_ms())
            if pattern.steps:
                self._still.pop(lamp, None)
                self._moving[lamp] = playing
            else:
                self._moving.pop(lamp, None)
                self._still[lamp] = pattern.then

    def held(self) -> contextlib.AbstractContextManager[bool]:
        """No frame is written by the thread meanwhile (several patterns started together show
        together, never some of them on a frame of the thread's): `with blinker.held():`, the
        blinker's own lock (no generator made and run on every card's frame)."""
        return self._lock

    def pattern_of(self, lamp: LampId) -> Pattern:
        with self._lock:
            return self._playing[lamp][0]

    def tick(self, *, force: bool = False) -> float | None:
        """Write the frame for now to every sink; return the clock time of the next change."""
        with self._lock:
            now = self._now_ms()
            moving = self._moving
            frame = dict(self._still)
            for lamp, (pattern, started) in moving.items():
                frame[lamp] = pattern.lit_at(now - started)
            for sink in self._sinks:
                sink.write(frame, force=force)
            deadlines = [
                started + due
                for pattern, started in moving.values()
                if (due := pattern.next_change(now - started)) is not None
            ]
            next_at = min(deadlines) / 1000 if deadlines else None
            # The thread sleeps until its next change: woken only when one now comes sooner (a
            # tick at the time it wakes renders whatever else changed meanwhile).
            sleeping = self._sleeping_until
            if sleeping is not None and next_at is not None and next_at < sleeping:
                self._wake.notify_all()
            if self._loop is not None and next_at is not None:
                self._arm(next_at)
            return next_at

    def run_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run `tick()` at every change by `loop`'s timers, not a thread of its own (the table's
        loop, which gives every lamp command: a new pattern sooner than the timer set moves the
        timer, with no other thread to wake). The clock must be the loop's (time.monotonic)."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError("the blinker already runs in its thread")
            self._loop, self._stopping = loop, False
            loop.call_soon_threadsafe(self._on_loop)

    def _on_loop(self) -> None:
        with self._lock:
            self._loop_thread = threading.get_ident()
            if not self._stopping:
                self._loop_tick()

    def _arm(self, at: float) -> None:
        # Under the lock. A timer set at or before `at` stays (it ticks then, and sets the next).
        loop = self._loop
        assert loop is not None
        if threading.get_ident() != self._loop_thread:
            loop.call_soon_threadsafe(self._on_loop)  # a command from another thread: the loop ticks
            return
        timer = self._timer
        if timer is not None and not timer.cancelled() and timer.when() <= at:
            return
        if timer is not None:
            timer.cancel()
        self._timer = loop.call_at(at, self._loop_tick)

    def _loop_tick(self) -> None:
        with self._lock:
            self._timer = None
            if self._stopping or self._loop is None:
                return
            try:
                self.tick()
            except Exception as exc:
                self.last_error = f"lamp output failed: {exc}"
                log.exception("lamp output failed; retrying in 1 s")
                self._timer = self._loop.call_at(self._clock() + 1.0, self._loop_tick)
            else:
                self.last_error = None

    def start(self) -> None:
        """Run `tick()` in a daemon thread at every change until `stop()`."""
        with self._lock:
            if self._thread is not None:
                return
            if self._loop is not None:
                raise RuntimeError("the blinker already runs on an asyncio loop")
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="lamp-blinker", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            self._stopping = True
            self._wake.notify_all()
            timer, self._timer = self._timer, None
            loop, self._loop = self._loop, None
            if timer is not None and loop is not None and not loop.is_closed():
                if threading.get_ident() == self._loop_thread or not loop.is_running():
                    timer.cancel()
                else:
                    loop.call_soon_threadsafe(timer.cancel)
        if thread is not None:
            thread.join(timeout=2)

    def _run(self) -> None:
        with self._lock:
            while not self._stopping:
                try:
                    deadline = self.tick()
                except Exception as exc:
                    # A GPIO write failed (a lamp board unplugged, a pin claimed elsewhere).
                    # Keep the thread alive and retry; the status is readable as last_error.
                    self.last_error = f"lamp output failed: {exc}"
                    log.exception("lamp output failed; retrying in 1 s")
                    deadline = self._clock() + 1.0
                else:
                    self.last_error = None
                timeout = None if deadline is None else max(deadline - self._clock(), 0.001)
                # tick() from another thread notifies when a new pattern's change comes sooner.
                self._sleeping_until = float("inf") if timeout is None else self._clock() + timeout
                self._wake.wait(timeout)
                self._sleeping_until = None
