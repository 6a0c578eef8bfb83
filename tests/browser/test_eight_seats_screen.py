"""The screens of an eight-seat Baseball poker table (`table.seats = 8`) in Chromium: the dealer's
drawing and opening panel have exactly eight seats, a hand for eight players opens from the panel,
and after its showdown (dealt through the simulated shoe) the dealer sees the community card in
the middle and seat 8 framed as the winner; the supervisor's live drawing has eight seats too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.rig import DEALER, SUPERVISOR, Daemon
from tests.eight_seats import COMMUNITY, NETS, eight_seat_hand

from .conftest import Screens

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


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The conftest's simulated table, seating eight at Baseball poker (overrides its `daemon`)."""
    d = Daemon(tmp_path, CONFIG)
    d.start()
    try:
        yield d
    finally:
        code = d.stop()
    assert code == 0, d.log()


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

    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    expect(supervisor.page.locator("#live-table g.bb-seat")).to_have_count(8)
