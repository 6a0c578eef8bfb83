"""`tablectl run --sim --demo` plays every game by itself: each game's own demo dealer (in its
game folder) opens rounds, the cards come out of the simulated shoe as bytes on a pty, the lamps
and the pole display follow, rounds settle, and each settled round's file replays to the
settlement the table paid."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from controller.testing import Daemon, replay

from .conftest import display_text, drain

CONFIG = """
[table]
id = "DEMO-1"
game = "{game}"
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "small-gpio"
"""

# What the pole display shows while each game is being dealt (its adapter's words).
DEALING_WORDS = {"grand-slam": "DEAL SEAT", "jokers-22": "DEAL", "baseball-poker": "SEAT"}


@pytest.mark.parametrize("game", ["grand-slam", "jokers-22", "baseball-poker"])
def test_the_demo_dealer_plays_rounds_of_each_game_through_the_pty(
    game: str, tmp_path: Path, pty_display: tuple[int, str]
) -> None:
    master, path = pty_display
    daemon = Daemon(tmp_path, CONFIG.format(game=game, display=path), args=("--demo", "--demo-interval", "0.02"))
    daemon.start()
    wire = b""

    def two_settled(answer: dict[str, Any]) -> bool:
        nonlocal wire
        wire += drain(master)  # read the display as it goes, as a real one would
        return sum(1 for x in answer["rounds"] if x["status"] == "settled") >= 2

    try:
        settled = daemon.wait_for("two settled rounds", two_settled, timeout=90, path="/api/rounds?last=20")
        state = daemon.get("/api/state")
        shoe = state["devices"]["shoe"]
        pins = daemon.get("/api/sim/pins")["pins"]
        files = {r["round"]: daemon.get(f"/api/rounds/{r['round']}/file") for r in settled["rounds"] if r["status"] == "settled"}
        wire += drain(master)
    finally:
        assert daemon.stop() == 0, daemon.log()
    assert state["game"] == game and state["simulated"] is True
    assert shoe["state"] == "connected", shoe
    # Every card of the settled rounds came from the simulated shoe over its pty, with the shoe's
    # own session and sequence number, not through a side door (read from the journal file).
    with sqlite3.connect(daemon.state_dir / "journal.sqlite3") as db:
        sources = [json.loads(b)["source"] for (b,) in db.execute("SELECT body FROM entries WHERE kind = 'card'")]
    assert sources and all(s["via"] == "shoe" and "session" in s and "seq" in s for s in sources), sources[:5]
    rounds = [r for r in settled["rounds"] if r["status"] == "settled"]
    for record in rounds:
        assert record["cards"], record
        assert replay(files[record["round"]]) == record["settlement"]
    # The lamps moved (seat 1's first lamp or the status lamp) and the display showed the deal.
    assert any(len(history) > 1 for history in pins.values()), pins
    assert DEALING_WORDS[game] in display_text(wire), display_text(wire)[:400]


def test_a_demo_round_is_recalled_step_by_step_in_the_games_words(tmp_path: Path) -> None:
    """Game recall of a Jokers 22 demo round replays it step by step with the game's own words."""
    daemon = Daemon(tmp_path, '[table]\nid = "DEMO-2"\ngame = "jokers-22"\n', args=("--demo", "--demo-interval", "0.02"))
    daemon.start()
    try:
        settled = daemon.wait_for(
            "a settled round",
            lambda r: any(x["status"] == "settled" for x in r["rounds"]),
            timeout=60,
            path="/api/rounds?last=5",
        )
        number = next(x["round"] for x in settled["rounds"] if x["status"] == "settled")
        replay = daemon.get(f"/api/rounds/{number}/replay")
    finally:
        assert daemon.stop() == 0, daemon.log()
    prompts = [step["prompt"] for step in replay["steps"]]
    assert prompts[-1] == "Settled"
    assert any(p.startswith("Deal to the banker") for p in prompts), prompts
    assert any(p.startswith("Deal to spot ") for p in prompts), prompts
