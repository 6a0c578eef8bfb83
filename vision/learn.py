"""The table's own chips, learned from frames of them (`tablectl vision learn-chips`).

The supervisor lays one stack of each denomination (3 chips or more) on zones named on the
command line, under the table's own light, and the camera takes a frame (or several). For each
stack the reader finds its outline and its count as for any wager; then its top face (lit like
the felt, white-balanced by it, the tone curve undone) gives the chip's colour, the ring of its
top face the edge spots (count, colour, arc), and the bands down its side how much one chip's
colour strays from another's (the spread, Lab). The learned set is refused when two
denominations, or a denomination and the felt or its printing, are closer than the reader
needs (MIN_COLOUR_DISTANCE Lab, plus both chips' spread) under that light.

    learned = learn_chips(frames, layout, calibration, {"seat1.first": 1, "seat1.second": 5, ...})
    learned.chips        # [Chip(...), ...], each colour as this camera sees it
    write_chips(layout_path, learned.chips, out_path)   # the layout with its [[chips]] replaced
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vision.calibration import Calibration
from vision.chips import (
    CHIP_DIAMETER_MM,
    CHIP_THICKNESS_MM,
    MIN_COLOUR_DISTANCE,
    Chip,
    ChipSet,
    ChipSetError,
    EdgeSpots,
    chip_to_config,
    to_lab,
)
from vision.layout import Layout
from vision.reader import Reader

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]

MIN_CHIPS = 3  # a stack this tall at least: its middle chips are seen without the felt or the top
RING_ANGLES = 144  # samples round the top face's ring
RING_AT = 0.9  # of the radius: the ring where edge spots show on the top face
SPOT_DISTANCE = 45.0  # RGB distance from the chip's colour that makes a ring sample a spot


class LearnError(ValueError):
    """Chips that cannot be learned from these frames; the text says which zone and why."""


@dataclass(frozen=True)
class LearnedChips:
    chips: list[Chip]
    spread: dict[int, float]  # value -> Lab distance of its chips from their median
    closest: tuple[int, int, float]  # the two closest denominations and their Lab distance


def learn_chips(frames: list[Image], layout: Layout, calibration: Calibration, stacks: dict[str, int]) -> LearnedChips:
    """Each denomination's colour, spots and spread from frames showing one stack of it on its
    zone (`stacks`: zone name -> value); raises LearnError."""
    if not stacks:
        raise LearnError("no stacks named: give ZONE=VALUE for one stack of each denomination")
    values = sorted(set(stacks.values()))
    if len(values) != len(stacks):
        raise LearnError("each denomination once: one stack of each, on its own zone")
    reader = Reader(layout, calibration)
    tops: dict[int, list[FloatArray]] = {v: [] for v in values}
    sides: dict[int, list[FloatArray]] = {v: [] for v in values}
    for zone in stacks:
        if zone not in layout.zones or layout.zones[zone].kind == "puck":
            raise LearnError(f"{zone}: no such chip zone in layout {layout.name}")
    for frame in frames:
        reader.forget(markers=True)
        reading = reader.read(frame)
        if reading.bumped or not reading.camera.verified:
            raise LearnError(f"the camera is not where it was calibrated: {reading.camera.why}")
        for zone, value in stacks.items():
            if zone not in reader.measured:
                why = reading.zones[zone].why if zone in reading.zones else "not in this camera's view"
                raise LearnError(f"{zone} ({value}): no stack of {MIN_CHIPS} chips or more could be measured: {why}")
            centre, n = reader.measured[zone]
            if n < MIN_CHIPS:
                raise LearnError(f"{zone} ({value}): {n} chips; lay a stack of {MIN_CHIPS} or more")
            top, side = _samples(reader, frame, centre, n)
            tops[value].append(top)
            sides[value].append(side)
    chips, spread = [], {}
    for value in values:
        ring = np.concatenate(tops[value])  # RGB samples round the top faces' rings
        colour, spots = _colour_and_spots(ring, len(tops[value]))
        chips.append(Chip(value, colour, spots))
        bands = np.concatenate(sides[value])  # (chips, 3) each middle chip's side colour
        labs = to_lab(np.clip(bands / np.maximum(bands.max(axis=1, keepdims=True), 1.0) * 255.0, 0, 255))
        middle = np.median(labs, axis=0)
        spread[value] = float(np.sqrt(np.mean(np.sum((labs - middle) ** 2, axis=1))))
    closest = _check(chips, spread, layout)
    return LearnedChips(chips, spread, closest)


def _samples(reader: Reader, frame: Image, centre: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """RGB (white-balanced, the tone curve undone) round the top face's ring (RING_ANGLES, 3),
    and each middle chip's side colour (n - 2, 3) (median over the near side's angles)."""
    r = CHIP_DIAMETER_MM / 2
    a = np.linspace(0, 2 * math.pi, RING_ANGLES, endpoint=False)
    ring = np.stack(
        [
            centre[0] + RING_AT * r * np.cos(a),
            centre[1] + RING_AT * r * np.sin(a),
            np.full(len(a), n * CHIP_THICKNESS_MM),
        ],
        axis=1,
    )
    toward = reader.foot - centre
    toward /= np.linalg.norm(toward)
    across = np.array([toward[1], -toward[0]])
    angles = reader.tuning.side_angles
    dirs = np.cos(angles)[:, None] * toward + np.sin(angles)[:, None] * across
    z = (np.arange(1, n - 1) + 0.5) * CHIP_THICKNESS_MM
    side = np.concatenate([np.concatenate([centre + r * dirs, np.full((len(dirs), 1), h)], axis=1) for h in z])
    seen = reader.sample_frame(frame, np.concatenate([ring, side]))  # RGB
    top = seen[: len(ring)]
    bands = np.median(seen[len(ring) :].reshape(len(z), len(dirs), 3), axis=1)
    return top, bands


def _colour_and_spots(ring: FloatArray, stacks: int) -> tuple[tuple[int, int, int], EdgeSpots]:
    """The chip's colour (the ring's most common colour) and its spots (the rest of the ring)."""
    colour = np.median(ring, axis=0)
    for _ in range(3):  # the median of the samples near the colour: spots do not pull it
        near = np.linalg.norm(ring - colour, axis=1) < SPOT_DISTANCE
        if near.sum() < len(ring) // 3:
            break
        colour = np.median(ring[near], axis=0)
    far = np.linalg.norm(ring - colour, axis=1) >= SPOT_DISTANCE
    rgb = (round(float(colour[0])), round(float(colour[1])), round(float(colour[2])))
    if far.sum() < 2 * stacks:
        return rgb, EdgeSpots(0, (255, 255, 255), 0.0)
    per = far.reshape(stacks, RING_ANGLES)
    runs = [_runs(row) for row in per]
    count = round(float(np.median([len(r) for r in runs])))
    if count == 0:
        return rgb, EdgeSpots(0, (255, 255, 255), 0.0)
    degrees = float(np.median([length for r in runs for length in r])) * 360.0 / RING_ANGLES
    spot = np.median(ring[far], axis=0)
    spot_rgb = (round(float(spot[0])), round(float(spot[1])), round(float(spot[2])))
    return rgb, EdgeSpots(min(count, 16), spot_rgb, round(min(degrees, 150.0 / max(count, 1)), 1))


def _runs(flags: npt.NDArray[np.bool_]) -> list[int]:
    """Lengths of the runs of True round a circle."""
    if flags.all():
        return [len(flags)]
    start = int(np.argmin(flags))  # begin on a False: no run wraps
    rolled = np.roll(flags, -start)
    out, length = [], 0
    for f in rolled.tolist():
        if f:
            length += 1
        elif length:
            out.append(length)
            length = 0
    if length:
        out.append(length)
    return [n for n in out if n >= 2]  # a lone sample is noise, not a spot


def _check(chips: list[Chip], spread: dict[int, float], layout: Layout) -> tuple[int, int, float]:
    """Refuse a set the reader could not tell apart: the layout's own check (every colour 40 Lab
    from the others and from the felt and its printing), with each pair also asked its chips'
    spread on top. Returns the closest pair."""
    entries = [chip_to_config(c) for c in chips]
    try:
        ChipSet.from_config(entries, "learned chips", felt=layout.felt, ink=layout.ink)
    except ChipSetError as exc:
        raise LearnError(f"{exc}; under this light the reader could not tell these chips apart") from None
    closest = (0, 0, math.inf)
    for i, a in enumerate(chips):
        for b in chips[i + 1 :]:
            d = float(np.linalg.norm(to_lab(a.colour) - to_lab(b.colour)))
            need = MIN_COLOUR_DISTANCE + spread[a.value] + spread[b.value]
            if d < need:
                raise LearnError(
                    f"the {a.value} and {b.value} chips are {d:.0f} Lab apart under this light, and their chips "
                    f"stray {spread[a.value]:.0f} and {spread[b.value]:.0f}: the reader needs {need:.0f}"
                )
            if d < closest[2]:
                closest = (a.value, b.value, d)
    return closest


def write_chips(layout_path: str | Path, chips: list[Chip], out: str | Path) -> None:
    """The layout file with its [[chips]] replaced by `chips` (the rest kept as written)."""
    text = Path(layout_path).read_text(encoding="utf-8")
    kept: list[str] = []
    in_chips = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            in_chips = stripped == "[[chips]]"
        if not in_chips:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    block = ["", "# Learned by tablectl vision learn-chips: each colour as this table's camera sees it."]
    for chip in chips:
        entry = chip_to_config(chip)
        spots = entry["spots"]
        block += [
            "[[chips]]",
            f"value = {entry['value']}",
            f'colour = "{entry["colour"]}"',
            f'spots = {{ count = {spots["count"]}, colour = "{spots["colour"]}", degrees = {spots["degrees"]} }}',
        ]
    Path(out).write_text("\n".join(kept + block) + "\n", encoding="utf-8")
