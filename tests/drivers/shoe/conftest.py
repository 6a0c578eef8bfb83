"""Fixtures for the shoe tests: a simulated shoe on a pty, a reader on it, an event log.

Timings are short so the whole set runs in seconds; every wait is for an event, with a generous
backstop (WAIT); every fixture
closes its threads and file descriptors, and the `no_leaks` check proves it after each test.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from drivers.shoe.events import CardRead, DriverEvent
from drivers.shoe.loop_reader import LoopShoeReader
from drivers.shoe.serial_backend import ShoeReader
from drivers.shoe.simulated import SimulatedShoe

# The backstop of every wait: each waits for its event (a card, an ACK, a fault) and this long only
# if it never comes. A healthy run takes a small fraction of a second; a CI machine shared at a
# load of 10-20 on 2 cores may take seconds.
WAIT = 60.0

FAST_SHOE: dict[str, Any] = {"heartbeat_interval": 0.05, "retransmit_interval": 0.05}
FAST_READER: dict[str, Any] = {
    "heartbeat_timeout": 0.4,
    "hello_interval": 0.1,
    "reconnect_delay": (0.02, 0.1),
    "poll_interval": 0.01,
}


class EventLog:
    """Collects the driver's events (as the table would) and lets a test wait for one."""

    def __init__(self) -> None:
        self.events: list[DriverEvent] = []
        self._changed = threading.Condition()

    def __call__(self, event: DriverEvent) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def wait_for(self, test: Callable[[list[DriverEvent]], bool], timeout: float = WAIT) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: test(self.events), timeout):
                raise AssertionError(f"waited {timeout} s; events so far: {self.events}")

    def of(self, kind: type) -> list[Any]:
        with self._changed:
            return [e for e in self.events if isinstance(e, kind)]

    def cards(self) -> list[str]:
        return [str(e.card) for e in self.of(CardRead)]

    def wait_cards(self, n: int, timeout: float = WAIT) -> list[str]:
        self.wait_for(lambda ev: sum(isinstance(e, CardRead) for e in ev) >= n, timeout)
        return self.cards()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture(autouse=True)
def no_leaks() -> Iterator[None]:
    """Fail a test that leaves a shoe thread running or a file descriptor open."""
    fds = _open_fds()
    yield
    names = [t.name for t in threading.enumerate() if t.name.startswith(("shoe-", "simulated"))]
    assert not names, f"threads left running: {names}"
    leaked = _open_fds() - fds
    # The listing itself briefly opens one descriptor; anything else left open is a leak.
    assert len(leaked) <= 1, f"file descriptors left open: {sorted(leaked)}"


@pytest.fixture
def link(tmp_path: Path) -> str:
    return str(tmp_path / "shoe")


@pytest.fixture
def log() -> EventLog:
    return EventLog()


@pytest.fixture
def make_shoe(link: str, request: pytest.FixtureRequest) -> Iterator[Callable[..., SimulatedShoe]]:
    shoes: list[SimulatedShoe] = []
    request.node._shoes = shoes  # for the failure report below

    def make(*cards: Any, **options: Any) -> SimulatedShoe:
        shoe = SimulatedShoe(*cards, **{"link": link, **FAST_SHOE, **options})
        shoes.append(shoe)
        shoe.start()
        return shoe

    yield make
    for shoe in shoes:
        shoe.stop()


@pytest.fixture(params=["thread", "loop"])
def make_reader(link: str, log: EventLog, request: pytest.FixtureRequest) -> Iterator[Callable[..., ShoeReader]]:
    """The reader the test makes: the threaded one, and the one on an asyncio loop (the daemon's,
    drivers/shoe/loop_reader.py: here the loop runs in a thread of its own, as the table's would)."""
    readers: list[ShoeReader] = []
    loop: asyncio.AbstractEventLoop | None = None
    runner: threading.Thread | None = None
    if request.param == "loop":
        loop = asyncio.new_event_loop()
        runner = threading.Thread(target=loop.run_forever, name="table-loop", daemon=True)
        runner.start()

    def make(**options: Any) -> ShoeReader:
        settings = {"url": link, "on_event": log, **FAST_READER, **options}
        reader = ShoeReader(**settings) if loop is None else LoopShoeReader(loop=loop, **settings)
        readers.append(reader)
        reader.start()
        return reader

    yield make
    for reader in readers:
        reader.stop()
    if loop is not None and runner is not None:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(WAIT)
        loop.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On a failure, print the simulated shoe's history: what it sent and heard, in order."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed and call.when == "call":
        for shoe in getattr(item, "_shoes", []):
            lines = "\n".join(f"{r.at:.3f} {r.what}" for r in shoe.history[-80:])
            report.sections.append(("simulated shoe history", lines))
