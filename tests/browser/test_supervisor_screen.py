"""The supervisor screen in Chromium, beside the dealer screen: a fault raised by the simulated
shoe takes over the dealer's screen and is cleared from the supervisor's, live; a recalled round
is replayed card by card and its round file settles to the settlement shown."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from playwright.sync_api import expect

from controller.games.replay import settle_round_file
from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import PATIENCE_MS, Screens

ROUND_BODY = {
    "seats": [
        {"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}},
        {"seat": 4, "wagers": {"first": 20}},
    ]
}


def play(daemon: Daemon, body: dict[str, Any], cards: list[str]) -> int:
    """A whole round dealt through the API (the simulated dealer), settled."""
    number = daemon.deal(body, cards)
    assert daemon.post("/api/confirm", {})[0] == 200  # payouts done
    return number


def test_a_misread_from_the_shoe_stops_the_dealer_screen_until_a_supervisor_clears_it(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    screens.login(dealer, DEALER)
    d = dealer.page
    status, _ = daemon.post("/api/rounds", ROUND_BODY)
    assert status == 201
    expect(d.locator("#prompt")).to_have_text("Deal to seat 1, first base")
    expect(d.locator("#fault-overlay")).to_be_hidden()
    # Marks this page; a reload would lose it, so its survival proves the screen changed live.
    d.evaluate("window.sameDocument = true")

    # The simulated shoe will fail to read the next card (the card really is the 5 of hearts).
    status, said = daemon.post("/api/sim/fault", {"fault": "misread"}, token=SUPERVISOR)
    assert status == 200, said
    assert daemon.post("/api/sim/shoe", {"cards": ["5H"]})[0] == 200
    d.click("#draw-card")

    overlay = d.locator("#fault-overlay")
    expect(overlay).to_be_visible()
    expect(overlay.locator("#fault-stop")).to_have_text("STOP \u2014 do not deal")
    fault = overlay.locator("[data-fault-id]")
    expect(fault).to_have_count(1)
    expect(fault.locator("h2")).to_have_text("Shoe misread")
    expect(fault.locator(".fault-message")).to_contain_text("card-reading shoe")
    expect(d.locator("#prompt")).to_contain_text("STOP:")
    fault_id = fault.get_attribute("data-fault-id")
    assert fault_id is not None
    # The dealer's acknowledgement; the screen stays stopped until a supervisor acts.
    fault.locator(".ack-action").click()
    expect(fault.locator(".fault-status")).to_have_text("Acknowledged by dealer. Waiting for a supervisor.")
    expect(overlay).to_be_visible()
    screens.keep_for_docs(dealer, "fault")
    state = daemon.get("/api/state")
    assert state["blocked"] is True and state["devices"]["lamps"]["fault"] is True
    assert state["last_card"] is None  # a misread never becomes a card

    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    item = s.locator(f'#faults article[data-fault-id="{fault_id}"]')
    expect(item).to_be_visible()
    expect(item.locator("h3")).to_have_text(f"Shoe misread (fault {fault_id})")
    expect(item).to_contain_text("acknowledged by dealer")
    # A misread may be replaced by the card the dealer sees, dismissed, or the round voided.
    actions = item.locator(".clear-action")
    expect(actions).to_have_count(3)
    assert [actions.nth(i).get_attribute("data-action") for i in range(3)] == ["replace", "dismiss", "void"]
    # No reason, no clearing: the screen asks for one.
    item.locator('.clear-action[data-action="replace"]').click()
    expect(s.locator("#action-error")).to_contain_text("Write the reason first")
    expect(overlay).to_be_visible()

    s.fill("#reason", "the dealer shows the 5 of hearts")
    s.fill("#replace-card", "5h")
    s.fill("#supervisor-name", "Lee")
    item.locator('.clear-action[data-action="replace"]').click()
    expect(s.locator("#action-done")).to_have_text(f"Fault {fault_id} cleared: Replace the card.")
    expect(s.locator("#faults")).to_have_text("No open faults: play can go on.")

    # The dealer's screen lets go by itself, through the live feed: same page, no reload.
    expect(overlay).to_be_hidden()
    assert d.evaluate("window.sameDocument") is True
    # The card entered by hand is dealt where the misread one was owed: seat 1's hand.
    expect(d.locator('#table g.seat[data-seat="1"] .mini-card[aria-label="five of hearts"]')).to_have_count(1)
    expect(d.locator("#prompt")).to_have_text("Deal to seat 4, first base")
    expect(d.locator('#table g[data-seat="1"][data-base="second"]')).to_have_attribute("data-wagers", "second first")
    expect(d.locator("#event-log li", has_text="cleared by supervisor:Lee: replace with 5\u2665")).to_have_count(1)

    # The audit trail says who, what and why.
    cleared = s.locator("#audit tbody tr", has_text=f"cleared fault {fault_id}")
    expect(cleared).to_have_count(1)
    expect(cleared.locator(".who")).to_have_text("supervisor:Lee")
    expect(cleared.locator(".what")).to_have_text(f"cleared fault {fault_id} by replace with 5\u2665")
    expect(cleared.locator(".why")).to_have_text("the dealer shows the 5 of hearts")
    expect(cleared.locator(".round")).to_have_text("1")
    acknowledged = s.locator("#audit tbody tr", has_text=f"acknowledged fault {fault_id}")
    expect(acknowledged.locator(".who")).to_have_text("dealer")
    screens.keep_for_docs(supervisor, "supervisor")


def replay_base(seat: int, name: str) -> str:
    return f'#replay-table g[data-seat="{seat}"][data-base="{name}"]'


def test_a_recalled_round_is_replayed_card_by_card_and_its_file_settles_the_same(
    daemon: Daemon, screens: Screens
) -> None:
    first = play(daemon, {"seats": [{"seat": 2, "wagers": {"first": 5}}]}, ["KH"])
    # GAMES.md 1: 5H moves seat 1's first-base stack to second, KD puts seat 4 out, 2C takes
    # seat 1's second-base stack home, 9S its third-base one: seat 1 nets +25, seat 4 -20.
    second = play(daemon, ROUND_BODY, ["5H", "KD", "2C", "9S"])
    assert (first, second) == (1, 2)

    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    expect(s.locator("#recall [data-round]")).to_have_count(2)
    pick = s.locator('#recall [data-round="2"]')
    pick.click()
    expect(pick).to_have_attribute("aria-pressed", "true")
    expect(s.locator('#recall [data-round="1"]')).to_have_attribute("aria-pressed", "false")
    expect(s.locator("#replay")).to_be_visible()

    # Where every wager stood after each card: (card shown, seat 1 by base, seat 4 by base, prompt).
    steps = [
        (
            "card 0 of 4",
            {"first": "first", "second": "second", "third": "third", "home": ""},
            {"first": "first", "out": ""},
            "Deal to seat 1, first base",
        ),
        (
            "card 1 of 4",
            {"first": "", "second": "second first", "third": "third", "home": ""},
            {"first": "first", "out": ""},
            "Deal to seat 4, first base",
        ),
        (
            "card 2 of 4",
            {"first": "", "second": "second first", "third": "third", "home": ""},
            {"first": "", "out": "first"},
            "Deal to seat 1, second base",
        ),
        (
            "card 3 of 4",
            {"first": "", "second": "", "third": "third", "home": "second first"},
            {"first": "", "out": "first"},
            "Deal to seat 1, third base",
        ),
        (
            "card 4 of 4",
            {"first": "", "second": "", "third": "", "home": "second first third"},
            {"first": "", "out": "first"},
            "Settled",
        ),
    ]
    for index, (caption, seat1_bases, seat4_bases, prompt) in enumerate(steps):
        if index:
            s.click("#replay-next")
        expect(s.locator("#replay-step")).to_contain_text(f"Round 2, {caption}")
        for name, wagers in seat1_bases.items():
            expect(s.locator(replay_base(1, name))).to_have_attribute("data-wagers", wagers)
        for name, wagers in seat4_bases.items():
            expect(s.locator(replay_base(4, name))).to_have_attribute("data-wagers", wagers)
        expect(s.locator("#replay-prompt")).to_have_text(prompt)
    expect(s.locator("#replay-step")).to_contain_text("9\u2660 to seat 1 third base: stack home, 5 scores")
    expect(s.locator("#replay-next")).to_be_disabled()
    # One card back: 9S is taken off again and seat 1's third-base wager stands where it was.
    s.click("#replay-prev")
    expect(s.locator("#replay-step")).to_contain_text("Round 2, card 3 of 4")
    expect(s.locator(replay_base(1, "third"))).to_have_attribute("data-wagers", "third")
    expect(s.locator(replay_base(1, "home"))).to_have_attribute("data-wagers", "second first")
    s.click("#replay-next")
    expect(s.locator("#replay-step")).to_contain_text("Round 2, card 4 of 4")

    # The settlement, seat by seat, as the table paid it.
    seat1 = s.locator('#settlement [data-seat="1"]')
    seat4 = s.locator('#settlement [data-seat="4"]')
    expect(seat1.locator("td").nth(1)).to_have_text("5\u2665 2\u2663 9\u2660")
    expect(seat1.locator("td").nth(2)).to_have_text("10 home, paid 10")
    expect(seat1.locator("td").nth(4)).to_have_text("5 home, paid 5")
    expect(seat1.locator("td").last).to_have_text("+25")
    expect(seat4.locator("td").nth(2)).to_have_text("20 out")
    expect(seat4.locator("td").last).to_have_text("\u221220")
    screens.keep_for_docs(supervisor, "replay", scroll_to="#sec-recall")

    # The round file behind the download link settles, by the replay engine, to what is shown.
    link = s.locator("#download-round")
    expect(link).to_be_visible()
    expect(link).to_have_attribute("download", "round-2.json")
    href = link.get_attribute("href")
    assert href == "/api/rounds/2/file"
    # The round file needs the supervisor's role (the browser's link sends the session cookie).
    fetch = urllib.request.Request(f"{daemon.url}{href}", headers={"Authorization": f"Bearer {SUPERVISOR}"})
    with urllib.request.urlopen(fetch, timeout=PATIENCE_MS / 1000) as answer:
        assert answer.headers.get_content_type() == "application/json"
        round_file = json.loads(answer.read())
    assert round_file["cards"] == ["5H", "KD", "2C", "9S"]
    settlement = settle_round_file(round_file)
    assert settlement == daemon.get("/api/rounds/2")["settlement"]
    assert [(seat["seat"], seat["net"]) for seat in settlement["seats"]] == [(1, 25), (4, -20)]
