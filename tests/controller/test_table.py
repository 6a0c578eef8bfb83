"""The table core: journal first, then the engine; faults latched; restarts rebuild the same table."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from controller.engine.base import to_json
from controller.engine.cards import JOKER, parse_card
from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table, TableError
from controller.table.view import prompt, snapshot

SHOE = {"via": "shoe"}


def make_table(path: Path, **rules: Any) -> Table:
    return Table(Journal(path / "journal.sqlite3"), game="grand-slam", rules=rules, simulated=True)


def deal(table: Table, *cards: str) -> None:
    for text in cards:
        table.card(parse_card(text), SHOE)


def comparable(table: Table) -> dict[str, Any]:
    snap = snapshot(table)
    snap["faults"] = [{k: v for k, v in f.items()} for f in snap["faults"]]  # type: ignore[union-attr]
    return {**snap, "meters": table.meters.to_json(), "rounds": {n: vars(r) for n, r in table.rounds.items()}}


def test_a_round_is_dealt_settled_and_exported_as_a_replayable_round_file(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    n = table.open_round(
        {
            "seats": [
                {"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}},
                {"seat": 4, "wagers": {"first": 20}},
            ]
        },
        by="dealer",
    )
    assert n == 1 and prompt(table) == "Deal to seat 1, first base"
    deal(table, "5H", "KD", "2C")
    assert prompt(table) == "Deal to seat 1, third base"
    deal(table, "9S")
    record = table.rounds[1]
    assert record.status == "settled"
    assert [(s["seat"], s["net"]) for s in record.settlement["seats"]] == [(1, 25), (4, -20)]  # type: ignore[index]
    assert settle_round_file(record.round_file) == record.settlement
    assert prompt(table) == "Pay seat 1: 25"
    assert table.meters.to_json()["total_wagered"] == 45 and table.meters.rounds == 1


def test_a_restart_rebuilds_exactly_the_same_table_from_the_journal(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 2, "wagers": {"first": 5}}]}, by="dealer")
    deal(table, "3C")
    table.override_payouts("sam", "seat 2 disputes the payout")  # kept, with who and why
    table.open_round({"seats": [{"seat": 3, "wagers": {"first": 5, "second": 5}}]}, by="dealer")
    deal(table, "7D")
    table.raise_fault("shoe-silent", "The shoe has been silent for 3 s")
    deal(table, "8D")  # held while play is stopped
    before = comparable(table)
    table.journal.close()
    again = make_table(tmp_path)
    assert comparable(again) == before
    assert again.held and str(again.held[0][1]) == "8D"


def test_a_joker_in_a_grand_slam_shoe_latches_a_fault_that_survives_a_restart(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    table.card(JOKER, SHOE)
    assert table.blocked
    fault = snapshot(table)["faults"][0]  # type: ignore[index]
    assert fault["code"] == "impossible-card" and "JK cannot come from the 6-deck shoe" in fault["message"]
    assert prompt(table).startswith("STOP: JK cannot come from the 6-deck shoe")
    with pytest.raises(TableError, match="play is stopped"):
        table.open_round({"seats": [{"seat": 2, "wagers": {"first": 5}}]}, by="dealer")
    table.journal.close()
    table = make_table(tmp_path)
    assert table.blocked and table.awaiting.target == {"seat": 1, "base": "first", "blind": False}
    with pytest.raises(TableError, match="cleared by replace, void, not 'dismiss'"):
        table.clear_fault(fault["id"], "dismiss", by="sup", reason="x")
    with pytest.raises(TableError, match="who clears it and why"):
        table.clear_fault(fault["id"], "replace", by="", reason="", card="3S")
    table.clear_fault(fault["id"], "replace", by="supervisor Lee", reason="the card was a 3 of spades", card="3S")
    assert not table.blocked and table.rounds[1].status == "settled"
    assert table.rounds[1].round_file["cards"] == ["3S"]  # type: ignore[index]
    cleared = next(e for e in table.journal.entries() if e.kind == "fault-cleared")
    assert cleared.body["by"] == "supervisor Lee" and cleared.body["reason"] == "the card was a 3 of spades"


def test_cards_that_come_out_during_a_fault_are_held_then_dealt_in_order(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5, "second": 5, "third": 5}}]}, by="dealer")
    entry = table.misread("Misread at the shoe: smudged index", {"session": 7, "seq": 3})
    deal(table, "TC", "JC")
    assert [str(c) for _, c in table.held] == ["TC", "JC"]
    assert table.state.dealt == ()
    table.clear_fault(entry.seq, "dismiss", by="sup", reason="card re-scanned")
    assert [str(c) for c in table.state.dealt] == ["TC", "JC"]
    assert prompt(table) == "Deal to seat 1, third base"


def test_an_impossible_card_confirmed_by_the_supervisor_is_dealt(tmp_path: Path) -> None:
    table = make_table(tmp_path, decks=1)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}, {"seat": 2, "wagers": {"first": 5}}]}, by="dealer")
    deal(table, "TC", "TC")
    fault = snapshot(table)["faults"][0]  # type: ignore[index]
    assert "holds only 1 and all have been dealt" in fault["message"]
    table.clear_fault(fault["id"], "confirm", by="sup", reason="two decks were mixed; card is real")
    assert table.rounds[1].status == "settled"


def test_voiding_returns_every_wager_and_counts_a_void(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    table.void(by="supervisor Lee", reason="dealer dropped the card")
    assert table.rounds[1].status == "void"
    assert table.rounds[1].settlement["void"] == {"by": "supervisor Lee", "reason": "dealer dropped the card"}  # type: ignore[index]
    assert table.meters.voids == 1 and table.meters.rounds == 0
    with pytest.raises(TableError, match="no round being dealt"):
        table.void(by="x", reason="y")


def test_a_card_with_no_round_open_is_ruled_dead(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    deal(table, "AS")
    assert table.meters.dead_cards == 1 and not table.blocked
    assert table.shoe.dealt_count == 1
    assert prompt(table) == (
        "Dead card AS (no seat is owed a card: no round is being dealt): set it aside. "
        "Then: Place wagers and open the round"
    )
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    assert prompt(table) == "Deal to seat 1, first base"


def test_refused_openings_leave_no_journal_entry(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    for body, says in [
        (
            {"seats": [{"seat": 1, "wagers": {"first": 5, "second": 9}}]},
            "Seat 1: the wager on second (9) may not exceed the wager on first (5) (seats[0].wagers.second)",
        ),
        ({"seats": []}, "seats: a round needs at least one seat"),
        ({"seats": [], "tip": 5}, "unknown key 'tip'"),
    ]:
        with pytest.raises(TableError, match=re.escape(says)):
            table.open_round(body, by="dealer")
    assert table.journal.last_seq == 0


def test_bad_rule_options_in_config_are_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"rules\.decks: must be a whole number of 1 or more"):
        make_table(tmp_path, decks=0)


def test_state_in_the_snapshot_is_the_engine_state_as_json(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    assert snapshot(table)["state"] == to_json(table.state)


def test_the_cut_card_asks_for_a_new_shoe_after_the_round_and_confirm_loads_it(tmp_path: Path) -> None:
    table = make_table(tmp_path, decks=1)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    table.shoe_event("The cut card came out", {"via": "shoe", "session": 1, "seq": 4})
    assert prompt(table) == "Deal to seat 1, first base"  # the round in play is finished first
    deal(table, "AS")
    table.button("confirm", by="dealer")  # the dealer has taken the losing wager
    assert prompt(table) == "The cut card came out: shuffle, load a new shoe, then press confirm"
    table.button("confirm", by="dealer")
    assert table.shuffle_due is None and table.shoe.dealt_count == 0
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    deal(table, "AS")  # a second ace of spades from a 1-deck shoe is fine: it is a new shoe
    assert not table.blocked


def test_a_new_shoe_is_loaded_only_between_rounds(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    with pytest.raises(TableError, match="load a new shoe between rounds"):
        table.shoe_reshuffled(by="dealer")
    deal(table, "3C")
    table.shoe_reshuffled(by="dealer")
    assert table.shoe.dealt_count == 0


def test_an_empty_shoe_mid_round_asks_for_a_new_shoe_and_the_round_goes_on_from_it(tmp_path: Path) -> None:
    table = make_table(tmp_path, decks=1)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, by="dealer")
    table.shoe_event("The shoe is empty", {"via": "shoe", "session": 1, "seq": 4})
    assert prompt(table) == (
        "The shoe is empty: shuffle, load a new shoe, then press New shoe. Then: Deal to seat 1, first base"
    )
    table.shoe_reshuffled(by="dealer")  # mid-round: the round cannot go on otherwise
    assert prompt(table) == "Deal to seat 1, first base" and table.shuffle_due is None
    deal(table, "AS")
    assert not table.blocked and table.awaiting.kind == "round"


def test_a_second_player_switches_the_blind_hand_off_and_the_dealer_is_told_to_remove_the_puck(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}, {"seat": 4, "wagers": {"first": 5}}], "blind_seat": 2}, by="dealer")
    assert prompt(table) == "Remove the blind puck from seat 2: a second player has joined. Then: Deal to seat 1, first base"
    deal(table, "7C")
    assert prompt(table) == "Deal to seat 4, first base"
