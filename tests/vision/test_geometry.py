"""`vision.geometry.project` gives cv2.projectPoints' pixels bit for bit, through either path (the
reader's readings are compared exactly: tests/vision/test_identity.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.geometry import CameraModel, Pose, project


@pytest.mark.parametrize(
    "dist",
    [(-0.05, 0.01, 0.0, 0.0, 0.0), (-0.12, 0.031, 0.0013, -0.0021, 0.004), (0.2, -0.5, 0.01, 0.0, 0.3), (0.0,) * 5],
)
@pytest.mark.parametrize("count", [1, 7, 127, 128, 5000])
def test_project_is_projectpoints_bit_for_bit(dist: tuple[float, ...], count: int) -> None:
    camera = CameraModel.from_fov(1280, 720, 62, dist)
    pose = Pose.look_at((850, -750, 1450), (850, 520, 0), roll_deg=1.5)
    rng = np.random.default_rng(count)
    points = np.column_stack(
        [rng.uniform(-800, 2400, count), rng.uniform(-100, 1200, count), rng.uniform(0.0, 70.0, count)]
    )
    expected, _ = cv2.projectPoints(points.reshape(-1, 1, 3), pose.rvec, pose.tvec, camera.matrix, camera.dist)
    got = project(camera, pose, points)
    assert got.shape == (count, 2)
    assert np.array_equal(got, expected.reshape(-1, 2))


def test_a_point_in_the_cameras_plane_is_projected_as_projectpoints_does() -> None:
    """z = 0 in the camera's frame: projectPoints divides by 1 there, and so does the numpy path."""
    camera = CameraModel.from_fov(1280, 720, 62)
    pose = Pose(np.zeros(3), np.zeros(3))
    points = np.column_stack([np.arange(200.0), np.ones(200), np.r_[0.0, np.full(199, 500.0)]])
    expected, _ = cv2.projectPoints(points.reshape(-1, 1, 3), pose.rvec, pose.tvec, camera.matrix, camera.dist)
    assert np.array_equal(project(camera, pose, points), expected.reshape(-1, 2))
