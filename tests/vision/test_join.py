"""Two facing views of one half (vision/join.py): their counts joined read a sloppy stack one view
cannot, a count from before a change is never joined with one from after it, and two views that
name different chips leave the zone unsure. Rendered at the across mount (vision/layout.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pytest

from vision.calibration import Calibration, CameraCheck
from vision.fusion import FusedZone, WagerFusion
from vision.join import CountJoin, TwoViews, joined_count
from vision.layout import MOUNTS, Layout
from vision.reader import WAITING, Reader, ViewCount
from vision.readings import FrameReading, ZoneReading
from vision.render import draw, exposures, render
from vision.scene import CameraSetup, Scene, Stack

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
