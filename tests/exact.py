"""The analysis' exact enumerations that the tests check, each computed once per run (once per
test process): the figures that several tests and files ask for come from one enumeration, kept
here (Grand Slam's six-deck shoe alone takes most of a minute on a busy machine). Only calls
whose arguments can be hashed are kept; the figures are read, never changed, by the tests."""

from __future__ import annotations

import functools

from controller.games.grand_slam.analysis import analyze as _grand_slam
from controller.games.jokers22.analysis import analyze as _jokers22

grand_slam_figures = functools.cache(_grand_slam)
jokers22_figures = functools.cache(_jokers22)
