"""The one masking function, on documents as the dealer gets them: a face-down card is masked in
every notation it can stand in (its code, its suit's symbol, the shoe's frame in hex, bytes
spelled out in a fault), a face-up card is left alone, and the supervisor sees everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.engine.base import to_json
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from controller.table.view import prompt
from controller.table.visibility import MASK, sight

# Grand Slam, a solo player on seat 3 with the blind puck on seat 4: 5C to the player (face up),
# 6H to the blind hand (face down, never turned over).
OPENING = {"seats": [{"seat": 3, "wagers": {"first": 10, "second": 10}}], "blind_seat": 4}


@pytest.fixture
def table(tmp_path: Path) -> Table:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    table.open_round(OPENING, by="dealer")
    table.card(parse_card("5C"), {"via": "shoe", "session": 7, "seq": 1, "frame": "103543"})
    table.card(parse_card("6H"), {"via": "shoe", "session": 7, "seq": 2, "frame": "103648"})
    return table


def test_a_face_down_card_is_masked_in_every_notation(table: Table) -> None:
    seen = sight(table, "dealer")
    doc = {
        "card": "6H",
        "source": {"frame": "103648", "seq": 2},
        "words": "6H to seat 4; 6♥ on the screen; damaged frame, bytes: 7e 04 02 10 36 48 ab",
        "6H": "a card as a key",
        "up": ["5C", "5♣", "103543"],
    }
    masked = seen.entry(doc, table.round_no)
    assert masked == {
        "card": MASK,
        "source": {"frame": MASK, "seq": 2},
        "words": f"{MASK} to seat 4; {MASK} on the screen; damaged frame, bytes: {MASK}",
        MASK: "a card as a key",
        "up": ["5C", "5♣", "103543"],
    }
    assert sight(table, "supervisor").entry(doc, table.round_no) == doc


def test_the_ten_is_masked_however_it_is_written(table: Table) -> None:
    table.card(parse_card("9D"), {"via": "test"})  # seat 3, second base
    table.card(parse_card("TS"), {"via": "test"})  # the blind hand again
    seen = sight(table, "dealer")
    assert seen.text("TS, 10S, T♠ and 10♠") == f"{MASK}, {MASK}, {MASK} and {MASK}"
    assert seen.snapshot({"frame": "105453", "bytes": "54 53"}) == {"frame": MASK, "bytes": MASK}


def test_the_last_card_is_judged_by_the_round_it_was_dealt_in(table: Table) -> None:
    # The blind hand's card is the last of round 1; round 2 opens and deals nothing yet.
    table.card(parse_card("TD"), {"via": "test"})  # seat 3, second base: out (no wager left)
    table.card(parse_card("KH"), {"via": "test"})  # the blind hand's second card: the round is over
    assert table.awaiting.kind == "round" and table.last_card == "KH"
    table.open_round(
        {"seats": [{"seat": 1, "wagers": {"first": 10}}, {"seat": 2, "wagers": {"first": 5}}]}, by="dealer"
    )
    seen = sight(table, "dealer")
    assert seen.snapshot({"last_card": table.last_card}) == {"last_card": MASK}
    assert seen.text(f"LAST {table.last_card}") == f"LAST {MASK}"
    # Once the new round deals, its own card is the last one and lies face up.
    table.card(parse_card("7C"), {"via": "test"})
    assert sight(table, "dealer").snapshot({"last_card": table.last_card}) == {"last_card": "7C"}


def test_a_jokers22_double_down_card_s_total_is_masked_with_it(tmp_path: Path) -> None:
    # ann: 5C and 6D (11) doubles; her face-down card 8S would make 19, which would tell its value.
    table = Table(Journal(tmp_path / "j.sqlite3"), game="jokers-22", rules={}, simulated=True)
    table.open_round(
        {"banker": {"stake": 500}, "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 10}]}]}, by="dealer"
    )
    for card in ("5C", "9H", "6D"):
        table.card(parse_card(card), {"via": "test"})
    table.decide({"spot": 1, "action": "double"}, by="dealer")
    assert sight(table, "dealer").text(prompt(table)) == "Deal to spot 1, hand 1, face down"
    entry = table.card(parse_card("8S"), {"via": "test"})
    told = {"effects": [to_json(e) for e in table.recent_effects[entry.seq]]}
    placed = sight(table, "dealer").entry(told, entry.round)["effects"][0]
    assert placed == {"kind": "jokers-22.card-placed", "spot": 1, "hand": 1, "card": MASK, "total": MASK}
    assert sight(table, "supervisor").entry(told, entry.round)["effects"][0]["total"] == "19"
