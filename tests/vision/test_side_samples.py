"""A stack's side sampled once (vision.stages.sample_side, issue 35's cold-read speed work) gives
each stage that reads it exactly the numbers it gets sampling the side on its own: the side's
chip edges (`side_bands`), its plainest half chip (`plainest_band`) and every chip's colour
(`name_colours`), on the stacks of a rendered frame, with the camera's small move followed and
without; and the sensor noise the reader measures is still the median numpy gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.chips import CHIP_THICKNESS_MM
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.scene import Scene, Stack
from vision.stages import FrameView, name_colours, plainest_band, sample_side, side_bands


def _frame(layout: Layout) -> np.ndarray:
    chips = layout.chips.chips
    zones = {
        "seat2.first": (Stack(tuple(chips[i % len(chips)].value for i in range(9))),),
        "seat4.second": (Stack((chips[0].value,) * 5 + (chips[2].value,) * 3),),
        "seat6.first": (Stack((chips[1].value, chips[1].value)),),  # too short for a half chip away from both ends
    }
    return np.asarray(render(Scene(zones=zones), layout), dtype=np.uint8)


@pytest.mark.parametrize("move", [None, np.array([[1.0, 0.0008, 1.4], [-0.0008, 1.0, -0.9]])])
def test_the_side_sampled_once_gives_each_stage_its_own_numbers(
    reader: Reader, layout: Layout, move: np.ndarray | None
) -> None:
    frame = _frame(layout)
    reader.read(frame)
    stacks = {name: e for name, e in reader.evidence.items()}
    assert len(stacks) >= 2  # the frame's stacks reached the not-square checks
    view = FrameView(frame, reader._lut, reader.gain, move, reader.camera, reader.pose, reader.foot)
    t, cond = reader.tuning, reader.conditions
    for evidence in stacks.values():
        height, centre = evidence.height, evidence.square.centre
        top_mm = height.chips_f * CHIP_THICKNESS_MM
        for n in (height.n, 1, 2, 3):  # and the short stacks' cases: no sliver, projectPoints' few points
            side = sample_side(centre, top_mm, n, view, t)
            assert side_bands(centre, top_mm, n, view, t, side.bands) == side_bands(centre, top_mm, n, view, t)
            alone = plainest_band(centre, n, view, t)
            assert plainest_band(centre, n, view, t, side.sliver) == alone
            assert (side.sliver is None) == math.isinf(alone[0])
            shared = name_colours(centre, n, height.blur, view, cond, reader.chips, reader.felt_rgb, t, side)
            own = name_colours(centre, n, height.blur, view, cond, reader.chips, reader.felt_rgb, t)
            assert shared.named.colours == own.named.colours
            assert np.array_equal(shared.named.margins, own.named.margins)
            assert shared.px_per_chip == own.px_per_chip and shared.to_dict() == own.to_dict()


def test_the_noise_is_numpys_median(reader: Reader, layout: Layout) -> None:
    reader.read(_frame(layout))
    rng = np.random.default_rng(3)
    for sigma in (0.0, 2.0, 9.0, 30.0):
        noise = rng.normal(0.0, sigma, reader._read_patches.shape)
        patches = np.clip(reader._read_patches + noise, 0, 255).astype(np.uint8)
        flat = patches.reshape(-1, 3)
        a = flat[reader._felt_samples].astype(np.int16)
        b = flat[np.minimum(reader._felt_samples + 1, len(flat) - 1)].astype(np.int16)
        assert reader._noise_level(patches) == float(1.4826 * np.median(np.abs(a - b)) / math.sqrt(2.0))
