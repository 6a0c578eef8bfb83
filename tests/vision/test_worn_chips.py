"""Worn chips (issue 19, "worn 20"): a chip whose colour fits its best denomination badly needs
a larger lead over the runner-up before it is named. A uniform stack with one chip worn toward
another denomination's colour, which the plain margin let through as that denomination, is now
"unsure" with the reason; the same stacks unworn are still read."""

from __future__ import annotations

import pytest

import vision.reader as reader_module
from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import FrameReading, Reader
from vision.render import render
from vision.scene import CameraSetup, Scene, Stack

# The left camera of vision/README.md's two-camera mount, over seats 1-4.
LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))
STACKS = {
    "seat1.first.payout": (25, 25, 25),
    "seat2.second": (500, 500, 500),
    "seat3.home.payout": (5, 5),
    "seat4.first": (1, 1, 1, 1),
}
SEED = 12  # a tuning seed (0-199): its wear turns the top green chip of seat1.first.payout toward white
WORN = "seat1.first.payout"


def _scene(wear: float) -> Scene:
    return Scene(
        camera=LEFT_MOUNT,
        seed=SEED,
        blur=0.3,
        noise=2.0,
        wear=wear,
        zones={zone: (Stack(chips),) for zone, chips in STACKS.items()},
    )


@pytest.fixture(scope="module")
def left_reader(layout: Layout) -> Reader:
    left = Layout.load("grand-slam-7-left")
    empty = Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0)
    return Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))


def _read(reader: Reader, scene: Scene, layout: Layout) -> FrameReading:
    reader.forget(markers=True)
    return reader.read(render(scene, layout))


def test_a_worn_chip_once_named_as_another_denomination_is_unsure_with_the_reason(
    layout: Layout, left_reader: Reader, monkeypatch: pytest.MonkeyPatch
) -> None:
    scene = _scene(20.0)
    # the plain margin alone (the rule before): the top chip is named white, a wrong value
    with monkeypatch.context() as plain:
        plain.setattr(reader_module, "FIT_LEAD", 0.0)
        before = _read(left_reader, scene, layout).zones[WORN]
    assert before.state == "ok" and before.value == 51, before
    evidence = left_reader.evidence[WORN]
    assert evidence["margin"] >= evidence["wanted"]  # its lead over the runner-up passed the plain margin
    assert evidence["named"] == [25, 25, 1]
    # but that chip, an odd chip (unlike the chip below it), fits white worse than its lead allows
    assert evidence["fits"][2] > reader_module.FIT_LIMIT_ODD + evidence["margins"][2] - evidence["wanted"]

    reading = _read(left_reader, scene, layout)
    zone = reading.zones[WORN]
    assert zone.state == "unsure" and zone.value is None
    assert zone.why.startswith("chip 3 from the bottom fits no chip colour well (worn or dirty?): nearest 1, then 25")
    # no zone of the worn frame reads a wrong value
    for name, chips in STACKS.items():
        seen = reading.zones[name]
        assert seen.state != "ok" or seen.value == sum(chips), (name, seen)


def test_the_same_stacks_unworn_are_still_read(layout: Layout, left_reader: Reader) -> None:
    reading = _read(left_reader, _scene(0.0), layout)
    for name, chips in STACKS.items():
        seen = reading.zones[name]
        assert seen.state == "ok" and seen.stacks[0].chips == chips, (name, seen)
