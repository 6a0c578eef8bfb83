"""Fixtures for the lamp and button tests: the simulated pin factory and a fake clock.

Nothing here is autouse: other driver tests in this directory are unaffected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from drivers.pins import make_pin_factory


class FakeClock:
    """A monotonic clock that only moves when a test moves it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def pin_factory() -> Iterator[Any]:
    """The factory simulated mode uses; reset afterwards (MockFactory keeps pins otherwise)."""
    factory = make_pin_factory(simulated=True)
    yield factory
    factory.reset()
    factory.close()
