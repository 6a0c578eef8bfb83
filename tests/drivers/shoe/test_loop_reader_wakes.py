"""The shoe read on the table's loop (drivers/shoe/loop_reader.py) wakes the loop for its timer only
at a deadline that has come: while the shoe talks (its heartbeats) every wake is for its bytes, so an
idle table costs the Pi one wake a heartbeat and nothing more; a shoe that falls silent is still a
fault at its deadline, and heard again, cleared."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from drivers.shoe.events import FaultCleared, FaultKind, ShoeFault
from drivers.shoe.loop_reader import LoopShoeReader
from tests.drivers.shoe.conftest import FAST_READER, WAIT, EventLog

HEARTBEATS = 40  # at 0.02 s: 0.8 s of the shoe talking, past the heartbeat timeout twice
TIMEOUT_S = 0.3


class Watched(LoopShoeReader):
    """A loop reader that records, at each wake of its timer, whether a deadline of the link's had
    come (the link's `due()` against the clock), and counts the reads of the shoe's bytes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timer_wakes: list[bool] = []
        self.reads = 0
        self.read_enough = threading.Event()

    def _due(self) -> None:
        due = self._link.due()
        self.timer_wakes.append(due is not None and due <= self._loop.time())
        super()._due()

    def _readable(self) -> None:
        self.reads += 1
        if self.reads >= HEARTBEATS:
            self.read_enough.set()
        super()._readable()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, name="table-loop", daemon=True)
    runner.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    runner.join(WAIT)
    loop.close()


def test_a_talking_shoe_wakes_the_loop_for_no_timer_and_a_silent_one_is_still_a_fault(
    make_shoe: Any, link: str, log: EventLog, loop: asyncio.AbstractEventLoop
) -> None:
    shoe = make_shoe(heartbeat_interval=0.02)
    reader = Watched(link, log, loop=loop, **{**FAST_READER, "heartbeat_timeout": TIMEOUT_S})
    reader.start()
    try:
        assert reader.read_enough.wait(WAIT), "the shoe's heartbeats never came"
        # Every wake of the timer so far was at a deadline that had come (the HELLO_REQUEST's before
        # the shoe's HELLO), none at a silence deadline the heartbeats had moved on.
        assert all(reader.timer_wakes), reader.timer_wakes

        shoe.fault("silent")
        log.wait_for(lambda ev: any(isinstance(e, ShoeFault) and e.kind is FaultKind.SILENT for e in ev))
        fault = next(e for e in log.events if isinstance(e, ShoeFault) and e.kind is FaultKind.SILENT)
        assert f"has been silent for {TIMEOUT_S:.1f} s" in fault.message
        assert all(reader.timer_wakes), reader.timer_wakes
        shoe.clear()
        log.wait_for(lambda ev: any(isinstance(e, FaultCleared) and e.kind is FaultKind.SILENT for e in ev))
    finally:
        reader.stop()
