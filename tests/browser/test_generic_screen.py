"""A game whose package ships no screen module (the fourth-game fixture: the distribution
tests/fixtures/high_card_game/, installed for the test, found by its entry point) gets the
generic screen: its own title and seats from the API, a plain notice that this screen cannot draw
it, the API's prompt, the cards read this round, the payouts; never Grand Slam's bases, wager grid
or words (issue 13). The dealer opens its rounds from a form built from the game's own opening
body (its JSON schema, GET /api/game), deals and settles them from the screen (issue 29)."""

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
    for other in ("#wager-panel", "#j22-open", "#bb-open"):
        expect(page.locator(other)).to_be_hidden()
    # The opening form is the game's own body, built from its JSON schema: a row per wager.
    form = page.locator("#generic-open")
    expect(form).to_be_visible()
    wagers = form.locator('table[data-key="wagers"]')
    expect(wagers.locator("th")).to_have_text(["Seat", "Amount", ""])
    # A refusal in the table's own words, naming the seat and the field: nothing opened.
    dealer.expected.append(r"status of 422 .*/api/rounds")
    wagers.locator('tr[data-row="0"] input[data-key="seat"]').fill("9")
    wagers.locator('tr[data-row="0"] input[data-key="amount"]').fill("10")
    page.click("#generic-open-round")
    expect(page.locator("#generic-error")).to_have_text("Seat 9: this table seats 7 (wagers[0].seat)")
    assert daemon.get("/api/state")["round"] in (None, 0)
    wagers.locator('tr[data-row="0"] input[data-key="seat"]').fill("2")
    form.locator('button.add-row[data-key="wagers"]').click()
    wagers.locator('tr[data-row="1"] input[data-key="seat"]').fill("5")
    wagers.locator('tr[data-row="1"] input[data-key="amount"]').fill("25")
    page.click("#generic-open-round")
    expect(form).to_be_hidden()
    opened = daemon.get("/api/state")
    assert opened["round"] == 1 and [(w["seat"], w["amount"]) for w in opened["state"]["wagers"]] == [(2, 10), (5, 25)]
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
    # Settled: the API's payouts, seat by seat; confirmed, the form is back for the next round.
    expect(page.locator('#payouts tr[data-seat="2"] .pay')).to_have_text("10")
    expect(page.locator('#payouts tr[data-seat="5"] .net')).to_have_text("\u221225")
    page.click("#confirm")
    expect(form).to_be_visible()
    rounds = daemon.get("/api/rounds")["rounds"]
    assert rounds[0]["status"] == "settled" and rounds[0]["payment"] == "paid", rounds[0]

    # The supervisor's recall replays it with the same plain drawing and the settlement as written.
    sup = screens.open("/supervisor", "supervisor")
    screens.login(sup, SUPERVISOR)
    sup.page.locator('#recall [data-round="1"]').click()
    expect(sup.page.locator("#replay-table text.generic-notice")).to_be_visible()
    expect(sup.page.locator("#replay-table [data-base]")).to_have_count(0)
    expect(sup.page.locator("#settlement td.raw")).to_contain_text('"game":"high-card"')
