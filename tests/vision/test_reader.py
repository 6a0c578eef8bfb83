"""The reader on rendered frames: values exact on clean frames, doubt reported, never guessed."""

from __future__ import annotations

import numpy as np

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.render import draw, exposures, render
from vision.scene import Hand, Scene, Stack

SINGLE = {
    "seat1.first": (25,) * 5,
    "seat2.third.payout": (100,) * 12,
    "seat4.home": (1,),
    "seat5.second": (500,) * 3,
    "seat6.poker_bonus": (5,) * 20,
    "seat7.three_outs.payout": (1000,) * 2,
}
MIXED = {
    "seat1.second": (100, 100, 25, 25, 25),
    "seat3.first": (1000, 1000, 500, 500, 25, 25, 5, 5),
    "seat4.third.payout": (5, 5, 5, 1, 1, 1, 1),
    "seat6.home": (25, 25, 25, 100, 100, 100, 500, 500),
}


def _scene(stacks: dict[str, tuple[int, ...]], **kw: object) -> Scene:
    return Scene(zones={zone: (Stack(chips),) for zone, chips in stacks.items()}, **kw)  # type: ignore[arg-type]


def test_stacks_on_a_clean_frame_are_read_exactly_or_called_unsure_never_misread(
    layout: Layout, reader: Reader
) -> None:
    # At the default camera's 0.7-0.95 px/mm a chip's edge is 1.5-2.3 px tall: the reader may
    # doubt a stack (vision/README.md), but a value it gives must be the scene's.
    for stacks in (SINGLE, MIXED):
        reading = reader.read(render(_scene(stacks), layout))
        for zone, chips in stacks.items():
            seen = reading.zones[zone]
            assert seen.state in ("ok", "unsure"), (zone, seen.why)
            if seen.state == "ok":
                assert seen.stacks[0].chips == chips, zone
                assert seen.value == sum(chips)
            else:
                assert seen.value is None and seen.why


def test_a_short_single_colour_stack_near_the_camera_is_read_exactly(layout: Layout, reader: Reader) -> None:
    scene = _scene({"seat1.first": (25,) * 5, "seat5.second": (500,) * 3, "seat6.poker_bonus": (5,) * 20})
    reading = reader.read(render(scene, layout))
    assert reading.zones["seat1.first"].value == 125
    assert reading.zones["seat5.second"].stacks[0].denominations() == {500: 3}
    assert reading.zones["seat6.poker_bonus"].stacks[0].count == 20


def test_empty_zones_read_zero(layout: Layout, reader: Reader) -> None:
    scene = Scene(zones={"seat2.first": (Stack((25, 25, 25), offset=(6.0, -5.0)),)})
    reading = reader.read(render(scene, layout))
    assert reading.zones["seat2.first"].state in ("ok", "unsure")
    assert reading.zones["seat2.first"].value in (75, None)
    others = [z for name, z in reading.zones.items() if name != "seat2.first"]
    assert len(others) == 83
    assert all((z.state, z.value) == ("ok", 0) for z in others)


def test_a_hand_over_a_zone_gives_blocked_never_a_value(layout: Layout, reader: Reader) -> None:
    stacks = {**SINGLE, "seat3.first": (25, 25, 5)}
    for height in (90.0, 160.0):
        scene = _scene(stacks, hands=(Hand("seat3.first", height), Hand("seat6.poker_bonus", height, (110, 72, 50))))
        reading = reader.read(render(scene, layout))
        assert reading.zones["seat3.first"].state == "blocked"
        assert reading.zones["seat6.poker_bonus"].state == "blocked"
        for name, seen in reading.zones.items():
            if seen.state == "ok":  # whatever is still seen is right
                assert seen.value == scene.value_of(name), name


def test_a_stack_over_its_circle_line_is_not_counted(layout: Layout, reader: Reader) -> None:
    scene = Scene(zones={"seat4.second": (Stack((5, 5, 5), offset=(0.0, -20.0)),)})
    seen = reader.read(render(scene, layout)).zones["seat4.second"]
    assert seen.value is None and seen.state == "blocked"


def test_the_blind_puck_is_found_in_its_zone(layout: Layout, reader: Reader) -> None:
    for seat in (1, 4, 7):
        scene = Scene(pucks={"blind": f"seat{seat}.puck"}, zones={"seat4.first": (Stack((5,) * 4),)})
        assert reader.read(render(scene, layout)).pucks == {"blind": f"seat{seat}.puck"}
    assert reader.read(render(Scene(), layout)).pucks == {}


def test_a_still_table_under_heavy_noise_is_not_read_as_changed_and_a_chip_put_down_is(
    layout: Layout, calibration: Calibration
) -> None:
    """Sensor noise 14: two frames' box-averaged patches differ by more than the 24 levels that
    mean a change on a few samples of every zone, so every zone was read afresh as "changed" on
    every frame, and fusing never saw two readings of one wager (issue 36, sixth round)."""
    reader = Reader(layout, calibration)
    scene = Scene(zones={"seat3.first": (Stack((25, 25, 5)),)}, noise=14.0, seed=4)
    rng = np.random.default_rng(3)
    frames = exposures(draw(scene), scene, rng)
    reader.read(next(frames))
    for _ in range(3):
        reader.read(next(frames))
        assert [name for name, why in reader.afresh.items() if why == "changed"] == []
    grown = Scene(zones={"seat3.first": (Stack((25, 25, 5, 5)),)}, noise=14.0, seed=4)
    reader.read(next(exposures(draw(grown), grown, rng)))
    assert reader.afresh.get("seat3.first") == "changed"
