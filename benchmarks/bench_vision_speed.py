"""Vision speed: one frame read on one core, at 1280x720 and 1920x1080, stage by stage.

Frames are rendered scenes (seeds 200000 on: stacks in about a third of the zones, the blind
puck, no hands, so every occupied zone goes through the whole stack reading). The reader is
built once per calibration (not timed: it happens once per calibration); `read` is timed over
every frame several times with cv2.setNumThreads(1). Stages: markers (calibration markers found
in their windows and the bumped-camera check), pucks, zone crops (one remap of every zone's
patch of felt), chips (felt colour, what stands in each zone, stacks, denominations).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any

import cv2

from benchmarks.bench_vision_accuracy import empty_table, random_scene
from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render

FRAMES = 12
REPEATS = 5
BUDGET_MS = 33.0  # 30 frames a second


def measure(resolution: tuple[int, int], layout: Layout) -> dict[str, Any]:
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for i in range(FRAMES):
        scene = random_scene(200_000 + i, layout, resolution)
        scene = dataclasses.replace(scene, hands=())
        calibration = Calibration.from_frame(render(empty_table(scene), layout), layout, camera=scene.camera.model())
        reader = Reader(layout, calibration)
        frame = render(scene, layout)
        reader.read(frame)  # warm-up
        for _ in range(REPEATS):
            started = time.perf_counter()
            reading = reader.read(frame)
            totals.append((time.perf_counter() - started) * 1e3)
            for stage, ms in reading.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
    median = statistics.median(totals)
    return {
        "frames": FRAMES * REPEATS,
        "median_ms": round(median, 2),
        "p90_ms": round(sorted(totals)[int(0.9 * (len(totals) - 1))], 2),
        "fps_median": round(1000 / median, 1),
        "stages_median_ms": {stage: round(statistics.median(v), 2) for stage, v in stages.items()},
    }


def run() -> dict[str, Any]:
    cv2.setNumThreads(1)
    layout = Layout.load("grand-slam-7")
    results = {f"{w}x{h}": measure((w, h), layout) for w, h in ((1280, 720), (1920, 1080))}
    return {
        "name": "vision_speed",
        "what": (
            "Reader.read of one rendered frame of the 7-seat layout on one core (cv2.setNumThreads(1)), "
            "median over 60 reads, with the per-stage split (lower is better)"
        ),
        "reference": f"{BUDGET_MS:g} ms a frame (30 frames a second); ratio = median at 1280x720 / {BUDGET_MS:g} ms",
        "ratio": results["1280x720"]["median_ms"] / BUDGET_MS,
        "results": results,
    }
