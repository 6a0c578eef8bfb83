"""Speed of the poker hand evaluator (`controller.engine.hands`) against two C evaluators and brute force.

Baseball poker hands: seeded random seven-card hands from one deck with threes and nines wild,
drawn so that each set holds exactly 0, 1 or 2 wild cards. Measured in one process, taking turns
in an order shuffled for each block, so that a busy moment on the shared machine, and the cache
another evaluator leaves behind, hits every evaluator alike (the fastest of a few
passes counts; the first pass of `evaluate`, while its tables fill, is reported apart):

  * `evaluate(cards, wild)` on `Card` lists, as the engine calls it; and with `.best` read too
    (the five cards are picked only when read);
  * `evaluate_batch` on the same hands as an array of card numbers (numpy), once its tables are
    built (their build time is reported);
  * phevaluator's `evaluate_cards` on card ids (its public entry: a Python wrapper over C; the
    ratio is taken to it) and its C `evaluate_7cards` itself, and eval7's `evaluate` on its own
    `Card` lists, on the no-wild-card set (neither knows wild cards); both are C extensions called
    from Python, installed by `pip install -e '.[bench]'`;
  * the fast table's cost: all its entries for one deck's five to seven cards built at once (time
    and memory traced), though `evaluate` fills it only as hands come;
  * the brute-force evaluator of tests/engine/hand_oracle.py on the first hands of each set,
    whose results `evaluate` and `evaluate_batch` must match exactly; phevaluator and eval7
    must order the no-wild hands as `evaluate` does.
"""

from __future__ import annotations

import math
import random
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from controller.engine.cards import STANDARD_DECK, Card, Rank
from controller.engine.hands import evaluate
from controller.engine.hands_batch import card_number, evaluate_batch, strength_of
from tests.engine.hand_oracle import brute_force

SEED = 20_260_101
WILD = frozenset({Rank.THREE, Rank.NINE})
HANDS = 20_000
BATCH_HANDS = 200_000
BRUTE_HANDS = {0: 1_000, 1: 150, 2: 20}  # brute force is slow with wild cards: fewer hands
REPEATS = 5
BLOCKS = 20
ORDER_PAIRS = 5_000


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


def seconds(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def run() -> dict[str, Any]:
    try:
        import eval7
        from phevaluator import _pheval, evaluate_cards
    except ImportError as exc:
        raise RuntimeError("the reference evaluators are missing: pip install -e '.[bench]'") from exc
    rng = random.Random(SEED)
    sets = {w: deal(rng, w, HANDS) for w in (0, 1, 2)}

    # Exactly the brute force's answers, on the first hands of each set (this also fills part
    # of the tables, so the cold pass below is measured on hands beyond these).
    build: dict[int, float] = {}
    for w, hands in sets.items():
        sample = hands[: BRUTE_HANDS[w]]
        rows = np.array([[card_number(c) for c in h] for h in sample])
        began = time.perf_counter()
        batch = evaluate_batch(rows, WILD)  # the first call for this wild count builds its tables
        build[w] = time.perf_counter() - began
        for cards, code in zip(sample, batch, strict=True):
            value = evaluate(cards, WILD)
            expected = brute_force(cards, WILD)
            if (value.category, value.strength) != expected or strength_of(code) != expected[1]:
                raise AssertionError(f"{[str(c) for c in cards]}: evaluate or the batch disagrees with brute force")
    brute_rate = {w: n / seconds(partial(_each, brute_force, sets[w][:n])) for w, n in BRUTE_HANDS.items()}

    cold = {w: HANDS / seconds(partial(_each, evaluate, sets[w])) for w in (0, 1, 2)}

    plain = sets[0]
    ph_ids = [[card_number(c) for c in h] for h in plain]  # phevaluator's ids are ours: 4 x rank + suit
    names = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    e7_cards = [[eval7.Card(names[i]) for i in ids] for ids in ph_ids]
    e7_evaluate = eval7.evaluate
    # The same order: phevaluator ranks 1 best, eval7 and strength higher best.
    ours = [evaluate(h).strength for h in plain]
    ph = [evaluate_cards(*ids) for ids in ph_ids]
    e7 = [e7_evaluate(h) for h in e7_cards]
    pairs = random.Random(SEED + 1)
    for _ in range(ORDER_PAIRS):
        a, b = pairs.randrange(HANDS), pairs.randrange(HANDS)
        sign = (ours[a] > ours[b]) - (ours[a] < ours[b])
        if sign != (ph[a] < ph[b]) - (ph[a] > ph[b]) or sign != (e7[a] > e7[b]) - (e7[a] < e7[b]):
            raise AssertionError(f"hands {a} and {b}: phevaluator or eval7 orders them otherwise")

    batch_rng = np.random.default_rng(SEED)
    deck = np.arange(52)
    batch_rows = {
        w: np.array([np.concatenate([batch_rng.choice(deck[_WILD_NUMBERS], w, replace=False),
                                     batch_rng.choice(deck[~_WILD_NUMBERS], 7 - w, replace=False)])
                     for _ in range(BATCH_HANDS // 20)])
        for w in (0, 2)
    }  # fmt: skip
    batch_rows = {w: np.tile(rows, (20, 1)) for w, rows in batch_rows.items()}

    # Every evaluator over the same blocks of hands, block by block in turn, each block's time the
    # least of REPEATS passes, in CPU seconds of this process: the other work on the machine
    # then falls on every evaluator alike and is mostly not counted at all.
    runs: dict[str, tuple[int, list[Callable[[], object]]]] = {}
    for w in (0, 1, 2):
        runs[f"evaluate_{w}"] = _blocks(_each, evaluate, data=sets[w])
    runs["evaluate_best_0"] = _blocks(_each_best, data=sets[0])
    runs["evaluate_best_2"] = _blocks(_each_best, data=sets[2])
    runs["phevaluator"] = _blocks(_each_ph, evaluate_cards, data=ph_ids)
    runs["phevaluator_c"] = _blocks(_each_ph, _pheval.evaluate_7cards, data=ph_ids)
    runs["eval7"] = _blocks(_each_e7, e7_evaluate, data=e7_cards)
    for w in (0, 2):
        runs[f"batch_{w}"] = _blocks(_batch, data=batch_rows[w])
    least = {name: [math.inf] * BLOCKS for name in runs}
    # The order is shuffled anew for each block (seeded): in a fixed rotation each evaluator
    # always ran right after the same other one, and `evaluate` after the numpy batch, whose
    # arrays push its tables out of the processor's cache (about 10% against it, measured).
    order = random.Random(SEED + 2)
    for _turn in range(REPEATS):
        for block in range(BLOCKS):
            names = list(runs)
            order.shuffle(names)
            for name in names:
                began = time.process_time()
                runs[name][1][block]()
                least[name][block] = min(least[name][block], time.process_time() - began)
    best = {name: runs[name][0] / sum(least[name]) for name in runs}
    table = _fast_table_cost()

    ph_rate = best["phevaluator"]
    results: dict[str, Any] = {}
    for w in (0, 1, 2):
        results[f"wild_{w}"] = {
            "evaluate_per_second": round(best[f"evaluate_{w}"]),
            "first_pass_per_second_tables_filling": round(cold[w]),
            "ratio_to_phevaluator_no_wild": round(best[f"evaluate_{w}"] / ph_rate, 3),
            "brute_force_hands": BRUTE_HANDS[w],
            "brute_force_per_second": round(brute_rate[w], 2),
            "ratio_to_brute_force": round(best[f"evaluate_{w}"] / brute_rate[w], 1),
            "agree_with_brute_force": True,
        }
    for w in (0, 2):
        results[f"wild_{w}"]["with_best_read_per_second"] = round(best[f"evaluate_best_{w}"])
        results[f"wild_{w}"]["batch_per_second"] = round(best[f"batch_{w}"])
        results[f"wild_{w}"]["batch_ratio_to_phevaluator"] = round(best[f"batch_{w}"] / ph_rate, 2)
        results[f"wild_{w}"]["batch_ratio_to_eval7"] = round(best[f"batch_{w}"] / best["eval7"], 2)
        results[f"wild_{w}"]["batch_first_call_seconds_building_tables"] = round(build[w], 2)
    results["phevaluator_per_second_no_wild"] = round(ph_rate)
    results["phevaluator_c_evaluate_7cards_per_second_no_wild"] = round(best["phevaluator_c"])
    results["ratio_to_phevaluator_c_evaluate_7cards"] = round(best["evaluate_0"] / best["phevaluator_c"], 3)
    results["fast_table"] = table
    results["inputs"] = (
        "evaluate: a list of 7 controller.engine.cards.Card objects and the wild ranks (a frozenset), "
        "as the engine calls it; phevaluator.evaluate_cards(*ids): 7 card ids (ints 0-51), its fastest "
        "public form (a Python wrapper over its C evaluator); phevaluator._pheval.evaluate_7cards(*ids): "
        "the C function itself; eval7.evaluate: a list of eval7.Card"
    )
    results["eval7_per_second_no_wild"] = round(best["eval7"])
    results["ratio_eval7"] = round(best["evaluate_0"] / best["eval7"], 3)
    results["phevaluator_and_eval7_order_the_hands_as_evaluate"] = ORDER_PAIRS
    return {
        "name": "hands",
        "what": (
            f"evaluations per second of evaluate() on {HANDS:,} seeded random 7-card hands with threes and nines "
            "wild (exactly 0, 1 and 2 wild cards), and of evaluate_batch (numpy) on 200,000; ratio = evaluate's "
            "speed with no wild card / phevaluator's on the same hands in the same run (higher is better). "
            "Two cores shared with other work: CPU time of this process, each block of hands the least of 5 turns "
            "taken by every evaluator in an order shuffled for each block"
        ),
        "reference": (
            "phevaluator 0.6 (C extension) evaluate_cards and eval7 0.1.11 (Cython) evaluate, called from Python "
            "on the same no-wild hands; brute force (every 5-card subset x every wild substitution) on the first "
            "hands of each set, identical category and strength required"
        ),
        "ratio": round(best["evaluate_0"] / ph_rate, 3),
        "results": results,
    }


def _fast_table_cost() -> dict[str, Any]:
    """What `evaluate`'s fast table costs: built for every hand of five to seven cards of one
    deck under this wild set (not only the benchmark's hands), in seconds and megabytes."""
    from itertools import combinations_with_replacement

    from controller.engine import hands

    tracemalloc.start()
    began = time.perf_counter()
    _, table, context = hands._fast_tables(sum(1 << r for r in WILD), False, False)
    table.clear()
    hands._BY_RANKS.clear()  # the entries share what this table holds: counted here too
    hands._FAST_VALUES.clear()  # and the one object a value that the entries are
    naturals = [r for r in range(2, 15) if r not in WILD]
    for size in (5, 6, 7):
        for wild in range(5):  # five or more wild cards always go the general way
            for ranks in combinations_with_replacement(naturals, size - wild):
                if max((ranks.count(r) for r in set(ranks)), default=0) > 4:
                    continue  # more of a rank than one deck holds
                key = sum(1 << (hands._FAST_RANK_SHIFT + 3 * (r - 2)) for r in ranks)
                key |= wild << hands._FAST_WILD_SHIFT
                table[key] = hands._fast_entry(key, context)
    seconds = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "entries_one_deck_5_to_7_cards": len(table),
        "build_seconds_all_entries": round(seconds, 2),
        "megabytes_traced_while_building": round(peak / 1e6, 1),
        "how": "filled as hands come (nothing at import, nothing on disk); this is the whole table at once, "
        "timed with tracemalloc on (which slows it several times)",
    }


def _blocks(run: Callable[..., object], *head: Any, data: Any) -> tuple[int, list[Callable[[], object]]]:
    """(hands, BLOCKS calls of `run(*head, block)`), the hands of `data` cut in BLOCKS blocks."""
    size = len(data) // BLOCKS
    return size * BLOCKS, [partial(run, *head, data[i * size : (i + 1) * size]) for i in range(BLOCKS)]


def _batch(rows: Any) -> object:
    return evaluate_batch(rows, WILD)


def _each_ph(evaluate_cards: Callable[..., object], hands: list[list[int]]) -> None:
    for ids in hands:
        evaluate_cards(*ids)


def _each_e7(e7_evaluate: Callable[..., object], hands: list[list[Any]]) -> None:
    for cards in hands:
        e7_evaluate(cards)


def _each(evaluator: Callable[..., object], hands: list[list[Card]]) -> None:
    for cards in hands:
        evaluator(cards, WILD)


def _each_best(hands: list[list[Card]]) -> None:
    for cards in hands:
        _ = evaluate(cards, WILD).best


_WILD_NUMBERS = np.array([n // 4 + 2 in WILD for n in range(52)])
