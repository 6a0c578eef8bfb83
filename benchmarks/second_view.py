"""Would the two-camera mount's other camera catch what its own camera reads wrong?

Not a `make bench` entry: a measurement for choosing a mount (vision/README.md, Robustness,
"sloppy 2 mm"). For each seed the robustness benchmark's scene is read by its own camera
(its half's layout), and the same scene by the mount's other camera, moved as the own camera
was, over the whole layout. Per condition it counts, over the own camera's zones, the pair of
verdicts (right, WRONG, unsure, blocked; "unseen" when the other camera does not see the zone
wholly) and what a veto by the other camera would leave: a value the own camera reads stands
only if the other camera, where it sees the zone wholly and is not blocked, reads the same.

    python -m benchmarks.second_view FIRST N "clean,sloppy 2"

Use tuning seeds only (0-199); the published benchmarks use seeds from 100000 on.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter

from benchmarks.bench_vision_accuracy import HALF_MOUNTS, empty_table, view
from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader, ZoneReading
from vision.render import render
from vision.robustness import CONDITIONS
from vision.scene import Scene

NOT_IN_VIEW = "not wholly in the camera's view"


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


def main(argv: list[str]) -> None:
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
