"""Two facing views of one half (vision/join.py): their counts joined read a sloppy stack one view
cannot, a count from before a change is never joined with one from after it, and two views that
name different chips leave the zone unsure. Rendered at the across mount (vision/layout.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from vision.calibration import Calibration, CameraCheck
from vision.fusion import FusedZone, WagerFusion, combine
from vision.join import CountJoin, TwoViews, joined_count
from vision.layout import MOUNTS, Layout
from vision.reader import WAITING, Reader, ViewCount
from vision.readings import FrameReading, StackReading, ZoneReading
from vision.render import draw, exposures, render
from vision.scene import CameraSetup, Scene, Stack
from vision.stack_colours import NamedStack
from vision.stages import Colours
from vision.tuning import TUNING

ZONE = "seat2.first"
CAMERAS = {p.name: CameraSetup(hfov_deg=p.hfov_deg, position=p.position, look_at=p.look_at) for p in MOUNTS["across"]}
VIEWS = {"dealer": CAMERAS["left"], "across": CAMERAS["left across"]}


@pytest.fixture(scope="module")
def left() -> Layout:
    return Layout.load("grand-slam-7-left")


@pytest.fixture(scope="module")
def calibrations(layout: Layout, left: Layout) -> dict[str, Calibration]:
    """Each camera calibrated on its own frame of the empty felt (the across one sees the markers
    upside down)."""
    return {
        view: Calibration.from_frame(render(Scene(camera=camera), layout), left, camera=camera.model())
        for view, camera in VIEWS.items()
    }


def _film(
    scenes: Mapping[str, Scene], layout: Layout, left: Layout, calibrations: dict[str, Calibration], frames: int
) -> tuple[TwoViews, dict[str, FusedZone], dict[str, FusedZone]]:
    """Both cameras filmed for `frames` frames (fresh noise a frame) through `TwoViews`, and the
    dealer's camera's frames fused alone by the reader as it reads one camera; the last frame's
    zones of each."""
    readers = {view: Reader(left, calibrations[view]) for view in scenes}
    alone, fusion = Reader(left, calibrations["dealer"]), WagerFusion()
    rng = np.random.default_rng(4)
    streams = {view: exposures(draw(scene, layout), scene, rng) for view, scene in scenes.items()}
    pair = TwoViews(("dealer", "across"))
    for _ in range(frames):
        shot = {view: next(stream) for view, stream in streams.items()}
        both = pair.update(readers, {view: readers[view].read(frame) for view, frame in shot.items()})
        one = fusion.update(alone, alone.read(shot["dealer"]))
    return pair, both, one


def test_the_two_views_counts_joined_read_a_sloppy_stack_whose_height_one_view_cannot_count(
    layout: Layout, left: Layout, calibrations: dict[str, Calibration]
) -> None:
    # seven 25s, each chip up to 1 mm off the one below at random: the top pushed along the dealer's
    # camera's line of sight reads taller or shorter to it, between two counts
    scenes = {
        view: Scene(camera=camera, noise=2.0, seed=4, zones={ZONE: (Stack((25,) * 7, sloppy=1.0),)})
        for view, camera in VIEWS.items()
    }
    pair, both, one = _film(scenes, layout, left, calibrations, 4)
    # one camera never reads it: the stack's top looks where a stack of 6 chips' would
    assert one[ZONE].state == "unsure" and one[ZONE].candidates == ()
    assert "6 chips" in one[ZONE].why
    assert abs(pair.counts.joined[ZONE] - 7) < 0.1
    assert both[ZONE] == FusedZone("ok", 175, 4)
    assert both["seat1.first"] == FusedZone("ok", 0, 4)  # bare felt, as either camera reads it


def test_two_views_that_name_different_chips_leave_the_zone_unsure_naming_both(
    layout: Layout, left: Layout, calibrations: dict[str, Calibration]
) -> None:
    # the same count seen from both sides, other chips in each (what no real table shows: a
    # camera naming the colours wrong); the join counts 4 chips, and no camera is taken over the other
    scenes = {
        "dealer": Scene(camera=VIEWS["dealer"], noise=2.0, seed=5, zones={ZONE: (Stack((25,) * 4),)}),
        "across": Scene(camera=VIEWS["across"], noise=2.0, seed=5, zones={ZONE: (Stack((5,) * 4),)}),
    }
    pair, both, _ = _film(scenes, layout, left, calibrations, 3)
    assert round(pair.counts.joined[ZONE]) == 4
    assert (both[ZONE].state, both[ZONE].value) == ("unsure", None)
    assert both[ZONE].why == "the cameras disagree: the across camera 20, the dealer camera 100"


class Scripted:
    """A reader's side of joining, scripted: what a frame read afresh, and the counts it measured."""

    def __init__(self) -> None:
        self.afresh: dict[str, str] = {}
        self.counts: dict[str, ViewCount] = {}
        self.evidence: dict[str, Any] = {}  # what the stages saw of a stack: its height, its colours
        self.tuning = TUNING
        self.joined: dict[str, float] = {}
        self.own: set[str] = set()

    def reread(self, zones: Iterable[str]) -> None:
        pass

    def join(self, counts: Mapping[str, float], own: Iterable[str] = ()) -> None:
        self.joined, self.own = dict(counts), set(own)


def _frame(reader: Scripted, why: str, count: ViewCount | None) -> FrameReading:
    """A frame on which the zone was read afresh (`why`) and, with `count`, its stack measured."""
    reader.afresh = {ZONE: why}
    reader.counts = {ZONE: count} if count is not None else {}
    seen = ZoneReading.unsure(WAITING if count else "a nearer stack hides part of this stack")
    return FrameReading({ZONE: seen}, {}, CameraCheck(False, True, 0.0, 4), {})


def test_a_count_from_before_a_change_in_either_view_is_never_joined_with_one_from_after_it() -> None:
    dealer, across = Scripted(), Scripted()
    join = CountJoin(("dealer", "across"))
    readers = {"dealer": dealer, "across": across}
    # the dealer's camera 0.4 chip long (c 0.5 a mm), the across one 0.2 short (c 0.25): the push cancels
    join.update(
        readers,
        {"dealer": _frame(dealer, "new", ViewCount(5.4, 0.5)), "across": _frame(across, "new", ViewCount(4.8, 0.25))},
    )
    assert dealer.joined[ZONE] == pytest.approx(joined_count(5.4, 0.5, 4.8, 0.25)) == pytest.approx(5.0)
    assert across.joined == dealer.joined
    # chips taken: the dealer's camera sees the change a frame before the across one, whose
    # reading of that frame is still of the old stack
    join.update(
        readers,
        {
            "dealer": _frame(dealer, "changed", ViewCount(3.4, 0.5)),
            "across": _frame(across, "asked", ViewCount(4.8, 0.25)),
        },
    )
    assert ZONE not in dealer.joined and ZONE not in dealer.own  # the dealer's camera waits for the other's count
    join.update(
        readers,
        {
            "dealer": _frame(dealer, "asked", ViewCount(3.4, 0.5)),
            "across": _frame(across, "changed", ViewCount(2.8, 0.25)),
        },
    )
    assert ZONE not in dealer.joined  # the across camera's change starts both again: no count of the dealer's kept
    join.update(
        readers,
        {
            "dealer": _frame(dealer, "asked", ViewCount(3.4, 0.5)),
            "across": _frame(across, "asked", ViewCount(2.8, 0.25)),
        },
    )
    assert dealer.joined[ZONE] == pytest.approx(3.0)
    # a view that reads the zone and measures no stack there (a nearer stack hides it) leaves the count to the other
    join.update(
        readers, {"dealer": _frame(dealer, "changed", ViewCount(6.2, 0.5)), "across": _frame(across, "changed", None)}
    )
    assert ZONE not in dealer.joined and dealer.own == {ZONE} and across.own == set()


VALUES = (1, 5, 25, 100, 500, 1000)  # the default chip set's, by the namer's colour index


def _named(chips: tuple[int, ...], near: dict[int, int] | None = None, wanted: float = 10.0) -> Colours:
    """A stack's colours as a view named them with the joined count: each chip's name, and for the
    chips in `near` (chip -> value) a runner-up within the margin asked (that chip could be either)."""
    near = near or {}
    index = [VALUES.index(c) for c in chips]
    rival = [VALUES.index(near[i]) if i in near else (k + 1) % len(VALUES) for i, k in enumerate(index)]
    gaps = np.array([[0.0, 0.4 * wanted if i in near else 3 * wanted, 5 * wanted] for i in range(len(chips))])
    options = np.array([[k, r, (r + 1) % len(VALUES)] for k, r in zip(index, rival, strict=True)])
    named = NamedStack(tuple(index), gaps[:, 1], 1.0, None, tuple(rival), options=options, option_gaps=gaps)
    return Colours(named, 2.6, wanted, VALUES, compressed=True)


def _read(reader: Scripted, why: str, count: ViewCount, seen: ZoneReading, colours: Colours | None) -> FrameReading:
    """A frame on which the zone's stack was measured with the joined count and, with `colours`, named."""
    reader.afresh, reader.counts = {ZONE: why}, {ZONE: count}
    height = SimpleNamespace(joined=count.chips)
    reader.evidence = {ZONE: SimpleNamespace(height=height, colours=colours)} if colours is not None else {}
    return FrameReading({ZONE: seen}, {}, CameraCheck(False, True, 0.0, 4), {})


def _unsure_across(join: CountJoin, readers: dict[str, Scripted], colours: list[Colours | None]) -> None:
    """The dealer's camera sure of 25, 25, 100 on every frame; the across one unsure of it, named
    so on each frame in turn (None: refused before its colours were named)."""
    sure = ZoneReading.ok((StackReading((25, 25, 100)),))
    doubt = ZoneReading.unsure("chip 3 from the bottom could be more than one colour")
    for k, named in enumerate(colours):
        why = "new" if k == 0 else "asked"
        join.update(
            readers,
            {
                "dealer": _read(readers["dealer"], why, ViewCount(3.0, 0.5), sure, _named((25, 25, 100))),
                "across": _read(readers["across"], why, ViewCount(3.0, 0.25), doubt, named),
            },
        )


def test_a_view_unsure_of_the_chips_confirms_the_others_value_only_when_each_chip_it_named_could_be_theirs() -> None:
    """Issue 36, tenth round: a camera that saw the wager and could not name its chips confirms the
    other camera's sure value on positive evidence only (the joined count held in it, every chip
    it named or nearly named is the other's, on two readings, none against), never for want of a
    value of its own."""
    dealer_sure = {ZONE: FusedZone("ok", 150, 3)}
    across_unsure = {ZONE: FusedZone("unsure", why="chip 3 from the bottom could be more than one colour", readable=3)}

    def combined(colours: list[Colours | None]) -> FusedZone:
        join = CountJoin(("dealer", "across"))
        _unsure_across(join, {"dealer": Scripted(), "across": Scripted()}, colours)
        return combine({"dealer": dealer_sure, "across": across_unsure}, join.confirms)[ZONE]

    # its top chip between 100 and 500, the rest named 25 with their margins: the dealer's 150 stands
    could_be = _named((25, 25, 500), near={2: 100})
    assert combined([could_be, could_be, could_be]) == FusedZone("ok", 150, 3)
    # one reading naming the second chip 5 with its margin: against, whatever the others say
    other = _named((25, 5, 100), near={2: 500})
    assert combined([could_be, other, could_be]).state == "unsure"
    # one reading alone is not enough; nor are readings refused before the colours, however many
    assert combined([could_be, None, None]).state == "unsure"
    assert combined([None, None, None]).state == "unsure"
    # a reading of another count (a chip more) could not be 25, 25, 100
    assert combined([could_be, _named((25, 25, 100, 5), near={3: 1}), could_be]).state == "unsure"
    doubted = combined([None, None, None])
    assert (
        doubted.why
        == "the across camera cannot confirm the dealer camera's 150: chip 3 from the bottom could be more than one colour"
    )


def _film_seed(seed: int, condition: str, frames: int) -> tuple[TwoViews, dict[str, FusedZone], dict[str, int]]:
    """Tuning scene `seed` under `condition` filmed by the dealer's camera and the one across for
    `frames` frames after the empty felt (fresh noise and JPEG a frame), as
    `benchmarks.second_view joined` films it; the last frame's combined zones, and the true values."""
    from benchmarks.bench_vision_accuracy import calibrated, empty_table, view
    from benchmarks.second_view import across_view
    from vision.robustness import CONDITIONS

    whole = Layout.load("grand-slam-7")
    base, half = view(seed, "halves", whole, (1920, 1080))
    base = dataclasses.replace(base, hands=())
    changed = CONDITIONS[condition]
    readers, streams = {}, {}
    for cam, scene in (("dealer", base), ("across", across_view(base, whole))):
        empty = empty_table(scene)
        readers[cam] = Reader(half, calibrated(changed.calibration(empty), empty, whole, half))
        rng = np.random.default_rng([seed, 36])
        placed = changed.apply(scene)
        felt = next(exposures(draw(empty, whole), changed.apply(empty), rng))
        streams[cam] = (felt, exposures(draw(placed, whole), placed, rng))
    pair = TwoViews(("dealer", "across"))
    pair.update(readers, {cam: readers[cam].read(felt) for cam, (felt, _) in streams.items()})
    for _ in range(frames):
        zones = pair.update(readers, {cam: readers[cam].read(next(stream)) for cam, (_, stream) in streams.items()})
    return pair, zones, {g.zone.name: base.value_of(g.zone.name) for g in readers["dealer"].zones}


def test_a_jpeg_stack_one_camera_never_reads_is_known_when_each_chip_it_named_could_be_the_other_cameras() -> None:
    # tuning seed 5 under JPEG 75, seat7.first: the dealer's camera sure of it, the across camera
    # never sure of a chip (its bottom chip could be more than one colour) but its count and every
    # chip it named agreeing: the ninth round's rule kept the zone unsure
    pair, zones, truth = _film_seed(5, "jpeg 75", 9)
    zone = "seat7.first"
    dealer, across = pair.fused["dealer"][zone], pair.fused["across"][zone]
    assert dealer.state == "ok" and dealer.value == truth[zone] == 45
    assert across.state == "unsure" and across.candidates == () and across.readable >= 2
    assert combine(pair.fused)[zone].why.startswith("the across camera cannot confirm the dealer camera's 45")
    assert zones[zone] == FusedZone("ok", 45, dealer.frames)


def test_a_camera_sure_of_a_wrong_value_is_not_confirmed_by_one_that_named_the_chips_otherwise() -> None:
    # tuning seed 6 under sloppy 2 mm, seat4.first (2423): the dealer's camera is sure of 2324 (a 100
    # where a 1 stands), the across camera never reads a value and names the fifth chip 100 where
    # the dealer's reads 500: the zone stays unsure (letting a camera without a value not block
    # took this wrong value, issue 36's ninth round)
    pair, zones, truth = _film_seed(6, "sloppy 2", 18)
    zone = "seat4.first"
    dealer, across = pair.fused["dealer"][zone], pair.fused["across"][zone]
    assert truth[zone] == 2423 and dealer.state == "ok" and dealer.value == 2324
    assert across.state == "unsure" and across.candidates == () and across.readable >= 2
    assert (zones[zone].state, zones[zone].value) == ("unsure", None)
    assert zones[zone].why.startswith("the across camera cannot confirm the dealer camera's 2324")
