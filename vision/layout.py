"""Table layouts: the zones the camera reads and the calibration markers, in table millimetres.

A layout is a TOML file (`hardware/layouts/*.toml`). The table frame has its origin at the
dealer's left corner of the felt, x along the dealer's edge to the dealer's right, y away from
the dealer toward the players, z up. Zones are printed circles named `seat3.first`,
`seat3.first.payout`, `seat3.puck`...; every error names the file and the key.

    layout = Layout.load("hardware/layouts/grand-slam-7.toml")
    layout.zones["seat3.first"].centre      # (x, y) in mm
    layout.markers[0].corners               # 4 x 2, ArUco corner order
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt

from hardware import shipped
from vision.chips import CHIP_DIAMETER_MM, ChipSet, ChipSetError, parse_colour

#: The layouts shipped with tablectl (package data): a bare layout name is read from here, a path as given.
LAYOUTS_DIR = shipped("layouts")
DEFAULT_LAYOUT = "grand-slam-7"
DICTIONARIES = ("DICT_4X4_50", "DICT_4X4_100", "DICT_5X5_50", "DICT_5X5_100", "DICT_6X6_50", "DICT_APRILTAG_36h11")
ZONE_NAME = re.compile(r"^seat([1-9])\.([a-z][a-z_]*)(\.payout)?$")
MIN_GAP_MM = 10.0  # printed circles closer than this could hold one stack touching both

FloatArray = npt.NDArray[np.float64]


class LayoutError(ValueError):
    """A layout file the vision cannot use; the text names the file and the key."""


@dataclass(frozen=True)
class Zone:
    """A printed circle on the felt: a wager spot, its payout area, or a puck spot."""

    name: str
    x: float
    y: float
    r: float

    @property
    def seat(self) -> int:
        return int(self.name[4 : self.name.index(".")])

    @property
    def kind(self) -> str:
        """ "wager", "payout" or "puck"."""
        if self.name.endswith(".payout"):
            return "payout"
        if self.name.endswith(".puck"):
            return "puck"
        return "wager"

    @property
    def centre(self) -> tuple[float, float]:
        return (self.x, self.y)

    def holds(self, x: float, y: float) -> bool:
        return math.hypot(x - self.x, y - self.y) <= self.r


@dataclass(frozen=True)
class Marker:
    """A calibration marker printed on the felt: its id and its four corners (mm, z = 0)."""

    id: int
    corners: FloatArray  # 4 x 2, ArUco order: the marker image's TL, TR, BR, BL

    @property
    def side_mm(self) -> float:
        return float(np.mean(np.linalg.norm(self.corners - np.roll(self.corners, 1, axis=0), axis=1)))


@dataclass(frozen=True)
class PuckSpec:
    """The pucks' markers: a dictionary, an id per puck name, and the puck's size."""

    dictionary: str
    ids: dict[str, int]
    marker_mm: float
    diameter_mm: float
    height_mm: float

    def name_of(self, marker_id: int) -> str | None:
        for name, known in self.ids.items():
            if known == marker_id:
                return name
        return None


@dataclass(frozen=True)
class Layout:
    """Everything printed on one table's felt that the camera uses, and the chips it reads."""

    name: str
    source: str
    width_mm: float
    depth_mm: float
    felt: tuple[int, int, int]  # RGB
    ink: tuple[int, int, int]
    max_stack_chips: int
    marker_dictionary: str
    markers: dict[int, Marker]
    pucks: PuckSpec
    zones: dict[str, Zone]
    chips: ChipSet

    @classmethod
    def load(cls, path: str | Path) -> Layout:
        """Read and validate a layout file; a bare name means `hardware/layouts/<name>.toml`."""
        chosen = resolve_layout_path(path)
        try:
            doc = tomllib.loads(chosen.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LayoutError(f"{chosen}: no such layout file") from None
        except tomllib.TOMLDecodeError as exc:
            raise LayoutError(f"{chosen}: not valid TOML: {exc}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise LayoutError(f"{chosen}: cannot be read: {exc}") from None
        return parse_layout(doc, str(chosen))

    def chip_zones(self) -> list[Zone]:
        return [zone for zone in self.zones.values() if zone.kind != "puck"]

    def zone_at(self, x: float, y: float) -> Zone | None:
        """The zone whose printed circle holds the point, if any."""
        for zone in self.zones.values():
            if zone.holds(x, y):
                return zone
        return None

    def marker_points(self, ids: list[int]) -> FloatArray:
        """The corners of the given markers as 3D points on the felt (z = 0), 4 per marker."""
        pts = np.concatenate([self.markers[i].corners for i in ids]) if ids else np.zeros((0, 2))
        return np.hstack([pts, np.zeros((len(pts), 1))])


def resolve_layout_path(path: str | Path) -> Path:
    text = str(path)
    if "/" not in text and not text.endswith(".toml"):
        return LAYOUTS_DIR / f"{text}.toml"
    return Path(path)


def parse_layout(doc: dict[str, Any], source: str) -> Layout:
    """Validate a parsed layout document; raise LayoutError naming `source` and the key."""
    r = _Fields(doc, source)
    for section in doc:
        if section not in ("layout", "markers", "pucks", "zones", "chips"):
            r.fail(section, "unknown section; the sections are chips, layout, markers, pucks, zones")
    width = r.number("layout.width_mm", low=100.0, high=5000.0)
    depth = r.number("layout.depth_mm", low=100.0, high=5000.0)
    max_chips = int(r.number("layout.max_stack_chips", low=1, high=60, whole=True))
    felt = r.colour("layout.felt")
    ink = r.colour("layout.ink")
    name = r.text("layout.name")
    markers = _markers(r, width, depth)
    pucks = _pucks(r, markers)
    zones = _zones(r, width, depth)
    try:
        chips = ChipSet.from_config(doc.get("chips"), f"{source}: chips", felt=felt, ink=ink)
    except ChipSetError as exc:
        raise LayoutError(str(exc)) from None
    return Layout(
        name=name,
        source=source,
        width_mm=width,
        depth_mm=depth,
        felt=felt,
        ink=ink,
        max_stack_chips=max_chips,
        marker_dictionary=r.choice("markers.dictionary", DICTIONARIES),
        markers=markers,
        pucks=pucks,
        zones=zones,
        chips=chips,
    )


def _markers(r: _Fields, width: float, depth: float) -> dict[int, Marker]:
    entries = r.get("markers.marker")
    if not isinstance(entries, list) or len(entries) < 4:
        r.fail("markers.marker", "needs at least 4 calibration markers ([[markers.marker]] with id and corners)")
    markers: dict[int, Marker] = {}
    for i, entry in enumerate(entries):
        key = f"markers.marker[{i}]"
        if not isinstance(entry, dict) or set(entry) != {"id", "corners"}:
            r.fail(key, "must have exactly the keys id and corners")
        marker_id = entry["id"]
        if isinstance(marker_id, bool) or not isinstance(marker_id, int) or not 0 <= marker_id < 1000:
            r.fail(f"{key}.id", f"must be a marker id 0-999, not {marker_id!r}")
        if marker_id in markers:
            r.fail(f"{key}.id", f"marker {marker_id} is listed twice")
        corners = _point_list(r, f"{key}.corners", entry["corners"], 4)
        _check_square(r, f"{key}.corners", corners)
        if corners.min() < 0 or corners[:, 0].max() > width or corners[:, 1].max() > depth:
            r.fail(f"{key}.corners", f"must lie on the felt (0-{width:g} x 0-{depth:g} mm)")
        markers[marker_id] = Marker(marker_id, corners)
    return markers


def _check_square(r: _Fields, key: str, corners: FloatArray) -> None:
    sides = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
    if sides.min() < 20.0:
        r.fail(key, f"a marker side of {sides.min():.1f} mm is too small to be seen (20 mm at least)")
    if sides.max() - sides.min() > 1.0:
        r.fail(key, "the four corners must form a square (side lengths differ by more than 1 mm)")
    # ArUco corners run clockwise in the marker image; seen from above with y away from the dealer
    # that is clockwise on the table too (negative signed area in x-right, y-up axes).
    x, y = corners[:, 0], corners[:, 1]
    area = 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    if area >= 0:
        r.fail(key, "corners must run clockwise seen from above: top-left, top-right, bottom-right, bottom-left")


def _pucks(r: _Fields, markers: dict[int, Marker]) -> PuckSpec:
    section = r.get("pucks")
    if not isinstance(section, dict):
        r.fail("pucks", "missing: the pucks' marker dictionary and ids ([pucks] with blind = <id>)")
    sizes = {"dictionary", "marker_mm", "diameter_mm", "height_mm"}
    ids: dict[str, int] = {}
    for name, value in section.items():
        if name in sizes:
            continue
        if not re.fullmatch(r"[a-z][a-z_]*", name):
            r.fail(f"pucks.{name}", "a puck name is lower case letters and _")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1000:
            r.fail(f"pucks.{name}", f"must be the puck's marker id 0-999, not {value!r}")
        if value in ids.values():
            r.fail(f"pucks.{name}", f"marker id {value} is already another puck's")
        ids[name] = value
    if "blind" not in ids:
        r.fail("pucks.blind", "missing: the blind puck's marker id")
    dictionary = r.choice("pucks.dictionary", DICTIONARIES)
    if dictionary == r.get("markers.dictionary"):
        for name, value in ids.items():
            if value in markers:
                r.fail(f"pucks.{name}", f"marker id {value} is a calibration marker's; use another id range")
    marker_mm = r.number("pucks.marker_mm", low=10.0, high=200.0)
    diameter = r.number("pucks.diameter_mm", low=10.0, high=200.0)
    if diameter < marker_mm * math.sqrt(2):
        r.fail("pucks.diameter_mm", f"a puck of {diameter:g} mm cannot carry a {marker_mm:g} mm marker")
    return PuckSpec(dictionary, ids, marker_mm, diameter, r.number("pucks.height_mm", low=0.0, high=100.0))


def _zones(r: _Fields, width: float, depth: float) -> dict[str, Zone]:
    section = r.get("zones")
    if not isinstance(section, dict) or not section:
        r.fail("zones", "missing: the layout needs its zones ([zones] name = { x, y, r })")
    zones: dict[str, Zone] = {}
    for name, entry in section.items():
        key = f'zones."{name}"'
        match = ZONE_NAME.match(name)
        if not match:
            r.fail(key, "a zone name is seat<1-9>.<spot> or seat<1-9>.<spot>.payout (seat3.first, seat3.puck)")
        if not isinstance(entry, dict) or set(entry) != {"x", "y", "r"}:
            r.fail(key, "must be { x = ..., y = ..., r = ... } in mm")
        for field in ("x", "y", "r"):
            value = entry[field]
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                r.fail(f"{key}.{field}", f"must be a number of millimetres, not {value!r}")
        zone = Zone(name, float(entry["x"]), float(entry["y"]), float(entry["r"]))
        if zone.kind != "puck" and zone.r < CHIP_DIAMETER_MM / 2:
            r.fail(f"{key}.r", f"{zone.r:g} mm is too small for a {CHIP_DIAMETER_MM:g} mm chip")
        if zone.kind == "puck" and match.group(3):
            r.fail(key, "a puck spot has no payout area")
        if not (zone.r <= zone.x <= width - zone.r and zone.r <= zone.y <= depth - zone.r):
            r.fail(key, f"the circle must lie on the felt (0-{width:g} x 0-{depth:g} mm)")
        zones[name] = zone
    names = list(zones)
    for name in names:
        if name.endswith(".payout") and name.removesuffix(".payout") not in zones:
            r.fail(f'zones."{name}"', f"a payout area needs its wager zone {name.removesuffix('.payout')}")
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            za, zb = zones[a], zones[b]
            if math.hypot(za.x - zb.x, za.y - zb.y) < za.r + zb.r + MIN_GAP_MM:
                r.fail(f'zones."{b}"', f"too close to {a} (circles must be {MIN_GAP_MM:g} mm apart)")
    return zones


def _point_list(r: _Fields, key: str, value: Any, count: int) -> FloatArray:
    ok = (
        isinstance(value, list)
        and len(value) == count
        and all(
            isinstance(p, list)
            and len(p) == 2
            and all(isinstance(c, int | float) and not isinstance(c, bool) and math.isfinite(c) for c in p)
            for p in value
        )
    )
    if not ok:
        r.fail(key, f"must be {count} points [x, y] in mm")
    return np.array(value, dtype=np.float64)


class _Fields:
    def __init__(self, doc: dict[str, Any], source: str) -> None:
        self.doc = doc
        self.source = source

    def fail(self, key: str, why: str) -> NoReturn:
        raise LayoutError(f"{self.source}: {key}: {why}")

    def get(self, key: str) -> Any:
        node: Any = self.doc
        for part in key.split("."):
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    def text(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be non-empty text, not {value!r}")
        return str(value)

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.get(key)
        if value not in allowed:
            self.fail(key, f"must be one of {', '.join(allowed)}, not {value!r}")
        return str(value)

    def number(self, key: str, *, low: float, high: float, whole: bool = False) -> float:
        value = self.get(key)
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            kind = "a whole number" if whole else "a number"
            self.fail(key, f"must be {kind} from {low:g} to {high:g}, not {value!r}")
        return float(value)

    def colour(self, key: str) -> tuple[int, int, int]:
        try:
            return parse_colour(self.get(key))
        except ValueError as exc:
            self.fail(key, str(exc))
