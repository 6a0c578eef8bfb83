"""Every chip of a stack named at once, with the blur between chips modelled.

At the two-camera mount a chip's edge is only 2.5-2.8 pixels tall on the stack's side, and lens
blur, the sensor's pixels and the sampling spread each pixel over about a chip's height: at a
change of colour a chip's band holds a good share of its neighbours' colours. Naming each chip
on its own then fails exactly where the value changes. Here the whole side is explained at
once, as the camera would have drawn it:

    seen(chip i, height f within it, angle j) = shade_j * (below(f) * colour[i - 1]
                                                           + own(f) * colour[i]
                                                           + above(f) * colour[i + 1])

where below / own / above are the shares a Gaussian blur of `sigma` leaves of the chip
below, the chip itself and the chip above at that height (the band itself may sit `delta`
chips higher or lower than predicted: the stack's centre and the pose are known to a fraction
of a millimetre, which along the side is a fraction of a chip), shade_j = level * profile_j is
the light on the side at that angle round the stack (the same for every chip: one light, one
cylinder), below the bottom chip is the felt and above the top chip its own top face (lit like
the felt). The edge spots (inserts of another colour, a third of the edge at most) are outvoted:
each chip is scored on the `KEEP` columns (angles) that fit it best.

The best sequence of colours under this model is found by dynamic programming over pairs of
neighbouring colours (Viterbi, min-sum); forward and backward passes give, for every chip, the
best cost with that chip forced to each colour, so each chip's margin is how much worse the
best explanation becomes when that chip is given any other colour. The offset is never known
exactly, so the chain is also named with it half a pixel lower and higher, and a colour counts
as close as its best fit under any of them. A chip whose margin is small could be more than one
colour, and a side that no sequence explains well (`misfit`) is not chips as modelled: the
caller says "unsure", never guesses.

The exact per-angle model is costly for 6 x 6 x 6 colour triples, so it weighs only the
`CANDIDATES` colours per chip that a cheaper fit ranks best (one robust colour per height, the
angles that agree best, against every neighbour triple). A first naming assumes a middling
blur; unless it is sure of every chip, blur, offset and light level are refitted to it (a small
grid, scored on that sequence) and the stack named again. Blur and offset are set in frame
pixels and turned into chips with the chip's height in the frame.

    namer = StackNamer(chip_rgb, felt_rgb)
    named = namer.name(samples, felt_samples, px_per_chip)  # samples (n, len(SAMPLE_HEIGHTS), angles, 3) RGB
    named.colours, named.margins, named.misfit              # indices into chip_rgb, bottom to top
    named.hue_lead(chip, colour)                            # the second opinion, free of lightness

A stack named with a change of colour also gets a second opinion free of lightness (`hues`):
each chip's own share of its samples against each colour's direction in RGB, at whatever
brightness fits it (wear that darkens or fades a chip moves it along that direction, and the
one light level of the model above then names it black or a dim white).

Every stack also gets a third opinion, in Lab, where wear is measured (`own_colours`,
`lab_off`): each chip's own colour, the side deblurred whatever the chips are named (least
squares per angle under the refit grid's blurs and offsets, the one that leaves least
unexplained), divided by the light at each angle and the middle of the angles taken, is
compared in Lab with each colour at the gain on the level (LAB_GAINS) that brings the chips
nearest the colours named. A green worn lighter that the one level in RGB explains as a dim
white is still nearest green in Lab at any one light for the stack.

    named.lab_off, named.lab_lead(chip)  # (n, C) Lab distances; the nearest other colour and the lead
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.chips import to_lab

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# a stack's Lab distances, and its hue distances and gaps (None for a stack of one colour)
_Opinions = tuple[FloatArray | None, FloatArray | None, FloatArray | None]

# Where each chip is sampled, as fractions of its height from its bottom edge.
SAMPLE_HEIGHTS = (0.125, 0.375, 0.625, 0.875)
KEEP = 5  # of the angles across a chip's side, those that fit best: edge spots cover the rest
CANDIDATES = 3  # colours per chip the exact model weighs (ranked by a cheaper fit, see _candidates)
CAP = 80.0  # RGB distance one sample can add at most (a spot is an outlier, not evidence)
AGREEING = 5  # angles whose colours agree best, for one robust colour per height
# Blur (Gaussian sigma along the side) and offset of the chip bands, in frame pixels, refitted
# per stack; and the light level relative to the first estimate. Measured on tuning scenes at
# the two-camera mount (2.4-2.8 px a chip): sigma 0.4-1.25 px (0-1 px of lens blur, plus the
# pixels and the sampling), offsets mostly within 0.5 px.
SIGMAS_PX = (0.6, 1.0, 1.35)
OFFSETS_PX = (-0.37, 0.0, 0.37)
LEVELS = (0.8, 0.9, 1.0, 1.1, 1.25)
FIRST_SIGMA_PX = 1.0
# How far the bands' offset may be from the one that fits best: each chip's margin is taken over
# the chain named with the offset this much lower and higher too (the felt's edge under the
# bottom chip and the top face's above the top one depend on it most).
OFFSET_DOUBT_PX = 0.5
# A first naming (blur FIRST_SIGMA_PX) this sure of every chip is kept: on tuning seeds 0-119
# keeping them cost no exact stack and added no wrong one; the refit costs as much again.
SURE_AT_FIRST = 20.0
LAB_GAINS = tuple(float(g) for g in np.geomspace(0.5, 2.0, 9))  # see StackNamer.lab_off
LONE_CHIP_LEVELS = (0.5, 0.7, 1.0, 1.4, 2.0)  # a one-chip stack is first named at each of these
LEVEL_RANGE = (0.3, 1.6)  # the light on a stack's side relative to the felt's, at most this far off
LOCAL_LIGHT = (0.8, 1.25)  # the light on the felt beside a stack relative to the frame's felt


class _WorkArrays(threading.local):
    """The large work arrays of `_exact_costs` and `_candidates`, kept from one stack to the next
    (one set per thread): allocating a few hundred kilobytes afresh for every stack cost more in
    page faults (about 40 a stack) than the arithmetic on them."""

    def __init__(self) -> None:
        self.arrays: dict[str, npt.NDArray[np.generic]] = {}


_WORK = _WorkArrays()


def _work(name: str, shape: tuple[int, ...], dtype: type[np.generic]) -> npt.NDArray[Any]:
    """An uninitialised work array of this shape and dtype, reusing the one kept as `name`
    (grown when too small). Valid until `_work` is next asked for `name`."""
    size = math.prod(shape)
    kept = _WORK.arrays.get(name)
    if kept is None or kept.size < size or kept.dtype != dtype:
        kept = np.empty(size, dtype=dtype)
        _WORK.arrays[name] = kept
    return kept[:size].reshape(shape)


@dataclass(frozen=True)
class NamedStack:
    """Each chip's colour (index into the namer's colours), bottom to top, and its margin: how
    much the best explanation of the stack's side worsens (mean RGB distance per kept sample)
    when that chip is given any other colour."""

    colours: tuple[int, ...]
    margins: FloatArray
    misfit: float  # what the best explanation leaves unexplained, per chip (same units as the margins)
    # what the best explanation leaves unexplained of each chip's own samples (same units): a chip
    # that fits its colour badly (worn, dirty, another maker's) has no margin's worth of certainty
    fits: FloatArray | None = None
    rivals: tuple[int, ...] = ()  # each chip's runner-up: the colour its margin is against
    # each chip's candidate colours (n, K: indices) and how much worse the best explanation is
    # with the chip given each (0 for the colour named; the margins' units): what a chip could be
    # besides its name, for a second view that names the same stack (vision/stages.py's `possible`)
    options: IntArray | None = field(default=None, repr=False, compare=False)
    option_gaps: FloatArray | None = field(default=None, repr=False, compare=False)
    # The second and third opinions (below), worked out when first asked for, from what the
    # naming saw: most stacks a reader finds unsure are decided by their margins before either
    # is looked at (the same numbers whenever they are worked out: the inputs are kept as they were).
    opinions: Callable[[], _Opinions] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def _opinions(self) -> _Opinions:
        return self.opinions() if self.opinions is not None else (None, None, None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its opinions worked out (the function that would work them out does not pickle)."""
        state = dict(self.__dict__)
        state["_opinions"] = self._opinions
        state["opinions"] = None
        return state

    @property
    def hue_off(self) -> FloatArray | None:
        """The second opinion, free of lightness (`StackNamer.hues`), (n, C): how far each chip's own
        share of its samples is from the direction in RGB (the chromaticity) of each colour, at
        whatever brightness suits it best; None for a stack named all one colour (no chip there is
        unlike a neighbour)."""
        return self._opinions[1]

    @property
    def hue_gaps(self) -> FloatArray | None:
        """(n, C) how far the direction of the colour each chip is named is from each colour's at
        the chip's brightness (both RGB distance a sample, the margins' units); None as `hue_off`."""
        return self._opinions[2]

    @property
    def lab_off(self) -> FloatArray | None:
        """(n, C) each chip's own colour's (`StackNamer.own_colours`) distance in Lab from each
        colour, at the light (a gain on the model's level, LAB_GAINS) that brings the colours it is
        named nearest (`StackNamer.lab_off`)."""
        return self._opinions[0]

    def lab_lead(self, chip: int) -> tuple[int, float]:
        """The colour nearest chip `chip`'s own in Lab other than the one it is named, and how much
        nearer the named one is (negative: the other is nearer); (-1, inf) without them."""
        if self.lab_off is None or len(self.lab_off[chip]) < 2:
            return -1, math.inf
        d = self.lab_off[chip].copy()
        named = d[self.colours[chip]]
        d[self.colours[chip]] = math.inf
        other = int(np.argmin(d))
        return other, float(d[other] - named)

    def hue_lead(self, chip: int, colour: int) -> tuple[float, float]:
        """How much nearer chip `chip`'s own share is to the direction of the colour it is named
        than to `colour`'s (negative: nearer `colour`'s), and how far apart the two directions
        are at its brightness (0 without the second opinion: it cannot tell them apart)."""
        if self.hue_off is None or self.hue_gaps is None:
            return 0.0, 0.0
        named = self.colours[chip]
        return float(self.hue_off[chip, colour] - self.hue_off[chip, named]), float(self.hue_gaps[chip, colour])

    def rival(self, chip: int) -> int | None:
        """The colour (index) chip `chip` would be named next, if any."""
        return self.rivals[chip] if chip < len(self.rivals) else None

    @property
    def weakest(self) -> int:
        """The chip (from the bottom, 0-based) the naming is least sure of."""
        return int(np.argmin(self.margins))


def _phi(x: FloatArray) -> FloatArray:
    """The standard normal distribution function, elementwise."""
    flat = [0.5 * (1.0 + math.erf(float(v) / math.sqrt(2.0))) for v in np.ravel(x)]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(x))


def _middle(x: FloatArray, axis: int) -> FloatArray:
    """The median along `axis`, as np.median gives it, from one partition (several times
    cheaper than np.median on the few values here; the array methods skip numpy's wrappers,
    which cost more than the partition itself)."""
    k = x.shape[axis] // 2
    lead = (slice(None),) * (axis % x.ndim)
    part = x.copy()
    if x.shape[axis] % 2:
        part.partition(k, axis=axis)
        return np.asarray(part[(*lead, k)], dtype=np.float64)
    part.partition((k - 1, k), axis=axis)
    return np.asarray((part[(*lead, k - 1)] + part[(*lead, k)]) / 2, dtype=np.float64)


def mixing(
    sigma: float | FloatArray, offset: float | FloatArray, heights: tuple[float, ...] = SAMPLE_HEIGHTS
) -> FloatArray:
    """(heights, 3): the shares of the chip below, the chip itself and the chip above in a
    sample taken at each fraction of a chip's height, when blur spreads the side by a Gaussian
    of `sigma` chips and the chip really spans [offset, 1 + offset]. Chips two away are counted
    with the nearer neighbour (a few percent at most with sigma up to 0.7 chip). With arrays of
    sigmas and offsets (one shape), one such table for each: (..., heights, 3)."""
    f = np.asarray(heights, dtype=np.float64) - np.asarray(offset, dtype=np.float64)[..., None]
    s = np.maximum(np.asarray(sigma, dtype=np.float64), 1e-3)[..., None]
    below = _phi(-f / s)
    above = 1.0 - _phi((1.0 - f) / s)
    return np.stack([below, 1.0 - below - above, above], axis=-1)


def _best(candidates: IntArray, marginals: FloatArray) -> tuple[IntArray, FloatArray]:
    """The best sequence (colour indices) and each chip's margin from the chain's min-marginals."""
    order = np.argsort(marginals, axis=1)
    rows = np.arange(len(marginals))
    sequence = candidates[rows, order[:, 0]]
    if marginals.shape[1] < 2:
        return sequence, np.full(len(marginals), np.inf)
    return sequence, marginals[rows, order[:, 1]] - marginals[rows, order[:, 0]]


def viterbi(cost: FloatArray) -> tuple[float, FloatArray]:
    """Best total and min-marginals of a chain whose link i costs `cost[i, a, b, c]` for chip i of
    colour (candidate) b between a below and c above. cost: (n, K, K, K); chip 0 uses a = 0 (the
    felt) and chip n - 1 uses c = 0 (its top face). Returns (best total, (n, K) the best total
    with chip i forced to each candidate)."""
    totals, marginals = viterbi_batch(cost[None])
    return float(totals[0]), marginals[0]


def viterbi_batch(cost: FloatArray) -> tuple[FloatArray, FloatArray]:
    """`viterbi` for B chains at once (one per blur and offset): cost (B, n, K, K, K) ->
    totals (B,), min-marginals (B, n, K).

    The backward pass is the forward pass of the chain read from the top with each link's a and
    c swapped, so both run as one batch of 2B chains: half the (small, overhead-bound) numpy
    calls, and the same sums and minima as two separate passes."""
    b_n, n, k = cost.shape[0], cost.shape[1], cost.shape[3]
    if n == 1:
        alone = cost[:, 0, 0, :, 0]
        return alone.min(axis=1), alone[:, None, :].copy()
    chains = np.concatenate([cost, cost[:, ::-1].transpose(0, 1, 4, 3, 2)])  # 2B, n, K, K, K
    # forward[i][b, c] = best cost of links 0..i with link i's colour b and the next's c: for the
    # first B chains alpha (from the bottom), for the last B beta of chip n - 2 - i with b, c swapped
    forward = np.empty((n - 1, 2 * b_n, k, k))
    forward[0] = chains[:, 0, 0]
    step = np.empty((2 * b_n, k, k, k))
    for i in range(1, n - 1):
        np.add(forward[i - 1][:, :, :, None], chains[:, i], out=step)
        np.minimum.reduce(step, axis=1, out=forward[i])
    total = forward[:, :b_n] + forward[::-1, b_n:].transpose(0, 1, 3, 2)  # n - 1, B, K, K
    marginals = np.empty((b_n, n, k))
    marginals[:, : n - 1] = total.min(axis=3).transpose(1, 0, 2)
    marginals[:, n - 1] = total[n - 2].min(axis=1)
    return total[0].min(axis=(1, 2)), marginals


def _named(
    candidates: IntArray, cost: FloatArray, totals: FloatArray, marginals: FloatArray
) -> tuple[IntArray, FloatArray, float, FloatArray, IntArray, FloatArray]:
    """The sequence of the best-fitting of several blurs and offsets (cost: their chains, as
    `viterbi_batch` takes them), each chip's margin over all of them (another colour is only as
    far as its best fit under any of them: the offset is not known well enough to rule it out),
    the best total, each chip's own link cost in that best explanation (its fit) and each
    chip's runner-up colour (the same colour when it has no other candidate), and how much worse
    each candidate is than the chosen one (n, K)."""
    best = int(np.argmin(totals))
    sequence, _ = _best(candidates, marginals[best])
    over_all = marginals.min(axis=0)  # n, K
    rows = np.arange(len(candidates))
    chosen = np.argmin(marginals[best], axis=1)
    others = over_all.copy()
    others[rows, chosen] = np.inf
    margins = others.min(axis=1) - over_all[rows, chosen] if others.shape[1] > 1 else np.full(len(rows), np.inf)
    rivals = candidates[rows, np.argmin(others, axis=1)] if others.shape[1] > 1 else sequence
    below = np.concatenate([[0], chosen[:-1]])  # the felt under the bottom chip is link 0's a = 0
    above = np.concatenate([chosen[1:], [0]])  # the top face over the top chip is the last link's c = 0
    fits = cost[best, rows, below, chosen, above]
    gaps = over_all - over_all[rows, chosen][:, None]
    return sequence, margins, float(totals[best]), np.asarray(fits, dtype=np.float64), rivals, gaps


def _changes_colour(sequence: IntArray) -> bool:
    """Is a chip of the sequence unlike a neighbour? Only such a stack gets the second opinion
    (`StackNamer.hues`): in a stack of one colour no chip is odd."""
    return bool(np.any(sequence[1:] != sequence[:-1]))


def _stack(
    sequence: IntArray,
    margins: FloatArray,
    total: float,
    fits: FloatArray,
    rivals: IntArray,
    gaps: FloatArray,
    candidates: IntArray,
    opinions: Callable[[], _Opinions],
) -> NamedStack:
    return NamedStack(
        tuple(int(c) for c in sequence),
        margins,
        total / len(sequence),
        fits,
        tuple(int(c) for c in rivals),
        options=candidates,
        option_gaps=gaps,
        opinions=opinions,
    )


class StackNamer:
    """Names stacks of chips whose edge colours are `chip_rgb` (C, 3), standing on felt of
    colour `felt_rgb`, from white-balanced samples of their side (the felt seen as `felt_rgb`).

    Arrays are laid out colour channel first and the long axes last: numpy's inner loops over
    axes of 3 cost several times more than the arithmetic."""

    def __init__(self, chip_rgb: npt.ArrayLike, felt_rgb: npt.ArrayLike) -> None:
        self.colours = np.asarray(chip_rgb, dtype=np.float64).reshape(-1, 3)
        self.felt = np.asarray(felt_rgb, dtype=np.float64).reshape(3)
        self._norm2 = np.sum(self.colours**2, axis=1)
        self._felt_norm2 = float(self.felt @ self.felt)
        self._bright = self.colours.sum(axis=1) > 150  # colours whose brightness fit is steady
        spread = self.colours.max(axis=1) - self.colours.min(axis=1)
        self._colourful = spread > 0.4 * self.colours.max(axis=1)  # not greys: their light is not a blend's
        self._levels = np.array(LEVELS)

    def name(
        self, samples: npt.ArrayLike, felt_samples: npt.ArrayLike, px_per_chip: float, extra_blur_px: float = 0.0
    ) -> NamedStack:
        """samples: (n, len(SAMPLE_HEIGHTS), angles, 3) RGB on the stack's near side, chip i at
        heights (i + SAMPLE_HEIGHTS) chip thicknesses; felt_samples: (angles, 3) RGB of the felt
        just in front of the stack; px_per_chip: how tall a chip's edge is in the frame;
        extra_blur_px: a blur (Gaussian sigma) the frame has beyond the sharp frames SIGMAS_PX
        were measured on, added to each of them."""
        first_blur, first_blurs, blurs, around = _blur_grid(
            round(float(px_per_chip), 2), round(float(extra_blur_px), 2)
        )
        seen = np.asarray(samples, dtype=np.float64).transpose(3, 0, 1, 2).copy()  # 3, n, S, A
        under = np.asarray(felt_samples, dtype=np.float64).reshape(-1, 3)  # A, 3: what the bottom chip blurs into
        felt_seen = _middle(under, 0)
        # the top face is lit like the felt beside the stack (the frame's light varies across it,
        # by a few tens of percent at most: a printed line under the samples must not count more)
        local = min(max(float(felt_seen @ self.felt) / self._felt_norm2, LOCAL_LIGHT[0]), LOCAL_LIGHT[1])
        top = self.colours * local
        log_b = np.log(np.maximum(seen.sum(axis=0), 3.0))  # n, S, A: each sample's brightness
        profile = self._profile(log_b, None)
        _, agree = self._agreeing(seen, profile)
        profile = self._profile(log_b, agree)  # again without the edge spots
        rows, _ = self._robust_rows(seen, profile)
        guess = self._first_level(rows)
        best: tuple[IntArray, FloatArray, float, IntArray, float, FloatArray, IntArray, FloatArray] | None = None
        # a lone chip's middle is half felt and half top face: its light is guessed from little,
        # so it is tried dimmer and brighter too, keeping the level that explains the side best
        for level in [guess * f for f in (LONE_CHIP_LEVELS if seen.shape[1] == 1 else (1.0,))]:
            candidates = self._candidates(rows, felt_seen, top, level, first_blur)
            cost = self._exact_costs(seen, profile, under, top, candidates, level, first_blurs)
            sequence, margins, total, chip_fits, rivals, gaps = _named(candidates, cost, *viterbi_batch(cost))
            if best is None or total < best[2]:
                best = (sequence, margins, total, candidates, level, chip_fits, rivals, gaps)
        assert best is not None
        sequence, margins, total, candidates, level, chip_fits, rivals, gaps = best
        first_level = level
        if margins.min() >= SURE_AT_FIRST and not _changes_colour(sequence):

            def lab_only() -> _Opinions:
                return self._lab(seen, profile, under, local, first_level, blurs, sequence), None, None

            return _stack(sequence, margins, total, chip_fits, rivals, gaps, candidates, lab_only)
        if margins.min() >= SURE_AT_FIRST:

            def first_opinions() -> _Opinions:
                # the blur and the bands' offset that explain that first answer best (the second
                # opinion takes the neighbours' shares off each chip with them: a share too large,
                # on a dark chip, leaves the complement of the neighbour's colour)
                fits = self._sequence_costs(
                    seen, profile, under, top, sequence, np.full(len(blurs), first_level), blurs
                )
                hue_off, hue_gaps = self.hues(
                    seen, profile, under, top, sequence, first_level, blurs[int(np.argmin(fits))]
                )
                return self._lab(seen, profile, under, local, first_level, blurs, sequence), hue_off, hue_gaps

            return _stack(sequence, margins, total, chip_fits, rivals, gaps, candidates, first_opinions)
        # the blur and the bands' offset that explain that first answer best
        fits = self._sequence_costs(seen, profile, under, top, sequence, np.full(len(blurs), level), blurs)
        chosen = int(np.argmin(fits))
        # blur, the bands' offset and the light level refitted to that first answer, then named again
        levels = level * self._levels
        fits = self._sequence_costs(
            seen,
            profile,
            under,
            top,
            sequence,
            levels,
            blurs[np.full(len(levels), chosen)],  # the chosen one for each level
        )
        level = float(levels[int(np.argmin(fits))])
        cost = self._exact_costs(seen, profile, under, top, candidates, level, around[chosen])
        totals, marginals = viterbi_batch(cost)
        sequence, margins, total, chip_fits, rivals, gaps = _named(candidates, cost, totals, marginals)
        weights = around[chosen][int(np.argmin(totals))]
        refitted = level

        def opinions() -> _Opinions:
            lab = self._lab(seen, profile, under, local, refitted, blurs, sequence)
            if not _changes_colour(sequence):
                return lab, None, None
            hue_off, hue_gaps = self.hues(seen, profile, under, top, sequence, refitted, weights)
            return lab, hue_off, hue_gaps

        return _stack(sequence, margins, total, chip_fits, rivals, gaps, candidates, opinions)

    # -- the second opinion: each chip's colour free of its lightness --------------------

    def hues(
        self,
        seen: FloatArray,
        profile: FloatArray,
        under: FloatArray,
        top: FloatArray,
        sequence: IntArray,
        level: float,
        weights: FloatArray,
    ) -> tuple[FloatArray, FloatArray]:
        """(n, C) each chip's distance from each colour in a measure free of lightness, and
        (n, C) how far the colour it is named is from each colour in that measure at the chip's
        brightness (see NamedStack.hue_off).

        The model above draws every chip at one light level: a chip darkened or faded by wear
        is explained there by the colour nearest in RGB at that level, which may be black or a
        dim white. Here the neighbours' shares (as named, with the mixing that fits best) are
        taken off each sample, and what is left, the chip's own share, is matched at each
        angle to each colour at whatever brightness fits it best: what remains is its distance
        from that colour's direction in RGB (the light is a gain on RGB: a colour darkened or
        lit brighter keeps its direction). Mean over the KEEP angles that fit best (edge
        spots), per sample, as the model's costs. The gap is how far apart two directions are
        at the brightness of the chip's own share: a white and a black chip (one direction, a
        grey) are never told apart this way, a dark purple and a black are."""
        _, n, s, a_n = seen.shape
        shade = level * profile  # A: the light at each angle (a gain: it changes no direction)
        below = np.empty((3, n, a_n))
        below[:, 0] = under.T
        below[:, 1:] = self.colours[sequence[:-1]].T[:, :, None] * shade
        above = np.empty((3, n, a_n))
        above[:, :-1] = self.colours[sequence[1:]].T[:, :, None] * shade
        above[:, -1] = top[sequence[-1]][:, None]
        w = weights.T[:, None, :, None]  # (below, own, above), 1, S, 1
        own = seen - w[0] * below[:, :, None] - w[2] * above[:, :, None]  # 3, n, S, A: each chip's own share
        x = own.transpose(1, 3, 0, 2).reshape(n, a_n, 3 * s)  # n, A, (channel, height)
        # each colour's own share at every height, one direction in that space (C, 3 * S)
        drawn = (self.colours[:, :, None] * weights[:, 1]).reshape(len(self.colours), 3 * s)
        unit = drawn / np.maximum(np.linalg.norm(drawn, axis=1, keepdims=True), 1e-9)
        # the top chip's top face is the colour it is given: its share above differs with that colour
        roof = ((top[sequence[-1]] - top)[:, :, None] * weights[:, 2]).reshape(len(self.colours), 3 * s)
        along = x @ unit.T  # n, A, C
        square = np.broadcast_to(np.einsum("nax,nax->na", x, x)[:, :, None], along.shape).copy()
        last = x[-1][:, None, :] + roof[None]  # A, C, 3 * S
        along[-1] = np.einsum("acx,cx->ac", last, unit)
        square[-1] = np.einsum("acx,acx->ac", last, last)
        # what is left at the brightness that fits best (none when the colour points away), per sample
        off = np.sqrt(np.maximum(square - np.maximum(along, 0.0) ** 2, 0.0) / s).transpose(0, 2, 1)  # n, C, A
        off.sort(axis=-1)
        off = off[:, :, : min(KEEP, a_n)].mean(axis=-1)
        cos = np.clip(unit[sequence] @ unit.T, -1.0, 1.0)  # n, C
        # the own share's brightness (per sample, the middle of the angles: spots are brighter or darker)
        bright = _middle(np.sqrt(square[:, :, 0] / s), 1)
        return np.asarray(off, dtype=np.float64), np.asarray(bright[:, None] * np.sqrt(1.0 - cos * cos))

    # -- each chip's own colour, whatever it is named ------------------------------------

    def _lab(
        self,
        seen: FloatArray,
        profile: FloatArray,
        under: FloatArray,
        local: float,
        level: float,
        weights: FloatArray,
        sequence: IntArray,
    ) -> FloatArray:
        """Each chip's own colour's (`own_colours`) distances in Lab from each colour (`lab_off`)."""
        return self.lab_off(self.own_colours(seen, profile, under, local, level, weights), level, sequence)

    def lab_off(self, own: FloatArray, level: float, sequence: IntArray) -> FloatArray:
        """(n, C) each chip's own colour (n, 3) against each colour in Lab, at the gain on the light
        (LAB_GAINS: the model's level is fitted in RGB, to the sequence it names, and a stack of
        dark chips says little about it) that brings the chips nearest the colours of `sequence`
        (the sum of their distances). The sensor clips: a colour is compared as it would be
        seen at that light (255 at most), the chip's colour as seen."""
        gains = np.asarray(LAB_GAINS)[:, None, None]
        cap = 255.0 / (gains * level)  # G, 1, 1
        n = len(own)
        both = to_lab(np.concatenate([np.minimum(own[None] / gains, cap), np.minimum(self.colours[None], cap)], axis=1))
        mine, theirs = both[:, :n], both[:, n:]  # G, n, 3 and G, C, 3
        d = np.sqrt(np.sum((mine[:, :, None] - theirs[:, None]) ** 2, axis=-1))  # G, n, C
        best = int(np.argmin(d[:, np.arange(len(sequence)), sequence].sum(axis=1)))
        return np.asarray(d[best], dtype=np.float64)

    @staticmethod
    def own_colours(
        seen: FloatArray, profile: FloatArray, under: FloatArray, local: float, level: float, weights: FloatArray
    ) -> FloatArray:
        """(n, 3) each chip's own colour (RGB at the felt's light, as the chip colours are given),
        whatever it is named: at each angle the side is deblurred (least squares: every sample is
        the mixing's shares of the chip below, the chip and the one above, the felt under the
        bottom chip and the top chip's own top face, lit like the felt, over it) under each of
        the mixings `weights` (B, S, 3), the one that leaves least unexplained at the KEEP angles
        that fit best is kept, each chip's colour at each angle is divided by the light there
        and the middle of the angles taken (edge spots are a few angles at most)."""
        _, n, s, a_n = seen.shape
        b_n = weights.shape[0]
        shade = level * profile  # A
        wb, wo, wa = weights[:, :, 0], weights[:, :, 1], weights[:, :, 2]  # B, S
        # one matrix for every angle: the top face's share is taken at the middle of the light
        m = np.zeros((b_n, n, s, n))
        chips = np.arange(n)
        m[:, chips, :, chips] = wo[None]
        if n > 1:
            m[:, chips[1:], :, chips[:-1]] = wb[None]
            m[:, chips[:-1], :, chips[1:]] = wa[None]
        m[:, n - 1, :, n - 1] += wa * (local / level)
        mat = m.reshape(b_n, n * s, n)
        rhs = np.broadcast_to(seen, (b_n, 3, n, s, a_n)).copy()
        rhs[:, :, 0] -= wb[:, None, :, None] * under.T[None, :, None, :]  # the felt under the bottom chip
        seen_flat = rhs.transpose(0, 2, 3, 1, 4).reshape(b_n, n * s, 3 * a_n)
        mt = mat.transpose(0, 2, 1)
        lit = np.linalg.solve(mt @ mat, mt @ seen_flat)  # B, n, (3, A): each chip as lit at each angle
        left = np.sqrt(np.sum((seen_flat - mat @ lit).reshape(b_n, n * s, 3, a_n) ** 2, axis=(1, 2)))  # B, A
        left.sort(axis=1)
        best = int(np.argmin(left[:, : min(KEEP, a_n)].sum(axis=1)))
        own = np.maximum(lit[best].reshape(n, 3, a_n) / shade, 0.0)
        return np.asarray(_middle(own, 2), dtype=np.float64)

    # -- the light on the side -----------------------------------------------------------

    @staticmethod
    def _profile(log_b: FloatArray, agree: npt.NDArray[np.bool_] | None) -> FloatArray:
        """(angles,) how the light varies round the side, median 1, from the log of each sample's
        brightness (n, S, A: the sum of its RGB, 3 at least): every chip at one angle is lit
        alike, so each height's brightness across the angles has the same shape (spots aside:
        with `agree`, only the angles that agree at each height count)."""
        if agree is None:
            rel = log_b - _middle(log_b, 2)[..., None]
            p = np.exp(_middle(rel.reshape(-1, rel.shape[-1]), 0))
        else:
            counts = agree.sum(axis=2, keepdims=True)
            rel = (log_b - (log_b * agree).sum(axis=2, keepdims=True) / np.maximum(counts, 1)) * agree
            p = np.exp(rel.sum(axis=(0, 1)) / np.maximum(agree.sum(axis=(0, 1)), 1))
        return np.asarray(p / _middle(p, 0), dtype=np.float64)

    @staticmethod
    def _robust_rows(seen: FloatArray, profile: FloatArray) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
        """One colour per sampled height (3, n, S), the light profile taken off: the mean of the
        AGREEING angles that agree best with each other (the densest cluster, so edge spots and
        their blur do not pull it); and which angles those were (n, S, A)."""
        x, agree = StackNamer._agreeing(seen, profile)
        rows = (x * agree).sum(axis=-1) / agree.sum(axis=-1)
        return rows, agree

    @staticmethod
    def _agreeing(seen: FloatArray, profile: FloatArray) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
        """The samples with the light profile taken off (3, n, S, A) and, at each height, which
        AGREEING angles agree best with each other (n, S, A): `_robust_rows` without the rows
        (the first pass, before the profile is refined, needs only the angles)."""
        x = seen / profile
        _, n, s, a = x.shape
        flat = x.reshape(3, n * s, a).transpose(1, 2, 0)  # R, A, 3
        # squared distances between every two angles of each height, from one batched product
        norms = np.einsum("rac,rac->ra", flat, flat)
        d = norms[:, :, None] + norms[:, None, :] - 2.0 * (flat @ flat.transpose(0, 2, 1))  # R, A, A
        keep = min(AGREEING, a)
        nearest = d.copy()
        nearest.partition(keep - 1, axis=-1)
        centre = np.add.reduce(nearest[..., :keep], axis=-1).argmin(axis=-1)  # R: the angle with the closest company
        from_centre = d[np.arange(len(d)), centre]  # R, A
        limit = from_centre.copy()
        limit.partition(keep - 1, axis=-1)
        limit = limit[:, keep - 1 : keep]
        agree = (from_centre <= limit).reshape(n, s, a)
        return x, agree

    def _first_level(self, rows: FloatArray) -> float:
        """The light level on the side (relative to the felt's): the middle of what each chip's
        middle says, named with a free brightness (dark chips, black, say little). Without any
        colourful chip it is the brightest's: a black chip blurred with a white one is a dim
        white, and a blend only darkens the white in it."""
        mid = ((rows[:, :, 1] + rows[:, :, 2]) / 2).T  # n, 3: the middle two heights' mean
        dots = mid @ self.colours.T  # n, C
        scale = np.minimum(np.maximum(dots / self._norm2, LEVEL_RANGE[0]), LEVEL_RANGE[1])
        misfit = scale * (scale * self._norm2 - 2.0 * dots)  # the squared misfit, less |mid|^2
        best = np.argmin(misfit, axis=1)
        levels = scale[np.arange(len(best)), best]
        bright = self._bright[best]
        if not bright.any():
            return float(_middle(levels, 0))
        if self._colourful[best].any():
            return float(_middle(levels[bright], 0))
        return float(levels[bright].max())

    # -- which colours each chip may be ----------------------------------------------------

    def _candidates(
        self, rows: FloatArray, felt: FloatArray, top: FloatArray, level: float, blur: FloatArray
    ) -> IntArray:
        """(n, CANDIDATES) the colours each chip most likely is, best first: its robust colours
        per height against the model with every neighbour below and above it (the first blur),
        each colour scored with its best neighbours. A chip blurred between two others can look
        more like a third colour in its middle than like its own; the neighbours' share is what
        tells them apart. The exact model then weighs only these (3 x 3 x 3 triples a chip, not
        6 x 6 x 6)."""
        n, s = rows.shape[1], rows.shape[2]
        c = len(self.colours)
        w = blur.T[:, None, :, None]  # (below, own, above), 1, S, 1
        chips = (self.colours * level).T  # 3, C
        below = np.concatenate([chips, felt[:, None]], axis=1)  # 3, C + 1: the felt last
        above = np.empty((3, c, c + 1))  # 3, b, c: the top face last
        above[:, :, :c] = chips[:, None, :]
        above[:, :, c] = top.T
        # below's and own shares first, then above's (the order the sum was always taken in)
        lower = (w[0] * below[:, None])[:, :, :, None] + (w[1] * chips[:, None])[:, :, None, :]  # 3, S, a, b
        drawn = lower[..., None] + (w[2, :, :, :, None] * above[:, None])[:, :, None]  # 3, S, a, b, c
        width = (c + 1) * c * (c + 1)
        diff = np.subtract(
            rows[:, :, :, None], drawn.reshape(3, 1, s, width), out=_work("candidates", (3, n, s, width), np.float64)
        )
        cost = np.einsum("jnsx,jnsx->nx", diff, diff).reshape(n, c + 1, c, c + 1)
        fits = np.empty((n, c))
        if n == 1:
            fits[0] = cost[0, c, :, c]
        else:
            fits[0] = np.minimum.reduce(cost[0, c, :, :c], axis=1)
            fits[1:-1] = np.minimum.reduce(cost[1:-1, :c, :, :c], axis=(1, 3))
            fits[-1] = np.minimum.reduce(cost[-1, :c, :, c], axis=0)
        return np.asarray(np.argsort(fits, axis=1)[:, : min(CANDIDATES, c)], dtype=np.int64)

    # -- the exact model: every angle, the best KEEP of them ------------------------------

    def _lit(self, profile: FloatArray, levels: FloatArray) -> FloatArray:
        """(3, L, C, A) each chip colour as seen at each angle round the side for each light
        level, clipped as the sensor clips."""
        lit = self.colours.T[:, None, :, None] * (levels[:, None] * profile[None, :])[None, :, None, :]
        return np.asarray(np.minimum(lit, 255.0), dtype=np.float64)

    def _exact_costs(
        self,
        seen: FloatArray,
        profile: FloatArray,
        under: FloatArray,
        top: FloatArray,
        candidates: IntArray,
        level: float,
        weights: FloatArray,
    ) -> FloatArray:
        """(B, n, K, K, K): chip i's cost as candidate b between candidates a (below) and c (above)
        under each mixing (weights: B, S, 3): the mean over its KEEP best angles of the (capped)
        distance between what is seen and what the model draws, over its sampled heights.

        The bottom chip's neighbour below is always the felt and the top chip's above its own top
        face, so theirs are worked out for one a (one c) only and copied to the others. Every
        (chip, a, b, c) is one row of a (3, rows, S * B * A) array: the arithmetic then runs over
        long contiguous rows, which costs numpy a fraction of broadcasting over axes of 3. The
        large arrays are reused work arrays (`_work`)."""
        _, n, s, a_n = seen.shape
        k, b_n = candidates.shape[1], weights.shape[0]
        x_n = s * b_n * a_n  # one row: heights, mixings, angles
        kk = k * k
        rows = kk * 2 + kk * k * (n - 2) if n > 1 else k
        f32 = np.float32
        # single precision from here: the arrays are large and a tenth of a level is plenty
        lit = np.minimum(self.colours.T[:, :, None] * (level * profile), 255.0).astype(f32)  # 3, C, A
        w = weights.astype(f32).transpose(2, 1, 0)[:, :, :, None]  # (below, own, above), S, B, 1
        # every colour's share as the chip below, the chip itself and the one above, for all the
        # colours at once (fewer than a stack's candidates), then picked out per chip: (3, 3, C, S * B * A)
        shares = _work("shares", (3, 3, lit.shape[1], s, b_n, a_n), f32)
        np.multiply(w[:, None, None], lit[None, :, :, None, None, :], out=shares)
        shares = shares.reshape(3, 3, -1, x_n)
        seen32 = seen.astype(f32)[:, :, :, None, :]  # 3, n, S, 1, A
        lower_bottom = seen32[:, 0] - w[0] * under.T.astype(f32)[:, None, None, :]  # 3, S, B, A: the felt below
        mine = np.take(shares[1], candidates, axis=1, out=_work("mine", (3, n, k, x_n), f32))  # 3, n, b, X
        roof = w[2] * top[candidates[-1]].T.astype(f32)[:, :, None, None, None]  # 3, b, S, B, 1: its top face
        last = (mine[:, -1].reshape(3, k, s, b_n, a_n) + roof).reshape(3, k, x_n)  # the top chip, whatever "above" is
        diff = _work("diff", (3, rows, x_n), f32)
        if n == 1:
            np.subtract(lower_bottom.reshape(3, 1, x_n), last, out=diff)
        else:
            # what is seen less the share of each candidate a below, and the shares of b and the c above
            seen_all = _work("seen", (3, n - 1, 1, s, b_n, a_n), f32)
            np.copyto(seen_all, seen32[:, 1:, None])  # each mixing's copy of what is seen
            lower = np.take(shares[0], candidates[:-1], axis=1, out=_work("lower", (3, n - 1, k, x_n), f32))
            np.subtract(seen_all.reshape(3, n - 1, 1, x_n), lower, out=lower)
            over = np.take(shares[2], candidates[1:], axis=1, out=_work("over", (3, n - 1, k, x_n), f32))
            # numpy copies a broadcast array much faster than it computes on one: each operand is
            # broadcast by a copy, the arithmetic then runs with the other broadcast along outer axes only
            upper = _work("upper", (3, n - 1, k, k, x_n), f32)
            np.copyto(upper, mine[:, :-1, :, None])
            np.add(upper, over[:, :, None], out=upper)
            np.subtract(lower_bottom.reshape(3, 1, 1, x_n), upper[:, 0], out=diff[:, :kk].reshape(3, k, k, x_n))
            if n > 2:
                middle = diff[:, kk:-kk].reshape(3, n - 2, k, k, k, x_n)
                np.copyto(middle, lower[:, :-1].reshape(3, n - 2, k, 1, 1, x_n))
                np.subtract(middle, upper[:, 1:, None], out=middle)
            np.subtract(lower[:, -1].reshape(3, k, 1, x_n), last[:, None], out=diff[:, -kk:].reshape(3, k, k, x_n))
        np.square(diff, out=diff)
        squared = diff[0]
        np.add(squared, diff[1], out=squared)
        np.add(squared, diff[2], out=squared)
        np.minimum(squared, f32(CAP * CAP), out=squared)
        # the root in single precision, then summed over the heights in double precision
        dist = np.sqrt(squared.reshape(rows, s, b_n * a_n), out=_work("dist", (rows, s, b_n * a_n), np.float64))
        summed = np.einsum("rsx->rx", dist, out=_work("summed", (rows, b_n * a_n), np.float64))
        keep = min(KEEP, a_n)
        by_angle = summed.reshape(rows * b_n, a_n)
        by_angle.sort(axis=-1)
        fit = by_angle[:, 0].copy()  # the KEEP best angles summed column by column: a sum along rows of 5 is slow
        for j in range(1, keep):
            fit += by_angle[:, j]
        fit = fit.reshape(rows, b_n).T / (keep * s)  # B, rows
        cost = np.empty((b_n, n, k, k, k))
        if n == 1:
            cost[:, 0] = fit[:, None, :, None]
            return cost
        cost[:, 0] = fit[:, None, :kk].reshape(b_n, 1, k, k)
        cost[:, 1:-1] = fit[:, kk:-kk].reshape(b_n, n - 2, k, k, k)
        cost[:, -1] = fit[:, -kk:].reshape(b_n, k, k, 1)
        return cost

    def _sequence_costs(
        self,
        seen: FloatArray,
        profile: FloatArray,
        under: FloatArray,
        top: FloatArray,
        sequence: IntArray,
        levels: FloatArray,
        blurs: FloatArray,
    ) -> FloatArray:
        """(G,) the cost of one colour sequence under each light level (G,) and blur and offset
        (the mixing shares, (G, S, 3))."""
        a_n = seen.shape[-1]
        lit = self._lit(profile, levels)  # 3, G, C, A
        own = lit[:, :, sequence]  # 3, G, n, A
        drawn = np.empty((*own.shape[:3], 3, a_n))  # 3, G, n, (below, own, above), A
        drawn[:, :, 1:, 0] = own[:, :, :-1]
        drawn[:, :, 0, 0] = under.T[:, None, :]
        drawn[:, :, :, 1] = own
        drawn[:, :, :-1, 2] = own[:, :, 1:]
        drawn[:, :, -1, 2] = top[sequence[-1]][:, None, None]
        diff = seen[:, None] - blurs[None, :, None] @ drawn  # 3, G, n, S, A
        dist = np.sqrt(np.minimum(np.einsum("j...,j...->...", diff, diff), CAP * CAP)).sum(axis=-2)  # G, n, A
        keep = min(KEEP, a_n)
        return np.asarray(np.partition(dist, keep - 1, axis=-1)[..., :keep].sum(axis=(1, 2)), dtype=np.float64)


# a frame's stacks each have their own chip height (to 0.01 px): enough for every height seen
@functools.lru_cache(maxsize=1024)
def _blur_grid(px_per_chip: float, extra_px: float = 0.0) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """For chips this many pixels tall (the blur and the offsets are about pixels, the model
    about chips): the first guess's mixing shares (S, 3) and the same at the offsets either side
    (3, S, 3); the refit grid (G, S, 3); and each grid point at the offsets either side (G, 3, S, 3)."""
    chip = max(px_per_chip, 0.5)
    near = np.array((-OFFSET_DOUBT_PX, 0.0, OFFSET_DOUBT_PX))
    first = mixing(np.full(len(near), math.hypot(FIRST_SIGMA_PX, extra_px) / chip), near / chip)
    sigmas_px = tuple(math.hypot(s, extra_px) for s in SIGMAS_PX)
    settings = np.array(list(itertools.product(sigmas_px, OFFSETS_PX)))  # G, (sigma, offset)
    sigmas, offsets = settings[:, 0], settings[:, 1]
    grid = mixing(sigmas / chip, offsets / chip)
    around = mixing(np.repeat(sigmas[:, None] / chip, len(near), axis=1), (offsets[:, None] + near) / chip)
    return first[1], first, grid, around


@functools.lru_cache(maxsize=16)
def namer_for(chip_rgb: tuple[tuple[int, int, int], ...], felt_rgb: tuple[float, float, float]) -> StackNamer:
    """One namer per chip set and felt (building one precomputes the blur grid)."""
    return StackNamer(chip_rgb, felt_rgb)
