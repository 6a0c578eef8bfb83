"""`tablectl vision learn-chips`: the table's own chips (another maker's colours, other edge
spots) learned from one stack of each denomination on marked zones, written into the layout,
and then read by the reader; a set the reader could not tell apart is refused."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import cli
from vision.calibration import Calibration
from vision.chips import DEFAULT_CHIPS, Chip, EdgeSpots, from_lab, to_lab
from vision.layout import Layout
from vision.learn import LearnError, learn_chips
from vision.reader import Reader
from vision.render import render
from vision.scene import CameraSetup, Scene, Stack

LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))
MARKED = {"seat1.second": 1, "seat2.second": 5, "seat3.second": 25, "seat4.second": 100, "seat1.third": 500}
MARKED_1000 = "seat2.third"
# Another maker's chips: every colour 8-16 Lab from the default's (away from its nearest
# neighbour, so that the set stays one a reader can tell apart), and 4 yellow spots of 30 degrees.
SHIFTS = {1: (-8, 2, 6), 5: (-10, -6, 0), 25: (4, -12, 4), 100: (12, 0, 6), 500: (0, 8, -12), 1000: (6, 6, 10)}
YELLOW_SPOTS = EdgeSpots(4, (236, 196, 40), 30.0)


def _maker_chips() -> tuple[Chip, ...]:
    out = []
    for chip in DEFAULT_CHIPS:
        r, g, b = (round(float(v)) for v in from_lab(to_lab(chip.colour) + np.array(SHIFTS[chip.value])))
        out.append(dataclasses.replace(chip, colour=(r, g, b), spots=YELLOW_SPOTS))
    return tuple(out)


MAKER = _maker_chips()


def call(add: object, run: object, argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add(parser)  # type: ignore[operator]
    return run(parser.parse_args(argv))  # type: ignore[operator, no-any-return]


@pytest.fixture(scope="module")
def left() -> Layout:
    return Layout.load("grand-slam-7-left")


@pytest.fixture(scope="module")
def left_calibration(layout: Layout, left: Layout) -> Calibration:
    return Calibration.from_frame(render(Scene(camera=LEFT_MOUNT, seed=3), layout), left, camera=LEFT_MOUNT.model())


def _marked_scene(chips: tuple[Chip, ...]) -> Scene:
    zones = {zone: (Stack((value,) * 5),) for zone, value in {**MARKED, MARKED_1000: 1000}.items()}
    return Scene(camera=LEFT_MOUNT, seed=5, noise=2.0, blur=0.3, chips=chips, zones=zones)


def test_another_makers_chips_are_learned_written_into_the_layout_and_then_read(
    tmp_path: Path, layout: Layout, left: Layout, left_calibration: Calibration, capsys: pytest.CaptureFixture[str]
) -> None:
    assert all(
        8 <= np.linalg.norm(to_lab(a.colour) - to_lab(b.colour)) <= 17
        for a, b in zip(MAKER, DEFAULT_CHIPS, strict=True)
    )
    frame, cal, out = tmp_path / "marked.png", tmp_path / "cal.json", tmp_path / "table.toml"
    cv2.imwrite(str(frame), render(_marked_scene(MAKER), layout))
    left_calibration.save(cal)
    stacks = [f"--stack={zone}={value}" for zone, value in {**MARKED, MARKED_1000: 1000}.items()]
    argv = [str(frame), *stacks, "--calibration", str(cal), "--layout", "grand-slam-7-left", "--out", str(out)]
    assert call(cli.add_learn_chips_arguments, cli.run_learn_chips, argv) == 0
    report = json.loads(capsys.readouterr().out)
    learned = Layout.load(out)
    for truth in MAKER:
        chip = learned.chips.by_value(truth.value)
        assert np.linalg.norm(to_lab(chip.colour) - to_lab(truth.colour)) < 4, (chip, truth)
        assert chip.spots.count == 4 and np.linalg.norm(np.subtract(chip.spots.colour, (236, 196, 40))) < 25
    assert report["closest"]["lab_distance"] >= 40
    assert learned.zones == left.zones and learned.markers.keys() == left.markers.keys()
    # a round with those chips: the learned layout reads every wager; the default one never reads a wrong value
    wagers = {
        "seat1.first": (25,) * 6,
        "seat2.first": (5, 5, 5, 1, 1),
        "seat3.home": (100,) * 8,
        "seat4.first": (500, 500, 25, 25, 25),
        "seat2.home.payout": (1000,) * 3,
    }
    scene = Scene(camera=LEFT_MOUNT, seed=11, noise=2.0, chips=MAKER, zones={z: (Stack(c),) for z, c in wagers.items()})
    seen = render(scene, layout)
    with_learned = Reader(learned, left_calibration).read(seen)
    assert {z: with_learned.zones[z].value for z in wagers} == {z: sum(c) for z, c in wagers.items()}
    with_default = Reader(left, left_calibration).read(seen)
    assert all(with_default.zones[z].value in (None, sum(c)) for z, c in wagers.items())


def test_a_chip_set_the_reader_could_not_tell_apart_under_the_tables_light_is_refused(
    layout: Layout, left: Layout, left_calibration: Calibration
) -> None:
    red = next(c for c in DEFAULT_CHIPS if c.value == 5)
    r, g, b = (round(float(v)) for v in from_lab(to_lab(red.colour) + np.array([12.0, 6.0, 8.0])))
    close = tuple(dataclasses.replace(c, colour=(r, g, b)) if c.value == 1000 else c for c in DEFAULT_CHIPS)
    with pytest.raises(LearnError, match="5 and 1000"):
        learn_chips([render(_marked_scene(close), layout)], left, left_calibration, {**MARKED, MARKED_1000: 1000})


def test_learn_chips_refuses_a_zone_without_a_measurable_stack(
    layout: Layout, left: Layout, left_calibration: Calibration
) -> None:
    empty = render(Scene(camera=LEFT_MOUNT, seed=4), layout)
    with pytest.raises(LearnError, match=r"seat1\.second"):
        learn_chips([empty], left, left_calibration, {"seat1.second": 1})
