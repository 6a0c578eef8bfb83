"""A simulated table stopped and started again mid-hand deals on: the simulated shoe it starts
with holds what the journal says is still in the shoe (the cards dealt since the last shuffle
are not in it again), so the hand continues and no impossible card is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.testing import Daemon

CONFIG = '[table]\nid = "RESTART-1"\ngame = "baseball-poker"\n'


def _no_fault(state: dict[str, Any]) -> None:
    assert not state["faults"], [f["message"] for f in state["faults"]]


def test_a_restart_mid_hand_continues_the_hand_from_the_cards_still_in_the_shoe(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, CONFIG, args=("--demo", "--demo-interval", "0.05", "--seed", "3"))
    daemon.start()
    try:
        # Mid-hand, well into the deck: a one-deck game whose restarted shoe held all 52 cards
        # again would soon deal one of these a second time.
        before = daemon.wait_for(
            "a hand with 20 cards dealt",
            lambda s: s["awaiting"]["kind"] != "round" and s["shoe"]["dealt"] >= 20 and not s["faults"],
            timeout=120,
        )
        assert daemon.stop() == 0, daemon.log()
        daemon.start()
        resumed = daemon.get("/api/state")
        _no_fault(resumed)
        hand = resumed["round"]
        # The simulated dealer deals on until the stop takes effect and again as soon as the table
        # is back, so on a busy machine the hand seen above may have ended before the stop or the
        # first look after the start: the table never goes back, and within one hand never deals less.
        assert hand >= before["round"], (before, resumed)
        if hand == before["round"]:
            assert resumed["shoe"]["dealt"] >= before["shoe"]["dealt"], (before, resumed)

        def next_hand_under_way(state: dict[str, Any]) -> bool:
            _no_fault(state)  # fails at once, with the fault's words
            return state["round"] is not None and state["round"] > hand and state["shoe"]["dealt"] >= 10

        daemon.wait_for("the hand to finish and the next to be dealt", next_hand_under_way, timeout=180)
        rounds = daemon.get("/api/rounds?last=20")["rounds"]
    finally:
        assert daemon.stop() == 0, daemon.log()
    for number in sorted({before["round"], hand}):  # every hand the restart could have cut settled
        finished = next(r for r in rounds if r["round"] == number)
        assert finished["status"] == "settled", finished
