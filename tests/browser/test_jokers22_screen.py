"""The dealer screen at a Jokers 22 table in Chromium: a whole round opened from the screen's
panel and dealt card by card from a stacked simulated shoe, with a split and a double chosen on
the screen's decision buttons, settled to the payouts, the ACTION spot and the coverage shown."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import ARTIFACTS, Screens

CONFIG = """
[table]
id = "BROWSER-J22"
game = "jokers-22"
"""

# Dealing order (REPLAY.md "Jokers 22"): a card to each spot in spot order, the banker's first
# card, a second card to each spot; each spot plays out; the banker's second card, then the
# banker draws. So spot 1 (ann) gets 8H 8D, spot 2 (bob) gets 5C 6D, the banker 9S; after ann
# splits, her first hand takes 2C (10: must hit) and TC (20: stands), her second 3H (11: must
# hit) and KD (21); bob doubles on 11 and takes 9H (20); the banker's 7C makes 16 (hits) and 8S
# makes 24. Every player hand is 21 or less against the banker's 22 or more: each wins 1 to 1.
CARDS = ["8H", "5C", "9S", "8D", "6D", "2C", "TC", "3H", "KD", "9H", "7C", "8S"]
NEXT = re.compile(r"\bnext\b")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The conftest's simulated table, configured for Jokers 22 (overrides its `daemon`)."""
    yield from Daemon(tmp_path, CONFIG).serve()


def hand(spot: int, number: int) -> str:
    return f'#table g.hand[data-spot="{spot}"][data-hand="{number}"]'


def draw_and_see(page: Page, card: str) -> None:
    """Press Draw card (the simulated dealer pulls a card from the shoe) and see it read."""
    page.click("#draw-card")
    expect(page.locator(f'#last-card .card[data-card="{card}"]')).to_be_visible()
    expect(page.locator("#action-error")).to_have_text("")


def decision_buttons(page: Page) -> list[str]:
    buttons = page.locator("#decisions button[data-action]")
    return [str(b.get_attribute("data-action")) for b in buttons.all()]


def test_dealer_deals_a_jokers22_round_with_a_split_and_a_double_from_the_screen(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    # Chromium logs the table's refusal of the oversized wager below (a 422) as a console error.
    dealer.expected.append(r"status of 422 .*/api/rounds")
    screens.login(dealer, DEALER)
    expect(page.locator("#game-name")).to_have_text("Jokers 22")
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(page.locator("#wager-panel")).to_be_hidden()  # the Grand Slam grid is not this game's
    expect(page.locator("#table g.spot")).to_have_count(7)

    # The opening panel: the banker's stake, a player's name and wager per spot. A wager over the
    # table's maximum (10000 by default) is refused by the table, inline, naming the spot.
    panel = page.locator("#j22-open")
    expect(panel).to_be_visible()
    page.fill("#j22-stake", "500")

    def slot(spot: int, name: str) -> str:
        return f'#j22-open input[data-spot="{spot}"][data-slot="0"][data-field="{name}"]'

    page.fill(slot(1, "player"), "ann")
    page.fill(slot(1, "amount"), "50000")
    page.fill(slot(2, "player"), "bob")
    page.fill(slot(2, "amount"), "20")
    page.click("#j22-open-round")
    expect(page.locator("#j22-error")).to_contain_text("Spot 1: the wager (50000)")
    expect(page.locator("#j22-error")).to_contain_text("10000")
    expect(page.locator(slot(1, "amount"))).to_have_class(re.compile(r"\brefused\b"))
    expect(panel).to_be_visible()
    assert daemon.get("/api/state")["round"] is None

    page.fill(slot(1, "amount"), "50")
    page.click("#j22-open-round")
    expect(panel).to_be_hidden()
    expect(page.locator("#j22-error")).to_have_text("")
    expect(page.locator("#round-info")).to_contain_text("Round 1")
    expect(page.locator("#prompt")).to_have_text("Deal to spot 1, hand 1")
    expect(page.locator(hand(1, 1))).to_have_class(NEXT)
    expect(page.locator('#table g.chip[data-spot="1"][data-player="ann"]')).to_have_attribute("data-amount", "50")
    expect(page.locator('#table g.chip[data-spot="2"][data-player="bob"]')).to_have_attribute("data-amount", "20")
    expect(page.locator('#table g.spot[data-spot="3"]')).to_have_class(re.compile(r"\bidle\b"))
    expect(page.locator("#table g.banker .banker-title")).to_contain_text("STAKE 500")

    status, stacked = daemon.post("/api/sim/shoe", {"cards": CARDS})
    assert status == 200, stacked

    draw_and_see(page, "8H")
    expect(page.locator(hand(2, 1))).to_have_class(NEXT)
    draw_and_see(page, "5C")
    expect(page.locator("#table g.banker")).to_have_class(NEXT)
    draw_and_see(page, "9S")
    draw_and_see(page, "8D")
    draw_and_see(page, "6D")

    # Ann's pair of eights on 16: hit or stand (12 to 19 is the player's option), double and
    # surrender (first two cards, no ace or joker, the banker's card no joker), split (a pair).
    decisions = page.locator("#decisions")
    expect(decisions).to_be_visible()
    expect(page.locator("#decision-who")).to_have_text("Spot 1: ann on 16")
    # The prompt names her as the decision box does, by the name the dealer typed.
    expect(page.locator("#prompt")).to_have_text("Spot 1, ann on 16: hit or stand or double or split or surrender?")
    expect(page.locator("#decisions button[data-action]")).to_have_count(5)
    assert decision_buttons(page) == ["hit", "stand", "double", "split", "surrender"]
    expect(page.locator(hand(1, 1))).to_have_attribute("data-cards", "8H 8D")
    expect(page.locator(f"{hand(1, 1)} .hand-total")).to_have_text("16")
    expect(page.locator(hand(2, 1) + " .hand-total")).to_have_text("11")
    page.screenshot(path=str(ARTIFACTS / "jokers22-decision.png"), animations="disabled")
    page.click('#decisions button[data-action="split"]')
    expect(decisions).to_be_hidden()
    expect(page.locator("#decision-error")).to_have_text("")
    expect(page.locator('#table g.hand[data-spot="1"]')).to_have_count(2)
    expect(page.locator(hand(1, 1))).to_have_attribute("data-cards", "8H")
    expect(page.locator(hand(1, 2))).to_have_attribute("data-cards", "8D")
    expect(page.locator('#table g.chip[data-spot="1"][data-hand="2"][data-player="ann"]')).to_have_attribute(
        "data-amount", "50"
    )
    expect(page.locator("#event-log li").first).to_contain_text("Spot 1: ann splits (50 more)")

    # The split hands play themselves: 10 must hit, 20 stands, 11 must hit, 21 stands.
    draw_and_see(page, "2C")
    expect(page.locator(hand(1, 1))).to_have_class(NEXT)
    draw_and_see(page, "TC")
    expect(page.locator(hand(1, 2))).to_have_class(NEXT)
    draw_and_see(page, "3H")
    draw_and_see(page, "KD")
    expect(page.locator("#event-log li", has_text="Spot 1 hand 2 stands on 21")).to_have_count(1)

    # No choice was asked of the split hands; the next is bob's 11: he must hit, so stand is not
    # offered; double and surrender are.: he must hit, so stand is not offered; double and surrender are.
    expect(decisions).to_be_visible()
    expect(page.locator("#decision-who")).to_have_text("Spot 2: bob on 11")
    assert decision_buttons(page) == ["hit", "double", "surrender"]
    page.click('#decisions button[data-action="double"]')
    expect(decisions).to_be_hidden()
    bob = page.locator('#table g.chip[data-spot="2"][data-player="bob"]')
    expect(bob).to_have_attribute("data-amount", "40")
    expect(bob).to_have_class(re.compile(r"\bdoubled\b"))

    # A double down's card is dealt face down (GAMES.md): the dealer's screen shows its back, and
    # neither the card nor the total it makes, until the hands are shown.
    expect(page.locator("#prompt")).to_have_text("Deal to spot 2, hand 1, face down")
    page.click("#draw-card")
    expect(page.locator("#last-card .card.back")).to_be_visible()
    expect(page.locator("#event-log li").first).to_have_text(re.compile(r"face-down card to spot 2$"))
    expect(page.locator("#table g.banker")).to_have_class(NEXT)
    expect(page.locator(f"{hand(2, 1)} .hand-total")).to_have_text("11")
    draw_and_see(page, "7C")
    expect(page.locator("#prompt")).to_contain_text("ACTION spot: 1")
    draw_and_see(page, "8S")

    # Settled: ann wins both hands (50 + 50), bob his doubled 40; the banker pays 140. The
    # banker's second card, a 7, among 2 spots names spot ((7 - 1) mod 2) + 1 = 1 the ACTION
    # spot; the 500 stake covers every wager in full.
    expect(page.locator("#prompt")).to_have_text("Pay ann at spot 1: 100, bob at spot 2: 40")
    ann_row = page.locator('#payouts tr[data-spot="1"][data-player="ann"]')
    bob_row = page.locator('#payouts tr[data-spot="2"][data-player="bob"]')
    expect(ann_row.locator(".net")).to_have_text("+100")
    expect(ann_row.locator(".pay")).to_have_text("100")
    expect(ann_row.locator(".covered")).to_have_text("100")
    expect(bob_row.locator(".net")).to_have_text("+40")
    expect(bob_row.locator(".covered")).to_have_text("40")
    expect(page.locator("#payouts tr[data-banker] .net")).to_have_text("\u2212140")
    expect(page.locator("#action-spot")).to_contain_text("ACTION spot 1")
    expect(page.locator('#table g.spot[data-spot="1"]')).to_have_class(re.compile(r"\baction\b"))
    expect(page.locator('#table g.spot[data-spot="1"] .seat-name')).to_have_text("ACTION SPOT 1")
    expect(page.locator('#table g.spot[data-spot="2"]')).not_to_have_class(re.compile(r"\baction\b"))
    expect(page.locator("#table g.banker .hand-total")).to_have_text("24")
    expect(page.locator("#table g.banker .banker-net")).to_have_text("\u2212140")
    expect(page.locator(f"{hand(1, 1)} .hand-total")).to_have_text("20")
    expect(page.locator(f"{hand(1, 2)} .hand-total")).to_have_text("21")
    expect(page.locator(f"{hand(2, 1)} .hand-total")).to_have_text("20")
    expect(page.locator('#table text.wager-line[data-spot="1"][data-player="ann"] .net')).to_have_text("+100")
    expect(page.locator("#event-log li", has_text="ann at spot 1: pay 100")).to_have_count(1)
    expect(page.locator("#event-log li", has_text="Banker: \u2212140")).to_have_count(1)
    screens.keep_for_docs(dealer, "jokers22")

    # Paid: the dealer confirms and the panel is back for the next round.
    page.click("#confirm")
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(page.locator("#j22-open")).to_be_visible()
    # "Same as last" fills the panel with the round just played, ready to open again.
    page.click("#j22-repeat")
    expect(page.locator("#j22-stake")).to_have_value("500")
    expect(page.locator(slot(1, "player"))).to_have_value("ann")
    expect(page.locator(slot(1, "amount"))).to_have_value("50")
    expect(page.locator(slot(2, "player"))).to_have_value("bob")
    expect(page.locator(slot(2, "amount"))).to_have_value("20")


def replay_hand(spot: int, number: int) -> str:
    return f'#replay-table g.hand[data-spot="{spot}"][data-hand="{number}"]'


def test_supervisor_recall_replays_a_jokers22_round_card_by_card_and_decision_by_decision(
    daemon: Daemon, screens: Screens
) -> None:
    # The same round as above, dealt through the API by the simulated dealer.
    body = {
        "banker": {"stake": 500},
        "spots": [
            {"spot": 1, "wagers": [{"player": "ann", "amount": 50}]},
            {"spot": 2, "wagers": [{"player": "bob", "amount": 20}]},
        ],
    }
    status, opened = daemon.post("/api/rounds", body)
    assert status == 201, opened
    assert daemon.post("/api/sim/shoe", {"cards": CARDS})[0] == 200
    steps: list[int | dict[str, object]] = [5, {"spot": 1, "action": "split"}, 4, {"spot": 2, "action": "double"}, 3]
    for step in steps:
        if isinstance(step, int):
            for _ in range(step):
                assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
        else:
            # The drawn cards reach the journal through the shoe's pty: decide once they have.
            daemon.wait_for("the table to ask a decision", lambda s: s["awaiting"]["kind"] == "decision")
            status, said = daemon.post("/api/decisions", step)
            assert status == 200, said
    daemon.wait_for("round 1 to settle", lambda s: s["round_status"] == "settled")

    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    s.locator('#recall [data-round="1"]').click()
    expect(s.locator("#replay")).to_be_visible()
    # 12 cards and 2 decisions after the opening.
    expect(s.locator("#replay-step")).to_contain_text("Round 1, step 0 of 14: Wagers placed")
    expect(s.locator(replay_hand(1, 1))).to_have_class(NEXT)
    expect(s.locator("#replay-prompt")).to_have_text("Deal to spot 1, hand 1")

    for _ in range(5):
        s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("step 5 of 14: 6\u2666 to spot 2: 11")
    expect(s.locator("#replay-prompt")).to_have_text("Spot 1, ann on 16: hit or stand or double or split or surrender?")
    expect(s.locator(replay_hand(1, 1))).to_have_class(re.compile(r"\bdeciding\b"))

    s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("step 6 of 14: Spot 1: ann splits (50 more)")
    expect(s.locator('#replay-table g.hand[data-spot="1"]')).to_have_count(2)
    expect(s.locator(replay_hand(1, 1))).to_have_class(NEXT)

    while not s.locator("#replay-next").is_disabled():
        s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("step 14 of 14: 8\u2660 to the banker: 24")
    expect(s.locator(replay_hand(2, 1) + " .hand-total")).to_have_text("20")
    expect(s.locator('#replay-table g.chip[data-spot="2"][data-player="bob"]')).to_have_class(
        re.compile(r"\bdoubled\b")
    )
    expect(s.locator('#replay-table g.spot[data-spot="1"] .seat-name')).to_have_text("ACTION SPOT 1")
    expect(s.locator("#replay-table g.banker .banker-net")).to_have_text("\u2212140")

    # The settlement hand by hand: ann's second hand 8D 3H KD is 21, covered in full.
    second = s.locator('#settlement tr[data-spot="1"][data-hand="2"]')
    expect(second.locator("td").nth(2)).to_have_text("8\u2666 3\u2665 K\u2666")
    expect(second.locator("td").nth(3)).to_have_text("21")
    expect(second.locator("td").nth(4)).to_have_text("ann 50 win, 50 covered, +50")
    banker = s.locator("#settlement tr[data-banker]")
    expect(banker.locator("td").nth(4)).to_contain_text("ACTION spot 1")
    expect(banker.locator("td").nth(5)).to_have_text("\u2212140")
