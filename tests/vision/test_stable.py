"""Stable scene: a zone's value appears only after N equal frames; a change starts again."""

from __future__ import annotations

import pytest

from vision.calibration import CameraCheck
from vision.reader import FrameReading, StackReading, ZoneReading
from vision.stable import StableScene

IN_PLACE = CameraCheck(bumped=False, verified=True, moved_px=0.2, markers_seen=8)
MOVED = CameraCheck(bumped=True, verified=True, moved_px=12.0, markers_seen=8)


def frame(value: int | None, puck: str | None = None, camera: CameraCheck = IN_PLACE) -> FrameReading:
    if value is None:
        zone = ZoneReading.blocked("a hand")
    else:
        zone = ZoneReading.ok((StackReading((5,) * (value // 5)),) if value else ())
    return FrameReading({"seat3.first": zone}, {"blind": puck} if puck else {}, camera)


def test_a_value_appears_only_after_n_steady_frames() -> None:
    scene = StableScene(frames=3)
    first, second, third = (scene.update(frame(25)) for _ in range(3))
    assert first.zones["seat3.first"].value is None
    assert second.zones["seat3.first"].value is None
    assert third.zones["seat3.first"].value == 25


def test_a_change_resets_the_count() -> None:
    scene = StableScene(frames=3)
    for _ in range(3):
        scene.update(frame(25))
    assert scene.update(frame(30)).zones["seat3.first"].state == "unsure"  # settling, not the old 25
    assert scene.update(frame(30)).zones["seat3.first"].value is None
    assert scene.update(frame(30)).zones["seat3.first"].value == 30


def test_a_hand_is_reported_blocked_at_once_and_the_old_value_must_settle_again() -> None:
    scene = StableScene(frames=2)
    scene.update(frame(10))
    scene.update(frame(10))
    assert scene.update(frame(None)).zones["seat3.first"].state == "blocked"
    assert scene.update(frame(10)).zones["seat3.first"].value is None
    assert scene.update(frame(10)).zones["seat3.first"].value == 10


def test_a_bumped_camera_passes_through_at_once() -> None:
    scene = StableScene(frames=3)
    assert scene.update(frame(10, camera=MOVED)).bumped


def test_a_puck_settles_like_a_zone() -> None:
    scene = StableScene(frames=2)
    assert scene.update(frame(0, "seat4.puck")).pucks == {}
    assert scene.update(frame(0, "seat4.puck")).pucks == {"blind": "seat4.puck"}
    assert scene.update(frame(0, "seat5.puck")).pucks == {}
    assert scene.update(frame(0)).pucks == {}


def test_the_number_of_frames_is_checked() -> None:
    with pytest.raises(ValueError, match="frames must be from 1 to 100"):
        StableScene(frames=0)
