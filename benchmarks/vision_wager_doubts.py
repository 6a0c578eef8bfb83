"""Vision per wager, for tuning: every reading of every wager, and why its fused value is what it is.

`bench_vision_wagers.one_seed` films each scene for 30 frames and fuses them; this records, for
each wager (occupied zone), every reading the reader made of it afresh (frame, state, value, why,
and the evidence of its stacks) and the fused outcome (first frame known, or the wrong value and
the frame it was fused on). For looking into wrong values and the stages that stop wagers, on
**tuning seeds only**: it refuses seeds from 100000 (the held-out seeds the published figures
are measured on).

    python -m benchmarks.vision_wager_doubts FIRST COUNT "jpeg 75,jpeg 75 + noise 6 + vignette" OUT.json [SHARE]
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import vision.reader as reader_module
from benchmarks.bench_vision_accuracy import calibrated, empty_table, view
from benchmarks.bench_vision_wagers import BENCHMARK_FIRST_SEED, FRAMES, _truth
from vision.fusion import SHARE, WagerFusion
from vision.layout import Layout
from vision.reader import Reader
from vision.render import Drawn, draw, exposures
from vision.robustness import CONDITIONS, lighting_only


@contextlib.contextmanager
def colours_spied(spy: Callable[..., Any], current: list[str]) -> Iterator[None]:
    """While it runs, the reader names a stack's colours through `spy` (called as `stages.name_colours`
    is), and `current[0]` is the zone it is reading afresh; both put back after (a tuning script's
    spy, never a test's)."""
    real_names, real_zone = vars(reader_module)["name_colours"], reader_module.Reader._zone

    def zone(self: Reader, g: Any, *args: Any) -> Any:
        current[0] = g.zone.name
        return real_zone(self, g, *args)

    setattr(reader_module, "name_colours", spy)  # noqa: B010
    setattr(reader_module.Reader, "_zone", zone)  # noqa: B010
    try:
        yield
    finally:
        setattr(reader_module, "name_colours", real_names)  # noqa: B010
        setattr(reader_module.Reader, "_zone", real_zone)  # noqa: B010


def tuning_only(seeds: range) -> range:
    """`seeds` if every one is a tuning seed, else ValueError: the held-out seeds are never looked at."""
    if seeds.stop > BENCHMARK_FIRST_SEED:
        raise ValueError(f"seeds {seeds.start}-{seeds.stop - 1}: tuning seeds are below {BENCHMARK_FIRST_SEED}")
    return seeds


def tuning_table(seed: int) -> tuple[Layout, Any, Layout, Any]:
    """Scene `seed` as the tuning measurements take it (a tuning seed: ValueError for a held-out
    one): the whole layout, the dealer camera's half-table view at 1920x1080 with no hand over the
    felt, that view's layout, and the same felt empty."""
    tuning_only(range(seed, seed + 1))
    whole = Layout.load("grand-slam-7")
    base, layout = view(seed, "halves", whole, (1920, 1080))
    base = dataclasses.replace(base, hands=())
    return whole, base, layout, empty_table(base)


def record(seed: int, names: list[str], fusion_factory: Any = WagerFusion) -> dict[str, list[dict[str, Any]]]:
    """Per condition, one record a wager of the scene `seed` (see the module's docstring)."""
    whole, base, layout, empty = tuning_table(seed)
    drawn: dict[str, Drawn] = {}
    out: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        condition = CONDITIONS[name]
        scene, setup = condition.apply(base), condition.calibration(empty)
        calibration = calibrated(setup, empty, whole, layout)
        reader, fusion = Reader(layout, calibration), fusion_factory()
        rng = np.random.default_rng([seed, 36])
        felt = drawn.setdefault("empty", draw(empty, whole))
        placed = drawn.setdefault("scene", draw(base, whole)) if lighting_only(scene) else draw(scene, whole)
        frames = [next(exposures(felt, condition.apply(empty), rng))]
        stream = exposures(placed, scene, rng)
        frames += [next(stream) for _ in range(FRAMES)]
        truth = _truth(scene, [g.zone.name for g in reader.zones])
        chips = {n: [list(s.chips) for s in scene.zones.get(n, ())] for n in truth}
        reads: dict[str, list[dict[str, Any]]] = {n: [] for n in truth}
        known: dict[str, int] = {}
        wrong: dict[str, tuple[int, int, int]] = {}
        for k, frame in enumerate(frames):
            reading = reader.read(frame)
            fused = fusion.update(reader, reading)
            if k == 0:
                continue
            for zone in reader.afresh:
                if zone not in truth:
                    continue
                z = reading.zones[zone]
                reads[zone].append(
                    {
                        "k": k,
                        "state": z.state,
                        "value": z.value,
                        "why": z.why,
                        "chips": [list(s.chips) for s in z.stacks] if z.state == "ok" else None,
                    }
                )
            for zone, f in fused.items():
                if f.state != "ok" or zone not in truth:
                    continue
                if f.value == truth[zone]:
                    known.setdefault(zone, k)
                else:
                    wrong.setdefault(zone, (int(f.value or 0), k, f.frames))
        out[name] = [
            {
                "seed": seed,
                "zone": n,
                "truth": truth[n],
                "chips": chips[n],
                "known_at": known.get(n),
                "wrong": wrong.get(n),
                "reads": reads[n],
            }
            for n in truth
            if truth[n] or n in wrong
        ]
    return out


if __name__ == "__main__":
    first, count = int(sys.argv[1]), int(sys.argv[2])
    picked = [n.strip() for n in sys.argv[3].split(",")]
    target = sys.argv[4]
    share = float(sys.argv[5]) if len(sys.argv) > 5 else SHARE  # the share a value needs (vision/fusion.py)
    seeds = tuning_only(range(first, first + count))
    everything: dict[str, list[dict[str, Any]]] = {n: [] for n in picked}
    for s in seeds:
        for cname, recs in record(s, picked, lambda: WagerFusion(share=share)).items():
            everything[cname] += recs
        print(f"seed {s} done", file=sys.stderr, flush=True)
        with open(target, "w") as fh:
            json.dump(everything, fh)
