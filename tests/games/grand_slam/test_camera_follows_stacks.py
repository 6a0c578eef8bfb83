"""Grand Slam's camera meaning keeps, for each wager, every place it has stood this round (where
the camera may see its chips while the dealer moves them): the same whether every seat's stacks
are added after every entry, or only a seat whose stacks the engine moved (`GrandSlamCamera.follow`
skips a seat whose stacks mapping is the one it last added; the engine's state is immutable).

Rounds are dealt through a table; after every entry the camera's places are compared with those
worked out from the engine's state after each entry of the round, and the table is started again
from its journal in the middle of a round (the camera restored) and keeps agreeing."""

from __future__ import annotations

import random
from pathlib import Path

from controller.engine.cards import parse_card
from controller.games.grand_slam.camera import GrandSlamCamera
from controller.journal.log import Journal
from controller.table import Table


def _places(table: Table, stood: dict[tuple[int, str], set[str]]) -> None:
    """What every entry added before: each wager's position in the state now."""
    state = table.state
    if state.phase in ("dealing", "settled"):
        for seat in state.seats:
            for position, wagers in seat.stacks.items():
                for wager in wagers:
                    stood.setdefault((seat.seat, wager), set()).add(position)


def _meaning(table: Table) -> GrandSlamCamera:
    meaning = table.camera.meaning
    assert isinstance(meaning, GrandSlamCamera)
    return meaning


def test_every_place_a_wager_stood_is_kept_as_the_cards_move_it_and_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    table = Table(Journal(path), game="grand-slam", rules={}, simulated=True, outputs=[])
    rng, deal = random.Random(35), random.Random(2)
    cards = [r + s for r in "23456789TJQKA" for s in "CDHS"]
    moved = restarted = 0
    for n in range(10):
        table.open_round(table.adapter.demo_opening(random.Random(rng.random()), seats=7), by="dealer")
        expected: dict[tuple[int, str], set[str]] = {}
        _places(table, expected)
        assert _meaning(table).stood == expected
        shoe = deal.sample(cards, len(cards))
        dealt = 0
        while table.awaiting.kind == "card":
            table.card(parse_card(shoe.pop()), {"via": "shoe"})
            dealt += 1
            _places(table, expected)
            assert _meaning(table).stood == expected
            if n % 3 == 1 and dealt == 2:  # a restart in the middle of the round
                table.journal.close()
                table = Table(Journal(path), game="grand-slam", rules={}, simulated=True, outputs=[])
                restarted += 1
                assert _meaning(table).stood == expected
        moved += sum(len(places) > 1 for places in expected.values())
        if table.payouts_due():
            table.button("confirm", by="dealer")
            assert _meaning(table).stood == expected
        assert table.awaiting.kind == "round"
    assert moved and restarted, "no wager moved, or no restart: this test would show nothing"
