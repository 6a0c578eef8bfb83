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

The reading of a frame is a pipeline: the markers (the camera's check, and the frame's blur and
JPEG measured on them), the pucks, the tone curve, the zones' patches, the frame's conditions
(`vision.conditions.FrameConditions`, measured once and passed down) and then, for each zone
nearest first, the stages of vision/stages.py, composed in `Reader._zone`. The constants they
read by are one `vision.tuning.Tuning`, given to the Reader.

    reader = Reader(layout, calibration)
    reading = reader.read(frame)
    reading.zones["seat3.first"].value      # 30, or None when blocked / unsure
    reading.pucks                            # {"blind": "seat4.puck"}
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.calibration import CHECK_MIN_MARKERS, Calibration, CameraCheck, detector, find_markers
from vision.chips import CHIP_THICKNESS_MM, ChipSet
from vision.conditions import FrameConditions, measure_on_markers
from vision.geometry import back_project, project
from vision.layout import Layout, Zone
from vision.readings import FrameReading, StackReading, ZoneReading
from vision.scene import JPEG_CHROMA
from vision.stages import (
    Blob,
    FrameView,
    StackEvidence,
    ZoneGeometry,
    check_colours,
    check_outline,
    check_square,
    count_stack,
    decide_height,
    find_stack,
    hull_outline,
    moved,
    name_colours,
)
from vision.tone import ToneCurve, probe_pixels, sample
from vision.tuning import TUNING, Tuning

__all__ = ["TUNING", "FrameReading", "Reader", "StackReading", "Tuning", "ZoneReading"]

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class _Remembered:
    """A zone's reading as last made, what it hid of the frame for farther zones, and the white
    balance it was made under."""

    reading: ZoneReading
    hides: npt.NDArray[np.int32] | None
    gain: FloatArray


@dataclass(frozen=True)
class ViewCount:
    """What one view measured of a stack's count (vision/join.py joins two facing views'): the
    count before rounding (`Height.chips_f`) and how many chips it reads long a mm of the top's
    push away from this camera (1 / (3.3 mm tan(from vertical)): where the camera stands, nothing
    fitted)."""

    chips: float
    per_mm: float


WAITING = "waiting for the other camera's count of this stack"  # a two-view reader's unsure reason


@dataclass(frozen=True, eq=False)
class _ZoneResult:
    """What reading one zone afresh gave: its reading, the outline in the frame it hides of
    farther zones (None: see `Reader._zones`), what its stack's stages saw, and the stack's
    centre on the felt and count when its outline, count and squareness passed (None else)."""

    reading: ZoneReading
    outline_px: npt.NDArray[np.int32] | None = None
    evidence: StackEvidence | None = None
    measured: tuple[FloatArray, int] | None = None


class Reader:
    """Reads frames of one table, through one calibration.

    Building it prepares each zone's resampling maps (a few tens of ms); `read` then takes
    one frame. Not thread-safe: give each worker thread its own Reader. `tuning`: the constants
    it reads by (vision/tuning.py; the shipped ones by default). `jpeg_chroma`: the colour
    resolution of the camera's JPEG, as its stream says (a JPEG's own header): "4:2:0", halved
    down and across the frame (what MJPEG cameras send by default, and what the reader assumes),
    "4:2:2" halved across only, or "4:4:4". Down the frame is along a stack's side: on 4:2:0 the
    felt's colour bleeds into the bottom chip and is taken off (`Tuning.jpeg_bottom_chroma`), on
    the others it does not and is not (issue 36's eleventh round)."""

    def __init__(
        self,
        layout: Layout,
        calibration: Calibration,
        chips: ChipSet | None = None,
        tuning: Tuning = TUNING,
        jpeg_chroma: str = "4:2:0",
    ) -> None:
        if jpeg_chroma not in JPEG_CHROMA:
            raise ValueError(f"jpeg_chroma must be one of {', '.join(JPEG_CHROMA)}, not {jpeg_chroma!r}")
        self.jpeg_chroma = jpeg_chroma
        self.tuning = tuning
        self.layout = layout
        self.calibration = calibration
        self.chips = chips or layout.chips
        self.camera = calibration.camera
        self.pose = calibration.pose
        eye = self.pose.position
        self.foot = eye[:2].copy()
        self.height = float(eye[2])
        self.max_height = layout.max_stack_chips * CHIP_THICKNESS_MM
        self.half_width = math.ceil(max(z.r for z in layout.chip_zones()) * 1.12 + tuning.margin_mm + 4)
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
        # The frame's blur and JPEG as measured on the calibration markers at the last full check
        # that found the camera in place (vision/conditions.py); each frame adds its noise.
        self._on_markers = FrameConditions.sharp(tuning)
        self._last_check: CameraCheck | None = None
        # the calibration markers' corners (px) at the last full check that found the camera in
        # place: a shaking mount moves them from check to check (vision/health.py)
        self.marker_corners: dict[int, FloatArray] = {}
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
        # What the last frame read showed (the stages keep nothing; these are their results): its
        # conditions, the felt's white balance (BGR gains), each stack read afresh and what its
        # stages saw, and each whose outline, count and squareness passed, whatever its colours
        # (centre on the felt, chips: vision/learn.py measures those)
        self.conditions = self._on_markers
        self.gain = np.ones(3)
        self.evidence: dict[str, StackEvidence] = {}
        self.measured: dict[str, tuple[FloatArray, int]] = {}
        self._move: FloatArray | None = None  # the camera's small move being followed (calibration px -> now)
        self.tone: ToneCurve | None = None  # as fitted on the last frame
        self._lut: npt.NDArray[np.uint8] | None = None  # levels now -> levels at calibration, if not a gain
        self.felt = np.array(layout.felt[::-1], dtype=np.float32)  # BGR
        self.felt_rgb = (float(layout.felt[0]), float(layout.felt[1]), float(layout.felt[2]))
        self.ink = np.array(layout.ink[::-1], dtype=np.float32)
        self.zones: list[ZoneGeometry] = []
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
        # every 4th row and column of each zone's patch in view, where no stack of the zone can stand
        width = 2 * self.half_width + 1
        samples = [np.zeros(0, dtype=np.intp)]
        for g in self.zones:
            if g.in_view:
                rows, cols = np.nonzero(~g.legal[::4, ::4])
                samples.append((g.top + 4 * rows) * width + 4 * cols)
        self._felt_samples = np.concatenate(samples)
        grid_size = sum(g.rows for g in self.zones) * width
        self._felt_neighbours = np.minimum(self._felt_samples + 1, grid_size - 1)  # each sample's right-hand pixel
        grid_px = np.concatenate(maps).astype(np.float32)
        # each zone's reading and its rows of the patches (box-averaged) as they were when it was made
        self._remembered: dict[str, _Remembered] = {}
        # zones to read afresh on the next frame though they look the same (`reread`), and the
        # zones read afresh on the last frame, each with why: "changed" (its patch or the light
        # on it changed since it was read), "new" (nothing remembered: the first frame, after a
        # move of the camera or `forget`) or "asked" (vision/fusion.py: another frame's reading)
        self._asked: set[str] = set()
        self.afresh: dict[str, str] = {}
        # two facing views (vision/join.py): each stack this frame measured (`counts`), and the
        # counts the two views joined give, to decide by instead of this view's own (`join`);
        # None: one view, the count is this view's own (as shipped)
        self.counts: dict[str, ViewCount] = {}
        self._joined: dict[str, float] | None = None
        self._own: frozenset[str] = frozenset()
        self._read_patches = np.zeros((len(grid_px), grid_px.shape[1], 3), dtype=np.uint8)
        self._map1, self._map2 = cv2.convertMaps(grid_px[..., 0], grid_px[..., 1], cv2.CV_16SC2)
        self._grid_px = grid_px

    def _prepare(self, zone: Zone, top: int) -> tuple[ZoneGeometry, FloatArray, Mask]:
        centre = np.array(zone.centre)
        away = centre - self.foot
        distance = float(np.linalg.norm(away))
        away /= distance
        across = np.array([away[1], -away[0]])
        k_max = self.height / (self.height - self.max_height)
        reach = zone.r + self.tuning.margin_mm  # the farthest any chip edge can be from the zone's centre
        v_far = (reach + distance) * k_max - distance + self.tuning.margin_mm
        v_min = -math.ceil(reach + 4)
        rows = math.ceil(v_far) - v_min + 3
        w = self.half_width
        us = np.arange(-w, w + 1, dtype=np.float64)
        vs = v_min + np.arange(rows, dtype=np.float64)
        uu, vv = np.meshgrid(us, vs)
        table = centre + uu[..., None] * across + vv[..., None] * away
        on_lines = np.zeros(uu.shape, dtype=bool)
        span = math.hypot(w, max(abs(v_min), rows + v_min)) + 2 + self.tuning.margin_mm
        for other in self.layout.zones.values():  # the printed circles: 2 mm lines, blurred
            if math.dist(other.centre, zone.centre) > span + other.r:
                continue  # too far to cross this patch
            ring = np.hypot(table[..., 0] - other.x, table[..., 1] - other.y)
            on_lines |= np.abs(ring - other.r) < 1.0 + self.tuning.margin_mm
        flat = np.concatenate([table.reshape(-1, 2), np.zeros((uu.size, 1))], axis=1)
        grid = project(self.camera, self.pose, flat).reshape(rows, 2 * w + 1, 2)
        in_view = bool(
            grid[..., 0].min() >= 1
            and grid[..., 1].min() >= 1
            and grid[..., 0].max() < self.camera.width - 2
            and grid[..., 1].max() < self.camera.height - 2
        )
        hull = hull_outline(0.0, 0.0, reach, k_max, distance)
        legal = np.zeros((rows, 2 * w + 1), dtype=np.uint8)
        cv2.fillConvexPoly(legal, np.round((hull - [-w, v_min]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        on_felt = np.concatenate([centre + hull[:, :1] * across + hull[:, 1:] * away, np.zeros((len(hull), 1))], axis=1)
        legal_px = np.round(project(self.camera, self.pose, on_felt)).astype(np.int32)
        mid_row, mid_col = -v_min, w
        per_u = np.linalg.norm(grid[mid_row, mid_col + 1] - grid[mid_row, mid_col - 1])
        per_v = np.linalg.norm(grid[mid_row + 1, mid_col] - grid[mid_row - 1, mid_col])
        geometry = ZoneGeometry(
            zone,
            away,
            across,
            distance,
            top,
            rows,
            float(v_min),
            w,
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
            self.afresh = dict.fromkeys((g.zone.name for g in self.zones), "new")
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
        # the frame's conditions, measured once: the blur and JPEG at the last marker check, the noise now
        self.conditions = self._on_markers.with_noise(self._noise_level(patches), self.tuning)
        if self.jpeg_chroma != "4:2:0":  # the stream keeps its colour down the frame
            self.conditions = dataclasses.replace(self.conditions, chroma_halved=False)
        zones = self._zones(frame, patches, self.conditions)
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
        grid = self._grid_px if move is None else moved(self._grid_px, move).astype(np.float32)
        self._map1, self._map2 = cv2.convertMaps(grid[..., 0], grid[..., 1], cv2.CV_16SC2)
        self._tone_probes = (
            None
            if self._tone_probes_at_calibration is None
            else (self._tone_probes_at_calibration if move is None else moved(self._tone_probes_at_calibration, move))
        )
        self.forget()

    def reread(self, zones: Iterable[str]) -> None:
        """Read these zones afresh on the next frame even if they look as they did (a second,
        independent reading of a wager for vision/fusion.py); they are reported in `afresh` as
        "asked", unless their patch changed too."""
        self._asked.update(zones)

    def join(self, counts: Mapping[str, float], own: Iterable[str] = ()) -> None:
        """Read as one of two facing views (vision/join.py) from the next frame on: a stack's
        count is the two views' counts joined (`counts`, zone -> count before rounding) where
        there is one, this view's own in the zones `own` (the other view cannot measure the
        stack: a nearer stack hides it there, ...), else "unsure: waiting for the other camera's
        count of this stack"."""
        self._joined = dict(counts)
        self._own = frozenset(own)

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
            if float(cv2.matchTemplate(now, patch, cv2.TM_CCOEFF_NORMED)[0, 0]) < self.tuning.marker_same:
                return None
        return self._last_check

    def _remember_markers(self, gray: Image, seen: dict[int, FloatArray], check: CameraCheck) -> None:
        """Keep how each marker looked at a check that found the camera in place."""
        self._marker_patches = []
        self._last_check = None
        if check.bumped or not check.verified:
            return
        self.marker_corners = dict(seen)
        h, w = gray.shape
        marked: list[tuple[Image, FloatArray]] = []  # each marker's patch, and its corners in it
        for corners in seen.values():
            x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 3
            x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 4
            box = (max(int(x0), 0), max(int(y0), 0), min(int(x1), w), min(int(y1), h))
            patch = gray[box[1] : box[3], box[0] : box[2]].copy()
            if patch.size >= 64 and float(patch.std()) > 10.0:
                self._marker_patches.append((box, patch))
                marked.append((patch, corners - [box[0], box[1]]))
        if marked:
            names = [g.zone.name for g in self.zones]
            self._on_markers = measure_on_markers(gray, marked, self._axes, names, self.tuning)
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
                and float(cv2.matchTemplate(now, remembered[0], cv2.TM_CCOEFF_NORMED)[0, 0]) >= self.tuning.marker_same
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
        return 4 * int(np.count_nonzero(patch > self.tuning.puck_bright * max(felt, 8.0))) >= self._puck_min_bright

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
                corners = moved(corners, np.asarray(cv2.invertAffineTransform(self._move), dtype=np.float64))
            x, y = back_project(self.camera, self.pose, corners, z=spec.height_mm).mean(axis=0)
            zone = self.layout.zone_at(float(x), float(y))
            out[name] = zone.name if zone else None
        return out

    # -- chips -----------------------------------------------------------------------------

    def _zones(self, frame: Image, patches: Image, conditions: FrameConditions) -> dict[str, ZoneReading]:
        t = self.tuning
        smooth = np.asarray(cv2.blur(patches, (t.changed_box, t.changed_box)), dtype=np.uint8)
        # a noisy sensor's pixels stray from the felt one by one: the patches are then looked at
        # box-averaged (a third of the noise), and the outline's extra spread is counted in its height
        looked_at = smooth if conditions.smoothed else patches
        felt_ref = self._felt_reference(looked_at)
        if felt_ref is None:
            self.forget()
            self.afresh = dict.fromkeys((g.zone.name for g in self.zones), "new")
            return {
                g.zone.name: ZoneReading.blocked("the felt cannot be seen (covered or no light)") for g in self.zones
            }
        gain = self.felt / np.maximum(felt_ref, 1.0)
        self.gain = gain
        self.measured.clear()
        self.evidence.clear()
        self.counts.clear()
        view = FrameView(frame, self._lut, gain, self._move, self.camera, self.pose, self.foot)
        changed = self._changed_samples(smooth, conditions.noise) if self._remembered else None
        # every patch's distance from the felt, worked out (for all the patches at once: the same
        # numbers) only when a zone is read afresh: on a still table none is
        score: npt.NDArray[np.float32] | None = None
        something: Mask | None = None
        hidden = np.zeros(frame.shape[:2], dtype=np.uint8)  # where nearer stacks stand in the frame
        newly = np.zeros(frame.shape[:2], dtype=np.uint8)  # where what nearer zones hide changed this frame
        out: dict[str, ZoneReading] = {}
        asked, self._asked = self._asked, set()
        self.afresh = {}
        for g in self.zones:  # nearest first: a nearer stack may hide part of a farther zone
            name = g.zone.name
            if not g.in_view:
                out[name] = ZoneReading.unsure("the zone is not wholly in the camera's view")
                continue
            rows = slice(g.top, g.top + g.rows)
            x0, y0, x1, y1 = g.box  # only a nearer stack standing in the patch's part of the frame counts
            before = self._remembered.get(name)
            same = (
                before is not None
                and changed is not None
                and int(changed[rows].sum()) <= t.changed_samples
                and _same_light(gain, before.gain, self.felt, t.changed_light)
                and not newly[y0:y1, x0:x1].any()
            )
            if same and before is not None and name not in asked:
                out[name] = before.reading
                if before.hides is not None:
                    cv2.fillConvexPoly(hidden, before.hides, 1)
                continue
            self.afresh[name] = "new" if before is None else "asked" if same else "changed"
            if score is None or something is None:
                score = _background_distance(looked_at, gain, self.felt, self.ink, self._ink_lines)
                something = score > t.foreground
            seen = something[rows]
            hides: npt.NDArray[np.int32] | None = None
            if not seen.any():
                reading = ZoneReading.ok(())
            else:
                covered = self._hidden_in_patch(hidden, g) if hidden[y0:y1, x0:x1].any() else None
                result = self._zone(g, seen, score[rows], covered, looked_at[rows], view, conditions)
                reading = result.reading
                hides = (
                    result.outline_px
                    if result.outline_px is not None
                    else (g.legal_px if reading.state != "ok" else None)
                )
                if result.evidence is not None:
                    self.evidence[name] = result.evidence
                if result.measured is not None:
                    self.measured[name] = result.measured
            out[name] = reading
            if hides is not None:
                cv2.fillConvexPoly(hidden, hides, 1)
            old = before.hides if before is not None else None
            if not (old is None and hides is None) and not (
                old is not None and hides is not None and np.array_equal(old, hides)
            ):
                for shape in (old, hides):
                    if shape is not None:
                        cv2.fillConvexPoly(newly, shape, 1)
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
        b = np.take(flat, self._felt_neighbours, axis=0).astype(np.int16)
        d = np.abs(a - b).reshape(-1)
        return float(1.4826 * _median_byte(d, len(d)) / math.sqrt(2.0))

    def _changed_samples(self, smooth: Image, noise: float) -> npt.NDArray[np.intp]:
        """For each row of the (box-averaged) patches, how many samples (a pixel's channel) differ
        by more than `Tuning.changed_level` from that row when its zone was last read, or by more
        than 8 times this frame's noise as measured (`noise`, `_noise_level`) where that is more.
        `changed_level` is ten times a noisy camera's averaged noise; the box average keeps 0.7-1.0
        times the noise `_noise_level` measures (two still frames' averages differ by 1.0-1.4
        times it, sigma: sensor noise 3, 7 and 14), so 8 times it is that rule at any noise, and
        24 up to a measured 3 levels (sensor noise 6-7): below that nothing changes. Under sensor
        noise 14 (measured 7.3) the averages of two frames of a still table differed by more than
        24 on 0.16% of the samples, enough in every zone on every frame: each zone read as
        changed on each of 30 frames (issue 36, sixth round, tuning seed 0), and no two frames'
        readings were ever fused."""
        level = max(float(self.tuning.changed_level), 8.0 * noise)
        diff = cv2.absdiff(smooth, self._read_patches).reshape(len(smooth), -1)
        return np.asarray(np.count_nonzero(diff > level, axis=1), dtype=np.intp)

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

    def _hidden_in_patch(self, hidden: Image, g: ZoneGeometry) -> Mask:
        grid = self._grid_px[g.top : g.top + g.rows]
        sampled = cv2.remap(hidden, grid[..., 0], grid[..., 1], cv2.INTER_NEAREST)
        return cv2.dilate(sampled, np.ones((5, 5), np.uint8)).astype(bool)

    def _zone(
        self,
        g: ZoneGeometry,
        seen: Mask,
        score: npt.NDArray[np.float32],
        covered: Mask | None,
        colours: Image,
        view: FrameView,
        conditions: FrameConditions,
    ) -> _ZoneResult:
        """One zone read afresh, stage by stage (vision/stages.py): the one stack in it, its
        height, its outline, its squareness, its colours and their checks; the first stage
        that is unsure says why."""
        t = self.tuning
        found = find_stack(seen, covered, g, colours, view.gain, self.felt, self.ink, t)
        if not isinstance(found, Blob):
            return _ZoneResult(found)  # empty, blocked, or unsure
        counted = count_stack(found, score, g, self.height, conditions, t, view, self.felt_rgb)
        if isinstance(counted, str):
            return _ZoneResult(ZoneReading.unsure(counted))
        joined: float | None = None
        if self._joined is not None:  # one of two facing views
            name = g.zone.name
            centre = g.to_table(counted.u0, counted.v0)
            distance = max(float(np.linalg.norm(centre - self.foot)), 1.0)
            self.counts[name] = ViewCount(counted.chips_f, self.height / (distance * CHIP_THICKNESS_MM))
            joined = self._joined.get(name)
            if joined is None and name not in self._own:
                return _ZoneResult(ZoneReading.unsure(WAITING))
        height = decide_height(counted, self.layout.max_stack_chips, conditions, t, joined)
        if isinstance(height, str):
            return _ZoneResult(ZoneReading.unsure(height))
        outline = check_outline(found, height, g, self.height, t)
        if isinstance(outline, str):
            return _ZoneResult(ZoneReading.unsure(outline))
        square = check_square(found, score, height, outline, g, view, conditions, t)
        if square.why:
            return _ZoneResult(ZoneReading.unsure(square.why), evidence=StackEvidence(height, square))
        colours_named = name_colours(
            square.centre, height.n, height.blur, view, conditions, self.chips, self.felt_rgb, t, square.side
        )
        evidence = StackEvidence(height, square, colours_named)
        doubt = check_colours(colours_named, conditions, t)
        if (
            doubt is None
            and height.joined is None
            and square.closer >= 0.0
            and not colours_named.sure(t, conditions.compressed)
        ):
            # a short stack whose side fits n +- 1 within noise (any stack on JPEG, near a whole
            # count): counted only when its colours are sure
            return _ZoneResult(ZoneReading.unsure(square.rival_reason), evidence=evidence)
        # the hull on the felt, centred on the stack; the scaling is about the camera's foot
        outline_px = np.round(project(self.camera, self.pose, outline.on_felt(height, g))).astype(np.int32)
        measured = (square.centre, height.n)
        if doubt is not None:
            return _ZoneResult(ZoneReading.unsure(doubt), outline_px, evidence, measured)
        return _ZoneResult(ZoneReading.ok((StackReading(colours_named.chips),)), outline_px, evidence, measured)

    def frame_view(self, frame: Image) -> FrameView:
        """`frame` as the stages sample it: through the pose and any move followed, the tone
        curve undone, white-balanced by the felt of the last frame read (call `read(frame)` first)."""
        return FrameView(frame, self._lut, self.gain, self._move, self.camera, self.pose, self.foot)

    def sample_frame(self, frame: Image, points: FloatArray) -> FloatArray:
        """RGB at table points (N, 3), mm) in `frame` as the reader sees them: through the pose
        and any move followed, the tone curve undone, white-balanced by the felt of the last
        frame read (call `read(frame)` first)."""
        view = self.frame_view(frame)
        return np.asarray(view.sample(view.in_frame(view.project(points)))[:, ::-1], dtype=np.float64)


def _same_light(gain: FloatArray, then: FloatArray, felt: npt.NDArray[np.float32], limit: float) -> bool:
    """Is the light on the felt the same as when a zone was read (its white balance `then`, now
    `gain`)? Each channel's gain moved by at most `limit`, or its felt level (the median of 8-bit
    samples: `_felt_reference`) by at most one level, which is the median's own step and not the
    light: the felt's red of 24 levels stepping to 25 is 4.2% (issue 36, sixth round: under JPEG
    75 the median of the felt's samples, all near the same few levels, stepped so on 8 of 30
    frames of a still table, and every zone was read as changed)."""
    moved = np.abs(gain / then - 1.0) > limit
    if not moved.any():  # the common case, as cheap as the check was before
        return True
    level_now = felt / np.maximum(gain, 1e-9)
    level_then = felt / np.maximum(then, 1e-9)
    return not bool(np.any(moved & (np.abs(level_now - level_then) > 1.0)))


def _median_byte(values: npt.NDArray[np.integer[Any]], count: int) -> float:
    """The median of `count` (> 0) values in 0-255, as np.median gives it (the mean of the middle
    two of an even count), from their histogram rather than a sort."""
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
    the ink's light blue. Off the lines the distance squared is the sum of each channel's
    (gain * level - felt)^2, one table of the 256 levels a channel (one cv2.LUT over every patch
    pixel, single precision, where this was an affine transform of the colours into a frame
    whose first axis runs from felt to ink and their squares: that frame is orthonormal, the
    same distance); on the lines (a tenth of the pixels) the colours are put in that frame, the
    felt-ink axis last, and the part along it beyond the segment counted."""
    seg = (ink - felt).astype(np.float64)
    length = float(np.linalg.norm(seg))
    e1 = seg / length
    e2 = np.cross(e1, [1.0, 0.0, 0.0] if abs(e1[0]) < 0.9 else [0.0, 1.0, 0.0])
    e2 /= np.linalg.norm(e2)
    e3 = np.cross(e1, e2)
    basis = np.stack([e2, e3, e1])  # the felt-ink axis last
    levels = np.arange(256.0)[:, None]
    tables = np.square(levels * gain[None, :] - felt.astype(np.float64)[None, :]).astype(np.float32)
    squares = cv2.LUT(patches, tables.reshape(256, 1, 3))
    total = cv2.transform(squares, _SUM_OF_CHANNELS)
    flat = total.reshape(-1)
    m = np.concatenate([basis * gain[None, :], -(basis @ felt)[:, None]], axis=1).astype(np.float32)
    on_lines = np.take(patches.reshape(-1, 3), ink_lines, axis=0).astype(np.float32)
    q = cv2.transform(on_lines.reshape(-1, 1, 3), m).reshape(-1, 3)  # (across1, across2, along) a pixel
    along = q[:, 2]
    beyond = np.minimum(along, 0.0) + np.maximum(along - length, 0.0)  # outside the segment felt-ink
    flat[ink_lines] = (np.square(q[:, 0]) + np.square(q[:, 1])) + np.square(beyond)
    return np.asarray(cv2.sqrt(total), dtype=np.float32)


_SUM_OF_CHANNELS = np.array([[1.0, 1.0, 1.0]], dtype=np.float32)
