"""Vision under JPEG, for tuning: where do the chips' colours go (issue 36, eleventh round)?

An oracle: each stack is named with its **true** place and count (the renderer's, not the
reader's), so what is left is only what the pixels hold. One camera of the two-camera mount at
1920x1080 (the dealer's half, no hands), `FRAMES` exposures a scene with fresh sensor noise, and
each exposure written out as:

    raw                      no compression
    YUYV (4:2:2, raw)        no compression, the colour halved across the frame (a YUYV camera)
    jpeg 75 4:2:0            what the benchmark's JPEG does (OpenCV's default sampling)
    jpeg 75 4:2:2            the colour halved across only (as many MJPEG cameras send)
    jpeg 75 4:4:4            the same quality, colour at full resolution
    jpeg 90 4:2:0
    jpeg 95 4:2:0
    jpeg 100 4:2:0           the chroma's halving alone, next to nothing quantised
    75 4:2:0 luma, raw chroma     the luma of JPEG 75 4:2:0 with the raw frame's chroma
    raw luma, 75 4:2:0 chroma     the other way round

Every version of one exposure carries the same sensor noise. Each is read by a reader calibrated
on the clean felt (so the gain and the frame's conditions are its own), then every stack standing
alone in a zone is named at its true centre with its true count (`stages.name_colours`). Per
version: the stacks named right, sure by `check_colours` with the frame's own conditions, the
weakest chip's margin over a **raw** frame's margin asked (so JPEG's 1.5 times does not hide what
the pixels lost), the chips whose own colour in Lab (`NamedStack.lab_off`) is nearest another
colour, each chip's samples' error against the raw frame's in Y, Cb and Cr (levels, RMS), and the
pairs of colours confused (the true colour and the one named, or the weakest chip's rival).
**Tuning seeds only** (refuses seeds from 100000). Not a `make bench` entry.

    python -m benchmarks.vision_jpeg_oracle FIRST COUNT [FRAMES] [VERSIONS] [TUNING]

VERSIONS: comma-separated names of the versions above (raw always); TUNING: `Tuning` fields as
name=value pairs, comma-separated (tuple fields with "/" between their values), for trying the
namer's settings.

`own`: the same stacks named where the reader itself finds them (its centre, with the true count
let through the height stage), on FRAMES exposures of each robustness condition: how far a wrong
naming's margins reach, the bottom chip apart from the others (what a per-chip ask would let through).

    python -m benchmarks.vision_jpeg_oracle own FIRST COUNT FRAMES "jpeg 75,jpeg 75 + noise 6 + vignette"
"""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter, defaultdict
from typing import Any

import cv2
import numpy as np

from benchmarks.bench_vision_accuracy import calibrated
from benchmarks.vision_wager_doubts import colours_spied, tuning_only, tuning_table
from vision.chips import to_lab
from vision.conditions import ZoneBlur
from vision.reader import Reader
from vision.render import _light_and_lens, draw, exposures
from vision.robustness import CONDITIONS
from vision.stages import check_colours, colour_samples, name_colours
from vision.tuning import TUNING, Tuning

FRAMES = 3
S420 = cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420
S422 = cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422
S444 = cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444


def _jpeg(raw: np.ndarray, quality: int, sampling: int | None) -> np.ndarray:
    params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    if sampling is not None:
        params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, sampling]
    ok, data = cv2.imencode(".jpg", raw, params)
    assert ok
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), dtype=np.uint8)


def sampling_of(quality: int = 75) -> str:
    """The chroma sampling OpenCV's JPEG writes by default, read from the frame's SOF header."""
    _, data = cv2.imencode(".jpg", np.zeros((16, 16, 3), np.uint8), [cv2.IMWRITE_JPEG_QUALITY, quality])
    b = data.tobytes()
    i = b.index(b"\xff\xc0")
    comps = b[i + 9]
    factors = [(b[i + 10 + 3 * k + 1] >> 4, b[i + 10 + 3 * k + 1] & 15) for k in range(comps)]
    return f"{factors}"


def _swap(luma_from: np.ndarray, chroma_from: np.ndarray) -> np.ndarray:
    a = cv2.cvtColor(luma_from, cv2.COLOR_BGR2YCrCb)
    b = cv2.cvtColor(chroma_from, cv2.COLOR_BGR2YCrCb)
    b[..., 0] = a[..., 0]
    return np.asarray(cv2.cvtColor(b, cv2.COLOR_YCrCb2BGR), dtype=np.uint8)


def _yuyv(raw: np.ndarray) -> np.ndarray:
    """The frame as a YUYV camera sends it: no compression, each two pixels side by side sharing
    their Cb and Cr (4:2:2: the colour halved across, kept down), decoded as V4L2's YUYV is (each
    pair's colour for both)."""
    ycc = cv2.cvtColor(raw, cv2.COLOR_BGR2YCrCb).astype(np.float32)
    w = ycc.shape[1] // 2 * 2
    pairs = (ycc[:, 0:w:2, 1:] + ycc[:, 1:w:2, 1:]) / 2
    ycc[:, 0:w:2, 1:] = pairs
    ycc[:, 1:w:2, 1:] = pairs
    return np.asarray(cv2.cvtColor(np.clip(ycc + 0.5, 0, 255).astype(np.uint8), cv2.COLOR_YCrCb2BGR), dtype=np.uint8)


def versions(raw: np.ndarray) -> dict[str, np.ndarray]:
    j75 = _jpeg(raw, 75, None)
    return {
        "raw": raw,
        "YUYV (4:2:2, raw)": _yuyv(raw),
        "jpeg 75 4:2:0": j75,
        "jpeg 75 4:2:2": _jpeg(raw, 75, S422),
        "jpeg 75 4:4:4": _jpeg(raw, 75, S444),
        "jpeg 90 4:2:0": _jpeg(raw, 90, S420),
        "jpeg 95 4:2:0": _jpeg(raw, 95, S420),
        "jpeg 100 4:2:0": _jpeg(raw, 100, S420),
        "75 4:2:0 luma, raw chroma": _swap(j75, raw),
        "raw luma, 75 4:2:0 chroma": _swap(raw, j75),
    }


_YCC = np.array([[0.299, 0.587, 0.114], [-0.168736, -0.331264, 0.5], [0.5, -0.418688, -0.081312]])


def rows(seed: int, frames: int = FRAMES, tuning: Tuning = TUNING, only: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    whole, base, layout, empty = tuning_table(seed)
    clean = CONDITIONS["clean"]
    scene = clean.apply(base)
    reader = Reader(layout, calibrated(clean.calibration(empty), empty, whole, layout), tuning=tuning)
    camera, pose = scene.camera.model(), scene.camera.pose()
    lit = _light_and_lens(draw(scene, whole).image, scene, camera, pose)
    rng = np.random.default_rng([seed, 3611])
    colours = [c.colour for c in reader.chips.chips]
    values = [c.value for c in reader.chips.chips]
    stacks = {g.zone.name: s[0] for g in reader.zones if g.in_view and len(s := scene.zones.get(g.zone.name, ())) == 1}
    raw_wanted_t = reader.tuning
    out = []
    for _ in range(frames):
        noisy = lit + rng.normal(0.0, scene.noise, lit.shape).astype(np.float32) if scene.noise > 0 else lit
        raw = np.asarray(np.clip(noisy + 0.5, 0, 255), dtype=np.uint8)
        raw_samples: dict[str, np.ndarray] = {}
        for name, frame in versions(raw).items():
            if only and name != "raw" and name not in only:
                continue
            reader.forget(markers=True)  # the frame's conditions measured afresh on its markers
            reader.read(frame)
            cond = reader.conditions
            view = reader.frame_view(frame)
            for zone, stack in stacks.items():
                z = layout.zones[zone]
                centre = np.array([z.x + stack.offset[0], z.y + stack.offset[1]], dtype=np.float64)
                n = len(stack.chips)
                got = name_colours(
                    centre, n, ZoneBlur(0.0, 0.0, 0.0), view, cond, reader.chips, reader.felt_rgb, reader.tuning
                )
                # the same samples named as on a raw frame and as on a JPEG one (the felt's chroma
                # taken off the bottom chip), whatever the frame's markers said
                flip = dataclasses.replace(cond, compressed=not cond.compressed)
                other = name_colours(
                    centre, n, ZoneBlur(0.0, 0.0, 0.0), view, flip, reader.chips, reader.felt_rgb, reader.tuning
                )
                as_raw, as_jpeg = (other, got) if cond.compressed else (got, other)
                _, sampled = colour_samples(centre, n, view, reader.tuning)
                on_side = sampled[: n * 4 * len(reader.tuning.side_angles)][:, ::-1] @ _YCC.T  # Y Cb Cr
                if name == "raw":
                    raw_samples[zone] = on_side
                err = on_side - raw_samples[zone]
                truth = [values.index(v) for v in stack.chips]
                named = got.named
                raw_wanted = dataclasses.replace(cond, compressed=False).colour_margin(
                    got.px_per_chip, cond.spread_px, raw_wanted_t
                )
                lab = named.lab_off
                lab_wrong = [int(np.argmin(lab[i])) != truth[i] for i in range(n)] if lab is not None else [False] * n
                pairs = []
                for i in range(n):
                    if named.colours[i] != truth[i]:
                        pairs.append(("named", values[truth[i]], values[named.colours[i]]))
                weak = named.weakest
                rival = named.rival(weak)
                if rival is not None:
                    pairs.append(("weakest", values[truth[weak]], values[rival]))
                out.append(
                    {
                        "seed": seed,
                        "version": name,
                        "zone": zone,
                        "n": n,
                        "compressed": cond.compressed,
                        "px_per_chip": got.px_per_chip,
                        "right": list(named.colours) == truth,
                        "sure": check_colours(got, cond, reader.tuning) is None,
                        "ratio": got.margin / raw_wanted,
                        "ratio_raw": as_raw.margin / raw_wanted,
                        "ratio_jpeg": as_jpeg.margin / raw_wanted,
                        "right_raw": list(as_raw.named.colours) == truth,
                        "right_jpeg": list(as_jpeg.named.colours) == truth,
                        "margins": [float(m) for m in named.margins],
                        "chips_right": [named.colours[i] == truth[i] for i in range(n)],
                        "lab_wrong": lab_wrong,
                        "err_rms": np.sqrt((err**2).mean(axis=0)).tolist(),
                        "pairs": pairs,
                        "colours": colours,
                    }
                )
    return out


def _lab_gap(a: int, b: int, rgb: dict[int, tuple[int, int, int]]) -> tuple[float, float]:
    la, lb = to_lab(rgb[a]), to_lab(rgb[b])
    return abs(float(la[0] - lb[0])), float(np.hypot(la[1] - lb[1], la[2] - lb[2]))


def summary(got: list[dict[str, Any]]) -> None:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in got:
        by[r["version"]].append(r)
    ppc = [r["px_per_chip"] for r in by["raw"]]
    print(
        f"chip height in the frame (px): median {np.median(ppc):.2f}, 5-95% {np.percentile(ppc, 5):.2f}-"
        f"{np.percentile(ppc, 95):.2f}; the default JPEG sampling (h, v per component): {sampling_of()}"
    )
    print(
        "| version | stacks | detected JPEG | named right | sure (own margins) | sure and wrong | weakest margin / "
        "raw asked, median | >= 1.0 | >= 1.5 | chips named wrong | chips nearest another in Lab | samples' error "
        "Y / Cb / Cr (RMS) | named as on a raw frame: margin / raw asked, median, >= 1.0, >= 1.5, right "
        "| named as on JPEG: the same |"
    )
    for name, rs in by.items():
        ratios = np.array([r["ratio"] for r in rs])
        chips = sum(r["n"] for r in rs)
        wrong_chips = sum(1 for r in rs for ok in r["chips_right"] if not ok)
        lab = sum(1 for r in rs for w in r["lab_wrong"] if w)
        err = np.sqrt(np.mean([np.square(r["err_rms"]) for r in rs], axis=0))
        print(
            f"| {name} | {len(rs)} | {sum(r['compressed'] for r in rs)} | {sum(r['right'] for r in rs)} | "
            f"{sum(r['sure'] for r in rs)} | {sum(r['sure'] and not r['right'] for r in rs)} | "
            f"{np.median(ratios):.2f} | {int((ratios >= 1).sum())} | {int((ratios >= 1.5).sum())} | "
            f"{wrong_chips} of {chips} | {lab} | {err[0]:.2f} / {err[1]:.2f} / {err[2]:.2f} | "
            + " | ".join(
                f"{np.median(x):.2f}, {int((x >= 1).sum())}, {int((x >= 1.5).sum())}, "
                f"{sum(r['right_' + k] for r in rs)}"
                for k in ("raw", "jpeg")
                for x in [np.array([r["ratio_" + k] for r in rs])]
            )
            + " |",
            flush=True,
        )
    # how well the margins part right namings from wrong ones, whatever margin is asked: the
    # namings right above the largest margin any wrong naming reached (as named on that version's frame)
    for name, rs in by.items():
        parts = []
        for how, ratio, right in (
            ("as the frame said", "ratio", "right"),
            ("as raw", "ratio_raw", "right_raw"),
            ("as JPEG", "ratio_jpeg", "right_jpeg"),
        ):
            wrong = [r[ratio] for r in rs if not r[right]]
            top = max(wrong, default=0.0)
            above = sum(1 for r in rs if r[right] and r[ratio] > top)
            parts.append(
                f"{how}: named wrong {len(wrong)}, weakest margin / raw asked up to {top:.2f} "
                f"({sorted(round(w, 2) for w in wrong)}), named right above it {above}"
            )
        print(f"{name} ({len(rs)}): " + "; ".join(parts))
    rgb = dict(zip([c for c in (1, 5, 25, 100, 500, 1000)], [tuple(c) for c in got[0]["colours"]], strict=True))
    for name, rs in by.items():
        named: Counter[tuple[int, int]] = Counter()
        weakest: Counter[tuple[int, int]] = Counter()
        for r in rs:
            for kind, a, b in r["pairs"]:
                (named if kind == "named" else weakest)[(a, b)] += 1
        show = ", ".join(
            f"{a}->{b} {k} (dL {_lab_gap(a, b, rgb)[0]:.0f}, dab {_lab_gap(a, b, rgb)[1]:.0f})"
            for (a, b), k in named.most_common(6)
        )
        weak = ", ".join(f"{a}/{b} {k}" for (a, b), k in weakest.most_common(6))
        print(f"{name}: named wrong (true->named): {show or '-'}; the weakest chip's rival: {weak}")


def own_centre(seed: int, name: str, frames: int) -> list[dict[str, Any]]:
    """Each stack named with its true count where the reader itself finds it (its centre, the
    frame's own conditions), on `frames` exposures of condition `name`: each chip's margin over a
    raw frame's ask and whether it was named right (the bottom chip apart from the rest)."""
    whole, base, layout, empty = tuning_table(seed)
    condition = CONDITIONS[name]
    scene = condition.apply(base)
    let_through = dataclasses.replace(TUNING, jpeg_count_doubt=0.499, max_count_doubt=0.499)
    reader = Reader(layout, calibrated(condition.calibration(empty), empty, whole, layout), tuning=let_through)
    truth = {z: tuple(s[0].chips) for z, s in scene.zones.items() if len(s) == 1}
    out: list[dict[str, Any]] = []
    current = [""]

    def spy(centre: Any, n: int, blur: Any, v: Any, cond: Any, chips: Any, felt: Any, t: Any, side: Any = None) -> Any:
        got = name_colours(centre, n, blur, v, cond, chips, felt, t, side)
        if current[0] in truth and n == len(truth[current[0]]):
            raw = got.wanted / (t.jpeg_colour_margin if cond.compressed else 1.0)
            right = [a == b for a, b in zip(got.chips, truth[current[0]], strict=True)]
            out.append({"margins": np.asarray(got.named.margins) / raw, "right": right})
        return got

    with colours_spied(spy, current):
        stream = exposures(draw(scene, whole), scene, np.random.default_rng([seed, 36]))
        for _ in range(frames):
            reader.forget()
            reader.read(next(stream))
    return out


def own_summary(name: str, got: list[dict[str, Any]]) -> None:
    bottom = sorted(float(r["margins"][0]) for r in got if not r["right"][0])
    upper = sorted(float(m) for r in got for m, ok in zip(r["margins"][1:], r["right"][1:], strict=True) if not ok)
    right = [r for r in got if all(r["right"])]
    wrong = [r for r in got if not all(r["right"])]
    print(
        f"== {name}: {len(got)} namings, {len(wrong)} wrong; the weakest margin / raw asked of the wrong ones, "
        f"largest: {sorted(round(float(r['margins'].min()), 2) for r in wrong)[-6:]}; wrong bottom chips "
        f"{len(bottom)} (their margins up to {[round(x, 2) for x in bottom[-4:]]}), wrong upper chips {len(upper)} "
        f"(up to {[round(x, 2) for x in upper[-4:]]})"
    )
    for above in (1.0, 1.25, 1.5):

        def passes(r: dict[str, Any], above: float = above) -> bool:
            m = r["margins"]
            return bool(m[0] >= 1.5 and (len(m) == 1 or m[1:].min() >= above))

        print(
            f"  the bottom chip asked 1.5 times a raw frame's margin, the others {above}: right through "
            f"{sum(map(passes, right))} of {len(right)}, wrong through {sum(map(passes, wrong))}"
        )


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "own":
    cv2.setNumThreads(1)
    first, count, k = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    for cname in sys.argv[5].split(","):
        found: list[dict[str, Any]] = []
        for s in tuning_only(range(first, first + count)):
            found += own_centre(s, cname, k)
        own_summary(cname, found)
elif __name__ == "__main__":
    cv2.setNumThreads(1)
    first, count = int(sys.argv[1]), int(sys.argv[2])
    k = int(sys.argv[3]) if len(sys.argv) > 3 else FRAMES
    only = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 and sys.argv[4] else ()
    changes: dict[str, Any] = {}
    for pair in sys.argv[5].split(",") if len(sys.argv) > 5 else []:
        key, value = pair.split("=")
        changes[key] = tuple(float(v) for v in value.split("/")) if "/" in value else float(value)
    t = dataclasses.replace(TUNING, **changes)
    got: list[dict[str, Any]] = []
    for s in tuning_only(range(first, first + count)):
        got += rows(s, k, t, only)
    summary(got)
