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

`joined` (issue 36, ninth round): the same, and both cameras filmed together as the two-view reader
reads them (`vision.join.TwoViews`: each frame of both read, the two views' counts joined, each
fused, the two combined); "joined lenient" is the same frames combined as if a camera that saw the
wager and never read a value let the other's stand (not the rule: what the ninth round's rule
cost), and "joined, ninth round" as that round's rule combined them (such a camera always kept
the zone unsure; issue 36's tenth round lets it confirm the other's chips on positive evidence).

    python -m benchmarks.second_view joined FIRST N "clean,sloppy 1,lean 0.2,sloppy 2,lean 0.4"

`across` and `joined` also take "jpeg N" for any quality N outside the robustness suite, "jpeg N
4:2:2" and "jpeg N 4:4:4" (the colour halved across only, or kept whole): a camera's stream setting
(issue 36's eleventh round); with " told" after it the readers are told the stream's colour resolution.

`tops`: what the two views' evidence could do that their values cannot. One frame of each scene
from each camera, read with every count let through the height stage (`max_count_doubt` and
`jpeg_count_doubt` 0.499),
and for every zone holding one stack that both cameras measured: the top chip's offset from the
bottom one across each camera's line of sight (the outline's, `Squareness.square[0]`, over the
top's scale k), the two solved for the offset on the felt, and the two counts joined. A top
pushed d mm away from a camera reads d / tan(from vertical) mm taller to it (the seventh round's
0.31 chip a mm at the mount); the across camera stands on the other side, so the same push reads
that much shorter to it, and the two counts weighed by their chips a mm cancel it: (c2 e1 + c1
e2) / (c1 + c2), c = 1 / (3.3 mm tan(from vertical)) (geometry, nothing fitted). The offset across
the two lines of sight, which the seventh round's estimate used, is one axis for two cameras
facing each other: it does not tell the offset along. Per condition, the stacks
whose count falls within the height stage's 0.3 of the true count, before and after, and the
renderer's own chip places to say how well each camera measured the offset across.

    python -m benchmarks.second_view tops FIRST N "clean,sloppy 1,lean 0.2"

Use tuning seeds only (0-199); the published benchmarks use seeds from 100000 on.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from collections import Counter
from typing import Any, NamedTuple

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import HALF_MOUNTS, calibrated, empty_table, view
from vision.calibration import Calibration
from vision.chips import CHIP_THICKNESS_MM
from vision.fusion import FusedZone, WagerFusion, combine
from vision.join import TwoViews
from vision.layout import Layout
from vision.reader import Reader, ZoneReading
from vision.render import _chip_places, draw, exposures, render
from vision.robustness import CONDITIONS, Condition, jpeg
from vision.scene import Scene
from vision.stages import FloatArray, StackEvidence
from vision.tuning import TUNING

NOT_IN_VIEW = "not wholly in the camera's view"
FRAMES = 30  # a second at 30 frames a second, as bench_vision_wagers


TOLD = " told"


def _told(name: str, scene: Scene) -> str:
    """The colour resolution a reader is told for condition `name` on `scene` (see `condition_named`)."""
    return scene.sensor.jpeg_chroma if name.endswith(TOLD) else "4:2:0"


def condition_named(name: str) -> Condition:
    """The robustness suite's condition `name`, or a camera's stream setting outside the suite:
    "jpeg N" for any JPEG quality N, "jpeg N 4:2:2" or "jpeg N 4:4:4" with the colour halved
    across only or not at all (issue 36's eleventh round: what the reader gives at the setting a
    camera is asked for); each with " told" after it: the readers told the stream's colour resolution
    (`Reader(jpeg_chroma=...)`, as a camera's driver would from the JPEG's header)."""
    if name in CONDITIONS:
        return CONDITIONS[name]
    words = name.removesuffix(TOLD).split()
    if len(words) in (2, 3) and words[0] == "jpeg" and words[1].isdigit() and words[2:] in ([], ["4:2:2"], ["4:4:4"]):
        chroma = words[2] if len(words) == 3 else "4:2:0"
        return Condition(f"MJPEG, JPEG quality {words[1]}, {chroma}", jpeg(int(words[1]), chroma), True)
    raise KeyError(f"no condition {name!r}")


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
    condition = condition_named(name)
    changed, setup = condition.apply(scene), condition.calibration(empty)
    calibration = calibrated(setup, empty, whole, layout)
    reader, fusion = Reader(layout, calibration, jpeg_chroma=_told(name, changed)), WagerFusion()
    rng = np.random.default_rng([seed, 36])
    before = condition.apply(empty)
    frames = [next(exposures(draw(empty, whole), before, rng))]
    stream = exposures(draw(changed, whole), changed, rng)
    frames += [next(stream) for _ in range(FRAMES)]
    return [fusion.update(reader, reader.read(frame)) for frame in frames][1:]


def _film_pair(
    scenes: tuple[Scene, Scene], layout: Layout, whole: Layout, name: str, seed: int
) -> tuple[list[dict[str, FusedZone]], list[dict[str, FusedZone]], list[dict[str, FusedZone]]]:
    """Both cameras' 30 frames after the wagers went down, read as two facing views of one half
    (`vision.join.TwoViews`: counts joined, values combined), each frame's combined zones, the
    same as `_lenient` would combine them, and as the ninth round's `combine` did (an unsure
    camera that saw the wager always kept it unsure)."""
    condition = condition_named(name)
    readers: dict[str, Reader] = {}
    streams = {}
    for cam, scene in zip(("dealer", "across"), scenes, strict=True):
        empty = empty_table(scene)
        changed = condition.apply(scene)
        told = _told(name, changed)
        readers[cam] = Reader(layout, calibrated(condition.calibration(empty), empty, whole, layout), jpeg_chroma=told)
        rng = np.random.default_rng([seed, 36])  # as `_film`: each camera's frames as it films them alone
        streams[cam] = (
            next(exposures(draw(empty, whole), condition.apply(empty), rng)),
            exposures(draw(changed, whole), changed, rng),
        )
    pair = TwoViews(("dealer", "across"))
    pair.update(readers, {cam: readers[cam].read(first) for cam, (first, _) in streams.items()})
    out, lenient, ninth = [], [], []
    for _ in range(FRAMES):
        readings = {cam: readers[cam].read(next(stream)) for cam, (_, stream) in streams.items()}
        out.append(pair.update(readers, readings))
        lenient.append(_lenient(pair.fused))
        ninth.append(combine(pair.fused))
    return out, lenient, ninth


def _lenient(fused: dict[str, dict[str, FusedZone]]) -> dict[str, FusedZone]:
    """`combine` as it would be if a camera that saw the wager but never read a value on any
    frame let the other's sure value stand (not the rule: measured for what the rule costs)."""
    out = combine(fused)
    for zone, z in out.items():
        if z.state != "unsure" or "cannot confirm" not in z.why:
            continue
        seen = [f[zone] for f in fused.values() if zone in f]
        sure = [f for f in seen if f.state == "ok"]
        if sure and all(f.state == "ok" or not f.candidates for f in seen):
            out[zone] = FusedZone("ok", sure[0].value, sum(f.frames for f in sure))
    return out


def across(
    seed: int, names: list[str], size: tuple[int, int] = (1920, 1080), joined: bool = False
) -> dict[str, dict[str, Any]]:
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
        if joined:
            strict, lenient, ninth = _film_pair((base, other), layout, whole, name, seed)
            ways["joined"] = [{z: f for z, f in frames.items() if z in truth} for frames in strict]
            ways["joined lenient"] = [{z: f for z, f in frames.items() if z in truth} for frames in lenient]
            ways["joined, ninth round"] = [{z: f for z, f in frames.items() if z in truth} for frames in ninth]
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


def main_across(argv: list[str], joined: bool = False) -> None:
    first, n = int(argv[0]), int(argv[1])
    names = argv[2].split(",") if len(argv) > 2 else ["sloppy 1", "lean 0.2"]
    w, h = (int(v) for v in (argv[3] if len(argv) > 3 else "1920x1080").split("x"))
    if first + n > 200:
        raise SystemExit("second_view: tuning seeds only (0-199)")
    cv2.setNumThreads(1)
    total: dict[str, Counter[str]] = {name: Counter() for name in names}
    ways = (
        ("dealer", "across", "both", "joined, ninth round", "joined", "joined lenient")
        if joined
        else ("dealer", "across", "both")
    )
    for seed in range(first, first + n):
        for name, row in across(seed, names, (w, h), joined).items():
            print(seed, name, row, flush=True)
            for key, value in row.items():
                total[name][key] += len(value) if isinstance(value, list) else value
    for name, t in total.items():
        print(
            f"== {name}: {t['wagers']} wagers, {t['zones']} zones; known within {FRAMES} frames: "
            + ", ".join(
                f"{way} {t[way]} ({t[way] / max(t['wagers'], 1):.1%}), wrong {t[f'{way} wrong']}" for way in ways
            )
        )


def _true_tops(scene: Scene, whole: Layout) -> dict[str, FloatArray]:
    """Each single stack's top chip place less its bottom chip's (mm on the felt), as the renderer
    put them (`vision.render.draw`'s chip stream, in its order)."""
    rng = np.random.default_rng([scene.seed, 1])
    out: dict[str, FloatArray] = {}
    for name, stacks in scene.zones.items():
        zone = whole.zones[name]
        for stack in stacks:
            places = _chip_places((zone.x + stack.offset[0], zone.y + stack.offset[1], stack), rng)
            if len(stacks) == 1:
                out[name] = np.subtract(places[-1], places[0])
    return out


def _evidence(scene: Scene, layout: Layout, whole: Layout, name: str) -> tuple[Reader, dict[str, StackEvidence]]:
    condition = CONDITIONS[name]
    empty = empty_table(scene)
    calibration = Calibration.from_frame(
        render(condition.calibration(empty), whole), layout, camera=scene.camera.model()
    )
    let_through = dataclasses.replace(TUNING, max_count_doubt=0.499, jpeg_count_doubt=0.499)
    reader = Reader(layout, calibration, tuning=let_through)
    reader.read(render(condition.apply(scene), whole))
    return reader, dict(reader.evidence)


class _View(NamedTuple):
    """One camera's measure of a stack (`tops`)."""

    away: FloatArray  # unit vector on the felt from below the camera through the stack
    per_mm: float  # chips its count reads long a mm of the top's offset away from the camera
    error: float  # its count (before rounding) less the true count
    across: float  # the top's offset across its line of sight, from the outline (mm)
    true_across: float  # the same from the renderer's chip places
    eye: FloatArray  # the camera's centre (mm)


def tops(seed: int, names: list[str]) -> dict[str, list[dict[str, float]]]:
    """Per condition, one row a stack both cameras measured (see the module's docstring)."""
    whole = Layout.load("grand-slam-7")
    base, layout = view(seed, "halves", whole, (1920, 1080))
    base = dataclasses.replace(base, hands=())
    other = across_view(base, whole)
    out: dict[str, list[dict[str, float]]] = {}
    for name in names:
        changed = CONDITIONS[name].apply(base)
        truth = _true_tops(changed, whole)
        (r1, e1), (r2, e2) = _evidence(base, layout, whole, name), _evidence(other, layout, whole, name)
        rows = []
        for zone, d in truth.items():
            if zone not in e1 or zone not in e2:
                continue
            n = sum(1 for _ in changed.zones[zone][0].chips)
            per_view = []
            for reader, ev in ((r1, e1[zone]), (r2, e2[zone])):
                to_stack = ev.square.centre - reader.foot
                g = next(g for g in reader.zones if g.zone.name == zone)
                per_view.append(
                    _View(
                        away=to_stack / np.linalg.norm(to_stack),
                        per_mm=reader.height / (float(np.linalg.norm(to_stack)) * CHIP_THICKNESS_MM),
                        error=ev.height.chips_f - n,
                        across=ev.square.square[0] / ev.height.k,
                        true_across=float(d @ np.asarray(g.across, dtype=np.float64)),
                        eye=reader.pose.position,
                    )
                )
            v1, v2 = per_view
            # the top pushed toward the across camera is pushed away from the dealer's: one count
            # reads long by as much (in mm) as the other reads short; weighed by chips a mm, it cancels
            c1, c2 = v1.per_mm, v2.per_mm
            centre = np.append(e1[zone].square.centre, 0.0)
            s1, s2 = v1.eye - centre, v2.eye - centre
            rows.append(
                {
                    "n": n,
                    "error": v1.error,
                    "error_across_camera": v2.error,
                    "corrected_error": (c2 * v1.error + c1 * v2.error) / (c1 + c2),
                    "true_along": float(d @ v1.away),
                    "along": (v1.error - v2.error) / (c1 + c2),
                    "across1": v1.across,
                    "true_across1": v1.true_across,
                    "across2": v2.across,
                    "true_across2": v2.true_across,
                    "degrees": math.degrees(math.acos(float(s1 @ s2) / float(np.linalg.norm(s1) * np.linalg.norm(s2)))),
                }
            )
        out[name] = rows
    return out


def main_tops(argv: list[str]) -> None:
    first, n = int(argv[0]), int(argv[1])
    names = argv[2].split(",") if len(argv) > 2 else ["clean", "sloppy 1", "lean 0.2"]
    if first + n > 200:
        raise SystemExit("second_view: tuning seeds only (0-199)")
    cv2.setNumThreads(1)
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for seed in range(first, first + n):
        for name, got in tops(seed, names).items():
            rows[name] += got
    for name, got in rows.items():
        if not got:
            continue
        e = np.array([r["error"] for r in got])
        c = np.array([r["corrected_error"] for r in got])
        x = np.array([r["error_across_camera"] for r in got])
        da = np.array([r["along"] - r["true_along"] for r in got])
        d1 = np.array([r["across1"] - r["true_across1"] for r in got])
        d2 = np.array([r["across2"] - r["true_across2"] for r in got])
        print(
            f"== {name}: {len(got)} stacks both cameras measured; count within 0.3 of the truth: "
            f"one view {np.mean(np.abs(e) <= 0.3):.1%} (error sd {e.std():.3f} chip), "
            f"corrected by the two views {np.mean(np.abs(c) <= 0.3):.1%} (sd {c.std():.3f}); "
            f"the across camera alone {np.mean(np.abs(x) <= 0.3):.1%} (sd {x.std():.3f}); "
            f"rounds right {np.mean(np.round(e) == 0):.1%} -> {np.mean(np.round(c) == 0):.1%}; "
            f"offset across, measured less true (mm, sd): dealer {d1.std():.2f}, across {d2.std():.2f}; "
            f"along the dealer's line of sight, from the two counts {da.std():.2f}; "
            f"views {min(r['degrees'] for r in got):.0f}-{max(r['degrees'] for r in got):.0f} degrees apart"
        )


def main(argv: list[str]) -> None:
    if argv and argv[0] in ("across", "joined"):
        main_across(argv[1:], joined=argv[0] == "joined")
        return
    if argv and argv[0] == "tops":
        main_tops(argv[1:])
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
