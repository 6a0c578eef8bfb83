"""The robustness suite: what real cameras, chips and dealers do to a scene, as scene changes.

Each condition turns a clean scene into the same table seen another way (a JPEG camera, a
defocused lens, a shaky mount, another maker's chips, worn chips, sloppy or leaning stacks, a
second light's shadows, a nudged camera), entirely through the scene file's keys, so that every
frame of the suite is reproducible from its scene file (`tablectl vision render`). Random
choices (a direction, another maker's colours) come from the scene's seed.

A condition also says what the calibration frame (the empty table, taken when the camera was
set up) shares with it: the camera's own properties (compression, focus, noise, lens shading,
the lights) are there at calibration too; what happens later (motion, a changed tone curve, a
nudge) is not.

    for name, condition in CONDITIONS.items():
        seen = condition.apply(scene)          # the scene under this condition
        setup = condition.calibration(empty)   # the empty table the camera was calibrated on
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vision.chips import Chip, ChipSet, EdgeSpots, from_lab, to_lab
from vision.scene import Glare, Scene, Shadow, Stack

YELLOW = (236, 196, 40)
WARM = (1.1, 1.0, 0.8)  # RGB gains of a warm (tungsten-like) light


@dataclass(frozen=True)
class Condition:
    """One way the table may look: `change` applied to a scene; `at_calibration` says whether
    the calibration frame shows it too (the camera's own properties) or not (later events)."""

    what: str
    change: Callable[[Scene], Scene]
    at_calibration: bool = False

    def apply(self, scene: Scene) -> Scene:
        return self.change(scene)

    def calibration(self, empty: Scene) -> Scene:
        return self.change(empty) if self.at_calibration else empty


def _rng(scene: Scene, salt: int) -> np.random.Generator:
    return np.random.default_rng([scene.seed, 19, salt])


def _sensor(scene: Scene, **changes: object) -> Scene:
    return dataclasses.replace(scene, sensor=dataclasses.replace(scene.sensor, **changes))  # type: ignore[arg-type]


def _lighting(scene: Scene, **changes: object) -> Scene:
    return dataclasses.replace(scene, lighting=dataclasses.replace(scene.lighting, **changes))  # type: ignore[arg-type]


def jpeg(quality: int, chroma: str = "4:2:0") -> Callable[[Scene], Scene]:
    return lambda s: _sensor(s, jpeg=quality, jpeg_chroma=chroma)


def defocus(sigma: float) -> Callable[[Scene], Scene]:
    return lambda s: dataclasses.replace(s, blur=max(s.blur, sigma))


def motion(px: float) -> Callable[[Scene], Scene]:
    return lambda s: _sensor(s, motion_px=px, motion_deg=float(_rng(s, 1).uniform(0, 180)))


def contrast(c: float) -> Callable[[Scene], Scene]:
    return lambda s: _sensor(s, contrast=c)


def gamma(g: float) -> Callable[[Scene], Scene]:
    return lambda s: _sensor(s, gamma=g)


def noise(sigma: float) -> Callable[[Scene], Scene]:
    return lambda s: dataclasses.replace(s, noise=max(s.noise, sigma))


def _default_chips(scene: Scene) -> tuple[Chip, ...]:
    return scene.chips if scene.chips is not None else ChipSet.default().chips


def other_maker(distance: float) -> Callable[[Scene], Scene]:
    """Every denomination's colour `distance` Lab units off the default's, each its own way."""

    def change(s: Scene) -> Scene:
        rng = _rng(s, 2)
        chips = []
        for chip in _default_chips(s):
            direction = rng.normal(size=3)
            lab = to_lab(chip.colour) + distance * direction / float(np.linalg.norm(direction))
            r, g, b = (round(float(v)) for v in from_lab(lab))
            chips.append(dataclasses.replace(chip, colour=(r, g, b)))
        return dataclasses.replace(s, chips=tuple(chips))

    return change


def spots(count: int, colour: tuple[int, int, int], degrees: float) -> Callable[[Scene], Scene]:
    """Every chip with `count` edge spots of `colour`, `degrees` each (another maker's pattern)."""

    def change(s: Scene) -> Scene:
        pattern = EdgeSpots(count, colour, degrees)
        return dataclasses.replace(s, chips=tuple(dataclasses.replace(c, spots=pattern) for c in _default_chips(s)))

    return change


def worn(distance: float) -> Callable[[Scene], Scene]:
    return lambda s: dataclasses.replace(s, wear=distance)


def _stacks(s: Scene, each: Callable[[Stack, np.random.Generator], Stack], salt: int) -> Scene:
    rng = _rng(s, salt)
    zones = {name: tuple(each(stack, rng) for stack in stacks) for name, stacks in sorted(s.zones.items())}
    return dataclasses.replace(s, zones=zones)


def sloppy(mm: float) -> Callable[[Scene], Scene]:
    return lambda s: _stacks(s, lambda st, _: dataclasses.replace(st, sloppy=mm), 3)


def lean(mm_per_chip: float) -> Callable[[Scene], Scene]:
    """Every stack leaning `mm_per_chip` a chip, each its own way."""

    def each(stack: Stack, rng: np.random.Generator) -> Stack:
        a = float(rng.uniform(0, 2 * math.pi))
        return dataclasses.replace(stack, lean=(mm_per_chip * math.cos(a), mm_per_chip * math.sin(a)))

    return lambda s: _stacks(s, each, 4)


def second_light(strength: float = 0.4) -> Callable[[Scene], Scene]:
    """A second light that makes every stack cast a shadow on the felt."""

    def change(s: Scene) -> Scene:
        rng = _rng(s, 5)
        shadow = Shadow(float(rng.uniform(0, 360)), float(rng.uniform(35, 65)), strength)
        return _lighting(s, shadows=(*s.lighting.shadows, shadow))

    return change


def glare(strength: float = 0.35) -> Callable[[Scene], Scene]:
    def change(s: Scene) -> Scene:
        rng = _rng(s, 6)
        x = float(s.camera.look_at[0] + rng.uniform(-300, 300))
        y = float(s.camera.look_at[1] + rng.uniform(-250, 250))
        return _lighting(s, glare=(*s.lighting.glare, Glare((x, y), float(rng.uniform(80, 160)), strength)))

    return change


def vignette(v: float) -> Callable[[Scene], Scene]:
    return lambda s: _lighting(s, vignette=v)


def warm(s: Scene) -> Scene:
    tint = tuple(a * b for a, b in zip(s.lighting.tint, WARM, strict=True))
    return _lighting(s, tint=tint)


def shifted(low: float, high: float) -> Callable[[Scene], Scene]:
    """The whole frame moved `low`-`high` px (the camera nudged), a little turned too."""

    def change(s: Scene) -> Scene:
        rng = _rng(s, 7)
        a, r = float(rng.uniform(0, 2 * math.pi)), float(rng.uniform(low, high))
        return _sensor(s, shift_px=(r * math.cos(a), r * math.sin(a)), turn_deg=float(rng.uniform(-0.05, 0.05)))

    return change


def both(*changes: Callable[[Scene], Scene]) -> Callable[[Scene], Scene]:
    def change(s: Scene) -> Scene:
        for c in changes:
            s = c(s)
        return s

    return change


def _clean(s: Scene) -> Scene:
    return s


CONDITIONS: dict[str, Condition] = {
    "clean": Condition("the scene as drawn", _clean),
    "jpeg 80": Condition("MJPEG, JPEG quality 80", jpeg(80), True),
    "jpeg 75": Condition("MJPEG, JPEG quality 75", jpeg(75), True),
    "jpeg 70": Condition("MJPEG, JPEG quality 70", jpeg(70), True),
    "jpeg 60": Condition("MJPEG, JPEG quality 60", jpeg(60), True),
    "defocus 1.3": Condition("lens defocused, Gaussian sigma 1.3 px", defocus(1.3), True),
    "defocus 1.8": Condition("lens defocused, Gaussian sigma 1.8 px", defocus(1.8), True),
    "defocus 2.5": Condition("lens defocused, Gaussian sigma 2.5 px", defocus(2.5), True),
    "motion 5": Condition("motion blur 5 px (a shaking mount)", motion(5)),
    "motion 9": Condition("motion blur 9 px", motion(9)),
    "contrast 0.7": Condition("the camera's contrast at 0.7 since calibration", contrast(0.7)),
    "gamma 0.7": Condition("the camera's gamma at 0.7 since calibration", gamma(0.7)),
    "gamma 1.4": Condition("the camera's gamma at 1.4 since calibration", gamma(1.4)),
    "maker 8": Condition("another maker's chip colours, each Lab 8 off", other_maker(8)),
    "maker 16": Condition("another maker's chip colours, each Lab 16 off", other_maker(16)),
    "spots 4x30 yellow": Condition("other edge spots: 4 yellow spots of 30 degrees", spots(4, YELLOW, 30.0)),
    "worn 10": Condition("worn chips, each chip's colour Lab 10 off", worn(10)),
    "worn 20": Condition("worn chips, each chip's colour Lab 20 off", worn(20)),
    "sloppy 1": Condition("sloppy stacks, each chip up to 1 mm sideways", sloppy(1.0)),
    "sloppy 2": Condition("sloppy stacks, each chip up to 2 mm sideways", sloppy(2.0)),
    "lean 0.2": Condition("stacks leaning 0.2 mm a chip", lean(0.2)),
    "lean 0.4": Condition("stacks leaning 0.4 mm a chip", lean(0.4)),
    "second light": Condition("a second light: every stack casts a shadow (40%)", second_light(0.4)),
    "noise 14": Condition("sensor noise sigma 14", noise(14), True),
    "glare": Condition("glare on the felt", glare(), True),
    "jpeg 75 + noise 6 + vignette": Condition(
        "JPEG 75, noise 6, vignetting 0.35", both(jpeg(75), noise(6), vignette(0.35)), True
    ),
    "jpeg 70 + shadow + glare + warm": Condition(
        "JPEG 70, a second light's shadows, glare, warm light", both(jpeg(70), second_light(0.4), glare(), warm), True
    ),
    # what a real table meets at once: a USB camera's MJPEG or a soft focus, over stacks as dealers leave them
    "jpeg 75 + sloppy 1 + lean 0.2": Condition(
        "JPEG 75 over stacks sloppy 1 mm and leaning 0.2 mm a chip", both(jpeg(75), sloppy(1.0), lean(0.2)), True
    ),
    "defocus 1.3 + lean 0.4": Condition(
        "lens defocused (sigma 1.3 px) over stacks leaning 0.4 mm a chip", both(defocus(1.3), lean(0.4)), True
    ),
    "shift 1-2 px": Condition("the camera nudged: the frame 1-2 px off, turned up to 0.05 degrees", shifted(1.0, 2.0)),
}


def lighting_only(scene: Scene) -> bool:
    """Does the condition's scene differ from the clean one only where one drawing serves both
    (vision/render.py `Drawn`)? Then the suite draws the scene once."""
    return (
        scene.chips is None
        and scene.wear == 0
        and not scene.lighting.shadows
        and all(st.lean == (0.0, 0.0) and st.sloppy == 0 for stacks in scene.zones.values() for st in stacks)
    )
