"""The felt distance the reader finds stacks by (vision.reader._background_distance), worked out
another way (issue 35's speed work computes it from per-channel tables): off the printed lines
every patch pixel's white-balanced colour's distance from the felt, on them its distance from the
segment felt-ink, as written out here in double precision one pixel at a time; and the outline's
crossings (vision.stages._crossings, in array operations) as `_crossing` finds them one edge at a time."""

from __future__ import annotations

import numpy as np

from vision.reader import Reader, _background_distance
from vision.stages import _crossing, _crossings


def _reference(
    patches: np.ndarray, gain: np.ndarray, felt: np.ndarray, ink: np.ndarray, lines: np.ndarray
) -> np.ndarray:
    colours = patches.reshape(-1, 3).astype(np.float64) * gain
    off = colours - felt.astype(np.float64)
    out = np.sqrt(np.sum(off**2, axis=1))
    seg = ink.astype(np.float64) - felt
    length = float(np.linalg.norm(seg))
    unit = seg / length
    along = off[lines] @ unit
    across = off[lines] - along[:, None] * unit
    beyond = np.minimum(along, 0.0) + np.maximum(along - length, 0.0)
    out[lines] = np.sqrt(np.sum(across**2, axis=1) + beyond**2)
    return np.asarray(out.reshape(patches.shape[:2]))


def test_the_felt_distance_is_the_distance_from_the_felt_or_the_line(reader: Reader) -> None:
    rng = np.random.default_rng(7)
    patches = rng.integers(0, 256, reader._read_patches.shape, dtype=np.uint8)
    gain = np.array([1.08, 0.93, 1.12])
    got = _background_distance(patches, gain, reader.felt, reader.ink, reader._ink_lines)
    want = _reference(patches, gain, reader.felt, reader.ink, reader._ink_lines)
    assert got.dtype == np.float32 and got.shape == patches.shape[:2]
    assert len(reader._ink_lines) > 0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-3)


def test_the_crossings_are_those_found_one_edge_at_a_time() -> None:
    rng = np.random.default_rng(3)
    score = rng.uniform(0.0, 80.0, (60, 40)).astype(np.float32)
    rows = np.repeat(np.arange(5, 55), 2)
    edges = np.tile([12, 27], 50) + rng.integers(-4, 5, 100)
    sides = np.tile([-1, 1], 50)
    want = [_crossing(score[r], int(e), int(s)) for r, e, s in zip(rows, edges, sides, strict=True)]
    assert _crossings(score, rows, edges).tolist() == want
