"""The dealer's sight of the table (the cards the dealer may not see) is worked out once a journal
entry, however many of the table's outputs ask for it (the pole display, the live feed's message,
the view beside it), and is worked out again after the next entry: a blind card dealt is hidden at
once, and every output masks it."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest

from controller.adapters.outputs import DisplayOutput
from controller.api.side import table_side
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from controller.table.visibility import Sight, sight
from drivers.display.device import open_display

# A solo player on seat 3, the blind hand on seat 4: every second card goes face down.
SOLO = {"seats": [{"seat": 3, "wagers": {"first": 10, "second": 10, "third": 10}}], "blind_seat": 4}
CARDS = ["5C", "8D", "9S", "2H", "7C", "KD"]


def test_the_dealers_sight_is_worked_out_once_an_entry_and_again_after_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    display = open_display({"dialect": "cd5220"}, simulated=True)
    table = Table(
        Journal(tmp_path / "journal.sqlite3"),
        game="grand-slam",
        rules={},
        simulated=True,
        outputs=[DisplayOutput(display, "SIM")],
    )
    told: list[Any] = []
    gate = table_side(table, None, deliver=lambda tick, message: told.append((message, gate.told())))
    assert gate.commands.feed is not None
    gate.commands.feed.count = 1  # a screen listens: each entry's message and view are made
    asked = 0
    hidden_cards = type(table.adapter).hidden_cards

    def counting(self: Any, state: Any) -> Any:
        nonlocal asked
        asked += 1
        return hidden_cards(self, state)

    monkeypatch.setattr(type(table.adapter), "hidden_cards", counting)
    table.open_round(SOLO, by="dealer")
    for n, text in enumerate(CARDS):
        asked = 0
        table.card(parse_card(text), {"via": "shoe"})
        assert asked <= 1, f"the dealer's sight was worked out {asked} times for one card"
        fresh = Sight(table, everything=False).current()
        assert sight(table, None).current() == fresh  # as of this entry, not the last
        message, view = told[-1]
        assert message[1] >= fresh and view.hidden == fresh
        if n % 2:  # a blind card: hidden from the dealer at once, on the pole display too
            assert text in fresh
            shown = display.snapshot()
            assert text not in shown["upper"] + shown["lower"]


def test_a_table_dropped_after_its_dealers_sight_was_asked_for_closes_its_journal(tmp_path: Path) -> None:
    # The sight kept for a table goes with the table: it never keeps a table (and its journal's
    # open files) alive once nobody else holds it.
    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_files()
    for n in range(40):
        table = Table(Journal(tmp_path / f"journal{n}.sqlite3"), game="grand-slam", rules={}, simulated=True)
        sight(table, None).current()
        del table
    gc.collect()
    assert open_files() - before <= 2  # the listing's own descriptor; 40 journals held ~160
