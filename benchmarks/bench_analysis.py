"""Simulation speed of `tablectl analyze` on one core: Grand Slam rounds and Baseball poker hands
per second through the engine (the Monte Carlo runs every round through `apply`; there is no
separate vectorised path to check against it).

Reference: the rate at which one core gets the Grand Slam three-base edge to +-0.1% (95%) in an
hour, and Baseball poker's showdown category frequencies to +-0.1% in an hour.
"""

from __future__ import annotations

import math
import time
from typing import Any

from controller.games.baseball.analysis import chunk as _baseball_chunk
from controller.games.grand_slam.analysis import analyze
from controller.games.grand_slam.analysis import chunk as _grand_slam_chunk

GS_ROUNDS = 3000
BB_HANDS = 300


def run() -> dict[str, Any]:
    started = time.perf_counter()
    gs = _grand_slam_chunk((1, 0), GS_ROUNDS, 6, (1, 1, 1))
    gs_s = time.perf_counter() - started
    # Each simulated "round" plays the three wager shapes, so count the engine rounds played.
    gs_rounds_per_s = 3 * GS_ROUNDS / gs_s

    started = time.perf_counter()
    bb = _baseball_chunk((1, 0), BB_HANDS, 1, 6)
    bb_s = time.perf_counter() - started
    bb_hands_per_s = BB_HANDS / bb_s

    exact = analyze(decks=6)["first+second+third"]
    sd_per_unit = exact.sd / exact.wagered
    needed_rounds = (1.96 * sd_per_unit / 0.001) ** 2
    gs_reference = needed_rounds / 3600
    # The widest category interval is at p = 0.5: +-0.1% needs (1.96 * 0.5 / 0.001)^2 showdown
    # hands, and a 6-player hand gives about 6 of them.
    bb_reference = (1.96 * 0.5 / 0.001) ** 2 / 6 / 3600
    return {
        "name": "analysis",
        "what": "Monte Carlo speed on one core, every round through the engine's apply: Grand Slam "
        "rounds (6-deck shoe, one seat) and Baseball poker hands (6 players calling to the showdown) "
        "per second (higher is better)",
        "reference": "the rate that gets the Grand Slam three-base edge to +-0.1% (95%) in one hour on one core "
        f"({gs_reference:.0f} rounds/s); for Baseball poker, every showdown category to +-0.1% in an hour "
        f"({bb_reference:.0f} hands/s); ratio = Grand Slam rounds/s / its reference",
        "ratio": gs_rounds_per_s / gs_reference,
        "results": {
            "grand_slam_rounds_per_s": round(gs_rounds_per_s, 1),
            "grand_slam_reference_rounds_per_s": round(gs_reference, 1),
            "grand_slam_three_base_edge_sample": round(gs["first+second+third"].house_edge, 5),
            "grand_slam_three_base_edge_exact": round(float(exact.house_edge), 5),
            "baseball_hands_per_s": round(bb_hands_per_s, 1),
            "baseball_reference_hands_per_s": round(bb_reference, 1),
            "baseball_ratio": round(bb_hands_per_s / bb_reference, 3),
            "baseball_rainouts_per_hand": round(bb["rainouts"].mean, 3),
            "hours_on_one_core_for_baseball_to_0.1pct": round((1.96 * 0.5 / 0.001) ** 2 / 6 / bb_hands_per_s / 3600, 2),
            "sd_per_unit_three_base": round(sd_per_unit, 4),
            "needed_rounds_for_0.1pct": math.ceil(needed_rounds),
        },
    }
