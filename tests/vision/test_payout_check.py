"""The payout check on the fused reading (vision/fusion.py through the table): a payout the
camera is unsure of is neither passed nor failed but listed with the camera's reason, and a
stack out of square is the dealer's to put right ("square the stack")."""

from __future__ import annotations

from typing import Any

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
