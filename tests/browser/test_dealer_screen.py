"""The dealer screen in Chromium: a whole Grand Slam round dealt from the screen of a simulated
table, seen as the dealer sees it (cards, stacks moving on the drawing, the one instruction,
payouts) and as the table shows it (base lamps)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from controller.testing import DEALER, Daemon

from .conftest import Screens

# Grand Slam (GAMES.md 1): 5-9 at first base moves the stack to second; T-A is out; 2 at second
# base and 9 at third base go home; dealing is base-major, seats in increasing order. So with
# seat 1 betting 10/10/5 and seat 4 betting 20 on first, the cards go seat 1 first (5H), seat 4
# first (KD), seat 1 second (2C), seat 1 third (9S): seat 1 scores 10+10+5 = 25, seat 4 loses 20.
CARDS = ["5H", "KD", "2C", "9S"]
NEXT = re.compile(r"\bnext\b")  # the class of the base owed the next card


def base(seat: int, name: str) -> str:
    return f'#table g[data-seat="{seat}"][data-base="{name}"]'


def draw_and_see(page: Page, card: str) -> None:
    """Press Draw card (the simulated dealer pulls a card from the shoe) and see it read."""
    page.click("#draw-card")
    expect(page.locator(f'#last-card .card[data-card="{card}"]')).to_be_visible()
    expect(page.locator("#action-error")).to_have_text("")


def test_dealer_plays_a_whole_round_from_the_screen(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    screens.login(dealer, DEALER)
    expect(page.locator("#simulated-banner")).to_be_visible()
    expect(page.locator("#simulated-banner")).to_contain_text("SIMULATED TABLE")
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")

    # Wagers typed into the panel, seat by seat, as the chips stand on the felt.
    panel = page.locator("#wager-panel")
    expect(panel).to_be_visible()
    for seat, bet, amount in [(1, "first", 10), (1, "second", 10), (1, "third", 5), (4, "first", 20)]:
        panel.locator(f'input[data-seat="{seat}"][data-bet="{bet}"]').fill(str(amount))
    page.click("#open-round")
    expect(panel).to_be_hidden()
    expect(page.locator("#wager-error")).to_have_text("")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 1, first base")
    expect(page.locator("#round-info")).to_contain_text("Round 1")
    # Each wager stands on its own base; the base owed the next card is marked.
    expect(page.locator(base(1, "first"))).to_have_attribute("data-wagers", "first")
    expect(page.locator(base(1, "second"))).to_have_attribute("data-wagers", "second")
    expect(page.locator(base(1, "third"))).to_have_attribute("data-wagers", "third")
    expect(page.locator(base(4, "first"))).to_have_attribute("data-wagers", "first")
    expect(page.locator(base(1, "first"))).to_have_class(NEXT)
    expect(page.locator('#table g.chip[data-seat="4"][data-wager="first"]')).to_have_count(1)

    # The cards the shoe will give, in order, so the round's outcome is known before it is dealt.
    status, stacked = daemon.post("/api/sim/shoe", {"cards": CARDS})
    assert status == 200, stacked

    draw_and_see(page, "5H")
    expect(page.locator("#last-card-where")).to_contain_text("seat 1 first base")
    expect(page.locator(base(1, "first"))).to_have_attribute("data-wagers", "")
    expect(page.locator(base(1, "second"))).to_have_attribute("data-wagers", "second first")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 4, first base")
    expect(page.locator(base(4, "first"))).to_have_class(NEXT)

    draw_and_see(page, "KD")
    expect(page.locator(base(4, "first"))).to_have_attribute("data-wagers", "")
    expect(page.locator(base(4, "out"))).to_have_attribute("data-wagers", "first")
    expect(page.locator('#table g.chip[data-seat="4"][data-wager="first"]')).to_have_class(re.compile(r"\bout\b"))
    expect(page.locator("#prompt")).to_have_text("Deal to seat 1, second base")

    draw_and_see(page, "2C")
    expect(page.locator(base(1, "second"))).to_have_attribute("data-wagers", "")
    expect(page.locator(base(1, "home"))).to_have_attribute("data-wagers", "second first")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 1, third base")

    draw_and_see(page, "9S")
    expect(page.locator(base(1, "third"))).to_have_attribute("data-wagers", "")
    expect(page.locator(base(1, "home"))).to_have_attribute("data-wagers", "second first third")
    expect(page.locator("#prompt")).to_have_text("Pay seat 1: 25")

    # Payouts: seat 1 is paid its 25 (even money on 10+10+5); seat 4's 20 is taken.
    seat1 = page.locator('#payouts [data-seat="1"]')
    seat4 = page.locator('#payouts [data-seat="4"]')
    expect(seat1.locator(".pay")).to_have_text("25")
    expect(seat1.locator(".net")).to_have_text("+25")
    expect(seat4.locator(".pay")).to_have_text("\u2013")
    expect(seat4.locator(".collect")).to_have_text("20")
    expect(seat4.locator(".net")).to_have_text("\u221220")
    expect(seat4.locator(".net")).to_have_class(re.compile(r"\bloss\b"))
    expect(page.locator("#payouts-empty")).to_be_hidden()
    expect(page.locator("#event-log li").first).to_contain_text("9\u2660 to seat 1 third base: stack home, 5 scores")
    expect(page.locator("#event-log li", has_text="Seat 1: pay 25")).to_have_count(1)
    expect(page.locator("#event-log li", has_text="Seat 4 out: take 20")).to_have_count(1)

    # The lamps followed: seat 1's scored wagers light home plate; nothing stands on 2nd or 3rd.
    lamps = daemon.wait_for("seat 1's home lamp", lambda s: s["devices"]["lamps"]["wagers"] == ["1:home"])
    assert lamps["devices"]["lamps"]["next_card"] is None
    # small-gpio: seat 1 second/third/home are GPIO 27/22/23 (hardware/pins.toml).
    daemon.wait_for(
        "seat 1's home lamp lit and its second- and third-base lamps dark again",
        lambda a: (
            a["pins"]["GPIO23"][-1][1] == 1.0
            and [v for _, v in a["pins"]["GPIO27"]][-2:] == [1.0, 0.0]
            and [v for _, v in a["pins"]["GPIO22"]][-2:] == [1.0, 0.0]
        ),
        path="/api/sim/pins",
    )
    screens.keep_for_docs(dealer, "dealer")

    # Payouts done: the dealer confirms from the keyboard (Enter, not in a form field).
    page.click("#prompt")
    page.keyboard.press("Enter")
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(page.locator("#wager-panel")).to_be_visible()
    expect(page.locator("#event-log li").first).to_contain_text("Confirm pressed")
    daemon.wait_for("the home lamp to go dark once paid", lambda s: s["devices"]["lamps"]["wagers"] == [])
