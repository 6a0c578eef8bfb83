"""A card's wait for the table's loop while the camera reads frames: in the table's process, or in
its own.

The table's loop is woken by the shoe's bytes on a descriptor; its callback needs the interpreter
lock. A camera reader in the same process holds that lock for much of a frame's read (the
reader's own Python, numpy's indexing and masks), so a card that arrives meanwhile waits. Here a
second process writes an 8-byte CLOCK_MONOTONIC stamp to a pipe every 10 ms (as a shoe writes a
card; 600 of them) and an asyncio loop, with the daemon's switch interval (1 ms), notes how long
after the stamp its reader callback ran, in three arrangements taking turns:

  none      no camera
  thread    vision's `Reader` reading 1280x720 frames of a half-table camera at 30 a second (one
            wager changing between two frames, fresh noise), in a thread of the loop's process:
            the table's design before the camera had a process of its own
  process   the same reader at the same pace in a child process, as nice as the camera's
            (controller/camera/process.py's NICE): the design now

Each arrangement BENCH_REPEATS times (3), interleaved; p50 / p90 / p99 / max of each turn, and
their medians. The reading itself is the vision_speed benchmark's; OpenCV on one thread.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import statistics
import struct
import sys
import threading
import time
from typing import Any

STAMPS = 600
EVERY_S = 0.010
FPS = 30.0
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SWITCH_INTERVAL_S = 0.001  # controller/app/daemon.py's


def _reader_loop(stop: Any, reads: Any, nice: int = 0) -> None:
    """Read frames at FPS until `stop` is set (in a thread, or a process `nice` as the camera's is)."""
    import cv2

    if nice:
        os.nice(nice)

    from benchmarks.bench_vision_speed import _case
    from vision.layout import Layout

    cv2.setNumThreads(1)
    reader, frames = _case(0, "halves", (1280, 720), Layout.load("grand-slam-7"), "one wager changes")
    due = time.monotonic()
    k = 0
    while not stop.is_set():
        reader.read(frames[k % 2])
        k += 1
        reads.value += 1
        due += 1 / FPS
        time.sleep(max(0.0, due - time.monotonic()))


def _stamper(fd: int) -> None:
    for _ in range(STAMPS):
        time.sleep(EVERY_S)
        os.write(fd, struct.pack("d", time.monotonic()))
    os._exit(0)


def _turn(arrangement: str) -> dict[str, Any]:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    ctx = multiprocessing.get_context("spawn")
    stop: Any
    reads: Any
    worker: Any = None
    if arrangement == "thread":
        stop, reads = threading.Event(), _Count()
        worker = threading.Thread(target=_reader_loop, args=(stop, reads), daemon=True)
    elif arrangement == "process":
        stop, reads = ctx.Event(), ctx.Value("i", 0)
        from controller.camera.process import NICE

        worker = ctx.Process(target=_reader_loop, args=(stop, reads, NICE), daemon=True)
    if worker is not None:
        worker.start()
        deadline = time.monotonic() + 120
        while reads.value < 5 and time.monotonic() < deadline:  # reading at its pace before the stamps
            time.sleep(0.05)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _stamper(w)
    os.close(w)
    waits: list[float] = []
    loop = asyncio.new_event_loop()
    done = loop.create_future()
    began = reads.value if worker is not None else 0

    def readable() -> None:
        now = time.monotonic()
        data = os.read(r, 8 * 64)
        if not data:
            loop.remove_reader(r)
            done.set_result(None)
            return
        waits.extend((now - t) * 1e3 for (t,) in struct.iter_unpack("d", data))

    loop.add_reader(r, readable)
    started = time.monotonic()
    loop.run_until_complete(done)
    took = time.monotonic() - started
    loop.close()
    os.close(r)
    os.waitpid(pid, 0)
    frames = (reads.value - began) if worker is not None else 0
    if worker is not None:
        stop.set()
        worker.join(timeout=30)
    waits.sort()
    return {
        "p50_ms": round(_q(waits, 0.5), 3),
        "p90_ms": round(_q(waits, 0.9), 3),
        "p99_ms": round(_q(waits, 0.99), 3),
        "max_ms": round(waits[-1], 3),
        "stamps": len(waits),
        "frames_read_a_second": round(frames / took, 1),
    }


class _Count:
    value = 0


def _q(values: list[float], q: float) -> float:
    from benchmarks.bench_daemon import _percentile

    return _percentile(values, q)


def run() -> dict[str, Any]:
    order = ["none", "thread", "process"]
    turns: dict[str, list[dict[str, Any]]] = {name: [] for name in order}
    load = [os.getloadavg()[0]]
    for repeat in range(REPEATS):
        for arrangement in order if repeat % 2 == 0 else order[::-1]:
            turns[arrangement].append(_turn(arrangement))
            load.append(os.getloadavg()[0])
    medians = {
        name: {key: round(statistics.median(t[key] for t in runs), 3) for key in runs[0]}
        for name, runs in turns.items()
    }
    return {
        "name": "camera_beside_cards",
        "what": (
            "how long after a pipe's 8-byte stamp (written every 10 ms by another process, 600 a turn) an "
            "asyncio loop with the daemon's 1 ms switch interval runs its reader callback: no camera; "
            "vision's Reader reading 1280x720 half-table frames at 30 a second in a thread of the loop's "
            "process (the table's design before); the same in a child process (the design now); "
            f"{REPEATS} interleaved turns each, medians (lower is better)"
        ),
        "reference": "the wait with no camera at all; ratio = p99 with the reader in its own process / p99 with none",
        "ratio": round(medians["process"]["p99_ms"] / medians["none"]["p99_ms"], 3),
        "results": {
            "medians": medians,
            "turns": turns,
            "load_average": f"{min(load):.1f}-{max(load):.1f} (1-minute, before and after each turn)",
        },
    }
