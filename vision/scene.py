"""A scene: what is on the table and how the camera sees it, as JSON, for the simulator.

The renderer draws a camera frame from a scene; the reader is then tested on that frame, never
on the scene. Zone names are the layout's (`seat3.first`). The format (vision/README.md):

    {"layout": "grand-slam-7",
     "camera": {"resolution": [1920, 1080], "hfov_deg": 62, "position": [850, -750, 1450],
                "look_at": [850, 520, 0], "roll_deg": 0, "dist": [-0.05, 0.01, 0, 0, 0]},
     "lighting": {"brightness": 1.0, "tint": [1, 1, 1], "gradient": 0.0, "azimuth_deg": 200,
                  "elevation_deg": 60},
     "blur": 0.0, "noise": 0.0, "seed": 1,
     "zones": {"seat3.first": [25, 25, 5],
               "seat3.first.payout": {"stacks": [{"chips": [5, 5], "offset": [3, -2]}]}},
     "pucks": {"blind": "seat4.puck"},
     "hands": [{"over": "seat2.second", "height": 120}]}

A zone's value is a list of chips bottom to top (one stack at the zone's centre), or
`{"stacks": [...]}` with each stack's chips and its offset from the centre in mm.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from vision.chips import Chip, ChipSetError, chip_to_config, chips_from_config
from vision.geometry import CameraModel, Pose
from vision.layout import DEFAULT_LAYOUT

DEFAULT_RESOLUTION = (1920, 1080)
DEFAULT_HFOV = 62.0
DEFAULT_POSITION = (850.0, -750.0, 1450.0)
DEFAULT_LOOK_AT = (850.0, 520.0, 0.0)
DEFAULT_DIST = (-0.05, 0.01, 0.0, 0.0, 0.0)


class SceneError(ValueError):
    """A scene file that cannot be rendered; the text names the file and the key."""


@dataclass(frozen=True)
class CameraSetup:
    resolution: tuple[int, int] = DEFAULT_RESOLUTION
    hfov_deg: float = DEFAULT_HFOV
    position: tuple[float, float, float] = DEFAULT_POSITION
    look_at: tuple[float, float, float] = DEFAULT_LOOK_AT
    roll_deg: float = 0.0
    dist: tuple[float, ...] = DEFAULT_DIST

    def model(self) -> CameraModel:
        return CameraModel.from_fov(self.resolution[0], self.resolution[1], self.hfov_deg, self.dist)

    def pose(self) -> Pose:
        return Pose.look_at(self.position, self.look_at, self.roll_deg)


@dataclass(frozen=True)
class Lighting:
    brightness: float = 1.0
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # R, G, B gains
    gradient: float = 0.0  # brightness change across the frame, as a fraction
    gradient_deg: float = 0.0  # direction of the change in the image
    azimuth_deg: float = 270.0  # where the light comes from, seen from above (270: the dealer's side)
    elevation_deg: float = 60.0
    shadows: tuple[Shadow, ...] = ()  # lights that make the stacks cast shadows on the felt
    glare: tuple[Glare, ...] = ()
    vignette: float = 0.0  # the lens darkens the frame's corners by this fraction


@dataclass(frozen=True)
class Shadow:
    """A light that makes every stack (and puck) cast a shadow on the felt."""

    azimuth_deg: float = 270.0  # where the light comes from, seen from above
    elevation_deg: float = 45.0
    strength: float = 0.4  # the share of light the shadow takes away


@dataclass(frozen=True)
class Glare:
    """A bright, soft spot of light reflected off the felt (the frame brightened there)."""

    at: tuple[float, float]  # table mm
    radius: float = 120.0  # mm
    strength: float = 0.5  # brightened by up to this fraction


JPEG_CHROMA = ("4:2:0", "4:2:2", "4:4:4")  # a JPEG's colour resolution: halved each way, across only, or full


@dataclass(frozen=True)
class Sensor:
    """What the camera itself does to the frame after the light and the lens blur: motion blur,
    its tone curve, compression, and where the whole frame lands (a camera nudged a little)."""

    motion_px: float = 0.0  # length of a straight motion blur, px
    motion_deg: float = 0.0  # its direction in the image
    contrast: float = 1.0  # levels pulled toward mid-grey (128 + contrast * (x - 128))
    gamma: float = 1.0  # 255 * (x / 255) ** gamma
    jpeg: int = 0  # JPEG quality (MJPEG cameras), 0 for none
    # the JPEG's colour resolution: "4:2:0" halved each way (OpenCV's default), "4:2:2" halved
    # across only (what many MJPEG cameras send) or "4:4:4" full
    jpeg_chroma: str = "4:2:0"
    shift_px: tuple[float, float] = (0.0, 0.0)  # the whole frame moved by this
    turn_deg: float = 0.0  # and turned by this about its centre


@dataclass(frozen=True)
class Stack:
    chips: tuple[int, ...]  # bottom to top
    offset: tuple[float, float] = (0.0, 0.0)  # from the zone's centre, mm
    lean: tuple[float, float] = (0.0, 0.0)  # each chip this far (mm) from the one below it
    sloppy: float = 0.0  # each chip also up to this far (mm) off sideways, at random
    # each chip's edge colour (RGB), bottom to top, as worn; () for the chip's own, worn by the
    # scene's `wear` at random (a stack whose edges are given draws no wear)
    edges: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Hand:
    """A hand hovering over a point (with its arm reaching in from the players' side)."""

    over: str | tuple[float, float]  # a zone name or a table point in mm
    height: float = 120.0
    skin: tuple[int, int, int] = (205, 150, 120)


@dataclass(frozen=True)
class Scene:
    layout: str = DEFAULT_LAYOUT
    camera: CameraSetup = field(default_factory=CameraSetup)
    lighting: Lighting = field(default_factory=Lighting)
    blur: float = 0.0  # Gaussian sigma, pixels
    noise: float = 0.0  # Gaussian sigma, 8-bit levels
    seed: int = 0
    zones: dict[str, tuple[Stack, ...]] = field(default_factory=dict)
    pucks: dict[str, str | tuple[float, float]] = field(default_factory=dict)  # name -> zone or point
    hands: tuple[Hand, ...] = ()
    sensor: Sensor = field(default_factory=Sensor)
    chips: tuple[Chip, ...] | None = None  # the chips on this table, when not the layout's
    wear: float = 0.0  # each chip's colour is this far (Lab) from its denomination's, at random

    def value_of(self, zone: str) -> int:
        return sum(sum(stack.chips) for stack in self.zones.get(zone, ()))

    @classmethod
    def load(cls, path: str | Path) -> Scene:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SceneError(f"{path}: no such scene file") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SceneError(f"{path}: not a readable JSON scene: {exc}") from None
        return cls.from_dict(data, str(path))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    def to_dict(self) -> dict[str, Any]:
        return {
            "layout": self.layout,
            "camera": {
                "resolution": list(self.camera.resolution),
                "hfov_deg": self.camera.hfov_deg,
                "position": list(self.camera.position),
                "look_at": list(self.camera.look_at),
                "roll_deg": self.camera.roll_deg,
                "dist": list(self.camera.dist),
            },
            "lighting": {
                "brightness": self.lighting.brightness,
                "tint": list(self.lighting.tint),
                "gradient": self.lighting.gradient,
                "gradient_deg": self.lighting.gradient_deg,
                "azimuth_deg": self.lighting.azimuth_deg,
                "elevation_deg": self.lighting.elevation_deg,
                "shadows": [
                    {"azimuth_deg": d.azimuth_deg, "elevation_deg": d.elevation_deg, "strength": d.strength}
                    for d in self.lighting.shadows
                ],
                "glare": [{"at": list(g.at), "radius": g.radius, "strength": g.strength} for g in self.lighting.glare],
                "vignette": self.lighting.vignette,
            },
            "sensor": {
                "motion_px": self.sensor.motion_px,
                "motion_deg": self.sensor.motion_deg,
                "contrast": self.sensor.contrast,
                "gamma": self.sensor.gamma,
                "jpeg": self.sensor.jpeg,
                **({"jpeg_chroma": self.sensor.jpeg_chroma} if self.sensor.jpeg_chroma != "4:2:0" else {}),
                "shift_px": list(self.sensor.shift_px),
                "turn_deg": self.sensor.turn_deg,
            },
            "wear": self.wear,
            **({"chips": [chip_to_config(c) for c in self.chips]} if self.chips is not None else {}),
            "blur": self.blur,
            "noise": self.noise,
            "seed": self.seed,
            "zones": {
                name: {
                    "stacks": [
                        {
                            "chips": list(s.chips),
                            "offset": list(s.offset),
                            "lean": list(s.lean),
                            "sloppy": s.sloppy,
                            **({"edges": [list(e) for e in s.edges]} if s.edges else {}),
                        }
                        for s in stacks
                    ]
                }
                for name, stacks in self.zones.items()
            },
            "pucks": {name: where if isinstance(where, str) else list(where) for name, where in self.pucks.items()},
            "hands": [
                {"over": h.over if isinstance(h.over, str) else list(h.over), "height": h.height, "skin": list(h.skin)}
                for h in self.hands
            ],
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "scene") -> Scene:
        f = _Fields(source)
        if not isinstance(data, dict):
            f.fail("", "a scene is a JSON object")
        known = {
            "layout",
            "camera",
            "lighting",
            "sensor",
            "chips",
            "wear",
            "blur",
            "noise",
            "seed",
            "zones",
            "pucks",
            "hands",
        }
        for key in data:
            if key not in known:
                f.fail(key, f"unknown key; the keys are {', '.join(sorted(known))}")
        cam = data.get("camera", {})
        f.object("camera", cam, {"resolution", "hfov_deg", "position", "look_at", "roll_deg", "dist"})
        resolution = f.numbers("camera.resolution", cam.get("resolution", DEFAULT_RESOLUTION), 2, 64, 8192)
        camera = CameraSetup(
            resolution=(int(resolution[0]), int(resolution[1])),
            hfov_deg=f.number("camera.hfov_deg", cam.get("hfov_deg", DEFAULT_HFOV), 10, 150),
            position=_triple(f.numbers("camera.position", cam.get("position", DEFAULT_POSITION), 3, -1e5, 1e5)),
            look_at=_triple(f.numbers("camera.look_at", cam.get("look_at", DEFAULT_LOOK_AT), 3, -1e5, 1e5)),
            roll_deg=f.number("camera.roll_deg", cam.get("roll_deg", 0.0), -180, 180),
            dist=tuple(f.numbers("camera.dist", cam.get("dist", DEFAULT_DIST), 5, -2, 2)),
        )
        if camera.position[2] <= 100:
            f.fail("camera.position", "the camera must be above the table (z > 100 mm)")
        light = data.get("lighting", {})
        f.object(
            "lighting",
            light,
            {
                "brightness",
                "tint",
                "gradient",
                "gradient_deg",
                "azimuth_deg",
                "elevation_deg",
                "shadows",
                "glare",
                "vignette",
            },
        )
        shadows_in = light.get("shadows", [])
        if not isinstance(shadows_in, list):
            f.fail("lighting.shadows", "must be a list of {azimuth_deg, elevation_deg, strength}")
        shadows = []
        for i, d in enumerate(shadows_in):
            key = f"lighting.shadows[{i}]"
            f.object(key, d, {"azimuth_deg", "elevation_deg", "strength"})
            shadows.append(
                Shadow(
                    azimuth_deg=f.number(f"{key}.azimuth_deg", d.get("azimuth_deg", 270.0), -360, 360),
                    elevation_deg=f.number(f"{key}.elevation_deg", d.get("elevation_deg", 45.0), 10, 90),
                    strength=f.number(f"{key}.strength", d.get("strength", 0.4), 0.0, 0.9),
                )
            )
        glare_in = light.get("glare", [])
        if not isinstance(glare_in, list):
            f.fail("lighting.glare", "must be a list of {at, radius, strength}")
        glare = []
        for i, g in enumerate(glare_in):
            key = f"lighting.glare[{i}]"
            f.object(key, g, {"at", "radius", "strength"})
            at = f.numbers(f"{key}.at", g.get("at"), 2, -1e4, 1e4)
            glare.append(
                Glare(
                    at=(at[0], at[1]),
                    radius=f.number(f"{key}.radius", g.get("radius", 120.0), 5, 2000),
                    strength=f.number(f"{key}.strength", g.get("strength", 0.5), 0.0, 2.0),
                )
            )
        lighting = Lighting(
            brightness=f.number("lighting.brightness", light.get("brightness", 1.0), 0.1, 3.0),
            tint=_triple(f.numbers("lighting.tint", light.get("tint", (1.0, 1.0, 1.0)), 3, 0.3, 3.0)),
            gradient=f.number("lighting.gradient", light.get("gradient", 0.0), 0.0, 0.9),
            gradient_deg=f.number("lighting.gradient_deg", light.get("gradient_deg", 0.0), -360, 360),
            azimuth_deg=f.number("lighting.azimuth_deg", light.get("azimuth_deg", 270.0), -360, 360),
            elevation_deg=f.number("lighting.elevation_deg", light.get("elevation_deg", 60.0), 5, 90),
            shadows=tuple(shadows),
            glare=tuple(glare),
            vignette=f.number("lighting.vignette", light.get("vignette", 0.0), 0.0, 0.9),
        )
        sens = data.get("sensor", {})
        keys = {"motion_px", "motion_deg", "contrast", "gamma", "jpeg", "jpeg_chroma", "shift_px", "turn_deg"}
        f.object("sensor", sens, keys)
        jpeg = sens.get("jpeg", 0)
        if isinstance(jpeg, bool) or not isinstance(jpeg, int) or not 0 <= jpeg <= 100:
            f.fail("sensor.jpeg", f"must be a JPEG quality 1-100, or 0 for none, not {jpeg!r}")
        jpeg_chroma = sens.get("jpeg_chroma", "4:2:0")
        if jpeg_chroma not in JPEG_CHROMA:
            f.fail("sensor.jpeg_chroma", f"must be one of {', '.join(JPEG_CHROMA)}, not {jpeg_chroma!r}")
        shift = f.numbers("sensor.shift_px", sens.get("shift_px", (0.0, 0.0)), 2, -500, 500)
        sensor = Sensor(
            motion_px=f.number("sensor.motion_px", sens.get("motion_px", 0.0), 0.0, 60.0),
            motion_deg=f.number("sensor.motion_deg", sens.get("motion_deg", 0.0), -360, 360),
            contrast=f.number("sensor.contrast", sens.get("contrast", 1.0), 0.2, 3.0),
            gamma=f.number("sensor.gamma", sens.get("gamma", 1.0), 0.2, 5.0),
            jpeg=jpeg,
            jpeg_chroma=jpeg_chroma,
            shift_px=(shift[0], shift[1]),
            turn_deg=f.number("sensor.turn_deg", sens.get("turn_deg", 0.0), -45, 45),
        )
        chips: tuple[Chip, ...] | None = None
        if "chips" in data:
            try:
                chips = tuple(chips_from_config(data["chips"], f"{source}: chips"))
            except ChipSetError as exc:
                raise SceneError(str(exc)) from None
        zones_in = data.get("zones", {})
        if not isinstance(zones_in, dict):
            f.fail("zones", "must be an object: zone name -> chips")
        zones = {str(name): _stacks(f, f"zones.{name}", value) for name, value in zones_in.items()}
        pucks_in = data.get("pucks", {})
        if not isinstance(pucks_in, dict):
            f.fail("pucks", "must be an object: puck name -> zone name or [x, y]")
        pucks = {str(name): _where(f, f"pucks.{name}", value) for name, value in pucks_in.items()}
        hands_in = data.get("hands", [])
        if not isinstance(hands_in, list):
            f.fail("hands", "must be a list of {over, height}")
        hands = []
        for i, hand in enumerate(hands_in):
            f.object(f"hands[{i}]", hand, {"over", "height", "skin"})
            if "over" not in hand:
                f.fail(f"hands[{i}].over", "missing: a zone name or [x, y]")
            skin = f.numbers(f"hands[{i}].skin", hand.get("skin", (205, 150, 120)), 3, 0, 255)
            hands.append(
                Hand(
                    over=_where(f, f"hands[{i}].over", hand["over"]),
                    height=f.number(f"hands[{i}].height", hand.get("height", 120.0), 40, 600),
                    skin=(int(skin[0]), int(skin[1]), int(skin[2])),
                )
            )
        layout = data.get("layout", DEFAULT_LAYOUT)
        if not isinstance(layout, str) or not layout:
            f.fail("layout", "must be a layout name or path")
        seed = data.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int):
            f.fail("seed", "must be a whole number")
        return cls(
            layout=layout,
            camera=camera,
            lighting=lighting,
            blur=f.number("blur", data.get("blur", 0.0), 0.0, 10.0),
            noise=f.number("noise", data.get("noise", 0.0), 0.0, 60.0),
            seed=seed,
            zones=zones,
            pucks=pucks,
            hands=tuple(hands),
            sensor=sensor,
            chips=chips,
            wear=f.number("wear", data.get("wear", 0.0), 0.0, 60.0),
        )


def _triple(values: list[float]) -> tuple[float, float, float]:
    return (values[0], values[1], values[2])


def _stacks(f: _Fields, key: str, value: Any) -> tuple[Stack, ...]:
    if isinstance(value, list):
        return (Stack(_chips(f, key, value)),) if value else ()
    f.object(key, value, {"stacks"})
    stacks = value.get("stacks", [])
    if not isinstance(stacks, list):
        f.fail(f"{key}.stacks", "must be a list of {chips, offset}")
    out = []
    for i, stack in enumerate(stacks):
        f.object(f"{key}.stacks[{i}]", stack, {"chips", "offset", "lean", "sloppy", "edges"})
        chips = _chips(f, f"{key}.stacks[{i}].chips", stack.get("chips"))
        if not chips:
            continue
        offset = f.numbers(f"{key}.stacks[{i}].offset", stack.get("offset", (0.0, 0.0)), 2, -500, 500)
        lean = f.numbers(f"{key}.stacks[{i}].lean", stack.get("lean", (0.0, 0.0)), 2, -5, 5)
        sloppy = f.number(f"{key}.stacks[{i}].sloppy", stack.get("sloppy", 0.0), 0.0, 10.0)
        edges = stack.get("edges", [])
        if not isinstance(edges, list) or (edges and len(edges) != len(chips)):
            f.fail(f"{key}.stacks[{i}].edges", "must be a list of [r, g, b], one a chip")
        worn = tuple(_rgb(f.numbers(f"{key}.stacks[{i}].edges[{j}]", e, 3, 0, 255)) for j, e in enumerate(edges))
        out.append(Stack(chips, (offset[0], offset[1]), (lean[0], lean[1]), sloppy, worn))
    return tuple(out)


def _rgb(values: list[float]) -> tuple[int, int, int]:
    return (round(values[0]), round(values[1]), round(values[2]))


def _chips(f: _Fields, key: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in value):
        f.fail(key, "must be a list of chip values, bottom to top ([25, 25, 5])")
    return tuple(value)


def _where(f: _Fields, key: str, value: Any) -> str | tuple[float, float]:
    if isinstance(value, str) and value:
        return value
    point = f.numbers(key, value, 2, -1e4, 1e4)
    return (point[0], point[1])


class _Fields:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, why: str) -> NoReturn:
        where = f"{self.source}: {key}" if key else self.source
        raise SceneError(f"{where}: {why}")

    def object(self, key: str, value: Any, allowed: set[str]) -> None:
        if not isinstance(value, dict):
            self.fail(key, "must be an object")
        for name in value:
            if name not in allowed:
                self.fail(f"{key}.{name}", f"unknown key; the keys are {', '.join(sorted(allowed))}")

    def number(self, key: str, value: Any, low: float, high: float) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"must be a number, not {value!r}")
        if not low <= value <= high:
            self.fail(key, f"must be from {low:g} to {high:g}, not {value!r}")
        return float(value)

    def numbers(self, key: str, value: Any, count: int, low: float, high: float) -> list[float]:
        if not isinstance(value, list | tuple) or len(value) != count:
            self.fail(key, f"must be a list of {count} numbers")
        return [self.number(key, v, low, high) for v in value]
