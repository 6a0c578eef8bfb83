"""Would the two-camera mount's other camera catch what its own camera reads wrong?

Not a `make bench` entry: a measurement for choosing a mount (vision/README.md, Robustness,
"sloppy 2 mm"). For each seed the robustness benchmark's scene is read by its own camera
(its half's layout), and the same scene by the mount's other camera, moved as the own camera
was, over the whole layout. Per condition it counts, over the own camera's zones, the pair of
verdicts (right, WRONG, unsure, blocked; "unseen" when the other camera does not see the zone
wholly) and what a veto by the other camera would leave: a value the own camera reads stands
only if the other camera, where it sees the zone wholly and is not blocked, reads the same.

    python -m benchmarks.second_view FIRST N "clean,sloppy 2"

`across` (issue 36, the camera arrangement): a camera across the table from the dealer's, over the
players' side, the dealer's camera mirrored across the table's middle (so it stands 80-95 degrees
from the dealer's as seen from a zone of its half) and reading the same half's layout. Each scene
is filmed by both for 30 frames as `bench_vision_wagers.one_seed` films it (fresh noise and JPEG a
frame), each camera's frames fused by its own `WagerFusion`, and the two fused views joined by
`vision.fusion.combine` (two sure values that differ are "unsure", never one picked). Per wager:
known within the 30 frames by the dealer's camera alone, the across camera alone, and the two
combined; wrong, over every zone.

    python -m benchmarks.second_view across FIRST N "sloppy 1,lean 0.2" [1920x1080]

Use tuning seeds only (0-199); the published benchmarks use seeds from 100000 on.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import Counter
from typing import Any

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import HALF_MOUNTS, empty_table, view
from vision.calibration import Calibration, CalibrationError
from vision.fusion import FusedZone, WagerFusion, combine
from vision.layout import Layout
from vision.reader import Reader, ZoneReading
from vision.render import draw, exposures, render
from vision.robustness import CONDITIONS
from vision.scene import Scene

NOT_IN_VIEW = "not wholly in the camera's view"
FRAMES = 30  # a second at 30 frames a second, as bench_vision_wagers


def verdict(seen: ZoneReading | None, truth: int) -> str:
    if seen is None or (seen.state == "unsure" and NOT_IN_VIEW in seen.why):
        return "unseen"
    if seen.state != "ok":
        return seen.state
    return "right" if seen.value == truth else "WRONG"


def other_view(scene: Scene, own: str) -> Scene:
    """The scene seen by the mount's other camera, off its place as the own camera is off its."""
    other = next(name for name in HALF_MOUNTS if name != own)
    cam, home, there = scene.camera, HALF_MOUNTS[own], HALF_MOUNTS[other]
    x, y, z = (p + q - h for p, q, h in zip(there.position, cam.position, home.position, strict=True))
    lx, ly, lz = (p + q - h for p, q, h in zip(there.look_at, cam.look_at, home.look_at, strict=True))
    position, look_at = (x, y, z), (lx, ly, lz)
    return dataclasses.replace(scene, camera=dataclasses.replace(cam, position=position, look_at=look_at))


def read(scene: Scene, layout: Layout, whole: Layout, condition: str) -> dict[str, ZoneReading]:
    changed = CONDITIONS[condition]
    calibration = Calibration.from_frame(
        render(changed.calibration(empty_table(scene)), whole), layout, camera=scene.camera.model()
    )
    return Reader(layout, calibration).read(render(changed.apply(scene), whole)).zones


def tally(first: int, n: int, conditions: list[str]) -> dict[str, Counter[str]]:
    whole = Layout.load("grand-slam-7")
    out: dict[str, Counter[str]] = {c: Counter() for c in conditions}
    for seed in range(first, first + n):
        scene, layout = view(seed, "halves", whole, (1920, 1080))
        second = other_view(scene, layout.name)
        for condition in conditions:
            own, other = read(scene, layout, whole, condition), read(second, whole, whole, condition)
            for zone in layout.zones:
                if zone not in own:  # a puck's place
                    continue
                truth = scene.value_of(zone)
                a, b = verdict(own[zone], truth), verdict(other.get(zone), truth)
                sees = b not in ("unseen", "blocked")
                vetoed = a in ("right", "WRONG") and sees and other[zone].value != own[zone].value
                kind = "occupied" if truth else "empty"
                out[condition][f"own {a}, other {b} ({kind})"] += 1
                out[condition][f"= own alone: {a} ({kind})"] += 1
                out[condition][f"= with the veto: {'unsure' if vetoed else a} ({kind})"] += 1
    return out


def across_view(scene: Scene, layout: Layout) -> Scene:
    """The scene seen by a camera across the table: the own camera mirrored across the table's
    middle (y = depth / 2), its deviations from the mount mirrored with it."""
    depth = layout.depth_mm
    cam = scene.camera
    x, y, z = cam.position
    lx, ly, lz = cam.look_at
    return dataclasses.replace(
        scene, camera=dataclasses.replace(cam, position=(x, depth - y, z), look_at=(lx, depth - ly, lz))
    )


def angle_between(scene: Scene, zone: tuple[float, float]) -> float:
    """Degrees between the lines of sight of the own camera and the across one, seen from `zone`."""
    x, y = zone
    a = np.subtract(scene.camera.position, (x, y, 0.0))
    b = np.subtract(across_view(scene, Layout.load("grand-slam-7")).camera.position, (x, y, 0.0))
    return math.degrees(math.acos(float(a @ b) / float(np.linalg.norm(a) * np.linalg.norm(b))))


def _film(
    scene: Scene, empty: Scene, layout: Layout, whole: Layout, name: str, seed: int
) -> list[dict[str, FusedZone]]:
    """The camera's 30 frames after the wagers went down (and the empty felt before them), each
    frame's fused zones."""
    condition = CONDITIONS[name]
    changed, setup = condition.apply(scene), condition.calibration(empty)
    try:
        calibration = Calibration.from_frame(render(setup, whole), layout, camera=setup.camera.model())
    except CalibrationError:
        calibration = Calibration.from_frame(render(empty, whole), layout, camera=empty.camera.model())
    reader, fusion = Reader(layout, calibration), WagerFusion()
    rng = np.random.default_rng([seed, 36])
    before = condition.apply(empty)
    frames = [next(exposures(draw(empty, whole), before, rng))]
    stream = exposures(draw(changed, whole), changed, rng)
    frames += [next(stream) for _ in range(FRAMES)]
    return [fusion.update(reader, reader.read(frame)) for frame in frames][1:]


def across(seed: int, names: list[str], size: tuple[int, int] = (1920, 1080)) -> dict[str, dict[str, Any]]:
    """Per condition, the wagers of scene `seed` known within 30 frames by the dealer's camera,
    the across camera and both combined, and the wrong values (see the module's docstring)."""
    whole = Layout.load("grand-slam-7")
    base, layout = view(seed, "halves", whole, size)
    base = dataclasses.replace(base, hands=())
    other = across_view(base, whole)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        own = _film(base, empty_table(base), layout, whole, name, seed)
        seen = _film(other, empty_table(other), layout, whole, name, seed)
        truth = {zone: base.value_of(zone) for zone in own[0]}
        ways = {
            "dealer": [{z: f for z, f in frames.items() if z in truth} for frames in own],
            "across": [{z: f for z, f in frames.items() if z in truth} for frames in seen],
        }
        ways["both"] = [
            combine({"dealer": a, "across": b}) for a, b in zip(ways["dealer"], ways["across"], strict=True)
        ]
        row: dict[str, Any] = {"wagers": sum(1 for v in truth.values() if v), "zones": len(truth)}
        for way, frames in ways.items():
            known: set[str] = set()
            wrong: dict[str, int | None] = {}
            for fused in frames:
                for zone, z in fused.items():
                    if z.state == "ok":
                        if z.value == truth[zone]:
                            known.add(zone)
                        else:
                            wrong.setdefault(zone, z.value)
            row[way] = sum(1 for zone, v in truth.items() if v and zone in known and zone not in wrong)
            row[f"{way} wrong"] = [{"seed": seed, "zone": z, "read": v, "truth": truth[z]} for z, v in wrong.items()]
        out[name] = row
    return out


def main_across(argv: list[str]) -> None:
    first, n = int(argv[0]), int(argv[1])
    names = argv[2].split(",") if len(argv) > 2 else ["sloppy 1", "lean 0.2"]
    w, h = (int(v) for v in (argv[3] if len(argv) > 3 else "1920x1080").split("x"))
    if first + n > 200:
        raise SystemExit("second_view: tuning seeds only (0-199)")
    cv2.setNumThreads(1)
    total: dict[str, Counter[str]] = {name: Counter() for name in names}
    for seed in range(first, first + n):
        for name, row in across(seed, names, (w, h)).items():
            print(seed, name, row, flush=True)
            for key, value in row.items():
                total[name][key] += len(value) if isinstance(value, list) else value
    for name, t in total.items():
        print(
            f"== {name}: {t['wagers']} wagers, {t['zones']} zones; known within {FRAMES} frames: "
            + ", ".join(
                f"{way} {t[way]} ({t[way] / max(t['wagers'], 1):.1%}), wrong {t[f'{way} wrong']}"
                for way in ("dealer", "across", "both")
            )
        )


def main(argv: list[str]) -> None:
    if argv and argv[0] == "across":
        main_across(argv[1:])
        return
    first, n = int(argv[0]), int(argv[1])
    conditions = argv[2].split(",") if len(argv) > 2 else ["clean", "sloppy 2"]
    if first + n > 200:
        raise SystemExit("second_view: tuning seeds only (0-199)")
    for condition, counts in tally(first, n, conditions).items():
        print(f"== {condition}")
        for key, value in sorted(counts.items()):
            print(f"  {key:50s} {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
