"""The overhead camera as a device: a real one through OpenCV or Picamera2, or a simulated one.

Both backends run a worker thread that hands each frame (a BGR uint8 array) to `on_frame`, in
that thread, at about `fps` frames a second, and say what they are doing in plain words through
`on_status`. `OpenCVCamera` reads `cv2.VideoCapture` (a device index such as 0, or a path such as
/dev/video0 or /dev/v4l/by-id/...) and reconnects by itself when the camera goes away.
`Picamera2Camera` reads the Raspberry Pi Camera Module through libcamera (Raspberry Pi OS's
python3-picamera2), and reconnects the same way.
A V4L2 camera is asked for raw YUYV frames at the size and frame rate wanted, and for MJPEG
only when the mode cannot give YUYV at that rate (USB 2 cameras often give 1920x1080 YUYV at 5
frames a second), then at the highest JPEG quality the camera lets be set: JPEG costs the
reader (vision/health.py warns when the frames show it). The Raspberry Pi camera gives
uncompressed RGB frames.
`SimulatedCamera` renders the `vision.Scene` it holds (`vision.render`), which the simulation may
change at any moment: chips placed or taken, a hand over a zone, the blind puck moved, the camera
knocked out of place (`bump`). Every status of the simulated camera says SIMULATED.

    >>> camera = open_camera("simulated", fps=4, on_frame=reader_thread.offer)
    >>> camera.start()
    >>> camera.edit(lambda scene: dataclasses.replace(scene, pucks={"blind": "seat4.puck"}))
    >>> camera.stop()

`on_frame` must be quick (hand the frame to a reading thread): a slow callback slows the capture.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.layout import Layout
from vision.render import draw, exposures, render
from vision.scene import Scene

log = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]
FrameCallback = Callable[[Image], None]

#: Waits between reconnection attempts of a real camera (seconds): quick at first, then patient.
RECONNECT_S = (0.5, 1.0, 2.0, 5.0)
#: How far a bump knocks the simulated camera: enough to move every marker well past the
#: calibration's 3 px tolerance, as a knock against the mount does.
BUMP_ROLL_DEG = 1.5
BUMP_SHIFT_MM = 25.0


class CameraError(Exception):
    """The camera's settings are wrong or it cannot be used; says what and where."""


@dataclass(frozen=True)
class CameraStatus:
    """What the camera is doing, for the screens and the log."""

    state: str  # "starting", "streaming", "reconnecting", "stopped"
    message: str  # plain words: what, where, what to do
    simulated: bool
    frames: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "message": self.message, "simulated": self.simulated, "frames": self.frames}


StatusCallback = Callable[[CameraStatus], None]


class Camera:
    """A camera that delivers frames to `on_frame` from its own worker thread at `fps`."""

    simulated = False
    format = ""  # the frames' format as the camera agreed to it (said when it streams)

    def __init__(self, *, fps: float, on_frame: FrameCallback | None = None, on_status: StatusCallback | None = None):
        if not 0.1 <= fps <= 60:
            raise CameraError(f"camera.fps = {fps!r}: a number of frames a second from 0.1 to 60")
        self.fps = fps
        self.on_frame = on_frame
        self.on_status = on_status
        self.frames = 0
        self._status = CameraStatus("stopped", f"{self.name}: not started", self.simulated)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def name(self) -> str:
        return "camera"

    def status(self) -> CameraStatus:
        return self._status

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=5)
        self._release()
        self._say("stopped", f"{self.name}: stopped")

    # -- the worker ------------------------------------------------------------------------------

    def _run(self) -> None:
        period = 1.0 / self.fps
        due = time.monotonic()
        while not self._stop.is_set():
            frame = self._grab()
            if frame is not None:
                self.frames += 1
                if self._status.state != "streaming":
                    agreed = f", {self.format}" if self.format else ""
                    self._say("streaming", f"{self.name}: delivering frames at up to {self.fps:g} a second{agreed}")
                callback = self.on_frame
                if callback is not None:
                    try:
                        callback(frame)
                    except Exception:  # a reader that fails never stops the camera
                        log.exception("%s: the frame handler failed", self.name)
            due = max(due + period, time.monotonic())
            self._stop.wait(max(0.0, due - time.monotonic()))

    def _grab(self) -> Image | None:
        """One frame, or None (after saying why) when there is none to give now."""
        raise NotImplementedError

    def _release(self) -> None:
        """Let go of the device."""

    def _say(self, state: str, message: str) -> None:
        changed = (state, message) != (self._status.state, self._status.message)
        self._status = CameraStatus(state, message, self.simulated, self.frames)
        if changed:
            (log.warning if state == "reconnecting" else log.info)("%s", message)
            if self.on_status is not None:
                try:
                    self.on_status(self._status)
                except Exception:
                    log.exception("%s: the status handler failed", self.name)


def _fourcc(value: float) -> str:
    """OpenCV's CAP_PROP_FOURCC number as its four letters ("YUYV", "MJPG")."""
    code = int(value)
    return "".join(chr((code >> (8 * i)) & 0xFF) for i in range(4))


def _best_jpeg_quality(device: int | str) -> str:
    """Ask a V4L2 camera for its highest JPEG quality (`compression_quality`, where the driver
    has that control); says what came of it."""
    import shutil
    import subprocess

    tool = shutil.which("v4l2-ctl")
    if tool is None:
        return "its JPEG quality could not be raised (v4l2-ctl is not installed: apt install v4l-utils)"
    path = f"/dev/video{device}" if isinstance(device, int) else device
    try:
        done = subprocess.run(
            [tool, "-d", path, "--set-ctrl=compression_quality=100"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"its JPEG quality could not be raised ({exc})"
    if done.returncode != 0:
        return "the camera has no JPEG quality setting (compression_quality): it sends its own"
    return "at JPEG quality 100"


class OpenCVCamera(Camera):
    """A camera OpenCV can open: a V4L2 device on a Pi (USB or CSI through libcamera's V4L2 layer).

    `device` is an index (0) or a path (/dev/video0, /dev/v4l/by-id/usb-...-video-index0);
    `size` asks the camera for frames of that width and height (the calibration's). It is asked
    for YUYV (raw) frames at `fps`; a mode that gives YUYV only at a lower rate is asked for
    MJPEG instead, at its highest JPEG quality (`jpeg_quality`: v4l2-ctl's compression_quality).
    `format` is what the camera agreed to. `make` opens a device (cv2.VideoCapture; tests pass
    an object with its API: isOpened, set, get, read, release)."""

    def __init__(
        self,
        device: int | str,
        *,
        fps: float,
        size: tuple[int, int] | None = None,
        on_frame: FrameCallback | None = None,
        on_status: StatusCallback | None = None,
        make: Callable[[int | str], Any] | None = None,
        jpeg_quality: Callable[[int | str], str] = _best_jpeg_quality,
    ) -> None:
        if isinstance(device, bool) or not isinstance(device, int | str) or device == "":
            raise CameraError(f"camera.device = {device!r}: a device index (0) or a path (/dev/video0)")
        if isinstance(device, int) and not 0 <= device <= 63:
            raise CameraError(f"camera.device = {device}: a device index from 0 to 63")
        self.device = device
        self.size = size
        self._capture: Any = None
        self._failures = 0
        self._make = make
        self._jpeg_quality = jpeg_quality
        self.format = ""  # the pixel format the camera agreed to ("YUYV", "MJPG, at JPEG quality 100")
        super().__init__(fps=fps, on_frame=on_frame, on_status=on_status)

    @property
    def name(self) -> str:
        return f"camera {self.device}"

    def _grab(self) -> Image | None:
        import cv2

        if self._capture is None and not self._open(cv2):
            return None
        ok, frame = self._capture.read()
        if not ok or frame is None or frame.ndim != 3 or frame.shape[2] != 3:
            self._release()
            self._lost("stopped giving frames (unplugged, or in use by another program?)")
            return None
        self._failures = 0
        return np.ascontiguousarray(frame, dtype=np.uint8)

    def _open(self, cv2: Any) -> bool:
        self._say("starting" if self.frames == 0 else "reconnecting", f"{self.name}: opening")
        capture = (self._make or cv2.VideoCapture)(self.device)
        if not capture.isOpened():
            capture.release()
            self._lost("cannot be opened: check the cable and that the device path is right")
            return False
        if self.size is not None:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self.format = self._pixel_format(cv2, capture)
        capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not one queued seconds ago
        self._capture = capture
        self._say("starting" if self.frames == 0 else "reconnecting", f"{self.name}: opened, {self.format}")
        return True

    def _pixel_format(self, cv2: Any, capture: Any) -> str:
        """Ask for raw YUYV at the rate wanted, else MJPEG at its best quality; what was agreed."""
        capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"YUYV"))
        capture.set(cv2.CAP_PROP_FPS, self.fps)
        rate = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        if _fourcc(capture.get(cv2.CAP_PROP_FOURCC)) == "YUYV" and (rate <= 0 or rate >= self.fps * 0.9):
            return "raw YUYV frames"
        capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
        capture.set(cv2.CAP_PROP_FPS, self.fps)
        agreed = _fourcc(capture.get(cv2.CAP_PROP_FOURCC))
        if agreed != "MJPG":
            return f"{agreed.strip() or 'its own'} frames (neither YUYV at {self.fps:g} a second nor MJPEG)"
        why = f"YUYV only at {rate:g} frames a second" if rate > 0 else "no YUYV in this mode"
        return f"MJPEG ({why}), {self._jpeg_quality(self.device)}"

    def _lost(self, why: str) -> None:
        wait = RECONNECT_S[min(self._failures, len(RECONNECT_S) - 1)]
        self._failures += 1
        self._say("reconnecting", f"{self.name} {why}; trying again every few seconds")
        self._stop.wait(wait)

    def _release(self) -> None:
        capture, self._capture = self._capture, None
        if capture is not None:
            capture.release()


#: The Raspberry Pi camera's frame size when no calibration names one.
PICAMERA2_DEFAULT_SIZE = (1280, 720)
PICAMERA2_MISSING = (
    'camera.backend = "picamera2": the picamera2 library is not installed. On Raspberry Pi OS: '
    "sudo apt install python3-picamera2, with tablectl's venv made with --system-site-packages "
    "(hardware/install.md); it is not installed from PyPI"
)


def _picamera2(number: int) -> Any:
    from picamera2 import Picamera2  # Raspberry Pi OS's python3-picamera2 (libcamera)

    return Picamera2(number)


class Picamera2Camera(Camera):
    """The Raspberry Pi Camera Module (on the CSI connector) through libcamera and Picamera2.

    `camera` is the camera's number (0 for the first; `rpicam-hello --list-cameras` lists them);
    `size` is the frame size to ask for (the calibration's). The camera runs a video
    configuration in format "RGB888" and each frame is `capture_array("main")`. libcamera names
    formats by their DRM fourcc, least significant byte first, so Picamera2's "RGB888" is stored
    B, G, R in memory (the Picamera2 manual, appendix A: "each pixel is laid out as [B, G, R]"):
    OpenCV's own order, which vision expects, so frames go on unconverted. ("BGR888" would be
    R, G, B.) A frame of another size or shape than asked for is refused, never passed on.

        >>> camera = open_camera("picamera2", fps=4, device=0, size=(1280, 720), on_frame=feed.offer)

    `make` builds the Picamera2 object for a camera number; tests pass an object with Picamera2's
    API (create_video_configuration, configure, start, capture_array, stop, close)."""

    FORMAT = "RGB888"
    format = "uncompressed RGB888 frames"

    def __init__(
        self,
        camera: int = 0,
        *,
        fps: float,
        size: tuple[int, int] | None = None,
        on_frame: FrameCallback | None = None,
        on_status: StatusCallback | None = None,
        make: Callable[[int], Any] | None = None,
    ) -> None:
        if isinstance(camera, bool) or not isinstance(camera, int) or not 0 <= camera <= 7:
            raise CameraError(f"camera.device = {camera!r}: the Raspberry Pi camera's number, 0 for the first")
        if make is None:
            import importlib.util

            if importlib.util.find_spec("picamera2") is None:
                raise CameraError(PICAMERA2_MISSING)
            make = _picamera2
        self.camera = camera
        self.size = size or PICAMERA2_DEFAULT_SIZE
        self._make = make
        self._picam: Any = None
        self._failures = 0
        super().__init__(fps=fps, on_frame=on_frame, on_status=on_status)

    @property
    def name(self) -> str:
        return f"Raspberry Pi camera {self.camera}"

    def _grab(self) -> Image | None:
        if self._picam is None and not self._open():
            return None
        try:
            frame = self._picam.capture_array("main")
        except Exception as exc:
            self._release()
            self._lost(f"stopped giving frames ({type(exc).__name__}: {exc}); check its ribbon cable")
            return None
        width, height = self.size
        shape = getattr(frame, "shape", None)
        if getattr(frame, "dtype", None) != np.uint8 or shape != (height, width, 3):
            self._release()
            self._lost(f"gave a frame of shape {shape}, not {height}x{width} {self.FORMAT} (3 bytes a pixel)")
            return None
        self._failures = 0
        return np.ascontiguousarray(frame)

    def _open(self) -> bool:
        self._say("starting" if self.frames == 0 else "reconnecting", f"{self.name}: opening")
        picam: Any = None
        try:
            picam = self._make(self.camera)
            config = picam.create_video_configuration(
                main={"size": self.size, "format": self.FORMAT}, buffer_count=2, queue=False
            )
            picam.configure(config)
            picam.start()
        except Exception as exc:  # no camera on the connector, busy, or a size it cannot give
            if picam is not None:
                with contextlib.suppress(Exception):
                    picam.close()
            self._lost(f"cannot be opened ({type(exc).__name__}: {exc}): check the ribbon cable and camera.device")
            return False
        self._picam = picam
        return True

    def _lost(self, why: str) -> None:
        wait = RECONNECT_S[min(self._failures, len(RECONNECT_S) - 1)]
        self._failures += 1
        self._say("reconnecting", f"{self.name} {why}; trying again every few seconds")
        self._stop.wait(wait)

    def _release(self) -> None:
        picam, self._picam = self._picam, None
        if picam is not None:
            with contextlib.suppress(Exception):  # a camera that is gone cannot be stopped twice
                picam.stop()
            with contextlib.suppress(Exception):
                picam.close()


class SimulatedCamera(Camera):
    """A camera that renders the scene it is given: the simulated table seen from the mount.

    The scene is replaced whole (scenes are immutable), from any thread: `scene = ...` or
    `edit(fn)`. A frame is rendered only when the scene has changed; otherwise the same frame
    object is given again, as a still table gives the same picture. With `fresh` (a seed), every
    frame is a fresh exposure of the scene's drawing instead: fresh sensor noise and, when the
    scene's `sensor.jpeg` says so, a fresh JPEG, as a real camera's frames of a still table
    (`vision.render.exposures`); the drawing is still made only when the scene changes.
    `next_frame()` gives one frame as the worker would (a test driving frames one by one)."""

    simulated = True

    def __init__(
        self,
        scene: Scene | None = None,
        *,
        fps: float,
        layout: Layout | None = None,
        on_frame: FrameCallback | None = None,
        on_status: StatusCallback | None = None,
        fresh: int | None = None,
    ) -> None:
        self._scene = scene or Scene()
        self.layout = layout or Layout.load(self._scene.layout)
        self._lock = threading.Lock()
        self._mount = self._scene.camera  # where the camera stands when not bumped
        self._rendered: tuple[Scene, Image] | None = None
        self._rng = None if fresh is None else np.random.default_rng(fresh)
        self._exposing: tuple[Scene, Iterator[Image]] | None = None
        self.unplugged = False
        super().__init__(fps=fps, on_frame=on_frame, on_status=on_status)

    @property
    def name(self) -> str:
        return "SIMULATED camera"

    @property
    def scene(self) -> Scene:
        with self._lock:
            return self._scene

    @scene.setter
    def scene(self, scene: Scene) -> None:
        with self._lock:
            self._scene = scene

    def edit(self, change: Callable[[Scene], Scene]) -> Scene:
        """Apply `change` to the scene atomically (two editors never lose each other's chips)."""
        with self._lock:
            self._scene = change(self._scene)
            return self._scene

    def bump(self, on: bool) -> None:
        """Knock the camera out of place (on) or put it back where it was calibrated (off)."""
        mount = self._mount
        if on:
            x, y, z = mount.look_at
            mount = dataclasses.replace(
                mount, roll_deg=mount.roll_deg + BUMP_ROLL_DEG, look_at=(x + BUMP_SHIFT_MM, y, z)
            )
        self.edit(lambda scene: dataclasses.replace(scene, camera=mount))

    @property
    def bumped(self) -> bool:
        return self.scene.camera != self._mount

    def next_frame(self) -> Image | None:
        """One frame, counted, as the worker thread would deliver it (None: unplugged)."""
        frame = self._grab()
        if frame is not None:
            self.frames += 1
        return frame

    def _grab(self) -> Image | None:
        if self.unplugged:
            self._say("reconnecting", "SIMULATED camera unplugged (fault injected): no frames")
            return None
        scene = self.scene
        if self._rng is not None:
            exposing = self._exposing
            if exposing is None or exposing[0] is not scene:
                exposing = self._exposing = (scene, exposures(draw(scene, self.layout), scene, self._rng))
            return next(exposing[1])
        rendered = self._rendered
        if rendered is not None and rendered[0] is scene:
            return rendered[1]
        frame = render(scene, self.layout)
        self._rendered = (scene, frame)
        return frame


def open_camera(
    backend: str,
    *,
    fps: float,
    device: int | str | None = None,
    size: tuple[int, int] | None = None,
    layout: Layout | None = None,
    on_frame: FrameCallback | None = None,
    on_status: StatusCallback | None = None,
) -> Camera:
    """The camera for `backend` ("opencv", "picamera2" or "simulated"), as the `[camera]` table names it."""
    if backend == "simulated":
        scene = Scene(layout=layout.name) if layout is not None else Scene()
        return SimulatedCamera(scene, fps=fps, layout=layout, on_frame=on_frame, on_status=on_status)
    if backend == "opencv":
        if device is None:
            raise CameraError("camera.device: missing; name the camera (0, or /dev/v4l/by-id/...)")
        return OpenCVCamera(device, fps=fps, size=size, on_frame=on_frame, on_status=on_status)
    if backend == "picamera2":
        number = 0 if device is None else device
        if not isinstance(number, int) or isinstance(number, bool):
            raise CameraError(f"camera.device = {device!r}: the Raspberry Pi camera's number, 0 for the first")
        return Picamera2Camera(number, fps=fps, size=size, on_frame=on_frame, on_status=on_status)
    raise CameraError(f"camera.backend = {backend!r}: use opencv, picamera2 or simulated")
