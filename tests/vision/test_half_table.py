"""The two-camera mount: each camera reads half the table (grand-slam-7-left / -right), and a
reader that skips unchanged work still sees every change (a moved camera, an arriving puck)."""

from __future__ import annotations

import dataclasses

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.scene import CameraSetup, Scene, Stack

# The left camera of vision/README.md's two-camera mount, over seats 1-4.
LEFT_MOUNT = CameraSetup(hfov_deg=44.0, position=(470.0, -1000.0, 1600.0), look_at=(470.0, 500.0, 0.0))


def test_the_two_halves_hold_every_zone_of_the_table_once_with_the_same_circles(layout: Layout) -> None:
    left, right = Layout.load("grand-slam-7-left"), Layout.load("grand-slam-7-right")
    assert not left.zones.keys() & right.zones.keys()
    assert {**left.zones, **right.zones} == layout.zones
    assert {z.seat for z in left.zones.values()} == {1, 2, 3, 4}
    assert {z.seat for z in right.zones.values()} == {5, 6, 7}
    for half in (left, right):
        assert half.markers.keys() == layout.markers.keys()
        assert half.pucks == layout.pucks


def test_the_left_camera_reads_single_and_mixed_stacks_of_its_seats_exactly(layout: Layout) -> None:
    left = Layout.load("grand-slam-7-left")
    empty = Scene(camera=LEFT_MOUNT)
    calibration = Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model())
    stacks = {
        "seat1.home": (25,) * 7,
        "seat2.second.payout": (100,) * 14,
        "seat3.poker_bonus": (1000, 1000, 500, 500, 25, 25),
        "seat4.first": (5, 5, 5, 1, 1, 1, 1),
        "seat6.first": (25,) * 4,  # the right camera's: never reported by the left one
    }
    scene = Scene(camera=LEFT_MOUNT, zones={zone: (Stack(chips),) for zone, chips in stacks.items()})
    reading = Reader(left, calibration).read(render(scene, layout))
    assert "seat6.first" not in reading.zones
    for zone, chips in stacks.items():
        if zone in left.zones:
            assert reading.zones[zone].state == "ok", (zone, reading.zones[zone].why)
            assert reading.zones[zone].stacks[0].chips == chips, zone
    assert [name for name, z in reading.zones.items() if z.value is None] == []


def test_a_camera_moved_after_good_frames_is_still_reported_bumped(layout: Layout, calibration: Calibration) -> None:
    reader = Reader(layout, calibration)
    for noise in (2.0, 4.0):  # frames of a still table: the check is remembered
        assert not reader.read(render(Scene(noise=noise, seed=int(noise)), layout)).bumped
    moved = dataclasses.replace(Scene().camera, position=(850.0, -750.0, 1465.0), look_at=(858.0, 520.0, 0.0))
    reading = reader.read(render(Scene(camera=moved, zones={"seat4.first": (Stack((25, 25)),)}), layout))
    assert reading.bumped and reading.zones["seat4.first"].value is None
    back = reader.read(render(Scene(noise=2.0, zones={"seat4.first": (Stack((25, 25)),)}), layout))
    assert not back.bumped and back.zones["seat4.first"].value == 50


def test_a_puck_put_down_in_dim_light_after_empty_frames_is_found(layout: Layout, calibration: Calibration) -> None:
    reader = Reader(layout, calibration)
    assert reader.read(render(Scene(), layout)).pucks == {}
    dim = dataclasses.replace(Scene().lighting, brightness=0.7, gradient=0.3, gradient_deg=30.0)
    assert reader.read(render(Scene(lighting=dim, pucks={"blind": "seat6.puck"}), layout)).pucks == {
        "blind": "seat6.puck"
    }


def test_a_blurred_puck_in_the_middle_of_the_table_is_found(layout: Layout, reader: Reader) -> None:
    # Its marker's cells are about 4 px here: the quick one-scale search misses it at this blur,
    # and the reader must then search that spot with every threshold scale.
    scene = Scene(blur=0.85, pucks={"blind": "seat4.puck"})
    assert reader.read(render(scene, layout)).pucks == {"blind": "seat4.puck"}
