"""The base lamps show the same as play goes on whether the game's picture is drawn whole or in
part: the blinking place is asked of the game alone (`GameAdapter.lamp_next`) after a card, and
the whole picture drawn again (a round's opening, a confirm, every entry of a game without lamp
gestures) writes a 74HC595 chain only when its frame changes (`set_from_state(force=False)`).

Two tables are played the same way, side by side, each with its lamps on a chain of mock pins:
one with the lamps as they are, one with the lamps as they were drawn before (the whole picture
asked for the blinking place, every redraw a forced shift). After every entry both mean the same
(the lamps' snapshot), and both chains latched the same frames in the same order (a forced shift
of an unchanged frame latches it again: repeats are not a change a player sees)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from controller.adapters.outputs import LampOutput
from controller.engine.base import Effect
from controller.engine.cards import parse_card
from controller.journal.log import Entry, Journal
from controller.table import Table
from drivers.indicators.base_indicators import BaseIndicators
from tests.controller.test_lamps_once_an_entry import SEVEN, Clock, Wire, latched


class LampsBefore(LampOutput):
    """The lamps as drawn before: the whole picture for the blinking place, every redraw forced."""

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if entry.kind in ("round-open", "button") or table.adapter.lamp_moves(effects) is None:
            self.redrive(table)  # set_from_state, forced
            return
        super().update(table, entry, effects)

    def _settle_blink(self, table: Table) -> None:
        shown = self.lamps.snapshot()
        wanted = self._snapshot(table).next_card
        if shown.next_card is None or shown.next_card == wanted:
            return
        if shown.next_card in shown.wagers:
            self.lamps.show_wager(shown.next_card)
        else:
            self.lamps.remove_wager(shown.next_card)


def _changes(frames: list[frozenset[str]]) -> list[frozenset[str]]:
    return [frame for n, frame in enumerate(frames) if n == 0 or frame != frames[n - 1]]


@pytest.mark.parametrize("game", ["grand-slam", "baseball-poker", "jokers-22"])
def test_the_lamps_mean_and_latch_the_same_as_when_drawn_whole(tmp_path: Path, game: str) -> None:
    clock = Clock()
    sides: list[tuple[Table, BaseIndicators, Wire]] = []
    for name, kind in (("now", LampOutput), ("before", LampsBefore)):
        wire = Wire()
        lamps = BaseIndicators.from_pin_map(SEVEN, pin_factory=wire, clock=clock, run_blinker=False)
        output = kind(lamps, frozenset(SEVEN.seats))
        (tmp_path / name).mkdir()
        table = Table(
            Journal(tmp_path / name / "journal.sqlite3"), game=game, rules={}, simulated=True, outputs=[output]
        )
        sides.append((table, lamps, wire))
    rng, deal = random.Random(35), random.Random(1)
    cards = [r + s for r in "23456789TJQKA" for s in "CDHS"]
    entries = 0
    try:
        for _ in range(12):  # rounds (Grand Slam's demo dealer deals a blind hand now and then)
            opening = sides[0][0].adapter.demo_opening(random.Random(rng.random()), seats=5)
            for table, _, _ in sides:
                table.open_round(opening, by="dealer")
            entries += 1
            shoe = deal.sample(cards, len(cards))  # one deck a round: no card twice
            for _ in range(200):
                awaiting = sides[0][0].awaiting
                clock.now += 0.37  # the blink somewhere in its cycle
                if awaiting.kind == "card":
                    card = parse_card(shoe.pop())
                    for table, lamps, _ in sides:
                        lamps.tick()
                        table.card(card, {"via": "shoe"})
                elif awaiting.kind == "decision":
                    choice = sides[0][0].adapter.demo_choice(awaiting, random.Random(rng.random()))
                    for table, lamps, _ in sides:
                        lamps.tick()
                        table.decide(choice, by="dealer")
                else:
                    break
                entries += 1
                assert sides[0][1].snapshot() == sides[1][1].snapshot()
            if sides[0][0].payouts_due():
                for table, _, _ in sides:
                    table.button("confirm", by="dealer")
                entries += 1
                assert sides[0][1].snapshot() == sides[1][1].snapshot()
            for _, lamps, _ in sides:
                lamps.tick()
            assert sides[0][0].awaiting.kind == "round", "a round did not end: this test would show little"
        now, before = (latched(wire.wire) for _, _, wire in sides)
        assert len(_changes(now)) > entries // 2, "the lamps did not follow play"
        assert _changes(now) == _changes(before)
        assert len(now) <= len(before)
    finally:
        for _, lamps, wire in sides:
            lamps.close()
            wire.reset()
            wire.close()


def test_a_redraw_that_changes_no_lamp_shifts_nothing(tmp_path: Path) -> None:
    """The whole picture drawn again for an entry that moves no lamp writes nothing to the chain;
    a start's re-drive (recovery) still writes every output."""
    wire = Wire()
    clock = Clock()
    lamps = BaseIndicators.from_pin_map(SEVEN, pin_factory=wire, clock=clock, run_blinker=False)
    try:
        output = LampOutput(lamps, frozenset(SEVEN.seats))
        table = Table(
            Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True, outputs=[output]
        )
        table.open_round({"seats": [{"seat": 2, "wagers": {"first": 5}}]}, by="dealer")
        shown = lamps.snapshot()
        assert shown.next_card == "seat2.first" and "seat2.first" in shown.wagers
        before = len(wire.wire)
        output.update(table, _opening(table), ())
        assert latched(wire.wire[before:]) == []
        assert lamps.snapshot() == shown
        output.redrive(table)  # recovery: forced
        assert len(latched(wire.wire[before:])) == 1
    finally:
        lamps.close()
        wire.reset()
        wire.close()


def _opening(table: Table) -> Any:
    for entry in table.journal.entries():
        if entry.kind == "round-open":
            found = entry
    return found
