"""Motion blur (a shaking mount): the reader measures the blur as a direction (a 2 x 2
covariance from the calibration markers' edges), counts stacks under a blur of about 5 px
with the blur along each stack's axis in the frame in its height's correction and its colours,
and still refuses, with the reason, a frame smeared beyond what it can count."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import FrameReading, Reader
from vision.render import Drawn, draw, expose, render
from vision.scene import CameraSetup, Scene, Stack

LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))
STACKS = {
    "seat1.home": (25,) * 7,
    "seat1.first.payout": (5, 5, 5),
    "seat2.second.payout": (100,) * 9,
    "seat2.third": (1000, 1000, 500, 500, 25, 25),
    "seat3.first": (5, 5, 5, 1, 1, 1, 1),
    "seat3.home.payout": (500,) * 4,
    "seat4.second": (1,) * 5,
    "seat4.three_outs": (100, 100, 25, 25, 5),
}
SCENE = Scene(
    camera=LEFT_MOUNT,
    seed=7,
    blur=0.3,
    noise=2.0,
    zones={zone: (Stack(chips),) for zone, chips in STACKS.items()},
)


@pytest.fixture(scope="module")
def drawn(layout: Layout) -> Drawn:
    return draw(SCENE, layout)


@pytest.fixture(scope="module")
def left_reader(layout: Layout) -> Reader:
    left = Layout.load("grand-slam-7-left")
    empty = Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0)
    return Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))


def _moving(px: float, degrees: float) -> Scene:
    return dataclasses.replace(SCENE, sensor=dataclasses.replace(SCENE.sensor, motion_px=px, motion_deg=degrees))


def _read(reader: Reader, drawn: Drawn, scene: Scene) -> FrameReading:
    reader.forget(markers=True)
    return reader.read(expose(drawn, scene))


def _wrong(reading: FrameReading, scene: Scene) -> list[str]:
    return [
        f"{name}: read {z.value}, is {scene.value_of(name)}"
        for name, z in reading.zones.items()
        if z.state == "ok" and z.value != scene.value_of(name)
    ]


@pytest.mark.parametrize("degrees", [20.0, 65.0, 135.0])
def test_the_blur_is_measured_with_its_direction(degrees: float, drawn: Drawn, left_reader: Reader) -> None:
    _read(left_reader, drawn, _moving(5.0, degrees))
    values, vectors = np.linalg.eigh(left_reader.blur_cov)
    longest, shortest = np.sqrt(values[::-1])
    direction = math.degrees(math.atan2(vectors[1, 1], vectors[0, 1])) % 180
    off = abs((direction - degrees + 90) % 180 - 90)
    assert off < 10, (direction, degrees)
    # a 5 px line has a spread (sd) of 1.44 px, added to the lens's 0.6-0.8 px; across it, the lens's only
    assert 1.4 < longest < 2.3
    assert shortest < 1.2
    assert left_reader.smeared


def test_a_sharp_frame_is_not_smeared(drawn: Drawn, left_reader: Reader) -> None:
    reading = _read(left_reader, drawn, SCENE)
    assert not left_reader.smeared
    longest = math.sqrt(float(np.linalg.eigvalsh(left_reader.blur_cov)[1]))
    assert longest < 1.2
    assert _wrong(reading, SCENE) == []


def test_stacks_under_5_px_of_motion_blur_are_counted_and_never_wrong(drawn: Drawn, left_reader: Reader) -> None:
    exact = 0
    for degrees in (0.0, 20.0, 150.0, 92.6):  # across the stacks' axes (about vertical here) ... along them
        scene = _moving(5.0, degrees)
        reading = _read(left_reader, drawn, scene)
        assert left_reader.smeared
        assert _wrong(reading, scene) == [], degrees
        exact += sum(reading.zones[n].state == "ok" and reading.zones[n].value == scene.value_of(n) for n in STACKS)
        assert all(reading.zones[n].why for n in STACKS if reading.zones[n].state == "unsure")
        assert all(z.value == 0 for n, z in reading.zones.items() if n not in STACKS and z.state == "ok")
    # before: none (every stack "the frame is smeared one way"); now 9 of the 32 (4, 3, 2 and 0: along
    # the stacks 5 px blur 1.9 px of their far edges, and the count's spread, 0.2-0.3 chip, passes few)
    assert exact >= 7


@pytest.mark.parametrize("degrees", [90.0, 80.0, 105.0])
def test_a_frame_smeared_9_px_along_the_stacks_is_not_counted(
    degrees: float, drawn: Drawn, left_reader: Reader
) -> None:
    scene = _moving(9.0, degrees)
    reading = _read(left_reader, drawn, scene)
    assert _wrong(reading, scene) == []
    unsure = [reading.zones[n].why for n in STACKS if reading.zones[n].state == "unsure"]
    assert len(unsure) == len(STACKS)
    assert all("smeared one way" in why for why in unsure), unsure
