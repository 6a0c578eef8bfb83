"""The readings identity harness: a fixed set of rendered frames on tuning seeds (below 100000),
read by the reader, every zone's full reading kept (state, value, each stack's chips bottom to
top, the reason when unsure or blocked), with what the reader read afresh and, per stack that
reached the not-square checks, its stages' evidence (floats as repr: exact).

Made for the speed work (issue 35, point 4): a faster reader must read every frame here exactly as
the reader before it did. Two sets:

  small  a few frames, golden file tests/vision/identity_golden.json (generated at main's head
         before the speed work; tests/vision/test_identity.py asserts the reader still gives it)
  big    many more frames (robustness conditions on more seeds, the speed benchmark's three
         ways of reading), written to a file and compared by hand while optimising
  all    the big set with every robustness condition (30) on its seeds

    python -m tests.vision.identity write big /tmp/identity-before.json
    python -m tests.vision.identity check big /tmp/identity-before.json   # exit 1 on a difference

Frames: the robustness benchmark's scene and condition for a seed (halves camera, 1920x1080,
calibrated on the empty table as the condition leaves it, read cold with the markers forgotten),
and the speed benchmark's scenes (no hands) at 1280x720, half and whole table, read as a
sequence by one reader: the frame, a second exposure (fresh noise: the still table), the frame
with one chip more on one stack (a wager changes), then forgotten and read cold.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_vision_accuracy import empty_table, view
from benchmarks.bench_vision_robustness import scenes_of
from benchmarks.bench_vision_speed import _with_one_chip_more
from vision.calibration import Calibration, CalibrationError
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.robustness import CONDITIONS

GOLDEN = Path(__file__).with_name("identity_golden.json")

ROBUST_SMALL = (
    (3, ("clean", "jpeg 75", "sloppy 1", "lean 0.2", "defocus 1.8", "jpeg 75 + sloppy 1 + lean 0.2")),
    (8, ("clean", "noise 14", "second light", "worn 20", "motion 9", "gamma 1.4")),
)
SEQUENCES_SMALL = ((5, "halves", (1280, 720)),)

_BIG_CONDITIONS = (
    "clean",
    "jpeg 75",
    "jpeg 60",
    "sloppy 1",
    "sloppy 2",
    "lean 0.2",
    "lean 0.4",
    "defocus 1.3",
    "defocus 1.8",
    "defocus 2.5",
    "motion 5",
    "motion 9",
    "noise 14",
    "second light",
    "worn 20",
    "maker 16",
    "spots 4x30 yellow",
    "gamma 0.7",
    "glare",
    "jpeg 75 + sloppy 1 + lean 0.2",
    "jpeg 70 + shadow + glare + warm",
    "defocus 1.3 + lean 0.4",
    "shift 1-2 px",
)
ROBUST_BIG = tuple((seed, _BIG_CONDITIONS) for seed in range(10, 22))
SEQUENCES_BIG = tuple((seed, geometry, (1280, 720)) for seed in range(30, 38) for geometry in ("halves", "whole"))

# every robustness condition (vision/robustness.py), on the big set's seeds
ROBUST_ALL = tuple((seed, tuple(CONDITIONS)) for seed in range(10, 22))

SETS = {
    "small": (ROBUST_SMALL, SEQUENCES_SMALL),
    "big": (ROBUST_BIG, SEQUENCES_BIG),
    "all": (ROBUST_ALL, SEQUENCES_BIG),
}


def _evidence(reader: Reader) -> dict[str, Any]:
    return {name: json.loads(json.dumps(e.to_dict(), default=repr)) for name, e in sorted(reader.evidence.items())}


def _kept(reader: Reader, reading: Any, evidence: bool) -> dict[str, Any]:
    out = reading.to_dict()
    out["afresh"] = dict(sorted(reader.afresh.items()))
    if evidence:
        out["evidence"] = json.loads(json.dumps(_evidence(reader), default=repr))
    return out


def robust_frames(seed: int, names: tuple[str, ...], evidence: bool) -> dict[str, Any]:
    """As bench_vision_robustness.one_seed reads them (each condition's frame, cold)."""
    whole = Layout.load("grand-slam-7")
    out: dict[str, Any] = {}
    readers: dict[str, Reader] = {}
    for name, scene, setup, layout_name in scenes_of(seed, list(names)):
        layout = Layout.load(layout_name)
        key = json.dumps(setup.to_dict(), sort_keys=True)
        reader = readers.get(key)
        if reader is None:
            try:
                calibration = Calibration.from_frame(render(setup, whole), layout, camera=setup.camera.model())
            except CalibrationError:
                clean = empty_table(view(seed, "halves", whole, (1920, 1080))[0])
                calibration = Calibration.from_frame(render(clean, whole), layout, camera=setup.camera.model())
            reader = readers[key] = Reader(layout, calibration)
        reader.forget(markers=True)
        out[f"robust {seed} {name}"] = _kept(reader, reader.read(render(scene, whole)), evidence)
    return out


def sequence_frames(seed: int, geometry: str, resolution: tuple[int, int], evidence: bool) -> dict[str, Any]:
    """As bench_vision_speed reads them: still, one wager changes, cold, by one reader."""
    whole = Layout.load("grand-slam-7")
    scene, layout = view(seed, geometry, whole, resolution)
    scene = dataclasses.replace(scene, hands=())
    calibration = Calibration.from_frame(render(empty_table(scene), whole), layout, camera=scene.camera.model())
    reader = Reader(layout, calibration)
    first = render(scene, whole)
    noise = np.random.default_rng(seed).normal(0.0, 2.0, first.shape)
    again = np.clip(first + noise, 0, 255).astype(np.uint8)
    raised = first
    if scene.zones.keys() & layout.zones.keys():
        raised = np.clip(_with_one_chip_more(scene, first, layout, calibration, whole) + noise, 0, 255).astype(np.uint8)
    out: dict[str, Any] = {}
    label = f"sequence {seed} {geometry} {resolution[0]}x{resolution[1]}"
    for step, frame in (("first", first), ("still", again), ("raised", raised), ("back", first)):
        out[f"{label} {step}"] = _kept(reader, reader.read(frame), evidence)
    reader.forget()
    out[f"{label} cold"] = _kept(reader, reader.read(raised), evidence)
    return out


def readings(which: str, evidence: bool = True) -> dict[str, Any]:
    robust, sequences = SETS[which]
    out: dict[str, Any] = {}
    for seed, names in robust:
        out.update(robust_frames(seed, names, evidence))
    for seed, geometry, resolution in sequences:
        out.update(sequence_frames(seed, geometry, resolution, evidence))
    return out


def differences(before: dict[str, Any], after: dict[str, Any], evidence: bool = True) -> list[str]:
    """Each frame whose reading (and, with `evidence`, stages' evidence) differs, said briefly."""
    out: list[str] = []
    for frame in sorted(before.keys() | after.keys()):
        a, b = before.get(frame), after.get(frame)
        if a is None or b is None:
            out.append(f"{frame}: only in {'after' if a is None else 'before'}")
            continue
        for key in sorted(a.keys() | b.keys()):
            if key == "evidence" and not evidence:
                continue
            if a.get(key) != b.get(key):
                if key in ("zones", "evidence"):
                    for zone in sorted(a.get(key, {}).keys() | b.get(key, {}).keys()):
                        if a.get(key, {}).get(zone) != b.get(key, {}).get(zone):
                            out.append(f"{frame}: {key} {zone}: {a[key].get(zone)} -> {b[key].get(zone)}")
                else:
                    out.append(f"{frame}: {key}: {a.get(key)} -> {b.get(key)}")
    return out


def main(argv: list[str]) -> int:
    action, which, path = argv
    got = readings(which)
    if action == "write":
        Path(path).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"{len(got)} frames, {sum(len(f['zones']) for f in got.values())} zone readings -> {path}")
        return 0
    before = json.loads(Path(path).read_text())
    readings_differ = differences(before, got, evidence=False)
    evidence_differs = differences(before, got, evidence=True)
    print(f"{len(got)} frames: {len(readings_differ)} reading differences, {len(evidence_differs)} with the evidence")
    for line in evidence_differs[:40]:
        print(" ", line)
    return 1 if readings_differ else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
