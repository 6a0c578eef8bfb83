"""Two facing views of one half of the table: their counts joined zone by zone (issue 36, ninth round).

The across mount (vision/layout.py's `MOUNTS["across"]`) puts over each half of the table the
dealer's camera and one across the table facing it, both reading the same layout. A stack's top
pushed d mm away from one camera (a sloppy or leaning stack) is pushed d mm toward the other: it
reads d / tan(from vertical) mm taller to the first and as much shorter to the second, which one
view cannot tell from a taller stack. So the two views' counts before rounding, e1 and e2, each
weighed by the other's chips a mm (c = 1 / (3.3 mm tan(from vertical)), from where each camera
stands: `ViewCount.per_mm`, geometry, nothing fitted), give

    joined = (c2 e1 + c1 e2) / (c1 + c2)

free of the push (issue 36's eighth round, tuning seeds 0-11: counts within 0.3 chip of the
truth under sloppy 1 mm 66% -> 100%, leaning 0.2 mm a chip 70% -> 100%). The joined count decides
the height in both views (`Reader.join`); the stages after it (the outline, the not-square
checks, the colours) run in each view as they do for one, and the two views' values are fused
each by its own `WagerFusion` and joined by `combine`: the colours named in both must agree.

Per zone, each view's counts are kept over the frames since the wager last changed in either
view (a "changed" reading in either, or a bump, starts again, and the other view's reading of
that frame is not kept unless it saw the change too: a count from before a change is never joined
with one from after it), averaged; the join is made once both views have measured
the stack. A zone the other view read but could not measure (a nearer stack hides it there, its
outline was not one stack, something covers it there) is counted by this view alone, as one
camera counts; one the other view has not read yet
waits ("unsure: waiting for the other camera's count of this stack"), and that view is asked to
read it afresh on the next frame. A zone one view alone sees
is that view's, as `combine` gives it. The join is arithmetic on a few numbers a zone.

With the counts, each view's namings of the stack by the joined count are kept over the same
frames (`stages.possible`: what each chip could be, by the margins `check_colours` asks), and the
chips of its sure readings. A view that saw the wager and could not read it confirms the other
view's sure value (`CountJoin.confirms`, handed to `combine`) only on positive evidence: at least
two of its readings named the stack with the joined count, every chip as something it could be
the other's chips, and none could not (another count, a chip named otherwise, a side that fit no
sequence of chips). Never for want of a value of its own (issue 36, tenth round: letting such a
view not block took 6 wrong values on tuning seeds under sloppy 2 mm and leaning 0.4 mm).

    pair = TwoViews(("dealer", "across"))
    for frames in cameras:                        # one frame from each camera, in any order in time
        readings = {name: readers[name].read(frame) for name, frame in frames.items()}
        zones = pair.update(readers, readings)    # combined fused zones; asks both readers for more
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from vision.fusion import SHARE, FusedZone, Rereads, WagerFusion, combine
from vision.reader import ViewCount
from vision.readings import FrameReading
from vision.stages import Colours, StackEvidence, possible
from vision.tuning import Tuning


class Joins(Rereads, Protocol):
    """What joining asks of a reader (vision/reader.py's `Reader`) beyond fusing."""

    @property
    def counts(self) -> Mapping[str, ViewCount]: ...

    @property
    def evidence(self) -> Mapping[str, StackEvidence]: ...

    @property
    def tuning(self) -> Tuning: ...

    def join(self, counts: Mapping[str, float], own: Iterable[str] = ()) -> None: ...


@dataclass(eq=False)
class _Naming:
    """One reading's naming of a stack by the joined count: what each chip could be
    (`stages.possible`), worked out when another view's chips are to be confirmed, and the hue and
    Lab opinions only when the margins alone do not admit them (they only ever add colours)."""

    colours: Colours
    tuning: Tuning

    @functools.cached_property
    def _margins(self) -> tuple[frozenset[int], ...] | None:
        return possible(self.colours, self.tuning, opinions=False)

    @functools.cached_property
    def _all(self) -> tuple[frozenset[int], ...] | None:
        return possible(self.colours, self.tuning)

    def admits(self, chips: tuple[int, ...]) -> bool:
        """Could this stack, named so, be `chips`?"""
        if self._margins is None:  # the side fit no sequence of chips
            return False
        return _admits(self._margins, chips) or (self._all is not None and _admits(self._all, chips))


@dataclass
class _Kept:
    """One view's counts of a zone's stack since the wager last changed: their sums, and whether
    the view read the zone afresh without measuring a stack."""

    chips: float = 0.0
    per_mm: float = 0.0
    n: int = 0
    unmeasured: bool = False
    # what the view named of the stack with the joined count, a reading each (what each chip could
    # be: `stages.possible`), and the chips of its sure readings by value
    named: list[_Naming] = field(default_factory=list)
    sure: dict[int, set[tuple[int, ...]]] = field(default_factory=dict)

    def add(self, count: ViewCount) -> None:
        self.chips += count.chips
        self.per_mm += count.per_mm
        self.n += 1


def joined_count(e1: float, c1: float, e2: float, c2: float) -> float:
    """Two facing views' counts before rounding, each weighed by the other's chips a mm."""
    return (c2 * e1 + c1 * e2) / (c1 + c2)


class CountJoin:
    """Keeps two views' counts zone by zone and hands both readers the joined counts."""

    def __init__(self, views: tuple[str, str]) -> None:
        self.views = views
        self._kept: dict[str, dict[str, _Kept]] = {}  # zone -> view -> counts
        self.joined: dict[str, float] = {}

    def update(self, readers: Mapping[str, Joins], readings: Mapping[str, FrameReading]) -> dict[str, float]:
        if any(readings[view].bumped for view in self.views):
            self._kept.clear()
        # a wager that changed in either view starts both views' counts again; a view that did not
        # see the change on this frame may not have seen it yet (the cameras are not in step), so
        # its reading of this frame is not kept
        changed = {view: {z for z, why in readers[view].afresh.items() if why == "changed"} for view in self.views}
        for zone in set().union(*changed.values()):
            self._kept.pop(zone, None)
        for view in self.views:
            reader, reading = readers[view], readings[view]
            late = set().union(*(zones for other, zones in changed.items() if other != view)) - changed[view]
            for zone in reader.afresh:
                if zone in late:
                    continue
                seen = reading.zones.get(zone)
                kept = self._kept.setdefault(zone, {}).setdefault(view, _Kept())
                count = reader.counts.get(zone)
                if count is not None:
                    kept.add(count)
                elif seen is not None and seen.state != "ok":
                    kept.unmeasured = kept.n == 0  # read, and no stack measured in it (unsure, blocked)
                evidence = reader.evidence.get(zone)
                if evidence is not None and evidence.colours is not None and evidence.height.joined is not None:
                    kept.named.append(_Naming(evidence.colours, reader.tuning))
                    if seen is not None and seen.state == "ok" and len(seen.stacks) == 1:
                        kept.sure.setdefault(int(seen.value or 0), set()).add(seen.stacks[0].chips)
        a, b = self.views
        self.joined = {}
        own: dict[str, list[str]] = {a: [], b: []}
        for zone, both in self._kept.items():
            ka, kb = both.get(a), both.get(b)
            if ka is not None and kb is not None and ka.n and kb.n:
                self.joined[zone] = joined_count(ka.chips / ka.n, ka.per_mm / ka.n, kb.chips / kb.n, kb.per_mm / kb.n)
            elif ka is not None and ka.n and kb is not None and kb.unmeasured:
                own[a].append(zone)
            elif kb is not None and kb.n and ka is not None and ka.unmeasured:
                own[b].append(zone)
        for view, other in ((a, b), (b, a)):
            readers[view].join(self.joined, own[view])
            # a view the other has measured since the change and this one not: read it afresh (its
            # fusion may be sure already and ask for no more frames of it)
            readers[view].reread(
                zone
                for zone, both in self._kept.items()
                if zone not in self.joined
                and (there := both.get(other)) is not None
                and there.n
                and ((here := both.get(view)) is None or not (here.n or here.unmeasured))
            )
        return self.joined

    def confirms(self, view: str, zone: str, value: int, agree: int = 2) -> bool:
        """Does `view`'s own evidence of the stack in `zone` since the wager changed confirm the
        other view's sure `value`: at least `agree` readings with the joined count whose chips
        could each be the other view's (`stages.possible`), and none that could not (a chip named
        otherwise, another count, a side that fit no sequence)? Never for want of a candidate
        (issue 36, tenth round)."""
        both = self._kept.get(zone, {})
        here = both.get(view)
        there = [kept for other, kept in both.items() if other != view]
        sequences = {chips for kept in there for chips in kept.sure.get(value, ())}
        if here is None or not sequences or len(here.named) < agree:
            return False
        return all(naming.admits(chips) for naming in here.named for chips in sequences)


def _admits(could: tuple[frozenset[int], ...], chips: tuple[int, ...]) -> bool:
    """Could a stack named so (each chip's possible colours, bottom to top) be `chips`?"""
    return len(could) == len(chips) and all(c in s for c, s in zip(chips, could, strict=True))


class TwoViews:
    """Two facing views of one half: each fused by its own `WagerFusion`, their counts joined
    (`CountJoin`), their fused zones combined (`combine`)."""

    def __init__(self, views: tuple[str, str] = ("dealer", "across"), share: float = SHARE) -> None:
        self.views = views
        self.fusions = {view: WagerFusion(share=share) for view in views}
        self.counts = CountJoin(views)
        self.fused: dict[str, dict[str, FusedZone]] = {}

    def update(self, readers: Mapping[str, Joins], readings: Mapping[str, FrameReading]) -> dict[str, FusedZone]:
        self.fused = {view: self.fusions[view].update(readers[view], readings[view]) for view in self.views}
        self.counts.update(readers, readings)
        return combine(self.fused, self.counts.confirms)
