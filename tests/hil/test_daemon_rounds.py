"""Whole Grand Slam rounds through the wire: `tablectl run --sim` as a process, cards leaving the
simulated shoe as bytes on a pty, lamp pin histories and pole-display bytes checked, and every
exported round file settled by `tablectl replay` to exactly what the table paid."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.testing import SUPERVISOR, Daemon, replay

from .conftest import changes, display_text, drain, lamp

CONFIG = """
[table]
id = "HIL-1"
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "small-gpio"
"""

# small-gpio (hardware/pins.toml): seat 1 first/second/third/home on GPIO 17/27/22/23; status GPIO4.
SEAT1 = {"first": "GPIO17", "second": "GPIO27", "third": "GPIO22", "home": "GPIO23"}


@pytest.fixture
def daemon(tmp_path: Path, pty_display: tuple[int, str]) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG.format(display=pty_display[1])).serve()


def play(daemon: Daemon, body: dict, cards: list[str]) -> int:  # type: ignore[type-arg]
    if daemon.get("/api/state")["payment"] == "due":  # the dealer pays the last round first
        assert daemon.post("/api/confirm", {})[0] == 200
    return daemon.deal(body, cards)


def test_rounds_played_through_the_wire_settle_as_replay_says(daemon: Daemon, pty_display: tuple[int, str]) -> None:
    master, _ = pty_display
    health = daemon.get("/api/health")
    assert health["simulated"] is True and health["game"] == "grand-slam"
    rounds = [
        (
            {
                "seats": [
                    {"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}},
                    {"seat": 3, "wagers": {"first": 20}},
                ]
            },
            ["5H", "KD", "2C", "9S"],
        ),
        (
            {"seats": [{"seat": 2, "wagers": {"first": 10, "second": 5, "third": 5}, "side_bets": {"three_outs": 2}}]},
            ["TC", "JD", "AS"],
        ),
        ({"seats": [{"seat": 1, "wagers": {"first": 25}}], "blind_seat": 2}, ["4D", "7C"]),
    ]
    numbers = [play(daemon, body, cards) for body, cards in rounds]
    assert numbers == [1, 2, 3]
    for number in numbers:
        table_paid = daemon.get(f"/api/rounds/{number}")["settlement"]
        assert replay(daemon.get(f"/api/rounds/{number}/file")) == table_paid
    one, two, three = (daemon.get(f"/api/rounds/{n}")["settlement"] for n in numbers)
    assert [(s["seat"], s["net"]) for s in one["seats"]] == [(1, 25), (3, -20)]
    assert two["seats"][0]["side_bets"]["three_outs"] == {"amount": 2, "result": "won", "paid": 30}
    assert three["seats"][0]["grand_slam"] is True and three["blind"] == {
        "seat": 2,
        "cards": ["7C"],
    }  # the blind seat follows seat 1
    # Round 3's last card went to the blind hand: nothing blinks once the round is settled.
    assert daemon.get("/api/state")["devices"]["lamps"]["next_card"] is None
    meters = daemon.get("/api/meters")
    assert meters["rounds"] == 3 and meters["total_wagered"] == 25 + 20 + 22 + 25

    wire = drain(master)
    # CD5220: ESC Q A writes the upper line, ESC Q B the lower one, each ended by CR.
    assert b"\x1bQADEAL SEAT 1 1ST BASE\r" in wire
    assert b"\x1bQA" + b"PAY SEAT 1".ljust(20) + b"\r" in wire  # round 3: seat 1 is paid 25 for the Grand Slam
    assert b"\x1bQB" + b"25".rjust(20) + b"\r" in wire

    # Seat 1's wagers stood on second and third base (steady), then moved home: lit, then dark.
    pins = daemon.get("/api/sim/pins")["pins"]
    for base in ("second", "third"):
        states = [state for _, state in pins[SEAT1[base]]]
        assert states[-2:] == [1.0, 0.0], (base, states)
    # Home plate flashes for the score, then stays lit until the dealer pays.
    daemon.wait_for(
        "the scoring flashes on seat 1's home plate",
        lambda s: changes(lamp(s, SEAT1["home"])) >= 9 and lamp(s, SEAT1["home"])[-1] == 1.0,
        path="/api/sim/pins",
    )


def test_the_next_base_blinks_until_its_card_comes(daemon: Daemon) -> None:
    status, _ = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})
    assert status == 201
    # Blinking: the first-base lamp goes on and off again while it waits for its card.
    daemon.wait_for(
        "seat 1's first base to blink",
        lambda s: lamp(s, SEAT1["first"]).count(1.0) >= 2,
        path="/api/sim/pins",
    )
    daemon.post("/api/sim/shoe", {"cards": ["KH"]})
    daemon.post("/api/sim/draw", {"count": 1})
    daemon.wait_for("the out", lambda s: s["round_status"] == "settled")
    # Out: two long pulses, then dark.
    daemon.wait_for(
        "the out pattern to end dark",
        lambda s: lamp(s, SEAT1["first"])[-1] == 0.0 and lamp(s, SEAT1["first"]).count(1.0) >= 4,
        path="/api/sim/pins",
    )


def test_a_card_nobody_is_owed_is_ruled_dead_and_a_joker_stops_play(
    daemon: Daemon, pty_display: tuple[int, str]
) -> None:
    master, _ = pty_display
    daemon.post("/api/sim/shoe", {"cards": ["QS"]})
    daemon.post("/api/sim/draw", {"count": 1})
    daemon.wait_for("the dead card", lambda s: s["last_card"] == "QS")
    assert daemon.get("/api/meters")["dead_cards"] == 1
    status, _ = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 5}}]})
    assert status == 201
    daemon.post("/api/sim/shoe", {"cards": ["JK"], "impossible": True})  # a card no Grand Slam shoe holds
    daemon.post("/api/sim/draw", {"count": 1})
    state = daemon.wait_for("the fault", lambda s: s["blocked"])
    fault = state["faults"][0]
    assert fault["code"] == "impossible-card"
    assert "JK cannot come from the 6-deck shoe: it holds no jokers" in fault["message"]
    assert daemon.get("/api/health")["status"] == "fault"
    wire = drain(master)
    assert "impossible card. jk cannot come from the" in display_text(wire).lower()
    daemon.wait_for(
        "the status lamp's fast blink", lambda s: changes(lamp(s, "GPIO4")) >= 6, path="/api/sim/pins"
    )
    status, cleared = daemon.post(
        f"/api/faults/{fault['id']}/clear",
        {"action": "replace", "card": "3H", "reason": "the card in hand is 3H", "name": "Lee"},
        token=SUPERVISOR,
    )
    assert status == 200, cleared
    done = daemon.wait_for("the round to settle", lambda s: s["round_status"] == "settled")
    assert not done["blocked"] and done["payouts"] == [{"seat": 1, "pay": 5, "collect": 0, "net": 5}]


def test_after_a_kill_the_daemon_comes_back_to_the_same_round_and_redrives_lamps_and_display(
    daemon: Daemon, pty_display: tuple[int, str]
) -> None:
    master, _ = pty_display
    daemon.post(
        "/api/rounds",
        {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}, {"seat": 2, "wagers": {"first": 5}}]},
    )
    daemon.post("/api/sim/shoe", {"cards": ["5H", "7C"]})
    daemon.post("/api/sim/draw", {"count": 1})
    before = daemon.wait_for("the first card", lambda s: s["last_card"] == "5H")
    daemon.kill()
    drain(master)
    daemon.start()
    after = daemon.get("/api/state")
    assert after["state"] == before["state"] and after["round"] == 1 and after["prompt"] == "Deal to seat 2, first base"
    # The lamps show every wager where it stands (seat 1's two stacks now both on second base,
    # seat 2 on first) and blink where the next card goes.
    # small-gpio wires seats 1-3 of the 7-seat table: the lamps say which seats have none.
    assert after["devices"]["lamps"] == {
        "wagers": ["1:second", "2:first"],
        "next_card": "2:first",
        "fault": False,
        "unwired_seats": [4, 5, 6, 7],
    }
    assert b"\x1bQADEAL SEAT 2 1ST BASE\r" in drain(master)
    # This daemon's simulated shoe was born with it: stack the card again and deal on.
    daemon.post("/api/sim/shoe", {"cards": ["7C"]})
    daemon.post("/api/sim/draw", {"count": 1})
    daemon.wait_for("the next card", lambda s: s["last_card"] == "7C")
