"""Pinhole camera geometry: the camera's inside (CameraModel) and where it stands (Pose).

Table millimetres in, pixels out, through cv2.projectPoints (lens distortion included); and
pixels back onto a horizontal plane of the table (the felt, z = 0, or a puck's top face).

    camera = CameraModel.from_fov(1920, 1080, hfov_deg=62)
    pose = Pose.look_at((850, -750, 1450), (850, 520, 0))
    pixels = project(camera, pose, points_mm)              # (N, 3) -> (N, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CameraModel:
    """Intrinsics: image size, camera matrix and distortion (OpenCV's k1 k2 p1 p2 k3)."""

    width: int
    height: int
    matrix: FloatArray  # 3 x 3
    dist: FloatArray  # 5

    @classmethod
    def from_fov(cls, width: int, height: int, hfov_deg: float, dist: tuple[float, ...] = (0.0,) * 5) -> CameraModel:
        f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
        matrix = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]], dtype=np.float64)
        return cls(width, height, matrix, np.array(dist, dtype=np.float64))

    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "height": self.height,
            "matrix": self.matrix.tolist(),
            "dist": self.dist.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CameraModel:
        matrix = np.array(data["matrix"], dtype=np.float64)
        dist = np.array(data["dist"], dtype=np.float64).ravel()
        if matrix.shape != (3, 3) or dist.shape != (5,):
            raise ValueError("camera.matrix must be 3 x 3 and camera.dist 5 numbers")
        return cls(int(data["width"]), int(data["height"]), matrix, dist)


@dataclass(frozen=True)
class Pose:
    """Table-to-camera transform (OpenCV rvec, tvec), as solvePnP returns it."""

    rvec: FloatArray  # 3
    tvec: FloatArray  # 3

    @classmethod
    def look_at(
        cls, position: tuple[float, float, float], target: tuple[float, float, float], roll_deg: float = 0.0
    ) -> Pose:
        """A camera at `position` (mm) looking at `target`, image up toward the table's far side."""
        eye = np.array(position, dtype=np.float64)
        forward = np.array(target, dtype=np.float64) - eye
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, np.array([0.0, 0.0, 1.0]))
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        roll = math.radians(roll_deg)
        right, down = (math.cos(roll) * right + math.sin(roll) * down, -math.sin(roll) * right + math.cos(roll) * down)
        rotation = np.stack([right, down, forward])
        rvec, _ = cv2.Rodrigues(rotation)
        return cls(np.asarray(rvec, dtype=np.float64).ravel(), -rotation @ eye)

    @property
    def rotation(self) -> FloatArray:
        r, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(r, dtype=np.float64)

    @property
    def position(self) -> FloatArray:
        """The camera's centre in table mm."""
        return np.asarray(-self.rotation.T @ self.tvec, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"rvec": self.rvec.tolist(), "tvec": self.tvec.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pose:
        rvec = np.array(data["rvec"], dtype=np.float64).ravel()
        tvec = np.array(data["tvec"], dtype=np.float64).ravel()
        if rvec.shape != (3,) or tvec.shape != (3,):
            raise ValueError("pose.rvec and pose.tvec must be 3 numbers each")
        return cls(rvec, tvec)


def project(camera: CameraModel, pose: Pose, points: npt.ArrayLike) -> FloatArray:
    """(N, 3) table mm -> (N, 2) pixels."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 3)
    if len(pts) == 0:
        return np.zeros((0, 2))
    out, _ = cv2.projectPoints(pts, pose.rvec, pose.tvec, camera.matrix, camera.dist)
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


def back_project(camera: CameraModel, pose: Pose, pixels: npt.ArrayLike, z: float = 0.0) -> FloatArray:
    """(N, 2) pixels -> (N, 2) table (x, y) where each pixel's ray meets the plane at height z."""
    px = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
    if len(px) == 0:
        return np.zeros((0, 2))
    rays = cv2.undistortPoints(px, camera.matrix, camera.dist).reshape(-1, 2)
    rays = np.hstack([rays, np.ones((len(rays), 1))]) @ pose.rotation  # camera -> table directions
    eye = pose.position
    t = (z - eye[2]) / rays[:, 2]
    return np.asarray(eye[:2] + rays[:, :2] * t[:, None], dtype=np.float64)
