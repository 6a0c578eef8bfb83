"""The generic screen's decision form (a game whose package ships no screen module still has its
players' decisions taken on the dealer screen): built from the JSON schema of the game's own
decision body (GET /api/game `decision`), filled from who decides, posted to POST /api/decisions.
Shown here at a Jokers 22 table, whose decision body it is, with the generic module put in the
place of the game's own buttons (issue 29)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from controller.testing import DEALER, Daemon

from .conftest import Screens

CONFIG = '[table]\nid = "BROWSER-GD"\ngame = "jokers-22"\n'
# Spot 1 (ann) gets 5C and 6D, the banker 9S: ann on 11 decides (hit, double or surrender).
OPENING = {"banker": {"stake": 500}, "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 10}]}]}

# The generic screen's Decisions, made in the page as the dealer screen makes a game's, drawn
# over the table's state now.
GENERIC = """async () => {
  const generic = await import("/static/js/games/generic/index.js");
  const decisions = new generic.Decisions();
  await decisions.ready;
  const state = await (await fetch("/api/state", { headers: { "X-Tablectl": "1" } })).json();
  document.getElementById("decisions").dataset.key = "";  // drawn afresh, over the game's buttons
  decisions.render(state);
}"""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG).serve()


def test_the_generic_decision_form_takes_a_players_choice_in_the_games_own_body(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    screens.login(dealer, DEALER)
    assert daemon.post("/api/rounds", OPENING)[0] == 201
    assert daemon.post("/api/sim/shoe", {"cards": ["5C", "9S", "6D"]})[0] == 200
    assert daemon.post("/api/sim/draw", {"count": 3})[0] == 200
    deciding = daemon.wait_for("ann deciding", lambda s: s["awaiting"]["kind"] == "decision")
    expect(page.locator("#decisions")).to_be_visible()
    page.evaluate(GENERIC)

    form = page.locator("#decisions form.generic-decision")
    expect(form).to_be_visible()
    expect(page.locator("#decision-who")).to_have_text(deciding["prompt"])
    allowed = ", ".join(deciding["awaiting"]["allowed"])
    expect(page.locator("#decision-facts")).to_have_text(f"The rules allow: {allowed}")
    # The body's own fields, filled from who decides where they share a name.
    expect(form.locator('input[data-key="spot"]')).to_have_value("1")
    expect(form.locator('input[data-key="player"]')).to_have_value("ann")
    form.locator('input[data-key="action"]').fill("hit")
    form.locator("button[type=submit]").click()
    after = daemon.wait_for("the decision taken", lambda s: s["awaiting"]["kind"] != "decision")
    assert after["awaiting"]["kind"] == "card", after["awaiting"]
    assert after["awaiting"]["target"] == {"spot": 1, "hand": 1}, after["awaiting"]  # ann's card after her hit
    expect(page.locator("#decision-error")).to_have_text("")
