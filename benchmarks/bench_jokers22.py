"""The banker's house advantage in Jokers 22, by Monte Carlo through the engine, and the engine's speed.

One spot, one player betting 1 chip against a banker whose stake always covers it. The forced
drawing rules of GAMES.md decide most hands; where the engine asks, the player follows a simple
strategy: hit 12 to 16, stand 17 to 19, never double, split or surrender. Each round is dealt from
a freshly shuffled 6-deck shoe with one joker a deck (318 cards), seeded, through
`GAME.apply` exactly as the table loop would drive it, on two worker processes.

The reference is `tablectl analyze jokers-22`'s exact calculation (controller/games/jokers22/analysis.py)
of the same rules and strategy for the same 6-deck shoe, the round's first cards drawn without
replacement (to depths 3 and 4), and for an infinite shoe; its time is reported too. (The
infinite-shoe figure is checked in tests/analysis against an independent count written without
engine code.) The Monte Carlo result carries a 95% confidence interval, and the report says how
many rounds an interval of +-0.5% needs. Two cores shared with other work: timings are noisy.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

from controller.engine.base import CardDealt
from controller.engine.cards import ShoeComposition
from controller.games.jokers22.analysis import Strategy, analyze
from controller.games.jokers22.rules import GAME, Banker, Decision, Jokers22Rules, OpenRound, SpotBet, Wager

SEED = 20_260_022
ROUNDS = 140_000
WORKERS = 2
TARGET = 0.005  # the half-width of the 95% interval the edge should be known to
OPENING = OpenRound(Jokers22Rules(), Banker(stake=10**9), (SpotBet(1, (Wager("player", 1),)),))


# --- Monte Carlo through the engine ----------------------------------------------------------


def play_round(shoe: list[object]) -> int:
    """One round through the engine; the player's net in chips."""
    state, _ = GAME.apply(GAME.initial(), OPENING)
    while True:
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card":
            state, _ = GAME.apply(state, CardDealt(shoe.pop()))  # type: ignore[arg-type]
        elif awaiting.kind == "decision":
            hand = state.spot(1).hands[int(awaiting.who["hand"]) - 1]
            hit = "hit" in awaiting.allowed and ("stand" not in awaiting.allowed or hand.total.value <= 16)
            state, _ = GAME.apply(state, Decision(1, "hit" if hit else "stand"))
        else:
            return int(GAME.settlement(state)["players"][0]["net"])


def simulate(seed: int, rounds: int) -> tuple[int, int, int, float]:
    """(rounds, sum of nets, sum of squared nets, seconds) for `rounds` rounds from `seed`."""
    rng = random.Random(seed)
    full: list[object] = list(ShoeComposition(6, 1).cards())
    total = squares = 0
    started = time.process_time()  # CPU time of this worker: the machine is shared
    for _ in range(rounds):
        shoe = full[:]
        rng.shuffle(shoe)
        net = play_round(shoe)
        total += net
        squares += net * net
    return rounds, total, squares, time.process_time() - started


# --- the benchmark ---------------------------------------------------------------------------


def _seeds() -> Iterator[int]:
    rng = random.Random(SEED)
    while True:
        yield rng.getrandbits(64)


def run() -> dict[str, object]:
    seeds = _seeds()
    started = time.perf_counter()
    with ProcessPoolExecutor(WORKERS) as pool:
        parts = list(pool.map(simulate, [next(seeds) for _ in range(WORKERS)], [ROUNDS // WORKERS] * WORKERS))
    wall = time.perf_counter() - started
    rounds = sum(p[0] for p in parts)
    total = sum(p[1] for p in parts)
    squares = sum(p[2] for p in parts)
    per_core = rounds / sum(p[3] for p in parts)
    mean = total / rounds
    sd = math.sqrt(squares / rounds - mean * mean)
    half_width = 1.96 * sd / math.sqrt(rounds)
    needed = math.ceil((1.96 * sd / TARGET) ** 2)
    banker_edge_mc = -mean
    exact: dict[str, float] = {}
    exact_seconds: dict[str, float] = {}
    for name, decks, depth in (("infinite", 0, 3), ("6_decks_depth_3", 6, 3), ("6_decks_depth_4", 6, 4)):
        began = time.process_time()
        exact[name] = analyze(decks=decks, depth=depth, strategy=Strategy(stand_on=17), wager=1).banker_edge
        exact_seconds[name] = time.process_time() - began
    banker_edge_exact = exact["6_decks_depth_4"]
    return {
        "name": "jokers22",
        "what": (
            "banker's advantage per chip wagered (1 spot, 1 player; player hits 12-16, stands 17-19, never "
            "doubles, splits or surrenders) by Monte Carlo through the engine on fresh 6-deck+6-joker shoes, "
            "and engine rounds per second (higher is better)"
        ),
        "reference": (
            "tablectl analyze jokers-22's exact calculation of the same rules and strategy on the same 6-deck "
            "shoe (the first 4 cards without replacement); ratio = Monte Carlo edge / exact edge"
        ),
        "ratio": banker_edge_mc / banker_edge_exact,
        "results": {
            "rounds": rounds,
            "banker_edge_monte_carlo": round(banker_edge_mc, 5),
            "ci95_half_width": round(half_width, 5),
            "banker_edge_exact": {k: round(v, 7) for k, v in exact.items()},
            "exact_cpu_seconds": {k: round(v, 2) for k, v in exact_seconds.items()},
            "difference_in_ci_half_widths": round((banker_edge_mc - banker_edge_exact) / half_width, 2),
            "sd_per_round": round(sd, 4),
            "rounds_needed_for_ci95_of_0.5pct": needed,
            "rounds_per_cpu_second_per_worker": round(per_core),
            "rounds_per_second_on_2_workers": round(rounds / wall),
            "seconds_for_0.5pct_on_2_workers": round(needed / (rounds / wall), 1),
            "wall_seconds": round(wall, 1),
        },
    }
