"""The pay step (issue 30, items 7 and 8): a round is paid only when the dealer confirms its
payouts; the next round waits for that unless a supervisor lets it open (journaled with who and
why); recall and the meters tell paid from settled; a confirm with nothing to confirm is refused
with the next step and not journaled (the shoe's own button excepted: its frame must be kept)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.journal.rounds import table_payment
from controller.table import Table, TableError
from controller.table.view import prompt, snapshot

SEATS = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}}, {"seat": 4, "wagers": {"first": 20}}]}
PAYS = ["5H", "KD", "2C", "9S"]  # seat 1 is paid 25, seat 4's 20 is taken
NOTHING_OWED = {"seats": [{"seat": 1, "wagers": {"first": 5}}]}


def make_table(path: Path) -> Table:
    return Table(Journal(path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)


def play(table: Table, body: dict[str, Any], cards: list[str]) -> int:
    number = table.open_round(body, by="dealer")
    for text in cards:
        table.card(parse_card(text), {"via": "shoe"})
    assert table.current is not None and table.current.status == "settled"
    return number


def test_the_next_round_opens_only_once_the_payouts_are_confirmed(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    number = play(table, SEATS, PAYS)
    assert prompt(table) == "Pay seat 1: 25"
    seq = table.journal.last_seq
    with pytest.raises(TableError) as refused:
        table.open_round(SEATS, by="dealer")
    assert refused.value.kind == "conflict"
    assert str(refused.value) == (
        "round not opened: round 1's payouts are not confirmed yet. Pay seat 1: 25, then press confirm "
        "(a supervisor can let the next round open without it, giving the reason)"
    )
    assert table.journal.last_seq == seq and table.round_no == number and prompt(table) == "Pay seat 1: 25"
    shown = snapshot(table)
    assert (shown["payment"], shown["confirm"]) == ("due", "payouts")
    assert table.meters.report(due=table.payouts_due())["rounds_payouts_due"] == 1

    table.button("confirm", by="dealer")
    shown = snapshot(table)
    assert (shown["payment"], shown["confirm"]) == ("paid", None)
    assert table_payment(table, table.rounds[number]) == "paid"
    assert table.open_round(SEATS, by="dealer") == number + 1
    report = table.meters.report(due=table.payouts_due())
    assert (report["rounds_settled"], report["rounds_paid"], report["rounds_unpaid"]) == (1, 1, 0)


def test_a_round_that_owes_nobody_does_not_hold_up_the_next(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    number = play(table, NOTHING_OWED, ["AS"])
    assert prompt(table) == "Take the losing wagers; open the next round"
    assert table.open_round(NOTHING_OWED, by="dealer") == number + 1
    assert table_payment(table, table.rounds[number]) == "nothing-owed"


def test_a_supervisor_lets_the_next_round_open_unpaid_and_it_stays_unpaid_across_a_restart(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    number = play(table, SEATS, PAYS)
    with pytest.raises(TableError, match="needs who allows it and why"):
        table.override_payouts("sam", "  ")
    entry = table.override_payouts("sam", "seat 1 disputes the payout")
    assert (entry.kind, entry.round) == ("pay-override", number)
    assert entry.body == {"by": "sam", "reason": "seat 1 disputes the payout"}
    assert prompt(table) == "Place wagers and open the round"  # the pay prompt is gone
    with pytest.raises(TableError, match="no unconfirmed payouts to override"):
        table.override_payouts("sam", "again")
    # A confirm now pays nothing: the round stays not paid.
    with pytest.raises(TableError, match=r"^Nothing to confirm now"):
        table.button("confirm", by="dealer")
    assert table.open_round(SEATS, by="dealer") == number + 1
    for text in PAYS:
        table.card(parse_card(text), {"via": "shoe"})
    table.button("confirm", by="dealer")  # round 2 is paid; a snapshot was kept at its end
    table.journal.close()

    again = make_table(tmp_path)
    first, second = again.rounds[number], again.rounds[number + 1]
    assert first.override == {"by": "sam", "reason": "seat 1 disputes the payout", "at": entry.at}
    assert not first.paid and table_payment(again, first) == "unpaid"
    assert table_payment(again, second) == "paid"
    report = again.meters.report(due=again.payouts_due())
    assert (report["rounds_settled"], report["rounds_paid"], report["rounds_unpaid"]) == (2, 1, 1)
    assert again.snapshot_state()["meters"]["unpaid"] == 1  # type: ignore[index]
    again.journal.close()


def test_a_confirm_with_nothing_to_confirm_is_refused_with_the_next_step_and_not_journaled(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    seq = table.journal.last_seq
    with pytest.raises(TableError) as refused:
        table.button("confirm", by="dealer")
    assert refused.value.kind == "conflict"
    assert str(refused.value) == "Nothing to confirm now. Next: Place wagers and open the round"
    table.open_round(SEATS, by="dealer")
    seq = table.journal.last_seq
    for _ in range(5):
        with pytest.raises(TableError, match=r"^Nothing to confirm now\. Next: Deal to seat 1, first base$"):
            table.button("confirm", by="dealer")
    assert table.journal.last_seq == seq
    # The shoe's own button is journaled all the same: its frame moves the shoe's link on.
    entry = table.button("confirm", by="shoe", source={"via": "shoe", "session": 7, "seq": 3})
    assert entry.seq == seq + 1 and table.shoe_link == {"session": 7, "seq": 3}


def test_recall_on_the_command_line_tells_paid_from_not_paid(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    play(table, SEATS, PAYS)
    table.button("confirm", by="dealer")
    play(table, SEATS, PAYS)
    table.override_payouts("sam", "seat 1 disputes the payout")
    play(table, NOTHING_OWED, ["AS"])
    play(table, SEATS, PAYS)
    table.journal.close()
    said = subprocess.run(
        [sys.executable, "-m", "controller.cli", "recall", "--sim", "--state-dir", str(tmp_path), "--last", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert said.returncode == 0, said.stderr
    payouts = [line.strip() for line in said.stdout.splitlines() if line.strip().startswith("payouts:")]
    assert payouts == [
        "payouts: paid",
        "payouts: NOT PAID: sam let the next round open without the confirm (seat 1 disputes the payout)",
        "payouts: nothing owed",
        "payouts: due (not confirmed yet)",
    ]
