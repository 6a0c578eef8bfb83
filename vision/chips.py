"""The chip set: each denomination's colour and edge spots, checked to be told apart.

Chips are 39 mm across and 3.3 mm thick. A denomination is told by the colour of its edge as
the camera sees it on the side of a stack; the edge spots (small inserts of another colour) are
drawn by the simulator and outvoted by the reader, which names every chip of a stack at once
(vision/stack_colours.py). The default set is the usual US one (README in this package):

    1 white, 5 red, 25 green, 100 black, 500 purple, 1000 orange

    chips = ChipSet.default()
    chips.by_value(25).colour   # -> (31, 138, 63)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

CHIP_DIAMETER_MM = 39.0
CHIP_THICKNESS_MM = 3.3
MIN_COLOUR_DISTANCE = 40.0  # Lab units between any two chip colours, and between a chip and the felt


class ChipSetError(ValueError):
    """A chip set the reader could not tell apart; the text names the file and the key."""


def parse_colour(value: Any) -> tuple[int, int, int]:
    """`"#rrggbb"` -> (r, g, b)."""
    if not isinstance(value, str) or len(value) != 7 or value[0] != "#":
        raise ValueError(f'must be a colour "#rrggbb", not {value!r}')
    try:
        return (int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16))
    except ValueError:
        raise ValueError(f'must be a colour "#rrggbb", not {value!r}') from None


def to_lab(rgb: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """sRGB 0-255 (..., 3) -> CIE Lab (..., 3), D65."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


@dataclass(frozen=True)
class EdgeSpots:
    count: int
    colour: tuple[int, int, int]
    degrees: float  # arc of each spot


@dataclass(frozen=True)
class Chip:
    value: int  # chip units
    colour: tuple[int, int, int]  # RGB of the edge and face
    spots: EdgeSpots


DEFAULT_CHIPS: tuple[Chip, ...] = (
    Chip(1, (236, 235, 230), EdgeSpots(6, (176, 48, 48), 14.0)),
    Chip(5, (184, 32, 42), EdgeSpots(6, (242, 242, 238), 14.0)),
    Chip(25, (31, 138, 63), EdgeSpots(6, (242, 242, 238), 14.0)),
    Chip(100, (28, 28, 30), EdgeSpots(6, (242, 242, 238), 14.0)),
    Chip(500, (122, 42, 138), EdgeSpots(6, (242, 242, 238), 14.0)),
    Chip(1000, (224, 120, 24), EdgeSpots(6, (28, 28, 30), 14.0)),
)


class ChipSet:
    """The denominations on a table, in order of value, with their colours (`colours`, RGB)."""

    def __init__(self, chips: Sequence[Chip]) -> None:
        self.chips = tuple(sorted(chips, key=lambda c: c.value))
        self._rgb = np.array([c.colour for c in self.chips], dtype=np.float64)

    @classmethod
    def default(cls) -> ChipSet:
        return cls(DEFAULT_CHIPS)

    def by_value(self, value: int) -> Chip:
        for chip in self.chips:
            if chip.value == value:
                return chip
        raise KeyError(f"no {value} chip in this chip set (values: {', '.join(str(c.value) for c in self.chips)})")

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(c.value for c in self.chips)

    @property
    def colours(self) -> npt.NDArray[np.float64]:
        """(chips, 3) RGB, in the order of `chips`."""
        return self._rgb

    @classmethod
    def from_config(cls, entries: Any, where: str, *, felt: tuple[int, int, int], ink: tuple[int, int, int]) -> ChipSet:
        """Parse `[[chips]]` entries (None: the default set); check that every colour can be told
        from the others and from the felt and its printing."""
        if entries is None:
            chipset = cls.default()
        else:
            chips = chips_from_config(entries, where)
            seen: set[int] = set()
            for i, chip in enumerate(chips):
                if chip.value in seen:
                    raise ChipSetError(f"{where}[{i}].value: {chip.value} is listed twice")
                seen.add(chip.value)
            chipset = cls(chips)
        chipset._check_distinct(where, felt, ink)
        return chipset

    def _check_distinct(self, where: str, felt: tuple[int, int, int], ink: tuple[int, int, int]) -> None:
        labs = {chip.value: to_lab(chip.colour) for chip in self.chips}
        for background, what in ((felt, "the felt"), (ink, "the printed ink")):
            for chip in self.chips:
                # spots too: one at the top's far edge would cut the stack short
                for part, colour in (("colour", chip.colour), ("edge spots' colour", chip.spots.colour)):
                    d = float(np.linalg.norm(to_lab(colour) - to_lab(background)))
                    if d < MIN_COLOUR_DISTANCE and (part == "colour" or chip.spots.count):
                        raise ChipSetError(
                            f"{where}: the {chip.value} chip's {part} is too close to {what} "
                            f"(Lab distance {d:.0f} < {MIN_COLOUR_DISTANCE:g}): the camera could not see the stack"
                        )
        for i, a in enumerate(self.chips):
            for b in self.chips[i + 1 :]:
                d = float(np.linalg.norm(labs[a.value] - labs[b.value]))
                if d < MIN_COLOUR_DISTANCE:
                    raise ChipSetError(
                        f"{where}: the {a.value} and {b.value} chips' colours are too close "
                        f"(Lab distance {d:.0f} < {MIN_COLOUR_DISTANCE:g}): the camera could not tell them apart"
                    )


def from_lab(lab: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """CIE Lab (..., 3), D65 -> sRGB 0-255 (..., 3), clipped to the gamut: `to_lab` undone."""
    lab = np.asarray(lab, dtype=np.float64)
    fy = (lab[..., 0] + 16) / 116
    f = np.stack([fy + lab[..., 1] / 500, fy, fy - lab[..., 2] / 200], axis=-1)
    xyz = np.where(f > 0.206893, f**3, (f - 16 / 116) / 7.787) * np.array([0.95047, 1.0, 1.08883])
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    lin = np.clip(xyz @ np.linalg.inv(m).T, 0.0, 1.0)
    c = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return np.asarray(c * 255.0, dtype=np.float64)


def chips_from_config(entries: Any, where: str) -> list[Chip]:
    """`[[chips]]` entries (value, colour, spots) as chips, each checked on its own (not yet
    against each other: `ChipSet.from_config` does that)."""
    if not isinstance(entries, list) or not entries:
        raise ChipSetError(f"{where}: must be a list of chips ([[chips]] value, colour, spots)")
    return [_chip(entry, f"{where}[{i}]") for i, entry in enumerate(entries)]


def chip_to_config(chip: Chip) -> dict[str, Any]:
    """One chip as a `[[chips]]` entry (the inverse of the parser)."""

    def hexed(rgb: tuple[int, int, int]) -> str:
        return "#{:02x}{:02x}{:02x}".format(*rgb)

    spots = chip.spots
    return {
        "value": chip.value,
        "colour": hexed(chip.colour),
        "spots": {"count": spots.count, "colour": hexed(spots.colour), "degrees": spots.degrees},
    }


def _chip(entry: Any, key: str) -> Chip:
    if not isinstance(entry, dict) or set(entry) - {"value", "colour", "spots"} or "value" not in entry:
        raise ChipSetError(f"{key}: a chip is {{ value, colour, spots }}")
    value = entry["value"]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        raise ChipSetError(f"{key}.value: must be a whole number of chip units 1-1000000, not {value!r}")
    try:
        colour = parse_colour(entry.get("colour"))
    except ValueError as exc:
        raise ChipSetError(f"{key}.colour: {exc}") from None
    spots = entry.get("spots", {"count": 0, "colour": "#ffffff", "degrees": 0.0})
    if not isinstance(spots, dict) or set(spots) != {"count", "colour", "degrees"}:
        raise ChipSetError(f"{key}.spots: must be {{ count, colour, degrees }}")
    count, degrees = spots["count"], spots["degrees"]
    if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 16:
        raise ChipSetError(f"{key}.spots.count: must be 0-16, not {count!r}")
    if isinstance(degrees, bool) or not isinstance(degrees, int | float) or not degrees >= 0:
        raise ChipSetError(f"{key}.spots.degrees: must be a positive arc in degrees, not {degrees!r}")
    if count * degrees > 150 or not math.isfinite(degrees):
        raise ChipSetError(
            f"{key}.spots: {count} spots of {degrees:g} degrees cover more than 150 of 360 degrees; "
            "the edge colour must stay the majority"
        )
    try:
        spot_colour = parse_colour(spots["colour"])
    except ValueError as exc:
        raise ChipSetError(f"{key}.spots.colour: {exc}") from None
    return Chip(value, colour, EdgeSpots(count, spot_colour, float(degrees)))
