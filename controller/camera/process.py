"""The overhead camera in a process of its own: its driver, the reader, fusion and health.

Reading a frame is 10-30 ms of Python and numpy on this machine and ten times that on a Pi Zero
2 W; much of it holds the interpreter lock (numpy's indexing and masks, the reader's own code). In
the table's process, a card arriving while a frame was read waited for the lock: with a reader at
30 frames a second beside it, the loop's wake-up by a pty took 5-7 ms at its 99th percentile
instead of 2, and up to 12 ms. So the camera is read here, in a process started by the table,
and only what the table keeps crosses: the settled view when it changes and the camera's device
status (JSON lines over a socketpair). The table sends back what only it knows: "recalibrate", and
on a simulated table the scene its simulated dealer and players make (the whole scene, each time
it changes).

    python -m controller.camera.process FD

FD is this process's end of the socketpair. The first line the table sends is the settings
(`CameraProcess.settings`). The process ends when the table's end closes (the table stopped or
died), and the table starts it again when it ends on its own (`CameraProcess`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: How often the camera's process sends its frame counters (for GET /metrics) while they change.
COUNTS_EVERY_S = 1.0
#: How long after the camera's process ended on its own the table starts it again: the first time,
#: then twice as long each time it ends again without having read a frame, up to RESTART_MAX_S.
RESTART_AFTER_S = 2.0
RESTART_MAX_S = 60.0
#: How long a stopping table waits for the camera's process to end before killing it.
STOP_WAIT_S = 5.0
#: OpenCV's threads in the camera's process: its reading is on one core.
OPENCV_THREADS = 1


class CameraProcess(asyncio.Protocol):
    """The table's handle on the camera's process (on the table's loop): starts it, takes its
    views and statuses (`on_view`, `on_status`, on the loop), keeps its frame counters for
    /metrics (`reads`, `dropped`, `read_seconds`), and sends it `recalibrate` and, on a simulated
    table, the scene (`send_scene`, from any thread)."""

    def __init__(
        self,
        settings: Mapping[str, Any],
        *,
        loop: asyncio.AbstractEventLoop,
        on_view: Callable[[dict[str, Any]], None],
        on_status: Callable[[dict[str, Any]], None],
    ) -> None:
        self.settings = dict(settings)
        self.loop = loop
        self.on_view = on_view
        self.on_status = on_status
        self.reads = 0
        self.dropped = 0
        self.read_seconds = 0.0
        self.proc: subprocess.Popen[bytes] | None = None
        self._before: tuple[int, int, float] = (0, 0, 0.0)  # the counters of the processes before this one
        self._child_reads = 0  # frames this process has read
        self._transport: asyncio.Transport | None = None
        self._sock: socket.socket | None = None
        self._buffer = b""
        self._closing = False
        self._restart: asyncio.TimerHandle | None = None
        self._ending: asyncio.Task[None] | None = None
        self._wait = RESTART_AFTER_S
        self._refused = False  # the camera's process said why it cannot run: not started again
        self._scene: tuple[int, dict[str, Any]] | None = None  # the newest scene and its version
        self._scene_sent = 0
        self._versions = 0
        self._lock = threading.Lock()

    # -- on the table's loop ---------------------------------------------------------------------

    async def start(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "controller.camera.process", str(theirs.fileno())], pass_fds=(theirs.fileno(),)
            )
        except OSError as exc:  # no process to be had (memory, process limit): a camera fault, not a dead table
            ours.close()
            why = f"cannot start the camera's process: {exc}"
            log.error("camera: %s", why)
            self.on_status({"installed": True, "ok": False, "error": why})
            return
        finally:
            theirs.close()
        self._buffer = b""
        self._before = (self.reads, self.dropped, self.read_seconds)
        self._child_reads = 0
        self._sock = ours
        transport, _ = await self.loop.create_unix_connection(lambda: self, sock=ours)
        self._transport = transport
        self._write({**self.settings, **self._scene_settings()})

    def _scene_settings(self) -> dict[str, Any]:
        with self._lock:
            scene = self._scene
        if scene is None:
            return {}
        self._scene_sent = scene[0]
        return scene[1]

    def recalibrate(self) -> None:
        """Calibrate again from the next frame (any thread)."""
        self._soon(lambda: self._write({"recalibrate": True}))

    def send_scene(self, scene: dict[str, Any], unplugged: bool) -> None:
        """The simulated camera's scene is now `scene` (`Scene.to_dict()`), and it is unplugged or not
        (any thread; called in the order of the changes): the newest is sent, once."""
        with self._lock:
            self._versions += 1
            self._scene = (self._versions, {"scene": scene, "unplugged": unplugged})
        self._soon(self._flush_scene)

    def _flush_scene(self) -> None:
        with self._lock:
            scene = self._scene
        if scene is None or scene[0] <= self._scene_sent or self._transport is None:
            return
        self._scene_sent = scene[0]
        self._write(scene[1])

    def _soon(self, call: Callable[[], None]) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            call()
        elif not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop has just closed: the table is stopping
                self.loop.call_soon_threadsafe(call)

    def _write(self, message: Mapping[str, Any]) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                log.error("camera: the camera's process sent %r, not a JSON line", line[:200])
                continue
            self._take(message)

    def _take(self, message: dict[str, Any]) -> None:
        counts = message.get("counts")
        if isinstance(counts, dict):  # this process's; /metrics counts every process's frames
            self._child_reads = int(counts.get("reads", 0))
            self.reads = self._before[0] + self._child_reads
            self.dropped = self._before[1] + int(counts.get("dropped", 0))
            self.read_seconds = self._before[2] + float(counts.get("read_seconds", 0.0))
        if isinstance(message.get("view"), dict):
            self.on_view(message["view"])
        if isinstance(message.get("status"), dict):
            self.on_status(message["status"])
        if message.get("refused"):
            self._refused = True

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        if not self._closing:
            self._ending = self.loop.create_task(self._ended())

    async def _ended(self) -> None:
        """The camera's process closed its end: reaped off the loop (it may take a moment to exit),
        said, and started again after a wait that doubles while it ends without reading a frame;
        not started again when it said it cannot run."""
        code = await asyncio.to_thread(self._reap, 1.0)
        if self._closing or self._refused:  # a camera that cannot run here: it said why already
            return
        if self._child_reads:
            self._wait = RESTART_AFTER_S  # it had been reading: a fresh start, not a crash loop
        wait, self._wait = self._wait, min(self._wait * 2, RESTART_MAX_S)
        why = f"the camera's process ended (exit code {code}); starting it again in {wait:g} s"
        log.error("camera: %s", why)
        self.on_view({"camera": "offline", "why": why})
        self.on_status({"installed": True, "ok": False, "error": why, "view": "offline", "message": why})
        self._restart = self.loop.call_later(wait, lambda: self.loop.create_task(self._again()))

    async def _again(self) -> None:
        self._restart = None
        if not self._closing:
            await self.start()

    def _reap(self, wait: float) -> int | None:
        """The process's exit code, waiting up to `wait` for it to end, then killing it."""
        proc = self.proc
        if proc is None:
            return None
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()

    def close(self) -> None:
        """Stop the camera's process: its end of the socket closes, it stops its camera and ends
        (killed after STOP_WAIT_S)."""
        self._closing = True
        if self._restart is not None:
            self._restart.cancel()
        if self._sock is not None:
            # Its end sees the table's close at once: the transport's own close waits for a turn of
            # the loop, and the daemon's closers run after its loop has stopped.
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)
        if self._transport is not None:
            self._transport.close()
        self._reap(STOP_WAIT_S)


# -- the camera's process ---------------------------------------------------------------------------


def serve(sock: socket.socket) -> int:
    """Read the settings, open the camera and its reading thread, send what they say, take what
    the table sends until it closes its end."""
    from controller.camera.feed import CameraFeed
    from drivers.camera import CameraError, SimulatedCamera, open_camera
    from vision.calibration import Calibration, CalibrationError
    from vision.layout import Layout, LayoutError
    from vision.scene import Scene

    lock = threading.Lock()

    def send(message: Mapping[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with lock, contextlib.suppress(OSError):  # the table has gone: the loop below sees its end closed
            sock.sendall(data)

    import cv2

    # One core for the reading, as vision's speed is measured (vision/README.md): the table's other
    # cores stay the card's and the screens', and OpenCV's own threads never split a frame's sums
    # in another order than the benchmarks' and the tests' (a measure's last bits stay the same).
    cv2.setNumThreads(OPENCV_THREADS)
    lines = sock.makefile("rb")
    first = lines.readline()
    if not first:
        return 0
    settings = json.loads(first)
    simulated = settings["backend"] == "simulated"
    try:
        layout = Layout.load(settings["layout"])
        calibration = None
        path = Path(settings["calibration"]) if settings.get("calibration") else None
        if path is not None and (path.exists() or not simulated):
            calibration = Calibration.load(path)
    except (LayoutError, CalibrationError) as exc:
        send({"status": {"installed": True, "ok": False, "error": str(exc)}, "refused": True})
        return 0
    scene = Scene.from_dict(settings["scene"]) if settings.get("scene") else Scene(layout=layout.name)
    feed: CameraFeed | None = None

    def counts() -> dict[str, Any]:
        assert feed is not None
        return {"reads": feed.reads, "dropped": feed.dropped, "read_seconds": feed.read_seconds}

    feed = CameraFeed(
        layout,
        calibration=calibration,
        calibration_path=path,
        camera_model=Scene(layout=layout.name).camera.model() if simulated else None,
        stable_frames=settings["stable_frames"],
        post=lambda view: send({"view": view, "counts": counts()}),
        status=lambda record: send({"status": record, "counts": counts()}),
        simulated=simulated,
        health_path=Path(settings["health_path"]) if settings.get("health_path") else None,
    )
    try:
        size = (calibration.camera.width, calibration.camera.height) if calibration else None
        if simulated:
            fresh = 0 if settings.get("fresh_frames") else None  # a fresh exposure each frame (seeded)
            camera: Any = SimulatedCamera(scene, fps=settings["fps"], layout=layout, on_frame=feed.offer, fresh=fresh)
            camera.unplugged = bool(settings.get("unplugged", False))
        else:
            camera = open_camera(
                settings["backend"], fps=settings["fps"], device=settings.get("device"), size=size, on_frame=feed.offer
            )
    except CameraError as exc:
        send({"status": {"installed": True, "ok": False, "error": str(exc)}, "refused": True})
        return 0
    feed.start()
    camera.start()
    stop = threading.Event()

    def tell_counts() -> None:
        told = None
        while not stop.wait(COUNTS_EVERY_S):
            now = counts()
            if now != told:
                told = now
                send({"counts": now})

    threading.Thread(target=tell_counts, name="camera-counts", daemon=True).start()
    try:
        for line in lines:
            message = json.loads(line)
            if message.get("recalibrate"):
                feed.recalibrate()
            if isinstance(camera, SimulatedCamera) and "scene" in message:
                camera.scene = Scene.from_dict(message["scene"])
                camera.unplugged = bool(message.get("unplugged", False))
    finally:
        stop.set()
        camera.stop()  # first: no frame is offered to a stopped reader
        feed.stop()
    return 0


#: The camera's process as `ps`, `top` and /proc/PID/comm name it.
NAME = "tablectl-camera"
#: The camera's process runs this much nicer than the table's: when both want a core, the card's
#: way (the shoe, the journal, the lamps) goes first, and the camera reads the next frame after.
NICE = 5


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="tablectl camera: %(levelname)s %(message)s")
    with contextlib.suppress(OSError, AttributeError):  # Linux; a name is a convenience, not a need
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, NAME.encode(), 0, 0, 0)  # PR_SET_NAME
        libc.prctl(1, 15, 0, 0, 0)  # PR_SET_PDEATHSIG: SIGTERM when the table's process is gone
    with contextlib.suppress(OSError):
        os.nice(NICE)
    sock = socket.socket(fileno=int(argv[0]))
    try:
        return serve(sock)
    except KeyboardInterrupt:  # Ctrl-C at a terminal reaches the whole group: the table stops it too
        return 0
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
