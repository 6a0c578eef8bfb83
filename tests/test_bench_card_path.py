"""The arithmetic of benchmarks/bench_card_path.py, without a table: each card's loop cost from the
loop's callbacks, the quantiles of resampled turns, the paired and unpaired differences with their
bootstrap intervals, and the words the verdict says against the 0.2 ms bound."""

from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest

from benchmarks.bench_card_path import (
    LoopWork,
    Turns,
    _difference,
    _met,
    _paired,
    _per_signing,
    _percentile,
    loop_cost,
)

MS = 1e-3


def work(*callbacks: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, cpu) of each loop callback, in the order run."""
    starts, ends, cpu = zip(*callbacks, strict=True)
    return np.array(starts), np.array(ends), np.array(cpu)


def test_a_cards_loop_cost_is_its_own_handling_and_the_work_it_queued_behind() -> None:
    done = work(
        (0.0, 1.0, 0.5),  # before the card: not counted
        (2.0, 6.0, 4.0),  # running when the card is handed at 4.0: half of it is left, 2.0 of CPU
        (6.0, 7.0, 0.25),  # queued before the card, run before it: all of it
        (7.0, 8.0, 1.0),  # the card's own handling
        (9.0, 10.0, 3.0),  # after the acknowledgement at 8.5: not counted
    )
    assert loop_cost([(4.0, 8.5)], done) == [pytest.approx(2.0 + 0.25 + 1.0)]
    # A card handed and acknowledged while the loop was idle costs its own callback only.
    assert loop_cost([(6.5, 8.0), (8.2, 8.8)], done) == [pytest.approx(0.125 + 1.0), 0.0]
    # An instant callback (no wall time) inside the span counts whole.
    assert loop_cost([(0.5, 1.5)], work((1.0, 1.0, 0.1))) == [pytest.approx(0.1)]


def test_loop_work_times_every_callback_on_the_loops_thread_and_is_removed_after() -> None:
    original = asyncio.events.Handle._run
    clock = LoopWork()

    async def main() -> None:
        clock.install()
        try:
            loop = asyncio.get_running_loop()
            ran = asyncio.Event()
            loop.call_soon(sum, range(100_000))
            loop.call_soon(ran.set)
            await ran.wait()
        finally:
            clock.remove()

    asyncio.run(main())
    assert asyncio.events.Handle._run is original
    starts, ends, cpu = clock.arrays()
    assert len(starts) >= 2 and (ends >= starts).all() and (np.diff(starts) >= 0).all()
    assert cpu.max() > 0  # the sum took CPU on the loop's thread


def test_quantiles_of_resampled_turns_count_a_turn_as_often_as_it_is_drawn() -> None:
    turns = Turns([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]])
    ones = np.ones(3, dtype=np.int64)
    assert turns.quantile(0.5, ones) == _percentile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.5)
    assert turns.quantile(0.99, ones) == 6.0
    # The first turn drawn three times, the last never: 1, 1, 1, 2, 2, 2, 3.
    assert turns.quantile(0.5, np.array([3, 1, 0])) == 2.0
    assert turns.quantile(1.0, np.array([3, 1, 0])) == 3.0


def test_a_constant_difference_is_found_exactly_with_a_zero_width_interval() -> None:
    rng = random.Random(1)
    base = [[rng.uniform(1 * MS, 3 * MS) for _ in range(20)] for _ in range(50)]
    slower = [[v + 0.5 * MS for v in turn] for turn in base]
    for q in (0.5, 0.99):
        paired = _paired(slower, base, q)
        assert paired["ms"] == pytest.approx(0.5)
        assert paired["ci95_ms"] == [pytest.approx(0.5), pytest.approx(0.5)]  # each resample shifts alike
    same = _paired(base, base, 0.99)
    assert same == {"ms": 0.0, "ci95_ms": [0.0, 0.0]}


def test_an_unpaired_difference_has_an_interval_around_it() -> None:
    rng = random.Random(2)
    base = [rng.gauss(1 * MS, 0.1 * MS) for _ in range(2000)]
    slower = [rng.gauss(3 * MS, 0.1 * MS) for _ in range(2000)]
    diff = _difference(slower, base, lambda v: _percentile(v, 0.5))
    low, high = diff["ci95_ms"]
    assert low < diff["ms"] < high and low > 1.9 and high < 2.1


def test_the_verdict_says_met_not_met_or_not_resolved_against_the_bound() -> None:
    assert _met("p99", {"ms": 0.05, "ci95_ms": [-0.1, 0.2]}).startswith("p99: MET")
    assert _met("p99", {"ms": 0.5, "ci95_ms": [0.21, 0.9]}).startswith("p99: NOT MET")
    assert _met("p99", {"ms": 0.1, "ci95_ms": [-0.3, 0.3]}).startswith("p99: not resolved")


def test_a_signings_loop_time_sums_its_parts_re_signs_included() -> None:
    parts = [
        (0.0, 0.1, "sign"),
        (1.0, 1.5, "journal"),
        (3.0, 3.1, "durable"),  # the first signing: 0.7
        (5.0, 5.2, "sign"),
        (6.0, 6.1, "sign"),  # the chain moved: signed again
        (7.0, 7.4, "journal"),  # the second: 0.7 (its durable part not come yet)
    ]
    assert _per_signing(parts) == [pytest.approx(0.7), pytest.approx(0.7)]
    assert _per_signing([(0.0, 0.1, "sign")]) == [0.0]  # none journaled yet
