"""The camera's tone, re-measured on every frame: has its contrast, gamma or exposure changed
since calibration?

A camera's auto-exposure, a changed setting or another light bends the levels of the whole
frame: the chips' colours then move, and so do the felt and its printing (empty zones would
look "something"). The calibration markers and the felt are known surfaces: their black
border cells, their white quiet zone and the felt between the zones were measured at
calibration (`reference`), and the same points are measured again on each frame. One curve per
colour channel, shared in shape,

    now = alpha + beta * reference ** p

is fitted to them (robustly: a hand or a stack over some of the points is left out), and its
inverse maps the frame's levels back to what the camera gave at calibration. A curve close to
a pure gain is left to the felt's white balance, which the reader already applies; a curve
that fits badly or bends too far is reported, never corrected blindly.

    probes = probe_pixels(layout, camera, pose, marker_pixels)   # (N, 2) frame pixels
    ref = sample(frame, probes)                                   # at calibration
    curve = ToneCurve.fit(ref, sample(frame_now, probes))
    curve.lut                                                     # None, or a (256,) uint8 per channel
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.geometry import CameraModel, Pose, project
from vision.layout import Layout

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]

POWERS = np.exp(np.linspace(math.log(0.4), math.log(2.5), 93))  # the curve's shapes tried
# A fitted curve this close to a pure gain is left to the felt's white balance: no look-up table
# (clean frames then read exactly as before).
IDENTITY_ALPHA = 4.0  # levels
IDENTITY_POWER = 0.05
# A curve that explains the probes worse than this (median absolute residual, levels) is not
# one tone curve (something covers the markers, the light changed in parts of the frame).
MAX_MISFIT = 6.0
LINEAR_ENOUGH = 3.0  # a straight-line fit this good (median residual, levels) is not refitted
OUTLIER = 3.5  # residuals beyond this many times the median (and 4 levels) are left out
FELT_GAP_MM = 8.0  # felt probes this far outside each chip zone's printed circle
QUIET_ZONE_MM = 5.0  # white probes this far outside a marker's edge (its quiet zone is 10 mm)


def probe_pixels(layout: Layout, camera: CameraModel, pose: Pose, marker_pixels: dict[int, FloatArray]) -> FloatArray:
    """Frame pixels of the known surfaces: each marker's black border cells and white quiet
    zone (from its corners as seen at calibration), and the felt just outside every chip zone."""
    points: list[FloatArray] = []
    for marker_id, corners in sorted(marker_pixels.items()):
        marker = layout.markers.get(marker_id)
        if marker is None:
            continue
        side = marker.side_mm
        cells = 6  # a 4x4 marker and its black border
        unit = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=np.float32)
        to_frame = cv2.getPerspectiveTransform(unit, corners.astype(np.float32))
        t = (np.arange(cells) + 0.5) / cells
        edge = 0.5 / cells
        black = np.concatenate(
            [np.stack([t, np.full(cells, e)], 1) for e in (edge, 1 - edge)]
            + [np.stack([np.full(cells - 2, e), t[1:-1]], 1) for e in (edge, 1 - edge)]
        )
        out = QUIET_ZONE_MM / side
        s = np.linspace(0.1, 0.9, 5)
        white = np.concatenate(
            [np.stack([s, np.full(5, e)], 1) for e in (-out, 1 + out)]
            + [np.stack([np.full(5, e), s], 1) for e in (-out, 1 + out)]
        )
        both = np.concatenate([black, white]).astype(np.float32).reshape(-1, 1, 2)
        points.append(cv2.perspectiveTransform(both, to_frame).reshape(-1, 2).astype(np.float64))
    felt = []
    for zone in layout.chip_zones():
        r = zone.r + FELT_GAP_MM
        for a in (-0.5 * math.pi, 0.0, math.pi):  # nearest the dealer and either side
            felt.append((zone.x + r * math.cos(a), zone.y + r * math.sin(a), 0.0))
    points.append(project(camera, pose, np.array(felt)))
    px = np.concatenate(points)
    inside = (px[:, 0] >= 2) & (px[:, 1] >= 2) & (px[:, 0] < camera.width - 3) & (px[:, 1] < camera.height - 3)
    return np.asarray(px[inside], dtype=np.float64)


def sample(frame: Image, probes: FloatArray) -> FloatArray:
    """(N, 3) BGR levels at the probes, each the mean of 3 x 3 pixels around it."""
    p = (probes[None, :, :] + _AROUND[:, None, :]).astype(np.float32)  # 9, N, 2
    out = cv2.remap(frame, p[..., 0], p[..., 1], cv2.INTER_LINEAR)  # 9, N, 3
    return np.asarray(out.mean(axis=0), dtype=np.float64)


_AROUND = np.array([(dx, dy) for dy in (-1.0, 0.0, 1.0) for dx in (-1.0, 0.0, 1.0)])


@dataclass(frozen=True)
class ToneCurve:
    """now = alpha + beta * reference ** power, per channel (B, G, R); `lut` maps now back."""

    alpha: FloatArray  # (3,)
    beta: FloatArray  # (3,)
    power: float
    misfit: float  # median absolute residual, levels
    used: int  # probes kept

    @property
    def identity(self) -> bool:
        """Close enough to a pure gain for the felt's white balance to handle."""
        return bool(np.all(np.abs(self.alpha) < IDENTITY_ALPHA)) and abs(self.power - 1.0) < IDENTITY_POWER

    @property
    def trusted(self) -> bool:
        return self.misfit <= MAX_MISFIT and POWERS[0] < self.power < POWERS[-1]

    @property
    def lut(self) -> npt.NDArray[np.uint8] | None:
        """(256, 1, 3) levels now -> levels at calibration, or None when nothing needs undoing."""
        if self.identity:
            return None
        now = np.arange(256, dtype=np.float64)[:, None]
        lifted = np.maximum(now - self.alpha[None, :], 0.0) / np.maximum(self.beta[None, :], 1e-6)
        back = lifted ** (1.0 / self.power)
        return np.asarray(np.clip(back + 0.5, 0, 255), dtype=np.uint8).reshape(256, 1, 3)

    @classmethod
    def fit(cls, reference: FloatArray, now: FloatArray) -> ToneCurve:
        keep = np.ones(len(reference), dtype=bool)
        linear = cls._fit(reference, now, keep, (1.0,))
        if linear.identity and linear.misfit <= LINEAR_ENOUGH:  # the usual frame: a gain at most
            return linear
        curve = cls._fit(reference, now, keep)
        for _ in range(2):
            residual = np.abs(curve._predict(reference) - now).max(axis=1)
            limit = max(OUTLIER * float(np.median(residual[keep])), 4.0)
            keep = residual <= limit
            if np.count_nonzero(keep) < 0.5 * len(keep):
                break
            curve = cls._fit(reference, now, keep)
        return curve

    def _predict(self, reference: FloatArray) -> FloatArray:
        return np.asarray(self.alpha + self.beta * np.maximum(reference, 0.0) ** self.power, dtype=np.float64)

    @classmethod
    def _fit(
        cls, reference: FloatArray, now: FloatArray, keep: npt.NDArray[np.bool_], powers: Any = POWERS
    ) -> ToneCurve:
        ref, seen = np.maximum(reference[keep], 0.0), now[keep]
        # levels the sensor clipped say nothing about the curve
        fine = np.all((seen > 1) & (seen < 254), axis=1)
        ref, seen = ref[fine], seen[fine]
        best: tuple[float, FloatArray, FloatArray, float] | None = None
        for p in powers:
            x = ref**p  # N, 3
            mx, my = x.mean(axis=0), seen.mean(axis=0)
            vx = ((x - mx) ** 2).sum(axis=0)
            beta = ((x - mx) * (seen - my)).sum(axis=0) / np.maximum(vx, 1e-9)
            alpha = my - beta * mx
            err = float(np.sum((alpha + beta * x - seen) ** 2))
            if best is None or err < best[3]:
                best = (float(p), alpha, beta, err)
        assert best is not None
        p, alpha, beta, _ = best
        residual = np.abs(alpha + beta * ref**p - seen)
        misfit = float(np.median(residual)) if residual.size else math.inf
        return cls(alpha, beta, p, misfit, len(ref))
