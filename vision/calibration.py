"""Calibration: where the camera stands over the table, found from the printed ArUco markers.

From one frame of the table: the markers' corners (sub-pixel), the table-to-image homography
of the felt, and the camera's full pose (cv2.solvePnP with the corners as 3D points on z = 0),
which reading stack heights needs because the chips rise above the felt. Without a known
camera matrix the focal length and the first radial distortion term are estimated from the same
view (the markers lie at different depths on a tilted plane). The reprojection error is given in
millimetres on the felt. At run time `check()` compares the markers with where they were: a
camera that was bumped is reported as such, so the table can stop rather than misread.

    cal = Calibration.from_frame(frame, layout)         # raises CalibrationError, in plain words
    cal.save("cal.json"); cal = Calibration.load("cal.json")
    cal.check(markers).bumped
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.geometry import CameraModel, Pose, back_project, project
from vision.layout import Layout
from vision.tone import probe_pixels, sample

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
MIN_MARKERS = 4
BUMP_TOLERANCE_PX = 3.0  # median corner displacement beyond which the camera has moved (not followed)
# A camera nudged (the frame moved, turned or scaled a little, the markers still where one
# similarity puts them) is followed by the reader: zones are re-projected through that move,
# up to FOLLOW_LIMIT_PX anywhere in the frame. Beyond it, or when the markers moved in a way no
# one similarity explains (to FOLLOW_FIT_PX median), the camera is bumped: recalibrate.
FOLLOW_LIMIT_PX = 8.0
FOLLOW_FIT_PX = 0.6
FOLLOW_MIN_PX = 0.25  # a move smaller than this everywhere is no move
CHECK_MIN_MARKERS = 2  # fewer than this seen: the camera's position cannot be vouched for


class CalibrationError(ValueError):
    """The frame cannot calibrate the camera; the text says what is missing and what to do."""


def detector(dictionary: str) -> Any:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)), params)


def find_markers(frame: Image, dictionary: str, found_by: Any = None) -> dict[int, FloatArray]:
    """Every marker of `dictionary` in the frame: id -> 4 x 2 corners in pixels."""
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = (found_by or detector(dictionary)).detectMarkers(gray)
    if ids is None:
        return {}
    return {int(i): np.asarray(c, dtype=np.float64).reshape(4, 2) for i, c in zip(ids.ravel(), corners, strict=True)}


@dataclass(frozen=True)
class CameraCheck:
    """Does the camera still stand where it was calibrated?"""

    bumped: bool
    verified: bool  # enough markers were seen to tell
    moved_px: float  # median displacement of the markers' corners
    markers_seen: int
    followed_px: float = 0.0  # the largest move in the frame of the nudge being followed (0: none)

    @property
    def why(self) -> str:
        if self.bumped:
            return (
                f"the camera has moved: the calibration markers are {self.moved_px:.1f} px from where they were, "
                f"more than the {FOLLOW_LIMIT_PX:g} px the reader follows or not as one move "
                "(recalibrate: tablectl calibrate)"
            )
        if not self.verified:
            return f"only {self.markers_seen} calibration marker(s) visible: the camera's position cannot be checked"
        if self.followed_px:
            return f"camera in place (a move of up to {self.followed_px:.1f} px since calibration is followed)"
        return "camera in place"


@dataclass(frozen=True)
class Calibration:
    """The camera's intrinsics and pose over one layout, and how well they fit the markers."""

    layout_name: str
    camera: CameraModel
    pose: Pose
    homography: FloatArray  # felt (mm, z = 0) -> undistorted... image pixels, for quick looks
    marker_pixels: dict[int, FloatArray]  # where each marker's corners were seen
    error_mm: float  # RMS distance on the felt between seen and true marker corners
    error_px: float  # RMS reprojection error in pixels
    felt_bgr: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the felt's colour as this camera saw it
    notes: list[str] = field(default_factory=list)
    # the levels (BGR) at vision/tone.py's probes (markers' black and white, the felt) as this
    # camera saw them: the reader re-measures them to undo a changed tone curve (None: not measured)
    tone_reference: FloatArray | None = None

    @classmethod
    def from_frame(cls, frame: Image, layout: Layout, camera: CameraModel | None = None) -> Calibration:
        height, width = frame.shape[:2]
        seen = find_markers(frame, layout.marker_dictionary)
        ids = sorted(i for i in seen if i in layout.markers)
        if len(ids) < MIN_MARKERS:
            missing = sorted(set(layout.markers) - set(ids))
            raise CalibrationError(
                f"only {len(ids)} of the layout's {len(layout.markers)} calibration markers are visible "
                f"(missing ids {missing}); {MIN_MARKERS} are needed: clear the table's edges, check the light "
                "and that the camera sees the whole felt"
            )
        obj = layout.marker_points(ids).astype(np.float32)
        img = np.concatenate([seen[i] for i in ids]).astype(np.float32)
        notes: list[str] = []
        if camera is None:
            camera = _estimate_camera(obj, img, width, height)
            notes.append("camera matrix estimated from the markers (no camera file given)")
        elif (camera.width, camera.height) != (width, height):
            raise CalibrationError(
                f"the camera file is for {camera.width}x{camera.height} frames but this frame is {width}x{height}"
            )
        ok, rvec, tvec = cv2.solvePnP(obj, img, camera.matrix, camera.dist, flags=cv2.SOLVEPNP_ITERATIVE)
        if not ok:
            raise CalibrationError("the markers do not give a camera pose: are they printed where the layout says?")
        rvec, tvec = cv2.solvePnPRefineLM(obj, img, camera.matrix, camera.dist, rvec, tvec)
        pose = Pose(rvec.ravel().astype(np.float64), tvec.ravel().astype(np.float64))
        if pose.position[2] <= 0:
            raise CalibrationError("the markers put the camera under the table: check the layout's marker corners")
        reprojected = project(camera, pose, obj)
        error_px = float(np.sqrt(np.mean(np.sum((reprojected - img) ** 2, axis=1))))
        on_felt = back_project(camera, pose, img)
        error_mm = float(np.sqrt(np.mean(np.sum((on_felt - obj[:, :2]) ** 2, axis=1))))
        undistorted = cv2.undistortPoints(img.reshape(-1, 1, 2), camera.matrix, camera.dist, P=camera.matrix)
        homography, _ = cv2.findHomography(obj[:, :2], undistorted.reshape(-1, 2))
        return cls(
            layout_name=layout.name,
            camera=camera,
            pose=pose,
            homography=np.asarray(homography, dtype=np.float64),
            marker_pixels={i: seen[i] for i in ids},
            error_mm=error_mm,
            error_px=error_px,
            felt_bgr=_felt_colour(frame, layout, camera, pose),
            notes=notes,
            tone_reference=sample(frame, probe_pixels(layout, camera, pose, {i: seen[i] for i in ids})),
        )

    def check(self, seen: dict[int, FloatArray], tolerance_px: float = BUMP_TOLERANCE_PX) -> CameraCheck:
        """Compare markers seen now (from `find_markers`) with where calibration saw them."""
        common = [i for i in seen if i in self.marker_pixels]
        if not common:
            return CameraCheck(bumped=False, verified=False, moved_px=0.0, markers_seen=0)
        moved = np.concatenate([np.linalg.norm(seen[i] - self.marker_pixels[i], axis=1) for i in common])
        median = float(np.median(moved))
        verified = len(common) >= CHECK_MIN_MARKERS
        # One marker alone can vouch that the camera moved, never that it did not.
        return CameraCheck(bumped=median > tolerance_px, verified=verified, moved_px=median, markers_seen=len(common))

    def follow(self, seen: dict[int, FloatArray]) -> tuple[CameraCheck, FloatArray | None]:
        """`check`, following a small move: the check, and the move (2 x 3, calibration pixels
        -> pixels now) when the markers moved together by more than FOLLOW_MIN_PX and at most
        FOLLOW_LIMIT_PX anywhere in the frame (None: no move, or one not followed)."""
        check = self.check(seen)
        common = sorted(i for i in seen if i in self.marker_pixels)
        if not check.verified:
            return check, None
        before = np.concatenate([self.marker_pixels[i] for i in common]).astype(np.float32)
        now = np.concatenate([seen[i] for i in common]).astype(np.float32)
        move, _ = cv2.estimateAffinePartial2D(before, now, method=cv2.LMEDS)
        if move is None:
            return check, None
        move = np.asarray(move, dtype=np.float64)
        fit = float(np.median(np.linalg.norm(before @ move[:, :2].T + move[:, 2] - now, axis=1)))
        w, h = self.camera.width, self.camera.height
        corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
        largest = float(np.linalg.norm(corners @ move[:, :2].T + move[:, 2] - corners, axis=1).max())
        if fit > FOLLOW_FIT_PX or largest > FOLLOW_LIMIT_PX:
            return check, None
        if largest < FOLLOW_MIN_PX:
            return check, None
        return CameraCheck(False, True, check.moved_px, check.markers_seen, followed_px=largest), np.asarray(
            move, dtype=np.float64
        )

    def to_dict(self) -> dict[str, Any]:
        tone = {} if self.tone_reference is None else {"tone_reference": np.round(self.tone_reference, 2).tolist()}
        return {
            "layout": self.layout_name,
            "camera": self.camera.to_dict(),
            "pose": self.pose.to_dict(),
            "camera_position_mm": [round(float(v), 1) for v in self.pose.position],
            "homography": self.homography.tolist(),
            "marker_pixels": {str(i): c.tolist() for i, c in self.marker_pixels.items()},
            "error_mm": self.error_mm,
            "error_px": self.error_px,
            "felt_bgr": list(self.felt_bgr),
            "notes": self.notes,
            **tone,
        }

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            felt = [float(v) for v in data["felt_bgr"]]
            return cls(
                layout_name=str(data["layout"]),
                camera=CameraModel.from_dict(data["camera"]),
                pose=Pose.from_dict(data["pose"]),
                homography=np.array(data["homography"], dtype=np.float64).reshape(3, 3),
                marker_pixels={
                    int(k): np.array(v, dtype=np.float64).reshape(4, 2) for k, v in data["marker_pixels"].items()
                },
                error_mm=float(data["error_mm"]),
                error_px=float(data["error_px"]),
                felt_bgr=(felt[0], felt[1], felt[2]),
                notes=[str(n) for n in data.get("notes", [])],
                tone_reference=(
                    np.array(data["tone_reference"], dtype=np.float64).reshape(-1, 3)
                    if "tone_reference" in data
                    else None
                ),
            )
        except FileNotFoundError:
            raise CalibrationError(f"{path}: no such calibration file (make one: tablectl calibrate)") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"{path}: not a calibration file tablectl wrote: {exc!r}") from None

    def annotate(self, frame: Image, layout: Layout) -> Image:
        """The frame with every zone's outline drawn where the calibration puts it, and the markers."""
        out = frame.copy()
        for zone in layout.zones.values():
            a = np.linspace(0, 2 * math.pi, 48, endpoint=False)
            ring = np.stack([zone.x + zone.r * np.cos(a), zone.y + zone.r * np.sin(a), np.zeros(48)], axis=1)
            pts = project(self.camera, self.pose, ring)
            colour = (0, 200, 255) if zone.kind == "puck" else (0, 255, 0) if zone.kind == "wager" else (255, 0, 255)
            cv2.polylines(out, [np.round(pts).astype(np.int32)], True, colour, 1, cv2.LINE_AA)
            label = zone.name.replace("seat", "s").replace(".payout", ".p")
            anchor = project(self.camera, self.pose, np.array([[zone.x - zone.r, zone.y + zone.r + 4, 0.0]]))[0]
            cv2.putText(
                out, label, (int(anchor[0]), int(anchor[1])), cv2.FONT_HERSHEY_PLAIN, 0.7, colour, 1, cv2.LINE_AA
            )
        for marker in layout.markers.values():
            pts = project(self.camera, self.pose, np.hstack([marker.corners, np.zeros((4, 1))]))
            cv2.polylines(out, [np.round(pts).astype(np.int32)], True, (0, 0, 255), 2, cv2.LINE_AA)
        text = f"{self.layout_name}: reprojection error {self.error_mm:.2f} mm ({self.error_px:.2f} px)"
        cv2.putText(out, text, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (255, 255, 255), 2, cv2.LINE_AA)
        return out


def _estimate_camera(
    obj: npt.NDArray[np.float32], img: npt.NDArray[np.float32], width: int, height: int
) -> CameraModel:
    """Focal length and k1 from one view of the markers (principal point at the centre, square
    pixels, no tangential distortion): OpenCV's calibration with everything else held."""
    guess = CameraModel.from_fov(width, height, 60.0)
    flags = (
        cv2.CALIB_USE_INTRINSIC_GUESS
        | cv2.CALIB_FIX_PRINCIPAL_POINT
        | cv2.CALIB_FIX_ASPECT_RATIO
        | cv2.CALIB_ZERO_TANGENT_DIST
        | cv2.CALIB_FIX_K2
        | cv2.CALIB_FIX_K3
    )
    try:
        _, matrix, dist, _, _ = cv2.calibrateCamera(
            [obj], [img], (width, height), guess.matrix.copy(), np.zeros(5), flags=flags
        )
    except cv2.error as exc:
        raise CalibrationError(f"the camera's focal length cannot be found from these markers: {exc}") from None
    f = float(matrix[0, 0])
    if not math.isfinite(f) or not 0.2 * width < f < 20 * width:
        raise CalibrationError("the markers give an impossible focal length: give the camera file (--camera)")
    return CameraModel(
        width, height, np.asarray(matrix, dtype=np.float64), np.asarray(dist, dtype=np.float64).ravel()[:5]
    )


def _levels(value: Any) -> FloatArray | None:
    return None if value is None else np.array(value, dtype=np.float64).reshape(-1, 3)


def _felt_colour(frame: Image, layout: Layout, camera: CameraModel, pose: Pose) -> tuple[float, float, float]:
    """The felt's colour as seen, from points between the zones."""
    points = []
    for zone in layout.chip_zones():
        points.append((zone.x, zone.y - zone.r - 6, 0.0))
    px = np.round(project(camera, pose, np.array(points))).astype(int)
    h, w = frame.shape[:2]
    inside = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    samples = frame[px[inside, 1], px[inside, 0]].astype(np.float64)
    med = np.median(samples, axis=0) if len(samples) else np.zeros(3)
    return (float(med[0]), float(med[1]), float(med[2]))
