"""The Raspberry Pi camera backend (`backend = "picamera2"`), driven through an object with
Picamera2's API: the frame size it asks for, the colour order (Picamera2's "RGB888" is B, G, R
in memory, OpenCV's order: the frame reaches vision byte for byte as the scene looked), a camera
that cannot be opened or stops giving frames, and the refusal naming python3-picamera2."""

from __future__ import annotations

import importlib.util
import queue
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from controller.app.config import ConfigError, parse
from drivers.camera import PICAMERA2_MISSING, CameraError, CameraStatus, Picamera2Camera, open_camera
from vision.render import render
from vision.scene import Scene, Stack

WAIT_S = 60.0  # the backstop of a wait for a frame or a status: a loaded CI machine is slow


class FakePicamera2:
    """Picamera2's API as tablectl uses it, over a "world" seen in R, G, B. Like libcamera, a
    format is named by its DRM fourcc: "RGB888" is stored B, G, R in memory, "BGR888" R, G, B."""

    def __init__(self, world_rgb: np.ndarray, *, fail_capture_after: int | None = None, shape: tuple[int, ...] | None = None) -> None:
        self.world = world_rgb
        self.calls: list[str] = []
        self.config: dict[str, Any] | None = None
        self.fail_capture_after = fail_capture_after
        self.shape = shape
        self.captures = 0

    def create_video_configuration(self, main: dict[str, Any], **options: Any) -> dict[str, Any]:
        self.calls.append("create_video_configuration")
        return {"use_case": "video", "main": dict(main), **options}

    def configure(self, config: dict[str, Any]) -> None:
        self.calls.append("configure")
        width, height = config["main"]["size"]
        if (height, width) != self.world.shape[:2]:
            raise RuntimeError(f"this sensor cannot give {width}x{height}")  # a stand-in for libcamera's own refusal
        self.config = config

    def start(self) -> None:
        assert self.config is not None, "start() before configure()"
        self.calls.append("start")

    def capture_array(self, name: str = "main") -> np.ndarray:
        assert name == "main" and "start" in self.calls
        self.captures += 1
        if self.fail_capture_after is not None and self.captures > self.fail_capture_after:
            raise RuntimeError("Camera frontend has timed out!")
        assert self.config is not None
        fmt = self.config["main"]["format"]
        frame = {"RGB888": self.world[..., ::-1], "BGR888": self.world}[fmt]
        if self.shape is not None:
            return np.zeros(self.shape, dtype=np.uint8)
        return np.ascontiguousarray(frame)

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")


def _felt() -> np.ndarray:
    """The simulated felt as OpenCV sees it (B, G, R): red and blue chips, green cloth."""
    return render(Scene(zones={"seat1.first": (Stack((5, 5, 5)),), "seat2.first": (Stack((25, 25)),)}))


def _collect(camera: Picamera2Camera) -> queue.Queue[Any]:
    frames: queue.Queue[Any] = queue.Queue()
    camera.on_frame = frames.put
    return frames


def test_frames_have_the_asked_size_and_opencvs_colour_order() -> None:
    bgr = _felt()
    assert not np.array_equal(bgr, bgr[..., ::-1])  # the felt is not grey: a swapped order would show
    height, width = bgr.shape[:2]
    fake = FakePicamera2(np.ascontiguousarray(bgr[..., ::-1]))  # the world in R, G, B
    camera = Picamera2Camera(0, fps=10, size=(width, height), make=lambda number: fake)
    frames = _collect(camera)
    camera.start()
    try:
        frame = frames.get(timeout=WAIT_S)
    finally:
        camera.stop()
    assert fake.config is not None and fake.config["main"] == {"size": (width, height), "format": "RGB888"}
    assert frame.shape == (height, width, 3) and frame.dtype == np.uint8
    assert np.array_equal(frame, bgr)  # byte for byte what OpenCV's BGR render of the scene is
    assert fake.calls[:3] == ["create_video_configuration", "configure", "start"]
    assert fake.calls[-2:] == ["stop", "close"]


def test_a_camera_that_cannot_be_opened_says_so_and_keeps_trying() -> None:
    seen: list[CameraStatus] = []
    tries = threading.Event()

    def no_camera(number: int) -> Any:
        tries.set()
        raise IndexError("list index out of range")  # Picamera2(0) with no camera on the connector

    camera = Picamera2Camera(0, fps=10, make=no_camera, on_status=seen.append)
    camera.start()
    try:
        assert tries.wait(WAIT_S)
        for _ in range(int(WAIT_S / 0.05)):
            if any(s.state == "reconnecting" for s in seen):
                break
            threading.Event().wait(0.05)
    finally:
        camera.stop()
    message = next(s.message for s in seen if s.state == "reconnecting")
    assert message.startswith("Raspberry Pi camera 0 cannot be opened (IndexError: list index out of range)")
    assert "ribbon cable" in message and not any(s.simulated for s in seen)


def test_a_camera_that_stops_giving_frames_is_released_and_reopened() -> None:
    bgr = _felt()
    fakes: list[FakePicamera2] = []

    def make(number: int) -> FakePicamera2:
        fakes.append(FakePicamera2(np.ascontiguousarray(bgr[..., ::-1]), fail_capture_after=1))
        return fakes[-1]

    seen: list[CameraStatus] = []
    camera = Picamera2Camera(0, fps=20, size=(bgr.shape[1], bgr.shape[0]), make=make, on_status=seen.append)
    frames = _collect(camera)
    camera.start()
    try:
        frames.get(timeout=WAIT_S)
        frames.get(timeout=WAIT_S)  # the second frame comes from the reopened camera
    finally:
        camera.stop()
    assert len(fakes) >= 2 and fakes[0].calls[-2:] == ["stop", "close"]
    assert any("stopped giving frames (RuntimeError: Camera frontend has timed out!)" in s.message for s in seen)


def test_a_frame_of_another_shape_is_refused_not_passed_on() -> None:
    world = np.zeros((720, 1280, 3), dtype=np.uint8)
    seen: list[CameraStatus] = []
    fake = FakePicamera2(world, shape=(720, 1280, 4))  # XRGB8888-like: four bytes a pixel
    camera = Picamera2Camera(0, fps=20, make=lambda n: fake, on_status=seen.append)
    frames = _collect(camera)
    camera.start()
    try:
        for _ in range(int(WAIT_S / 0.05)):
            if any("gave a frame of shape (720, 1280, 4)" in s.message for s in seen):
                break
            threading.Event().wait(0.05)
    finally:
        camera.stop()
    assert frames.empty()
    assert any("not 720x1280 RGB888" in s.message for s in seen), [s.message for s in seen]


@pytest.mark.skipif(importlib.util.find_spec("picamera2") is not None, reason="picamera2 is installed here")
def test_without_picamera2_the_refusal_names_the_raspberry_pi_os_package() -> None:
    with pytest.raises(CameraError) as refused:
        open_camera("picamera2", fps=4)
    assert str(refused.value) == PICAMERA2_MISSING
    assert "sudo apt install python3-picamera2" in PICAMERA2_MISSING and "--system-site-packages" in PICAMERA2_MISSING


def test_the_camera_number_is_checked() -> None:
    with pytest.raises(CameraError, match=r"camera\.device = 9: the Raspberry Pi camera's number"):
        Picamera2Camera(9, fps=4, make=lambda n: None)
    with pytest.raises(CameraError, match=r"camera\.device = '/dev/video0'"):
        open_camera("picamera2", fps=4, device="/dev/video0")


def test_the_config_takes_picamera2_with_its_camera_number(tmp_path: Path) -> None:
    live = {"shoe": {"url": "/dev/a"}, "display": {"url": "/dev/b"}}
    config = parse({**live, "camera": {"backend": "picamera2", "calibration": "/var/lib/tablectl/camera.json"}}, "t.toml", simulated=False)
    assert config.camera is not None and config.camera.backend == "picamera2" and config.camera.device is None
    with pytest.raises(ConfigError, match=r"camera\.device: the Raspberry Pi camera's number"):
        parse({**live, "camera": {"backend": "picamera2", "device": "/dev/video0", "calibration": "c.json"}}, "t.toml", simulated=False)
    with pytest.raises(ConfigError, match=r"camera\.calibration: a real camera needs its calibration file"):
        parse({**live, "camera": {"backend": "picamera2"}}, "t.toml", simulated=False)
