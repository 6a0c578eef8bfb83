"""Shared fixtures: the shipped layout, the default simulated camera and its calibration."""

from __future__ import annotations

import pytest

from vision.calibration import Calibration
from vision.layout import Layout
from vision.reader import Reader
from vision.render import render
from vision.scene import Scene


@pytest.fixture(scope="session")
def layout() -> Layout:
    return Layout.load("grand-slam-7")


@pytest.fixture(scope="session")
def calibration(layout: Layout) -> Calibration:
    """Calibrated on the empty table, with the simulated camera's matrix known."""
    empty = Scene()
    return Calibration.from_frame(render(empty, layout), layout, camera=empty.camera.model())


@pytest.fixture(scope="session")
def _one_reader(layout: Layout, calibration: Calibration) -> Reader:
    return Reader(layout, calibration)


@pytest.fixture
def reader(_one_reader: Reader) -> Reader:
    """One reader for the session (making one costs 0.35 s), with no memory of another test's
    frames: the reader skips what looks unchanged and follows the markers and pucks it saw, so
    without forgetting, a test's reading would depend on which tests ran before it on its worker."""
    _one_reader.forget(markers=True)
    return _one_reader
