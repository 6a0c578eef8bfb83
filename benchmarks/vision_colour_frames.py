"""Vision under JPEG, for tuning: does the colour stage's verdict on one still stack vary from frame
to frame (fresh sensor noise and a fresh JPEG each), or is it fixed per stack, as the count's error
is (issue 36, fifth round: 0.172 chip between stacks, 0.019 within)? And would the stack's colour
samples averaged over its frames, named once, be sure where single frames are not?

Each scene (one camera of the two-camera mount, 1920x1080, no hands) is read cold on `FRAMES`
exposures with every count let through the height stage; every stack named with its true count is
recorded a frame: the weakest chip's margin over the margin asked, `check_colours`' verdict, and
whether the chips were named right. Then the same stack's colour samples (`stages.colour_samples`)
averaged over its frames are named once (`stages.name_sampled`, the last frame's blur and
conditions) and checked with the same margins. **Tuning seeds only** (refuses seeds from 100000).
Not a `make bench` entry: a measurement for issue 36's tenth round (vision/HISTORY.md).

    python -m benchmarks.vision_colour_frames FIRST COUNT "jpeg 75,jpeg 75 + noise 6 + vignette" [FRAMES]
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import Counter, defaultdict
from typing import Any

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import calibrated
from benchmarks.vision_wager_doubts import colours_spied, tuning_only, tuning_table
from vision.reader import Reader
from vision.render import draw, exposures
from vision.robustness import CONDITIONS
from vision.stages import check_colours, colour_samples, name_colours, name_sampled
from vision.tuning import TUNING

FRAMES = 10


def stacks(seed: int, name: str, frames: int = FRAMES) -> list[dict[str, Any]]:
    """One row a stack named with its true count on some frame (see the module's docstring)."""
    whole, base, layout, empty = tuning_table(seed)
    condition = CONDITIONS[name]
    scene = condition.apply(base)
    reader = Reader(
        layout,
        calibrated(condition.calibration(empty), empty, whole, layout),
        tuning=dataclasses.replace(TUNING, jpeg_count_doubt=0.499, max_count_doubt=0.499),
    )
    truth = {z: list(s[0].chips) for z, s in scene.zones.items() if len(s) == 1}
    seen: dict[str, list[dict[str, Any]]] = defaultdict(list)
    current: list[str] = [""]  # the zone being read afresh

    def spy(centre: Any, n: int, blur: Any, v: Any, cond: Any, chips: Any, felt: Any, t: Any, side: Any = None) -> Any:
        got = name_colours(centre, n, blur, v, cond, chips, felt, t, side)
        zone = current[0]
        if zone in truth and n == len(truth[zone]):
            px, sampled = colour_samples(centre, n, v, t, side)
            seen[zone].append(
                {
                    "ratio": got.margin / got.wanted,
                    "doubt": check_colours(got, cond, t),
                    "right": list(got.chips) == truth[zone],
                    "sampled": np.array(sampled, dtype=np.float64),
                    "args": (px, n, blur, cond, chips, felt, t),
                }
            )
        return got

    with colours_spied(spy, current):
        rng = np.random.default_rng([seed, 36])
        stream = exposures(draw(scene, whole), scene, rng)
        for _ in range(frames):
            reader.forget()
            reader.read(next(stream))
    out = []
    for z, rows in seen.items():
        px, n, blur, cond, chips, felt, t = rows[-1]["args"]
        averaged = name_sampled(px, np.mean([r["sampled"] for r in rows], axis=0), n, blur, cond, chips, felt, t)
        middle = name_sampled(px, np.median([r["sampled"] for r in rows], axis=0), n, blur, cond, chips, felt, t)
        out.append(
            {
                "seed": seed,
                "zone": z,
                "n": n,
                "frames": len(rows),
                "ratios": [r["ratio"] for r in rows],
                "doubts": [r["doubt"] for r in rows],
                "right": [r["right"] for r in rows],
                "mean_ratio": averaged.margin / averaged.wanted,
                "mean_doubt": check_colours(averaged, cond, t),
                "mean_right": list(averaged.chips) == truth[z],
                "median_doubt": check_colours(middle, cond, t),
                "median_right": list(middle.chips) == truth[z],
            }
        )
    return out


def _kind(doubt: str | None) -> str:
    if doubt is None:
        return "sure"
    return "margin" if "more than one colour" in doubt else "other"


def summary(rows: list[dict[str, Any]]) -> str:
    logs = [np.log(np.maximum(r["ratios"], 0.05)) for r in rows if len(r["ratios"]) >= 2]
    between = float(np.std([x.mean() for x in logs]))
    within = math.sqrt(float(np.mean([x.var(ddof=1) for x in logs])))
    pattern: Counter[str] = Counter()
    for r in rows:
        sure = sum(1 for d in r["doubts"] if d is None)
        pattern["always sure" if sure == len(r["doubts"]) else "never sure" if sure == 0 else "sometimes sure"] += 1
    wrong_sure = sum(1 for r in rows for d, ok in zip(r["doubts"], r["right"], strict=True) if d is None and not ok)
    frames = sum(len(r["doubts"]) for r in rows)
    per_frame: Counter[str] = Counter(_kind(d) for r in rows for d in r["doubts"])
    averaged: Counter[str] = Counter(_kind(r["mean_doubt"]) for r in rows)
    mean_wrong = sum(1 for r in rows if r["mean_doubt"] is None and not r["mean_right"])
    gained = sum(
        1 for r in rows if r["mean_doubt"] is None and r["mean_right"] and all(d is not None for d in r["doubts"])
    )
    lost = sum(1 for r in rows if r["mean_doubt"] is not None and any(d is None for d in r["doubts"]))
    medians: Counter[str] = Counter(_kind(r["median_doubt"]) for r in rows)
    median_wrong = sum(1 for r in rows if r["median_doubt"] is None and not r["median_right"])
    quarter = sum(
        1
        for r in rows
        if (k := sum(1 for d, ok in zip(r["doubts"], r["right"], strict=True) if d is None and ok)) >= 2
        and k >= 0.25 * len(r["doubts"])
    )
    lift = float(
        np.median(
            [
                math.log(max(r["mean_ratio"], 0.05)) - float(np.median(np.log(np.maximum(r["ratios"], 0.05))))
                for r in rows
            ]
        )
    )
    ever = sum(1 for r in rows if any(d is None and ok for d, ok in zip(r["doubts"], r["right"], strict=True)))
    return (
        f"{len(rows)} stacks, {frames} frames; "
        f"log(margin / asked) sd between stacks {between:.3f}, within {within:.3f}; "
        f"stacks {dict(pattern)}; frames {dict(per_frame)}, sure and wrong {wrong_sure}; "
        f"averaged samples named once: {dict(averaged)}, sure and wrong {mean_wrong}; "
        f"the samples' median named once: {dict(medians)}, sure and wrong {median_wrong}; "
        f"sure on some frame and right: {ever}, on 2 frames and a quarter of them {quarter}; "
        f"log(averaged's margin / asked) less the frames' median, median {lift:+.3f}; "
        f"averaged gains {gained} never sure on a frame, loses {lost}"
    )


if __name__ == "__main__":
    cv2.setNumThreads(1)
    first, count = int(sys.argv[1]), int(sys.argv[2])
    names = sys.argv[3].split(",") if len(sys.argv) > 3 else ["jpeg 75"]
    k = int(sys.argv[4]) if len(sys.argv) > 4 else FRAMES
    for cname in names:
        got: list[dict[str, Any]] = []
        for s in tuning_only(range(first, first + count)):
            got += stacks(s, cname, k)
        print(f"== {cname}: {summary(got)}", flush=True)
