"""Every prompt the dealer screen shows can be followed from that screen, in every game, with the
simulated shoe running out and being loaded again: hands are opened, dealt (Draw card), decided
and paid only through the screen's own controls, the way the dealer follows the prompt. A
one-deck shoe empties within a few rounds: mid-round the screen offers New shoe, between rounds
the prompt asks for Confirm, and either way the next card comes out of the new shoe. Baseball
poker deals each hand from a freshly shuffled deck (and a rainout deals on from one): the
simulated shoe is loaded again each time, so hand after hand is dealt to the end.

The test reads the table's state over the API only to wait for the screen's action to land and
to know when it has seen enough; every action is a click or a key on the screen."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from controller.table.view import SHOE_EMPTY
from controller.testing import DEALER, Daemon

from .conftest import Screens

CONFIGS = {
    "grand-slam": '[table]\nid = "SHOE-GS"\ngame = "grand-slam"\n[rules]\ndecks = 1\n',
    "jokers-22": '[table]\nid = "SHOE-J22"\ngame = "jokers-22"\n[rules]\ndecks = 1\njokers_per_deck = 1\n',
    "baseball-poker": '[table]\nid = "SHOE-BB"\ngame = "baseball-poker"\n',
}
# What a player chooses, first choice first (the screen offers only what the rules allow).
CHOICES = ("stand", "check", "call", "bring-in", "pay")
MOST_STEPS = 3000
# The prompts between rounds that the dealer's Confirm answers: pay, take the losing wagers, a new shoe.
CONFIRM = re.compile(r"\bPay\b|\bTake\b|shuffle, load a new shoe")


@pytest.fixture(params=list(CONFIGS))
def daemon(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIGS[request.param], args=("--seed", "11")).serve()


def _seq(d: Daemon) -> int:
    return int(d.get("/api/state")["journal_seq"])


def _landed(d: Daemon, page: Page, before: int, what: str) -> None:
    """Wait until the screen's action is journaled; a refusal shown on the screen fails at once."""

    def done(state: dict[str, Any]) -> bool:
        errors = [t for t in page.locator(".error").all_inner_texts() if t.strip()]
        assert not errors, f"{what} was refused on the screen: {errors}; prompt: {state['prompt']}"
        return int(state["journal_seq"]) > before

    d.wait_for(f"{what} to be journaled", done, timeout=60)


def _open_hand(page: Page, game: str, rng: random.Random) -> None:
    """Open the next round through the game's own form (as the dealer types the wagers in)."""
    if game == "grand-slam":
        for seat in rng.sample(range(1, 8), rng.randint(1, 3)):
            page.locator(f'#wager-panel input[data-seat="{seat}"][data-bet="first"]').fill("10")
        page.click("#open-round")
    elif game == "jokers-22":
        page.fill("#j22-stake", "500")
        for spot in rng.sample(range(1, 8), rng.randint(1, 3)):
            page.fill(f'#j22-open input[data-spot="{spot}"][data-slot="0"][data-field="player"]', f"p{spot}")
            page.fill(f'#j22-open input[data-spot="{spot}"][data-slot="0"][data-field="amount"]', "10")
        page.click("#j22-open-round")
    else:
        page.click("#bb-clear")
        for seat in rng.sample(range(1, 8), rng.randint(4, 7)):
            page.fill(f'#bb-open input[data-seat="{seat}"][data-field="stack"]', "100")
        page.click("#bb-open-round")


def test_every_prompt_is_followed_from_the_dealer_screen_as_the_shoe_runs_out(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    dealer.expected.append(r"status of 409 .*/api/sim/draw")  # Draw card on the empty shoe, once
    screens.login(dealer, DEALER)
    game = daemon.get("/api/state")["game"]
    panel = {"grand-slam": "#wager-panel", "jokers-22": "#j22-open", "baseball-poker": "#bb-open"}[game]
    rng = random.Random(5)
    new_shoes_mid_round = new_shoes_between_rounds = new_shoes_at = 0
    settled = cards = 0
    for _ in range(MOST_STEPS):
        state = daemon.get("/api/state")
        between = state["awaiting"]["kind"] == "round"
        if between:
            settled = sum(r["status"] == "settled" for r in daemon.get("/api/rounds?last=100")["rounds"])
            if game == "baseball-poker":
                enough = settled >= 3 and cards > 2 * 52  # hand after hand, far past one deck
            else:
                enough = new_shoes_mid_round >= 1 and settled >= new_shoes_at + 2  # and rounds after it
            if enough and not CONFIRM.search(state["prompt"]):
                break
        expect(page.locator("#fault-overlay")).to_be_hidden()
        before = int(state["journal_seq"])
        # The table's state says what comes next; each control is used once the screen shows it.
        said = state["prompt"]
        if not between and state["shoe"].get("empty"):
            # The count says empty at the last card; the shoe says so itself (its EVENT frame, journaled
            # just after): what the table is at once it has both.
            state = daemon.wait_for("the shoe's own word that it is empty", lambda s: s["shuffle_due"] == SHOE_EMPTY)
            before = int(state["journal_seq"])
            expect(page.locator("#new-shoe")).to_be_visible()
            expect(page.locator("#prompt")).to_contain_text(
                "The shoe is empty: shuffle, load a new shoe, then press New shoe"
            )
            expect(page.locator("#shoe-info")).to_have_text("Shoe: empty")
            if not new_shoes_mid_round:  # Draw card on the empty shoe says so, and deals nothing
                page.click("#draw-card")
                expect(page.locator("#action-error")).to_contain_text("The simulated shoe is empty")
                assert _seq(daemon) == before
            page.click("#new-shoe")
            _landed(daemon, page, before, "New shoe")
            new_shoes_mid_round += 1
            new_shoes_at = settled
        elif between and CONFIRM.search(said):
            expect(page.locator("#prompt")).to_contain_text(CONFIRM)  # the screen asks for it too
            page.locator("#prompt").click()  # nothing focused that Enter could press instead
            page.keyboard.press("Enter")  # the dealer's confirm
            _landed(daemon, page, before, f"Confirm ({said})")
            new_shoes_between_rounds += "shuffle" in said
        elif between:
            expect(page.locator(panel)).to_be_visible()
            _open_hand(page, game, rng)
            _landed(daemon, page, before, "opening the round")
        elif state["awaiting"]["kind"] == "decision":
            offered = state["awaiting"]["allowed"]
            choice = next((c for c in CHOICES if c in offered), offered[0])
            button = page.locator(f'#decisions button[data-action="{choice}"]:not([disabled])').first
            button.click()  # waits for the screen to offer this player's choices
            _landed(daemon, page, before, f"the choice {choice}")
        else:
            assert state["awaiting"]["kind"] == "card", said
            page.click("#draw-card")
            _landed(daemon, page, before, f"Draw card ({said})")
            cards += 1
    else:
        raise AssertionError(f"{MOST_STEPS} steps and still not enough: {settled} rounds, {cards} cards")
    rounds = daemon.get("/api/rounds?last=100")["rounds"]
    assert all(r["status"] != "void" for r in rounds), rounds
    assert not daemon.get("/api/state")["faults"]
    if game != "baseball-poker":
        assert new_shoes_mid_round >= 1, (new_shoes_mid_round, new_shoes_between_rounds)
