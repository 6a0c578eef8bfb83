"""The payout check on the fused reading (vision/fusion.py through the table): a payout the
camera is unsure of is neither passed nor failed but listed with the camera's reason, and a
stack out of square is the dealer's to put right ("square the stack")."""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from controller.table.view import snapshot

SPOTS = ("first", "second", "third", "home", "three_outs", "poker_bonus")
DISAGREE = "the frames disagree: 30 in 2 frames, 40 in 1 frame"
NOT_SQUARE = "the stack is not square (its outline strays 1.6 mm across from one upright stack: pushed or leaning?)"


def seen(table: Table, zones: dict[str, Any]) -> None:
    """The camera's fused view: every zone of seats 1 and 2 empty but those given (a value, or
    (state, why) for a zone without one)."""
    view: dict[str, Any] = {f"seat{n}.{spot}": 0 for n in (1, 2) for spot in SPOTS}
    view |= {f"seat{n}.{spot}.payout": 0 for n in (1, 2) for spot in ("home", "three_outs")}
    view |= zones
    table.scene_seen(
        {
            "camera": "ok",
            "why": "",
            "zones": {
                z: {"state": "ok", "value": v} if isinstance(v, int) else {"state": v[0], "value": None, "why": v[1]}
                for z, v in view.items()
            },
            "pucks": {},
        }
    )


def test_an_unsure_payout_is_not_checked_and_says_why_never_passed_or_failed() -> None:
    table = Table(Journal(":memory:"), game="grand-slam", rules={})
    seen(table, {"seat1.first": 10, "seat1.second": 10, "seat1.third": 10})
    table.button("confirm", "dealer")  # opens the proposed round
    for text in ("3H", "3D", "3C"):  # each base home: 30 owed beside home plate
        table.card(parse_card(text), {"via": "test"})
    seen(table, {"seat1.home": 30, "seat1.home.payout": ("unsure", DISAGREE)})
    assert snapshot(table)["camera"]["payouts"] == [
        {
            "seat": 1,
            "zone": "seat1.home.payout",
            "owed": 30,
            "seen": None,
            "state": "unread",
            "why": f"unsure: {DISAGREE}",
        }
    ]
    table.button("confirm", "dealer")
    assert table.faults == {}  # not failed
    check = snapshot(table)["camera"]["last_check"]
    assert check["problems"] == []
    assert check["unchecked"] == [f"Seat 1 home plate payout: not checked (unsure: {DISAGREE})"]  # not passed


def test_a_stack_out_of_square_asks_the_dealer_to_square_it() -> None:
    table = Table(Journal(":memory:"), game="grand-slam", rules={})
    seen(table, {"seat1.first": ("unsure", NOT_SQUARE), "seat1.second": 10})
    proposal = snapshot(table)["camera"]["proposal"]
    assert not proposal["ready"]
    assert proposal["why_not"] == "cannot read Seat 1 first base (square the stack)"


SETTLING = "settling: 1 of 2 frames agree"


def settled_round(journal: Journal | None = None) -> Table:
    """Round 1 at seat 1 settled: each base home, 30 owed beside home plate."""
    table = Table(journal or Journal(":memory:"), game="grand-slam", rules={})
    seen(table, {"seat1.first": 10, "seat1.second": 10, "seat1.third": 10})
    table.button("confirm", "dealer")  # opens the proposed round
    for text in ("3H", "3D", "3C"):
        table.card(parse_card(text), {"via": "test"})
    return table


def test_a_payout_unsure_at_the_confirm_stays_open_and_the_first_sure_reading_verifies_it() -> None:
    table = settled_round()
    seen(table, {"seat1.home": 30, "seat1.home.payout": ("unsure", SETTLING)})
    table.button("confirm", "dealer")  # the dealer confirms before the camera is sure of the payout
    check = snapshot(table)["camera"]["last_check"]
    assert check["open"] == [
        {
            "seat": 1,
            "zone": "seat1.home.payout",
            "where": "Seat 1 home plate payout",
            "owed": 30,
            "state": "unsure",
            "why": f"unsure: {SETTLING}",
        }
    ]
    assert check["unchecked"] == [f"Seat 1 home plate payout: not checked (unsure: {SETTLING})"]
    seen(table, {"seat1.home": 35, "seat1.home.payout": ("unsure", SETTLING)})  # another zone changes: still open
    assert snapshot(table)["camera"]["last_check"] == check
    seen(table, {"seat1.home": 30, "seat1.home.payout": 30})
    check = snapshot(table)["camera"]["last_check"]
    assert (check["open"], check["unchecked"], check["problems"]) == ([], [], [])
    assert check["verified"] == ["Seat 1 home plate payout: 30"]
    seen(table, {})  # the player takes the winnings: the check is closed, nothing changes
    assert snapshot(table)["camera"]["last_check"] == check and table.faults == {}


def test_a_payout_unsure_at_the_confirm_then_read_short_is_a_mismatch_that_replays_from_the_journal() -> None:
    journal = Journal(":memory:")
    table = settled_round(journal)
    seen(table, {"seat1.home": 30, "seat1.home.payout": ("blocked", "something that is not a stack covers the zone")})
    table.button("confirm", "dealer")
    assert table.faults == {}
    seen(table, {"seat1.home": 30, "seat1.home.payout": 20})  # the dealer's hand leaves: 20 where 30 is owed
    [fault] = table.faults.values()
    assert fault.code == "payout-mismatch"
    assert fault.message.startswith("Round 1: Seat 1 home plate payout: 20 paid where 30 is owed (underpaid by 10)")
    check = snapshot(table)["camera"]["last_check"]
    assert check["open"] == [] and [p["kind"] for p in check["problems"]] == ["underpay"]
    again = Table(journal, game="grand-slam", rules={})
    assert [f.to_json() for f in again.faults.values()] == [fault.to_json()]
    assert snapshot(again)["camera"]["last_check"] == check


@pytest.mark.parametrize(
    ("after", "words"),
    [
        ([{"seat1.home.payout": ("blocked", "a hand")}, {}], "a hand came over it before the camera was sure"),
        ([{}], "taken before the camera was sure of it"),
        ([{"seat1.home.payout": ("unsure", DISAGREE)}, "open"], "the next round opened"),
    ],
    ids=["a hand", "taken", "next round"],
)
def test_a_payout_still_unsure_when_its_chips_may_be_gone_is_closed_not_checked_never_failed(
    after: list[Any], words: str
) -> None:
    table = settled_round()
    seen(table, {"seat1.home": 30, "seat1.home.payout": ("unsure", SETTLING)})
    table.button("confirm", "dealer")
    for step in after:
        if step == "open":
            seen(table, {"seat1.first": 5, "seat1.home.payout": ("unsure", DISAGREE)})
            table.button("confirm", "dealer")  # the next round opens from the camera's proposal
            assert snapshot(table)["round"] == 2
        else:
            seen(table, step)  # the players take their winnings (zones not given are empty)
    assert table.faults == {}  # never failed on what may be another stack, or none
    check = snapshot(table)["camera"]["last_check"]
    assert check["round"] == 1 and check["open"] == [] and check["problems"] == [] and check["verified"] == []
    [unchecked] = check["unchecked"]
    assert unchecked.startswith("Seat 1 home plate payout: not checked (") and words in unchecked
