"""A game the screens have no module for (the fourth-game fixture, the distribution
tests/fixtures/high_card_game/ installed for the test) gets the generic screen: its own title and seats from the API, a plain notice
that this screen cannot draw it or open its rounds, the API's prompt, the cards read this round,
the payouts; never Grand Slam's bases, wager grid or words (issue 13)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from controller.testing import DEALER, SUPERVISOR, Daemon
from tests.installed import HIGH_CARD, install, on_path

from .conftest import DOCS_SHOTS, Screens

CONFIG = '[table]\nid = "BROWSER-HC"\ngame = "high-card"\n'
# Shots for docs/screens/ (checked in there from here, as the other screens' shots are).
DOCS = DOCS_SHOTS / "screens"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    site = install(HIGH_CARD, tmp_path / "site")
    yield from Daemon(tmp_path, CONFIG, env=on_path(site)).serve()


def test_a_game_without_a_screen_module_gets_an_honest_generic_screen(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    screens.login(dealer, DEALER)
    expect(page.locator("#game-name")).to_have_text("High card")
    expect(page.locator("body")).to_have_class(re.compile(r"\bgeneric\b"))
    table = page.locator("#table")
    expect(table.locator("text.generic-notice")).to_have_text(
        "This screen has no drawing for High card: follow the prompt; the cards read are below."
    )
    expect(table.locator("text.generic-seat")).to_have_count(7)
    # Nothing of Grand Slam: no bases, no wager grid, no other game's form.
    expect(table.locator("[data-base]")).to_have_count(0)
    for form in ("#wager-panel", "#j22-open", "#bb-open"):
        expect(page.locator(form)).to_be_hidden()
    expect(page.locator("#no-screen")).to_have_text(
        "This screen has no form to open a High card round: open it from the table's own controls (or POST /api/rounds)."
    )

    status, said = daemon.post("/api/rounds", {"wagers": [{"seat": 2, "amount": 10}, {"seat": 5, "amount": 25}]})
    assert status == 201, said
    expect(page.locator("#no-screen")).to_be_hidden()
    expect(page.locator("#prompt")).to_have_text(daemon.get("/api/state")["prompt"])
    assert daemon.post("/api/sim/shoe", {"cards": ["KH", "4C", "9S"]})[0] == 200
    for n, card in enumerate(["KH", "4C"], start=1):
        page.click("#draw-card")
        expect(table.locator("g.read-card")).to_have_count(n)
        expect(table.locator(f'g.read-card[data-card="{card}"]')).to_have_count(1)
        expect(page.locator("#event-log li").first).to_contain_text("read")
    expect(page.locator("#prompt")).to_have_text("Deal to the dealer")
    expect(table.locator("g.read-cards")).to_have_attribute("data-cards", "KH 4C")
    expect(page.locator("#event-log li", has_text="K\u2665 read")).to_have_count(1)
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "generic-game.png"), animations="disabled")
    page.click("#draw-card")
    # Settled: the API's payouts, seat by seat.
    expect(page.locator('#payouts tr[data-seat="2"] .pay')).to_have_text("10")
    expect(page.locator('#payouts tr[data-seat="5"] .net')).to_have_text("\u221225")

    # The supervisor's recall replays it with the same plain drawing and the settlement as written.
    sup = screens.open("/supervisor", "supervisor")
    screens.login(sup, SUPERVISOR)
    sup.page.locator('#recall [data-round="1"]').click()
    expect(sup.page.locator("#replay-table text.generic-notice")).to_be_visible()
    expect(sup.page.locator("#replay-table [data-base]")).to_have_count(0)
    expect(sup.page.locator("#settlement td.raw")).to_contain_text('"game":"high-card"')
