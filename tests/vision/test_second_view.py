"""benchmarks/second_view.py: the other camera of the mount is placed as the own one is, and a
zone it does not see wholly never counts as a second opinion."""

from __future__ import annotations

import pytest

from benchmarks.bench_vision_accuracy import HALF_MOUNTS, view
from benchmarks.second_view import main, other_view, verdict
from vision.layout import Layout
from vision.reader import ZoneReading


def test_the_other_camera_is_off_its_place_as_the_own_camera_is_off_its() -> None:
    scene, layout = view(1, "halves", Layout.load("grand-slam-7"), (1920, 1080))
    assert layout.name == "grand-slam-7-right"
    moved = other_view(scene, layout.name).camera
    for got, own, home, there in zip(
        moved.position, scene.camera.position, HALF_MOUNTS["grand-slam-7-right"].position,
        HALF_MOUNTS["grand-slam-7-left"].position, strict=True,
    ):
        assert got == pytest.approx(there + own - home)
    assert moved.hfov_deg == scene.camera.hfov_deg and moved.roll_deg == scene.camera.roll_deg


def test_a_zone_out_of_the_other_cameras_view_is_unseen_not_unsure() -> None:
    assert verdict(ZoneReading.unsure("the zone is not wholly in the camera's view (12 mm off the frame)"), 25) == "unseen"
    assert verdict(ZoneReading.unsure("the stack's height (1.4 mm) is between 1 and 2 chips"), 25) == "unsure"
    assert verdict(None, 25) == "unseen"
    assert verdict(ZoneReading("ok", 30), 30) == "right"
    assert verdict(ZoneReading("ok", 25), 30) == "WRONG"


def test_it_refuses_the_benchmarks_held_out_seeds() -> None:
    with pytest.raises(SystemExit, match="tuning seeds only"):
        main(["100000", "2"])
