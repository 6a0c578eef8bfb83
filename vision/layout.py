"""Table layouts: the zones the camera reads and the calibration markers, in table millimetres.

A layout is a TOML file (`hardware/layouts/*.toml`). The table frame has its origin at the
dealer's left corner of the felt, x along the dealer's edge to the dealer's right, y away from
the dealer toward the players, z up. Zones are printed circles named `seat3.first`,
`seat3.first.payout`, `seat3.puck`...; every error names the file and the key.

    layout = Layout.load("hardware/layouts/grand-slam-7.toml")
    layout.zones["seat3.first"].centre      # (x, y) in mm
    layout.markers[0].corners               # 4 x 2, ArUco corner order

A **mount** (`MOUNTS`) says where a table's cameras stand and which layout each reads. The
two-camera mount ("two-camera", as shipped): a camera behind the dealer over each half of the
table, each zone read by one of them. The across mount ("across", issue 36's ninth round): the
same two, and over each half a camera across the table, 1000 mm beyond the felt's far edge and
1600 mm up (on a pole or the ceiling above the players' heads), aimed at the same half: the
dealer's camera mirrored across the table's middle. It reads the same layout as the dealer's
camera of its half (the same zone names, so the table joins the two views zone by zone), each
camera calibrated from its own frame (it sees the same markers upside down).

    MOUNTS["across"]                        # four CameraPlace: left, left across, right, right across
    views_of(MOUNTS["across"])["grand-slam-7-left"]   # ("left", "left across")
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError, model_validator

from hardware import shipped
from vision.chips import CHIP_DIAMETER_MM, ChipSet, ChipSetError, parse_colour
from vision.documents import Document, Style, Text, check, explain, number, one_of, problem, rule

#: The layouts shipped with tablectl (package data): a bare layout name is read from here, a path as given.
LAYOUTS_DIR = shipped("layouts")
DEFAULT_LAYOUT = "grand-slam-7"
DICTIONARIES = ("DICT_4X4_50", "DICT_4X4_100", "DICT_5X5_50", "DICT_5X5_100", "DICT_6X6_50", "DICT_APRILTAG_36h11")
ZONE_NAME = re.compile(r"^seat([1-9])\.([a-z][a-z_]*)(\.payout)?$")
MIN_GAP_MM = 10.0  # printed circles closer than this could hold one stack touching both

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CameraPlace:
    """One camera of a mount: its name, the layout whose zones it reads, where it stands and what
    it is aimed at (table mm), and its lens's field of view across the frame."""

    name: str
    layout: str
    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    hfov_deg: float = 44.0

    def across(self, depth_mm: float) -> CameraPlace:
        """The camera facing this one from the other side of the table: mirrored across the
        table's middle (y = depth / 2), reading the same layout."""
        (x, y, z), (lx, ly, lz) = self.position, self.look_at
        return CameraPlace(
            f"{self.name} across", self.layout, (x, depth_mm - y, z), (lx, depth_mm - ly, lz), self.hfov_deg
        )


#: The dealer's cameras of the two-camera mount: behind the dealer, 1000 mm off the felt's near
#: edge and 1600 mm up, each aimed at its half (grand-slam-7: 1700 x 1150 mm).
_DEALER = (
    CameraPlace("left", "grand-slam-7-left", (470.0, -1000.0, 1600.0), (470.0, 500.0, 0.0)),
    CameraPlace("right", "grand-slam-7-right", (1340.0, -1000.0, 1600.0), (1340.0, 500.0, 0.0)),
)
_DEPTH_MM = 1150.0  # grand-slam-7's felt, y
MOUNTS: dict[str, tuple[CameraPlace, ...]] = {
    "two-camera": _DEALER,
    "across": tuple(place for dealer in _DEALER for place in (dealer, dealer.across(_DEPTH_MM))),
}


def views_of(mount: tuple[CameraPlace, ...]) -> dict[str, tuple[str, ...]]:
    """Layout name -> the cameras of `mount` that read it (in the mount's order)."""
    out: dict[str, tuple[str, ...]] = {}
    for place in mount:
        out[place.layout] = (*out.get(place.layout, ()), place.name)
    return out


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

    def seats_without_zones(self, seats: int) -> list[int]:
        """The seats of a table of `seats` seats that this layout prints no chip zone for."""
        zoned = {zone.seat for zone in self.chip_zones()}
        return [seat for seat in range(1, seats + 1) if seat not in zoned]

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
    read = check(_LayoutDoc, doc, source, LayoutError, _LayoutStyle())
    try:
        chips = ChipSet.from_config(doc.get("chips"), f"{source}: chips", felt=read.layout.felt, ink=read.layout.ink)
    except ChipSetError as exc:
        raise LayoutError(str(exc)) from None
    return Layout(
        name=read.layout.name,
        source=source,
        width_mm=read.layout.width_mm,
        depth_mm=read.layout.depth_mm,
        felt=read.layout.felt,
        ink=read.layout.ink,
        max_stack_chips=read.layout.max_stack_chips,
        marker_dictionary=read.markers.dictionary,
        markers={m.id: Marker(m.id, np.array(m.corners, dtype=np.float64)) for m in read.markers.marker},
        pucks=read.puck_spec(),
        zones={name: Zone(name, z[0], z[1], z[2]) for name, z in read.zones.items()},
        chips=chips,
    )


def _colour(value: Any) -> tuple[int, int, int]:
    try:
        return parse_colour(value)
    except ValueError as exc:
        raise problem(f": {exc}") from None


def _marker_id(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1000:
        raise problem(f": must be a marker id 0-999, not {value!r}")
    return value


def _corners(value: Any) -> list[list[float]]:
    ok = (
        isinstance(value, list)
        and len(value) == 4
        and all(
            isinstance(p, list)
            and len(p) == 2
            and all(isinstance(c, int | float) and not isinstance(c, bool) and math.isfinite(c) for c in p)
            for p in value
        )
    )
    if not ok:
        raise problem(": must be 4 points [x, y] in mm")
    return [[float(c) for c in p] for p in value]


def _marker_list(value: Any) -> Any:
    if not isinstance(value, list) or len(value) < 4:
        raise problem(": needs at least 4 calibration markers ([[markers.marker]] with id and corners)")
    for i, entry in enumerate(value):
        if not isinstance(entry, dict) or set(entry) != {"id", "corners"}:
            raise problem(f"[{i}]: must have exactly the keys id and corners")
    return value


def _zone_table(value: Any) -> dict[str, tuple[float, float, float]]:
    if not isinstance(value, dict) or not value:
        raise problem(": missing: the layout needs its zones ([zones] name = { x, y, r })")
    zones: dict[str, tuple[float, float, float]] = {}
    for name, entry in value.items():
        key = f'."{name}"'
        match = ZONE_NAME.match(name)
        if not match:
            raise problem(
                f"{key}: a zone name is seat<1-9>.<spot> or seat<1-9>.<spot>.payout (seat3.first, seat3.puck)"
            )
        if not isinstance(entry, dict) or set(entry) != {"x", "y", "r"}:
            raise problem(f"{key}: must be {{ x = ..., y = ..., r = ... }} in mm")
        for field in ("x", "y", "r"):
            size = entry[field]
            if isinstance(size, bool) or not isinstance(size, int | float) or not math.isfinite(size):
                raise problem(f"{key}.{field}: must be a number of millimetres, not {size!r}")
        zone = Zone(name, float(entry["x"]), float(entry["y"]), float(entry["r"]))
        if zone.kind != "puck" and zone.r < CHIP_DIAMETER_MM / 2:
            raise problem(f"{key}.r: {zone.r:g} mm is too small for a {CHIP_DIAMETER_MM:g} mm chip")
        if zone.kind == "puck" and match.group(3):
            raise problem(f"{key}: a puck spot has no payout area")
        zones[name] = (zone.x, zone.y, zone.r)
    return zones


_PUCK_SIZES = {"dictionary", "marker_mm", "diameter_mm", "height_mm"}


def _puck_table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise problem(": missing: the pucks' marker dictionary and ids ([pucks] with blind = <id>)")
    ids: dict[str, int] = {}
    for name, marker in value.items():
        if name in _PUCK_SIZES:
            continue
        if not re.fullmatch(r"[a-z][a-z_]*", name):
            raise problem(f".{name}: a puck name is lower case letters and _")
        if isinstance(marker, bool) or not isinstance(marker, int) or not 0 <= marker < 1000:
            raise problem(f".{name}: must be the puck's marker id 0-999, not {marker!r}")
        if marker in ids.values():
            raise problem(f".{name}: marker id {marker} is already another puck's")
        ids[name] = marker
    if "blind" not in ids:
        raise problem(".blind: missing: the blind puck's marker id")
    try:
        _PuckSizes.model_validate({k: v for k, v in value.items() if k in _PUCK_SIZES})
    except ValidationError as exc:
        raise problem("." + explain(_PuckSizes, exc, _LayoutStyle())) from None
    return value


class _LayoutSection(Document):
    name: Text
    description: str | None = None  # for people reading the file
    width_mm: Annotated[float, number(100.0, 5000.0)]
    depth_mm: Annotated[float, number(100.0, 5000.0)]
    max_stack_chips: Annotated[int, number(1, 60, whole=True)]
    felt: Annotated[tuple[int, int, int], rule(_colour)]
    ink: Annotated[tuple[int, int, int], rule(_colour)]


class _MarkerEntry(Document):
    id: Annotated[int, rule(_marker_id)]
    corners: Annotated[list[list[float]], rule(_corners)]


class _MarkersSection(Document):
    dictionary: Annotated[str, one_of(DICTIONARIES)]
    marker: Annotated[list[_MarkerEntry], rule(_marker_list)]


class _PuckSizes(Document):
    dictionary: Annotated[str, one_of(DICTIONARIES)]
    marker_mm: Annotated[float, number(10.0, 200.0)]
    diameter_mm: Annotated[float, number(10.0, 200.0)]
    height_mm: Annotated[float, number(0.0, 100.0)]


class _LayoutDoc(Document):
    """A layout file as written: [layout], [markers], [pucks], [zones] (and [chips], which the chip
    set reads). Each key's own rule is its field's; the rules across keys come after."""

    layout: _LayoutSection
    markers: _MarkersSection
    pucks: Annotated[dict[str, Any], rule(_puck_table)]
    zones: Annotated[dict[str, tuple[float, float, float]], rule(_zone_table)]
    chips: Any = None  # read by the chip set (vision/chips.py)

    @model_validator(mode="after")
    def _across_keys(self) -> _LayoutDoc:
        width, depth = self.layout.width_mm, self.layout.depth_mm
        seen: set[int] = set()
        for i, marker in enumerate(self.markers.marker):
            key = f"markers.marker[{i}]"
            if marker.id in seen:
                raise problem(f"{key}.id: marker {marker.id} is listed twice")
            seen.add(marker.id)
            corners = np.array(marker.corners, dtype=np.float64)
            _check_square(f"{key}.corners", corners)
            if corners.min() < 0 or corners[:, 0].max() > width or corners[:, 1].max() > depth:
                raise problem(f"{key}.corners: must lie on the felt (0-{width:g} x 0-{depth:g} mm)")
        sizes = self.puck_sizes()
        if sizes.dictionary == self.markers.dictionary:
            for name, value in self.puck_ids().items():
                if value in seen:
                    raise problem(f"pucks.{name}: marker id {value} is a calibration marker's; use another id range")
        if sizes.diameter_mm < sizes.marker_mm * math.sqrt(2):
            raise problem(
                f"pucks.diameter_mm: a puck of {sizes.diameter_mm:g} mm cannot carry a {sizes.marker_mm:g} mm marker"
            )
        for name, (x, y, r) in self.zones.items():
            if not (r <= x <= width - r and r <= y <= depth - r):
                raise problem(f'zones."{name}": the circle must lie on the felt (0-{width:g} x 0-{depth:g} mm)')
        names = list(self.zones)
        for name in names:
            wager = name.removesuffix(".payout")
            if name.endswith(".payout") and wager not in self.zones:
                raise problem(f'zones."{name}": a payout area needs its wager zone {wager}')
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                (ax, ay, ar), (bx, by, br) = self.zones[a], self.zones[b]
                if math.hypot(ax - bx, ay - by) < ar + br + MIN_GAP_MM:
                    raise problem(f'zones."{b}": too close to {a} (circles must be {MIN_GAP_MM:g} mm apart)')
        return self

    def puck_sizes(self) -> _PuckSizes:
        return _PuckSizes.model_validate({k: v for k, v in self.pucks.items() if k in _PUCK_SIZES})

    def puck_ids(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.pucks.items() if k not in _PUCK_SIZES}

    def puck_spec(self) -> PuckSpec:
        sizes = self.puck_sizes()
        return PuckSpec(sizes.dictionary, self.puck_ids(), sizes.marker_mm, sizes.diameter_mm, sizes.height_mm)


class _LayoutStyle(Style):
    """Layouts name list items as [i] and zones by their quoted name."""

    def where(self, loc: Any) -> str:
        out = ""
        for part in loc:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
        return out

    def unknown(self, loc: Any, allowed: Any) -> str:
        if len(loc) == 1:
            return f"{loc[0]}: unknown section; the sections are chips, layout, markers, pucks, zones"
        return super().unknown(loc, allowed)

    def missing(self, loc: Any) -> str:
        return f"{self.where(loc)}: missing{_MISSING.get(self.where(loc), '')}"


_MISSING = {
    "pucks": ": the pucks' marker dictionary and ids ([pucks] with blind = <id>)",
    "zones": ": the layout needs its zones ([zones] name = { x, y, r })",
    "markers": ": the calibration markers ([markers] with dictionary and [[markers.marker]])",
    "layout": ": the table's size and colours ([layout] with name, width_mm, depth_mm, felt, ink)",
}


def _check_square(key: str, corners: FloatArray) -> None:
    sides = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
    if sides.min() < 20.0:
        raise problem(f"{key}: a marker side of {sides.min():.1f} mm is too small to be seen (20 mm at least)")
    if sides.max() - sides.min() > 1.0:
        raise problem(f"{key}: the four corners must form a square (side lengths differ by more than 1 mm)")
    # ArUco corners run clockwise in the marker image; seen from above with y away from the dealer
    # that is clockwise on the table too (negative signed area in x-right, y-up axes).
    x, y = corners[:, 0], corners[:, 1]
    area = 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    if area >= 0:
        raise problem(
            f"{key}: corners must run clockwise seen from above: top-left, top-right, bottom-right, bottom-left"
        )
