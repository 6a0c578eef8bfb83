"""The camera is read in a process of its own (controller/camera/process.py), never on the table's.

`tablectl run --sim` with a simulated overhead camera: the frames are rendered and read by a child
of the daemon (stopped, it reads nothing and the table deals on), so a frame's read never holds the
interpreter lock a card waits for; with a real camera the table's process loads no vision at all.
Chips placed on the felt still reach the table's view through it; the child killed is a camera
fault on the Devices panel, its view offline (no payout is checked on an old picture), and it is
started again; it ends with the table, however the table ends; one that cannot run says why once.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.camera.process import NICE, RESTART_AFTER_S
from controller.testing import PATIENCE_S, Daemon

CONFIG = """
[table]
id = "HIL-CAM-PROC"
[indicators]
pin_map = "small-gpio"
[camera]
fps = 4
stable_frames = 2
"""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG).serve()


def camera_process(daemon: Daemon) -> int:
    found = daemon.camera_pids()
    assert len(found) == 1, f"camera processes of the daemon: {found}"
    return found[0]


def nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])


def zone_value(state: dict[str, Any], zone: str) -> int | None:
    view = dict(state.get("camera") or {})
    if view.get("status") != "ok":
        return None
    seen = view["zones"].get(zone, {"state": "ok", "value": 0})
    return seen["value"] if seen["state"] == "ok" else None


def gone(pid: int, timeout: float = PATIENCE_S) -> bool:
    """Whether `pid` ends (or is left a zombie for its parent to reap) within `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


def test_the_frames_are_read_in_a_child_process_of_the_table(daemon: Daemon) -> None:
    assert daemon.post("/api/sim/scene", {"zones": {"seat6.first": [5, 5, 5, 5]}})[0] == 200
    daemon.wait_for("the camera to see 20 on seat 6", lambda s: zone_value(s, "seat6.first") == 20)
    child = camera_process(daemon)
    assert Path(f"/proc/{child}/comm").read_text().strip() == "tablectl-camera"
    assert daemon.proc is not None
    # The card's way first when both want a core (as far as the kernel's 19 lets it, under nice).
    assert nice(child) == min(19, nice(daemon.proc.pid) + NICE)
    devices = daemon.get("/api/state")["devices"]["camera"]
    assert devices["reads"] >= 1 and devices["view"] == "ok", devices
    # Stopped, the child reads nothing: the table keeps the view it had and deals on; let go, it
    # reads the felt as it is now.
    os.kill(child, signal.SIGSTOP)
    try:
        assert daemon.post("/api/sim/scene", {"zones": {"seat6.first": [5] * 8}})[0] == 200
        assert daemon.post("/api/sim/shoe", {"cards": ["9C"]})[0] == 200
        assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
        state = daemon.wait_for("the card", lambda s: s["last_card"] == "9C")
        assert zone_value(state, "seat6.first") == 20
    finally:
        os.kill(child, signal.SIGCONT)
    daemon.wait_for("the camera to see 40 on seat 6", lambda s: zone_value(s, "seat6.first") == 40)


def test_a_killed_camera_process_is_a_camera_fault_then_started_again_and_sees_the_felt(daemon: Daemon) -> None:
    assert daemon.post("/api/sim/scene", {"zones": {"seat6.first": [5, 5, 5, 5, 5, 5, 5, 5]}})[0] == 200
    daemon.wait_for("the camera to see 40 on seat 6", lambda s: zone_value(s, "seat6.first") == 40)
    first = camera_process(daemon)
    os.kill(first, signal.SIGKILL)
    state = daemon.wait_for(
        "the camera's fault", lambda s: "camera's process ended" in str(s["devices"]["camera"].get("error", ""))
    )
    assert state["camera"]["status"] == "offline", state["camera"]
    assert zone_value(state, "seat6.first") is None  # no value from a picture nobody reads any more
    # Chips placed while it was down are in the scene the new process is given.
    assert daemon.post("/api/sim/scene", {"zones": {"seat6.first": [5, 5, 5, 5]}})[0] == 200
    daemon.wait_for("the camera to see 20 on seat 6 again", lambda s: zone_value(s, "seat6.first") == 20)
    second = camera_process(daemon)
    assert second != first
    assert daemon.get("/api/health")["journal_seq"] >= 1


def test_the_camera_process_ends_with_the_table_stopped_or_killed(tmp_path: Path) -> None:
    for end in ("stop", "kill"):
        (tmp_path / end).mkdir()
        daemon = Daemon(tmp_path / end, CONFIG)
        daemon.start()
        try:
            daemon.wait_for("the camera to read", lambda s: s["devices"]["camera"].get("reads", 0) >= 1)
            child = camera_process(daemon)
        finally:
            if end == "stop":
                assert daemon.stop() == 0, daemon.log()
            else:
                daemon.kill()
        assert gone(child), f"the camera's process {child} outlived the table ({end})"
        if end == "stop":  # it stopped its camera itself, not killed at the end of the table's wait
            assert re.search(r"tablectl camera: INFO .*: stopped", daemon.log()), daemon.log()


def test_a_camera_that_cannot_run_says_why_and_is_not_started_again(tmp_path: Path) -> None:
    bad = tmp_path / "camera.json"
    bad.write_text("{not a calibration")
    config = CONFIG.replace("[camera]\n", f'[camera]\ncalibration = "{bad}"\n')
    daemon = Daemon(tmp_path, config)
    daemon.start()
    try:
        state = daemon.wait_for("the camera's error", lambda s: "error" in s["devices"]["camera"])
        error = state["devices"]["camera"]["error"]
        assert str(bad) in error and "process ended" not in error, error
        assert gone_for_good(daemon, 2 * RESTART_AFTER_S), "the camera's process was started again"
        assert daemon.get("/api/state")["devices"]["camera"]["error"] == error
    finally:
        assert daemon.stop() == 0, daemon.log()


def gone_for_good(daemon: Daemon, seconds: float) -> bool:
    """No camera process of the daemon's for `seconds` (from when its first one ended)."""
    deadline = time.monotonic() + PATIENCE_S
    while daemon.camera_pids():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if daemon.camera_pids():
            return False
        time.sleep(0.05)
    return True


def test_a_real_cameras_table_holds_no_vision_in_its_own_process(tmp_path: Path) -> None:
    """The camera's process reads the layout, the calibration and the frames: the table's process
    loads none of vision's libraries (numpy, OpenCV) for a real camera, only the layout's name and
    seats, plainly read (controller/camera/plain.py)."""
    missing = tmp_path / "camera.json"
    config = CONFIG.replace(
        "[camera]\n", f'[camera]\nbackend = "opencv"\ndevice = "/dev/video-none"\ncalibration = "{missing}"\n'
    )
    daemon = Daemon(tmp_path, config)
    daemon.start()
    try:
        state = daemon.wait_for("the camera's error", lambda s: "error" in s["devices"]["camera"])
        assert f"{missing}: no such calibration file" in state["devices"]["camera"]["error"]
        assert daemon.proc is not None
        maps = Path(f"/proc/{daemon.proc.pid}/maps").read_text()
        assert "numpy" not in maps and "cv2" not in maps and "opencv" not in maps
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_fresh_frames_are_each_read_as_a_real_cameras_frames_are(tmp_path: Path) -> None:
    # A real camera's frames of a still table differ (sensor noise, a fresh JPEG): each is read.
    # The simulated camera gives them with `fresh_frames`; without it a still felt is one picture,
    # read once (controller/camera/feed.py), so the card path's bench beside vision needs the key.
    config = CONFIG.replace("fps = 4\n", "fps = 10\nfresh_frames = true\n")
    for daemon in Daemon(tmp_path, config).serve():
        daemon.wait_for("the camera's view", lambda s: (s.get("camera") or {}).get("status") == "ok")
        first = daemon.metric(FRAMES_READ)
        deadline = time.monotonic() + PATIENCE_S
        while (read := daemon.metric(FRAMES_READ)) < first + 20:  # the still felt's next 20 frames, each read
            assert time.monotonic() < deadline, f"frames read stayed at {read:g} (from {first:g})"
            time.sleep(0.05)


FRAMES_READ = "tablectl_camera_frames_read_total"
