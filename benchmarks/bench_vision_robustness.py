"""Vision robustness: wrong values, exact values and doubts under what real cameras, chips and
dealers do to the frames (vision/robustness.py, the conditions), at the two-camera mount.

Each seed's scene is the accuracy benchmark's (benchmarks/bench_vision_accuracy.py: random
pose, light, stacks, the blind puck, hands in some scenes); each condition changes it through
the scene file's keys only, so every frame here is reproducible from a scene file
(`python -m benchmarks.bench_vision_robustness --scenes DIR SEED` writes them). The camera is
calibrated on the empty table as the condition leaves it at calibration (JPEG, focus, noise,
lens shading and the lights are there; motion, a changed tone curve, a nudge are not), then
the frame is read cold (nothing remembered from another frame); a condition whose empty table
cannot calibrate (markers lost in blur or noise) is calibrated on the clean empty table, and
counted. Per condition:

  exact      zone read "ok" with the scene's value, over zones in scenes without hands
  wrong      zone read "ok" with another value, over every zone (the goal: at most 0.1%)
  unsure     zone read "unsure", over every zone; blocked likewise
  occupancy  occupied/empty verdict wrong (unsure counts as occupied), over zones not blocked
  empty unsure, pucks misplaced, camera reported bumped

Seeds 0-199 may be used while tuning the reader; the benchmark uses seeds from 100000 on.
`VISION_ROBUST_SCENES` (default 48: about 2000 zones a condition), `VISION_ROBUST_FIRST`
(default 100000), `VISION_ROBUST_CONDITIONS` (comma-separated names), `VISION_WORKERS` (default 2) and
`VISION_ROBUST_NOTE` (kept with the results: the machine's load, say) change the run.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.bench_vision_accuracy import COUNTS, empty_table, score, view
from vision.calibration import Calibration, CalibrationError
from vision.layout import Layout
from vision.reader import Reader
from vision.render import draw, expose, render
from vision.robustness import CONDITIONS, lighting_only
from vision.scene import Scene

TUNING_SEEDS = range(0, 200)
BENCHMARK_FIRST_SEED = 100_000
GOAL_WRONG = 0.001


def scenes_of(seed: int, names: list[str]) -> list[tuple[str, Scene, Scene, str]]:
    """(condition, the scene, the empty table it is calibrated on, the layout read) per condition."""
    whole = Layout.load("grand-slam-7")
    scene, layout = view(seed, "halves", whole, (1920, 1080))
    empty = empty_table(scene)
    return [(name, CONDITIONS[name].apply(scene), CONDITIONS[name].calibration(empty), layout.name) for name in names]


def one_seed(seed: int, names: list[str]) -> dict[str, dict[str, Any]]:
    whole = Layout.load("grand-slam-7")
    layouts: dict[str, Layout] = {}
    readers: dict[str, Reader] = {}
    drawn = None
    out: dict[str, dict[str, Any]] = {}
    uncalibrated: set[str] = set()
    for name, scene, setup, layout_name in scenes_of(seed, names):
        layout = layouts.setdefault(layout_name, Layout.load(layout_name))
        key = json.dumps(setup.to_dict(), sort_keys=True)
        reader = readers.get(key)
        if reader is None:
            try:
                calibration = Calibration.from_frame(render(setup, whole), layout, camera=setup.camera.model())
            except CalibrationError:  # too blurred or noisy to calibrate: calibrated on a clean frame then
                clean = empty_table(view(seed, "halves", whole, (1920, 1080))[0])
                calibration = Calibration.from_frame(render(clean, whole), layout, camera=setup.camera.model())
                uncalibrated.add(name)
            reader = readers[key] = Reader(layout, calibration)
        if lighting_only(scene):
            drawn = drawn or draw(scene, whole)
            frame = expose(drawn, scene)
        else:
            frame = render(scene, whole)
        reader.forget(markers=True)
        out[name] = score(scene, layout, reader.read(frame))
        out[name]["calibrated_clean"] = name in uncalibrated
    return out


def _one(job: tuple[int, list[str]]) -> dict[str, dict[str, Any]]:
    return one_seed(*job)


def evaluate(seeds: range, names: list[str], workers: int) -> dict[str, Any]:
    jobs = [(seed, names) for seed in seeds]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            per_seed = list(pool.map(_one, jobs, chunksize=1))
    else:
        per_seed = [_one(job) for job in jobs]
    table: dict[str, Any] = {}
    for name in names:
        t = dict.fromkeys(COUNTS, 0)
        why: dict[str, int] = {}
        wrong: list[dict[str, Any]] = []
        for one in per_seed:
            for key, n in one[name]["counts"].items():
                t[key] += n
            for key, n in one[name]["why"].items():
                why[key] = why.get(key, 0) + n
            wrong += one[name]["wrong"]
        zones = max(t["zones"], 1)
        table[name] = {
            "what": CONDITIONS[name].what,
            "zones": t["zones"],
            "exact_no_hands": t["exact_without_hands"] / max(t["zones_without_hands"], 1),
            "exact_occupied_no_hands": t["exact_occupied_without_hands"] / max(t["occupied_without_hands"], 1),
            "wrong": t["wrong"] / zones,
            "wrong_zones": t["wrong"],
            "unsure": t["unsure"] / zones,
            "blocked": t["blocked"] / zones,
            "blocked_without_hands": t["blocked_without_hands"],
            "occupancy_errors": t["not_blocked"] - t["occupancy_right"],
            "empty_unsure": t["unsure"] - t["unsure_occupied"],
            "pucks_misplaced": t["pucks_misplaced"],
            "bumped": t["bumped_false_alarms"],
            "scenes_calibrated_on_a_clean_frame": sum(bool(one[name].get("calibrated_clean")) for one in per_seed),
            "unsure_reasons": dict(sorted(why.items(), key=lambda kv: -kv[1])),
            "wrong_examples": wrong[:8],
            "counts": t,
        }
    return {"seeds": f"{seeds.start}-{seeds.stop - 1}", "scenes": len(seeds), "conditions": table}


def run() -> dict[str, Any]:
    count = int(os.environ.get("VISION_ROBUST_SCENES", "48"))
    first = int(os.environ.get("VISION_ROBUST_FIRST", str(BENCHMARK_FIRST_SEED)))
    chosen = os.environ.get("VISION_ROBUST_CONDITIONS")
    names = [n.strip() for n in chosen.split(",")] if chosen else list(CONDITIONS)
    workers = int(os.environ.get("VISION_WORKERS", "2"))
    if first < TUNING_SEEDS.stop:
        print(f"note: seeds {first}+ include tuning seeds; the published table uses {BENCHMARK_FIRST_SEED}+")
    started = time.perf_counter()
    results = evaluate(range(first, first + count), names, workers)
    results["tuning_seeds"] = f"{TUNING_SEEDS.start}-{TUNING_SEEDS.stop - 1}"
    results["seconds"] = round(time.perf_counter() - started, 1)
    if os.environ.get("VISION_ROBUST_NOTE"):
        results["note"] = os.environ["VISION_ROBUST_NOTE"]
    worst = max(c["wrong"] for c in results["conditions"].values())
    results["worst_wrong"] = worst
    return {
        "name": "vision_robustness",
        "what": (
            f"reader on {count} rendered 1920x1080 scenes per condition ({len(names)} conditions: JPEG, defocus, "
            "motion blur, tone curve, other chips, worn chips, sloppy and leaning stacks, shadows, glare, a nudged "
            "camera), one camera of the two-camera mount: exact, wrong, unsure, blocked, occupancy errors"
        ),
        "reference": "issue 19: wrong values at most 0.1% under every condition; ratio = worst wrong rate / 0.001",
        "ratio": worst / GOAL_WRONG,
        "results": results,
    }


def write_scenes(directory: Path, seed: int) -> list[Path]:
    """Every condition's scene of `seed` and its calibration scene, as scene files."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, scene, setup, _ in scenes_of(seed, list(CONDITIONS)):
        slug = name.replace(" ", "_").replace("+", "and").replace(".", "_")
        for kind, s in (("scene", scene), ("calibration", setup)):
            path = directory / f"{seed}_{slug}_{kind}.json"
            s.save(path)
            paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--scenes":
        for p in write_scenes(Path(sys.argv[2]), int(sys.argv[3])):
            print(p)
    else:
        first_seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
        n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
        picked = sys.argv[3].split(",") if len(sys.argv) > 3 else list(CONDITIONS)
        res = evaluate(range(first_seed, first_seed + n), picked, int(os.environ.get("VISION_WORKERS", "2")))
        for cname, c in res["conditions"].items():
            print(
                f"{cname:34s} exact {c['exact_no_hands']:6.1%} occ {c['exact_occupied_no_hands']:6.1%} "
                f"wrong {c['wrong_zones']:3d} {c['wrong']:6.2%} unsure {c['unsure']:5.1%} "
                f"blocked {c['blocked']:5.1%} occ-err {c['occupancy_errors']:3d} empty-unsure {c['empty_unsure']:3d} "
                f"pucks-x {c['pucks_misplaced']} bumped {c['bumped']}  {list(c['unsure_reasons'].items())[:3]}"
            )
            for w in c["wrong_examples"][:3]:
                print("      ", w)
