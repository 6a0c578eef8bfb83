"""A reader keeps a zone's reading while the zone looks as it did, and reads it again as soon
as anything there changes: one reader fed a sequence of frames must report, frame by frame,
what a fresh reader reports for that frame alone."""

from __future__ import annotations

import dataclasses

import pytest

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import FrameReading, Reader
from vision.render import render
from vision.scene import CameraSetup, Hand, Lighting, Scene, Stack

LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))
FIRST = {
    "seat1.first": (25,) * 6,
    "seat1.second": (5, 5, 5, 1, 1),
    "seat2.home": (100,) * 9,
    "seat2.first": (500, 500, 25, 25, 25),
    "seat3.third": (1000,) * 3,
    "seat4.first": (5,) * 4,
}


@pytest.fixture(scope="module")
def left() -> Layout:
    return Layout.load("grand-slam-7-left")


@pytest.fixture(scope="module")
def calibration(layout: Layout, left: Layout) -> Calibration:
    return Calibration.from_frame(render(Scene(camera=LEFT_MOUNT), layout), left, camera=LEFT_MOUNT.model())


def _scene(stacks: dict[str, tuple[int, ...]], **changes: object) -> Scene:
    scene = Scene(camera=LEFT_MOUNT, noise=2.0, zones={zone: (Stack(chips),) for zone, chips in stacks.items()})
    return dataclasses.replace(scene, **changes)  # type: ignore[arg-type]


def _values(reading: FrameReading) -> dict[str, object]:
    return {name: (z.state, z.value, [s.chips for s in z.stacks]) for name, z in sorted(reading.zones.items())}


def _same_as_fresh(reader: Reader, scene: Scene, layout: Layout, left: Layout, calibration: Calibration) -> None:
    frame = render(scene, layout)
    kept = reader.read(frame)
    fresh = Reader(left, calibration).read(frame)
    assert _values(kept) == _values(fresh)


def test_a_still_table_keeps_its_readings_through_new_exposures(
    layout: Layout, left: Layout, calibration: Calibration
) -> None:
    reader = Reader(left, calibration)
    first = reader.read(render(_scene(FIRST, seed=1), layout))
    assert all(first.zones[zone].value == sum(chips) for zone, chips in FIRST.items()), first.unsure
    again = reader.read(render(_scene(FIRST, seed=2), layout))  # the same table, fresh sensor noise
    assert _values(again) == _values(first)


def test_a_chip_added_taken_or_swapped_is_read_on_the_next_frame(
    layout: Layout, left: Layout, calibration: Calibration
) -> None:
    reader = Reader(left, calibration)
    reader.read(render(_scene(FIRST, seed=1), layout))
    changed = dict(FIRST)
    changed["seat1.first"] = (25,) * 7  # one chip more
    changed["seat2.first"] = (500, 500, 25, 25, 100)  # the top chip swapped for another colour
    del changed["seat3.third"]  # the stack taken away
    changed["seat4.second"] = (1, 1)  # a new wager
    frame = render(_scene(changed, seed=3), layout)
    reading = reader.read(frame)
    assert reading.zones["seat1.first"].value == 175
    assert reading.zones["seat2.first"].value == 1150
    assert reading.zones["seat3.third"].value == 0
    assert reading.zones["seat4.second"].value == 2
    assert _values(reading) == _values(Reader(left, calibration).read(frame))


def test_a_hand_coming_and_going_is_seen_on_each_frame(layout: Layout, left: Layout, calibration: Calibration) -> None:
    reader = Reader(left, calibration)
    reader.read(render(_scene(FIRST, seed=1), layout))
    covered = reader.read(render(_scene(FIRST, seed=4, hands=(Hand("seat2.first", 120.0),)), layout))
    assert covered.zones["seat2.first"].state == "blocked"
    _same_as_fresh(reader, _scene(FIRST, seed=5), layout, left, calibration)


def test_a_change_of_light_reads_every_zone_again(layout: Layout, left: Layout, calibration: Calibration) -> None:
    reader = Reader(left, calibration)
    reader.read(render(_scene(FIRST, seed=1), layout))
    dimmer = _scene(FIRST, seed=6, lighting=Lighting(brightness=0.8, tint=(1.0, 0.95, 0.9)))
    _same_as_fresh(reader, dimmer, layout, left, calibration)


def test_forget_reads_every_zone_afresh(layout: Layout, left: Layout, calibration: Calibration) -> None:
    reader = Reader(left, calibration)
    reader.read(render(_scene(FIRST, seed=1), layout))
    reader.forget()
    _same_as_fresh(reader, _scene(FIRST, seed=2), layout, left, calibration)
