"""What the reader measures of the whole frame, once, in one frozen value passed to every stage.

The blur (lens and motion) and JPEG are measured on the calibration markers' black-and-white
edges at each full marker check (`measure_on_markers`): how far a sharp edge is spread (all
directions, and across the worst one), the blur as a 2 x 2 covariance in the frame (its slant:
a motion), whether it is smeared one way (motion) and the blur along and across each zone's
stack axis; JPEG by its 8 x 8 blocks. The sensor's noise is measured on every frame, on the felt.
`FrameConditions` holds all of it; the stages read nothing else of the frame's quality.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import cv2
import numpy as np
import numpy.typing as npt

from vision.tuning import Tuning

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]


class ZoneBlur(NamedTuple):
    """The blur (px) along a zone's stack axis in the frame, across it, and how far its slant
    moves an outline's edge across at its ends."""

    along: float
    across: float
    slant: float


@dataclass(frozen=True, eq=False)
class FrameConditions:
    """The frame's blur, JPEG and noise, as measured (see the module's docstring)."""

    blur_px: float  # how far the lens and sensor spread a sharp edge (Gaussian sigma, px), every way
    spread_px: float  # the same across the direction that blurs them most (motion blur)
    blur_cov: FloatArray  # the same as a covariance in the frame (px^2)
    longest_px: float  # the blur along its longest axis (px)
    smeared: bool  # blurred much more one way than the other (motion blur)
    compressed: bool  # JPEG (MJPEG): 8 x 8 blocks seen
    zone_blur: Mapping[str, ZoneBlur] = field(default_factory=dict)  # by zone name
    noise: float = 0.0  # the sensor's noise on this frame (sigma, levels)
    smoothed: bool = False  # noisy: the patches are looked at box-averaged
    # on JPEG, the colour halved down the frame too (4:2:0, the default), not only across (4:2:2)
    # or not at all (4:4:4): what the camera's stream says (`Reader.jpeg_chroma`), not measured
    chroma_halved: bool = True

    @classmethod
    def sharp(cls, t: Tuning) -> FrameConditions:
        """Before the markers have been measured: a sharp raw frame."""
        return cls(t.sharp_edge_px, t.sharp_edge_px, np.eye(2) * t.sharp_edge_px**2, t.sharp_edge_px, False, False)

    def with_noise(self, noise: float, t: Tuning) -> FrameConditions:
        """These conditions on a frame whose sensor noise is `noise`."""
        return dataclasses.replace(self, noise=noise, smoothed=noise > t.noisy)

    def blur_for(self, zone: str) -> ZoneBlur:
        """The blur along and across the zone's stack axis (the frame's worst spread either way
        before the markers have been measured)."""
        return self.zone_blur.get(zone, ZoneBlur(self.spread_px, self.spread_px, 0.0))

    def count_doubt(self, t: Tuning) -> float:
        """How far from a whole number of chips a height may be and still count: less as the
        frame's edges blur beyond what the counting was measured on, less on a JPEG frame; on a
        frame smeared one way (and so counted at all: motion_max_px), motion_count_doubt."""
        doubt = t.max_count_doubt - t.count_doubt_per_px * max(self.spread_px - t.sharp_enough_px, 0.0)
        doubt = t.motion_count_doubt if self.smeared else doubt
        return min(doubt, t.jpeg_count_doubt) if self.compressed else doubt

    def colour_margin(self, px_per_chip: float, blur_px: float, t: Tuning) -> float:
        """The margin a chip's colour must have (min_colour_margin), more for chips few pixels
        tall, on a blurred frame (`blur_px`) and on a JPEG one."""
        wanted = t.min_colour_margin * max(1.0, t.colour_px_per_chip / px_per_chip) ** t.colour_margin_growth
        wanted *= max(1.0, blur_px / t.sharp_enough_px) ** t.colour_margin_per_blur
        return float(wanted * (t.jpeg_colour_margin if self.compressed else 1.0))


def measure_on_markers(
    gray: Image,
    markers: Sequence[tuple[Image, FloatArray]],
    axes: FloatArray,
    zones: Sequence[str],
    t: Tuning,
) -> FrameConditions:
    """The frame's blur and JPEG, from the calibration markers' patches of the gray frame (each
    with its corners in the patch), at least one; `axes` (Z, 2) each zone's stack axis in the
    frame (unit vectors, `zones` their names)."""
    spreads: list[tuple[FloatArray, float, float]] = []  # each marker's edges: their normal, spread, length
    for patch, corners in markers:
        spreads += _edge_spreads(patch, corners, t)
    blur_px = float(np.median([_edge_spread_px(patch, t) for patch, _ in markers]))
    compressed = _blockiness(gray) > t.jpeg_blockiness
    spread_px = float(np.median([_edge_spread_across_px(patch, t) for patch, _ in markers]))
    blur_cov = _blur_covariance(spreads, blur_px, t)
    across = axes @ np.array([[0.0, 1.0], [-1.0, 0.0]])
    along = np.sqrt(np.einsum("ni,ij,nj->n", axes, blur_cov, axes))
    beside = np.sqrt(np.einsum("ni,ij,nj->n", across, blur_cov, across))
    # how far the blur's slant moves an outline's edge across, at its ends (px)
    slant = np.abs(np.einsum("ni,ij,nj->n", across, blur_cov, axes)) / along
    zone_blur = {
        name: ZoneBlur(float(a), float(b), float(c)) for name, a, b, c in zip(zones, along, beside, slant, strict=True)
    }
    longest, shortest = (float(v) for v in np.sqrt(np.linalg.eigvalsh(blur_cov))[::-1])
    smeared = bool(
        spread_px > t.max_smear * blur_px
        or (longest > t.motion_slant_smear * shortest and longest > t.sharp_enough_px and shortest <= t.motion_sharp_px)
    )
    return FrameConditions(blur_px, spread_px, blur_cov, longest, smeared, compressed, zone_blur)


def _edge_spread_across_px(patch: Image, t: Tuning) -> float:
    """`_edge_spread_px` measured on the edges across the rows and across the columns
    separately, the larger: a motion blur spreads the edges across its direction only."""
    p = patch.astype(np.float32)
    low, high = np.percentile(p, (5, 95))
    spreads = []
    for dx, dy in ((1, 0), (0, 1)):
        g = np.abs(cv2.Sobel(p, cv2.CV_32F, dx, dy, ksize=3) / 8)
        energy = float(np.sum(g * g))
        if energy > 0.0:
            spreads.append(float((high - low) * float(g.sum()) / (2 * math.sqrt(math.pi) * energy)))
    return max(spreads, default=t.sharp_edge_px)


def _edge_spreads(patch: Image, corners: FloatArray, t: Tuning) -> list[tuple[FloatArray, float, float]]:
    """`_edge_spread_px` along each of a marker's two edge normals (its sides' directions in the
    frame, from its corners, relative to the patch), each over the pixels whose gradient points
    within 22.5 degrees of it: (the unit normal, the spread, px, the edges' length in px)."""
    p = patch.astype(np.float32)
    gx = cv2.Sobel(p, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(p, cv2.CV_32F, 0, 1, ksize=3) / 8
    low, high = np.percentile(p, (5, 95))
    contrast = float(high - low)
    out: list[tuple[FloatArray, float, float]] = []
    if contrast <= 0.0:
        return out
    for side in (corners[1] - corners[0], corners[3] - corners[0]):
        normal = np.array([-side[1], side[0]]) / max(float(np.linalg.norm(side)), 1e-9)
        along = np.abs(gx * float(normal[0]) + gy * float(normal[1]))
        beside = np.abs(gx * float(normal[1]) - gy * float(normal[0]))
        g = along[along > beside * t.marker_edge_tan]
        energy = float(np.sum(g * g))
        if energy > 0.0:
            total = float(g.sum())
            out.append((normal, contrast * total / (2 * math.sqrt(math.pi) * energy), total / contrast))
    return out


def _blur_covariance(spreads: list[tuple[FloatArray, float, float]], fallback: float, t: Tuning) -> FloatArray:
    """The blur as a 2 x 2 covariance (px^2) in the frame, from spreads measured along several
    edge normals: spread^2 = n' S n fitted by least squares (weighted by edge length). Normals
    in too few directions to tell the slant (one marker, or markers all square to the frame):
    the off-diagonal is 0."""
    if not spreads:
        return np.eye(2) * fallback**2
    a = np.array([[n[0] ** 2, 2 * n[0] * n[1], n[1] ** 2] for n, _, _ in spreads])
    b = np.array([s * s for _, s, _ in spreads])
    w = np.sqrt(np.array([length for _, _, length in spreads]))
    sol, _, rank, sv = np.linalg.lstsq(a * w[:, None], b * w, rcond=None)
    if rank < 3 or sv[-1] < t.min_slant_condition * sv[0]:
        sol, *_ = np.linalg.lstsq(a[:, [0, 2]] * w[:, None], b * w, rcond=None)
        sol = np.array([sol[0], 0.0, sol[1]])
    cov = np.array([[sol[0], sol[1]], [sol[1], sol[2]]])
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, (0.5 * fallback) ** 2)  # a spread is never much below a sharp edge's
    return np.asarray(vecs @ np.diag(vals) @ vecs.T, dtype=np.float64)


def _edge_spread_px(patch: Image, t: Tuning) -> float:
    """How far the camera spreads a sharp edge (Gaussian sigma, px), from a patch of sharp
    black-and-white edges (a calibration marker): across a blurred step of contrast C the
    gradient sums to C and its square to C^2 / (2 sqrt(pi) sigma), along any length of edge."""
    p = patch.astype(np.float32)
    gx = cv2.Sobel(p, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(p, cv2.CV_32F, 0, 1, ksize=3) / 8
    g = cv2.magnitude(gx, gy)
    low, high = np.percentile(p, (5, 95))
    energy = float(np.sum(g * g))
    if energy <= 0.0:
        return t.sharp_edge_px
    return float((high - low) * float(g.sum()) / (2 * math.sqrt(math.pi) * energy))


def _blockiness(gray: Image) -> float:
    """Mean level step across the columns where JPEG's 8 x 8 blocks meet, over the mean step
    elsewhere (every 4th row): about 1 for a raw frame, 1.5 and more for a JPEG one."""
    d = np.abs(np.diff(gray[::4].astype(np.int16), axis=1))
    at_edges = d[:, 7::8]
    inside = (float(d.sum()) - float(at_edges.sum())) / max(d.size - at_edges.size, 1)
    return (float(at_edges.mean()) + 0.05) / (inside + 0.05)
