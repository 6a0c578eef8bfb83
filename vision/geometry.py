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
    """(N, 3) table mm -> (N, 2) pixels: cv2.projectPoints' numbers, bit for bit. Python's binding
    of it always works out the 2N x 15 Jacobian too, which on the few hundred to few thousand
    points of a stack's side costs several times the projection: from `_NUMPY_FROM` points on,
    the same model is worked out in numpy, with the same double operations in the same order
    (OpenCV's cvProjectPoints2Internal; tests/vision/test_geometry.py compares the two)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(pts) == 0:
        return np.zeros((0, 2))
    if len(pts) >= _NUMPY_FROM and len(camera.dist) == 5:
        return _project_numpy(camera, pose, pts)
    out, _ = cv2.projectPoints(pts.reshape(-1, 1, 3), pose.rvec, pose.tvec, camera.matrix, camera.dist)
    return np.asarray(out, dtype=np.float64).reshape(-1, 2)


_NUMPY_FROM = 128  # points: below, projectPoints (Jacobian and all) costs less than numpy's calls
_PROJECTORS: dict[bytes, tuple[float, ...]] = {}
# the last camera and pose asked for (their arrays are never changed in place) and their constants:
# a reader asks for one pair tens of times a frame, and the key above costs more than the lookup
_LAST: list[tuple[Any, Any, tuple[float, ...]] | None] = [None]


def _constants(camera: CameraModel, pose: Pose) -> tuple[float, ...]:
    """The rotation (as projectPoints makes it, by Rodrigues), translation, distortion (k1 k2 p1 p2
    k3) and focal lengths and centre as Python floats, once per camera and pose."""
    last = _LAST[0]
    if last is not None and last[0] is camera and last[1] is pose:  # the same objects as the last call
        return last[2]
    key = b"".join(a.tobytes() for a in (pose.rvec, pose.tvec, camera.matrix, camera.dist))
    got = _PROJECTORS.get(key)
    if got is None:
        if len(_PROJECTORS) > 64:
            _PROJECTORS.clear()
        rotation, _ = cv2.Rodrigues(np.asarray(pose.rvec, dtype=np.float64).reshape(3, 1))
        m = camera.matrix
        got = _PROJECTORS[key] = (
            *(float(v) for v in np.asarray(rotation).ravel()),
            *(float(v) for v in np.asarray(pose.tvec).ravel()),
            *(float(v) for v in camera.dist),
            float(m[0, 0]),
            float(m[1, 1]),
            float(m[0, 2]),
            float(m[1, 2]),
        )
    _LAST[0] = (camera, pose, got)
    return got


def _project_numpy(camera: CameraModel, pose: Pose, pts: FloatArray) -> FloatArray:
    """projectPoints' model step by step: x = R X + t, x / z, then
    cdist = 1 + k1 r2 + k2 r4 + k3 r6 and xd = x cdist + p1 2xy + p2 (r2 + 2x^2) (the rational and
    thin-prism terms are 0: 1 and + 0 change no bit of a result that is not zero), pixels = xd f + c."""
    r0, r1, r2_, r3, r4_, r5, r6_, r7, r8, t0, t1, t2, k1, k2, p1, p2, k3, fx, fy, cx, cy = _constants(camera, pose)
    xs, ys, zs = pts.T.copy()  # each coordinate contiguous: numpy's loops over strided columns cost more
    x = r0 * xs + r1 * ys + r2_ * zs + t0
    y = r3 * xs + r4_ * ys + r5 * zs + t1
    z = r6_ * xs + r7 * ys + r8 * zs + t2
    # projectPoints: z ? 1 / z : 1 (a point in the camera's plane is none the reader projects)
    z = np.divide(1.0, z) if z.all() else np.divide(1.0, z, out=np.ones_like(z), where=z != 0)
    x *= z
    y *= z
    xx = x * x
    yy = y * y
    r2 = xx + yy
    r4 = r2 * r2
    cdist = 1 + k1 * r2 + k2 * r4 + k3 * (r4 * r2)
    xd = x * cdist
    yd = y * cdist
    if p1 != 0.0 or p2 != 0.0:
        a1 = 2 * x * y
        xd += p1 * a1
        xd += p2 * (r2 + 2 * xx)
        yd += p1 * (r2 + 2 * yy)
        yd += p2 * a1
    out = np.empty((len(pts), 2))
    np.add(xd * fx, cx, out=out[:, 0])
    np.add(yd * fy, cy, out=out[:, 1])
    return out


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
