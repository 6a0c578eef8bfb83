"""Vision speed: one frame read on one core, stage by stage, at four camera geometries.

  halves 1920x1080   one of the two cameras over half the table (the geometry the counting
                     needs, vision/README.md), 48 or 36 chip zones a frame
  halves 1280x720    the same camera at the issue's 1280x720
  whole 1280x720     one camera over the whole 7-seat layout (the issue's speed goal), 84 zones
  whole 1920x1080    the same at 1080p

Frames are rendered scenes (seeds 200000 on: stacks in about a third of the zones, the blind
puck, no hands, so every occupied zone goes through the whole stack reading). Each frame gets a
second exposure (fresh sensor noise, 2 levels) and the reads alternate between the two, as
consecutive frames of a still table would: the markers and pucks are then compared with how
they looked, never a frame with itself. The reader is built
once per calibration (not timed); `read` is timed with cv2.setNumThreads(1). Stages: markers
(the bumped-camera check), pucks, zone crops (one remap of every zone's patch of felt), chips
(felt colour, what stands in each zone, stacks, denominations).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Any

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import empty_table, view
from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render

FRAMES = 12
REPEATS = 6
BUDGET_MS = 33.0  # 30 frames a second


def measure(geometry: str, resolution: tuple[int, int], whole: Layout) -> dict[str, Any]:
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    for i in range(FRAMES):
        scene, layout = view(200_000 + i, geometry, whole, resolution)
        scene = dataclasses.replace(scene, hands=())
        calibration = Calibration.from_frame(render(empty_table(scene), whole), layout, camera=scene.camera.model())
        reader = Reader(layout, calibration)
        first = render(scene, whole)
        noise = np.random.default_rng(i).normal(0.0, 2.0, first.shape)
        frames = (first, np.clip(first + noise, 0, 255).astype(np.uint8))
        reader.read(frames[1])  # warm-up
        for k in range(REPEATS):
            frame = frames[k % 2]
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
    whole = Layout.load("grand-slam-7")
    results = {
        f"{geometry} {w}x{h}": measure(geometry, (w, h), whole)
        for geometry, (w, h) in (
            ("halves", (1920, 1080)),
            ("halves", (1280, 720)),
            ("whole", (1280, 720)),
            ("whole", (1920, 1080)),
        )
    }
    return {
        "name": "vision_speed",
        "what": (
            "Reader.read of one rendered frame on one core (cv2.setNumThreads(1)), median over 72 reads, "
            "with the per-stage split, for one half-table camera at 1920x1080 and 1280x720 and the "
            "whole-table camera at 1280x720 and 1920x1080 (lower is better)"
        ),
        "reference": (
            f"{BUDGET_MS:g} ms a frame (30 frames a second); "
            f"ratio = median of the half-table camera at 1920x1080 / {BUDGET_MS:g} ms"
        ),
        "ratio": results["halves 1920x1080"]["median_ms"] / BUDGET_MS,
        "results": results,
    }
