"""Speed of the poker hand evaluator (`controller.engine.hands.evaluate`) against brute force.

Baseball poker hands: seeded random seven-card hands from one deck with threes and nines wild,
drawn so that each set holds exactly 0, 1 or 2 wild cards. The reference is the brute-force
evaluator of tests/engine/hand_oracle.py (every five-card subset, every choice of the 52 cards
for each wild card in it) on the first hands of the same sets, and the results must agree.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence

from controller.engine.cards import STANDARD_DECK, Card, Rank
from controller.engine.hands import evaluate
from tests.engine.hand_oracle import brute_force

SEED = 20_260_101
WILD = frozenset({Rank.THREE, Rank.NINE})
FAST_HANDS = 20_000
BRUTE_HANDS = {0: 2_000, 1: 300, 2: 40}  # brute force is slow with wild cards: fewer hands
REPEATS = 3  # the fastest of a few runs, so a busy moment on the machine does not count


def deal(rng: random.Random, wild_count: int, hands: int) -> list[list[Card]]:
    """Seven-card hands holding exactly `wild_count` threes or nines, each from a fresh deck."""
    wild_cards = [c for c in STANDARD_DECK if c.rank in WILD]
    natural_cards = [c for c in STANDARD_DECK if c.rank not in WILD]
    dealt = []
    for _ in range(hands):
        cards = rng.sample(wild_cards, wild_count) + rng.sample(natural_cards, 7 - wild_count)
        rng.shuffle(cards)
        dealt.append(cards)
    return dealt


def evals_per_second(evaluator: Callable[[Sequence[Card]], object], hands: list[list[Card]]) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        for cards in hands:
            evaluator(cards)
        best = min(best, time.perf_counter() - started)
    return len(hands) / best


def fast(cards: Sequence[Card]) -> object:
    return evaluate(cards, WILD)


def brute(cards: Sequence[Card]) -> object:
    return brute_force(cards, WILD)


def run() -> dict[str, object]:
    rng = random.Random(SEED)
    results: dict[str, object] = {}
    fast_seconds: list[float] = []
    brute_seconds: list[float] = []
    for wild_count in (0, 1, 2):
        hands = deal(rng, wild_count, FAST_HANDS)
        sample = hands[: BRUTE_HANDS[wild_count]]
        disagree = sum(
            (value.category, value.strength) != brute_force(cards, WILD)
            for cards in sample
            for value in [evaluate(cards, WILD)]
        )
        if disagree:
            raise AssertionError(f"{disagree} hands with {wild_count} wild cards disagree with brute force")
        fast_rate = evals_per_second(fast, hands)
        brute_rate = evals_per_second(brute, sample) if wild_count == 0 else len(sample) / _once(sample)
        fast_seconds.append(1 / fast_rate)
        brute_seconds.append(1 / brute_rate)
        results[f"wild_{wild_count}"] = {
            "hands": len(hands),
            "evals_per_second": round(fast_rate),
            "brute_force_hands": len(sample),
            "brute_force_evals_per_second": round(brute_rate, 2),
            "ratio": round(fast_rate / brute_rate, 1),
            "agree_with_brute_force": True,
        }
    # A stream with equal numbers of 0-, 1- and 2-wild hands: total time per hand.
    ratio = statistics.fmean(brute_seconds) / statistics.fmean(fast_seconds)
    results["mixed_evals_per_second"] = round(1 / statistics.fmean(fast_seconds))
    return {
        "name": "hands",
        "what": (
            "evaluations per second of evaluate() on seeded random 7-card hands with threes and "
            "nines wild (exactly 0, 1 and 2 wild cards); ratio = fast speed / brute-force speed "
            "on an equal mix of the three sets (higher is better)"
        ),
        "reference": (
            "brute force on the first hands of the same sets: all 5-card subsets times every "
            "substitution of the wild cards by the 52 cards (each multiset once), identical "
            "category and strength required"
        ),
        "ratio": round(ratio, 1),
        "results": results,
    }


def _once(hands: list[list[Card]]) -> float:
    """Seconds for one brute-force pass: with wild cards it is too slow to repeat."""
    started = time.perf_counter()
    for cards in hands:
        brute_force(cards, WILD)
    return time.perf_counter() - started
