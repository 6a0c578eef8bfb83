"""Recovery: SIGKILL the daemon at random moments while rounds are dealt, fifty times over.

The simulated shoe runs as its own process (`tablectl sim-shoe`), so a card the dead daemon had
not acknowledged is sent again to the next one. Afterwards every card the shoe dealt is in the
journal exactly once and in order, every round is settled exactly once (and its exported round
file replays to what the table paid), and a fault latched before a kill is still latched after it.
"""

from __future__ import annotations

import contextlib
import random
import time
import urllib.error
from pathlib import Path

from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import SUPERVISOR, Daemon

from .conftest import SimShoe

KILLS = 50

CONFIG = """
[table]
id = "RECOVERY-1"
[shoe]
url = "{link}"
heartbeat_timeout = 2.0
"""


def _wagers(rng: random.Random) -> dict:  # type: ignore[type-arg]
    seats = sorted(rng.sample(range(1, 8), rng.randint(1, 3)))
    bodies = []
    for seat in seats:
        wagers = {"first": 10}
        if rng.random() < 0.6:
            wagers["second"] = 10
            if rng.random() < 0.6:
                wagers["third"] = 5
        bodies.append({"seat": seat, "wagers": wagers})
    return {"seats": bodies}


def test_fifty_kills_lose_no_card_count_none_twice_and_settle_every_round_once(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    shoe = SimShoe(tmp_path / "shoe-link", "--seed", "7")
    daemon = Daemon(tmp_path, CONFIG.format(link=tmp_path / "shoe-link"))
    drawn: list[str] = []
    latched: int | None = None
    try:
        daemon.start()
        for kill in range(KILLS):
            state = daemon.get("/api/state")
            if latched is not None:
                # A fault latched before the last kill is still latched, and still blocks play.
                assert state["blocked"] and latched in [f["id"] for f in state["faults"]], state["faults"]
            if kill == 15:
                answer = shoe.command("stack JK")  # a joker cannot come from a Grand Slam shoe
                assert answer.startswith("ok"), answer
            if kill == 35 and latched is not None:
                status, body = daemon.post(
                    f"/api/faults/{latched}/clear",
                    {"action": "replace", "card": "4S", "reason": "shoe read a joker; the card is 4S"},
                    token=SUPERVISOR,
                )
                assert status == 200, body
                latched = None
            elif state["awaiting"]["kind"] == "round" and not state["blocked"]:
                with contextlib.suppress(OSError, urllib.error.URLError):
                    if state.get("payment") == "due":  # the dealer pays the last round first
                        daemon.post("/api/confirm", {})
                    daemon.post("/api/rounds", _wagers(rng))
            # The dealer pulls a few cards; the kill lands somewhere in their flight.
            answer = shoe.command(f"draw {rng.randint(1, 3)}")
            assert answer.startswith("ok"), answer
            drawn.extend(answer.split()[2:])
            daemon.wait_for("some cards to arrive", lambda s: s["journal_seq"] > 0)
            if "JK" in drawn and latched is None and kill < 35:
                state = daemon.wait_for("the joker's fault", lambda s: s["blocked"])
                latched = state["faults"][0]["id"]
            time.sleep(rng.uniform(0.0, 0.03))
            daemon.kill()
            if rng.random() < 0.3:  # cards dealt while no daemon is running must not be lost
                answer = shoe.command("draw 1")
                drawn.extend(answer.split()[2:])
            daemon.start()
        daemon.wait_for(
            "every card the shoe dealt to be journaled",
            lambda s: shoe.command("status").split("unacknowledged ")[1].startswith("0 "),
        )
        assert daemon.stop() == 0
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.proc.kill()
        shoe.stop()

    assert daemon.starts == KILLS + 1
    journal = Journal(daemon.state_dir / "journal.sqlite3")
    shoe_cards = [
        e.body["card"] for e in journal.entries() if e.kind == "card" and e.body["source"].get("via") == "shoe"
    ]
    assert shoe_cards == drawn  # nothing lost, nothing twice, in the order the shoe dealt them
    opened = [e.round for e in journal.entries() if e.kind == "round-open"]
    assert opened == list(range(1, len(opened) + 1)) and len(opened) >= 10
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    settled = [r for r in table.rounds.values() if r.status == "settled"]
    assert table.meters.rounds == len(settled) >= len(opened) - 1
    for record in settled:
        assert record.round_file is not None
        assert settle_round_file(record.round_file) == record.settlement
    dealt_in_rounds = sum(len(r.cards) for r in table.rounds.values())
    held = len(table.held)
    # Every shoe card went into exactly one round, was ruled dead or is still held; the joker went
    # nowhere, and the 4S the supervisor put in its place went where the joker would have gone.
    assert drawn.count("JK") == 1
    assert dealt_in_rounds + table.meters.dead_cards + held == (len(drawn) - 1) + 1
