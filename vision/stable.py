"""A stable scene: a zone's reading counts only once it has been the same for N frames.

Chips are being pushed, stacked and paid all the time; the table must act on what has settled,
not on a frame caught mid-movement. A zone's value is reported after `frames` identical readings
in a row; any change starts the count again, and until it settles the zone is "settling". A
blocked view (a hand) is reported at once: the table must know the zone cannot be seen now, and
the value it had before the hand came is not vouched for any more. Pucks settle the same way.
A moved camera is passed on at once.

    scene = StableScene(frames=3)
    for frame in camera:
        stable = scene.update(reader.read(frame))
        stable.zones["seat3.first"].value     # None until 3 equal readings in a row
"""

from __future__ import annotations

from dataclasses import dataclass

from vision.reader import FrameReading, ZoneReading

SETTLING = ZoneReading.unsure("settling: the reading has not been the same for enough frames yet")


@dataclass(frozen=True)
class StableReading:
    """The settled view of the table; `zones` holds every zone the reader reports."""

    zones: dict[str, ZoneReading]
    pucks: dict[str, str | None]  # only pucks whose place has settled
    bumped: bool


class StableScene:
    """Holds the last readings of each zone and says which have settled."""

    def __init__(self, frames: int = 3) -> None:
        if not 1 <= frames <= 100:
            raise ValueError(f"frames must be from 1 to 100, not {frames!r}")
        self.frames = frames
        self._zone_runs: dict[str, tuple[ZoneReading, int]] = {}
        self._puck_runs: dict[str, tuple[str | None, int]] = {}

    def update(self, reading: FrameReading) -> StableReading:
        zones: dict[str, ZoneReading] = {}
        for name, seen in reading.zones.items():
            last, run = self._zone_runs.get(name, (None, 0))
            run = run + 1 if last is not None and _same(last, seen) else 1
            self._zone_runs[name] = (seen, run)
            if seen.state == "blocked" or reading.bumped or run >= self.frames:
                zones[name] = seen
            else:
                zones[name] = SETTLING
        pucks: dict[str, str | None] = {}
        for name in set(self._puck_runs) | set(reading.pucks):
            where = reading.pucks.get(name, _UNSEEN)
            last_where, run = self._puck_runs.get(name, (_UNSEEN, 0))
            run = run + 1 if where == last_where else 1
            self._puck_runs[name] = (where, run)
            if where != _UNSEEN and run >= self.frames:
                pucks[name] = where
        return StableReading(zones, pucks, reading.bumped)

    def reset(self) -> None:
        """Forget everything (after a recalibration, say)."""
        self._zone_runs.clear()
        self._puck_runs.clear()


_UNSEEN = "\0unseen"


def _same(a: ZoneReading, b: ZoneReading) -> bool:
    return a.state == b.state and a.value == b.value and a.stacks == b.stacks
