"""An eight-seat Baseball poker table end to end: `tablectl run --sim` with `seats = 8` and the
eight-seat lamp chain, every card of an eight-player hand through the simulated shoe's pty, the
community card on 7th street, the lamps at seat 8, GET /api/rounds/1; and the starts a table
refuses: lamps or camera zones missing for one of its seats."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.testing import DEALER, SUPERVISOR, TABLECTL, Daemon, free_port, replay
from hardware import shipped
from tests.eight_seats import COMMUNITY, NETS, eight_seat_hand

CONFIG = """
[table]
id = "BB-8"
game = "baseball-poker"
seats = 8
[rules]
wild = []
[display]
url = "{display}"
dialect = "cd5220"
[indicators]
pin_map = "eight-seat-595"
"""


@pytest.fixture
def daemon(tmp_path: Path, pty_display: tuple[int, str]) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG.format(display=pty_display[1])).serve()


def test_an_eight_player_hand_through_the_wire_uses_the_community_card(daemon: Daemon) -> None:
    doc = eight_seat_hand()
    state = daemon.get("/api/state")
    assert state["game_info"]["seats"] == 8 and state["devices"]["lamps"]["unwired_seats"] == []
    status, opened = daemon.post("/api/rounds", {"players": doc["players"]})
    assert status == 201, opened
    assert daemon.post("/api/sim/shoe", {"cards": doc["cards"]})[0] == 200
    actions = iter(doc["actions"])
    community_asked = seat8_lamp = False
    for _ in range(200):
        state = daemon.get("/api/state")
        awaiting = state["awaiting"]
        if awaiting["kind"] == "card":
            community_asked |= awaiting["target"].get("community") is True
            seq = state["journal_seq"]
            assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
            daemon.wait_for("the card", lambda s, seq=seq: s["journal_seq"] > seq)
        elif awaiting["kind"] == "decision":
            if awaiting["who"]["seat"] == 8 and state["devices"]["lamps"]["next_card"] == "8:first":
                seat8_lamp = True  # the lamp in front of seat 8 blinks when it acts
            status, answer = daemon.post("/api/decisions", next(actions))
            assert status == 200, answer
        else:
            break
    assert state["round_status"] == "settled"
    assert community_asked and seat8_lamp and next(actions, None) is None
    settled = daemon.get("/api/rounds/1")["settlement"]
    assert settled["community"] == [COMMUNITY] and settled["showdown"]
    assert {p["seat"]: p["net"] for p in settled["players"]} == NETS
    round_file = daemon.get("/api/rounds/1/file")
    assert replay(round_file) == settled


def start(tmp_path: Path, config: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`tablectl run` on `config` until it refuses (or 60 s)."""
    path = tmp_path / "table.toml"
    path.write_text(config)
    env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
    env.pop("NOTIFY_SOCKET", None)
    return subprocess.run(
        [*TABLECTL, "run", *args, "--config", str(path), "--state-dir", str(tmp_path / "state"),
         "--http", f"127.0.0.1:{free_port()}"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip


def start_live(tmp_path: Path, indicators: str) -> subprocess.CompletedProcess[str]:
    """A live 8-seat Baseball poker table (shoe and display on ptys) with these `[indicators]`
    keys, run until it refuses."""
    shoe_master, shoe = os.openpty()
    display_master, display = os.openpty()
    try:
        config = (
            f'[table]\ngame = "baseball-poker"\nseats = 8\n[shoe]\nurl = "{os.ttyname(shoe)}"\n'
            f'[display]\nurl = "{os.ttyname(display)}"\n[indicators]\n{indicators}'
        )
        return start(tmp_path, config)
    finally:
        for fd in (shoe_master, shoe, display_master, display):
            os.close(fd)


def test_a_live_table_refuses_to_start_when_a_seat_has_no_lamps(tmp_path: Path) -> None:
    done = start_live(tmp_path, 'pin_map = "seven-seat-595"\n')
    assert done.returncode == 78, done.stderr
    assert f"{tmp_path / 'table.toml'}: indicators.pin_map: the pin map [seven-seat-595]" in done.stderr
    assert "has no lamps for seat 8 of this table's 8 (table.seats)" in done.stderr


def test_a_table_refuses_to_start_when_its_camera_layout_has_no_zones_for_a_seat(tmp_path: Path) -> None:
    layout = tmp_path / "six-zoned.toml"
    text = shipped("layouts/grand-slam-7.toml").read_text(encoding="utf-8")
    layout.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith('"seat7.')))
    done = start(tmp_path, f'[table]\nseats = 7\n[camera]\nlayout = "{layout}"\n', "--sim")
    assert done.returncode == 78, done.stderr
    assert f"camera.layout: the layout grand-slam-7 ({layout}) has no zones for seat 7 of this table's 7" in done.stderr
    # The same felt at a table that seats six is a table the camera sees whole: it starts.
    (tmp_path / "six").mkdir()
    daemon = Daemon(tmp_path / "six", f'[table]\nseats = 6\n[camera]\nlayout = "{layout}"\n')
    daemon.start()
    try:
        assert daemon.get("/api/state")["game_info"]["seats"] == 6
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_a_live_table_whose_gpio_cannot_start_refuses_in_one_line(tmp_path: Path) -> None:
    """This machine has no Raspberry Pi GPIO: the live table's lgpio factory cannot start, and the
    operator reads why and what to install, not a traceback."""
    done = start_live(tmp_path, 'pin_map = "eight-seat-595"\npin_factory = "lgpio"\n')
    assert done.returncode == 78, done.stderr
    assert "Traceback" not in done.stderr
    assert "tablectl: cannot start: could not start the gpiozero pin factory 'lgpio'" in done.stderr
    assert "python3-lgpio" in done.stderr


def test_a_table_refuses_to_start_when_its_pin_map_lacks_a_lamp_its_game_lights(tmp_path: Path) -> None:
    """The pin map names lamps without knowing a game (`seat1.home` is only a name to it); Grand
    Slam lights home plate, so a map without it is refused when the table starts, naming the lamps."""
    pins = tmp_path / "pins.toml"
    pins.write_text(
        '[bases-only]\nlamps = "gpio"\nstatus = 4\nbuttons = { confirm = 5, void = 6 }\n[bases-only.seats]\n'
        "1 = { first = 17, second = 27, third = 22 }\n2 = { first = 24, second = 25, third = 12 }\n"
    )
    config = f'[table]\nseats = 2\n[indicators]\npin_file = "{pins}"\npin_map = "bases-only"\n'
    done = start(tmp_path, config, "--sim")
    assert done.returncode == 78, done.stderr
    assert (
        f"indicators.pin_map: the pin map [bases-only] in {pins} has no lamp seat1.home, seat2.home; "
        "Grand Slam lights first, second, third, home in front of every seat"
    ) in done.stderr
