"""The robustness suite's sample: one scene at the two-camera mount under conditions real
cameras and tables bring (vision/robustness.py). Under every one no zone reads a wrong value;
light and small camera moves are undone (values still read); what blurs the frame beyond what
can be counted makes stacks "unsure" with the reason. The full table over many scenes is the
benchmark's (`python -m benchmarks vision_robustness`)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import FrameReading, Reader
from vision.render import Drawn, draw, expose, render
from vision.robustness import CONDITIONS, jpeg, lighting_only
from vision.scene import CameraSetup, Lighting, Scene, SceneError, Sensor, Stack
from vision.stages import check_colours, name_colours

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
def left() -> Layout:
    return Layout.load("grand-slam-7-left")


@pytest.fixture(scope="module")
def drawn(layout: Layout) -> Drawn:
    return draw(SCENE, layout)


@pytest.fixture(scope="module")
def left_reader(layout: Layout, left: Layout) -> Reader:
    empty = Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0)
    return Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))


def _read(reader: Reader, frame: np.ndarray) -> FrameReading:
    reader.forget(markers=True)
    return reader.read(frame)


def _wrong(reading: FrameReading, scene: Scene) -> list[str]:
    return [
        f"{name}: read {z.value}, is {scene.value_of(name)}"
        for name, z in reading.zones.items()
        if z.state == "ok" and z.value != scene.value_of(name)
    ]


def _exact(reading: FrameReading, scene: Scene) -> list[str]:
    return [name for name, z in reading.zones.items() if z.state == "ok" and z.value == scene.value_of(name)]


@pytest.mark.parametrize("name", ["contrast 0.7", "gamma 0.7", "gamma 1.4", "shift 1-2 px", "noise 14"])
def test_light_and_a_nudged_camera_are_undone_and_the_values_still_read(
    name: str, drawn: Drawn, left_reader: Reader, left: Layout
) -> None:
    scene = CONDITIONS[name].apply(SCENE)
    assert lighting_only(scene)
    reading = _read(left_reader, expose(drawn, scene))
    assert not reading.bumped, reading.camera.why
    assert _wrong(reading, scene) == []
    empty_unsure = [n for n, z in reading.zones.items() if z.state != "ok" and not scene.value_of(n)]
    assert empty_unsure == [], [reading.zones[n].why for n in empty_unsure]
    read_stacks = [n for n in _exact(reading, scene) if scene.value_of(n)]
    assert len(read_stacks) >= len(STACKS) - 2, {n: reading.zones[n].why for n in STACKS}


def test_a_nudged_camera_is_followed_and_a_large_move_is_a_bump(
    drawn: Drawn, left_reader: Reader, layout: Layout
) -> None:
    nudged = dataclasses.replace(SCENE, sensor=dataclasses.replace(SCENE.sensor, shift_px=(2.0, -1.5)))
    reading = _read(left_reader, expose(drawn, nudged))
    assert not reading.bumped
    assert reading.camera.followed_px == pytest.approx(2.5, abs=0.5)
    assert "followed" in reading.camera.why
    knocked = dataclasses.replace(SCENE, sensor=dataclasses.replace(SCENE.sensor, shift_px=(14.0, 6.0)))
    reading = _read(left_reader, expose(drawn, knocked))
    assert reading.bumped
    assert all(z.value is None for z in reading.zones.values())


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("motion 9", "smeared one way"),
        ("defocus 2.5", "too blurred to count"),
        ("jpeg 70", ""),
    ],
)
def test_a_frame_blurred_or_compressed_beyond_counting_never_gives_a_wrong_value(
    name: str, reason: str, drawn: Drawn, left_reader: Reader
) -> None:
    scene = CONDITIONS[name].apply(SCENE)
    reading = _read(left_reader, expose(drawn, scene))
    assert _wrong(reading, scene) == []
    unsure = [z.why for n, z in reading.zones.items() if z.state == "unsure" and n in STACKS]
    if reason:
        assert unsure and all(reason in why for why in unsure), unsure
    assert all(why for why in unsure)


def test_a_second_lights_stack_shadows_are_not_something_on_the_felt(layout: Layout, left_reader: Reader) -> None:
    scene = CONDITIONS["second light"].apply(SCENE)
    assert scene.lighting.shadows
    reading = _read(left_reader, render(scene, layout))
    assert _wrong(reading, scene) == []
    assert reading.blocked == []  # before: the shadows' zones were "something other than a stack"
    assert all(reading.zones[n].value == 0 for n in reading.zones if n not in STACKS)


def test_every_condition_of_the_suite_is_a_scene_file_that_renders_the_same_frame(
    tmp_path: Path, layout: Layout
) -> None:
    small = dataclasses.replace(SCENE, camera=dataclasses.replace(LEFT_MOUNT, resolution=(320, 180)))
    for name in ("lean 0.4", "sloppy 2", "worn 20", "maker 16", "spots 4x30 yellow", "jpeg 70 + shadow + glare + warm"):
        scene = CONDITIONS[name].apply(small)
        path = tmp_path / "scene.json"
        scene.save(path)
        again = Scene.load(path)
        assert again == scene, name
        assert np.array_equal(render(again, layout), render(scene, layout)), name
        assert not np.array_equal(render(scene, layout), render(small, layout)), name


def _along_the_line_of_sight(scene: Scene, layout: Layout, mm_per_chip: float, across: bool = False) -> Scene:
    """Every stack of `scene` leaning `mm_per_chip` a chip straight away from the camera (from
    its one view the top stands where a taller upright stack's would), or `across` that line."""
    foot = np.array(scene.camera.position[:2])
    zones = {}
    for name, stacks in scene.zones.items():
        away = np.array(layout.zones[name].centre) - foot
        if across:
            away = np.array([away[1], -away[0]])
        dx, dy = (mm_per_chip * away / np.linalg.norm(away)).tolist()
        zones[name] = tuple(dataclasses.replace(s, lean=(dx, dy)) for s in stacks)
    return dataclasses.replace(scene, zones=zones)


def test_a_stack_leaning_along_the_line_of_sight_is_unsure_never_a_taller_stack(
    layout: Layout, left_reader: Reader
) -> None:
    leaning = _along_the_line_of_sight(SCENE, layout, 0.4)
    reading = _read(left_reader, render(leaning, layout))
    assert _wrong(reading, leaning) == []
    tall = [n for n, chips in STACKS.items() if len(chips) >= 6]  # leaning 2.4 mm or more: a chip and more taller
    not_square = [n for n in tall if reading.zones[n].state == "unsure" and "not square" in reading.zones[n].why]
    assert not_square, {n: (reading.zones[n].state, reading.zones[n].why) for n in tall}
    upright = _read(left_reader, render(SCENE, layout))  # the same stacks standing straight are counted
    assert _wrong(upright, SCENE) == []
    assert len([n for n in _exact(upright, SCENE) if SCENE.value_of(n)]) >= len(STACKS) - 2


def test_a_stack_leaning_across_the_line_of_sight_is_unsure_with_its_outline_as_the_reason(
    layout: Layout, left_reader: Reader
) -> None:
    leaning = _along_the_line_of_sight(SCENE, layout, 0.4, across=True)
    reading = _read(left_reader, render(leaning, layout))
    assert _wrong(reading, leaning) == []
    tall = [n for n, chips in STACKS.items() if len(chips) >= 6]  # their tops 2.4 mm and more off their bases
    strays = [n for n in tall if "outline strays" in reading.zones[n].why]
    assert strays, {n: (reading.zones[n].state, reading.zones[n].why) for n in tall}


PAIRS = {
    "seat1.home": (25, 25),
    "seat2.third": (500, 500),
    "seat3.home.payout": (100, 100),
    "seat4.second": (1, 1),
    "seat2.second.payout": (1000, 1000),
}


def test_a_chip_pushed_away_off_the_one_below_is_unsure_never_counted_as_a_chip_more(
    layout: Layout, left_reader: Reader
) -> None:
    """Two chips, the top one 2.6 mm off the bottom one straight away from the camera (a sloppy
    stack): the bottom chip's top face shows between them, a sliver about as tall as a chip from
    this view, and the height alone read three chips (four of these five stacks before the
    sliver check). Each is "unsure" with the sliver as the reason; standing square, each is read."""
    pushed = _along_the_line_of_sight(
        dataclasses.replace(SCENE, zones={n: (Stack(chips),) for n, chips in PAIRS.items()}), layout, 2.6
    )
    reading = _read(left_reader, render(pushed, layout))
    assert _wrong(reading, pushed) == []
    why = {n: reading.zones[n].why for n in PAIRS}
    assert all("not square" in w and "sliver" in w for w in why.values()), why
    square = dataclasses.replace(pushed, zones={n: (Stack(chips),) for n, chips in PAIRS.items()})
    upright = _read(left_reader, render(square, layout))
    assert _wrong(upright, square) == []
    assert set(PAIRS) <= set(_exact(upright, square))


def test_a_short_sloppy_stack_whose_height_leans_to_the_count_its_side_allows_is_unsure_not_a_chip_more() -> None:
    """The per-wager benchmark's sloppy 1 mm scene of seed 100012 (left camera; issue 36 asked for
    its wrong zone to be found): seat 2's home plate holds three red 5s, each up to 1 mm off,
    and the reader counted four on every frame (3.71 chips of height; its side's chip edges fit
    3 chips as well as 4, 0.15 against 0.15, and the side is not asked more of a short stack).
    Two weak signs that agree make it "not square" now (Tuning.rival_near, rival_height, set on
    tuning seeds 0-47: one right reading of 544 lost on clean frames), which the dealer sees as
    "square the stack"; the scene's other zones read as before, none wrong."""
    from benchmarks.bench_vision_accuracy import empty_table, view

    whole = Layout.load("grand-slam-7")
    scene, half = view(100_012, "halves", whole, (1920, 1080))
    scene = CONDITIONS["sloppy 1"].apply(dataclasses.replace(scene, hands=()))
    assert scene.zones["seat2.home"][0].chips == (5, 5, 5)
    reader = Reader(half, Calibration.from_frame(render(empty_table(scene), whole), half, camera=scene.camera.model()))
    reading = _read(reader, render(scene, whole))
    assert _wrong(reading, scene) == []
    why = reading.zones["seat2.home"].why
    assert reading.zones["seat2.home"].state == "unsure" and "not square" in why and "leans toward the 3" in why, why
    assert len(_exact(reading, scene)) >= 40  # 41, as before


def test_short_upright_stacks_are_counted_not_called_not_square() -> None:
    """Tuning scene 17 (the accuracy benchmark's, left camera): six of its upright stacks of 2 to
    5 chips had a rival count fitting their side's edges within noise of theirs, and the plain
    not-square check made every one "unsure". Upright, most are counted now (those whose colours
    are not sure stay "unsure"); nothing is read wrong."""
    from benchmarks.bench_vision_accuracy import empty_table, view

    whole = Layout.load("grand-slam-7")
    scene, half = view(17, "halves", whole, (1920, 1080))
    assert not scene.hands
    reader = Reader(half, Calibration.from_frame(render(empty_table(scene), whole), half, camera=scene.camera.model()))
    reading = _read(reader, render(scene, whole))
    assert _wrong(reading, scene) == []
    short = [n for n, stacks in scene.zones.items() if n in reading.zones and stacks and len(stacks[0].chips) < 6]
    assert len(short) >= 8
    not_square = [n for n in short if "not square" in reading.zones[n].why]
    assert len(not_square) <= 2, {n: reading.zones[n].why for n in not_square}
    exact = set(_exact(reading, scene))
    assert len([n for n in short if n in exact]) >= len(short) - 2, {n: reading.zones[n].why for n in short}


# -- motion blur (a shaking mount): the blur measured as a direction (a 2 x 2 covariance from the
# calibration markers' edges); stacks under about 5 px counted with the blur along each stack's
# axis in the frame in its height's correction and its colours; a frame smeared beyond that refused


def _moving(px: float, degrees: float) -> Scene:
    return dataclasses.replace(SCENE, sensor=dataclasses.replace(SCENE.sensor, motion_px=px, motion_deg=degrees))


@pytest.mark.parametrize("degrees", [20.0, 65.0, 135.0])
def test_the_blur_is_measured_with_its_direction(degrees: float, drawn: Drawn, left_reader: Reader) -> None:
    _read(left_reader, expose(drawn, _moving(5.0, degrees)))
    values, vectors = np.linalg.eigh(left_reader.conditions.blur_cov)
    longest, shortest = np.sqrt(values[::-1])
    direction = math.degrees(math.atan2(vectors[1, 1], vectors[0, 1])) % 180
    off = abs((direction - degrees + 90) % 180 - 90)
    assert off < 10, (direction, degrees)
    # a 5 px line has a spread (sd) of 1.44 px, added to the lens's 0.6-0.8 px; across it, the lens's only
    assert 1.4 < longest < 2.3
    assert shortest < 1.2
    assert left_reader.conditions.smeared


def test_a_sharp_frame_is_not_smeared(drawn: Drawn, left_reader: Reader) -> None:
    reading = _read(left_reader, expose(drawn, SCENE))
    assert not left_reader.conditions.smeared
    longest = math.sqrt(float(np.linalg.eigvalsh(left_reader.conditions.blur_cov)[1]))
    assert longest < 1.2
    assert _wrong(reading, SCENE) == []


def test_stacks_under_5_px_of_motion_blur_are_counted_and_never_wrong(drawn: Drawn, left_reader: Reader) -> None:
    exact = 0
    for degrees in (0.0, 20.0, 150.0, 92.6):  # across the stacks' axes (about vertical here) ... along them
        scene = _moving(5.0, degrees)
        reading = _read(left_reader, expose(drawn, scene))
        assert left_reader.conditions.smeared
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
    reading = _read(left_reader, expose(drawn, scene))
    assert _wrong(reading, scene) == []
    unsure = [reading.zones[n].why for n in STACKS if reading.zones[n].state == "unsure"]
    assert len(unsure) == len(STACKS)
    assert all("smeared one way" in why for why in unsure), unsure


def test_a_jpeg_frames_bottom_chips_keep_their_colour_against_the_felt(layout: Layout, left: Layout) -> None:
    """JPEG keeps colour at half the resolution: the blue felt's colour bleeds into the bottom
    chip far more than its lightness, and a red bottom chip (purple's lightness) looked purple,
    an orange one whitish. The reader takes the felt's extra share off the bottom chip's colour
    (Tuning.jpeg_bottom_chroma): named at their true place and count, red and orange stacks on a JPEG 75
    frame are sure of their colours far more often (before: 15 of these 30 "could be more than
    one colour", one bottom chip named white), and never named wrong."""
    zones = [z.name for z in left.chip_zones()][:30]
    stacks = {z: ((5, 1000)[i % 2],) * (2 + i % 5) for i, z in enumerate(zones)}
    scene = CONDITIONS["jpeg 75"].apply(
        Scene(camera=LEFT_MOUNT, seed=7, blur=0.3, noise=2.0, zones={z: (Stack(c),) for z, c in stacks.items()})
    )
    empty = CONDITIONS["jpeg 75"].apply(Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0))
    reader = Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))
    frame = render(scene, layout)
    reading = _read(reader, frame)
    assert reader.conditions.compressed
    assert _wrong(reading, scene) == []
    unsure = 0
    for zone, chips in stacks.items():
        centre = np.array([left.zones[zone].x, left.zones[zone].y])
        blur = reader.conditions.blur_for(zone)
        view = reader.frame_view(frame)
        named = name_colours(
            centre, len(chips), blur, view, reader.conditions, left.chips, reader.felt_rgb, reader.tuning
        )
        doubt = check_colours(named, reader.conditions, reader.tuning)
        if doubt is not None:
            assert "could be more than one colour" in doubt
            unsure += 1
        else:
            assert named.chips == chips, zone
    assert unsure <= 9  # 6 now


def test_a_jpeg_frames_red_and_orange_stacks_are_counted_not_left_between_two_counts(
    layout: Layout, left: Layout
) -> None:
    """JPEG's halved, coarsely quantised colour moves a stack's far edge by its top's colour: red
    and orange tops read about 0.3 chip long on JPEG 75 frames, white, black, green and purple
    within 0.1, and the same on every frame (the same stack makes the same blocks), so fusing
    frames cannot help. The reader takes that off by the top's colour against the felt's
    (`stages.top_chroma`, Tuning.jpeg_count_bias_per_cb / _per_cr): of these 30 red and orange
    stacks 24 were "between two counts" before, and none is read wrong."""
    zones = [z.name for z in left.chip_zones()][:30]
    stacks = {z: ((5, 1000)[i % 2],) * (2 + i % 5) for i, z in enumerate(zones)}
    scene = CONDITIONS["jpeg 75"].apply(
        Scene(camera=LEFT_MOUNT, seed=7, blur=0.3, noise=2.0, zones={z: (Stack(c),) for z, c in stacks.items()})
    )
    empty = CONDITIONS["jpeg 75"].apply(Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0))
    reader = Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))
    reading = _read(reader, render(scene, layout))
    assert reader.conditions.compressed
    assert _wrong(reading, scene) == []
    between = [n for n in zones if "chips" in (reading.zones[n].why or "") and " is between " in reading.zones[n].why]
    assert len(between) <= 8, between  # 4 now


def test_a_jpeg_frames_short_upright_stacks_are_counted_by_their_colours_where_the_blocks_wash_out_the_side(
    layout: Layout, left: Layout
) -> None:
    """JPEG 75 quantises away the side's chip edges (2.5-2.8 px a chip), so the edges down an
    upright stack's side often fit a chip more or less as well as its count: on a sharp JPEG frame
    such a stack under 6 chips whose height is within 0.2 of a whole count is counted when its
    colours are sure (Tuning.jpeg_rival_doubt, jpeg_sure_colours), as a short stack on a raw frame
    is. Of these 30 upright stacks of 2-5 chips of every colour, 9 were "not square" by their
    side's edges and 18 read before; none is read wrong."""
    zones = [z.name for z in left.chip_zones()][:30]
    colours = (5, 1000, 1, 25, 100, 500)
    stacks = {z: (colours[i % 6],) * (2 + i % 4) for i, z in enumerate(zones)}
    scene = CONDITIONS["jpeg 75"].apply(
        Scene(camera=LEFT_MOUNT, seed=7, blur=0.3, noise=2.0, zones={z: (Stack(c),) for z, c in stacks.items()})
    )
    empty = CONDITIONS["jpeg 75"].apply(Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0))
    reader = Reader(left, Calibration.from_frame(render(empty, layout), left, camera=LEFT_MOUNT.model()))
    reading = _read(reader, render(scene, layout))
    assert reader.conditions.compressed
    assert _wrong(reading, scene) == []
    side = [n for n in zones if "edges down its side" in (reading.zones[n].why or "")]
    assert len(side) <= 3, side  # 1 now
    read = [n for n in _exact(reading, scene) if scene.value_of(n)]
    assert len(read) >= 21, {n: reading.zones[n].why for n in zones if n not in read}  # 23 now


# The camera, light and stack of a tuning scene (seed 59 of the robustness benchmark, the right
# half) where two green chips worn lighter were named white: the namer's one light level for
# the stack then fitted a dim white.
WORN_MOUNT = CameraSetup(
    hfov_deg=44.18,
    position=(1366.1, -1030.6, 1590.2),
    look_at=(1321.2, 479.6, 0.0),
    roll_deg=-1.48,
    dist=(-0.00219, 0.00207, 0.0, 0.0, 0.0),
)
WORN_LIGHT = Lighting(
    brightness=1.261,
    tint=(0.985, 1.041, 0.922),
    gradient=0.152,
    gradient_deg=289.3,
    azimuth_deg=37.13,
    elevation_deg=47.16,
)
WORN_GREENS = ((113, 175, 107), (113, 170, 102))  # green (31, 138, 63) moved 20 Lab, lighter and greyer


def test_green_chips_worn_toward_white_are_unsure_with_the_reason_never_white(layout: Layout) -> None:
    right = Layout.load("grand-slam-7-right")
    zone = "seat7.first.payout"
    scene = Scene(
        camera=WORN_MOUNT,
        lighting=WORN_LIGHT,
        seed=59,
        blur=0.455,
        noise=1.95,
        wear=20.0,
        # each chip's edge as the renderer's wear left it in that scene (vision/render.py `_worn`)
        zones={zone: (Stack((25, 25), offset=(-0.84, 6.96), edges=WORN_GREENS),)},
    )
    empty = Scene(camera=WORN_MOUNT, lighting=WORN_LIGHT, seed=60, blur=0.455, noise=1.95)
    reader = Reader(right, Calibration.from_frame(render(empty, layout), right, camera=WORN_MOUNT.model()))
    reading = _read(reader, render(scene, layout))
    seen = reading.zones[zone]
    assert seen.state == "unsure", (seen.state, seen.value)
    assert "nearer 25's than 1's (worn or dirty?)" in seen.why
    assert reading.zones[zone].value is None


def test_a_stacks_worn_edges_go_through_a_scene_file_and_are_checked() -> None:
    scene = Scene(zones={"seat1.first": (Stack((25, 25), edges=WORN_GREENS),)})
    assert Scene.from_dict(scene.to_dict()) == scene
    with pytest.raises(SceneError, match="edges: must be a list of"):
        Scene.from_dict({"zones": {"seat1.first": {"stacks": [{"chips": [5, 5], "edges": [[1, 2, 3]]}]}}})


def test_a_jpeg_scene_says_its_colour_resolution_and_full_colour_keeps_the_chips_chroma(layout: Layout) -> None:
    """A scene's JPEG is written with the colour at half resolution each way ("4:2:0", what MJPEG
    cameras send by default) unless the scene says "4:2:2" or "4:4:4" (halved across only, or full; issue
    36's eleventh round measures what the reader gives at each). Red and purple chips in turn,
    as lit as each other: at the chips' colour edges a 4:4:4 frame's Cb and Cr stay far nearer the
    raw frame's than a 4:2:0 frame's at the same quality, and its luma as near. The setting goes
    through a scene file; a file that does not set it reads as 4:2:0, and another value is refused."""
    zones = [z.name for z in layout.chip_zones()][:30]
    scene = Scene(camera=LEFT_MOUNT, seed=7, blur=0.3, noise=2.0, zones={z: (Stack((5, 500) * 4),) for z in zones})
    raw = cv2.cvtColor(render(scene, layout), cv2.COLOR_BGR2YCrCb).astype(np.float64)
    edges = np.abs(cv2.Laplacian(raw[..., 1], cv2.CV_64F)) > 8  # where the chips' colour changes

    def error(chroma: str) -> np.ndarray:
        frame = render(dataclasses.replace(scene, sensor=Sensor(jpeg=75, jpeg_chroma=chroma)), layout)
        d = cv2.cvtColor(frame, cv2.COLOR_BGR2YCrCb).astype(np.float64) - raw
        return np.asarray(np.sqrt((d[edges] ** 2).mean(axis=0)))  # Y, Cr, Cb

    halved, full = error("4:2:0"), error("4:4:4")
    assert full[1] < 0.75 * halved[1] and full[2] < 0.75 * halved[2], (halved, full)
    assert abs(full[0] - halved[0]) < 0.1 * halved[0], (halved, full)

    asked = dataclasses.replace(scene, sensor=Sensor(jpeg=75, jpeg_chroma="4:4:4"))
    assert Scene.from_dict(asked.to_dict()) == asked
    assert "jpeg_chroma" not in scene.to_dict()["sensor"]
    assert Scene.from_dict(scene.to_dict()).sensor.jpeg_chroma == "4:2:0"
    with pytest.raises(SceneError, match="jpeg_chroma"):
        Scene.from_dict({"sensor": {"jpeg": 75, "jpeg_chroma": "4:1:1"}})


def _named_sure(reader: Reader, frame: np.ndarray, left: Layout, stacks: dict[str, tuple[int, ...]]) -> list[str]:
    """The zones whose stack `reader` names sure at its true place and count on `frame` (each one
    named right, else the test fails)."""
    _read(reader, frame)
    assert reader.conditions.compressed
    sure = []
    for zone, chips in stacks.items():
        centre = np.array([left.zones[zone].x, left.zones[zone].y])
        named = name_colours(
            centre,
            len(chips),
            reader.conditions.blur_for(zone),
            reader.frame_view(frame),
            reader.conditions,
            left.chips,
            reader.felt_rgb,
            reader.tuning,
        )
        if check_colours(named, reader.conditions, reader.tuning) is None:
            assert named.chips == chips, zone
            sure.append(zone)
    return sure


def test_a_reader_told_its_jpeg_keeps_the_colour_down_the_frame_names_bottom_chips_it_did_not(
    layout: Layout, left: Layout
) -> None:
    """A 4:2:0 JPEG halves the colour down the frame, along a stack's side, and bleeds the felt's
    colour into the bottom chip, which the reader takes off (Tuning.jpeg_bottom_chroma). A camera
    whose MJPEG is 4:2:2 (the colour halved across only) bleeds none there: taking it off anyway
    turns a red bottom chip's colour from the felt's, and the stack "could be more than one colour".
    Told the stream's colour resolution (`Reader(jpeg_chroma="4:2:2")`, as its header says), the
    reader names more of these red and orange stacks on a JPEG 75 4:2:2 frame sure, never wrong;
    the frame's reading holds no wrong value either way, and an unknown resolution is refused."""
    zones = [z.name for z in left.chip_zones()][:30]
    stacks = {z: ((5, 1000)[i % 2],) * (2 + i % 5) for i, z in enumerate(zones)}
    kept = jpeg(75, "4:2:2")
    scene = kept(
        Scene(camera=LEFT_MOUNT, seed=7, blur=0.3, noise=2.0, zones={z: (Stack(c),) for z, c in stacks.items()})
    )
    calibration = Calibration.from_frame(
        render(kept(Scene(camera=LEFT_MOUNT, seed=8, blur=0.3, noise=2.0)), layout), left, camera=LEFT_MOUNT.model()
    )
    frame = render(scene, layout)
    for chroma in ("4:2:0", "4:2:2"):
        assert _wrong(_read(Reader(left, calibration, jpeg_chroma=chroma), frame), scene) == []
    assumed = _named_sure(Reader(left, calibration), frame, left, stacks)
    told = _named_sure(Reader(left, calibration, jpeg_chroma="4:2:2"), frame, left, stacks)
    assert len(told) >= len(assumed) + 4, (len(assumed), len(told))
    with pytest.raises(ValueError, match="jpeg_chroma"):
        Reader(left, calibration, jpeg_chroma="4:1:1")
