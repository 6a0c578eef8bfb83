"""CameraFeed: the reading thread between the camera and the table loop.

Its own `vision.Reader`, `vision.fusion.WagerFusion` (each zone's value decided from the frames
since its wager last changed, never from one) and `StableScene` (the pucks), fed the newest
frame by the camera's worker thread; it posts the settled view to the table loop only when it
changes, never each frame. A frame that is the very picture read before (a simulated camera's
still felt) is read again only for the zones fusing asked to read afresh. Its
`vision.health.CameraHealth` watches the same frames for the faults an installer fixes (a soft
lens, a shaking mount, a compressed stream): they go with the camera's device status (the
Devices panel) and, when `health_path` is given, to that file for `tablectl doctor`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vision.calibration import Calibration
    from vision.fusion import FusedZone, WagerFusion
    from vision.geometry import CameraModel
    from vision.health import CameraHealth
    from vision.layout import Layout
    from vision.reader import FrameReading, Reader
    from vision.stable import StableReading

log = logging.getLogger(__name__)

#: The camera's last measured health in the state directory (written when a fault comes or goes,
#: and at each calibration), for `tablectl doctor`.
HEALTH_FILE = "camera-health.json"


class CameraFeed:
    """Reads the newest frame in its own thread and posts the settled view when it changes.

    `offer(frame)` is the camera's `on_frame` (its worker thread): it only keeps the newest frame,
    so a slow read skips frames instead of falling behind. `post(view)` and `status(dict)` are
    called in the reading thread; the daemon passes functions that hop onto the table loop."""

    def __init__(
        self,
        layout: Layout,
        *,
        calibration: Calibration | None,
        calibration_path: Path | None,
        camera_model: CameraModel | None,
        stable_frames: int,
        post: Callable[[dict[str, Any]], None],
        status: Callable[[dict[str, Any]], None],
        simulated: bool,
        offline_after_s: float = 5.0,
        health_path: Path | None = None,
    ) -> None:
        self.layout = layout
        self.calibration = calibration
        self.calibration_path = calibration_path
        self.camera_model = camera_model  # known intrinsics when the camera calibrates itself
        self.stable_frames = stable_frames
        self.post = post
        self.status = status
        self.simulated = simulated
        self.offline_after_s = offline_after_s
        self.health_path = health_path
        self.health: dict[str, Any] | None = None  # vision.health.Health.to_json() of the last frame read
        self._cv = threading.Condition()
        self._frame: Any = None
        self._stop = False
        self._recalibrate = False
        self._thread: threading.Thread | None = None
        self.reads = 0
        self.dropped = 0
        self.read_ms = 0.0
        self.read_seconds = 0.0  # all reads together, for GET /metrics
        # the reading's own state, kept between frames (`step`): made on the first frame
        self._reader: Reader | None = None
        self._fusion: WagerFusion | None = None
        self._fused: dict[str, FusedZone] = {}
        self._watch: CameraHealth | None = None
        self._stable: Any = None
        self._last_faults: Any = None
        self._last_frame: Any = None
        self._last_reading: FrameReading | None = None
        self._last_key: Any = None
        self._absent: dict[str, int] = {}

    def offer(self, frame: Any) -> None:
        with self._cv:
            if self._frame is not None:
                self.dropped += 1
            self._frame = frame
            self._cv.notify()

    def recalibrate(self) -> None:
        """Calibrate again from the next frame (after the camera was moved back, or for good)."""
        with self._cv:
            self._recalibrate = True
            self._cv.notify()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="camera-reader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _next(self) -> Any:
        """The newest frame, or None after `offline_after_s` without one (a wake-up for another
        reason, such as a recalibration request, does not count as the camera going quiet)."""
        deadline = time.monotonic() + self.offline_after_s
        with self._cv:
            while self._frame is None and not self._stop:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            frame, self._frame = self._frame, None
            return frame

    def _run(self) -> None:
        while not self._stop:
            frame = self._next()
            if self._stop:
                return
            self.step(frame)

    def step(self, frame: Any) -> None:
        """Read one frame (None: none came for `offline_after_s`) and post the view when it
        changed. The reading thread calls it for each newest frame; a test that counts frames
        calls it itself, frame by frame, without `start`."""
        from vision.fusion import WagerFusion
        from vision.health import CameraHealth
        from vision.stable import StableScene

        if self._fusion is None:
            self._fusion, self._watch = WagerFusion(), CameraHealth()
            self._stable = StableScene(self.stable_frames)
        fusion, watch = self._fusion, self._watch
        assert watch is not None
        view: dict[str, Any] | None = None
        if frame is None:
            view = {"camera": "offline", "why": f"no frame from the camera for {self.offline_after_s:g} s"}
        elif self._recalibrate or self._reader is None:
            self._reader, view = self._calibrate(frame)
            self._stable = StableScene(self.stable_frames)
            watch.reset()  # a new calibration: the lens may have been refocused, the mount fixed
            fusion.reset()
            self._last_frame = self._last_reading = None
            self._absent.clear()
            if self._reader is None:
                return
        reader = self._reader
        if frame is not None and reader is not None:
            if frame is self._last_frame and self._last_reading is not None and not fusion.asked:
                reading = self._last_reading  # the same picture reads the same: no need to read it again
            else:
                try:
                    began = time.perf_counter()
                    reading = reader.read(frame)
                    took = time.perf_counter() - began
                    self.read_ms = took * 1000
                    self.read_seconds += took
                    self.reads += 1
                except ValueError as exc:  # a frame of another size than the calibration's
                    self._reader = None
                    self._deliver({"camera": "uncalibrated", "why": f"{exc}: recalibrate the camera"})
                    return
                self._last_frame, self._last_reading = frame, reading
                self._fused = fusion.update(reader, reading)
                health = watch.update(reader, frame)
                self.health = health.to_json()
            view = view_of(self._stable.update(reading), reading, self._absent, self.stable_frames, self._fused)
            faults = tuple(f.words for f in watch.last.faults)
            if faults != self._last_faults:
                self._last_faults = faults
                self._health_changed(watch.last.faults, view)
        assert view is not None
        key = _key(view)
        if key != self._last_key:
            self._last_key = key
            self._deliver(view)

    def _deliver(self, view: dict[str, Any]) -> None:
        try:
            self.post(view)
        except Exception:  # the loop is stopping
            log.exception("camera: the table did not take the view")
        self.status(self.describe(view["camera"], view.get("why", "")))

    def _health_changed(self, faults: Any, view: dict[str, Any]) -> None:
        """A camera fault came or went: the Devices panel and doctor's file are told at once."""
        for fault in faults:
            (log.error if fault.level == "fault" else log.warning)("camera: %s", fault.words)
        if self.health_path is not None and self.health is not None:
            record = {"measured_at": time.time(), **self.health}
            try:
                temporary = self.health_path.with_name(self.health_path.name + ".tmp")
                temporary.write_text(json.dumps(record, indent=1) + "\n")
                os.replace(temporary, self.health_path)
            except OSError as exc:
                log.warning("camera: cannot write %s: %s", self.health_path, exc)
        self.status(self.describe(view.get("camera", "ok"), view.get("why", "")))

    def describe(self, camera: str, why: str) -> dict[str, Any]:
        faults = [] if self.health is None else self.health["faults"]
        words = "; ".join(f["words"] for f in faults)
        message = ("SIMULATED camera: " if self.simulated else "") + (why or camera)
        out: dict[str, Any] = {
            "installed": True,
            "simulated": self.simulated,
            "layout": self.layout.name,
            "view": camera,
            "message": message + (f"; {words}" if words else ""),
            "reads": self.reads,
            "frames_skipped": self.dropped,
            "read_ms": round(self.read_ms, 1),
        }
        if self.health is not None:
            out["health"] = self.health
        if any(f["level"] == "fault" for f in faults):
            out["fault"] = words
        return out

    def _calibrate(self, frame: Any) -> tuple[Any, dict[str, Any]]:
        """A Reader for this camera: from the calibration given, or measured on this frame when
        there is none or the supervisor asked to recalibrate (the camera's lens is kept)."""
        from vision.calibration import Calibration, CalibrationError
        from vision.reader import Reader

        with self._cv:
            measure = self._recalibrate or self.calibration is None
            self._recalibrate = False
        try:
            if measure:
                model = self.camera_model or (self.calibration.camera if self.calibration else None)
                self.calibration = Calibration.from_frame(frame, self.layout, camera=model)
                if self.calibration_path is not None:
                    self.calibration.save(self.calibration_path)
                log.info("camera calibrated from a frame: %.2f mm reprojection error", self.calibration.error_mm)
            assert self.calibration is not None
            return Reader(self.layout, self.calibration), {"camera": "ok", "why": "calibrated"}
        except (CalibrationError, ValueError, OSError) as exc:
            view = {"camera": "uncalibrated", "why": str(exc)}
            self._deliver(view)
            return None, view


def view_of(
    stable: StableReading,
    reading: FrameReading,
    absent: dict[str, int],
    frames: int,
    fused: Mapping[str, FusedZone] | None = None,
) -> dict[str, Any]:
    """The settled view the table keeps: camera state, settled zones, settled pucks; a puck unseen
    for `frames` frames is gone. With `fused` (vision/fusion.py), the zones are its: decided over
    the frames since each wager last changed, not `stable`'s; a zone whose wager changed and is
    still settling is "unsure" (its reason says so): what the table had is no longer there, and
    a payout check must not take it. Without `fused` a zone still settling is left out."""
    camera = reading.camera
    if camera.bumped:
        return {"camera": "bumped", "why": camera.why}
    if not camera.verified:
        return {"camera": "unverified", "why": camera.why}
    zones: dict[str, Any] = {}
    for name, zone in (fused if fused is not None else stable.zones).items():
        if fused is None and zone.state == "unsure" and zone.why.startswith("settling"):
            continue
        zones[name] = {"state": zone.state, "value": zone.value, "why": zone.why}
    pucks: dict[str, str | None] = dict(stable.pucks)
    for name in set(absent) | set(reading.pucks):
        absent[name] = 0 if name in reading.pucks else absent.get(name, 0) + 1
        if absent[name] >= frames:
            pucks[name] = None
    return {"camera": "ok", "why": camera.why, "zones": zones, "pucks": pucks}


def _key(view: Mapping[str, Any]) -> Any:
    zones = tuple(sorted((n, z["state"], z["value"]) for n, z in view.get("zones", {}).items()))
    return view["camera"], zones, tuple(sorted(view.get("pucks", {}).items(), key=lambda kv: kv[0]))
