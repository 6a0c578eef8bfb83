"""WagerFusion: a zone's value decided from the frames since its wager last changed, never from one.

A wager sits on the felt for seconds in front of a camera that reads it 30 times a second; one
frame's reading may be "unsure" (a JPEG block, the noise on a chip's edge) where the next is
sure. The reader keeps a zone's reading while its patch of felt looks the same (vision/reader.py),
so a still wager is read once; fusing asks it (`Reader.reread`) to read the zone afresh on later
frames until enough independent readings agree: every zone last read as bare felt (cheap) and
two zones with chips a frame (`rereads`: with 4 a frame, reading, fusing and the health took a
half-table camera at 1280x720 to 27-30 ms a frame, 41-44 ms at the 90th percentile; with 2, 18
and 27; with 1, 13-18 and 20-27). Two: a segment of a dozen wagers put down at once is read
about 5 times each within a second, not 2 or 3, and a frame's 33 ms still holds.

Per zone, a **segment** is the frames since the wager last changed: it starts when the reader
reads the zone afresh because its patch changed (chips placed, taken, a hand gone; every zone at
a start, a bump or a change of light), and ends at the next such change. Over a segment's
readings (the first and each asked-for one: a reading kept from memory is not a new frame):

- a hand or an arm over it ("blocked") is passed on at once, as the reader says it;
- two different values among its "ok" readings: "unsure", naming both ("the frames disagree:
  25 in 3 frames, 30 in 1"), until the wager changes again; a disagreement is never settled by
  a majority;
- `agree` (2) or more "ok" readings of one value and no other, that are also at least `share`
  (a quarter) of the readings that saw the wager ("ok" or "unsure"; a hand over it is no
  reading): "ok" with that value, and `frames` says how many readings agree (more frames, more
  confidence). A value the reader reads on 2 frames of 14 and cannot count on the other 12 is
  noise pushing a doubtful measure over a threshold now and then, not the wager's value (issue
  36, fifth round: three 100s read 400 so, JPEG 75 + noise 6 + vignette, tuning seed 6): it stays
  "settling: only 2 of the 14 frames that saw it read 400 ..." while more frames are read;
- otherwise "unsure": the reader's last reason, or "settling: 1 of 2 frames read" while the
  readings are being gathered. "unsure" readings between sure ones add no value and take
  none away; they only count among the readings the agreeing ones must be a share of.

Issue 36's sixth round also averaged each still wager's pixels over its frames and read the mean
with a second reader (vision/pixelmean.py, `WagerFusion(pixels=True)`): off by default, never
passed frames by the table's camera feed, it added no wager under any goal condition on the
held-out scenes (vision/README.md has the figures) and was removed; its code can be read at 550b5d6.

A segment is read afresh at most `window` times (30: a second of frames); a zone still undecided
then stays "unsure" (with the reader's reason) until its wager changes. `combine` fuses the
views of two cameras: where both see a zone and both are sure, they must agree, else "unsure"
with both values; one camera sure and the other not gives the sure one's value only when the
other could not see the wager (a hand over it, no readable frame); one that saw it and is unsure
keeps the zone "unsure", a disagreement when it read another value on some frame, unless its own
evidence agrees positively (`confirms`: vision/join.py's two facing views, issue 36's tenth round).

    fusion = WagerFusion()
    for frame in camera:
        reading = reader.read(frame)
        fused = fusion.update(reader, reading)    # asks the reader to re-read some zones next frame
        fused["seat3.first"]                        # FusedZone(state, value, frames, why)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from vision.readings import FrameReading, ZoneReading

SETTLING = "settling"  # the start of the reason of a zone whose readings are still being gathered
SHARE = 0.25  # the share of a wager's readable frames that must agree on its value (see `WagerFusion`)


class Rereads(Protocol):
    """What fusing asks of a reader (vision/reader.py's `Reader`): which zones the last frame
    read afresh and why, and to read some afresh on the next frame."""

    @property
    def afresh(self) -> Mapping[str, str]: ...

    def reread(self, zones: Iterable[str]) -> None: ...


@dataclass(frozen=True)
class FusedZone:
    """A zone's wager as fused over its frames: "ok" (value in chip units, 0 when empty, and how
    many readings agree), "blocked" or "unsure" (no value; `why` says why)."""

    state: str
    value: int | None = None
    frames: int = 0
    why: str = ""
    # what `combine` weighs when another camera is sure: the values read "ok" on frames of the
    # segment (most read first), and how many readings saw the wager on a frame whose camera
    # check held (0: the camera could not see it, a hand over it or no readable frame)
    candidates: tuple[int, ...] = field(default=(), compare=False)
    readable: int = field(default=0, compare=False)

    @property
    def settling(self) -> bool:
        return self.state == "unsure" and self.why.startswith(SETTLING)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state, "value": self.value, "frames": self.frames}
        if self.why:
            out["why"] = self.why
        return out


@dataclass
class _Segment:
    """The readings of one zone since its wager last changed."""

    values: Counter[int] = field(default_factory=Counter)
    reads: int = 0
    seen: int = 0  # readings afresh that saw the wager ("ok" or "unsure"; not a hand over it)
    last: ZoneReading | None = None
    read_at: int = 0  # the frame it was last read afresh on
    readable: int = 0  # readings afresh that saw the wager on a frame whose camera check held


class WagerFusion:
    """Fuses one camera's readings zone by zone (see the module's docstring)."""

    def __init__(self, agree: int = 2, window: int = 30, rereads: int = 2, share: float = SHARE) -> None:
        if agree < 2:
            raise ValueError(f"agree = {agree}: a value needs at least 2 frames that agree")
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share = {share}: a share of the frames is between 0 and 1")
        self.agree = agree
        self.share = share
        self.window = window
        self.rereads = rereads
        self._segments: dict[str, _Segment] = {}
        self._frame = 0
        self.asked: list[str] = []  # the zones asked to be read afresh on the next frame

    def reset(self) -> None:
        self._segments.clear()

    def update(self, reader: Rereads, reading: FrameReading) -> dict[str, FusedZone]:
        """The fused view after `reader` read a frame into `reading`; asks `reader` to read the
        undecided zones afresh on the next frame: every one whose felt was read bare (cheap), and
        `rereads` of those with chips or doubts: those with a value read once first, then those
        read longest ago."""
        self._frame += 1
        if reading.bumped:
            self._segments.clear()
        out: dict[str, FusedZone] = {}
        undecided: list[tuple[int, int, str]] = []  # zones with chips (or doubts)
        empty: list[str] = []
        for name, seen in reading.zones.items():
            why = reader.afresh.get(name)
            segment = self._segments.get(name)
            if segment is None or why == "changed":
                segment = self._segments[name] = _Segment()
            if why is not None:  # read afresh on this frame: a new, independent reading
                segment.reads += 1
                segment.read_at = self._frame
                segment.last = seen
                if seen.state != "blocked":
                    segment.seen += 1
                    if reading.camera.verified and not reading.camera.bumped:
                        segment.readable += 1
                if seen.state == "ok":
                    segment.values[int(seen.value or 0)] += 1
            fused = self._fused(segment, seen)
            if segment.values or segment.readable:
                candidates = tuple(value for value, _ in segment.values.most_common())
                fused = replace(fused, candidates=candidates, readable=segment.readable)
            out[name] = fused
            if fused.settling and not reading.bumped:
                if segment.values.get(0) or (
                    segment.last is not None and segment.last.state == "ok" and not segment.last.value
                ):
                    empty.append(name)  # the bare felt: cheap to read again, every frame
                else:
                    # a zone one agreeing frame from a value first, then those read longest ago
                    undecided.append((0 if segment.values else 1, segment.read_at, name))
        undecided.sort()
        self.asked = [*empty, *(name for _, _, name in undecided[: self.rereads])]
        reader.reread(self.asked)
        return out

    def _fused(self, segment: _Segment, seen: ZoneReading) -> FusedZone:
        if seen.state == "blocked":
            return FusedZone("blocked", why=seen.why)
        if segment.reads == 0:  # never read afresh (out of the camera's view): as the reader says
            return FusedZone("unsure", why=seen.why or "not read")
        if len(segment.values) >= 2:
            said = ", ".join(f"{value} in {n} frame{'s' if n > 1 else ''}" for value, n in segment.values.most_common())
            return FusedZone("unsure", why=f"the frames disagree: {said}")
        last = segment.last or seen
        if segment.values:
            ((value, n),) = segment.values.items()
            if n >= self.agree and n >= self.share * segment.seen:
                return FusedZone("ok", value, n)
            if n >= self.agree:  # agreeing frames, but too few of those that saw the wager: chance
                few = (
                    f"only {n} of the {segment.seen} frames that saw it read {value} "
                    f"(a value needs {self.share:.0%} of them)"
                )
                if segment.reads >= self.window:
                    return FusedZone("unsure", why=few)
                return FusedZone("unsure", why=f"{SETTLING}: {few}")
        if segment.reads >= self.window:  # a second of frames and still undecided: as the reader says
            return FusedZone("unsure", why=last.why or f"{self.window} frames and no value read twice")
        agreed = max(segment.values.values(), default=0)
        doubt = f": the last frame: {last.why}" if last.state == "unsure" and last.why else ""
        return FusedZone("unsure", why=f"{SETTLING}: {agreed} of {self.agree} frames agree{doubt}")


def combine(
    views: Mapping[str, Mapping[str, FusedZone]], confirms: Callable[[str, str, int], bool] | None = None
) -> dict[str, FusedZone]:
    """One view of the table from several cameras' fused views (camera name -> zones): a zone
    seen by one camera is that camera's; seen by several, the sure ones must agree, and a camera
    that is not sure lets their value stand only when it could not see the wager at all (a hand
    over it, no readable frame: `FusedZone.readable` 0). One that saw it and read another value
    on some frame disagrees ("unsure: the cameras disagree: the dealer camera 1500, the across
    camera unsure, 1000 on some frames"); one that saw it and could not read it is no agreement
    either ("unsure: the across camera cannot confirm the dealer camera's 1500: ..."). Issue 36's
    eighth round: a camera sure of a wrong value while the other, unsure, had read the right one
    was taken. A zone no camera is sure of is the first camera's reading (blocked before unsure).

    `confirms(camera, zone, value)` (vision/join.py's two facing views): the unsure camera's own
    evidence of the stack since the wager changed agrees with the sure cameras' chips, positively
    (the joined count held in it and every chip it could name is theirs, on at least two readings,
    none naming another): then it no longer keeps the zone unsure (issue 36, tenth round)."""
    out: dict[str, FusedZone] = {}
    names = sorted({zone for zones in views.values() for zone in zones})
    for zone in names:
        seen = {camera: zones[zone] for camera, zones in views.items() if zone in zones}
        sure = {camera: z for camera, z in seen.items() if z.state == "ok"}
        values = {z.value for z in sure.values()}
        if len(values) > 1:
            said = ", ".join(f"the {camera} camera {z.value}" for camera, z in sorted(sure.items()))
            out[zone] = FusedZone("unsure", why=f"the cameras disagree: {said}")
        elif sure:
            value = next(iter(values))
            doubting = {c: z for c, z in seen.items() if z.state == "unsure" and z.readable}
            other = {c: z for c, z in doubting.items() if any(v != value for v in z.candidates)}
            said = " and ".join(f"the {camera} camera" for camera in sorted(sure))
            if other:
                read = ", ".join(
                    f"the {c} camera unsure, {' or '.join(str(v) for v in z.candidates if v != value)} on some frames"
                    for c, z in sorted(other.items())
                )
                out[zone] = FusedZone("unsure", why=f"the cameras disagree: {said} {value}, {read}")
            elif doubting and not (confirms and value is not None and all(confirms(c, zone, value) for c in doubting)):
                c, z = sorted(doubting.items())[0]
                out[zone] = FusedZone("unsure", why=f"the {c} camera cannot confirm {said}'s {value}: {z.why}")
            else:
                out[zone] = FusedZone("ok", value, sum(z.frames for z in sure.values()))
        else:
            blocked = [z for z in seen.values() if z.state == "blocked"]
            out[zone] = blocked[0] if blocked else next(iter(seen.values()))
    return out
