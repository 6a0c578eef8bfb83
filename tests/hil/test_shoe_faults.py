"""Every fault in the simulated shoe's menu, injected under the running daemon: a blocking fault
in plain words on the API, the pole display and the status lamp, and never a wrong card."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal.log import Journal
from controller.testing import PATIENCE_S, SUPERVISOR, Daemon

from .conftest import SimShoe, changes, display_text, drain, lamp

CONFIG = """
[table]
id = "FAULTS-1"
[shoe]
url = "{link}"
heartbeat_timeout = 1.0
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "small-gpio"
"""

# fault -> (what the shoe is told, the fault code the table latches, how the shoe is put right)
MENU = {
    "silent": (["fault silent"], "shoe-silent", ["clear"]),
    "garbage": (["fault garbage", "draw 1"], "shoe-line-noise", []),
    "bad-crc": (["fault bad-crc", "draw 1"], "shoe-line-noise", ["clear"]),
    # The table's ACKs no longer reach the shoe, which resends the card at its own pace.
    "deaf": (["fault deaf", "draw 1"], "shoe-duplicate", ["clear"]),
    "drop": (["fault drop"], "shoe-disconnected", ["fault restore"]),
    "slow": (["fault slow", "draw 1"], "shoe-silent", ["clear"]),
    "misread": (["fault misread", "draw 1"], "misread", []),
}


@pytest.fixture
def rig(tmp_path: Path, pty_display: tuple[int, str]) -> Iterator[tuple[Daemon, SimShoe, int]]:
    shoe = SimShoe(tmp_path / "shoe-link", "--seed", "3", "--slow", "2.5")
    daemon = Daemon(tmp_path, CONFIG.format(link=tmp_path / "shoe-link", display=pty_display[1]))
    try:
        daemon.start()
        yield daemon, shoe, pty_display[0]
        assert daemon.stop() == 0, daemon.log()
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.proc.kill()
        shoe.stop()


@pytest.mark.parametrize("fault", list(MENU))
def test_each_shoe_fault_stops_play_in_plain_words_and_never_makes_a_card(
    fault: str, rig: tuple[Daemon, SimShoe, int]
) -> None:
    daemon, shoe, display = rig
    inject, code, remedy = MENU[fault]
    status, _ = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 10}}]})
    assert status == 201
    drawn = shoe.command("draw 1").split()[2:]  # one good card first: the line works
    daemon.wait_for("the first card", lambda s: s["last_card"] == drawn[0])
    drain(display)
    for line in inject:
        answer = shoe.command(line)
        assert answer.startswith("ok"), answer
        if line.startswith("draw") and fault != "misread":
            drawn += answer.split()[2:]

    state = daemon.wait_for(f"the {fault} fault", lambda s: s["blocked"])
    latched = state["faults"][0]
    assert latched["code"] == code and latched["blocking"] is True
    assert "card-reading shoe" in (latched["title"] + latched["message"]).lower()
    health = daemon.get("/api/health")
    assert health["status"] == "fault"
    # The pole display shows the fault's title in words, and the status lamp blinks fast.
    daemon.wait_for("the status lamp to blink", lambda s: changes(lamp(s, "GPIO4")[-10:]) >= 4, path="/api/sim/pins")
    shown = display_text(drain(display)).lower()
    assert latched["title"].lower() in shown, shown

    for line in remedy:
        assert shoe.command(line).startswith("ok")
    action = {"action": "replace", "card": "9C"} if fault == "misread" else {"action": "dismiss"}
    status, body = daemon.post(
        f"/api/faults/{latched['id']}/clear",
        {**action, "reason": f"{fault}: checked the shoe", "name": "Lee"},
        token=SUPERVISOR,
    )
    assert status == 200, body
    daemon.wait_for("play to resume", lambda s: not s["blocked"])
    # Any card the fault held back arrives once the line is right again.
    daemon.wait_for("the shoe to catch up", lambda s: s["last_card"] in (drawn[-1], "9C"))

    stopped = daemon.stop()
    assert stopped == 0
    journal = Journal(daemon.state_dir / "journal.sqlite3")
    cards = [e.body["card"] for e in journal.entries() if e.kind == "card" and e.body["source"].get("via") == "shoe"]
    assert cards == drawn  # no wrong card, none lost, none twice
    cleared = [e.body for e in journal.entries() if e.kind == "fault-cleared"]
    assert cleared and cleared[0]["by"] == "supervisor:Lee"


def test_a_repeated_frame_however_late_is_acknowledged_again_and_never_a_fault(rig: tuple[Daemon, SimShoe, int]) -> None:
    """hardware/shoe-protocol.md: a frame repeated after the table has it (its ACK crossed or was
    lost, or the table was slow) is acknowledged again and not used twice; only a shoe that keeps
    resending at its own pace (it does not hear the table) is a fault (the "deaf" case above)."""
    daemon, shoe, _ = rig
    status, _ = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 10}}]})
    assert status == 201
    drawn = shoe.command("draw 1").split()[2:]
    daemon.wait_for("the first card", lambda s: s["last_card"] == drawn[0])
    deadline = time.monotonic() + PATIENCE_S
    while "unacknowledged 0 " not in shoe.command("status"):  # the shoe has the table's ACK
        assert time.monotonic() < deadline, "the shoe never got the table's acknowledgement"
        time.sleep(0.02)
    for _ in range(12):  # a burst of late repeats of the acknowledged card, as a stalled line gives
        assert shoe.command("fault duplicate").startswith("ok")
    drawn += shoe.command("draw 1").split()[2:]
    state = daemon.wait_for("the next card", lambda s: s["last_card"] == drawn[-1])
    assert not state["blocked"] and state["faults"] == []
    assert daemon.stop() == 0
    journal = Journal(daemon.state_dir / "journal.sqlite3")
    cards = [e.body["card"] for e in journal.entries() if e.kind == "card"]
    assert cards == drawn  # the repeats were not dealt
    assert not [e for e in journal.entries() if e.kind == "fault"]
    assert "repeated frame" in daemon.log()
