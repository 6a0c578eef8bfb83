"""Lamp patterns: what one lamp does over time, as a list of (lit, milliseconds) steps.

A pattern is data, not a thread: `lit_at(elapsed_ms)` says whether the lamp is lit that long
after the pattern started, and `next_change(elapsed_ms)` says when it will next change. The
blinker plays patterns against a clock; tests play them step by step without sleeping.
Durations are whole milliseconds so that step boundaries are exact (no float drift, no busy
loop at a boundary). hardware/wiring.md shows the dealer what each pattern means.

    >>> NEXT_CARD.lit_at(0), NEXT_CARD.lit_at(400), NEXT_CARD.lit_at(800)
    (False, True, False)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    """Steps of (lit, ms), played once (then held at `then`) or repeated forever."""

    name: str
    steps: tuple[tuple[bool, int], ...] = ()
    repeat: bool = False
    then: bool = False

    def __post_init__(self) -> None:
        if any(ms <= 0 for _, ms in self.steps):
            raise ValueError(f"pattern {self.name}: every step must last at least 1 ms")
        if self.repeat and not self.steps:
            raise ValueError(f"pattern {self.name}: a repeating pattern needs steps")

    @property
    def length_ms(self) -> int:
        return sum(ms for _, ms in self.steps)

    def lit_at(self, elapsed_ms: int) -> bool:
        """Whether the lamp is lit `elapsed_ms` after the pattern started."""
        if elapsed_ms < 0:
            elapsed_ms = 0
        if self.repeat:
            elapsed_ms %= self.length_ms
        for lit, ms in self.steps:
            if elapsed_ms < ms:
                return lit
            elapsed_ms -= ms
        return self.then

    def next_change(self, elapsed_ms: int) -> int | None:
        """Milliseconds after the start at which the next step begins; None once steady."""
        elapsed_ms = max(elapsed_ms, 0)
        offset = 0
        if self.repeat:
            offset = elapsed_ms - elapsed_ms % self.length_ms
            elapsed_ms -= offset
        boundary = 0
        for _, ms in self.steps:
            boundary += ms
            if elapsed_ms < boundary:
                return offset + boundary
        return None


def _times(count: int, *steps: tuple[bool, int]) -> tuple[tuple[bool, int], ...]:
    return tuple(steps) * count


DARK = Pattern("dark")
"""No wager on this base."""

STEADY = Pattern("steady", then=True)
"""A wager stands here (on home plate: it scored and waits to be paid). Status lamp: ready."""

# Starts dark so that a lamp that was steady changes at once when the card is owed to it.
NEXT_CARD = Pattern("next card", ((False, 400), (True, 400)), repeat=True)
"""Slow blink, 1.25 per second: the next card out of the shoe goes to this base."""

SCORED = Pattern("scored", _times(5, (False, 100), (True, 100)), then=True)
"""Five rapid flashes on home plate, then steady: the wager scored and waits to be paid."""

OUT = Pattern("out", _times(2, (False, 300), (True, 900)), then=False)
"""Two long pulses, then dark: the wager on this base is out and lost."""

FAULT = Pattern("fault", ((True, 100), (False, 100)), repeat=True)
"""Status lamp fast blink, 5 per second: play is stopped, read the dealer screen."""
