"""The screens of an eight-seat Baseball poker table (`table.seats = 8`) in Chromium: the dealer's
drawing and opening panel have exactly eight seats, a hand for eight players opens from the panel,
and after its showdown (dealt through the simulated shoe) the dealer sees the community card in
the middle and seat 8 framed as the winner; the supervisor's live drawing has eight seats too.
At 1280x800 no seat's drawing reaches into another's, every card shows its rank (a strip of 20 px
or more) and EXTRA is 10 px tall or more: at that showdown on the dealer screen, the supervisor's
live drawing and the recall's last step, and in the worst case the drawing can be asked to show
(8 cards a seat, extra cards, 10s, wild cards, long words) drawn by the screen's own module."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from controller.testing import DEALER, SUPERVISOR, Daemon
from tests.eight_seats import COMMUNITY, NETS, eight_seat_hand

from .conftest import Screens
from .test_screens_as_used import DOCS, assert_seats_readable

CONFIG = """
[table]
id = "BROWSER-BB8"
game = "baseball-poker"
seats = 8
[rules]
wild = []
[indicators]
pin_map = "eight-seat-595"
"""
EIGHT = list(range(1, 9))


def worst_case(count: int) -> dict[str, Any]:
    """A settled `count`-player hand as the engine state and settlement would say it, each seat at its
    widest: 8 cards (an extra one for a 4 up), 10s and wild 3s and 9s, four-digit stacks."""
    ranks = "T9384K5Q"
    seats, players = [], []
    for n in range(1, count + 1):
        suit = "CDHS"[n % 4]
        cards = [
            {"card": f"T{suit}", "face": "down", "street": 3},
            {"card": f"3{suit}", "face": "down", "street": 3},
            {"card": f"4{suit}", "face": "up", "street": 3},
            {"card": f"{ranks[n - 1]}{suit}", "face": "down", "street": 3, "extra": True},
            {"card": f"9{suit}", "face": "up", "street": 4},
            {"card": f"Q{suit}", "face": "up", "street": 5},
            {"card": f"K{suit}", "face": "up", "street": 6},
            {"card": f"J{suit}", "face": "down", "street": 7},
        ]
        seats.append({"seat": n, "stack": 1000 + n, "put": 100, "dead": 10, "folded": False, "cards": cards, "street_put": 0})
        best = [f"T{suit}", f"J{suit}", f"Q{suit}", f"K{suit}", f"A{suit}"]
        players.append({"seat": n, "hand": {"best": best, "category": "straight flush"}, "won": 0, "net": -110})
    players[-1].update(won=110 * count, net=110 * count - 110)
    pot = {"amount": 110 * count, "eligible": list(range(1, count + 1)), "winners": [count]}
    engine = {"phase": "settled", "street": 7, "rules": {"wild": ["3", "9"]}, "seats": seats, "community": []}
    return {"engine": engine, "settlement": {"game": "baseball-poker", "showdown": True, "players": players, "pots": [pot]}}


# The worst case drawn by the dealer screen's own module in place of its drawing (same size), as
# at a table of `count` seats (the seat count put back as the table says after).
PROBE = """async ([hand, count]) => {
  const { BaseballDrawing } = await import("/games/baseball-poker/static/drawing.js");
  const { SEATS, takeTableSeats } = await import("/static/js/felt.js");
  const table = document.querySelector("#table");
  document.querySelector("#probe")?.remove();
  const probe = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  probe.id = "probe";
  probe.setAttribute("class", table.getAttribute("class") ?? "");
  table.after(probe);
  table.style.display = "none";
  const seats = SEATS.length;
  takeTableSeats({ game_info: { seats: count } });
  try {
    new BaseballDrawing(probe).render(hand.engine, { settlement: hand.settlement });
  } finally {
    takeTableSeats({ game_info: { seats } });
  }
}"""


def assert_probe_readable(page: Page, count: int) -> None:
    page.evaluate(PROBE, [worst_case(count), count])
    expect(page.locator("#probe g.bb-seat")).to_have_count(count)
    expect(page.locator("#probe g.bb-seat.shown")).to_have_count(count)
    expect(page.locator("#probe .seat-cards > g.bb-card")).to_have_count(8 * count)
    expect(page.locator("#probe .extra-tag")).to_have_count(count)
    assert_seats_readable(page, "#probe", list(range(1, count + 1)))


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The conftest's simulated table, seating eight at Baseball poker (overrides its `daemon`)."""
    yield from Daemon(tmp_path, CONFIG).serve()


def test_an_eight_seat_table_shows_eight_seats_and_deals_eight_players_to_the_showdown(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    screens.login(dealer, DEALER)
    expect(page.locator("#game-name")).to_have_text("Baseball poker")
    seats = page.locator("#table g.bb-seat")
    expect(seats).to_have_count(8)
    assert [seats.nth(i).get_attribute("data-seat") for i in range(8)] == [str(n) for n in range(1, 9)]
    expect(page.locator("#table")).to_have_attribute("aria-label", re.compile(r"seats 1 to 8"))
    stacks = page.locator("#bb-rows input[data-field=stack]")
    expect(stacks).to_have_count(8)
    expect(page.locator("#bb-seats th[data-seat]").first).to_have_text("Seat 8")  # on the left, as on the felt

    doc = eight_seat_hand()
    for player in doc["players"]:
        page.fill(f'#bb-open input[data-seat="{player["seat"]}"][data-field="stack"]', str(player["stack"]))
    page.click("#bb-open-round")
    expect(page.locator("#bb-open")).to_be_hidden()
    expect(page.locator("#bb-error")).to_have_text("")
    expect(page.locator('#table g.bb-seat[data-seat="8"]')).to_have_attribute("data-stack", "99")  # the ante
    assert [p["seat"] for p in daemon.get("/api/state")["state"]["players"]] == list(range(1, 9))

    # The hand is dealt through the shoe's pty and played through the API (the dealer's screen
    # follows the live feed): the simplest play, to the showdown.
    assert daemon.post("/api/sim/shoe", {"cards": doc["cards"]})[0] == 200
    actions = iter(doc["actions"])
    for _ in range(200):
        state = daemon.get("/api/state")
        kind = state["awaiting"]["kind"]
        if kind == "card":
            seq = state["journal_seq"]
            assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
            daemon.wait_for("the card", lambda s, seq=seq: s["journal_seq"] > seq)
        elif kind == "decision":
            status, answer = daemon.post("/api/decisions", next(actions))
            assert status == 200, answer
        else:
            break
    settled = daemon.get("/api/rounds/1")["settlement"]
    assert {p["seat"]: p["net"] for p in settled["players"]} == NETS

    expect(page.locator("#table g.community")).to_have_attribute("data-cards", COMMUNITY)
    expect(page.locator('#table g.bb-seat[data-seat="8"]')).to_have_class(re.compile(r"\bwinner\b"))
    expect(page.locator("#table g.bb-seat.winner")).to_have_count(1)
    expect(seats).to_have_count(8)
    expect(page.locator("#table g.bb-seat.shown")).to_have_count(8)
    assert_seats_readable(page, "#table", EIGHT, extra=False)  # 6 cards each and the community one
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "baseball-8-seats.png"), animations="disabled")

    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    sup = supervisor.page
    expect(sup.locator("#live-table g.bb-seat")).to_have_count(8)
    expect(sup.locator("#live-table g.bb-seat.shown")).to_have_count(8)
    assert_seats_readable(sup, "#live-table", EIGHT, extra=False)
    # The recall of the hand, at its last step.
    sup.locator("#recall [data-round]").first.click()
    expect(sup.locator("#replay")).to_be_visible()
    for _ in range(150):
        if sup.locator("#replay-next").is_disabled():
            break
        sup.click("#replay-next")
    expect(sup.locator("#replay-table g.bb-seat.shown")).to_have_count(8)
    assert_seats_readable(sup, "#replay-table", EIGHT, extra=False)

    # The most a seat can be asked to show, on the dealer screen: at 8 seats, and at fewer.
    for count in (3, 6, 7, 8):
        assert_probe_readable(page, count)
