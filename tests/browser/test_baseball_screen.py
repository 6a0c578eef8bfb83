"""The dealer screen at a Baseball poker table in Chromium: a whole hand opened from the screen's
panel and dealt card by card from a stacked simulated shoe, with a rainout part way, actions taken
on the screen's buttons (bring-in, completion, calls, raises, a fold, an all-in), a side pot, wild
cards marked and a showdown whose pots are pushed as the round file settles them; then the same
hand replayed step by step in the supervisor's recall."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from controller.games.replay import settle_round_file
from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import Screens

CONFIG = """
[table]
id = "BROWSER-BB"
game = "baseball-poker"
[rules]
ante = 1
small_bet = 2
big_bet = 4
"""

# Seats 1 and 2 bring 100 chips, seat 4 only 12, so seat 4 goes all in on 5th street.
PLAYERS = {1: 100, 2: 100, 4: 12}

# Dealing order (GAMES.md section 3): each pass gives one card to each player still in, seat 1
# first; 3rd street is down, down, up; 4th to 6th one up; 7th one down. No face-up 4 (no extra
# card). First deal: seat 2's 5S is the lowest up card, so seat 2 brings it in; everyone calls.
# On 4th street seat 1 gets 8D and seat 2 the queen of spades face up: a rainout.
FIRST_DEAL = ["TS", "JC", "8C", "5D", "6S", "AD", "JS", "5S", "TH", "8D", "QS"]
# The re-deal from a fresh deck to seats 1, 2 and 4 (each antes again; the pot stays). Seat 4's
# wild 3H is the lowest up card (a wild card opens by its own rank): seat 4 brings it in.
# 4th street: 3H 7H show a pair of sevens (the wild card joins the highest rank), seat 4 opens
# again; 5th street: 3H 7H 6H show a pair of sevens, seat 4 opens for its last 4 chips (all in).
# 6th street: seat 1 shows a pair of aces (AC AH) and opens; seat 2 folds. 7th street down.
REDEAL = ["KD", "8H", "9C", "KC", "7S", "5H", "6C", "TD", "3H"]  # 3rd street
REDEAL += ["7D", "2C", "7H"]  # 4th
REDEAL += ["AC", "QD", "6H"]  # 5th
REDEAL += ["AH", "5C", "2D"]  # 6th
REDEAL += ["KH", "KS"]  # 7th: seat 2 has folded

# Chips in, by hand: seat 4 puts ante 1 + call 1, re-ante 1, 3rd street 1 + 3, 4th 1, 5th 4 = 12
# (all of it); seats 1 and 2 put 1 + 1, 1, 4, 1, 8 = 16 each by 5th street, and seat 1 another 4
# on 6th. The main pot is 3 x 12 = 36 (seats 1, 2, 4), the side pot 2 x 4 = 8 (seats 1, 2), and
# seat 1's uncalled 4 after seat 2 folds lies in the side pot only seat 1 can win: 12.
# Showdown: seat 4 holds 9C 5H 3H 7H 6H 2D KS: two wild cards with 5H 6H 7H make 9H 8H 7H 6H 5H,
# a straight flush, which beats seat 1's KD KC 6C 7D AC AH KH (kings full of aces).
WINNING_FIVE = "9H 8H 7H 6H 5H"

ACTING = re.compile(r"\bacting\b")


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The conftest's simulated table, configured for Baseball poker (overrides its `daemon`)."""
    yield from Daemon(tmp_path, CONFIG).serve()


def seat(number: int) -> str:
    return f'#table g.bb-seat[data-seat="{number}"]'


def draw(page: Page, *cards: str) -> None:
    """Press Draw card once per card (the simulated dealer pulls it) and see each one read: an
    up card by its face, a face-down one as a back only (the dealer never sees it)."""
    for card in cards:
        before = page.locator("#event-log li").first.get_attribute("data-seq")
        page.click("#draw-card")
        expect(page.locator("#event-log li").first).not_to_have_attribute("data-seq", str(before))
        expect(page.locator(f'#last-card .card[data-card="{card}"], #last-card .card.back')).to_have_count(1)
        expect(page.locator("#action-error")).to_have_text("")


def buttons(page: Page) -> dict[str, str]:
    """The action buttons on screen: action -> the chips it puts in."""
    return {
        str(b.get_attribute("data-action")): str(b.get_attribute("data-amount"))
        for b in page.locator("#decisions button[data-action]").all()
    }


def take(page: Page, who: str, offered: dict[str, str], action: str) -> None:
    """See who must act and the actions offered with their chips, then press one."""
    expect(page.locator("#decision-who")).to_have_text(who)
    expect(page.locator("#decisions button[data-action]")).to_have_count(len(offered))
    assert buttons(page) == offered
    before = page.locator("#event-log li").first.get_attribute("data-seq")
    page.click(f'#decisions button[data-action="{action}"]')
    expect(page.locator("#event-log li").first).not_to_have_attribute("data-seq", str(before))
    expect(page.locator("#decision-error")).to_have_text("")


def pot(page: Page, amount: int) -> None:
    expect(page.locator("#table text.pot-total")).to_have_attribute("data-amount", str(amount))
    expect(page.locator("#table text.pot-total")).to_have_text(f"POT {amount}")


def test_dealer_deals_a_baseball_poker_hand_with_a_rainout_a_side_pot_and_a_showdown_from_the_screen(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    # The stale action below is refused by the table (a 422), which Chromium logs as an error.
    dealer.expected.append(r"status of 422 .*/api/decisions")
    screens.login(dealer, DEALER)
    expect(page.locator("#game-name")).to_have_text("Baseball poker")
    expect(page.locator("#wager-panel")).to_be_hidden()
    expect(page.locator("#j22-open")).to_be_hidden()
    expect(page.locator("#table g.bb-seat")).to_have_count(7)

    # The opening panel: a stack under each player's seat. One player is not a hand.
    panel = page.locator("#bb-open")
    expect(panel).to_be_visible()

    def stack(n: int) -> str:
        return f'#bb-open input[data-seat="{n}"][data-field="stack"]'

    page.fill(stack(1), "100")
    page.click("#bb-open-round")
    expect(page.locator("#bb-error")).to_contain_text("two players or more")
    assert daemon.get("/api/state")["round"] is None
    page.fill(stack(2), "100")
    page.fill(stack(4), "12")
    page.click("#bb-open-round")
    expect(panel).to_be_hidden()
    expect(page.locator("#bb-error")).to_have_text("")
    expect(page.locator("#round-info")).to_contain_text("Round 1")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 1, face down, street 3")
    expect(page.locator(seat(1))).to_have_class(re.compile(r"\btarget\b"))
    expect(page.locator(seat(3))).to_have_class(re.compile(r"\bidle\b"))
    expect(page.locator(seat(4))).to_have_attribute("data-stack", "11")
    pot(page, 3)  # three antes

    status, stacked = daemon.post("/api/sim/shoe", {"cards": FIRST_DEAL + REDEAL})
    assert status == 200, stacked

    draw(page, *FIRST_DEAL[:9])
    # Face-down cards are backs to the dealer: no card named on them; the up card shows.
    seat1_cards = page.locator(f"{seat(1)} g.bb-card")
    expect(seat1_cards).to_have_count(3)
    expect(page.locator(f'{seat(1)} g.bb-card[data-face="down"].hidden')).to_have_count(2)
    expect(page.locator(f"{seat(1)} g.bb-card[data-face=down][data-card]")).to_have_count(0)
    expect(page.locator(f'{seat(1)} g.bb-card[data-face="up"][data-card="JS"]')).to_be_visible()

    # A stale screen posts for the wrong seat: the table's refusal, naming the seat to act and
    # what it may do, is shown under the buttons, which stay usable.
    page.route(
        "**/api/decisions",
        lambda route: route.continue_(post_data='{"seat": 1, "action": "call"}'),
    )
    expect(page.locator("#decision-who")).to_have_text("Seat 2 to act \u00b7 opens: bring it in or complete")
    page.click('#decisions button[data-action="bring-in"]')
    expect(page.locator("#decision-error")).to_contain_text("seat 2 acts now")
    expect(page.locator("#decision-error")).to_contain_text("allowed: bring-in, complete")
    page.unroute("**/api/decisions")

    # First deal, 3rd street: seat 2 brings it in for 1 (half the small bet), the others call.
    expect(page.locator("#decision-facts")).to_have_text("3rd street \u00b7 pot 3 \u00b7 stack 99")
    expect(page.locator(seat(2))).to_have_class(ACTING)
    expect(page.locator(f"{seat(2)} text.seat-status")).to_have_text("TO ACT \u00b7 OPENS")
    take(page, "Seat 2 to act \u00b7 opens: bring it in or complete", {"bring-in": "1", "complete": "2"}, "bring-in")
    expect(page.locator(f"{seat(4)} text.seat-status")).to_have_text("TO ACT \u00b7 CALL 1")
    take(page, "Seat 4 to act \u00b7 1 to call", {"call": "1", "complete": "2", "fold": "0"}, "call")
    take(page, "Seat 1 to act \u00b7 1 to call", {"call": "1", "complete": "2", "fold": "0"}, "call")
    expect(page.locator("#decisions")).to_be_hidden()
    pot(page, 6)

    # 4th street: the queen of spades face up at seat 2 rains the deal out.
    draw(page, "8D", "QS")
    expect(page.locator("#prompt")).to_contain_text("Rainout: Q\u2660 face up at seat 2")
    rainout = page.locator("#table g.rainout")
    expect(rainout).to_have_class(re.compile(r"\bshown\b"))
    expect(rainout).to_contain_text("RAINOUT")
    expect(rainout).to_contain_text("Q\u2660 face up at seat 2: re-dealt to seats 1, 2, 4")
    expect(page.locator("#event-log li", has_text="RAINOUT: Q\u2660 face up at seat 2")).to_have_count(1)
    expect(page.locator("#table g.bb-card")).to_have_count(0)  # the cards come back in
    pot(page, 9)  # the pot stays and everyone antes again

    # The re-deal: seat 4's 3H up is wild and marked; its 9C is down, so nobody sees it yet.
    draw(page, *REDEAL[:9])
    expect(rainout).to_have_class(re.compile(r"\bshown\b"))  # the banner stays for the hand
    expect(page.locator(f'{seat(4)} g.bb-card.wild[data-card="3H"]')).to_be_visible()
    expect(page.locator("#table g.bb-card.wild")).to_have_count(1)
    take(page, "Seat 4 to act \u00b7 opens: bring it in or complete", {"bring-in": "1", "complete": "2"}, "bring-in")
    take(page, "Seat 1 to act \u00b7 1 to call", {"call": "1", "complete": "2", "fold": "0"}, "complete")
    take(page, "Seat 2 to act \u00b7 2 to call", {"call": "2", "raise": "4", "fold": "0"}, "raise")
    expect(page.locator("#event-log li").first).to_have_text(re.compile(r"Seat 2 raises \(4 in, pot 16\)$"))
    take(page, "Seat 4 to act \u00b7 3 to call", {"call": "3", "raise": "5", "fold": "0"}, "call")
    take(page, "Seat 1 to act \u00b7 2 to call", {"call": "2", "raise": "4", "fold": "0"}, "call")
    pot(page, 21)

    draw(page, *REDEAL[9:12])  # 4th street
    take(page, "Seat 4 to act \u00b7 opens: bring it in or complete", {"bring-in": "1", "complete": "2"}, "bring-in")
    take(page, "Seat 1 to act \u00b7 1 to call", {"call": "1", "complete": "2", "fold": "0"}, "call")
    take(page, "Seat 2 to act \u00b7 1 to call", {"call": "1", "complete": "2", "fold": "0"}, "call")
    pot(page, 24)

    # 5th street (the big bet): seat 4 completes with its last 4 chips, all in; seat 1 raises.
    draw(page, *REDEAL[12:15])
    take(page, "Seat 4 to act \u00b7 opens: bring it in or complete", {"bring-in": "2", "complete": "4"}, "complete")
    expect(page.locator(f"{seat(4)} text.seat-status")).to_have_text("ALL IN")
    take(page, "Seat 1 to act \u00b7 4 to call", {"call": "4", "raise": "8", "fold": "0"}, "raise")
    take(page, "Seat 2 to act \u00b7 8 to call", {"call": "8", "raise": "12", "fold": "0"}, "call")
    pot(page, 44)
    main_pot = page.locator('#table text.pot-line[data-pot="0"]')
    side_pot = page.locator('#table text.pot-line[data-pot="1"]')
    expect(main_pot).to_have_attribute("data-amount", "36")
    expect(main_pot).to_have_attribute("data-eligible", "1 2 4")
    expect(main_pot).to_have_text("Main pot 36 \u00b7 seats 1, 2, 4")
    expect(side_pot).to_have_attribute("data-amount", "8")
    expect(side_pot).to_have_text("Side pot 8 \u00b7 seats 1, 2")

    # 6th street: seat 1's pair of aces opens for the full bet; seat 2 folds.
    draw(page, *REDEAL[15:18])
    take(page, "Seat 1 to act \u00b7 opens: bring it in or complete", {"bring-in": "2", "complete": "4"}, "complete")
    take(page, "Seat 2 to act \u00b7 4 to call", {"call": "4", "raise": "8", "fold": "0"}, "fold")
    expect(page.locator(seat(2))).to_have_class(re.compile(r"\bfolded\b"))
    expect(page.locator(f"{seat(2)} text.seat-status")).to_have_text("FOLDED")

    # 7th street, then the showdown: seat 4's straight flush takes the main pot, seat 1 the side.
    draw(page, *REDEAL[18:])
    expect(page.locator("#prompt")).to_have_text("Pay seat 1: 12, seat 4: 36")
    expect(page.locator("#decisions")).to_be_hidden()
    expect(page.locator(seat(4))).to_have_class(re.compile(r"\bwinner\b"))
    expect(page.locator(seat(1))).to_have_class(re.compile(r"\bwinner\b"))  # the side pot
    best4 = page.locator(f"{seat(4)} g.best")
    expect(best4).to_have_attribute("data-cards", WINNING_FIVE)
    expect(page.locator(f"{seat(4)} text.hand-category")).to_have_text("straight flush")
    # The two wild cards play as 9H and 8H (seat 4 holds neither): both marked in the best five.
    wild_in_best = best4.locator("g.bb-card.wild")
    expect(wild_in_best).to_have_count(2)
    assert [w.get_attribute("data-card") for w in wild_in_best.all()] == ["9H", "8H"]
    # At the showdown the down cards turn over: seat 4's 9C is wild.
    expect(page.locator(f'{seat(4)} .seat-cards g.bb-card.revealed.wild[data-card="9C"]')).to_be_visible()
    expect(page.locator(f"{seat(1)} g.best")).to_have_attribute("data-cards", "KH KD KC AH AC")
    expect(page.locator(f"{seat(1)} text.hand-category")).to_have_text("full house")
    expect(page.locator(f"{seat(2)} g.best")).to_have_count(0)  # a folded hand is not shown
    expect(main_pot).to_have_attribute("data-winners", "4")
    expect(main_pot).to_have_text("Main pot 36 \u2192 seat 4")
    expect(side_pot).to_have_attribute("data-winners", "1")
    expect(side_pot).to_have_text("Side pot 12 \u2192 seat 1")
    expect(page.locator(f"{seat(4)} text.seat-net")).to_have_text("wins 36 \u00b7 +24")

    # The pots to push, then each seat.
    pushed = page.locator("#payouts tr.pot-row")
    expect(pushed).to_have_count(2)
    expect(pushed.nth(0).locator(".amount")).to_have_text("36")
    expect(pushed.nth(0).locator(".winners")).to_have_text("\u2192 seat 4")
    expect(pushed.nth(1).locator(".amount")).to_have_text("12")
    expect(pushed.nth(1).locator(".winners")).to_have_text("\u2192 seat 1")
    expected_nets = {1: ("12", "20", "\u22128"), 2: ("\u2013", "16", "\u221216"), 4: ("36", "12", "+24")}
    for number, (pay, collect, net) in expected_nets.items():
        row = page.locator(f'#payouts tr[data-seat="{number}"]')
        expect(row.locator(".pay")).to_have_text(pay)
        expect(row.locator(".collect")).to_have_text(collect)
        expect(row.locator(".net")).to_have_text(net)
    screens.keep_for_docs(dealer, "baseball")

    # What the screen shows is the settlement the round file replays to, with the same engine.
    settlement = daemon.get("/api/rounds/1")["settlement"]
    assert settlement == settle_round_file(daemon.get("/api/rounds/1/file"))
    assert [(p["amount"], p["winners"]) for p in settlement["pots"]] == [(36, [4]), (12, [1])]
    assert {p["seat"]: p["net"] for p in settlement["players"]} == {1: -8, 2: -16, 4: 24}
    assert settlement["rainouts"] == 1

    # Pushed: the dealer confirms; "Same as last" seats the same players with what they now have.
    page.click("#confirm")
    expect(panel).to_be_visible()
    page.click("#bb-repeat")
    for number, chips in {1: "92", 2: "84", 4: "36"}.items():
        expect(page.locator(stack(number))).to_have_value(chips)
    expect(page.locator(stack(3))).to_have_value("")


def play_the_hand(daemon: Daemon) -> None:
    """The hand above, dealt and played through the API by the simulated dealer."""
    players = [{"seat": s, "stack": chips} for s, chips in PLAYERS.items()]
    status, opened = daemon.post("/api/rounds", {"players": players})
    assert status == 201, opened
    assert daemon.post("/api/sim/shoe", {"cards": FIRST_DEAL + REDEAL})[0] == 200
    steps: list[Any] = [
        9, [(2, "bring-in"), (4, "call"), (1, "call")], 2,
        9, [(4, "bring-in"), (1, "complete"), (2, "raise"), (4, "call"), (1, "call")],
        3, [(4, "bring-in"), (1, "call"), (2, "call")],
        3, [(4, "complete"), (1, "raise"), (2, "call")],
        3, [(1, "complete"), (2, "fold")],
        2,
    ]  # fmt: skip
    for step in steps:
        if isinstance(step, int):
            for _ in range(step):
                seq = daemon.get("/api/state")["journal_seq"]
                assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
                daemon.wait_for("the card to be read", lambda s, seq=seq: s["journal_seq"] > seq)
        else:
            for number, action in step:
                status, said = daemon.post("/api/decisions", {"seat": number, "action": action})
                assert status == 200, said
    daemon.wait_for("hand 1 to settle", lambda s: s["round_status"] == "settled")


def test_supervisor_recall_replays_a_baseball_poker_hand_through_its_rainout_to_the_showdown(
    daemon: Daemon, screens: Screens
) -> None:
    play_the_hand(daemon)
    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    s.locator('#recall [data-round="1"]').click()
    expect(s.locator("#replay")).to_be_visible()
    # 31 cards and 16 actions after the opening.
    expect(s.locator("#replay-step")).to_have_text("Round 1, step 0 of 47: Antes in, hand opened")
    expect(s.locator('#replay-table g.bb-seat[data-seat="1"]')).to_have_class(re.compile(r"\btarget\b"))
    expect(s.locator("#replay-table text.pot-total")).to_have_text("POT 3")

    # Step 10 is seat 2's bring-in after the nine cards of 3rd street.
    for _ in range(10):
        s.click("#replay-next")
    expect(s.locator("#replay-step")).to_have_text("Round 1, step 10 of 47: Seat 2 brings it in (1 in, pot 4)")
    expect(s.locator('#replay-table g.bb-seat[data-seat="4"]')).to_have_class(ACTING)
    expect(s.locator('#replay-table g.bb-seat[data-seat="4"] text.seat-status')).to_have_text("TO ACT \u00b7 CALL 1")

    # Steps 13 and 14: 8D and the queen of spades to 4th street: the rainout.
    for _ in range(4):
        s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("step 14 of 47: Q\u2660 to seat 2 face up, 4th street")
    expect(s.locator("#replay-step")).to_contain_text("RAINOUT")
    expect(s.locator("#replay-table g.rainout")).to_have_class(re.compile(r"\bshown\b"))
    expect(s.locator("#replay-table g.rainout")).to_contain_text("Q\u2660 face up at seat 2")
    expect(s.locator("#replay-table text.pot-total")).to_have_text("POT 9")

    while not s.locator("#replay-next").is_disabled():
        s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("step 47 of 47: K\u2660 to seat 4 face down, 7th street")
    expect(s.locator('#replay-table g.bb-seat[data-seat="4"] g.best')).to_have_attribute("data-cards", WINNING_FIVE)
    expect(s.locator('#replay-table g.bb-seat[data-seat="4"]')).to_have_class(re.compile(r"\bwinner\b"))
    expect(s.locator('#replay-table text.pot-line[data-pot="0"]')).to_have_text("Main pot 36 \u2192 seat 4")

    # The settlement seat by seat, then pot by pot.
    row4 = s.locator('#settlement tr[data-seat="4"]')
    expect(row4.locator("td.hand")).to_have_text("straight flush")
    expect(row4.locator("td.best")).to_have_text("9\u2665 8\u2665 7\u2665 6\u2665 5\u2665")
    expect(row4.locator("td").last).to_have_text("+24")
    expect(s.locator('#settlement tr[data-seat="2"] td.hand')).to_have_text("folded")
    expect(s.locator('#settlement tr.pot-row[data-pot="0"]')).to_have_text("Main pot 36 (seats 1, 4): seat 4 takes 36")
    expect(s.locator('#settlement tr.pot-row[data-pot="1"]')).to_have_text("Side pot 12 (seat 1): seat 1 takes 12")
