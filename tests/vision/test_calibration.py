"""Calibration on rendered frames: accuracy, recovered pose, saved files, a bumped camera."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from vision.calibration import Calibration, CalibrationError
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.scene import CameraSetup, Scene, Stack


def test_calibration_recovers_the_camera_pose_within_a_centimetre(layout: Layout, calibration: Calibration) -> None:
    true_position = np.array(Scene().camera.position)
    assert calibration.error_mm < 1.0
    assert np.linalg.norm(calibration.pose.position - true_position) < 10.0
    assert sorted(calibration.marker_pixels) == sorted(layout.markers)


def test_without_a_camera_file_the_focal_length_is_estimated_from_the_markers(layout: Layout) -> None:
    scene = Scene(camera=CameraSetup(hfov_deg=58.0, dist=(-0.06, 0.0, 0.0, 0.0, 0.0)))
    estimated = Calibration.from_frame(render(scene, layout), layout)
    true_focal = scene.camera.model().matrix[0, 0]
    assert abs(estimated.camera.matrix[0, 0] - true_focal) / true_focal < 0.02
    assert np.linalg.norm(estimated.pose.position - np.array(scene.camera.position)) < 40.0
    assert estimated.error_mm < 1.5


def test_a_saved_calibration_loads_back_the_same(tmp_path: Path, calibration: Calibration) -> None:
    path = tmp_path / "cal.json"
    calibration.save(path)
    loaded = Calibration.load(path)
    assert np.allclose(loaded.pose.position, calibration.pose.position)
    assert np.allclose(loaded.camera.matrix, calibration.camera.matrix)
    assert loaded.marker_pixels.keys() == calibration.marker_pixels.keys()


def test_a_frame_without_enough_markers_is_refused_saying_which_are_missing(layout: Layout) -> None:
    frame = render(Scene(), layout)
    frame[:, :1400] = 0  # all but the right-hand end of the table in darkness
    with pytest.raises(CalibrationError, match=r"only 2 of .*missing ids \[0, 1, 2, 4, 5, 6\]"):
        Calibration.from_frame(frame, layout, camera=Scene().camera.model())


def test_a_bumped_camera_is_reported_and_no_zone_is_read(layout: Layout, reader: Reader) -> None:
    moved = dataclasses.replace(Scene().camera, position=(850.0, -750.0, 1465.0), look_at=(858.0, 520.0, 0.0))
    scene = Scene(camera=moved, zones={"seat4.first": (Stack((25, 25)),)})
    reading = reader.read(render(scene, layout))
    assert reading.bumped
    assert all(zone.value is None for zone in reading.zones.values())
    assert "moved" in reading.zones["seat4.first"].why


def test_the_camera_in_place_is_not_called_bumped(layout: Layout, reader: Reader) -> None:
    reading = reader.read(render(Scene(noise=3.0, blur=0.6), layout))
    assert not reading.bumped and reading.camera.verified


def test_the_annotated_frame_draws_the_zones(layout: Layout, calibration: Calibration) -> None:
    frame = render(Scene(), layout)
    annotated = calibration.annotate(frame, layout)
    assert annotated.shape == frame.shape
    changed = np.any(annotated != frame, axis=2)
    assert changed.mean() > 0.01  # zone outlines and labels over the felt
