"""A Baseball poker hand end to end: `tablectl run --sim` with `game = "baseball-poker"`, every
card through the simulated shoe's pty, the players' actions through the API, a rainout (the queen
of spades face up) re-dealt with new antes, the lamps and the pole display following who acts,
and the round file replaying to what the table pushed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.testing import Daemon, replay

from .conftest import display_text, drain

CONFIG = """
[table]
id = "BB-HIL"
game = "baseball-poker"
[rules]
ante = 1
small_bet = 2
big_bet = 4
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "seven-seat-595"
"""
PLAYERS = {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 4, "stack": 60}]}
# Third street: down, down, up in seat order; seat 2's first up card is the queen of spades: rainout.
BEFORE_RAIN = ["AS", "KD", "2C", "7H", "8H", "9C", "5D", "QS"]
# The re-deal from a fresh deck: 3rd street (9 cards), 4th-6th (3 each), 7th (3): no 4 and no
# queen of spades face up.
REDEAL = [
    "AH",
    "KH",
    "2D",
    "7C",
    "8C",
    "TD",
    "5H",
    "6S",
    "JC",
    "TH",
    "JS",
    "QH",
    "KS",
    "2S",
    "5S",
    "6H",
    "7D",
    "8D",
    "AD",
    "KC",
    "TC",
]


@pytest.fixture
def daemon(tmp_path: Path, pty_display: tuple[int, str]) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG.format(display=pty_display[1])).serve()


def test_a_hand_with_a_rainout_through_the_wire(daemon: Daemon, pty_display: tuple[int, str]) -> None:
    master, _ = pty_display
    status, opened = daemon.post("/api/rounds", PLAYERS)
    assert status == 201, opened
    assert daemon.post("/api/sim/shoe", {"cards": BEFORE_RAIN + REDEAL})[0] == 200
    saw_call_prompt = saw_lamp = False
    for _ in range(120):
        state = daemon.get("/api/state")
        awaiting = state["awaiting"]
        if awaiting["kind"] == "card":
            seq = state["journal_seq"]
            assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
            daemon.wait_for("the card", lambda s, seq=seq: s["journal_seq"] > seq)
        elif awaiting["kind"] == "decision":
            who, allowed = awaiting["who"], awaiting["allowed"]
            # The lamps blink at the seat that acts; the pole display says what it must call.
            if state["devices"]["lamps"]["next_card"] == f"{who['seat']}:first":
                saw_lamp = True
            if f"seat {who['seat']} to call {who['to_call']}" in display_text(drain(master)).lower():
                saw_call_prompt = True
            action = next(a for a in ("call", "check", "bring-in", "pay", "decline", *allowed) if a in allowed)
            status, answer = daemon.post("/api/decisions", {"seat": who["seat"], "action": action})
            assert status == 200, answer
        else:
            break
    assert state["round_status"] == "settled"
    assert saw_lamp and saw_call_prompt
    settled = daemon.get("/api/rounds/1")["settlement"]
    assert settled["rainouts"] == 1
    assert sum(p["net"] for p in settled["players"]) == 0
    # Everyone anted twice (the rainout re-ante) and the pot kept the first antes.
    assert all(p["put"] >= 2 for p in settled["players"])
    assert sum(pot["amount"] for pot in settled["pots"]) == sum(p["put"] for p in settled["players"])
    round_file = daemon.get("/api/rounds/1/file")
    assert round_file["cards"][:8] == BEFORE_RAIN
    assert replay(round_file) == settled
    winners = {w for pot in settled["pots"] for w in pot["winners"]}
    pays = {p["seat"]: p["pay"] for p in daemon.get("/api/state")["payouts"]}
    assert all(pays[w] > 0 for w in winners)
    assert "pay seat" in display_text(drain(master)).lower()
