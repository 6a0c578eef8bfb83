"""A Jokers 22 table end to end: `tablectl run --sim` with `game = "jokers-22"`, cards through the
simulated shoe's pty, the players' decisions through the API, the lamps showing whose turn it is,
the pole display asking for the choice, and the round file replaying to what the table paid."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.testing import Daemon, replay

from .conftest import changes, display_text, drain, lamp

CONFIG = """
[table]
id = "J22-HIL"
game = "jokers-22"
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "small-gpio"
"""

OPENING = {
    "banker": {"stake": 500},
    "spots": [
        {"spot": 1, "wagers": [{"player": "ann", "amount": 50}]},
        {"spot": 2, "wagers": [{"player": "bob", "amount": 20}]},
    ],
}
# spot 1: 8H 8D (a pair: split), spot 2: 5C 6D (11: double), banker 9S, then 7C 8S (24: over).
CARDS = ["8H", "5C", "9S", "8D", "6D", "2C", "TC", "3H", "KD", "9H", "7C", "8S"]


@pytest.fixture
def daemon(tmp_path: Path, pty_display: tuple[int, str]) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG.format(display=pty_display[1])).serve()


def draw_until_decision_or_end(daemon: Daemon) -> dict:  # type: ignore[type-arg]
    for _ in range(20):
        state = daemon.get("/api/state")
        if state["awaiting"]["kind"] != "card":
            return dict(state)
        seq = state["journal_seq"]
        assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
        daemon.wait_for("the card", lambda s, seq=seq: s["journal_seq"] > seq)
    raise AssertionError("the round never asked for a decision")


def test_a_jokers_22_round_with_a_split_and_a_double_through_the_wire(
    daemon: Daemon, pty_display: tuple[int, str]
) -> None:
    master, _ = pty_display
    assert daemon.get("/api/health")["game"] == "jokers-22"
    status, opened = daemon.post("/api/rounds", OPENING)
    assert status == 201, opened
    assert daemon.post("/api/sim/shoe", {"cards": CARDS})[0] == 200

    state = draw_until_decision_or_end(daemon)
    assert state["awaiting"]["kind"] == "decision"
    assert state["prompt"] == "Spot 1, ann on 16: hit or stand or double or split or surrender?"
    # Spot 1's lamp blinks: its turn. Spot 2's is steady: it has a wager and waits.
    daemon.wait_for("spot 1's lamp to blink", lambda s: changes(lamp(s, "GPIO17")) >= 3, path="/api/sim/pins")
    assert daemon.get("/api/state")["devices"]["lamps"] == {
        "wagers": ["1:first", "2:first"],
        "next_card": "1:first",
        "fault": False,
        "unwired_seats": [4, 5, 6, 7],  # small-gpio wires spots 1-3 of the 7
    }
    # The pole display asks for the choice in 20 columns: hit, stand, double, split, surrender.
    assert "spot 1 ann hit std dbl spl sur" in display_text(drain(master)).lower()

    refused = daemon.post("/api/decisions", {"spot": 2, "action": "hit"})
    assert refused[0] == 422 and refused[1]["error"].startswith("Spot 2: out of turn: spot 1, hand 1 (ann) decides now")
    assert daemon.post("/api/decisions", {"spot": 1, "action": "split"})[0] == 200

    state = draw_until_decision_or_end(daemon)
    assert state["prompt"].startswith("Spot 2, bob on 11:") and "double" in state["prompt"]
    assert daemon.post("/api/decisions", {"spot": 2, "action": "double"})[0] == 200
    state = draw_until_decision_or_end(daemon)
    assert state["round_status"] == "settled"

    paid = daemon.get("/api/rounds/1")["settlement"]
    assert [(p["player"], p["net"]) for p in paid["players"]] == [("ann", 100), ("bob", 40)]
    assert paid["banker"]["net"] == -140 and paid["action_spot"] == 1
    assert state["prompt"] == "Pay ann at spot 1: 100, bob at spot 2: 40"
    round_file = daemon.get("/api/rounds/1/file")
    assert round_file["decisions"] == [{"spot": 1, "action": "split"}, {"spot": 2, "action": "double"}]
    assert round_file["cards"] == CARDS
    assert replay(round_file) == paid
    assert display_text(drain(master)).lower().endswith("pay seat 1: 100 then s2 40")
