"""benchmarks/second_view.py: the other camera of the mount is placed as the own one is, and a
zone it does not see wholly never counts as a second opinion."""

from __future__ import annotations

import pytest

from benchmarks.bench_vision_accuracy import HALF_MOUNTS, view
from benchmarks.second_view import across_view, angle_between, main, other_view, tops, verdict
from vision.layout import Layout
from vision.reader import ZoneReading


def test_the_other_camera_is_off_its_place_as_the_own_camera_is_off_its() -> None:
    scene, layout = view(1, "halves", Layout.load("grand-slam-7"), (1920, 1080))
    assert layout.name == "grand-slam-7-right"
    moved = other_view(scene, layout.name).camera
    for got, own, home, there in zip(
        moved.position,
        scene.camera.position,
        HALF_MOUNTS["grand-slam-7-right"].position,
        HALF_MOUNTS["grand-slam-7-left"].position,
        strict=True,
    ):
        assert got == pytest.approx(there + own - home)
    assert moved.hfov_deg == scene.camera.hfov_deg and moved.roll_deg == scene.camera.roll_deg


def test_a_zone_out_of_the_other_cameras_view_is_unseen_not_unsure() -> None:
    assert (
        verdict(ZoneReading.unsure("the zone is not wholly in the camera's view (12 mm off the frame)"), 25) == "unseen"
    )
    assert verdict(ZoneReading.unsure("the stack's height (1.4 mm) is between 1 and 2 chips"), 25) == "unsure"
    assert verdict(None, 25) == "unseen"
    assert verdict(ZoneReading("ok", 30), 30) == "right"
    assert verdict(ZoneReading("ok", 25), 30) == "WRONG"


def test_it_refuses_the_benchmarks_held_out_seeds() -> None:
    with pytest.raises(SystemExit, match="tuning seeds only"):
        main(["100000", "2"])


def test_the_across_camera_faces_the_dealers_camera_from_the_players_side() -> None:
    whole = Layout.load("grand-slam-7")
    scene, layout = view(2, "halves", whole, (1920, 1080))
    moved = across_view(scene, whole).camera
    x, y, z = scene.camera.position
    assert moved.position == pytest.approx((x, whole.depth_mm - y, z))
    assert moved.look_at[1] == pytest.approx(whole.depth_mm - scene.camera.look_at[1])
    # seen from every zone of its half, the two lines of sight stand far more than 60 degrees apart
    angles = [angle_between(scene, (zone.x, zone.y)) for zone in layout.chip_zones()]
    assert min(angles) > 80 and max(angles) < 95


def test_two_facing_views_of_a_leaning_stack_count_it_where_one_view_cannot() -> None:
    # tuning seed 0, every stack leaning 0.4 mm a chip, each its own way: one frame a camera
    rows = tops(0, ["lean 0.4"])["lean 0.4"]
    assert len(rows) >= 8
    # the dealer's camera alone has stacks whose height lies between two counts ...
    assert any(abs(r["error"]) > 0.3 for r in rows)
    # ... which the two counts, joined by where each camera stands, put back on the right count
    assert all(abs(r["corrected_error"]) <= 0.3 for r in rows)
    # and the top's push along the dealer's line of sight comes out of the two counts
    assert all(abs(r["along"] - r["true_along"]) < 1.0 for r in rows)
