"""A still wager's pixels averaged over its frames (vision/pixelmean.py): the mean holds the frames
since the zone last changed, no frame with a hand over it, nothing from before a bump, and its noise
falls as the frames add up."""

from __future__ import annotations

import dataclasses

import numpy as np

from vision.calibration import Calibration
from vision.layout import Layout
from vision.pixelmean import PixelMeans
from vision.reader import Reader
from vision.render import draw, exposures, render
from vision.scene import Scene, Stack

ZONE = "seat3.first"


def test_a_still_zones_mean_holds_its_frames_and_a_change_without_a_hand_starts_it_again(layout: Layout) -> None:
    empty = Scene(noise=6.0, seed=4)
    calibration = Calibration.from_frame(render(Scene(seed=4), layout), layout)
    scene = Scene(zones={ZONE: (Stack((25, 25, 5)),)}, noise=6.0, seed=4)
    clean = render(Scene(zones={ZONE: (Stack((25, 25, 5)),)}, seed=4), layout).astype(np.float64)
    reader = Reader(layout, calibration)
    means = PixelMeans(reader)
    rng = np.random.default_rng(7)
    reader.read(next(exposures(draw(empty), empty, rng)))
    frames = exposures(draw(scene), scene, rng)
    for k in range(8):
        frame = next(frames)
        reading = reader.read(frame)  # the chips come on the first frame: "changed", then still
        assert reader.afresh.get(ZONE) == ("changed" if k == 0 else None)
        means.update(reading, frame)
    assert means.frames(ZONE) == 8
    x0, y0, x1, y1 = next(g.box for g in reader.zones if g.zone.name == ZONE)
    one = frame[y0:y1, x0:x1].astype(np.float64) - clean[y0:y1, x0:x1]
    mean = means.mean_frame(frame)[y0:y1, x0:x1].astype(np.float64) - clean[y0:y1, x0:x1]
    assert np.std(one) > 5.0
    assert np.std(mean) < np.std(one) / 2  # eight frames: the noise falls by about sqrt(8)
    # a chip more with no hand seen: the reader reads the zone afresh, its mean starts again
    grown = Scene(zones={ZONE: (Stack((25, 25, 5, 5)),)}, noise=6.0, seed=4)
    frame = next(exposures(draw(grown), grown, rng))
    reading = reader.read(frame)
    assert reader.afresh.get(ZONE) == "changed"
    means.update(reading, frame)
    assert means.frames(ZONE) == 1
    assert np.array_equal(means.mean_frame(frame)[y0:y1, x0:x1], frame[y0:y1, x0:x1])
    assert means.nbytes < 16 * 1024 * 1024  # one sum and one count over the zones' boxes, not frames kept


def test_a_hand_over_a_zone_empties_its_mean_and_a_bump_empties_every_mean(layout: Layout) -> None:
    from vision.scene import Hand

    calibration = Calibration.from_frame(render(Scene(seed=4), layout), layout)
    scene = Scene(zones={ZONE: (Stack((5, 5)),)}, noise=3.0, seed=4)
    reader = Reader(layout, calibration)
    means = PixelMeans(reader)
    rng = np.random.default_rng(8)
    frames = exposures(draw(scene), scene, rng)
    for _ in range(4):
        frame = next(frames)
        means.update(reader.read(frame), frame)
    assert means.frames(ZONE) == 4 and means.frames("seat3.second") == 4
    covered = Scene(zones=scene.zones, noise=3.0, seed=4, hands=(Hand(ZONE),))
    frame = next(exposures(draw(covered), covered, rng))
    reading = reader.read(frame)
    assert reading.zones[ZONE].state == "blocked"
    means.update(reading, frame)
    assert means.frames(ZONE) == 0  # no frame with a hand over it goes in
    camera = dataclasses.replace(Scene().camera, position=(850.0, -750.0, 1465.0), look_at=(858.0, 520.0, 0.0))
    bumped = Scene(zones=scene.zones, noise=3.0, seed=4, camera=camera)
    frame = next(exposures(draw(bumped), bumped, rng))
    reading = reader.read(frame)
    assert reading.bumped
    means.update(reading, frame)
    assert max(means.frames(g.zone.name) for g in reader.zones) == 0


def test_a_zones_mean_is_read_by_the_same_reader_with_the_frames_it_holds(layout: Layout) -> None:
    calibration = Calibration.from_frame(render(Scene(seed=4), layout), layout)
    scene = Scene(zones={ZONE: (Stack((25, 25, 5)),), "seat6.first": (Stack((100, 100)),)}, noise=6.0, seed=4)
    reader = Reader(layout, calibration)
    means = PixelMeans(reader)
    frames = exposures(draw(scene), scene, np.random.default_rng(9))
    for _ in range(8):
        frame = next(frames)
        means.update(reader.read(frame), frame)
    first = means.read(frame, [ZONE])
    assert first[ZONE][0] == 8 and first[ZONE][1].value == 55  # the mean of 8 frames, read
    for _ in range(8):
        frame = next(frames)
        means.update(reader.read(frame), frame)
    again = means.read(frame, [ZONE])
    assert again[ZONE][0] == 16 and again[ZONE][1].value == 55
    assert means.mean_reader.afresh == {ZONE: "asked"}  # the mean reader read the asked zone only
