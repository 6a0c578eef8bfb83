"""The reader's stages for one zone: what stands in it, one stage after another.

`Reader._zone` composes them, in this order; each has one job, and returns its value (with the
evidence it saw) or a reason to be unsure:

1. `find_stack`: is something there, is it one thing in the zone's circle, unhidden?
   -> `Blob`, or the zone's reading (empty, blocked, or unsure with the reason);
2. `measure_height`: the stack's place and count from its outline -> `Height`, or why unsure
   (flat, too tall, a frame too blurred or smeared, a height between two counts); in two steps,
   `count_stack` (the count before rounding) and `decide_height` (judged, by the count two facing
   views joined where vision/join.py gives one);
3. `check_outline`: the outline is that of one upright stack of that count -> `Outline`, or why not;
4. `check_square`: the stack stands square (its outline's stray across, a sliver of a chip's
   top showing on its side, its side's chip edges against n +- 1 chips; for a joined count, the
   sliver only) -> `Squareness`, its `why` set when not;
5. `name_colours`: every chip named at once (vision/stack_colours.py) -> `Colours`;
6. `check_colours`: the colours are sure (margin, misfit, a worn odd chip, hue, Lab) -> why
   unsure, or None.

Every stage gets the frame's conditions (`vision.conditions.FrameConditions`, measured once a
frame), the frame as it is sampled (`FrameView`: the camera's move followed, the tone curve
undone, white-balanced by the felt) and the reader's `Tuning` (vision/tuning.py); none keeps state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.chips import CHIP_DIAMETER_MM, CHIP_THICKNESS_MM, ChipSet
from vision.conditions import FrameConditions, ZoneBlur
from vision.geometry import CameraModel, Pose, project
from vision.layout import Zone
from vision.readings import ZoneReading
from vision.stack_colours import SAMPLE_HEIGHTS, NamedStack, _middle, namer_for
from vision.tuning import Tuning

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]

R = CHIP_DIAMETER_MM / 2


@dataclass
class ZoneGeometry:
    """A zone's patch of the felt, resampled at 1 mm a pixel: v away from the camera, u across."""

    zone: Zone
    away: FloatArray  # unit vector on the felt, from below the camera through the zone's centre
    across: FloatArray  # unit vector perpendicular to it
    distance: float  # from below the camera to the zone's centre, mm
    top: int  # first row of this zone's patch in the stacked patches
    rows: int
    v_min: float  # v of the patch's first row
    half_width: int  # the patch's columns either side of the zone's centre (u = -half_width .. half_width)
    legal: Mask  # where a stack standing in the zone can show
    outside: Mask  # the rest of the patch
    legal_area: int  # pixels in `legal`
    legal_px: npt.NDArray[np.int32]  # that region's outline in the frame
    in_view: bool
    stretch: float  # mm along v per mm across, for the same distance in the frame
    px_per_mm: float  # frame pixels per mm across, at the zone's centre
    box: tuple[int, int, int, int]  # the frame's pixels the patch samples (x0, y0, x1, y1), with a margin

    def to_table(self, u: float, v: float) -> FloatArray:
        return np.asarray(np.array(self.zone.centre) + u * self.across + v * self.away, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class FrameView:
    """The frame as the stages sample it: through the pose and the camera's small move followed
    (`move`, 2 x 3, calibration pixels -> now; None: none), the tone curve undone (`lut`, None:
    a plain gain) and white-balanced by the felt (`gain`, BGR)."""

    frame: Image
    lut: npt.NDArray[np.uint8] | None
    gain: FloatArray
    move: FloatArray | None
    camera: CameraModel
    pose: Pose
    foot: FloatArray  # the point of the felt under the camera (x, y, mm)

    def project(self, points: FloatArray) -> FloatArray:
        """Table points (N, 3), mm -> calibration pixels."""
        return project(self.camera, self.pose, points)

    def in_frame(self, px: FloatArray) -> npt.NDArray[np.float32]:
        """Calibration pixels -> pixels of the frame now (through any move followed)."""
        return (px if self.move is None else moved(px, self.move)).astype(np.float32)

    def sample(self, px: npt.NDArray[np.float32]) -> FloatArray:
        """(N, 3) BGR at frame pixels `px` (`in_frame`), the tone curve undone, times the gain."""
        sampled = cv2.remap(self.frame, px[None, :, 0], px[None, :, 1], cv2.INTER_LINEAR)
        if self.lut is not None:
            sampled = cv2.LUT(sampled, self.lut)
        # each level as a double, times the gain (one call)
        return np.asarray(np.multiply(sampled[0], self.gain, dtype=np.float64))

    def around(self, centre: FloatArray, angles: FloatArray) -> FloatArray:
        """(A, 2) unit directions on the felt from a stack's centre, `angles` (radians) either side
        of the one toward the camera's foot: round the side of the stack the camera sees."""
        toward = self.foot - centre
        toward /= np.linalg.norm(toward)
        side = np.array([toward[1], -toward[0]])
        cos, sin = _cos_sin(angles)
        return np.asarray(cos * toward + sin * side, dtype=np.float64)


_COS_SIN: dict[bytes, tuple[FloatArray, FloatArray]] = {}


def _cos_sin(angles: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(A, 1) cosines and sines of `angles`: the stages' angles are a few tuned constants, each
    worked out once rather than for every stack."""
    key = angles.tobytes()
    got = _COS_SIN.get(key)
    if got is None:
        if len(_COS_SIN) > 64:
            _COS_SIN.clear()
        got = _COS_SIN[key] = (np.cos(angles)[:, None], np.sin(angles)[:, None])
    return got


# -- 1. is there one stack? -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Blob:
    """What stands in the zone's patch: one connected thing, where it can be seen (`care`: the
    pixels no nearer stack hides; None: all of them)."""

    mask: Mask
    care: Mask | None


def find_stack(
    seen: Mask,
    covered: Mask | None,
    g: ZoneGeometry,
    colours: Image,
    gain: FloatArray,
    felt: npt.NDArray[np.float32],
    ink: npt.NDArray[np.float32],
    t: Tuning,
) -> Blob | ZoneReading:
    """The one thing standing in the zone, from the pixels that are not felt or ink (`seen`),
    those a nearer stack hides (`covered`) and the patch's colours; else the zone's reading:
    empty ("ok", 0), "blocked" (something other than a stack covers it) or "unsure" (why)."""
    care = ~covered if covered is not None else None  # None: every pixel counts
    stray = seen & g.outside if care is None else seen & g.outside & care
    if np.count_nonzero(stray) > t.stray_pixels:
        # felt or its printing in a shadow (a stack's, from another light) is not something
        stray &= ~_in_shadow(colours, gain, felt, ink, t)
    if np.count_nonzero(stray) > t.stray_pixels:
        return ZoneReading.blocked(
            "something other than a stack in its circle covers the zone (a hand? chips over the line?)"
        )
    inside = seen & g.legal if care is None else seen & g.legal & care
    if np.count_nonzero(inside) < t.empty_pixels:
        if covered is not None and np.count_nonzero(covered & g.legal) > 0.2 * g.legal_area:
            return ZoneReading.unsure("a nearer stack hides the zone")
        return ZoneReading.ok(())
    # 16-bit labels (a patch has far fewer than 65536 pixels): OpenCV labels them twice as fast
    count, labels, stats, _ = cv2.connectedComponentsWithStats(inside.view(np.uint8), connectivity=8, ltype=cv2.CV_16U)
    big = np.flatnonzero(stats[1:count, cv2.CC_STAT_AREA] >= t.empty_pixels) + 1
    if len(big) != 1:
        return ZoneReading.unsure(f"{len(big)} separate things in the zone: one stack a zone is read")
    blob = labels == big[0]
    if covered is not None and np.count_nonzero(
        cv2.dilate(blob.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & covered
    ):
        return ZoneReading.unsure("a nearer stack hides part of this stack")
    return Blob(blob, care)


# -- 2. its height --------------------------------------------------------------------------


@dataclass(frozen=True)
class Height:
    """The stack's place in the patch (its base's centre u0, v0, mm), its top's scale k about
    the camera's foot, how much bigger than it is its outline looks (mm), its height (mm) and
    count (`chips_f` before rounding, `n`), and the blur along and across it."""

    u0: float
    v0: float
    k: float
    grown: float
    height_mm: float
    chips_f: float
    n: int
    blur: ZoneBlur
    joined: float | None = None  # the count two facing views' counts joined gave, when it decided `n`


def measure_height(
    blob: Blob,
    score: npt.NDArray[np.float32],
    g: ZoneGeometry,
    eye_height: float,
    max_chips: int,
    cond: FrameConditions,
    t: Tuning,
    view: FrameView | None = None,
    felt: tuple[float, float, float] | None = None,
    joined: float | None = None,
) -> Height | str:
    """The stack's base from its outline's near half, its top from the far edge, and so its
    count, corrected for what the far edge still reads long (the pixel's size, the frame's blur,
    the outline's growth; on a smeared frame the blur along and across the stack; on JPEG, the
    colour's halved resolution, by the top's colour against the felt's (`view` and `felt`, RGB,
    given: `top_chroma`)); why unsure when no count can be trusted. With `joined`, the count two
    facing views' counts joined give (`count_stack`, vision/join.py), that count decides in place
    of this view's own."""
    counted = count_stack(blob, score, g, eye_height, cond, t, view, felt)
    if isinstance(counted, str):
        return counted
    return decide_height(counted, max_chips, cond, t, joined)


def count_stack(
    blob: Blob,
    score: npt.NDArray[np.float32],
    g: ZoneGeometry,
    eye_height: float,
    cond: FrameConditions,
    t: Tuning,
    view: FrameView | None = None,
    felt: tuple[float, float, float] | None = None,
) -> Height | str:
    """`measure_height`'s measure: the stack's place, height and count before rounding, with `n`
    its rounding, not yet judged."""
    stack = _measure(blob.mask, score, g.v_min, g.half_width, g.distance, eye_height, g.stretch, t.far_edge_columns)
    if stack is None:
        return "the outline is not one upright stack"
    u0, v0, k, grown = stack
    height = eye_height * (1 - 1 / k)
    bias = (
        t.height_bias_chips
        + t.height_bias_per_mm_pixel / g.px_per_mm
        + t.height_bias_per_mm_blur * math.hypot(cond.blur_px / g.px_per_mm, t.box_sigma_mm if cond.smoothed else 0.0)
        + t.height_bias_per_mm_grown * grown
    )
    blur = cond.blur_for(g.zone.name)
    along, across = blur.along, blur.across
    if cond.smeared:  # the far edge grows with the blur along the stack, the base's sides with that across
        bias += (
            t.motion_bias_per_mm_along * (along - cond.blur_px) + t.motion_bias_per_mm_across * (across - cond.blur_px)
        ) / g.px_per_mm
    if cond.compressed:
        bias += t.jpeg_count_bias
        if view is not None and felt is not None:
            cb, cr = top_chroma(g.to_table(u0, v0), height, g, view, felt)
            bias += t.jpeg_count_bias_per_cb * cb + t.jpeg_count_bias_per_cr * cr
    chips_f = height / CHIP_THICKNESS_MM - bias
    return Height(u0, v0, k, grown, height, chips_f, round(chips_f), blur)


def decide_height(
    counted: Height, max_chips: int, cond: FrameConditions, t: Tuning, joined: float | None = None
) -> Height | str:
    """The count `counted` (`count_stack`) judged: a whole count within the frame's doubt, or why
    not. With `joined` (two facing views' counts joined) that count is judged in place of the
    view's own, and the `Height` carries it."""
    chips_f = counted.chips_f if joined is None else joined
    blur, height = counted.blur, counted.height_mm
    along, across = blur.along, blur.across
    n = round(chips_f)
    if n < 1:
        return "something flat lies in the zone, not chips"
    if n > max_chips:
        return f"a stack taller than {max_chips} chips"
    longest = cond.longest_px
    if cond.smeared and longest > t.motion_max_px:
        return (
            f"the frame is smeared one way (motion blur: edges spread {longest:.1f} px one way, "
            f"{along:.1f} px along this stack, {across:.1f} px across it; at most {t.motion_max_px:.1f} px "
            "one way can be counted): chips are not counted"
        )
    doubt = cond.count_doubt(t)
    if doubt <= 0.0:
        return (
            f"the frame is too blurred to count chips (edges spread {cond.spread_px:.1f} px; "
            f"at most {t.sharp_enough_px + t.max_count_doubt / t.count_doubt_per_px:.1f} px can be counted)"
        )
    if abs(chips_f - n) > doubt:
        if joined is not None:
            return (
                f"the two views' count ({joined:.2f} chips, this view's {counted.chips_f:.2f}) is between "
                f"{math.floor(chips_f)} and {math.ceil(chips_f)} chips"
            )
        return f"the stack's height ({height:.1f} mm) is between {math.floor(chips_f)} and {math.ceil(chips_f)} chips"
    return replace(counted, n=n, joined=joined)


_RIM_ANGLES = np.linspace(-0.25, 0.25, 5)  # radians either side of straight away from the camera
_RIM_MM = (R - 5.0, R - 3.0)  # from the top's centre


def top_chroma(
    centre: FloatArray, height_mm: float, g: ZoneGeometry, view: FrameView, felt: tuple[float, float, float]
) -> tuple[float, float]:
    """How far the stack's top, just inside its far edge (the edge its height is taken from),
    is from the felt in JPEG's colour axes (Cb, Cr; RGB levels, white-balanced by the felt):
    JPEG's halved and coarsely quantised colour moves that edge by them (`Tuning.jpeg_count_bias_per_cb`)."""
    dirs = np.cos(_RIM_ANGLES)[:, None] * g.away + np.sin(_RIM_ANGLES)[:, None] * g.across
    ring = np.concatenate([centre + r * dirs for r in _RIM_MM])
    pts = np.column_stack([ring, np.full(len(ring), height_mm)])
    rgb = view.sample(view.in_frame(view.project(pts)))[:, ::-1].mean(axis=0)
    d = _YCC[1:] @ (rgb - np.asarray(felt, dtype=np.float64))
    return float(d[0]), float(d[1])


# -- 3. one upright stack? --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Outline:
    """The outline an upright stack of the count would show (u, v points of the patch) and its
    top's scale about the camera's foot."""

    points: FloatArray
    k: float

    def on_felt(self, height: Height, g: ZoneGeometry) -> FloatArray:
        """The outline on the felt (x, y, 0, mm), centred on the stack's base."""
        centre = g.to_table(height.u0, height.v0)
        u, v = self.points[:, :1] - height.u0, self.points[:, 1:] - height.v0
        return np.concatenate([centre + u * g.across + v * g.away, np.zeros((len(self.points), 1))], axis=1)


def check_outline(blob: Blob, height: Height, g: ZoneGeometry, eye_height: float, t: Tuning) -> Outline | str:
    """The outline seen against the one an upright stack of `height.n` chips there would show."""
    kn = eye_height / (eye_height - height.n * CHIP_THICKNESS_MM)
    outline = hull_outline(height.u0, height.v0, R, kn, g.distance)
    predicted = np.zeros_like(blob.mask, dtype=np.uint8)
    corners = np.round((outline - [-g.half_width, g.v_min]) * 16).astype(np.int32)
    cv2.fillConvexPoly(predicted, corners, 1, cv2.LINE_8, 4)
    edge = cv2.morphologyEx(predicted, cv2.MORPH_GRADIENT, _SQUARE_3)
    wrong = (predicted.view(np.bool_) ^ blob.mask) & (edge == 0)
    disagree = np.count_nonzero(wrong if blob.care is None else wrong & blob.care)
    if disagree > t.max_shape_mismatch * np.count_nonzero(predicted):
        return "the outline is not one upright stack"
    return Outline(outline, kn)


# -- 4. does it stand square? -----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Squareness:
    """What the not-square checks saw: the stack's centre on the felt, its outline's stray
    across (`_misalignment`: the top's offset, the largest and the rms stray, mm), how well the
    side's chip edges fit n - 1, n and n + 1 chips (`side_bands`), its plainest half chip
    (`plainest_band`), the rival count that fits the side best and how much better it fits
    (`closer`: >= 0, as well or better). `why` is the reason it is not square, "" when it is;
    `rival_reason` the one given when the rival fits as well and the colours are not sure."""

    centre: FloatArray
    square: tuple[float, float, float]
    bands: dict[int, float]
    sliver: tuple[float, float]
    rival: int | None
    closer: float
    why: str
    rival_reason: str
    side: SideSamples | None = None  # the side as sampled for these checks and for the colours


def check_square(
    blob: Blob,
    score: npt.NDArray[np.float32],
    height: Height,
    outline: Outline,
    g: ZoneGeometry,
    view: FrameView,
    cond: FrameConditions,
    t: Tuning,
) -> Squareness:
    """Across the line of sight a lean or sloppy chips show in the outline (its row middles
    stray from one upright stack's); along it the side tells: a sliver of a chip's top face
    between two chips, or chip edges falling in step with another count as well."""
    n = height.n
    square = _misalignment(blob.mask, score, height.u0, height.v0, outline.k, g.half_width, g.v_min, g.distance)
    centre = g.to_table(height.u0, height.v0)
    side = sample_side(centre, height.chips_f * CHIP_THICKNESS_MM, n, view, t)
    bands = side_bands(centre, height.chips_f * CHIP_THICKNESS_MM, n, view, t, side.bands)
    sliver = plainest_band(centre, n, view, t, side.sliver)
    rivals = [m for m in (n - 1, n + 1) if m in bands]
    rival = max(rivals, key=lambda m: bands[m]) if n in bands and rivals else None
    closer = bands[rival] - bands[n] if rival is not None else -math.inf  # >= 0: the rival fits as well
    rival_reason = (
        f"the stack is not square (the edges down its side fall in step with {rival} chips as well as "
        f"with the {n} its height says: a stack leaning along the line of sight looks taller or shorter)"
    )
    along = height.blur.along
    # the chips' edges wash out with the blur along the stack's axis (across it they stay)
    sharp = (along if cond.smeared else cond.spread_px) <= t.sharp_enough_px
    lenient = n < t.leaning_chips and not cond.compressed and sharp
    # on JPEG the side's chip edges (a period of 2.5-2.8 px) are what the 8 x 8 blocks quantise
    # away: a rival fitting them as well says little there, and on a short stack (a lean needs
    # height to move a top by a chip) whose height is near a whole count the colours decide
    # (`Colours.sure`)
    washed = cond.compressed and sharp and n < t.leaning_chips and abs(height.chips_f - n) <= t.jpeg_rival_doubt
    why = ""
    plain = sliver[0] < t.sliver_share
    plain_why = (
        f"the stack is not square (a band of its side {sliver[1]:.1f} chips up is as plain as a chip's top: "
        "a chip pushed off the one below shows a sliver of that chip's top face, which the height counts)"
    )
    if height.joined is not None:
        # a count two facing views joined is free of the top's place along the line of sight, which
        # the outline's stray and the side's edges stand in for: only the sliver is asked (issue 36,
        # ninth round: on tuning seeds 0-23, both views' colours required to agree, no wrong value
        # under sloppy 2 mm or leaning 0.4 mm a chip without those two checks)
        why = plain_why if plain else ""
    # a blur slanted to the stack's axis (motion) moves its outline's row middles across near its ends
    elif square[1] > t.max_stray_mm + (height.blur.slant / g.px_per_mm if cond.smeared else 0.0):
        why = (
            f"the stack is not square (its outline strays {square[1]:.1f} mm across from one upright stack: "
            "chips leaning or sloppy, and as much along the line of sight would change the count)"
        )
    elif plain:
        why = plain_why
    elif closer >= (t.short_band_margin if lenient else 0.0) and not washed:
        why = rival_reason
    elif (
        lenient
        and rival is not None
        and closer >= -t.rival_near
        and (rival - n) * (height.chips_f - n) > t.rival_height
    ):
        # two weak signs agreeing: the side does not tell n from the rival, and the height leans to it
        why = (
            f"the stack is not square (its height, {height.chips_f:.2f} chips, leans toward the {rival} chips "
            f"its side's edges fit about as well as {n}: a chip pushed along the line of sight moves its top)"
        )
    return Squareness(centre, square, bands, sliver, rival, closer, why, rival_reason, side)


@dataclass(frozen=True, eq=False)
class SideSamples:
    """A stack's side as the not-square checks and the colours sample it (`side_bands`,
    `plainest_band`, `name_colours`: BGR, the tone curve undone, times the gain), every point
    projected and sampled at once: each point's numbers are those of its own stage's projecting
    and sampling (both work point by point), without two of the three passes' calls."""

    bands: FloatArray
    sliver: FloatArray | None  # None: a stack too short to hold a half chip away from both ends
    colours: FloatArray
    colours_px: npt.NDArray[np.float32]  # where `colours` was sampled (frame pixels)


def sample_side(centre: FloatArray, top_mm: float, n: int, view: FrameView, t: Tuning) -> SideSamples:
    """The side of a stack of `n` chips standing on `centre` (its top at `top_mm`), sampled for
    the three stages that read it (see `SideSamples`)."""
    band_pts = _band_points(centre, top_mm, n, view, t)
    sliver_pts = _sliver_points(centre, n, view, t)
    colour_pts = _colour_points(centre, n, view, t)
    parts = [band_pts, colour_pts] if sliver_pts is None else [band_pts, colour_pts, sliver_pts]
    projected = view.project(np.concatenate(parts))
    nb, nc = len(band_pts), len(colour_pts)
    band_px = view.in_frame(projected[:nb])
    colours_px = view.in_frame(projected[nb : nb + nc])
    pxs = [band_px, colours_px]
    if sliver_pts is not None:
        pxs.append(_sliver_px(projected[nb + nc :], n, view, t))
    rgb = view.sample(np.concatenate(pxs))
    sliver = rgb[nb + nc :] if sliver_pts is not None else None
    return SideSamples(rgb[:nb], sliver, rgb[nb : nb + nc], colours_px)


def _band_points(centre: FloatArray, top_mm: float, n: int, view: FrameView, t: Tuning) -> FloatArray:
    """`side_bands`' points on the side (steps x angles, table mm)."""
    dirs = view.around(centre, t.band_angles)
    steps = t.band_steps_per_chip * max(n, 1)
    z = (np.arange(steps) + 0.5) / steps * top_mm
    ring = centre + R * dirs
    return np.concatenate(
        [np.repeat(ring[None], steps, axis=0), np.repeat(z[:, None, None], len(dirs), axis=1)], axis=2
    ).reshape(-1, 3)


def side_bands(
    centre: FloatArray, top_mm: float, n: int, view: FrameView, t: Tuning, sampled: FloatArray | None = None
) -> dict[int, float]:
    """How well the side's colour changes (edge spots, changes of denomination) fall on the
    boundaries between chips when the side, from the felt to the top's height, holds m chips
    (m = n - 1, n, n + 1): for each, the mean colour change along the side at the m - 1
    boundaries against that at the bands' middles, as (boundaries - middles) / (both).
    `sampled`: the side already sampled there (`sample_side`)."""
    angles = len(t.band_angles)
    steps = t.band_steps_per_chip * max(n, 1)
    if sampled is None:
        sampled = view.sample(view.in_frame(view.project(_band_points(centre, top_mm, n, view, t))))
    # channel first (3, steps, angles): numpy's loops over an axis of 3 cost several times the arithmetic
    rgb = np.ascontiguousarray(sampled.reshape(steps, angles, 3).transpose(2, 0, 1))
    step = rgb[:, 1:] - rgb[:, :-1]
    step *= step
    change = np.sqrt(step[0] + step[1] + step[2])  # (steps - 1, angles), at z between samples
    at = (np.arange(steps - 1) + 1.0) / steps * top_mm
    grad = _mean(change, 1)
    counts = [m for m in (n - 1, n, n + 1) if m >= 2]
    # every count's boundaries and middles interpolated at once (np.interp is elementwise: the
    # same numbers as one call each), then each mean taken over its own contiguous slice
    where = np.concatenate(
        [x for m in counts for x in ((top_mm / m) * np.arange(1, m), (top_mm / m) * (np.arange(m) + 0.5))]
    )
    profile = np.interp(where, at, grad)
    out: dict[int, float] = {}
    start = 0
    for m in counts:
        b = float(_mean(profile[start : start + m - 1], 0))
        c = float(_mean(profile[start + m - 1 : start + 2 * m - 1], 0))
        start += 2 * m - 1
        out[m] = (b - c) / max(b + c, 1e-6)
    return out


def _sliver_points(centre: FloatArray, n: int, view: FrameView, t: Tuning) -> FloatArray | None:
    """`plainest_band`'s points: the side at each chip's boundary ((n + 1) x angles, table mm);
    None when the stack is too short to hold a half chip half a chip from both ends."""
    if 4 * n < 6:
        return None
    dirs = view.around(centre, t.sliver_angles)
    ring = centre + R * dirs
    # the side projected at each chip's boundary only, the heights between interpolated (a
    # vertical line's image over 3.3 mm is straight to far below a thousandth of a pixel):
    # projecting every sample cost ms on a tall stack
    levels = np.arange(n + 1) * CHIP_THICKNESS_MM
    return np.concatenate(
        [np.repeat(ring[None], n + 1, axis=0), np.repeat(levels[:, None, None], len(dirs), axis=1)], axis=2
    ).reshape(-1, 3)


def _sliver_px(projected: FloatArray, n: int, view: FrameView, t: Tuning) -> npt.NDArray[np.float32]:
    """`plainest_band`'s sample pixels from its points projected: the heights between each two
    chip boundaries interpolated (steps x angles)."""
    ends = projected.reshape(n + 1, len(t.sliver_angles), 2)
    f = ((np.arange(t.sliver_steps_per_chip) + 0.5) / t.sliver_steps_per_chip)[None, :, None, None]
    return view.in_frame((ends[:-1, None] + (ends[1:] - ends[:-1])[:, None] * f).reshape(-1, 2))


def plainest_band(
    centre: FloatArray, n: int, view: FrameView, t: Tuning, sampled: FloatArray | None = None
) -> tuple[float, float]:
    """How plain the side's plainest half chip is (see `Tuning.sliver_share`): the least spread
    across the angles of a half chip at least half a chip from the felt and from the top, over
    the side's median spread a quarter chip, and how many chips up it is (its middle); (inf, 0)
    when the stack is too short to hold one. `sampled`: the side already sampled there (`sample_side`)."""
    quarter = t.sliver_steps_per_chip // 4
    quarters = 4 * n
    if quarters < 6:  # no half chip half a chip from both ends
        return math.inf, 0.0
    steps = t.sliver_steps_per_chip * n
    if sampled is None:
        pts = _sliver_points(centre, n, view, t)
        assert pts is not None
        sampled = view.sample(_sliver_px(view.project(pts), n, view, t))
    # channel first (3, steps, angles): numpy's loops over an axis of 3 cost several times the arithmetic
    rgb = np.ascontiguousarray(sampled.reshape(steps, len(t.sliver_angles), 3).transpose(2, 0, 1))
    off = rgb - _mean(rgb, 2, keepdims=True)
    off *= off
    deviation = np.sqrt(_mean(off, 2))  # 3, steps: each channel's spread across the angles
    spread = _mean((((deviation[0] + deviation[1]) + deviation[2]) / 3).reshape(quarters, quarter), 1)
    inner = spread[2 : quarters - 2]
    halves = (inner[:-1] + inner[1:]) / 2
    at = int(np.argmin(halves))
    typical = max(float(_middle(spread, 0)), 1e-6)
    return float(halves[at]) / typical, (at + 3) / 4


# -- 5. its colours ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Colours:
    """Every chip of the stack named at once (`named`), how tall a chip is in the frame, the
    margin its colours must have there (`wanted`), and the chip set's values (by the namer's index)."""

    named: NamedStack
    px_per_chip: float
    wanted: float
    values: tuple[int, ...]
    compressed: bool = False  # named on a JPEG frame (`check_colours` asks odd chips more there)

    @property
    def margin(self) -> float:
        """The weakest chip's margin."""
        return float(self.named.margins.min())

    @property
    def chips(self) -> tuple[int, ...]:
        """Each chip's value, bottom to top."""
        return tuple(self.values[i] for i in self.named.colours)

    def sure(self, t: Tuning, compressed: bool = False) -> bool:
        """Sure enough that a rival count fitting the side as well may be overruled (`Tuning.sure_colours`;
        `jpeg_sure_colours` on a JPEG frame, whose margin asked is already `jpeg_colour_margin` times more)."""
        return not self.margin < (t.jpeg_sure_colours if compressed else t.sure_colours) * self.wanted

    def to_dict(self) -> dict[str, Any]:
        named = self.named
        return {
            "margin": self.margin,
            "misfit": float(named.misfit),
            "wanted": self.wanted,
            "margins": [float(m) for m in named.margins],
            "fits": [float(f) for f in named.fits] if named.fits is not None else [],
            "named": [self.values[i] for i in named.colours],
            "rivals": [self.values[i] for i in named.rivals],
            "hue_leads": [named.hue_lead(i, r)[0] for i, r in enumerate(named.rivals)],
            "hue_off": named.hue_off.tolist() if named.hue_off is not None else [],
            "hue_gaps": named.hue_gaps.tolist() if named.hue_gaps is not None else [],
            "lab_leads": [named.lab_lead(i)[1] for i in range(len(named.colours))],
            "px_per_chip": self.px_per_chip,
        }


def _colour_points(centre: FloatArray, n: int, view: FrameView, t: Tuning) -> FloatArray:
    """`name_colours`' points: the near side at each chip's SAMPLE_HEIGHTS (chips x heights x
    angles), then the felt just in front of the stack (one an angle), table mm."""
    dirs = view.around(centre, t.side_angles)
    angles = len(dirs)
    # on the side itself: a point inside it would show the side a fraction of a chip higher
    ring = centre + R * dirs
    z = ((np.arange(n)[:, None] + np.array(SAMPLE_HEIGHTS)[None, :]) * CHIP_THICKNESS_MM).reshape(-1)
    on_side = np.concatenate(
        [np.repeat(ring[None], len(z), axis=0), np.repeat(z[:, None, None], angles, axis=1)], axis=2
    ).reshape(-1, 3)
    on_felt = np.concatenate([centre + (R + t.felt_beside_mm) * dirs, np.zeros((angles, 1))], axis=1)
    return np.concatenate([on_side, on_felt])


def name_colours(
    centre: FloatArray,
    n: int,
    blur: ZoneBlur,
    view: FrameView,
    cond: FrameConditions,
    chips: ChipSet,
    felt: tuple[float, float, float],
    t: Tuning,
    side: SideSamples | None = None,
) -> Colours:
    """Each chip's colour, bottom to top, from the colours down the stack's near side, every
    chip named at once with the blur between neighbouring chips modelled (vision/stack_colours.py).
    On a frame smeared one way the namer models the blur along the stack's side (it mixes
    neighbouring chips), and the margin asked grows with the blur along its longest axis (a blur
    across the side mixes in what the namer does not model: the felt beside the stack, its top
    face); else the frame's `spread_px` for both. `side`: the side already sampled there
    (`sample_side`, by the not-square checks)."""
    px, sampled = colour_samples(centre, n, view, t, side)
    return name_sampled(px, sampled, n, blur, cond, chips, felt, t)


def colour_samples(
    centre: FloatArray, n: int, view: FrameView, t: Tuning, side: SideSamples | None = None
) -> tuple[npt.NDArray[np.float32], FloatArray]:
    """Where `name_colours` samples a stack of `n` chips standing at `centre` in the frame, and
    the colours there (white-balanced BGR): down the near side at each chip's SAMPLE_HEIGHTS, then
    the felt in front of it (`side`: already sampled there by the not-square checks)."""
    if side is not None:
        return side.colours_px, side.colours
    px = view.in_frame(view.project(_colour_points(centre, n, view, t)))
    return px, view.sample(px)


def name_sampled(
    px: npt.NDArray[np.float32],
    sampled: FloatArray,
    n: int,
    blur: ZoneBlur,
    cond: FrameConditions,
    chips: ChipSet,
    felt: tuple[float, float, float],
    t: Tuning,
) -> Colours:
    """`name_colours` from the colours `colour_samples` gave (or their mean over frames of one
    still stack: vision/join.py's `ColourJoin`)."""
    along, blurred = (blur.along, cond.longest_px) if cond.smeared else (cond.spread_px, cond.spread_px)
    angles = len(t.side_angles)
    on_side = n * len(SAMPLE_HEIGHTS) * angles
    middle = angles // 2  # how tall a chip is in the frame, from the lowest and highest samples
    rise = float(np.linalg.norm(px[on_side - angles + middle] - px[middle]))
    px_per_chip = rise / (n - 1 + SAMPLE_HEIGHTS[-1] - SAMPLE_HEIGHTS[0])
    rgb = sampled[:, ::-1]
    # the felt's colour bled into the bottom chip (Tuning.jpeg_bottom_chroma), by a JPEG whose
    # colour is halved down the frame (4:2:0): not by one that keeps it there (Reader.jpeg_chroma)
    if cond.compressed and cond.chroma_halved:
        rgb = _unmix_bottom_chroma(rgb, angles, on_side, t)
    namer = namer_for(tuple(c.colour for c in chips.chips), felt)
    # blur beyond what the namer's blurs were measured on is added to each of them
    extra = math.sqrt(max(along**2 - t.sharp_enough_px**2, 0.0))
    named = namer.name(rgb[:on_side].reshape(n, len(SAMPLE_HEIGHTS), angles, 3), rgb[on_side:], px_per_chip, extra)
    wanted = cond.colour_margin(px_per_chip, blurred, t)
    return Colours(named, px_per_chip, wanted, tuple(c.value for c in chips.chips), cond.compressed)


# -- 6. are they sure? ------------------------------------------------------------------------


def check_colours(colours: Colours, cond: FrameConditions, t: Tuning) -> str | None:
    """Why the colours named are not sure, or None: the side fits no sequence of chips; a chip
    could be more than one colour (its margin under the one asked); an odd chip (unlike every
    chip beside it) fits its colour so badly that its lead is not enough; an odd chip's hue does
    not confirm its name; a chip's own colour in Lab is nearer another's."""
    named = colours.named
    if named.misfit > t.max_colour_misfit:
        return "the colours down the stack's side fit no sequence of chips"
    # chips fewer pixels tall than at the two-camera mount leave the blur and the bands'
    # offset less certain: more margin is asked of them
    wanted = colours.wanted
    if float(named.margins.min()) < wanted:
        return f"chip {named.weakest + 1} from the bottom could be more than one colour"
    if named.fits is not None:
        # an odd chip that fits its colour badly needs a lead that grows with its misfit
        chosen = np.asarray(named.colours)
        odd = np.ones(len(chosen), dtype=bool) if len(chosen) > 1 else np.zeros(1, dtype=bool)
        odd[1:] &= chosen[1:] != chosen[:-1]
        odd[:-1] &= chosen[:-1] != chosen[1:]
        limit = t.fit_limit_odd * (t.jpeg_colour_margin if cond.compressed else 1.0)
        asked = wanted + np.where(odd, t.fit_lead * np.maximum(0.0, named.fits - limit), 0.0)
        short = named.margins / asked
        if float(short.min()) < 1.0:
            i = int(np.argmin(short))
            value = colours.values[named.colours[i]]
            rival = named.rival(i)
            nearest = f"{value}, then {colours.values[rival]}" if rival is not None else f"{value}"
            return (
                f"chip {i + 1} from the bottom fits no chip colour well (worn or dirty?): nearest {nearest}, "
                "not far enough apart for a chip so far from its colour"
            )
        hue = _hue_doubt(colours, odd, t)
        if hue is not None:
            return hue
    return _lab_doubt(colours, t)


def possible(colours: Colours, t: Tuning, opinions: bool = True) -> tuple[frozenset[int], ...] | None:
    """What each chip could be, bottom to top, by what `check_colours` asks (vision/join.py: a view
    that could not name a stack may still confirm another view's chips, issue 36's tenth round):
    the colour named alone when its margin passes; else each candidate colour within the margin
    asked of it (the odd chip's lead included), and a colour the hue or the Lab check finds the
    chip nearer. None when the side fits no sequence of chips (no chip named at all). Without
    `opinions` the hue and Lab checks are not asked (they cost a third of the namer's time where
    they were not worked out yet): what they would add is only ever more colours."""
    named = colours.named
    if named.misfit > t.max_colour_misfit or named.options is None or named.option_gaps is None:
        return None
    chosen = np.asarray(named.colours)
    odd = np.ones(len(chosen), dtype=bool) if len(chosen) > 1 else np.zeros(1, dtype=bool)
    odd[1:] &= chosen[1:] != chosen[:-1]
    odd[:-1] &= chosen[:-1] != chosen[1:]
    asked = np.full(len(chosen), colours.wanted)
    if named.fits is not None:
        limit = t.fit_limit_odd * (t.jpeg_colour_margin if colours.compressed else 1.0)
        asked = asked + np.where(odd, t.fit_lead * np.maximum(0.0, named.fits - limit), 0.0)
    out: list[set[int]] = []
    for i, c in enumerate(named.colours):
        near = {int(o) for o, gap in zip(named.options[i], named.option_gaps[i], strict=True) if gap < asked[i]}
        out.append({colours.values[k] for k in near | {c}})
    if not opinions:
        return tuple(frozenset(s) for s in out)
    if named.fits is not None:
        for i in (int(j) for j in np.flatnonzero(odd)):
            rivals = {named.rival(i), *(named.colours[j] for j in (i - 1, i + 1) if 0 <= j < len(named.colours))}
            for other in (c for c in rivals if c is not None and c != named.colours[i]):
                lead, gap = named.hue_lead(i, other)
                if gap > t.hue_min_gap and lead < t.hue_share * gap:
                    out[i].add(colours.values[other])
    off = named.lab_off
    if off is not None and off.shape[1] >= 2:
        for i, c in enumerate(named.colours):
            lead = off[i] - off[i, c]
            out[i].update(colours.values[k] for k in np.flatnonzero(lead < -t.lab_lead) if k != c)
    return tuple(frozenset(s) for s in out)


def _lab_doubt(colours: Colours, t: Tuning) -> str | None:
    """The third opinion on every chip, in Lab (`Tuning.lab_lead`): why the stack is "unsure"
    when a chip's own colour is nearer another chip colour's than the one it is named, else None."""
    named = colours.named
    off = named.lab_off
    if off is None or off.shape[1] < 2:  # no third opinion: every chip's lead is infinite
        return None
    # every chip's `NamedStack.lab_lead` at once: the same differences, the same first smallest
    chips = np.arange(len(named.colours))
    as_named = np.asarray(named.colours)
    d = off.copy()
    own = d[chips, as_named]
    d[chips, as_named] = np.inf
    others = d.argmin(axis=1)
    leads = d[chips, others] - own
    i = int(leads.argmin())
    other, lead = int(others[i]), float(leads[i])
    if lead >= -t.lab_lead:
        return None
    mine, theirs = colours.values[named.colours[i]], colours.values[other]
    return (
        f"chip {i + 1} from the bottom: its colour (in Lab, at the stack's light) is nearer {theirs}'s "
        f"than {mine}'s (worn or dirty?)"
    )


def _hue_doubt(colours: Colours, odd: npt.NDArray[np.bool_], t: Tuning) -> str | None:
    """The second opinion on each odd chip, free of lightness (`Tuning.hue_share`): why the
    stack is "unsure" when an odd chip's hue does not confirm its name, else None."""
    named = colours.named
    for i in (int(j) for j in np.flatnonzero(odd)):
        rivals = {named.rival(i), *(named.colours[j] for j in (i - 1, i + 1) if 0 <= j < len(named.colours))}
        rivals.discard(named.colours[i])
        for other in sorted(c for c in rivals if c is not None):
            lead, gap = named.hue_lead(i, other)
            if gap > t.hue_min_gap and lead < t.hue_share * gap:
                mine, theirs = colours.values[named.colours[i]], colours.values[other]
                verdict = f"is nearer {theirs}'s than {mine}'s" if lead < 0 else f"does not tell {mine} from {theirs}"
                return f"chip {i + 1} from the bottom: its hue {verdict} (worn or dirty?)"
    return None


# -- what a stack's checks saw ------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class StackEvidence:
    """A stack's stages' values as far as they went (every stack that reached the not-square
    checks): its height, its squareness and, when named, its colours."""

    height: Height
    square: Squareness
    colours: Colours | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chips_f": self.height.chips_f,
            "n": self.height.n,
            "square": self.square.square,
            "bands": self.square.bands,
            "sliver": self.square.sliver,
        }
        if self.colours is not None:
            out.update(self.colours.to_dict())
        return out


# -- helpers ----------------------------------------------------------------------------------


def _mean(x: npt.NDArray[Any], axis: int, keepdims: bool = False) -> npt.NDArray[Any]:
    """`x.mean(axis)` without numpy's Python wrapper (a few microseconds a call, and the stages
    make hundreds a frame): the same sum along the axis divided by the same count, bit for bit."""
    total = np.add.reduce(x, axis=axis, keepdims=True) if keepdims else np.add.reduce(x, axis=axis)
    return np.asarray(total / x.shape[axis])


def moved(points: npt.NDArray[Any], move: FloatArray) -> FloatArray:
    """Pixels (..., 2) through a 2 x 3 affine move."""
    return np.asarray(points @ move[:, :2].T + move[:, 2], dtype=np.float64)


_YCC = np.array(  # RGB -> Y, Cb, Cr (ITU-R BT.601, as JPEG)
    [[0.299, 0.587, 0.114], [-0.169, -0.331, 0.5], [0.5, -0.419, -0.081]]
)
_YCC_INV = np.linalg.inv(_YCC)


def _unmix_bottom_chroma(rgb: FloatArray, angles: int, side: int, t: Tuning) -> FloatArray:
    """`rgb` (the side's samples, RGB: the bottom chip's SAMPLE_HEIGHTS x angles first; the felt
    beside the stack, one an angle, from `side` on) with the felt's extra share on a JPEG frame
    (`Tuning.jpeg_bottom_chroma`) taken off the bottom chip's colour (Cb, Cr), its lightness (Y) kept."""
    out = rgb.copy()
    heights = len(t.jpeg_bottom_chroma)
    chip = out[: heights * angles].reshape(heights, angles, 3) @ _YCC.T
    felt = rgb[side : side + angles] @ _YCC.T
    share = np.array(t.jpeg_bottom_chroma)[:, None, None]
    chip[..., 1:] = (chip[..., 1:] - share * felt[None, :, 1:]) / (1.0 - share)
    out[: heights * angles] = (chip @ _YCC_INV.T).reshape(-1, 3)
    return out


def _in_shadow(
    colours: Image, gain: FloatArray, felt: npt.NDArray[np.float32], ink: npt.NDArray[np.float32], t: Tuning
) -> Mask:
    """Pixels (white-balanced) within `foreground` of the felt or of its printing darkened by a
    shadow (to `shadow_depth` of their light): colour that a stack's shadow leaves on the felt."""
    q = colours.astype(np.float32) * gain.astype(np.float32)
    near = np.zeros(colours.shape[:2], dtype=bool)
    for surface in (felt, ink):
        length = float(np.linalg.norm(surface))
        unit = surface / length
        along = np.clip(q @ unit, t.shadow_depth * length, length)
        d = np.linalg.norm(q - along[..., None] * unit, axis=-1)
        near |= d <= t.foreground
    return near


_RING_ANGLES = np.linspace(0, 2 * math.pi, 48, endpoint=False)
_RING = np.stack([np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)], axis=1)  # a stack's outline: 48 points a circle
_SQUARE_3 = np.ones((3, 3), np.uint8)


def hull_outline(u0: float, v0: float, r: float, k: float, distance: float) -> FloatArray:
    """Outline (u, v) of a stack of radius r on (u0, v0) whose top projects enlarged k times
    about the camera's foot at (0, -distance): the convex hull of the two circles."""
    base = np.array([u0, v0]) + r * _RING
    top_centre = np.array([u0 * k, (v0 + distance) * k - distance])
    top = top_centre + r * k * _RING
    hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32))
    return np.asarray(hull, dtype=np.float64).reshape(-1, 2)


def _measure(
    blob: Mask,
    score: npt.NDArray[np.float32],
    v_min: float,
    w: int,
    distance: float,
    height: float,
    stretch: float,
    far_edge_columns: int,
) -> tuple[float, float, float, float] | None:
    """Stack centre (u0, v0) and top scale k from the blob: the front edge is the base circle's
    nearest point, the far edge the top circle's farthest one. Also how much bigger than r the
    base looks (blur), in mm."""
    # each row's blob pixels (none, one, more) and first and last one, as Python numbers: the loops over
    # rows below are short, and numpy calls on a few values each cost more than the work
    filled: Mask = np.any(blob, axis=1)
    if np.count_nonzero(filled) < 5:
        return None
    n_rows, width = blob.shape
    lefts = blob.argmax(axis=1).tolist()  # the array methods skip numpy's function wrappers
    rights = (width - 1 - blob[:, ::-1].argmax(axis=1)).tolist()
    # 0 for an empty row, 1 for one pixel, 2 for two or more
    per_row = [(1 + (r > left)) if f else 0 for f, left, r in zip(filled.tolist(), lefts, rights, strict=True)]
    front_row = int(filled.argmax())
    # the widest rows of the base circle (about r beyond the front edge) give the centre across
    band = range(front_row + int(R) - 3, min(front_row + int(R) + 4, n_rows))
    centres = sorted((lefts[i] + rights[i]) / 2 for i in band if per_row[i])  # whole and half pixels: exact
    if not centres:
        return None
    half = len(centres) // 2
    col = centres[half] if len(centres) % 2 else (centres[half - 1] + centres[half]) / 2
    c0 = round(col)
    column: Mask = np.any(blob[:, max(c0 - 1, 0) : c0 + 2], axis=1)
    if not column.any():
        return None
    first, last = int(column.argmax()), len(column) - 1 - int(column[::-1].argmax())
    profile = _mean(score[:, max(c0 - 1, 0) : c0 + 2], 1)
    front = _crossing(profile, first, -1)
    far = _crossing(profile, last, +1)
    # Blur and the sensor's fill make an outline look bigger than it is, and a printed line
    # under the front edge can shift it. The base circle's near half, seen edge by edge across
    # many rows, fixes both: a circle fitted to those edges gives the centre, and its radius
    # beyond r says how much bigger the outline looks (along v the same pixels are more mm).
    # The fit is a circle in millimetres; the outline's growth is not quite even in them.
    top_row = int(front) + 1
    rows = [i for i in range(top_row + 1, min(top_row + int(R), n_rows)) if per_row[i] >= 2]
    if 2 * len(rows) < 12:
        return None
    on_rows = np.repeat(rows, 2)  # left and right edge of each row, in turn
    edges = np.array([edge for i in rows for edge in (lefts[i], rights[i])])
    pts = np.column_stack([_crossings(score, on_rows, edges), on_rows.astype(np.float64)])
    a = np.column_stack([2 * pts, np.ones(len(pts))])
    at = a.T  # least squares by the normal equations (3 x 3; the edges span tens of pixels: well conditioned)
    sol = np.linalg.solve(at @ a, at @ np.sum(pts**2, axis=1))
    cu, cv = sol[0], sol[1]
    radius = math.sqrt(max(sol[2] + cu * cu + cv * cv, 0.0))
    grown = radius - R  # in across-mm, the frame-like unit
    col = float(cu)
    front = float(cv) - R
    u0 = col - w
    v0 = v_min + front + R
    k = (v_min + far - grown * stretch + distance) / (v0 + R + distance)
    if not 1.0 <= k < height / (height - 200):
        return None
    # The far edge again along the columns either side of the top's centre, each crossing moved
    # up to the top circle's apex (its radius is R k): one column's edge is noisy, many agree.
    top_col = u0 * k + w
    cols = np.arange(max(round(top_col) - far_edge_columns, 0), min(round(top_col) + far_edge_columns + 1, width))
    crossings = _far_crossings(blob, score, cols)
    across = cols - top_col
    rk = R * k
    use = ~np.isnan(crossings) & (np.abs(across) <= 0.8 * rk)
    if np.count_nonzero(use) >= 3:
        apex = crossings[use] + rk - np.sqrt(rk * rk - across[use] ** 2)
        k = (v_min + float(apex.mean()) - grown * stretch + distance) / (v0 + R + distance)
        if not 1.0 <= k < height / (height - 200):
            return None
    return u0, v0, k, grown


def _misalignment(
    blob: Mask, score: npt.NDArray[np.float32], u0: float, v0: float, k: float, w: int, v_min: float, distance: float
) -> tuple[float, float, float]:
    """How far the stack's outline strays across from one upright stack's: the middle of each
    row of the outline (its two edges, sub-pixel) against the line from the base's centre to
    the top's (u0, v0 -> u0 k, top v), in mm. Returns (the top's offset: the median over the
    top circle's far half, the largest stray over the side, the rms stray over the side)."""
    n_rows, width = blob.shape
    v_top = (v0 + distance) * k - distance
    first = max(math.ceil(v0 - R + 4 - v_min), 0)
    last = min(math.floor(v_top + R * k - 4 - v_min), n_rows - 1)
    if last - first < 6:
        return 0.0, 0.0, 0.0
    rows = np.arange(first, last + 1)
    inside = blob[rows]
    has = inside.any(axis=1)
    lefts = inside.argmax(axis=1)
    rights = width - 1 - inside[:, ::-1].argmax(axis=1)
    ok = has & (rights - lefts >= 8) & (lefts >= 3) & (rights <= width - 4)
    rows, lefts, rights = rows[ok], lefts[ok], rights[ok]
    if len(rows) < 6:
        return 0.0, 0.0, 0.0
    on_rows = np.repeat(rows, 2)
    edges = np.column_stack([lefts, rights]).reshape(-1)
    cross = np.empty(len(edges))
    for at in range(0, len(edges), 128):  # _crossings takes up to 128 edges at once
        cross[at : at + 128] = _crossings(score, on_rows[at : at + 128], edges[at : at + 128])
    middle = (cross[0::2] + cross[1::2]) / 2 - w
    v = v_min + rows
    t = np.clip((v - v0) / max(v_top - v0, 1e-6), 0.0, 1.0)
    stray = middle - (u0 + (u0 * k - u0) * t)
    top = stray[v > v_top]
    side = stray[(v >= v0) & (v <= v_top)]
    top_offset = float(_middle(top, 0)) if len(top) else 0.0
    if len(side) == 0:
        return top_offset, 0.0, 0.0
    return top_offset, float(np.abs(side).max()), float(np.sqrt(_mean(side**2, 0)))


def _far_crossings(blob: Mask, score: npt.NDArray[np.float32], cols: npt.NDArray[np.intp]) -> FloatArray:
    """`_crossing(score[:, c], last, +1)` for each column c of `cols`, `last` the blob's last row
    in it (NaN where the blob has none): the far edge, column by column, in array operations."""
    inside = blob[:, cols]
    n = inside.shape[0]
    has: Mask = np.any(inside, axis=0)
    last = n - 1 - np.argmax(inside[::-1], axis=0)
    if len(cols) == 0 or int(last.min()) < 3:  # an edge within 3 rows of the patch's start: one by one
        return np.array(
            [_crossing(score[:, c], int(e), +1) if h else np.nan for c, e, h in zip(cols, last, has, strict=True)]
        )
    # each column's last 4 rows inside and the next one out (the last row again at the patch's end),
    # picked out of the patch: not every row of the columns copied
    window = score[np.minimum(last[None, :] + _FAR_WINDOW[:, None], n - 1), cols[None, :]].astype(np.float64)
    level = _middle_two(window[0], window[1], window[2], window[3]) / 2 / 2  # half the last 4 rows' median
    pa = window[3]
    pb = window[4]
    pc = window[2]
    out = last + (pa - level) / np.maximum(pa - pb, 1e-6)
    out = np.where(pb >= level, last + 0.5, out)
    before = np.where(pc > level, last - 1 + (pc - level) / np.maximum(pc - pa, 1e-6), last - 0.5)
    out = np.where(pa <= level, before, out)
    out = np.where(last + 1 >= n, last.astype(np.float64), out)
    return np.asarray(np.where(has, out, np.nan), dtype=np.float64)


_FAR_WINDOW = np.array([-3, -2, -1, 0, 1])  # a far crossing's rows from the last inside
_WINDOW = np.array([3, 2, 1, 0, -1])  # a crossing's columns: the last 4 inside (to the edge), the next one out
_SIDES = np.tile([-1, 1], 64)  # left edges go left, right edges right, in turn


def _crossings(score: npt.NDArray[np.float32], rows: npt.NDArray[np.intp], edges: npt.NDArray[np.intp]) -> FloatArray:
    """`_crossing` along rows `rows` of `score`, from the left edge (going left) and the right edge
    (going right) of each row in turn, `edges` the last column inside: the same numbers (the same
    float operations in the same order) in a few array operations rather than a Python call an
    edge. A row whose edge lies within 3 columns of the patch's side goes through `_crossing`."""
    n = score.shape[1]
    if len(edges) > len(_SIDES) or int(edges.min()) < 3 or int(edges.max()) > n - 4:
        sides = np.tile([-1, 1], len(edges) // 2 + 1)[: len(edges)]
        return np.array([_crossing(score[r], int(e), int(s)) for r, e, s in zip(rows, edges, sides, strict=True)])
    step = _SIDES[: len(edges)]
    window = score[rows[:, None], edges[:, None] - step[:, None] * _WINDOW]
    values = window.astype(np.float64)
    level = _middle_two(values[:, 0], values[:, 1], values[:, 2], values[:, 3]) / 2 / 2  # half the median of the 4
    pa, pb, pc = values[:, 3], values[:, 4], values[:, 2]
    before = window[:, 2] > level.astype(np.float32)  # as numpy compares a float32 with a Python float
    return np.where(
        pa <= level,
        np.where(before, (edges - step) + step * (pc - level) / np.maximum(pc - pa, 1e-6), edges - step * 0.5),
        np.where(pb >= level, edges + step * 0.5, edges + step * (pa - level) / np.maximum(pa - pb, 1e-6)),
    )


def _middle_two(a: FloatArray, b: FloatArray, c: FloatArray, d: FloatArray) -> FloatArray:
    """The sum of the middle two of four values, elementwise: the second and third of them sorted
    are the larger of the pairs' smaller ones and the smaller of their larger ones (the same two
    numbers added as after a sort, in a few elementwise calls rather than a sort of many rows of 4)."""
    return np.asarray(np.maximum(np.minimum(a, b), np.minimum(c, d)) + np.minimum(np.maximum(a, b), np.maximum(c, d)))


def _crossing(profile: npt.NDArray[np.float32], edge: int, step: int) -> float:
    """Sub-pixel position of the outline near row `edge` (the last row inside, going `step`):
    where the colour distance falls to half of the inside level."""
    n = len(profile)
    # the median of the last 4 rows inside (sorted in Python: np.median costs more on 4 values)
    near = sorted(profile[max(0, min(edge, edge - 3 * step)) : max(edge, edge - 3 * step) + 1].tolist())
    half = len(near) // 2
    inside = float(near[half] if len(near) % 2 else (near[half - 1] + near[half]) / 2)
    level = inside / 2
    a, b = edge, edge + step
    if not 0 <= b < n:
        return float(edge)
    pa, pb = float(profile[a]), float(profile[b])
    if pa <= level:  # the last inside row is already below half: the edge lies before it
        c = edge - step
        if 0 <= c < n and profile[c] > level:
            pc = float(profile[c])
            return c + step * (pc - level) / max(pc - pa, 1e-6)
        return float(edge - step * 0.5)
    if pb >= level:
        return float(edge + step * 0.5)
    return a + step * (pa - level) / max(pa - pb, 1e-6)
