"""A table driven on a clock the test owns: every journal entry is written at the test's time,
and the test keeps, as it drives, the truth the analytics must find again: how many seconds went
to each phase (betting, dealing, decisions, paying) and how many to shuffles, faults and voids,
which rounds settled and when, and each settled round's round file (for theoretical win).

    clock = Clock(start)
    with clock.installed(monkeypatch):
        run = Run.play(table, clock, rng, rounds=40)
    run.seconds["dealing"], run.settled, run.round_files
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

import controller.journal.log
from controller.engine.cards import Card
from controller.table import Table


class Clock:
    """The journal's clock, moved only by the test (whole milliseconds, as the journal writes)."""

    def __init__(self, start: float) -> None:
        self.ms = int(start * 1000)

    def now(self) -> float:
        return self.ms / 1000

    def iso(self) -> str:
        return datetime.fromtimestamp(self.ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def tick(self, ms: int) -> None:
        self.ms += ms

    @contextmanager
    def installed(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
        monkeypatch.setattr(controller.journal.log, "utc_now", self.iso)
        yield self


@dataclass
class Run:
    """What the test did, by its own account (milliseconds per kind of time)."""

    ms: Counter[str] = field(default_factory=Counter)
    settled: dict[int, float] = field(default_factory=dict)  # round -> when it settled (s)
    voided: list[int] = field(default_factory=list)
    faults: Counter[str] = field(default_factory=Counter)
    shuffles: int = 0
    dealers: dict[int, str] = field(default_factory=dict)

    def spend(self, clock: Clock, what: str, ms: int) -> None:
        clock.tick(ms)
        self.ms[what] += ms

    def seconds(self, what: str) -> float:
        return self.ms[what] / 1000

    @property
    def dealer_s(self) -> float:
        return sum(self.ms[k] for k in ("betting", "dealing", "decisions", "paying")) / 1000


def play(
    table: Table, clock: Clock, rng: random.Random, rounds: int, *, dealers: tuple[str, ...] = ("dealer:ann",)
) -> Run:
    """`rounds` rounds at `table` on `clock`: a demo opening, cards from a seeded shoe, the demo
    players' choices; now and then a fault in mid-round (cleared by a supervisor), a new shoe
    between rounds, a voided round. Each wait is a random whole number of milliseconds."""
    run = Run()
    shoe: list[Card] = []
    full = list(table.shoe.composition.cards())
    first = True
    for n in range(rounds):
        if first or rng.random() < 0.15 or len(shoe) < 60:
            # Before the first round there is no round to time a gap from: not counted at all.
            run.spend(clock, "before" if first else "shuffle", rng.randint(30_000, 120_000))
            if table.shoe.dealt_count or not first:
                table.shoe_reshuffled(by="dealer")
                run.shuffles += 1
            shoe = list(full)
            rng.shuffle(shoe)
            run.spend(clock, "before" if first else "shuffle", rng.randint(1_000, 20_000))
        elif not first:
            run.spend(clock, "betting", rng.randint(5_000, 60_000))
        first = False
        dealer = dealers[(n // 7) % len(dealers)]
        number = table.open_round(table.adapter.demo_opening(rng, seats=table.seats), by=dealer)
        run.dealers[number] = dealer
        void_it = rng.random() < 0.08
        fault_at = rng.randint(0, 4) if rng.random() < 0.2 else -1
        dealt = 0
        before = Counter(run.ms)
        while table.awaiting.kind != "round":
            awaiting = table.awaiting
            if void_it and dealt == 2:
                run.spend(clock, "void", rng.randint(2_000, 30_000))
                table.void(by="supervisor:sue", reason="test void")
                run.voided.append(number)
                for what in ("dealing", "decisions"):  # a voided round's time is counted apart
                    spent = run.ms[what] - before[what]
                    run.ms[what] -= spent
                    run.ms["void"] += spent
                break
            if dealt == fault_at:
                run.spend(clock, "dealing", rng.randint(500, 3_000))
                code = rng.choice(["device", "shoe-silent", "misread"])
                fault = table.raise_fault(code, "test fault")
                run.faults[code] += 1
                run.spend(clock, "fault", rng.randint(10_000, 300_000))
                table.clear_fault(fault.seq, "dismiss", by="supervisor:sue", reason="test")
                fault_at = -1
            if awaiting.kind == "card":
                if table.shoe.dealt_count == 0 and len(shoe) < len(full):
                    shoe = list(full)  # a Baseball poker rainout deals on from a fresh deck
                    rng.shuffle(shoe)
                run.spend(clock, "dealing", rng.randint(800, 6_000))
                table.card(shoe.pop(), {"via": "test"})
                dealt += 1
            elif awaiting.kind == "decision":
                run.spend(clock, "decisions", rng.randint(1_000, 25_000))
                table.decide(table.adapter.demo_choice(awaiting, rng), by="dealer")
            if table.awaiting.kind == "round":
                run.settled[number] = clock.now()
        if number in run.settled:
            run.spend(clock, "paying", rng.randint(2_000, 40_000))
            table.button("confirm", by="dealer")
    return run


def record_files(table: Table, numbers: list[int]) -> dict[int, dict[str, Any]]:
    """The round files of rounds `numbers` as `tablectl recall` exports them."""
    out = {}
    for n in numbers:
        record = table.rounds[n]
        assert record.round_file is not None
        out[n] = record.round_file
    return out
