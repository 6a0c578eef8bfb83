"""Naming a stack's chips all at once: colours blurred into their neighbours at a change of
colour are named right, a chip that could be two colours is doubted, and mixed stacks with
several changes of colour read exactly at the two-camera mount."""

from __future__ import annotations

import itertools
import math

import numpy as np
import numpy.typing as npt
import pytest

from vision.calibration import Calibration
from vision.chips import ChipSet
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.scene import CameraSetup, Scene, Stack
from vision.stack_colours import SAMPLE_HEIGHTS, StackNamer, viterbi
from vision.tuning import TUNING

CHIPS = ChipSet.default()
VALUES = CHIPS.values
FELT = (31.0, 78.0, 140.0)
PX_PER_CHIP = 2.5  # as at the two-camera mount; the synthetic sides' blur is given in chips
# The left camera of vision/README.md's two-camera mount, over seats 1-4.
LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))


def _side(
    chips: tuple[int, ...],
    *,
    blur: float,
    level: float = 0.8,
    spots_at: dict[int, tuple[int, ...]] | None = None,
    odd_colour: dict[int, tuple[float, float, float]] | None = None,
    noise: float = 2.0,
    seed: int = 0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Samples of a stack's side as a camera sees it: each chip's band of its colour (or
    `odd_colour`), white edge spots at some angles, the felt below and the top face above, lit
    more on one side than the other, blurred along the height by `blur` chips, sampled at
    SAMPLE_HEIGHTS of every chip across 11 angles."""
    rng = np.random.default_rng(seed)
    angles = 11
    light = level * (1.0 + 0.35 * np.linspace(-1.0, 1.0, angles))  # brighter toward one side
    fine = 40  # steps a chip
    n = len(chips)
    pad = 5  # chips of felt below and of top face above: more than the blur's reach
    heights = (np.arange(-pad * fine, (n + pad) * fine) + 0.5) / fine  # in chips
    column = np.zeros((len(heights), angles, 3))
    for row, h in enumerate(heights):
        if h < 0:
            column[row] = FELT
            continue
        i = min(int(h), n - 1)
        colour = np.array(CHIPS.by_value(chips[i]).colour, dtype=np.float64)
        if odd_colour and i in odd_colour:
            colour = np.array(odd_colour[i])
        if h >= n:  # the top face: lit like the felt
            column[row] = colour
            continue
        column[row] = colour[None, :] * light[:, None]
        for j in (spots_at or {}).get(i, ()):
            column[row, j] = np.array((242.0, 242.0, 238.0)) * light[j]
    kernel = np.exp(-0.5 * ((np.arange(-4 * fine, 4 * fine + 1) / fine) / blur) ** 2)
    kernel /= kernel.sum()
    blurred = np.stack(
        [
            np.stack([np.convolve(column[:, j, c], kernel, mode="same") for c in range(3)], axis=1)
            for j in range(angles)
        ],
        axis=1,
    )
    wanted = ((np.arange(n)[:, None] + np.array(SAMPLE_HEIGHTS)[None, :]).reshape(-1) * fine + pad * fine).astype(int)
    samples = blurred[wanted].reshape(n, len(SAMPLE_HEIGHTS), angles, 3)
    samples = np.clip(samples + rng.normal(0.0, noise, samples.shape), 0, 255)
    felt = np.clip(np.array(FELT)[None, :] + rng.normal(0.0, noise, (angles, 3)), 0, 255)
    return samples, felt


def _namer() -> StackNamer:
    return StackNamer(CHIPS.colours, FELT)


def _values(colours: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(VALUES[i] for i in colours)


def test_a_mixed_stack_blurred_at_each_change_of_colour_is_named_right_and_sure() -> None:
    chips = (5, 5, 25, 100, 100, 500, 1000, 1000, 1)
    samples, felt = _side(chips, blur=0.5, spots_at={1: (2, 3), 3: (7,), 5: (0, 9, 10), 7: (4, 5)})
    named = _namer().name(samples, felt, PX_PER_CHIP)
    assert _values(named.colours) == chips
    assert named.margins.min() >= TUNING.min_colour_margin


def test_each_chip_alone_would_be_misnamed_where_the_blur_mixes_its_neighbours_in() -> None:
    # the problem the joint naming solves: a black chip between two white ones, blurred, is grey
    # in the middle of its band, nearer a dimmed white than black on its own
    chips = (1, 100, 1, 1)
    samples, felt = _side(chips, blur=0.55)
    middle = samples[1, 1:3].mean(axis=(0, 1))
    nearest = int(np.argmin(np.linalg.norm(CHIPS.colours * 0.8 - middle, axis=1)))
    assert VALUES[nearest] != 100
    assert _values(_namer().name(samples, felt, PX_PER_CHIP).colours) == chips


def test_a_chip_halfway_between_two_colours_is_doubted_not_guessed() -> None:
    red, orange = CHIPS.by_value(5).colour, CHIPS.by_value(1000).colour
    between = tuple((a + b) / 2 for a, b in zip(red, orange, strict=True))
    chips = (25, 25, 5, 25, 25)
    samples, felt = _side(chips, blur=0.4, odd_colour={2: between})  # type: ignore[dict-item]
    named = _namer().name(samples, felt, PX_PER_CHIP)
    assert named.margins[2] < TUNING.min_colour_margin
    assert named.weakest == 2


def test_a_single_colour_stack_in_any_light_is_named_sure() -> None:
    for value, level in itertools.product(VALUES, (0.5, 0.8, 1.1)):
        samples, felt = _side((value,) * 6, blur=0.35, level=level, spots_at={2: (3, 4), 4: (8,)}, seed=value)
        named = _namer().name(samples, felt, PX_PER_CHIP)
        assert _values(named.colours) == (value,) * 6, (value, level)
        assert named.margins.min() >= TUNING.min_colour_margin, (value, level)


def test_random_mixed_stacks_are_named_right_or_doubted_never_misnamed() -> None:
    rng = np.random.default_rng(5)
    named_right = 0
    for trial in range(120):
        n = int(rng.integers(1, 12))
        runs: list[int] = []
        while len(runs) < n:
            runs += [int(rng.choice(VALUES))] * int(rng.integers(1, 4))
        chips = tuple(runs[:n])
        spots = {
            i: tuple(int(j) for j in rng.choice(11, size=int(rng.integers(0, 4)), replace=False)) for i in range(n)
        }
        blur, level = float(rng.uniform(0.2, 0.55)), float(rng.uniform(0.5, 1.15))
        samples, felt = _side(chips, blur=blur, level=level, spots_at=spots, seed=trial)
        named = _namer().name(samples, felt, PX_PER_CHIP)
        if named.margins.min() >= TUNING.min_colour_margin and named.misfit <= TUNING.max_colour_misfit:
            assert _values(named.colours) == chips, (chips, blur, level)
            named_right += 1
    assert named_right >= 110


def test_the_chain_search_finds_the_best_sequence_and_every_chips_best_alternative() -> None:
    rng = np.random.default_rng(3)
    for n, k in ((1, 3), (2, 3), (4, 3), (5, 2)):
        cost = rng.uniform(0.0, 10.0, (n, k, k, k))
        best_total, marginals = viterbi(cost)
        brute = np.full((n, k), math.inf)
        for seq in itertools.product(range(k), repeat=n):
            total = sum(cost[i, seq[i - 1] if i else 0, seq[i], seq[i + 1] if i < n - 1 else 0] for i in range(n))
            for i in range(n):
                brute[i, seq[i]] = min(brute[i, seq[i]], total)
        assert best_total == pytest.approx(brute.min())
        np.testing.assert_allclose(marginals, brute)


@pytest.fixture(scope="module")
def left_reader() -> tuple[Layout, Reader]:
    whole = Layout.load("grand-slam-7")
    left = Layout.load("grand-slam-7-left")
    calibration = Calibration.from_frame(render(Scene(camera=LEFT_MOUNT), whole), left, camera=LEFT_MOUNT.model())
    return whole, Reader(left, calibration)


MIXED = {
    "seat1.second": (100, 100, 25, 25, 5, 5, 500, 500, 1000, 1000),
    "seat2.home": (1, 1, 5, 5, 100, 100, 1, 1),
    "seat3.first": (1000, 500, 500, 25, 25, 25, 100),
    "seat4.third": (25, 25, 1000, 1000, 100, 100, 5, 5, 1, 1, 500, 500),
    "seat1.home": (5, 5, 1, 1, 25, 25, 100, 100),
    "seat3.third": (500, 500, 1000, 1000, 1, 1, 25),
}


@pytest.mark.parametrize("blur", [0.0, 0.5])
def test_mixed_stacks_with_several_changes_of_colour_read_exactly_at_the_two_camera_mount(
    left_reader: tuple[Layout, Reader], blur: float
) -> None:
    whole, reader = left_reader
    scene = Scene(camera=LEFT_MOUNT, blur=blur, noise=2.0, zones={z: (Stack(c),) for z, c in MIXED.items()})
    reading = reader.read(render(scene, whole))
    for zone, chips in MIXED.items():
        seen = reading.zones[zone]
        assert seen.state == "ok", (zone, seen.why)
        assert seen.stacks[0].chips == chips, zone
        assert seen.value == scene.value_of(zone)


def test_mixed_stacks_blurred_by_a_whole_pixel_are_read_exactly_or_doubted_never_misread(
    left_reader: tuple[Layout, Reader],
) -> None:
    # a colour every two chips, blurred over nearly a chip's height: some may be doubted
    whole, reader = left_reader
    exact = 0
    for seed in (0, 1):
        zones = {z: (Stack(c),) for z, c in MIXED.items()}
        scene = Scene(camera=LEFT_MOUNT, blur=1.0, noise=2.0, seed=seed, zones=zones)  # type: ignore[arg-type]
        reading = reader.read(render(scene, whole))
        for zone in MIXED:
            seen = reading.zones[zone]
            assert seen.state in ("ok", "unsure"), (zone, seen.why)
            if seen.state == "ok":
                assert seen.value == scene.value_of(zone), zone
                exact += 1
            else:
                assert seen.value is None and seen.why
    assert exact >= len(MIXED)  # at least half are still read


@pytest.mark.parametrize("n", [1, 2, 4])
def test_the_exact_costs_are_the_documented_model_for_every_chip_and_neighbour(n: int) -> None:
    """Every entry of the per-angle cost (the end chips' too: the felt below the bottom chip, its
    own top face above the top one) is what the module docstring's model gives, worked out one
    chip, neighbour pair, mixing and angle at a time."""
    rng = np.random.default_rng(n)
    namer = StackNamer([c.colour for c in CHIPS.chips], FELT)
    angles, heights = 11, len(SAMPLE_HEIGHTS)
    seen = rng.uniform(0.0, 255.0, (3, n, heights, angles))
    profile = rng.uniform(0.7, 1.3, angles)
    under = rng.uniform(0.0, 255.0, (angles, 3))
    top = namer.colours * 0.9
    candidates = np.array([rng.choice(len(namer.colours), 3, replace=False) for _ in range(n)])
    weights = rng.dirichlet(np.ones(3), (3, heights))  # B, S, (below, own, above)
    level = 0.85
    cost = namer._exact_costs(seen, profile, under, top, candidates, level, weights)
    lit = np.minimum(namer.colours[:, :, None] * (level * profile), 255.0)  # C, 3, A
    keep = 5
    for blur, i, a, b, c in itertools.product(range(3), range(n), range(3), range(3), range(3)):
        below = under.T if i == 0 else lit[candidates[i - 1, a]]
        above = np.repeat(top[candidates[i, b]][:, None], angles, axis=1) if i == n - 1 else lit[candidates[i + 1, c]]
        w = weights[blur]
        drawn = w[:, 0, None, None] * below + w[:, 1, None, None] * lit[candidates[i, b]] + w[:, 2, None, None] * above
        dist = np.minimum(np.linalg.norm(seen[:, i] - drawn.transpose(1, 0, 2), axis=0), 80.0).sum(axis=0)  # A
        want = np.sort(dist)[:keep].sum() / (keep * heights)
        assert cost[blur, i, a, b, c] == pytest.approx(want, rel=1e-4)


def test_a_named_stack_pickles_with_its_opinions_as_worked_out_before() -> None:
    """The Lab and hue opinions are worked out when first asked for; a pickled stack (a reading's
    evidence sent to another process) carries them, the same numbers."""
    import pickle

    namer = StackNamer([c.colour for c in CHIPS.chips], FELT)
    named = namer.name(*_side((1, 1, 5, 5, 25), blur=0.3), PX_PER_CHIP)
    again = pickle.loads(pickle.dumps(named))  # before anything asked for the opinions
    assert [CHIPS.chips[i].value for i in again.colours] == [1, 1, 5, 5, 25]
    assert again.colours == named.colours
    assert again.lab_off is not None and named.lab_off is not None
    assert np.array_equal(again.lab_off, named.lab_off)
    assert again.hue_off is not None and named.hue_off is not None
    assert np.array_equal(again.hue_off, named.hue_off)
