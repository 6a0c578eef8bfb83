"""Baseball poker Monte Carlo: hands per second on one core, and the showdown hand categories with
threes and nines wild against their exact frequencies.

Six players (seats 1-6) who all call to the showdown (openers bring it in or check, extra cards
are paid for), each hand from freshly shuffled 52-card decks (seeded), as `tablectl analyze
baseball-poker` deals them: controller/games/baseball/analysis.py deals by the one dealing
schedule in controller/games/baseball/rules.py (`next_step`, `rains_out`, `earns_extra`: what
`GAME.apply` deals by) without the betting rounds (call-down changes no card). Its reference is
the same hands played through `GAME.apply` card by card and call by call, as the table loop
drives it, in the same run: the two must deal every sampled hand identically, and the speed
ratio is measured on one core.

Two rule sets:
  * the comparison run, with the rainout and the extra card for a face-up 4 switched off: then
    each player's seven cards are a uniformly random 7-card hand of the deck, and the category
    `hands.evaluate` gives them must follow the exact distribution of 7-card hands with eight
    wild cards (all 3s and 9s). The reference counts all C(52,7) = 133,784,560 hands exactly, by
    rank counts and suit patterns, with its own category rules (no engine code; below).
  * the table's default rules (rainout and free extra card on), for speed and for how often a
    hand rains out; its categories are reported, with no exact reference (extra cards and the
    rainout change the distribution).
The machine has two cores shared with other work: rates are in CPU seconds of this process (the
other work is then mostly not counted), the Monte Carlo's the better of two runs.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from math import comb

from controller.engine.cards import STANDARD_DECK, Card
from controller.engine.hands import CATEGORIES
from controller.games.baseball.analysis import RecordingDecks, replay_through_engine, showdown
from controller.games.baseball.analysis import chunk as _baseball_chunk
from controller.games.baseball.rules import BaseballRules

SEED = 20_260_309
HANDS = 60_000  # comparison run: 360,000 showdown hands
DEFAULT_HANDS = 40_000
ENGINE_HANDS = 300  # the same hands through GAME.apply: the reference speed, and identical deals
PLAYERS = 6
COMPARISON_RULES = BaseballRules(rainout=False, extra_card="none")


# --- hands dealt to the showdown -------------------------------------------------------------


def simulate(rules: BaseballRules, hands: int, seed: int) -> tuple[Counter[str], Counter[str], int, float]:
    """(categories of every showdown hand, categories of seat 1's, rainouts, seconds)."""
    rng = random.Random(seed)
    every: Counter[str] = Counter()
    first: Counter[str] = Counter()
    rainouts = 0

    def deck() -> Iterator[Card]:
        cards = list(STANDARD_DECK)
        rng.shuffle(cards)
        return iter(cards)

    started = time.process_time()
    for _ in range(hands):
        hand = showdown(rules, PLAYERS, deck)
        rainouts += hand.rainouts
        every.update(hand.categories)
        first[hand.categories[0]] += 1
    return every, first, rainouts, time.process_time() - started


def engine_rate(hands: int, seed: int) -> tuple[float, float, int]:
    """(hands per second dealt to the showdown, through GAME.apply, hands compared) on the same
    decks; raises if any hand is dealt otherwise."""
    rng = random.Random(seed)

    def shuffled() -> list[Card]:
        cards = list(STANDARD_DECK)
        rng.shuffle(cards)
        return cards

    rules = BaseballRules()
    recorded = []
    started = time.process_time()
    for _ in range(hands):
        decks = RecordingDecks(shuffled)
        recorded.append((showdown(rules, PLAYERS, decks), decks.dealt))
    fast = time.process_time() - started
    started = time.process_time()
    for hand, dealt in recorded:
        if replay_through_engine(rules, PLAYERS, dealt) != hand:
            raise AssertionError(f"the engine deals this hand otherwise: {hand}")
    return hands / fast, hands / (time.process_time() - started), hands


def chunk_rate(hands: int, seed: int) -> float:
    """Hands per second of `tablectl analyze`'s own chunk (numpy-shuffled decks, its tallies)."""
    started = time.process_time()
    _baseball_chunk((seed, 0), hands, 1, PLAYERS)
    return hands / (time.process_time() - started)


# --- the exact reference (no engine code) ----------------------------------------------------

NATURAL_RANKS = (2, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14)  # 3 and 9 are wild
WILD_CARDS = 8
# Straights as sets of ranks, the wheel (A-2-3-4-5) included; a 3 or a 9 in one is always a
# missing rank that only a wild card fills.
WINDOWS = [frozenset({14, 2, 3, 4, 5})] + [frozenset(range(low, low + 5)) for low in range(2, 11)]
HC, P, TP, TK, ST, FL, FH, FK, SF, FV = range(1, 11)  # high card .. five of a kind


def straight(ranks: frozenset[int] | set[int], wild: int) -> bool:
    return any(len(window - ranks) <= wild for window in WINDOWS)


def by_ranks(counts: list[int], wild: int) -> int:
    """The best category that needs no suits (and four of a kind, full house beat any flush)."""
    top = [*sorted(counts, reverse=True), 0, 0]
    a, b = top[0], top[1]
    present = {r for r, c in zip(NATURAL_RANKS, counts, strict=True) if c}
    if a + wild >= 5:
        return FV
    if a + wild >= 4:
        return FK
    if min(a, 3) + min(b, 2) + wild >= 5:
        return FH
    if straight(present, wild):
        return ST
    if a + wild >= 3:
        return TK
    if min(a, 2) + min(b, 2) + wild >= 4:
        return TP
    if a + wild >= 2:
        return P
    return HC


def with_suits(ranks_only: int, flush: bool, straight_flush: bool) -> int:
    if ranks_only == FV:
        return FV
    if straight_flush:
        return SF
    if flush and ranks_only < FL:
        return FL
    return ranks_only


def count_vectors(n: int, i: int = 0) -> Iterator[list[int]]:
    """Every way to hold n natural cards as counts (0-4) over the natural ranks from index i."""
    if i == len(NATURAL_RANKS):
        if n == 0:
            yield []
        return
    for c in range(min(n, 4) + 1):
        for rest in count_vectors(n - c, i + 1):
            yield [c, *rest]


def exact_by_counts(wild: int) -> Counter[int]:
    """Hands of 7 - wild natural cards, counted by rank counts and suit patterns. With at most two
    wild cards a flush needs 5 - wild of one suit, more than half the naturals, so only one suit
    can be the flush suit: count the hands where spades hold exactly the ranks F (|F| >= 5 - wild)
    and multiply by the four suits."""
    n, need = 7 - wild, 5 - wild
    out: Counter[int] = Counter()
    for counts in count_vectors(n):
        total = math.prod(comb(4, c) for c in counts)
        ranks_only = by_ranks(counts, wild)
        held = [(r, c) for r, c in zip(NATURAL_RANKS, counts, strict=True) if c]
        flush_ways = sf_ways = 0
        for size in range(need, len(held) + 1):
            for in_suit in combinations(held, size):
                chosen = {r for r, _ in in_suit}
                ways = math.prod(comb(3, c - 1) if r in chosen else comb(3, c) for r, c in held)
                flush_ways += 4 * ways
                if straight(chosen, wild):
                    sf_ways += 4 * ways
        out[with_suits(ranks_only, True, True)] += sf_ways
        out[with_suits(ranks_only, True, False)] += flush_ways - sf_ways
        out[ranks_only] += total - flush_ways
    return out


def exact_by_hands(wild: int) -> Counter[int]:
    """Hands of 7 - wild natural cards (three or more wild cards: few enough to list them all)."""
    naturals = [(r, s) for r in NATURAL_RANKS for s in range(4)]
    out: Counter[int] = Counter()
    for hand in combinations(naturals, 7 - wild):
        counts = [sum(1 for r, _ in hand if r == rank) for rank in NATURAL_RANKS]
        suits = [{r for r, s in hand if s == suit} for suit in range(4)]
        flush = any(len(ranks) + wild >= 5 for ranks in suits)
        sf = any(len(ranks) + wild >= 5 and straight(ranks, wild) for ranks in suits)
        out[with_suits(by_ranks(counts, wild), flush, sf)] += 1
    return out


def exact_distribution() -> dict[str, int]:
    """How many of the C(52,7) seven-card hands fall in each category, 3s and 9s wild."""
    out: Counter[int] = Counter()
    for wild in range(WILD_CARDS + 1):
        if wild > 7:
            continue
        part = exact_by_counts(wild) if wild <= 2 else exact_by_hands(wild)
        for category, ways in part.items():
            out[category] += comb(WILD_CARDS, wild) * ways
    assert sum(out.values()) == comb(52, 7), "the exact count must cover every 7-card hand once"
    return {CATEGORIES[c - 1]: out[c] for c in range(1, 11)}


# --- the benchmark ---------------------------------------------------------------------------


def run() -> dict[str, object]:
    exact = exact_distribution()
    total = comb(52, 7)
    cold = chunk_rate(DEFAULT_HANDS // 4, SEED + 2)  # tables of hands.py still filling
    every, first, _, seconds = simulate(COMPARISON_RULES, HANDS, SEED)
    shown = sum(every.values())
    table = {}
    for name in CATEGORIES:
        p = exact[name] / total
        sim = every[name] / shown
        table[name] = {
            "exact": round(p, 6),
            "simulated": round(sim, 6),
            "z": round((sim - p) / math.sqrt(p * (1 - p) / shown), 2) if 0 < p < 1 else None,
        }
    # Chi-square on seat 1 alone: one hand per deal, so the counts are independent.
    hands_first = sum(first.values())
    chi2 = sum((first[n] - hands_first * exact[n] / total) ** 2 / (hands_first * exact[n] / total) for n in CATEGORIES)
    dof = len(CATEGORIES) - 1
    warm = chunk_rate(DEFAULT_HANDS, SEED + 3)
    fast_rate, apply_rate, compared = engine_rate(ENGINE_HANDS, SEED + 4)
    default_every, _, default_rainouts, default_seconds = simulate(BaseballRules(), DEFAULT_HANDS, SEED + 1)
    warm = max(warm, chunk_rate(DEFAULT_HANDS, SEED + 5))
    default_shown = sum(default_every.values())
    return {
        "name": "baseball",
        "what": (
            "Monte Carlo hands per second on one core (6 players calling to the showdown, the table's default "
            "rules: rainouts and extra cards), as tablectl analyze baseball-poker deals them, against the same "
            "hands through GAME.apply in the same run; and the showdown categories with 3s and 9s wild against "
            "their exact frequencies; ratio = hands per second / the issue's goal of 5,000 (higher is better)"
        ),
        "reference": (
            "the engine's GAME.apply on the same decks (every card and every call; identical hands required), "
            "and exact category counts of all C(52,7) 7-card hands with the eight 3s and 9s wild, counted by rank "
            "counts and suit patterns with category rules written apart from hands.py"
        ),
        "ratio": round(warm / 5000, 3),
        "results": {
            "default_rules": {
                "hands_per_second_one_core": round(warm),
                "hands_per_second_first_hands_tables_filling": round(cold),
                "hands_per_second_plain_loop_random_shuffle": round(DEFAULT_HANDS / default_seconds),
                "engine_apply_hands_per_second_same_decks": round(apply_rate, 1),
                "ratio_to_engine_apply": round(fast_rate / apply_rate, 1),
                "hands_compared_with_engine_apply": compared,
                "identical_to_engine_apply": True,
                "hours_on_one_core_for_every_category_to_0.1pct": round(
                    (1.96 * 0.5 / 0.001) ** 2 / PLAYERS / warm / 3600, 3
                ),
                "rainouts_per_hand": round(default_rainouts / DEFAULT_HANDS, 4),
                "categories": {n: round(default_every[n] / default_shown, 6) for n in CATEGORIES},
            },
            "comparison_run": {
                "rules": "rainout off, no extra card for a face-up 4 (so each hand is 7 random cards)",
                "hands_dealt": HANDS,
                "showdown_hands": shown,
                "hands_per_second_one_core": round(HANDS / seconds, 1),
                "chi_square_seat_1": round(chi2, 2),
                "degrees_of_freedom": dof,
                "chi_square_over_dof": round(chi2 / dof, 3),
                "categories": table,
            },
            "exact_counts": exact,
        },
    }
