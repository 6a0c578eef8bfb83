"""The reader: one camera frame in, what stands in every zone out (values, stacks, pucks).

Each chip zone is looked at in its own patch of the felt, resampled to 1 mm a pixel in a frame
that points away from the camera (v) and across (u). A stack standing in the zone shows there as
the convex hull of its base circle and of its top circle, which the camera's central projection
pushes away from it and enlarges; so the front edge gives the base, the far edge the height
(chips = height / 3.3 mm), and the colour down the stack's side, sampled at each chip's height
through the calibrated pose, each chip's denomination.

Doubt is reported, never guessed: a zone is "blocked" when something that is not a stack is in
it (a hand, an arm, a card), and "unsure" when a stack is there but one of the checks fails (the
outline is not one upright stack, the height falls between two chip counts, the stack is not
square (its outline strays across, or its side's chip edges fit one chip more or less as well:
a lean along the line of sight, or a band of its side is as plain as a chip's top face: a chip
pushed off the one below), a colour is between two chips, a nearer stack hides part of
it, the camera moved). A wrong value is worse than none.

Work that would give the same answer is skipped, never guessed: the calibration markers are
looked for again only when one of them no longer looks exactly as at the last check that found
the camera in place (so a bump is seen on the frame it happens); a puck spot is searched for a
puck's marker only when it holds pixels as bright as a puck's white top; a zone whose patch of
felt looks as it did when it was last read (and that nothing nearer newly hides) keeps that
reading, and `forget()` makes the next frame read every zone afresh.

    reader = Reader(layout, calibration)
    reading = reader.read(frame)
    reading.zones["seat3.first"].value      # 30, or None when blocked / unsure
    reading.pucks                            # {"blind": "seat4.puck"}
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.calibration import CHECK_MIN_MARKERS, Calibration, CameraCheck, detector, find_markers
from vision.chips import CHIP_DIAMETER_MM, CHIP_THICKNESS_MM, ChipSet
from vision.geometry import back_project, project
from vision.layout import Layout, Zone
from vision.stack_colours import SAMPLE_HEIGHTS, NamedStack, namer_for
from vision.tone import ToneCurve, probe_pixels, sample

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]

R = CHIP_DIAMETER_MM / 2
MARGIN_MM = 2.0  # blur around a stack's outline
FOREGROUND = 40.0  # colour distance from felt and ink (RGB, white-balanced) that is "something"
STRAY_PIXELS = 8  # this many "something" pixels outside where a stack could be: something else is there
EMPTY_PIXELS = 30  # fewer "something" pixels than this inside the zone: the zone is empty
MAX_SHAPE_MISMATCH = 0.10  # share of the predicted outline that may disagree with what is seen
MAX_COUNT_DOUBT = 0.3  # height / 3.3 mm farther than this from a whole number: unsure
# How much worse the best explanation of a stack's side must get when any one chip is given
# another colour (mean RGB distance over that chip's samples, vision/stack_colours.py), else
# "unsure". On the tuning seeds 0-199 at the two-camera mount (never the benchmark's) 3 of 2300
# stacks were still named wrong with a margin of 12, none at 15.
MIN_COLOUR_MARGIN = 15.0
COLOUR_PX_PER_CHIP = 2.2  # chips shorter than this in the frame need a larger margin ...
COLOUR_MARGIN_GROWTH = 2.0  # ... by (2.2 / px a chip) ** 2: with one camera over the whole table
# (1.5-2.1 px a chip) 7 of 950 stacks of the tuning seeds were named wrong with a margin of 15
MAX_COLOUR_MISFIT = 30.0  # the same units: what the best sequence leaves unexplained, per chip (at most 29 seen)
# A chip that fits its best colour badly (worn, dirty, faded: what the best explanation leaves
# unexplained of its own samples, `NamedStack.fits`, the same units) may be another
# denomination worn toward the colour it is named. An odd chip, named unlike every chip beside
# it, is what one worn chip of a uniform stack looks like: its lead over the runner-up must grow
# by its misfit beyond FIT_LIMIT_ODD (margin >= the margin asked + FIT_LEAD * (fit - limit));
# on a JPEG frame the limit is JPEG_COLOUR_MARGIN times larger (its chips fit worse: median 13
# against 8.5 raw). Settled on tuning seeds only (never the benchmark's), see vision/README.md
# (worn chips): wear of 20 Lab, seeds 0-199, 8400 zones, wrong values 89 -> 20; clean, seeds
# 0-47, occupied zones read exact 379 -> 374 of 401. Asking it of every chip stops more worn
# ones but also mixed stacks of clean frames (a colour every two chips: fits up to 28 at a
# change of colour, tests/vision/test_stack_colours.py).
FIT_LIMIT_ODD = 10.0
FIT_LEAD = 1.0  # margin units asked per unit of misfit beyond the limit
# The second opinion, free of lightness (`NamedStack.hue_off`, vision/stack_colours.py `hues`):
# an odd chip's own share of its samples, at whatever brightness fits it, must be nearer the
# direction in RGB of the colour it is named than that of its runner-up and of its neighbours'
# colour, by HUE_SHARE of the gap between the two directions at its brightness, else "unsure"
# (a purple, red or green chip darkened toward black, or faded toward a dim white, keeps its
# hue). Pairs whose directions are nearer than HUE_MIN_GAP at the chip's brightness (white and
# black; any colour on a chip too dark to show its hue) give no second opinion. Chosen on tuning
# seeds only (vision/README.md, worn chips): worn 20, seeds 0-99, the largest share that cost no
# right zone (wrong 16 -> 11), checked on seeds 100-199 (4 -> 0, one right zone unsure) and on
# seeds 0-47 of clean, worn 10, maker 8 / 16, spots, JPEG 75, gamma 1.4 (one worn 10 zone unsure,
# nothing else changed); a positive share stops more but costs clean mixed stacks.
HUE_SHARE = -0.1
HUE_MIN_GAP = 5.0
# The third opinion, in Lab (`NamedStack.lab_off`, vision/stack_colours.py `own_colours` and
# `lab_off`): each chip's own colour, deblurred from its neighbours whatever they are named and
# compared in Lab at the light that suits the colours it is named, must not be nearer another
# chip colour's than its own by more than LAB_LEAD (Lab units), else "unsure". The namer's RGB
# model with one light level for the stack can explain a green worn lighter as a dim white (the
# level then fits the white), a purple or green worn darker as black, an orange worn lighter as a
# white: in Lab, where wear is measured, the chip is still nearest its own colour. The deblurred
# colour is noisy (median 6 Lab from the chip's true colour on worn-20 tuning stacks named right,
# 29 at the 99th percentile): chosen on tuning seeds only (vision/README.md, worn chips).
LAB_LEAD = 10.0
# What the far edge still reads long, in chips, after the outline's growth is taken off: it
# grows with the size of a frame pixel on the felt (the half-level crossing sits a fraction of
# a pixel out) and with the frame's blur measured on the calibration markers (in mm of felt),
# and shrinks as the stack's own outline grows (the growth, measured at the base circle, is
# taken off the top's far edge in full, and that is too much). Least squares over 1743 stacks
# of the tuning seeds (0-59 with the two-camera mount, 0-39 over the whole table), never the
# benchmark's: the spread of the count fell from 0.12-0.19 chip (the pixel and the growth
# only, far edge along one column) to 0.076 at the two-camera mount and 0.12 over the table.
HEIGHT_BIAS_CHIPS = -0.150
HEIGHT_BIAS_PER_MM_PIXEL = 0.052  # chips, per mm of felt a frame pixel covers
HEIGHT_BIAS_PER_MM_BLUR = 0.553  # chips, per mm of felt the frame's blur spreads an edge (blur px / px per mm)
HEIGHT_BIAS_PER_MM_GROWN = -0.876  # chips, per mm the outline looks bigger than the stack
# The top's far edge is taken along this many columns either side of the top's centre (each
# column's crossing moved to the circle's apex), not along one: the edge's noise averages out.
FAR_EDGE_COLUMNS = 8
SHARP_EDGE_PX = 0.8  # an edge's spread (Gaussian sigma, px) before the markers have been seen
SIDE_ANGLES = np.radians(np.linspace(-50.0, 50.0, 11))  # the near side sampled across +-50 degrees
FELT_BESIDE_MM = 3.0  # the felt just in front of the stack (what the bottom chip blurs into)
# A calibration marker whose patch of the frame correlates this well with how it looked at the
# last full check has not moved by even a pixel (a 1 px shift of a marker's cells drops it far
# below): the check is then not repeated. Sensor noise and light changes keep it above.
MARKER_SAME = 0.97
PUCK_BRIGHT = 1.75  # a puck's white top is this many times brighter than the felt around it
# A zone whose patch of felt looks as it did when it was last read keeps that reading: no more
# than CHANGED_SAMPLES of its samples (a pixel's channel, averaged over CHANGED_BOX x CHANGED_BOX
# mm so that sensor noise averages out and anything a few mm across stays) differ by more than
# CHANGED_LEVEL (8-bit levels: ten times a noisy camera's noise so averaged; one chip more, less
# or of another colour changes hundreds), the felt's white balance has not moved by more than
# CHANGED_LIGHT, and nothing nearer that could hide part of it was read anew with another outline.
CHANGED_BOX = 3
CHANGED_LEVEL = 24
CHANGED_SAMPLES = 6
CHANGED_LIGHT = 0.04
# What the counting and the colours were measured on (the tuning scenes: lens blur 0-1 px, the
# markers' edges then spread 0.73-1.41 px across their worst direction): beyond it the count's
# spread grows (0.07 chip sharp, 0.15 at a defocus of 1.3 px, 0.29 with 5 px of motion blur,
# tuning seeds 0-19), so a count must fall nearer a whole number, and a colour needs more
# margin; from 1.95 px none is counted. A blur much stronger one way than the other (motion)
# is handled apart, below (MOTION_*).
SHARP_ENOUGH_PX = 1.45  # the markers' edge spread across its worst direction: 0.73-1.41 px on tuning scenes
COUNT_DOUBT_PER_PX = 0.6
COLOUR_MARGIN_PER_BLUR = 2.0
# A JPEG camera (MJPEG) halves the colour's resolution: outlines drawn by colour grow, so the
# count reads long (by 0.17 chip at quality 75, tuning seeds 0-19) and spreads (0.18 chip).
SHADOW_DEPTH = 0.45  # a shadow leaves the felt at least this share of its light
# Motion blur (a shaking mount) spreads edges one way: the blur is measured as a 2 x 2
# covariance in the frame, fitted to the spread along each marker's two edge normals (the
# markers' sides point up to 30 degrees apart across the frame, so its slant shows too; on
# tuning frames it finds a 5 px motion's direction within a few degrees: 1.6-2.2 px along it,
# the lens's 0.7-1.2 across). A frame is smeared one way when the markers' edges spread
# MAX_SMEAR times more across x or y than on average, or the covariance's axes are
# MOTION_SLANT_SMEAR apart with the shorter one sharp (MOTION_SHARP_PX). The height's
# correction assumes a blur alike every way: a stack's far edge grows with the blur along its
# axis in the frame, the base's sides (the outline's growth the correction takes off) with the
# blur across it; so on such a frame each stack's count is corrected by the blur along and
# across its own axis beyond the average one (MOTION_BIAS_*, chips per mm, fitted on motion 5,
# tuning seeds 0-23: on seeds 0-47 the count's mean error from +0.20 to +0.02 chip, its spread
# from 0.30 to 0.22, 0.08 on sharp frames), must fall within MOTION_COUNT_DOUBT of a whole
# number (at most 0.71 chip off of those 564 stacks), the colours' margin grows with the blur's
# longest axis (a blur across the side mixes the felt beside it and its top face, which the
# namer does not model) and the namer's blur with that along the stack; beyond MOTION_MAX_PX
# along its longest axis (5 px of motion: 1.6-2.2 px, 9 px: 2.6-3.3) nothing is counted.
MAX_SMEAR = 1.3
MARKER_EDGE_TAN = 2.414  # a pixel is on a marker edge of a normal when its gradient is within 22.5 deg of it
MIN_SLANT_CONDITION = 0.15  # smallest/largest singular value of the normals' fit to tell the slant
MOTION_SLANT_SMEAR = 1.6  # the covariance's axes this many times apart (its slant is less sure than x and y)
MOTION_SHARP_PX = 1.25  # ... and the shorter one this sharp: motion, not a lens (lenses: 1.1-1.6 times, seeds 0-23)
MOTION_MAX_PX = 2.2
MOTION_COUNT_DOUBT = 0.2
MOTION_BIAS_PER_MM_ALONG = 1.767
MOTION_BIAS_PER_MM_ACROSS = 0.573
JPEG_BLOCKINESS = 1.2  # level steps across 8 x 8 block edges this many times those inside: JPEG
JPEG_COUNT_BIAS = 0.17
JPEG_COUNT_DOUBT = 0.2
JPEG_COLOUR_MARGIN = 1.5
# JPEG (MJPEG) keeps colour at half the resolution and quantises it coarsely: the felt's colour
# bleeds into the bottom chip's samples far more than its lightness does. At the two-camera mount
# (2.5-2.8 px a chip), on tuning seeds 0-23 (214 uniform stacks of 3 chips or more, never the
# benchmark's), the felt's share of the bottom chip's colour at its 4 sample heights (its Cb, Cr
# against the second chip's and the felt's) is 0.43, 0.30, 0.19, 0.11 under JPEG 75 against 0.24,
# 0.06, 0.01, 0.02 on raw frames (the lightness' share is alike in both: 0.20, 0.02, 0.03, 0.09),
# which the namer's one blur for every channel does not model: red and purple, alike in lightness,
# were told apart by their colour alone, and a red bottom chip was named purple (36 of the 67
# stacks named wrong with the right count on JPEG 75 frames, seeds 0-47; an orange one white, 10).
# So on a JPEG frame the felt's share beyond a raw frame's is taken off the bottom chip's colour
# (Cb and Cr only, against the felt beside the stack at each angle) before the stack is named.
JPEG_BOTTOM_CHROMA = (0.25, 0.26, 0.18, 0.10)  # (jpeg - raw) / (1 - raw), per sample height
NOISY = 7.0  # sensor noise (sigma, levels) beyond which the patches are looked at box-averaged
# A stack leaning or sloppy along the camera's line of sight has its top where a taller or
# shorter upright stack would have it: from one view the outline is the same. What tells them
# apart is the side: the chips' edge spots and changes of colour change at the chips' real
# boundaries. The side, from the felt to the top's height, is sampled at BAND_STEPS_PER_CHIP
# heights a chip across BAND_ANGLES angles, and the colour change along it taken at the n - 1
# boundaries of n chips against the n middles; n +- 1 chips fitting at least as well is
# "unsure". Across the line of sight the lean or sloppiness shows in the outline itself: the
# middle of each row strays from the line through the base's and the top's centres by more than
# MAX_STRAY_MM (0.56 mm at most on 9 in 10 upright stacks, 0.83 mm the most of 295). A lean
# needs height to move the top a chip: on a stack of LEANING_CHIPS or more a rival count fitting
# the side at least as well is "unsure". On a shorter one, on a sharp raw frame, a rival fitting
# clearly better (by SHORT_BAND_MARGIN) is; one fitting within that margin of it only when the
# colours are not sure (the weakest chip's margin under SURE_COLOURS times the margin asked): on
# short upright stacks with few colour changes the three fits are within noise of each other. On
# a JPEG or blurred frame the bands are washed out and the rule is the plain one (margin 0). On
# tuning seeds 0-23 only (never the benchmark's), against no check at all: wrong values leaning
# 0.2 mm a chip 10 -> 0, 0.4 mm 40 -> 1, sloppy 1 mm 6 -> 2, sloppy 2 mm 62 -> 14, a second light
# 8 -> 0; exact values on clean frames 99.0% -> 98.2% (the plain check, margin 0 and a 1.5 mm
# stray for every stack: 96.5%).
BAND_ANGLES = 21
BAND_STEPS_PER_CHIP = 8
MAX_STRAY_MM = 1.0
LEANING_CHIPS = 6
SHORT_BAND_MARGIN = 0.2
SURE_COLOURS = 1.5
# A chip pushed away from the camera off the one below shows a sliver of that chip's top face
# between them, and the height counts the sliver as (part of) a chip: what a stack sloppy by
# 2 mm a chip over-reads by is such slivers (tuning seeds 0-47: 8 of 8). The side of a chip
# varies around the stack (its edge spots, its shading); a top face is flat and plain. So the
# side, sampled SLIVER_STEPS_PER_CHIP times a chip up from the felt across SLIVER_ANGLES
# (+-42 degrees), its spread across the angles averaged over each quarter of a chip: a half
# chip (two quarters), at least half a chip from the felt and from the top, spreading less than
# SLIVER_SHARE of the side's median is a sliver, and the stack "not square". On tuning seeds
# 0-47 (never the benchmark's) the lowest share on clean frames was 0.41 (564 stacks), 0.46 on
# stacks leaning 0.2 mm a chip; every sloppy stack below 0.4 had a sliver of 0.35 chip or more
# (the renderer's chip places, seen from the camera). Across +-30 degrees a chip with 4 edge
# spots of 30 degrees (another maker's) can show none, and a plain band: upright stacks of such
# chips fell under 0.3 7 times in 224 (seeds 0-23), 2 across +-42 (sloppy stacks caught alike).
SLIVER_STEPS_PER_CHIP = 16
SLIVER_ANGLES = np.radians(np.linspace(-42.0, 42.0, 29))
SLIVER_SHARE = 0.3
BOX_SIGMA_MM = math.sqrt((CHANGED_BOX**2 - 1) / 12)  # the spread the box average adds (1 mm pixels)


@dataclass(frozen=True)
class StackReading:
    """One stack: its chips bottom to top."""

    chips: tuple[int, ...]

    @property
    def value(self) -> int:
        return sum(self.chips)

    @property
    def count(self) -> int:
        return len(self.chips)

    def denominations(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for chip in self.chips:
            out[chip] = out.get(chip, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"chips": list(self.chips), "count": self.count, "value": self.value}


@dataclass(frozen=True)
class ZoneReading:
    """A zone's wager as seen: state "ok" (value in chip units, 0 when empty), "blocked" or
    "unsure" (value None, with the reason)."""

    state: str
    value: int | None = None
    stacks: tuple[StackReading, ...] = ()
    why: str = ""

    @classmethod
    def ok(cls, stacks: tuple[StackReading, ...]) -> ZoneReading:
        return cls("ok", sum(s.value for s in stacks), stacks)

    @classmethod
    def blocked(cls, why: str) -> ZoneReading:
        return cls("blocked", why=why)

    @classmethod
    def unsure(cls, why: str) -> ZoneReading:
        return cls("unsure", why=why)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state, "value": self.value, "stacks": [s.to_dict() for s in self.stacks]}
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True)
class FrameReading:
    """Everything read from one frame."""

    zones: dict[str, ZoneReading]
    pucks: dict[str, str | None]  # puck name -> zone it stands in (None: on the felt, in no zone)
    camera: CameraCheck
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def bumped(self) -> bool:
        return self.camera.bumped

    @property
    def blocked(self) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z.state == "blocked")

    @property
    def unsure(self) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z.state == "unsure")

    def to_dict(self) -> dict[str, Any]:
        return {
            "zones": {name: z.to_dict() for name, z in sorted(self.zones.items())},
            "pucks": dict(sorted(self.pucks.items())),
            "blocked": self.blocked,
            "unsure": self.unsure,
            "camera": {
                "bumped": self.camera.bumped,
                "verified": self.camera.verified,
                "moved_px": round(self.camera.moved_px, 2),
                "markers_seen": self.camera.markers_seen,
                "status": self.camera.why,
            },
        }


@dataclass(frozen=True)
class _Remembered:
    """A zone's reading as last made, what it hid of the frame for farther zones, and the white
    balance it was made under."""

    reading: ZoneReading
    hides: npt.NDArray[np.int32] | None
    gain: FloatArray


@dataclass
class _ZoneGeometry:
    zone: Zone
    away: FloatArray  # unit vector on the felt, from below the camera through the zone's centre
    across: FloatArray  # unit vector perpendicular to it
    distance: float  # from below the camera to the zone's centre, mm
    top: int  # first row of this zone's patch in the stacked patches
    rows: int
    v_min: float  # v of the patch's first row
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


class Reader:
    """Reads frames of one table, through one calibration.

    Building it prepares each zone's resampling maps (a few tens of ms); `read` then takes
    one frame. Not thread-safe: give each worker thread its own Reader."""

    def __init__(self, layout: Layout, calibration: Calibration, chips: ChipSet | None = None) -> None:
        self.layout = layout
        self.calibration = calibration
        self.chips = chips or layout.chips
        self.camera = calibration.camera
        self.pose = calibration.pose
        eye = self.pose.position
        self.foot = eye[:2].copy()
        self.height = float(eye[2])
        self.max_height = layout.max_stack_chips * CHIP_THICKNESS_MM
        self.half_width = math.ceil(max(z.r for z in layout.chip_zones()) * 1.12 + MARGIN_MM + 4)
        spec = layout.pucks
        puck_spots = [z for z in layout.zones.values() if z.kind == "puck"]
        marker_side = float(np.median([_side_px(c) for c in calibration.marker_pixels.values()]))
        self._markers = _window_detector(layout.marker_dictionary, marker_side)
        puck_side = min(
            (
                _side_px(project(self.camera, self.pose, _square(z.x, z.y, spec.marker_mm, spec.height_mm)))
                for z in puck_spots
            ),
            default=marker_side,
        )
        self._puck_markers = _window_detector(spec.dictionary, puck_side)
        self._puck_markers_thorough = detector(spec.dictionary)  # every threshold scale: blurred pucks
        self._marker_windows = self._windows([c for c in calibration.marker_pixels.values()], 24)
        self._marker_patches: list[tuple[tuple[int, int, int, int], Image]] = []  # at the last full check
        # How far the lens and the sensor spread a sharp edge (Gaussian sigma, px), measured on the
        # calibration markers' black-and-white edges at each full check: it biases a stack's far edge.
        self.blur_px = SHARP_EDGE_PX
        self._last_check: CameraCheck | None = None
        # each puck window as last searched, and the puck markers found in it
        self._puck_memory: dict[tuple[int, int, int, int], tuple[Image, dict[int, FloatArray]]] = {}
        self._puck_windows = self._windows(
            [
                project(self.camera, self.pose, _ring(z.x, z.y, z.r + spec.diameter_mm / 2, spec.height_mm))
                for z in puck_spots
            ],
            8,
        )
        # Pixels of a puck's marker seen from here (the smallest over the spots): a window with
        # fewer than a quarter of that many bright pixels holds no puck, and is not searched.
        self._puck_min_bright = (
            min(
                (
                    cv2.contourArea(
                        project(self.camera, self.pose, _square(z.x, z.y, spec.marker_mm, spec.height_mm)).astype(
                            np.float32
                        )
                    )
                    for z in puck_spots
                ),
                default=0.0,
            )
            / 4
        )
        # the markers' and the felt's levels at calibration, re-measured on every frame (vision/tone.py)
        self._tone_probes: FloatArray | None = None
        self._tone_reference = calibration.tone_reference
        if self._tone_reference is not None:
            probes = probe_pixels(layout, self.camera, self.pose, calibration.marker_pixels)
            if len(probes) == len(self._tone_reference):
                self._tone_probes = probes
        self._tone_probes_at_calibration = self._tone_probes
        self._last_count = 0.0
        # on the last frame: the felt's white balance (BGR gains), and every stack read afresh
        # whose outline and count passed, whatever its colours (centre on the felt, chips)
        self.gain = np.ones(3)
        self.measured: dict[str, tuple[FloatArray, int]] = {}
        self._named: dict[str, Any] = {}
        self.evidence: dict[str, dict[str, Any]] = {}  # each stack read afresh on the last frame: what its checks saw
        self.spread_px = SHARP_EDGE_PX  # the same, across the direction that blurs them most (motion blur)
        self.blur_cov = np.eye(2) * SHARP_EDGE_PX**2  # the same as a covariance in the frame (px^2)
        self.smeared = False  # blurred much more one way than the other at the last check (motion blur)
        self.longest_px = SHARP_EDGE_PX  # the blur along its longest axis (px)
        self.compressed = False  # the frames are JPEG (MJPEG): 8 x 8 blocks seen at the last full marker check
        self.noise = 0.0  # the sensor's noise on the last frame (sigma, levels)
        self._smoothed = False
        self._move: FloatArray | None = None  # the camera's small move being followed (calibration px -> now)
        self.tone: ToneCurve | None = None  # as fitted on the last frame
        self._lut: npt.NDArray[np.uint8] | None = None  # levels now -> levels at calibration, if not a gain
        self.felt = np.array(layout.felt[::-1], dtype=np.float32)  # BGR
        self.ink = np.array(layout.ink[::-1], dtype=np.float32)
        self.zones: list[_ZoneGeometry] = []
        maps: list[FloatArray] = []
        lines: list[Mask] = []
        top = 0
        for zone in sorted(layout.chip_zones(), key=lambda z: math.dist(z.centre, self.foot)):
            geometry, grid, on_lines = self._prepare(zone, top)
            self.zones.append(geometry)
            maps.append(grid)
            lines.append(on_lines)
            top += geometry.rows
        self._ink_lines = np.flatnonzero(np.concatenate(lines))  # flat indices of the patches' pixels
        # each zone's stack axis in the frame (where a stack's top rises from its base: the line from
        # below the camera through the zone, as seen), and the blur along it and across it (px)
        feet = np.array([[*g.zone.centre, 0.0] for g in self.zones]).reshape(-1, 3)
        up = np.array([0.0, 0.0, 10 * CHIP_THICKNESS_MM])
        rise = project(self.camera, self.pose, feet + up) - project(self.camera, self.pose, feet)
        self._axes = rise / np.maximum(np.linalg.norm(rise, axis=1, keepdims=True), 1e-9)
        self._zone_blur: dict[str, tuple[float, float, float]] = {}
        # every 4th row and column of each zone's patch in view, where no stack of the zone can stand
        width = 2 * self.half_width + 1
        samples = [np.zeros(0, dtype=np.intp)]
        for g in self.zones:
            if g.in_view:
                rows, cols = np.nonzero(~g.legal[::4, ::4])
                samples.append((g.top + 4 * rows) * width + 4 * cols)
        self._felt_samples = np.concatenate(samples)
        grid_px = np.concatenate(maps).astype(np.float32)
        # each zone's reading and its rows of the patches (box-averaged) as they were when it was made
        self._remembered: dict[str, _Remembered] = {}
        self._read_patches = np.zeros((len(grid_px), grid_px.shape[1], 3), dtype=np.uint8)
        self._map1, self._map2 = cv2.convertMaps(grid_px[..., 0], grid_px[..., 1], cv2.CV_16SC2)
        self._grid_px = grid_px

    def _prepare(self, zone: Zone, top: int) -> tuple[_ZoneGeometry, FloatArray, Mask]:
        centre = np.array(zone.centre)
        away = centre - self.foot
        distance = float(np.linalg.norm(away))
        away /= distance
        across = np.array([away[1], -away[0]])
        k_max = self.height / (self.height - self.max_height)
        reach = zone.r + MARGIN_MM  # the farthest any chip edge can be from the zone's centre
        v_far = (reach + distance) * k_max - distance + MARGIN_MM
        v_min = -math.ceil(reach + 4)
        rows = math.ceil(v_far) - v_min + 3
        w = self.half_width
        us = np.arange(-w, w + 1, dtype=np.float64)
        vs = v_min + np.arange(rows, dtype=np.float64)
        uu, vv = np.meshgrid(us, vs)
        table = centre + uu[..., None] * across + vv[..., None] * away
        on_lines = np.zeros(uu.shape, dtype=bool)
        span = math.hypot(w, max(abs(v_min), rows + v_min)) + 2 + MARGIN_MM
        for other in self.layout.zones.values():  # the printed circles: 2 mm lines, blurred
            if math.dist(other.centre, zone.centre) > span + other.r:
                continue  # too far to cross this patch
            ring = np.hypot(table[..., 0] - other.x, table[..., 1] - other.y)
            on_lines |= np.abs(ring - other.r) < 1.0 + MARGIN_MM
        flat = np.concatenate([table.reshape(-1, 2), np.zeros((uu.size, 1))], axis=1)
        grid = project(self.camera, self.pose, flat).reshape(rows, 2 * w + 1, 2)
        in_view = bool(
            grid[..., 0].min() >= 1
            and grid[..., 1].min() >= 1
            and grid[..., 0].max() < self.camera.width - 2
            and grid[..., 1].max() < self.camera.height - 2
        )
        hull = _hull_outline(0.0, 0.0, reach, k_max, distance)
        legal = np.zeros((rows, 2 * w + 1), dtype=np.uint8)
        cv2.fillConvexPoly(legal, np.round((hull - [-w, v_min]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        on_felt = np.concatenate([centre + hull[:, :1] * across + hull[:, 1:] * away, np.zeros((len(hull), 1))], axis=1)
        legal_px = np.round(project(self.camera, self.pose, on_felt)).astype(np.int32)
        mid_row, mid_col = -v_min, w
        per_u = np.linalg.norm(grid[mid_row, mid_col + 1] - grid[mid_row, mid_col - 1])
        per_v = np.linalg.norm(grid[mid_row + 1, mid_col] - grid[mid_row - 1, mid_col])
        geometry = _ZoneGeometry(
            zone,
            away,
            across,
            distance,
            top,
            rows,
            float(v_min),
            legal.astype(bool),
            legal == 0,
            int(np.count_nonzero(legal)),
            legal_px,
            in_view,
            float(per_u / per_v),
            float(per_u / 2),
            (
                max(int(grid[..., 0].min()) - 4, 0),
                max(int(grid[..., 1].min()) - 4, 0),
                int(grid[..., 0].max()) + 6,
                int(grid[..., 1].max()) + 6,
            ),
        )
        return geometry, grid, on_lines

    def read(self, frame: Image) -> FrameReading:
        """Read one BGR frame (the calibration's size)."""
        t0 = time.perf_counter()
        if frame.ndim != 3 or frame.shape[:2] != (self.camera.height, self.camera.width):
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]}, "
                f"the calibration is for {self.camera.width}x{self.camera.height}"
            )
        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
        check = self._markers_unmoved(gray)
        if check is None:
            seen = self._find(gray, self._marker_windows, self._markers, self.layout.markers)
            if len(seen) < CHECK_MIN_MARKERS:  # covered, or moved out of their windows: look everywhere
                seen = {i: c for i, c in find_markers(gray, "", self._markers).items() if i in self.layout.markers}
            check, move = self.calibration.follow(seen)
            self._follow(move)
            self._remember_markers(gray, seen, check)
        t1 = time.perf_counter()
        puck_ids = set(self.layout.pucks.ids.values())
        pucks = self._pucks(self._find_pucks(gray, puck_ids))
        t2 = time.perf_counter()
        if check.bumped or not check.verified:
            self.forget()
            zones = {g.zone.name: ZoneReading.unsure(check.why) for g in self.zones}
            return FrameReading(zones, pucks, check, {"markers": (t1 - t0) * 1e3, "pucks": (t2 - t1) * 1e3})
        self._lut = None
        if self._tone_probes is not None and self._tone_reference is not None:
            self.tone = ToneCurve.fit(self._tone_reference, sample(frame, self._tone_probes))
            # a curve the probes do not agree on (blur smears them, a hand covers many) is not
            # applied: the felt's white balance still is, and every colour check still stands
            self._lut = self.tone.lut if self.tone.trusted else None
        patches = np.asarray(
            cv2.remap(frame, self._map1, self._map2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), dtype=np.uint8
        )
        if self._lut is not None:
            patches = np.asarray(cv2.LUT(patches, self._lut), dtype=np.uint8)
        t3 = time.perf_counter()
        zones = self._zones(frame, patches)
        t4 = time.perf_counter()
        timings = {
            "markers": (t1 - t0) * 1e3,
            "pucks": (t2 - t1) * 1e3,
            "zone_crops": (t3 - t2) * 1e3,
            "chips": (t4 - t3) * 1e3,
        }
        return FrameReading(zones, pucks, check, timings)

    def _follow(self, move: FloatArray | None) -> None:
        """Re-project the zones through the camera's small move since calibration (2 x 3,
        calibration pixels -> pixels now; None: none), when it differs from the one followed."""
        if move is None and self._move is None:
            return
        if move is not None and self._move is not None:
            w, h = self.camera.width, self.camera.height
            corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
            if float(np.abs(corners @ (move - self._move)[:, :2].T + (move - self._move)[:, 2]).max()) < 0.05:
                return
        self._move = move
        grid = self._grid_px if move is None else _moved(self._grid_px, move).astype(np.float32)
        self._map1, self._map2 = cv2.convertMaps(grid[..., 0], grid[..., 1], cv2.CV_16SC2)
        self._tone_probes = (
            None
            if self._tone_probes_at_calibration is None
            else (self._tone_probes_at_calibration if move is None else _moved(self._tone_probes_at_calibration, move))
        )
        self.forget()

    def forget(self, markers: bool = False) -> None:
        """Read every zone afresh on the next frame (the camera moved, or a caller wants the
        whole cost of a read: the speed benchmark's cold frames); with `markers`, look for the
        calibration markers and the pucks afresh too (the next frame is of another scene)."""
        self._remembered.clear()
        if markers:
            self._follow(None)
            self._last_check = None
            self._marker_patches = []
            self._puck_memory.clear()

    def _markers_unmoved(self, gray: Image) -> CameraCheck | None:
        """The last full check again, when every marker it saw looks exactly as it did then;
        None when any differs (covered, moved, or never checked): then the markers are found anew."""
        if self._last_check is None or len(self._marker_patches) < CHECK_MIN_MARKERS:
            return None
        for (x0, y0, x1, y1), patch in self._marker_patches:
            now = gray[y0:y1, x0:x1]
            if float(cv2.matchTemplate(now, patch, cv2.TM_CCOEFF_NORMED)[0, 0]) < MARKER_SAME:
                return None
        return self._last_check

    def _remember_markers(self, gray: Image, seen: dict[int, FloatArray], check: CameraCheck) -> None:
        """Keep how each marker looked at a check that found the camera in place."""
        self._marker_patches = []
        self._last_check = None
        if check.bumped or not check.verified:
            return
        h, w = gray.shape
        spreads: list[tuple[FloatArray, float, float]] = []  # each marker's edges: their normal, spread, length
        for corners in seen.values():
            x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 3
            x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 4
            box = (max(int(x0), 0), max(int(y0), 0), min(int(x1), w), min(int(y1), h))
            patch = gray[box[1] : box[3], box[0] : box[2]].copy()
            if patch.size >= 64 and float(patch.std()) > 10.0:
                self._marker_patches.append((box, patch))
                spreads += _edge_spreads(patch, corners - [box[0], box[1]])
        if self._marker_patches:
            self.blur_px = float(np.median([_edge_spread_px(patch) for _, patch in self._marker_patches]))
            self.compressed = _blockiness(gray) > JPEG_BLOCKINESS
            self.spread_px = float(np.median([_edge_spread_across_px(patch) for _, patch in self._marker_patches]))
            self.blur_cov = _blur_covariance(spreads, self.blur_px)
            across = self._axes @ np.array([[0.0, 1.0], [-1.0, 0.0]])
            along = np.sqrt(np.einsum("ni,ij,nj->n", self._axes, self.blur_cov, self._axes))
            beside = np.sqrt(np.einsum("ni,ij,nj->n", across, self.blur_cov, across))
            # how far the blur's slant moves an outline's edge across, at its ends (px)
            slant = np.abs(np.einsum("ni,ij,nj->n", across, self.blur_cov, self._axes)) / along
            self._zone_blur = {
                g.zone.name: (float(a), float(b), float(c))
                for g, a, b, c in zip(self.zones, along, beside, slant, strict=True)
            }
            longest, shortest = (float(v) for v in np.sqrt(np.linalg.eigvalsh(self.blur_cov))[::-1])
            self.longest_px = longest
            self.smeared = bool(
                self.spread_px > MAX_SMEAR * self.blur_px
                or (
                    longest > MOTION_SLANT_SMEAR * shortest
                    and longest > SHARP_ENOUGH_PX
                    and shortest <= MOTION_SHARP_PX
                )
            )
        self._last_check = check

    def _find_pucks(self, gray: Image, wanted: set[int]) -> dict[int, FloatArray]:
        """Puck markers in the puck windows: a window that looks exactly as when it was last
        searched gives what was found then; one without a puck's bright top is not searched."""
        seen: dict[int, FloatArray] = {}
        for window in self._puck_windows:
            x0, y0, x1, y1 = window
            now = gray[y0:y1, x0:x1]
            remembered = self._puck_memory.get(window)
            if (
                remembered is not None
                and float(cv2.matchTemplate(now, remembered[0], cv2.TM_CCOEFF_NORMED)[0, 0]) >= MARKER_SAME
            ):
                seen.update(remembered[1])
                continue
            self._puck_memory.pop(window, None)
            if not self._may_hold_puck(gray, window):
                continue
            found = self._find(gray, [window], self._puck_markers, wanted)
            if not found:  # something bright is there: a hand, or a puck too blurred for one scale
                found = self._find(gray, [window], self._puck_markers_thorough, wanted)
            seen.update(found)
            self._puck_memory[window] = (now.copy(), found)  # found or not: searching cost time
        return seen

    def _may_hold_puck(self, gray: Image, window: tuple[int, int, int, int]) -> bool:
        """Does the window hold enough pixels as bright as a puck's white top? (Most puck spots
        are empty felt: searching them for markers is most of the pucks' time.)"""
        x0, y0, x1, y1 = window
        patch = gray[y0:y1:2, x0:x1:2]
        felt = float(np.median(patch))
        return 4 * int(np.count_nonzero(patch > PUCK_BRIGHT * max(felt, 8.0))) >= self._puck_min_bright

    def _windows(self, outlines: list[FloatArray], margin: int) -> list[tuple[int, int, int, int]]:
        out = []
        for pts in outlines:
            x0, y0 = np.floor(pts.min(axis=0)).astype(int) - margin
            x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + margin
            x0, y0 = max(int(x0), 0), max(int(y0), 0)
            x1, y1 = min(int(x1), self.camera.width), min(int(y1), self.camera.height)
            if x1 - x0 > 8 and y1 - y0 > 8:
                out.append((x0, y0, x1, y1))
        return out

    @staticmethod
    def _find(
        gray: Image, windows: list[tuple[int, int, int, int]], found_by: Any, wanted: Any
    ) -> dict[int, FloatArray]:
        """Markers looked for only where they can be: a few small windows, not the whole frame."""
        seen: dict[int, FloatArray] = {}
        for x0, y0, x1, y1 in windows:
            for marker_id, corners in find_markers(gray[y0:y1, x0:x1], "", found_by).items():
                if marker_id in wanted:
                    seen[marker_id] = corners + np.array([x0, y0])
        return seen

    # -- pucks -----------------------------------------------------------------------------

    def _pucks(self, seen: dict[int, FloatArray]) -> dict[str, str | None]:
        spec = self.layout.pucks
        out: dict[str, str | None] = {}
        for marker_id, corners in seen.items():
            name = spec.name_of(marker_id)
            if name is None:
                continue
            if self._move is not None:
                corners = _moved(corners, np.asarray(cv2.invertAffineTransform(self._move), dtype=np.float64))
            x, y = back_project(self.camera, self.pose, corners, z=spec.height_mm).mean(axis=0)
            zone = self.layout.zone_at(float(x), float(y))
            out[name] = zone.name if zone else None
        return out

    # -- chips -----------------------------------------------------------------------------

    def _zones(self, frame: Image, patches: Image) -> dict[str, ZoneReading]:
        smooth = np.asarray(cv2.blur(patches, (CHANGED_BOX, CHANGED_BOX)), dtype=np.uint8)
        # a noisy sensor's pixels stray from the felt one by one: the patches are then looked at
        # box-averaged (a third of the noise), and the outline's extra spread is counted in its height
        self.noise = self._noise_level(patches)
        self._smoothed = self.noise > NOISY
        looked_at = smooth if self._smoothed else patches
        felt_ref = self._felt_reference(looked_at)
        if felt_ref is None:
            self.forget()
            return {
                g.zone.name: ZoneReading.blocked("the felt cannot be seen (covered or no light)") for g in self.zones
            }
        gain = self.felt / np.maximum(felt_ref, 1.0)
        self.gain = gain
        self.measured.clear()
        self.evidence.clear()
        changed = self._changed_samples(smooth) if self._remembered else None
        score = _background_distance(looked_at, gain, self.felt, self.ink, self._ink_lines)
        something = score > FOREGROUND
        hidden = np.zeros(frame.shape[:2], dtype=np.uint8)  # where nearer stacks stand in the frame
        moved = np.zeros(frame.shape[:2], dtype=np.uint8)  # where what nearer zones hide changed this frame
        out: dict[str, ZoneReading] = {}
        for g in self.zones:  # nearest first: a nearer stack may hide part of a farther zone
            name = g.zone.name
            if not g.in_view:
                out[name] = ZoneReading.unsure("the zone is not wholly in the camera's view")
                continue
            rows = slice(g.top, g.top + g.rows)
            x0, y0, x1, y1 = g.box  # only a nearer stack standing in the patch's part of the frame counts
            before = self._remembered.get(name)
            if (
                before is not None
                and changed is not None
                and int(changed[rows].sum()) <= CHANGED_SAMPLES
                and float(np.max(np.abs(gain / before.gain - 1.0))) <= CHANGED_LIGHT
                and not moved[y0:y1, x0:x1].any()
            ):
                out[name] = before.reading
                if before.hides is not None:
                    cv2.fillConvexPoly(hidden, before.hides, 1)
                continue
            seen = something[rows]
            hides: npt.NDArray[np.int32] | None = None
            if not seen.any():
                reading = ZoneReading.ok(())
            else:
                covered = self._hidden_in_patch(hidden, g) if hidden[y0:y1, x0:x1].any() else None
                reading, outline = self._zone(g, seen, score[rows], covered, frame, gain, looked_at[rows])
                hides = outline if outline is not None else (g.legal_px if reading.state != "ok" else None)
            out[name] = reading
            if hides is not None:
                cv2.fillConvexPoly(hidden, hides, 1)
            old = before.hides if before is not None else None
            if not (old is None and hides is None) and not (
                old is not None and hides is not None and np.array_equal(old, hides)
            ):
                for shape in (old, hides):
                    if shape is not None:
                        cv2.fillConvexPoly(moved, shape, 1)
            self._remembered[name] = _Remembered(reading, hides, gain)
            self._read_patches[rows] = smooth[rows]
        return out

    def _noise_level(self, patches: Image) -> float:
        """The sensor's noise (sigma, 8-bit levels) on the felt: from the differences between
        the felt samples and their neighbours (robust: edges and stacks are few of them)."""
        if not len(self._felt_samples):
            return 0.0
        flat = patches.reshape(-1, 3)
        a = np.take(flat, self._felt_samples, axis=0).astype(np.int16)
        b = np.take(flat, np.minimum(self._felt_samples + 1, len(flat) - 1), axis=0).astype(np.int16)
        return float(1.4826 * np.median(np.abs(a - b)) / math.sqrt(2.0))

    def _changed_samples(self, smooth: Image) -> npt.NDArray[np.intp]:
        """For each row of the (box-averaged) patches, how many samples (a pixel's channel) differ
        by more than CHANGED_LEVEL from that row when its zone was last read."""
        diff = cv2.absdiff(smooth, self._read_patches).reshape(len(smooth), -1)
        return np.asarray(np.count_nonzero(diff > CHANGED_LEVEL, axis=1), dtype=np.intp)

    def _felt_reference(self, patches: Image) -> FloatArray | None:
        """The felt's colour now, from every patch's pixels where no stack can stand."""
        if not len(self._felt_samples):
            return None
        # one row a channel (B, G, R): whole-array operations on a (n, 3) array cost several times more
        channels = np.take(patches.reshape(-1, 3), self._felt_samples, axis=0).T
        b, g, r = channels.astype(np.float32)
        # Robust to hands and stacks: the felt is the largest cluster; take the median of the
        # pixels whose chromaticity is near the expected felt's.
        total = np.maximum((b + g) + r, 1.0)
        expected = self.felt / self.felt.sum()
        off = np.square(b / total - expected[0]) + np.square(g / total - expected[1])
        near = np.sqrt(off + np.square(r / total - expected[2])) < 0.08
        count = int(np.count_nonzero(near))
        if count < 0.3 * len(near):
            return None
        return np.array([_median_byte(channel[near], count) for channel in channels], dtype=np.float64)

    def _hidden_in_patch(self, hidden: Image, g: _ZoneGeometry) -> Mask:
        grid = self._grid_px[g.top : g.top + g.rows]
        sampled = cv2.remap(hidden, grid[..., 0], grid[..., 1], cv2.INTER_NEAREST)
        return cv2.dilate(sampled, np.ones((5, 5), np.uint8)).astype(bool)

    def _zone(
        self,
        g: _ZoneGeometry,
        seen: Mask,
        score: npt.NDArray[np.float32],
        covered: Mask | None,
        frame: Image,
        gain: FloatArray,
        colours: Image,
    ) -> tuple[ZoneReading, npt.NDArray[np.int32] | None]:
        care = ~covered if covered is not None else None  # None: every pixel counts
        stray = seen & g.outside if care is None else seen & g.outside & care
        if np.count_nonzero(stray) > STRAY_PIXELS:
            # felt or its printing in a shadow (a stack's, from another light) is not something
            stray &= ~_in_shadow(colours, gain, self.felt, self.ink)
        if np.count_nonzero(stray) > STRAY_PIXELS:
            return ZoneReading.blocked(
                "something other than a stack in its circle covers the zone (a hand? chips over the line?)"
            ), None
        inside = seen & g.legal if care is None else seen & g.legal & care
        if np.count_nonzero(inside) < EMPTY_PIXELS:
            if covered is not None and np.count_nonzero(covered & g.legal) > 0.2 * g.legal_area:
                return ZoneReading.unsure("a nearer stack hides the zone"), None
            return ZoneReading.ok(()), None
        # 16-bit labels (a patch has far fewer than 65536 pixels): OpenCV labels them twice as fast
        count, labels, stats, _ = cv2.connectedComponentsWithStats(
            inside.view(np.uint8), connectivity=8, ltype=cv2.CV_16U
        )
        big = np.flatnonzero(stats[1:count, cv2.CC_STAT_AREA] >= EMPTY_PIXELS) + 1
        if len(big) != 1:
            return ZoneReading.unsure(f"{len(big)} separate things in the zone: one stack a zone is read"), None
        blob = labels == big[0]
        if covered is not None and np.count_nonzero(
            cv2.dilate(blob.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & covered
        ):
            return ZoneReading.unsure("a nearer stack hides part of this stack"), None
        w = self.half_width
        stack = _measure(blob, score, g.v_min, w, g.distance, self.height, g.stretch)
        if stack is None:
            return ZoneReading.unsure("the outline is not one upright stack"), None
        u0, v0, k, _ = stack
        height = self.height * (1 - 1 / k)
        bias = (
            HEIGHT_BIAS_CHIPS
            + HEIGHT_BIAS_PER_MM_PIXEL / g.px_per_mm
            + HEIGHT_BIAS_PER_MM_BLUR * math.hypot(self.blur_px / g.px_per_mm, BOX_SIGMA_MM if self._smoothed else 0.0)
            + HEIGHT_BIAS_PER_MM_GROWN * stack[3]
        )
        along, across, slant = self._zone_blur.get(g.zone.name, (self.spread_px, self.spread_px, 0.0))
        if self.smeared:  # the far edge grows with the blur along the stack, the base's sides with that across
            bias += (
                MOTION_BIAS_PER_MM_ALONG * (along - self.blur_px) + MOTION_BIAS_PER_MM_ACROSS * (across - self.blur_px)
            ) / g.px_per_mm
        chips_f = height / CHIP_THICKNESS_MM - bias - (JPEG_COUNT_BIAS if self.compressed else 0.0)
        self._last_count = chips_f  # for the robustness benchmark's diagnostics
        n = round(chips_f)
        if n < 1:
            return ZoneReading.unsure("something flat lies in the zone, not chips"), None
        if n > self.layout.max_stack_chips:
            return ZoneReading.unsure(f"a stack taller than {self.layout.max_stack_chips} chips"), None
        longest = self.longest_px
        if self.smeared and longest > MOTION_MAX_PX:
            return ZoneReading.unsure(
                f"the frame is smeared one way (motion blur: edges spread {longest:.1f} px one way, "
                f"{along:.1f} px along this stack, {across:.1f} px across it; at most {MOTION_MAX_PX:.1f} px "
                "one way can be counted): chips are not counted"
            ), None
        doubt = self._count_doubt()
        if doubt <= 0.0:
            return ZoneReading.unsure(
                f"the frame is too blurred to count chips (edges spread {self.spread_px:.1f} px; "
                f"at most {SHARP_ENOUGH_PX + MAX_COUNT_DOUBT / COUNT_DOUBT_PER_PX:.1f} px can be counted)"
            ), None
        if abs(chips_f - n) > doubt:
            return ZoneReading.unsure(
                f"the stack's height ({height:.1f} mm) is between {math.floor(chips_f)} and {math.ceil(chips_f)} chips"
            ), None
        kn = self.height / (self.height - n * CHIP_THICKNESS_MM)
        outline = _hull_outline(u0, v0, R, kn, g.distance)
        predicted = np.zeros_like(blob, dtype=np.uint8)
        cv2.fillConvexPoly(predicted, np.round((outline - [-w, g.v_min]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        edge = cv2.morphologyEx(predicted, cv2.MORPH_GRADIENT, _SQUARE_3)
        wrong = (predicted.view(np.bool_) ^ blob) & (edge == 0)
        disagree = np.count_nonzero(wrong if care is None else wrong & care)
        if disagree > MAX_SHAPE_MISMATCH * np.count_nonzero(predicted):
            return ZoneReading.unsure("the outline is not one upright stack"), None
        square = _misalignment(blob, score, u0, v0, kn, w, g.v_min, g.distance)
        centre = g.to_table(u0, v0)
        bands = self._bands(centre, chips_f * CHIP_THICKNESS_MM, n, frame, gain)
        sliver = self._sliver(centre, n, frame, gain)
        self.evidence[g.zone.name] = {"chips_f": chips_f, "n": n, "square": square, "bands": bands, "sliver": sliver}
        # a blur slanted to the stack's axis (motion) moves its outline's row middles across near its ends
        if square[1] > MAX_STRAY_MM + (slant / g.px_per_mm if self.smeared else 0.0):
            return ZoneReading.unsure(
                f"the stack is not square (its outline strays {square[1]:.1f} mm across from one upright stack: "
                "chips leaning or sloppy, and as much along the line of sight would change the count)"
            ), None
        if sliver[0] < SLIVER_SHARE:
            return ZoneReading.unsure(
                f"the stack is not square (a band of its side {sliver[1]:.1f} chips up is as plain as a chip's top: "
                "a chip pushed off the one below shows a sliver of that chip's top face, which the height counts)"
            ), None
        rivals = [m for m in (n - 1, n + 1) if m in bands]
        rival = max(rivals, key=lambda m: bands[m]) if n in bands and rivals else None
        closer = bands[rival] - bands[n] if rival is not None else -math.inf  # >= 0: the rival fits as well
        # the chips' edges wash out with the blur along the stack's axis (across it they stay)
        sharp = (along if self.smeared else self.spread_px) <= SHARP_ENOUGH_PX
        lenient = n < LEANING_CHIPS and not self.compressed and sharp
        not_square = ZoneReading.unsure(
            f"the stack is not square (the edges down its side fall in step with {rival} chips as well as "
            f"with the {n} its height says: a stack leaning along the line of sight looks taller or shorter)"
        )
        if closer >= (SHORT_BAND_MARGIN if lenient else 0.0):
            return not_square, None
        self.measured[g.zone.name] = (centre, n)
        self._named = {}
        chips = self._denominations(centre, n, frame, gain, (along, longest) if self.smeared else None)
        self.evidence[g.zone.name].update(self._named)
        unsure_colours = self._named.get("margin", 0.0) < SURE_COLOURS * self._named.get("wanted", 0.0)
        if closer >= 0.0 and not isinstance(chips, str) and unsure_colours:
            # a short stack whose side fits n +- 1 within noise: counted only when its colours are sure
            del self.measured[g.zone.name]
            return not_square, None
        on_felt = np.concatenate(
            [centre + (outline[:, :1] - u0) * g.across + (outline[:, 1:] - v0) * g.away, np.zeros((len(outline), 1))],
            axis=1,
        )
        # the hull on the felt, centred on the stack; the scaling is about the camera's foot
        outline_px = np.round(project(self.camera, self.pose, on_felt)).astype(np.int32)
        if isinstance(chips, str):
            return ZoneReading.unsure(chips), outline_px
        return ZoneReading.ok((StackReading(chips),)), outline_px

    def sample_frame(self, frame: Image, points: FloatArray) -> FloatArray:
        """RGB at table points (N, 3), mm) in `frame` as the reader sees them: through the pose
        and any move followed, the tone curve undone, white-balanced by the felt of the last
        frame read (call `read(frame)` first)."""
        px = self._in_frame(project(self.camera, self.pose, points))
        return np.asarray(self._sample(frame, px, self.gain)[:, ::-1], dtype=np.float64)

    def _in_frame(self, px: FloatArray) -> npt.NDArray[np.float32]:
        """Calibration pixels -> pixels of the frame now (through any move followed)."""
        return (px if self._move is None else _moved(px, self._move)).astype(np.float32)

    def _sample(self, frame: Image, px: npt.NDArray[np.float32], gain: FloatArray) -> FloatArray:
        """(N, 3) BGR at frame pixels `px` (`_in_frame`), the tone curve undone, times `gain`."""
        sampled = cv2.remap(frame, px[None, :, 0], px[None, :, 1], cv2.INTER_LINEAR)
        if self._lut is not None:
            sampled = cv2.LUT(sampled, self._lut)
        return np.asarray(sampled[0].astype(np.float64) * gain, dtype=np.float64)

    def _around(self, centre: FloatArray, angles: FloatArray) -> FloatArray:
        """(A, 2) unit directions on the felt from a stack's centre, `angles` (radians) either side
        of the one toward the camera's foot: round the side of the stack the camera sees."""
        toward = self.foot - centre
        toward /= np.linalg.norm(toward)
        side = np.array([toward[1], -toward[0]])
        return np.asarray(np.cos(angles)[:, None] * toward + np.sin(angles)[:, None] * side, dtype=np.float64)

    def _bands(self, centre: FloatArray, top_mm: float, n: int, frame: Image, gain: FloatArray) -> dict[int, float]:
        """How well the side's colour changes (edge spots, changes of denomination) fall on the
        boundaries between chips when the side, from the felt to the top's height, holds m chips
        (m = n - 1, n, n + 1): for each, the mean colour change along the side at the m - 1
        boundaries against that at the bands' middles, as (boundaries - middles) / (both)."""
        dirs = self._around(centre, np.radians(np.linspace(-50.0, 50.0, BAND_ANGLES)))
        steps = BAND_STEPS_PER_CHIP * max(n, 1)
        z = (np.arange(steps) + 0.5) / steps * top_mm
        ring = centre + R * dirs
        pts = np.concatenate(
            [np.repeat(ring[None], steps, axis=0), np.repeat(z[:, None, None], len(dirs), axis=1)], axis=2
        ).reshape(-1, 3)
        px = self._in_frame(project(self.camera, self.pose, pts))
        rgb = self._sample(frame, px, gain).reshape(steps, len(dirs), 3)
        change = np.linalg.norm(np.diff(rgb, axis=0), axis=2)  # (steps - 1, angles), at z between samples
        at = (np.arange(steps - 1) + 1.0) / steps * top_mm
        out: dict[int, float] = {}
        for m in (n - 1, n, n + 1):
            if m < 2:
                continue
            band = top_mm / m
            edges = band * np.arange(1, m)
            middles = band * (np.arange(m) + 0.5)
            grad = change.mean(axis=1)
            b = float(np.interp(edges, at, grad).mean())
            c = float(np.interp(middles, at, grad).mean())
            out[m] = (b - c) / max(b + c, 1e-6)
        return out

    def _sliver(self, centre: FloatArray, n: int, frame: Image, gain: FloatArray) -> tuple[float, float]:
        """How plain the side's plainest half chip is (see SLIVER_SHARE): the least spread across
        the angles of a half chip at least half a chip from the felt and from the top, over the
        side's median spread a quarter chip, and how many chips up it is (its middle); (inf, 0)
        when the stack is too short to hold one."""
        quarter = SLIVER_STEPS_PER_CHIP // 4
        quarters = 4 * n
        if quarters < 6:  # no half chip half a chip from both ends
            return math.inf, 0.0
        dirs = self._around(centre, SLIVER_ANGLES)
        steps = SLIVER_STEPS_PER_CHIP * n
        ring = centre + R * dirs
        # the side projected at each chip's boundary only, the heights between interpolated (a
        # vertical line's image over 3.3 mm is straight to far below a thousandth of a pixel):
        # projecting every sample cost ms on a tall stack
        levels = np.arange(n + 1) * CHIP_THICKNESS_MM
        pts = np.concatenate(
            [np.repeat(ring[None], n + 1, axis=0), np.repeat(levels[:, None, None], len(dirs), axis=1)], axis=2
        ).reshape(-1, 3)
        ends = project(self.camera, self.pose, pts).reshape(n + 1, len(dirs), 2)
        t = ((np.arange(SLIVER_STEPS_PER_CHIP) + 0.5) / SLIVER_STEPS_PER_CHIP)[None, :, None, None]
        px = self._in_frame((ends[:-1, None] + (ends[1:] - ends[:-1])[:, None] * t).reshape(-1, 2))
        rgb = self._sample(frame, px, gain).reshape(steps, len(dirs), 3)
        off = rgb - rgb.mean(axis=1, keepdims=True)
        spread = np.sqrt(np.mean(off * off, axis=1)).mean(axis=1).reshape(quarters, quarter).mean(axis=1)
        inner = spread[2 : quarters - 2]
        halves = (inner[:-1] + inner[1:]) / 2
        at = int(np.argmin(halves))
        typical = max(float(np.median(spread)), 1e-6)
        return float(halves[at]) / typical, (at + 3) / 4

    def _count_doubt(self) -> float:
        """How far from a whole number of chips a height may be and still count: less as the
        frame's edges blur beyond what the counting was measured on, less on a JPEG frame; on a
        frame smeared one way (and so counted at all: MOTION_MAX_PX), MOTION_COUNT_DOUBT."""
        doubt = MAX_COUNT_DOUBT - COUNT_DOUBT_PER_PX * max(self.spread_px - SHARP_ENOUGH_PX, 0.0)
        doubt = MOTION_COUNT_DOUBT if self.smeared else doubt
        return min(doubt, JPEG_COUNT_DOUBT) if self.compressed else doubt

    def _colour_margin(self, px_per_chip: float, blur_px: float | None = None) -> float:
        """The margin a chip's colour must have (see MIN_COLOUR_MARGIN), more on a blurred or JPEG
        frame (`blur_px`: the blur along the stack's side, when it is not the frame's `spread_px`)."""
        blur = self.spread_px if blur_px is None else blur_px
        wanted = MIN_COLOUR_MARGIN * max(1.0, COLOUR_PX_PER_CHIP / px_per_chip) ** COLOUR_MARGIN_GROWTH
        wanted *= max(1.0, blur / SHARP_ENOUGH_PX) ** COLOUR_MARGIN_PER_BLUR
        return float(wanted * (JPEG_COLOUR_MARGIN if self.compressed else 1.0))

    def _denominations(
        self, centre: FloatArray, n: int, frame: Image, gain: FloatArray, blur_px: tuple[float, float] | None = None
    ) -> tuple[int, ...] | str:
        """Each chip's value, bottom to top, from the colours down the stack's near side, every
        chip named at once with the blur between neighbouring chips modelled
        (vision/stack_colours.py); a chip that could be more than one colour makes it "unsure".
        `blur_px` (a frame smeared one way): the blur along the stack's side, which the namer models
        (it mixes neighbouring chips), and the blur along its longest axis, which the margin asked
        grows with (a blur across the side mixes in what the namer does not model: the felt beside
        the stack, its top face); else the frame's `spread_px` for both."""
        along, blur = (self.spread_px, self.spread_px) if blur_px is None else blur_px

        dirs = self._around(centre, SIDE_ANGLES)
        angles = len(dirs)
        # on the side itself: a point inside it would show the side a fraction of a chip higher
        ring = centre + R * dirs
        z = ((np.arange(n)[:, None] + np.array(SAMPLE_HEIGHTS)[None, :]) * CHIP_THICKNESS_MM).reshape(-1)
        on_side = np.concatenate(
            [np.repeat(ring[None], len(z), axis=0), np.repeat(z[:, None, None], angles, axis=1)], axis=2
        ).reshape(-1, 3)
        on_felt = np.concatenate([centre + (R + FELT_BESIDE_MM) * dirs, np.zeros((angles, 1))], axis=1)
        px = self._in_frame(project(self.camera, self.pose, np.concatenate([on_side, on_felt])))
        middle = angles // 2  # how tall a chip is in the frame, from the lowest and highest samples
        rise = float(np.linalg.norm(px[len(on_side) - angles + middle] - px[middle]))
        px_per_chip = rise / (n - 1 + SAMPLE_HEIGHTS[-1] - SAMPLE_HEIGHTS[0])
        rgb = self._sample(frame, px, gain)[:, ::-1]
        if self.compressed:  # the felt's colour bled into the bottom chip (JPEG_BOTTOM_CHROMA)
            rgb = _unmix_bottom_chroma(rgb, angles, len(on_side))
        namer = namer_for(tuple(c.colour for c in self.chips.chips), tuple(float(v) for v in self.felt[::-1]))
        # blur beyond what the namer's blurs were measured on is added to each of them
        extra = math.sqrt(max(along**2 - SHARP_ENOUGH_PX**2, 0.0))
        named = namer.name(
            rgb[: len(on_side)].reshape(n, len(SAMPLE_HEIGHTS), angles, 3), rgb[len(on_side) :], px_per_chip, extra
        )
        self._named = {
            "margin": float(named.margins.min()),
            "misfit": float(named.misfit),
            "wanted": self._colour_margin(px_per_chip, blur),
            "margins": [float(m) for m in named.margins],
            "fits": [float(f) for f in named.fits] if named.fits is not None else [],
            "named": [self.chips.chips[i].value for i in named.colours],
            "rivals": [self.chips.chips[i].value for i in named.rivals],
            "hue_leads": [named.hue_lead(i, r)[0] for i, r in enumerate(named.rivals)],
            "hue_off": named.hue_off.tolist() if named.hue_off is not None else [],
            "hue_gaps": named.hue_gaps.tolist() if named.hue_gaps is not None else [],
            "lab_leads": [named.lab_lead(i)[1] for i in range(len(named.colours))],
            "px_per_chip": px_per_chip,
        }
        if named.misfit > MAX_COLOUR_MISFIT:
            return "the colours down the stack's side fit no sequence of chips"
        # chips fewer pixels tall than at the two-camera mount leave the blur and the bands'
        # offset less certain: more margin is asked of them
        wanted = self._colour_margin(px_per_chip, blur)
        if float(named.margins.min()) < wanted:
            return f"chip {named.weakest + 1} from the bottom could be more than one colour"
        if named.fits is not None:
            # an odd chip that fits its colour badly needs a lead that grows with its misfit
            colours = np.asarray(named.colours)
            odd = np.ones(len(colours), dtype=bool) if len(colours) > 1 else np.zeros(1, dtype=bool)
            odd[1:] &= colours[1:] != colours[:-1]
            odd[:-1] &= colours[:-1] != colours[1:]
            limit = FIT_LIMIT_ODD * (JPEG_COLOUR_MARGIN if self.compressed else 1.0)
            asked = wanted + np.where(odd, FIT_LEAD * np.maximum(0.0, named.fits - limit), 0.0)
            short = named.margins / asked
            if float(short.min()) < 1.0:
                i = int(np.argmin(short))
                value = self.chips.chips[named.colours[i]].value
                rival = named.rival(i)
                nearest = f"{value}, then {self.chips.chips[rival].value}" if rival is not None else f"{value}"
                return (
                    f"chip {i + 1} from the bottom fits no chip colour well (worn or dirty?): nearest {nearest}, "
                    "not far enough apart for a chip so far from its colour"
                )
            hue = self._hue_doubt(named, odd)
            if hue is not None:
                return hue
        lab = self._lab_doubt(named)
        if lab is not None:
            return lab
        return tuple(self.chips.chips[i].value for i in named.colours)

    def _lab_doubt(self, named: NamedStack) -> str | None:
        """The third opinion on every chip, in Lab (see LAB_LEAD): why the stack is "unsure" when a
        chip's own colour is nearer another chip colour's than the one it is named, else None."""
        leads = [named.lab_lead(i) for i in range(len(named.colours))]
        i = int(np.argmin([lead for _, lead in leads]))
        other, lead = leads[i]
        if other < 0 or lead >= -LAB_LEAD:
            return None
        mine, theirs = self.chips.chips[named.colours[i]].value, self.chips.chips[other].value
        return (
            f"chip {i + 1} from the bottom: its colour (in Lab, at the stack's light) is nearer {theirs}'s "
            f"than {mine}'s (worn or dirty?)"
        )

    def _hue_doubt(self, named: NamedStack, odd: npt.NDArray[np.bool_]) -> str | None:
        """The second opinion on each odd chip, free of lightness (see HUE_SHARE): why the stack
        is "unsure" when an odd chip's hue does not confirm its name, else None."""
        for i in (int(j) for j in np.flatnonzero(odd)):
            rivals = {named.rival(i), *(named.colours[j] for j in (i - 1, i + 1) if 0 <= j < len(named.colours))}
            rivals.discard(named.colours[i])
            for other in sorted(c for c in rivals if c is not None):
                lead, gap = named.hue_lead(i, other)
                if gap > HUE_MIN_GAP and lead < HUE_SHARE * gap:
                    mine, theirs = self.chips.chips[named.colours[i]].value, self.chips.chips[other].value
                    verdict = (
                        f"is nearer {theirs}'s than {mine}'s" if lead < 0 else f"does not tell {mine} from {theirs}"
                    )
                    return f"chip {i + 1} from the bottom: its hue {verdict} (worn or dirty?)"
        return None


_YCC = np.array(  # RGB -> Y, Cb, Cr (ITU-R BT.601, as JPEG)
    [[0.299, 0.587, 0.114], [-0.169, -0.331, 0.5], [0.5, -0.419, -0.081]]
)
_YCC_INV = np.linalg.inv(_YCC)


def _unmix_bottom_chroma(rgb: FloatArray, angles: int, side: int) -> FloatArray:
    """`rgb` (the side's samples, RGB: the bottom chip's SAMPLE_HEIGHTS x angles first; the felt
    beside the stack, one an angle, from `side` on) with the felt's extra share on a JPEG frame
    (JPEG_BOTTOM_CHROMA) taken off the bottom chip's colour (Cb, Cr), its lightness (Y) kept."""
    out = rgb.copy()
    heights = len(JPEG_BOTTOM_CHROMA)
    chip = out[: heights * angles].reshape(heights, angles, 3) @ _YCC.T
    felt = rgb[side : side + angles] @ _YCC.T
    share = np.array(JPEG_BOTTOM_CHROMA)[:, None, None]
    chip[..., 1:] = (chip[..., 1:] - share * felt[None, :, 1:]) / (1.0 - share)
    out[: heights * angles] = (chip @ _YCC_INV.T).reshape(-1, 3)
    return out


def _in_shadow(colours: Image, gain: FloatArray, felt: npt.NDArray[np.float32], ink: npt.NDArray[np.float32]) -> Mask:
    """Pixels (white-balanced) within FOREGROUND of the felt or of its printing darkened by a
    shadow (to SHADOW_DEPTH of their light): colour that a stack's shadow leaves on the felt."""
    q = colours.astype(np.float32) * gain.astype(np.float32)
    near = np.zeros(colours.shape[:2], dtype=bool)
    for surface in (felt, ink):
        length = float(np.linalg.norm(surface))
        unit = surface / length
        t = np.clip(q @ unit, SHADOW_DEPTH * length, length)
        d = np.linalg.norm(q - t[..., None] * unit, axis=-1)
        near |= d <= FOREGROUND
    return near


def _blockiness(gray: Image) -> float:
    """Mean level step across the columns where JPEG's 8 x 8 blocks meet, over the mean step
    elsewhere (every 4th row): about 1 for a raw frame, 1.5 and more for a JPEG one."""
    d = np.abs(np.diff(gray[::4].astype(np.int16), axis=1))
    at_edges = d[:, 7::8]
    inside = (float(d.sum()) - float(at_edges.sum())) / max(d.size - at_edges.size, 1)
    return (float(at_edges.mean()) + 0.05) / (inside + 0.05)


def _moved(points: npt.NDArray[Any], move: FloatArray) -> FloatArray:
    """Pixels (..., 2) through a 2 x 3 affine move."""
    return np.asarray(points @ move[:, :2].T + move[:, 2], dtype=np.float64)


def _median_byte(values: Image, count: int) -> float:
    """The median of `count` (> 0) 8-bit values, as np.median gives it (the mean of the middle two
    of an even count), from their histogram rather than a sort."""
    cumulative = np.cumsum(np.bincount(values, minlength=256))
    low = int(np.searchsorted(cumulative, (count - 1) // 2, side="right"))
    high = int(np.searchsorted(cumulative, count // 2, side="right"))
    return (low + high) / 2


def _side_px(corners: FloatArray) -> float:
    return float(np.mean(np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)))


def _window_detector(dictionary: str, side_px: float) -> Any:
    """A marker finder for small windows around markers of about `side_px` pixels: one adaptive
    threshold scale fitted to the marker's cells (the default three scales cost 5-20 times more
    and, in a window only a little larger than the marker, miss some of them)."""
    found_by = detector(dictionary)
    params = found_by.getDetectorParameters()
    cells = int(dictionary.split("_")[1].split("X")[0]) + 2 if "X" in dictionary else 8
    size = max(3, min(2 * int(side_px / cells) + 1, 31))
    params.adaptiveThreshWinSizeMin = size
    params.adaptiveThreshWinSizeMax = size
    found_by.setDetectorParameters(params)
    return found_by


def _square(x: float, y: float, side: float, z: float) -> FloatArray:
    h = side / 2
    return np.array([[x - h, y - h, z], [x + h, y - h, z], [x + h, y + h, z], [x - h, y + h, z]])


def _ring(x: float, y: float, r: float, z: float) -> FloatArray:
    a = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    return np.stack([x + r * np.cos(a), y + r * np.sin(a), np.full(24, z)], axis=1)


def _background_distance(
    patches: Image,
    gain: FloatArray,
    felt: npt.NDArray[np.float32],
    ink: npt.NDArray[np.float32],
    ink_lines: npt.NDArray[np.intp],
) -> npt.NDArray[np.float32]:
    """Distance of each white-balanced colour from the felt; on the printed lines (`ink_lines`,
    flat indices into the patches' pixels), from the segment felt-ink (their blends, along the
    lines' edges, are felt too). Only there: a white chip's edge blurred into the felt passes near
    the ink's light blue. One affine transform puts colours in a frame whose first axis runs from
    felt to ink. Whole-image OpenCV passes in float32 (every patch pixel, each frame: this is one
    of the reader's largest costs); the per-line fix-up touches only the line pixels (a tenth)."""
    seg = (ink - felt).astype(np.float64)
    length = float(np.linalg.norm(seg))
    e1 = seg / length
    e2 = np.cross(e1, [1.0, 0.0, 0.0] if abs(e1[0]) < 0.9 else [0.0, 1.0, 0.0])
    e2 /= np.linalg.norm(e2)
    e3 = np.cross(e1, e2)
    basis = np.stack([e2, e3, e1])  # the felt-ink axis last: the sums below add it last
    m = np.concatenate([basis * gain[None, :], -(basis @ felt)[:, None]], axis=1).astype(np.float32)
    q = cv2.transform(patches.astype(np.float32), m)
    squares = cv2.multiply(q, q)
    # off the lines, the distance squared: (across1^2 + across2^2) + along^2, in that order
    total = cv2.transform(squares, _SUM_OF_CHANNELS)
    flat = total.reshape(-1)
    at = 3 * ink_lines
    along = np.take(q.reshape(-1), at + 2)
    beyond = np.minimum(along, 0.0) + np.maximum(along - length, 0.0)  # outside the segment felt-ink
    squared = squares.reshape(-1)
    flat[ink_lines] = (np.take(squared, at) + np.take(squared, at + 1)) + beyond**2
    return np.asarray(cv2.sqrt(total), dtype=np.float32)


_SUM_OF_CHANNELS = np.array([[1.0, 1.0, 1.0]], dtype=np.float32)


_RING_ANGLES = np.linspace(0, 2 * math.pi, 48, endpoint=False)
_RING = np.stack([np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)], axis=1)  # a stack's outline: 48 points a circle
_SQUARE_3 = np.ones((3, 3), np.uint8)


def _hull_outline(u0: float, v0: float, r: float, k: float, distance: float) -> FloatArray:
    """Outline (u, v) of a stack of radius r on (u0, v0) whose top projects enlarged k times
    about the camera's foot at (0, -distance): the convex hull of the two circles."""
    base = np.array([u0, v0]) + r * _RING
    top_centre = np.array([u0 * k, (v0 + distance) * k - distance])
    top = top_centre + r * k * _RING
    hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32))
    return np.asarray(hull, dtype=np.float64).reshape(-1, 2)


def _measure(
    blob: Mask, score: npt.NDArray[np.float32], v_min: float, w: int, distance: float, height: float, stretch: float
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
    lefts = np.argmax(blob, axis=1).tolist()
    rights = (width - 1 - np.argmax(blob[:, ::-1], axis=1)).tolist()
    # 0 for an empty row, 1 for one pixel, 2 for two or more
    per_row = [(1 + (r > left)) if f else 0 for f, left, r in zip(filled.tolist(), lefts, rights, strict=True)]
    front_row = int(np.argmax(filled))
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
    first, last = int(np.argmax(column)), len(column) - 1 - int(np.argmax(column[::-1]))
    profile = score[:, max(c0 - 1, 0) : c0 + 2].mean(axis=1)
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
    sol, *_ = np.linalg.lstsq(a, np.sum(pts**2, axis=1), rcond=None)
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
    cols = np.arange(max(round(top_col) - FAR_EDGE_COLUMNS, 0), min(round(top_col) + FAR_EDGE_COLUMNS + 1, width))
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
    has = np.any(inside, axis=1)
    lefts = np.argmax(inside, axis=1)
    rights = width - 1 - np.argmax(inside[:, ::-1], axis=1)
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
    top_offset = float(np.median(top)) if len(top) else 0.0
    if len(side) == 0:
        return top_offset, 0.0, 0.0
    return top_offset, float(np.abs(side).max()), float(np.sqrt(np.mean(side**2)))


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
    values = score[:, cols].astype(np.float64)
    j = np.arange(len(cols))
    near = np.sort(values[last[None, :] - np.arange(4)[:, None], j], axis=0)  # the last 4 rows inside
    level = (near[1] + near[2]) / 2 / 2  # half their median
    pa = values[last, j]
    pb = values[np.minimum(last + 1, n - 1), j]
    pc = values[last - 1, j]
    out = last + (pa - level) / np.maximum(pa - pb, 1e-6)
    out = np.where(pb >= level, last + 0.5, out)
    before = np.where(pc > level, last - 1 + (pc - level) / np.maximum(pc - pa, 1e-6), last - 0.5)
    out = np.where(pa <= level, before, out)
    out = np.where(last + 1 >= n, last.astype(np.float64), out)
    return np.asarray(np.where(has, out, np.nan), dtype=np.float64)


def _edge_spread_across_px(patch: Image) -> float:
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
    return max(spreads, default=SHARP_EDGE_PX)


def _edge_spreads(patch: Image, corners: FloatArray) -> list[tuple[FloatArray, float, float]]:
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
        g = along[along > beside * MARKER_EDGE_TAN]
        energy = float(np.sum(g * g))
        if energy > 0.0:
            total = float(g.sum())
            out.append((normal, contrast * total / (2 * math.sqrt(math.pi) * energy), total / contrast))
    return out


def _blur_covariance(spreads: list[tuple[FloatArray, float, float]], fallback: float) -> FloatArray:
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
    if rank < 3 or sv[-1] < MIN_SLANT_CONDITION * sv[0]:
        sol, *_ = np.linalg.lstsq(a[:, [0, 2]] * w[:, None], b * w, rcond=None)
        sol = np.array([sol[0], 0.0, sol[1]])
    cov = np.array([[sol[0], sol[1]], [sol[1], sol[2]]])
    vals, vecs = np.linalg.eigh(cov)
    vals = np.maximum(vals, (0.5 * fallback) ** 2)  # a spread is never much below a sharp edge's
    return np.asarray(vecs @ np.diag(vals) @ vecs.T, dtype=np.float64)


def _edge_spread_px(patch: Image) -> float:
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
        return SHARP_EDGE_PX
    return float((high - low) * float(g.sum()) / (2 * math.sqrt(math.pi) * energy))


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
    near = np.sort(values[:, :4], axis=1)
    level = (near[:, 1] + near[:, 2]) / 2 / 2  # half the median of the 4
    pa, pb, pc = values[:, 3], values[:, 4], values[:, 2]
    before = window[:, 2] > level.astype(np.float32)  # as numpy compares a float32 with a Python float
    return np.where(
        pa <= level,
        np.where(before, (edges - step) + step * (pc - level) / np.maximum(pc - pa, 1e-6), edges - step * 0.5),
        np.where(pb >= level, edges + step * 0.5, edges + step * (pa - level) / np.maximum(pa - pb, 1e-6)),
    )


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
