"""The pay step on the screens (issue 30, items 7, 8 and 10): a settled round's payouts are
confirmed before the next round opens, unless a supervisor lets it open (with the reason, in the
audit trail, the round then "NOT PAID" in recall and the meters); the dealer screen shows one
primary action at a time; Confirm with nothing to confirm says so and journals nothing; a
refused wager names the seat first."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import Screens
from .test_supervisor_screen import ROUND_BODY

# Seat 1 scores 10 + 10 + 5 = 25; seat 4 is out (tests/browser/test_dealer_screen.py).
CARDS = ["5H", "KD", "2C", "9S"]
REFUSED_CONFIRM = r"status of 409 .*/api/confirm"  # the browser logs the refusal of an idle Confirm


def deal_unpaid(daemon: Daemon) -> int:
    """A round dealt through the simulated shoe, settled, its payouts not confirmed."""
    return daemon.deal(ROUND_BODY, CARDS)


def primaries(page: Page) -> list[str]:
    """The ids of the primary (gold) buttons the dealer can see."""
    ids: list[str] = page.locator("button.primary:visible").evaluate_all("(bs) => bs.map((b) => b.id)")
    return ids


def test_the_next_round_waits_for_the_payouts_and_one_primary_action_shows_at_a_time(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    dealer.expected.append(REFUSED_CONFIRM)
    page = dealer.page
    screens.login(dealer, DEALER)
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(page.locator("#wager-panel")).to_be_visible()
    assert primaries(page) == ["open-round"]

    number = deal_unpaid(daemon)
    expect(page.locator("#prompt")).to_have_text("Pay seat 1: 25")
    # While the dealer pays, the opening form is not offered and Confirm is the one primary action.
    expect(page.locator("#wager-panel")).to_be_hidden()
    expect(page.locator("#confirm")).to_have_class(re.compile(r"\bprimary\b"))
    assert primaries(page) == ["confirm"]

    # Opening the next round without the confirm is refused, and nothing is journaled.
    before = daemon.get("/api/state")
    assert before["payment"] == "due" and before["confirm"] == "payouts"
    status, said = daemon.post("/api/rounds", ROUND_BODY)
    assert status == 409, said
    assert said["error"].startswith(f"round not opened: round {number}'s payouts are not confirmed yet. Pay seat 1: 25")
    after = daemon.get("/api/state")
    assert after["journal_seq"] == before["journal_seq"] and after["round"] == number
    expect(page.locator("#prompt")).to_have_text("Pay seat 1: 25")

    # Paid: Enter confirms; the form comes back and its "Open round" is the one primary action.
    page.click("#prompt")
    page.keyboard.press("Enter")
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(page.locator("#wager-panel")).to_be_visible()
    expect(page.locator("#confirm")).not_to_have_class(re.compile(r"\bprimary\b"))
    assert primaries(page) == ["open-round"]
    expect(page.locator("#event-log li", has_text="Confirm pressed")).to_have_count(1)
    assert daemon.get(f"/api/rounds/{number}")["payment"] == "paid"

    # Confirm with nothing to confirm: the dealer is told so and what comes next; not journaled.
    seq = daemon.get("/api/state")["journal_seq"]
    for key in ("Enter", " ", "Enter"):
        page.keyboard.press(key)
        expect(page.locator("#action-error")).to_have_text(
            "Nothing to confirm now. Next: Place wagers and open the round"
        )
    page.click("#confirm")
    expect(page.locator("#action-error")).to_have_text("Nothing to confirm now. Next: Place wagers and open the round")
    assert daemon.get("/api/state")["journal_seq"] == seq
    expect(page.locator("#event-log li", has_text="Confirm pressed")).to_have_count(1)

    # The next round opens from the screen now.
    panel = page.locator("#wager-panel")
    panel.locator('input[data-seat="3"][data-bet="first"]').fill("10")
    page.click("#open-round")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 3, first base")
    expect(page.locator("#action-error")).to_have_text("")


def test_a_supervisor_lets_the_next_round_open_unpaid_with_a_reason_and_recall_says_not_paid(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    screens.login(dealer, DEALER)
    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    d, s = dealer.page, supervisor.page
    override = s.locator("#override-payouts")
    expect(override).to_be_disabled()

    number = deal_unpaid(daemon)
    expect(d.locator("#prompt")).to_have_text("Pay seat 1: 25")
    expect(override).to_be_enabled()
    # Only a supervisor may let it open; the dealer's token is refused.
    status, _ = daemon.post("/api/rounds/current/override-payouts", {"reason": "mine"})
    assert status == 403

    # Without a reason, nothing happens but the request for one.
    override.click()
    expect(s.locator("#action-error")).to_contain_text("Write the reason first")
    s.fill("#reason", "seat 1 disputes the payout; settled at the cage")
    override.click()
    expect(s.locator("#action-done")).to_have_text(f"Round {number} stays NOT PAID; the dealer may open the next round.")
    expect(override).to_be_disabled()

    # The dealer's pay prompt is gone, the form is back, and the next round opens.
    expect(d.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(d.locator("#wager-panel")).to_be_visible()
    expect(d.locator("#event-log li").first).to_have_text(
        re.compile(rf"Round {number} left unpaid: supervisor lets the next round open \(seat 1 disputes the payout")
    )
    status, opened = daemon.post("/api/rounds", ROUND_BODY)
    assert status == 201, opened

    # Recall tells the unpaid round from a paid one; the meters count it; the audit trail says who and why.
    s.click("#recall-refresh")
    unpaid = s.locator(f'#recall [data-round="{number}"]')
    expect(unpaid).to_have_attribute("data-payment", "unpaid")
    expect(unpaid).to_have_text(f"#{number} not paid")
    unpaid.click()
    expect(s.locator("#replay-payment")).to_have_text(
        f"Round {number}: settled, NOT PAID: supervisor let the next round open without the dealer's confirm "
        "(seat 1 disputes the payout; settled at the cage)"
    )
    expect(s.locator('#meters dd[data-meter="Rounds settled"]')).to_have_text("1")
    expect(s.locator('#meters dd[data-meter="Rounds paid"]')).to_have_text("0")
    expect(s.locator('#meters dd[data-meter="Rounds left unpaid"]')).to_have_text("1")
    s.click("#audit-refresh")
    expect(s.locator("#audit tbody tr", has_text=f"round {number}'s payouts not confirmed")).to_contain_text(
        "seat 1 disputes the payout"
    )
    meters = daemon.get("/api/meters", token=SUPERVISOR)
    assert (meters["rounds_settled"], meters["rounds_paid"], meters["rounds_unpaid"]) == (1, 0, 1)


def test_a_refused_wager_names_the_seat_first_as_a_dealer_reads_it(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    dealer.expected.append(r"status of 422 .*/api/rounds")  # the refusal the test asks for
    page = dealer.page
    screens.login(dealer, DEALER)
    panel = page.locator("#wager-panel")
    panel.locator('input[data-seat="2"][data-bet="second"]').fill("10")
    page.click("#open-round")
    expect(page.locator("#wager-error")).to_have_text("Seat 2: every seat bets first base (seats[0].wagers.first)")
    expect(panel.locator('th[data-seat="2"]')).to_have_class(re.compile(r"\brefused\b"))
