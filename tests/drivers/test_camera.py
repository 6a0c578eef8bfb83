"""The camera device and its reading thread: frames of the simulated felt, knocks, unplugging,
a real camera that cannot be found, and the settled view posted only when the felt changes."""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from controller.camera.feed import HEALTH_FILE, CameraFeed
from drivers.camera import CameraError, CameraStatus, OpenCVCamera, SimulatedCamera, open_camera
from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.scene import Hand, Scene, Stack

WAIT_S = 60.0  # the backstop of a wait for a frame or a view: a loaded CI machine is slow


class Frames:
    """Collects the frames a camera delivers, in its worker thread."""

    def __init__(self) -> None:
        self.queue: queue.Queue[Any] = queue.Queue()

    def __call__(self, frame: Any) -> None:
        self.queue.put(frame)

    def next(self, other_than: Any = None) -> Any:
        """The next frame that is not the object `other_than` (a re-render, not a repeat)."""
        while True:
            frame = self.queue.get(timeout=WAIT_S)
            if frame is not other_than:
                return frame


def until(check: Callable[[], bool], what: str) -> None:
    done = threading.Event()
    for _ in range(int(WAIT_S / 0.05)):
        if check():
            return
        done.wait(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def layout() -> Layout:
    return Layout.load("grand-slam-7")


@pytest.fixture
def camera(layout: Layout) -> Iterator[tuple[SimulatedCamera, Frames]]:
    frames = Frames()
    cam = SimulatedCamera(Scene(), fps=20, layout=layout, on_frame=frames)
    cam.start()
    yield cam, frames
    cam.stop()


def test_the_simulated_camera_shows_its_scene_and_renders_again_only_when_the_felt_changes(
    camera: tuple[SimulatedCamera, Frames],
) -> None:
    cam, frames = camera
    first = frames.next()
    assert first.shape == (1080, 1920, 3) and first.dtype == np.uint8
    assert frames.next() is first  # a still table: the same picture again, not rendered anew
    cam.edit(lambda scene: dataclasses.replace(scene, zones={"seat3.first": (Stack((5,) * 4),)}))
    changed = frames.next(other_than=first)
    assert np.abs(changed.astype(int) - first.astype(int)).sum() > 0
    status = cam.status()
    assert status.state == "streaming" and status.simulated and "SIMULATED" in status.message


def test_a_knock_moves_the_camera_past_its_calibration_and_putting_it_back_restores_it(
    camera: tuple[SimulatedCamera, Frames], layout: Layout
) -> None:
    cam, frames = camera
    still = frames.next()
    reader = Reader(layout, Calibration.from_frame(still, layout, camera=Scene().camera.model()))
    assert not reader.read(still).camera.bumped
    cam.bump(True)
    knocked = frames.next(other_than=still)
    assert cam.bumped and reader.read(knocked).bumped
    cam.bump(False)
    back = frames.next(other_than=knocked)
    assert not cam.bumped and not reader.read(back).bumped


def test_an_unplugged_simulated_camera_says_so_and_gives_no_frames(camera: tuple[SimulatedCamera, Frames]) -> None:
    cam, frames = camera
    frames.next()
    cam.unplugged = True
    until(lambda: cam.status().state == "reconnecting", "the unplugged status")
    assert "unplugged" in cam.status().message
    while not frames.queue.empty():
        frames.queue.get()
    count = cam.frames
    cam.unplugged = False
    frames.next()
    assert cam.frames > count and cam.status().state == "streaming"


def test_a_camera_that_cannot_be_opened_says_where_and_keeps_trying() -> None:
    seen: list[CameraStatus] = []
    cam = OpenCVCamera("/dev/video-no-such-camera", fps=5, on_status=seen.append)
    cam.start()
    try:
        until(lambda: any(s.state == "reconnecting" for s in seen), "the camera's complaint")
    finally:
        cam.stop()
    complaint = next(s for s in seen if s.state == "reconnecting")
    assert "/dev/video-no-such-camera" in complaint.message and "cannot be opened" in complaint.message
    assert not complaint.simulated and cam.frames == 0
    assert cam.status().state == "stopped"


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: OpenCVCamera(True, fps=4), "camera.device = True"),
        (lambda: OpenCVCamera(99, fps=4), "camera.device = 99: a device index from 0 to 63"),
        (lambda: OpenCVCamera(0, fps=0), "camera.fps = 0"),
        (lambda: open_camera("usb", fps=4), "camera.backend = 'usb': use opencv, picamera2 or simulated"),
        (lambda: open_camera("opencv", fps=4), "camera.device: missing"),
    ],
)
def test_camera_settings_are_refused_naming_the_key(make: Callable[[], Any], words: str) -> None:
    with pytest.raises(CameraError, match=words.replace("(", r"\(").replace(".", r"\.")):
        make()


def test_the_reading_thread_posts_the_settled_view_once_and_again_only_when_the_felt_changes(
    layout: Layout,
) -> None:
    views: queue.Queue[dict[str, Any]] = queue.Queue()
    feed = CameraFeed(
        layout,
        calibration=None,
        calibration_path=None,
        camera_model=Scene().camera.model(),
        stable_frames=2,
        post=views.put,
        status=lambda _: None,
        simulated=True,
    )
    scene = Scene(zones={"seat3.first": (Stack((5,) * 4),)}, pucks={"blind": "seat4.puck"})
    cam = SimulatedCamera(scene, fps=10, layout=layout, on_frame=feed.offer)
    feed.start()
    cam.start()
    try:

        def next_view() -> dict[str, Any]:
            """The next view with zones in which no zone is still settling (its frames being
            gathered: posted "unsure", never the value the table had before)."""
            while True:
                view = views.get(timeout=WAIT_S)
                zones = view.get("zones", {})
                settling = [z for z in zones.values() if z["why"].startswith("settling")]
                assert all(z["state"] == "unsure" and z["value"] is None for z in settling), zones
                if zones and not settling:
                    return view

        view = next_view()
        assert view["camera"] == "ok"
        assert view["zones"]["seat3.first"] == {"state": "ok", "value": 20, "why": ""}
        assert view["pucks"] == {"blind": "seat4.puck"}
        assert all(z["value"] == 0 for name, z in view["zones"].items() if name != "seat3.first")
        # The felt stays as it is for many more frames: nothing more is posted.
        settled_at = cam.frames
        until(lambda: cam.frames >= settled_at + 8 and feed.reads >= 1, "eight more frames")
        assert views.empty()

        cam.edit(lambda s: dataclasses.replace(s, hands=(Hand("seat3.first"),)))
        blocked = next_view()
        assert blocked["zones"]["seat3.first"]["state"] == "blocked"
        assert blocked["zones"]["seat3.first"]["value"] is None
    finally:
        cam.stop()
        feed.stop()


def test_a_soft_lens_is_a_camera_fault_on_the_devices_record_and_in_doctors_file(
    layout: Layout, tmp_path: Path
) -> None:
    statuses: queue.Queue[dict[str, Any]] = queue.Queue()
    feed = CameraFeed(
        layout,
        calibration=None,
        calibration_path=None,
        camera_model=Scene().camera.model(),
        stable_frames=2,
        post=lambda _: None,
        status=statuses.put,
        simulated=True,
        health_path=tmp_path / HEALTH_FILE,
    )
    cam = SimulatedCamera(Scene(blur=2.2), fps=10, layout=layout, on_frame=feed.offer)
    feed.start()
    cam.start()
    try:
        while True:
            status = statuses.get(timeout=WAIT_S)
            if "fault" in status:
                break
    finally:
        cam.stop()
        feed.stop()
    blur = status["health"]["blur_px"]
    assert blur > 1.45
    words = f"out of focus: {blur:.1f} px blur at the markers (the reader needs at most 1.45 px): refocus the lens"
    assert status["fault"] == words
    assert status["message"].endswith(words)
    record = json.loads((tmp_path / HEALTH_FILE).read_text())
    assert record["blur_px"] == blur and [f["words"] for f in record["faults"]] == [words]


class FakeCapture:
    """cv2.VideoCapture's API over a camera that gives YUYV up to `yuyv_fps` frames a second in
    the mode asked for, and MJPEG at any rate."""

    def __init__(self, yuyv_fps: float) -> None:
        self.yuyv_fps = yuyv_fps
        self.props: dict[int, float] = {}
        self.frame = np.zeros((72, 128, 3), dtype=np.uint8)

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        self.props[prop] = value
        if prop == cv2.CAP_PROP_FPS and self.props.get(cv2.CAP_PROP_FOURCC) == cv2.VideoWriter_fourcc(*"YUYV"):
            self.props[prop] = min(value, self.yuyv_fps)
        return True

    def get(self, prop: int) -> float:
        return self.props.get(prop, 0.0)

    def read(self) -> tuple[bool, Any]:
        return True, self.frame

    def release(self) -> None:
        pass


@pytest.mark.parametrize(
    ("yuyv_fps", "said"),
    [
        (30.0, "camera 0: delivering frames at up to 30 a second, raw YUYV frames"),
        (
            5.0,
            "camera 0: delivering frames at up to 30 a second, MJPEG (YUYV only at 5 frames a second), at JPEG quality 100",
        ),
    ],
)
def test_a_v4l2_camera_is_asked_for_yuyv_and_for_its_best_mjpeg_only_when_yuyv_is_too_slow(
    yuyv_fps: float, said: str
) -> None:
    capture = FakeCapture(yuyv_fps)
    asked: list[int | str] = []

    def best(device: int | str) -> str:
        asked.append(device)
        return "at JPEG quality 100"

    statuses: queue.Queue[CameraStatus] = queue.Queue()
    cam = OpenCVCamera(0, fps=30, size=(128, 72), make=lambda _: capture, jpeg_quality=best, on_status=statuses.put)
    cam.start()
    try:
        while (status := statuses.get(timeout=WAIT_S)).state != "streaming":
            pass
    finally:
        cam.stop()
    assert status.message == said
    wanted = "YUYV" if yuyv_fps >= 30 else "MJPG"
    assert capture.props[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*wanted)
    assert asked == ([] if wanted == "YUYV" else [0])
