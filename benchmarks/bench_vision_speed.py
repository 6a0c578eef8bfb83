"""Vision speed: one frame read on one core, stage by stage, at four camera geometries.

  halves 1920x1080   one of the two cameras over half the table (the geometry the counting
                     needs, vision/README.md), 48 or 36 chip zones a frame
  halves 1280x720    the same camera at the issue's 1280x720
  whole 1280x720     one camera over the whole 7-seat layout (the issue's speed goal), 84 zones
  whole 1920x1080    the same at 1080p

Frames are rendered scenes (seeds 200000 on: stacks in about a third of the zones, the blind
puck, no hands, so every occupied zone goes through the whole stack reading), read three ways:

  still              two exposures of the scene (fresh sensor noise, 2 levels) in turn, as
                     consecutive frames of a still table: the markers, the pucks and every zone
                     are compared with how they looked when last read, never a frame with itself
  one wager changes  the scene and the same scene with one chip more on one stack, in turn: that
                     zone (and any farther one it could hide) is read again on every frame
  cold               Reader.forget() before every read: every zone read from scratch, as on the
                     first frame, after a bump or when the light changes

The reader is built once per calibration (not timed); `read` is timed (wall and CPU) with
cv2.setNumThreads(1). Stages: markers (the bumped-camera check), pucks, zone crops (one remap of
every zone's patch of felt), chips (felt colour, which zones changed, what stands in each zone
read again, stacks, denominations).

Then, apart from the timing (a profiler slows every call), the half-table 1280x720 camera's cold
and changing reads are profiled (cProfile, 6 scenes x 6 reads): the top 10 functions by their own
time go into the results (`profile_top10`), where issue 35's speed work started from.
"""

from __future__ import annotations

import cProfile
import dataclasses
import os
import pstats
import statistics
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import empty_table, view
from vision.calibration import Calibration
from vision.geometry import project
from vision.layout import Layout
from vision.reader import Image, Reader
from vision.render import render
from vision.scene import Scene

FRAMES = 12
REPEATS = 6
BUDGET_MS = 33.0  # 30 frames a second


MODES = {
    "still": "a still table: two exposures of one scene in turn (fresh sensor noise, 2 levels)",
    "one wager changes": "each frame one chip more or less on one stack than the frame before (and fresh noise)",
    "cold": "every zone read afresh (Reader.forget() before each read): a new camera, a bump, new light",
}


def _with_one_chip_more(scene: Scene, first: Image, layout: Layout, calibration: Calibration, whole: Layout) -> Image:
    """The scene's frame with one chip more on one of its stacks this camera reads (a wager raised
    between two frames) and nothing else changed: the raised stack's render is pasted over the
    scene's frame where that zone's stacks can show (the renderer's random edge spots and noise
    would otherwise differ on every stack of a second render). `first` is the scene's frame."""
    zone = next(name for name in sorted(scene.zones) if name in layout.zones)
    stack = scene.zones[zone][0]
    raised = dataclasses.replace(stack, chips=(*stack.chips, stack.chips[-1]))
    second = render(dataclasses.replace(scene, zones={**scene.zones, zone: (raised, *scene.zones[zone][1:])}), whole)
    circle = layout.zones[zone]
    a = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    top = (len(raised.chips) + 1) * 3.3
    ring = np.stack([circle.x + (circle.r + 5) * np.cos(a), circle.y + (circle.r + 5) * np.sin(a)], axis=1)
    cylinder = np.concatenate([np.column_stack([ring, np.zeros(48)]), np.column_stack([ring, np.full(48, top)])])
    outline = cv2.convexHull(project(calibration.camera, calibration.pose, cylinder).astype(np.float32))
    where = np.zeros(first.shape[:2], dtype=np.uint8)
    cv2.fillConvexPoly(where, np.round(outline).astype(np.int32), 1)
    return np.where(where[..., None].astype(bool), second, first).astype(np.uint8)


def _case(
    i: int, geometry: str, resolution: tuple[int, int], whole: Layout, mode: str
) -> tuple[Reader, tuple[Image, Image]]:
    """Scene 200000 + i's reader (built once per calibration, not timed) and its two frames, read in turn."""
    scene, layout = view(200_000 + i, geometry, whole, resolution)
    scene = dataclasses.replace(scene, hands=())
    calibration = Calibration.from_frame(render(empty_table(scene), whole), layout, camera=scene.camera.model())
    reader = Reader(layout, calibration)
    first = render(scene, whole)
    second = first
    if mode == "one wager changes" and scene.zones.keys() & layout.zones.keys():
        second = _with_one_chip_more(scene, first, layout, calibration, whole)
    noise = np.random.default_rng(i).normal(0.0, 2.0, first.shape)  # a second exposure: fresh sensor noise
    frames = (first, np.clip(second + noise, 0, 255).astype(np.uint8))
    reader.read(frames[1])  # warm-up
    return reader, frames


PROFILED = 6  # scenes profiled (cProfile, after the timing: it slows every call) for the top 10
PROFILE_TOP = 10


def profile(geometry: str, resolution: tuple[int, int], whole: Layout, mode: str) -> list[dict[str, Any]]:
    """Where a read spends its time: cProfile over REPEATS reads of PROFILED scenes, the top
    PROFILE_TOP functions by their own time (ms a read under the profiler, which inflates
    small calls), with their calls a read and their cumulative time."""
    cases = [_case(i, geometry, resolution, whole, mode) for i in range(PROFILED)]
    profiler = cProfile.Profile()
    profiler.enable()
    for reader, frames in cases:
        for k in range(REPEATS):
            if mode == "cold":
                reader.forget()
            reader.read(frames[k % 2])
    profiler.disable()
    reads = PROFILED * REPEATS
    rows: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    top = sorted(rows.items(), key=lambda kv: -kv[1][2])[:PROFILE_TOP]
    root = str(Path(__file__).resolve().parent.parent) + "/"
    return [
        {
            "function": f"{path.replace(root, '')}:{line}({name})" if line else name,
            "calls_a_read": round(calls / reads, 1),
            "own_ms_a_read": round(own * 1e3 / reads, 2),
            "cumulative_ms_a_read": round(cumulative * 1e3 / reads, 2),
        }
        for (path, line, name), (_, calls, own, cumulative, _) in top
    ]


def measure(geometry: str, resolution: tuple[int, int], whole: Layout, mode: str) -> dict[str, Any]:
    totals: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    for i in range(FRAMES):
        reader, frames = _case(i, geometry, resolution, whole, mode)
        for k in range(REPEATS):
            frame = frames[k % 2]
            if mode == "cold":
                reader.forget()
            started, started_cpu = time.perf_counter(), time.process_time()
            reading = reader.read(frame)
            totals.append((time.perf_counter() - started) * 1e3)
            cpu.append((time.process_time() - started_cpu) * 1e3)
            for stage, ms in reading.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
    median = statistics.median(totals)
    return {
        "frames": FRAMES * REPEATS,
        "median_ms": round(median, 2),
        "p90_ms": round(sorted(totals)[int(0.9 * (len(totals) - 1))], 2),
        "cpu_median_ms": round(statistics.median(cpu), 2),
        "fps_median": round(1000 / median, 1),
        "stages_median_ms": {stage: round(statistics.median(v), 2) for stage, v in stages.items()},
    }


CAMERAS = ("halves 1920x1080", "halves 1280x720", "whole 1280x720", "whole 1920x1080")


def run() -> dict[str, Any]:
    """All four cameras, or those `VISION_SPEED_CAMERAS` names (comma-separated, e.g.
    "halves 1280x720"), with `VISION_SPEED_NOTE` (the machine's load, say) kept with the results."""
    cv2.setNumThreads(1)
    whole = Layout.load("grand-slam-7")
    chosen = os.environ.get("VISION_SPEED_CAMERAS")
    cameras = [c.strip() for c in chosen.split(",")] if chosen else list(CAMERAS)
    results: dict[str, Any] = {}
    for camera in cameras:
        geometry, size = camera.split()
        w, h = (int(v) for v in size.split("x"))
        for mode in MODES:
            results[f"{camera}, {mode}"] = measure(geometry, (w, h), whole, mode)
    if os.environ.get("VISION_SPEED_NOTE"):
        results["note"] = os.environ["VISION_SPEED_NOTE"]
    # the profile of the goal's camera (issue 35: a cold read, and one while a wager changes)
    profiles = {
        f"halves 1280x720, {mode}": profile("halves", (1280, 720), whole, mode)
        for mode in ("cold", "one wager changes")
    }
    return {
        "name": "vision_speed",
        "what": (
            "Reader.read of one rendered frame on one core (cv2.setNumThreads(1)), median wall time over 72 "
            "reads (and CPU time), with the per-stage split, for one half-table camera at 1920x1080 and "
            "1280x720 and the whole-table camera at 1280x720 and 1920x1080, each on "
            + "; ".join(f"{mode}: {what}" for mode, what in MODES.items())
            + " (lower is better)"
        ),
        "reference": (
            f"{BUDGET_MS:g} ms a frame (30 frames a second); "
            f"ratio = median of the half-table camera at 1280x720 while one wager changes / {BUDGET_MS:g} ms"
        ),
        "ratio": results["halves 1280x720, one wager changes"]["median_ms"] / BUDGET_MS,
        "results": results,
        "profile_top10": profiles,
    }
