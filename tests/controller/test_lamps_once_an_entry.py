"""The base lamps change once a journal entry: on a 74HC595 chain, one shift and one latch for
every lamp an entry moves (a card that moves a stack on and passes the blink to the next seat is
one frame, not one a lamp), and the frame latched holds all of the entry's changes.

The chain's three lines are mock pins whose changes land, in order, on one wire; the latch's
rising edges are counted per entry and the latched frame decoded as a 74HC595 takes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from controller.adapters.outputs import LampOutput
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from drivers.indicators.base_indicators import BaseIndicators
from drivers.pins import load_pin_map

SEVEN = load_pin_map(name="seven-seat-595")


class WirePin(MockPWMPin):  # type: ignore[misc]
    def _change_state(self, value: Any) -> bool:
        changed = bool(super()._change_state(value))
        if changed:
            self._factory.wire.append((self._number, bool(value)))
        return changed


class Wire(MockFactory):  # type: ignore[misc]
    def __init__(self) -> None:
        self.wire: list[tuple[int, bool]] = []
        super().__init__(pin_class=WirePin)


def latched(wire: list[tuple[int, bool]]) -> list[frozenset[str]]:
    """The frames a 74HC595 chain latched from `wire`: the lit lamps of each, in order."""
    chain = SEVEN.chain
    assert chain is not None
    stages, ser, frames = [False] * chain.outputs, False, []
    by_output = {out: lamp for lamp, out in SEVEN.lamp_pins.items()}
    for pin, level in wire:
        if pin == chain.data:
            ser = level
        elif pin == chain.clock and level:
            stages = [ser, *stages[:-1]]
        elif pin == chain.latch and level:
            frames.append(frozenset(by_output[i] for i, lit in enumerate(stages) if lit and i in by_output))
    return frames


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def wire() -> Any:
    factory = Wire()
    yield factory
    factory.reset()
    factory.close()


def test_each_entry_latches_the_chain_once_with_all_of_its_lamp_changes(tmp_path: Path, wire: Wire) -> None:
    clock = Clock()
    lamps = BaseIndicators.from_pin_map(SEVEN, pin_factory=wire, clock=clock, run_blinker=False)
    try:
        output = LampOutput(lamps, frozenset(SEVEN.seats))
        table = Table(
            Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True, outputs=[output]
        )
        seats = [{"seat": s, "wagers": {"first": 5, "second": 5, "third": 5}} for s in (1, 3, 5, 7)]
        moves_a_card: list[int] = []
        latches: list[int] = []
        for n in range(2):  # two rounds, every card of them
            table.open_round({"seats": seats}, by="dealer")
            for text in ["2H", "5C", "9D", "KS", "3H", "7C", "TD", "AS", "4H", "8C", "JD", "6S", "QH"] * 4:
                if table.awaiting.kind != "card":
                    break
                clock.now += 0.5  # the blinking lamp in its lit half: passing the blink on is a change
                lamps.tick()
                before = len(wire.wire)
                entry = table.card(parse_card(text), {"via": "shoe"})
                latches.append(len(latched(wire.wire[before:])))
                moves = table.adapter.lamp_moves(table.recent_effects[entry.seq]) or []
                moves_a_card.append(len(moves))
                # The frame latched held all of the entry's changes: the lamps rendered again at
                # the same instant latch nothing more.
                after = len(wire.wire)
                lamps.tick()
                assert latched(wire.wire[after:]) == []
            if table.now.payouts_due():
                table.button("confirm", by="dealer")
            assert n == 0 or table.awaiting.kind == "round"
        assert max(moves_a_card) >= 2, "no card moved two lamps: this test would show nothing"
        assert max(latches) == 1, f"an entry latched the chain {max(latches)} times"
        assert sum(latches) >= len(latches) // 2  # the lamps did follow the cards
    finally:
        lamps.close()
