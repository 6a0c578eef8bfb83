"""Vision under JPEG, for tuning: each stack's count before rounding (`Height.chips_f`) against its
true count, with where its far edge falls in the frame (JPEG's 2 x 2 colour cells and 8 x 8
blocks) and its top's colour against the felt. **Tuning seeds only** (refuses seeds from 100000).

    python -m benchmarks.bench_vision_jpeg_counts FIRST COUNT "jpeg 75" OUT.json [EXPOSURES]
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import numpy as np

import vision.reader as reader_module
from benchmarks.bench_vision_accuracy import empty_table, view
from benchmarks.bench_vision_wager_doubts import tuning_only
from vision.calibration import Calibration, CalibrationError
from vision.layout import Layout
from vision.reader import Reader
from vision.render import draw, exposures, render
from vision.robustness import CONDITIONS
from vision.stages import Height, R, measure_height, top_chroma
from vision.tuning import TUNING


def heights(seed: int, name: str, exposures_per_scene: int = 1) -> list[dict[str, Any]]:
    tuning_only(range(seed, seed + 1))
    whole = Layout.load("grand-slam-7")
    base, layout = view(seed, "halves", whole, (1920, 1080))
    base = dataclasses.replace(base, hands=())
    empty = empty_table(base)
    condition = CONDITIONS[name]
    scene, setup = condition.apply(base), condition.calibration(empty)
    try:
        calibration = Calibration.from_frame(render(setup, whole), layout, camera=setup.camera.model())
    except CalibrationError:
        calibration = Calibration.from_frame(render(empty, whole), layout, camera=empty.camera.model())
    loose = dataclasses.replace(TUNING, jpeg_count_doubt=0.5, max_count_doubt=0.5)
    reader = Reader(layout, calibration, tuning=loose)
    truth = {n: [list(s.chips) for s in stacks] for n, stacks in scene.zones.items()}
    offsets = {n: np.asarray(stacks[0].offset, dtype=np.float64) for n, stacks in scene.zones.items() if stacks}
    out: list[dict[str, Any]] = []

    def spy(
        blob: Any, score: Any, g: Any, eye: float, most: int, cond: Any, t: Any, v: Any = None, felt: Any = None
    ) -> Any:
        got = measure_height(blob, score, g, eye, most, cond, t, v, felt)
        chips = truth.get(g.zone.name)
        if isinstance(got, Height) and chips and len(chips) == 1 and v is not None and felt is not None:
            centre = g.to_table(got.u0, got.v0)
            far = np.array([[*(centre + R * g.away), got.height_mm]])
            px = v.project(far)[0]
            cb, cr = top_chroma(centre, got.height_mm, g, v, felt)
            out.append(
                {
                    "seed": seed,
                    "zone": g.zone.name,
                    "n": len(chips[0]),
                    "top": chips[0][-1],
                    "chips_f": got.chips_f,
                    "x": float(px[0]),
                    "y": float(px[1]),
                    "cb": cb,
                    "cr": cr,
                    "px_per_mm": g.px_per_mm,
                    "grown": got.grown,
                    "base_v": float(got.v0 - np.dot(offsets[g.zone.name], g.away)),
                    "base_u": float(got.u0 - np.dot(offsets[g.zone.name], g.across)),
                }
            )
        return got

    setattr(reader_module, "measure_height", spy)  # noqa: B010 (a tuning script's spy, never a test's)
    rng = np.random.default_rng([seed, 37])
    stream = exposures(draw(scene, whole), scene, rng)
    for _ in range(exposures_per_scene):
        reader.forget()
        reader.read(next(stream))
    setattr(reader_module, "measure_height", measure_height)  # noqa: B010
    return out


if __name__ == "__main__":
    first, count, cname, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    k = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    rows: list[dict[str, Any]] = []
    for s in tuning_only(range(first, first + count)):
        rows += heights(s, cname, k)
        with open(target, "w") as fh:
            json.dump(rows, fh)
