"""The banker's house advantage in Jokers 22, by Monte Carlo through the engine, and the engine's speed.

One spot, one player betting 1 chip against a banker whose stake always covers it. The forced
drawing rules of GAMES.md decide most hands; where the engine asks, the player follows a simple
strategy: hit 12 to 16, stand 17 to 19, never double, split or surrender. Each round is dealt from
a freshly shuffled 6-deck shoe with one joker a deck (318 cards), seeded, through
`GAME.apply` exactly as the table loop would drive it, on two worker processes.

The reference is an independent exact evaluator of the same rules and strategy for an infinite
shoe (every card drawn with its 6-deck-shoe frequency: 4/53 for each rank, 1/53 for the joker),
which enumerates every hand instead of running the engine. The Monte Carlo result carries a 95%
confidence interval, and the report says how many rounds an interval of +-0.5% needs.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from fractions import Fraction

from controller.engine.base import CardDealt
from controller.engine.cards import ShoeComposition
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
    started = time.perf_counter()
    for _ in range(rounds):
        shoe = full[:]
        rng.shuffle(shoe)
        net = play_round(shoe)
        total += net
        squares += net * net
    return rounds, total, squares, time.perf_counter() - started


# --- the exact infinite-shoe reference (no engine code) --------------------------------------

# Outcomes of a finished hand: "JJ" (joker pair), "NAT" (A+A or joker+A), or a total 4..26.
RANKS = [(v, Fraction(4, 53)) for v in (1, 2, 3, 4, 5, 6, 7, 8, 9)] + [(10, Fraction(16, 53))]
JOKER_P = Fraction(1, 53)


def _value(hard: int, ace: bool) -> tuple[int, bool]:
    return (hard + 10, True) if ace and hard + 10 <= 21 else (hard, False)


def _draw(hard: int, ace: bool, p: Fraction, hits: object, out: dict[object, Fraction]) -> None:
    value, soft = _value(hard, ace)
    if not hits(value, soft):  # type: ignore[operator]
        out[value] = out.get(value, Fraction(0)) + p
        return
    out[21] = out.get(21, Fraction(0)) + p * JOKER_P  # a joker: hard 21, no more cards
    for v, q in RANKS:
        _draw(hard + v, ace or v == 1, p * q, hits, out)


def final_hands(hits: object) -> dict[object, Fraction]:
    """Distribution of a hand's outcome when it hits while `hits(value, soft)`."""
    out: dict[object, Fraction] = {}
    cards: list[tuple[int | None, Fraction]] = [*RANKS, (None, JOKER_P)]  # None: the joker
    for a, pa in cards:
        for b, pb in cards:
            p = pa * pb
            if a is None and b is None:
                out["JJ"] = out.get("JJ", Fraction(0)) + p
            elif a in (None, 1) and b in (None, 1):
                out["NAT"] = out.get("NAT", Fraction(0)) + p
            elif a is None or b is None:
                out[21] = out.get(21, Fraction(0)) + p
            else:
                _draw(a + b, a == 1 or b == 1, p, hits, out)
    return out


def result(p: object, b: object) -> int:
    """The player's win per chip, from GAMES.md's comparison written out again."""
    if p in ("JJ", "NAT") and b in ("JJ", "NAT"):
        return 1 if p == "JJ" and b == "NAT" else 0
    if p == "JJ":
        return 2
    if p == "NAT":
        return 1
    if b in ("JJ", "NAT"):
        return -1
    assert isinstance(p, int) and isinstance(b, int)
    if p <= 21:
        return 1 if b >= 22 or p > b else 0 if p == b else -1
    if b <= 21:
        return -1
    return 0 if p < b else -1


def exact_player_edge() -> Fraction:
    player = final_hands(lambda value, soft: value <= 16)
    banker = final_hands(lambda value, soft: value < 17 or (value == 17 and soft))
    return sum((pp * pb * result(p, b) for p, pp in player.items() for b, pb in banker.items()), Fraction(0))


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
    banker_edge_exact = float(-exact_player_edge())
    return {
        "name": "jokers22",
        "what": (
            "banker's advantage per chip wagered (1 spot, 1 player; player hits 12-16, stands 17-19, never "
            "doubles, splits or surrenders) by Monte Carlo through the engine on fresh 6-deck+6-joker shoes, "
            "and engine rounds per second (higher is better)"
        ),
        "reference": (
            "an exact infinite-shoe evaluator of the same rules and strategy (no engine code); "
            "ratio = Monte Carlo edge / exact edge"
        ),
        "ratio": banker_edge_mc / banker_edge_exact,
        "results": {
            "rounds": rounds,
            "banker_edge_monte_carlo": round(banker_edge_mc, 5),
            "ci95_half_width": round(half_width, 5),
            "banker_edge_exact_infinite_shoe": round(banker_edge_exact, 5),
            "difference_in_ci_half_widths": round((banker_edge_mc - banker_edge_exact) / half_width, 2),
            "sd_per_round": round(sd, 4),
            "rounds_needed_for_ci95_of_0.5pct": needed,
            "rounds_per_second_per_worker": round(per_core),
            "rounds_per_second_on_2_workers": round(rounds / wall),
            "seconds_for_0.5pct_on_2_workers": round(needed / (rounds / wall), 1),
            "wall_seconds": round(wall, 1),
        },
    }
