"""`tablectl sim-shoe` as another program would use it: a separate process, driven on stdin."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.engine.cards import parse_cards
from drivers.shoe.serial_backend import ShoeReader
from drivers.shoe.simcli import execute
from drivers.shoe.simulated import FirmwareBug, SimulatedShoe

from .conftest import WAIT

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def sim_process(link: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "drivers.shoe.simcli", "--link", link, "--cards", "AS,KD,QH",
         "--heartbeat", "0.05", "--retransmit", "0.05"],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )
    yield process
    if process.poll() is None:
        process.kill()
    process.wait(WAIT)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()


def ask(process: subprocess.Popen[str], line: str) -> str:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()
    return process.stdout.readline().strip()


def test_the_sim_shoe_process_outlives_its_host_and_gives_held_cards_to_the_next_one(
    sim_process: subprocess.Popen[str], link: str, log: Any, make_reader: Callable[..., ShoeReader]
) -> None:
    assert sim_process.stdout is not None
    banner = sim_process.stdout.readline()
    assert banner.startswith(f"ok SIMULATED shoe on {link}")
    first = make_reader()
    assert ask(sim_process, "draw 1") == "ok drew AS"
    assert log.wait_cards(1) == ["AS"]
    saved = first.link_state
    first.stop()  # the daemon goes away
    assert ask(sim_process, "draw 1") == "ok drew KD"
    make_reader(resume=saved)  # the daemon comes back
    assert log.wait_cards(2) == ["AS", "KD"]
    assert ask(sim_process, "fault duplicate") == "ok sent a duplicate frame"
    assert ask(sim_process, "draw 1") == "ok drew QH"
    assert log.wait_cards(3) == ["AS", "KD", "QH"]
    assert ask(sim_process, "quit") == "ok bye"
    assert sim_process.wait(WAIT) == 0
    assert not os.path.lexists(link)  # the link goes with the shoe
    assert log.cards() == ["AS", "KD", "QH"]


def test_the_sim_shoe_refuses_bad_cards_on_its_command_line(link: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "drivers.shoe.simcli", "--link", link, "--cards", "AS,XX"],
        cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT,
    )
    assert done.returncode == 2
    assert "'XX' is not a card" in done.stderr
    assert not os.path.lexists(link)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("draw 2", "ok drew 2C 3C"),
        ("draw 0", "error draw takes a number of cards of 1 or more, not 0"),
        ("draw many", "error draw takes a number of cards, such as: draw 3 (not 'many')"),
        ("stack AS ZZ", "error 'ZZ' is not a card: rank 'Z' is not one of 2-9, T (or 10), J, Q, K, A"),
        ("fault wobble", "error no fault called 'wobble'; the menu is: silent, bad-crc, slow, "
         "deaf, garbage, duplicate, misread, drop, restore"),
        ("fault silent", "ok fault silent on"),
        ("confirm", "ok confirm button pressed"),
        ("dance", "error unknown command 'dance'; try: draw, stack, confirm, fault, clear, status, quit"),
    ],
)
def test_each_command_answers_one_line_saying_what_happened(line: str, answer: str) -> None:
    shoe = SimulatedShoe(parse_cards(["2C", "3C"]))
    try:
        assert execute(shoe, line) == answer
    finally:
        shoe.stop()


def test_sim_shoe_help_lists_every_stdin_command_and_firmware_bug() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "sim-shoe", "--help"],
        cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT,
        env={**os.environ, "COLUMNS": "400"},  # no wrapping inside a bug's name
    )
    assert done.returncode == 0, done.stderr
    commands = done.stdout.split("stdin commands")[1]
    for word in ("draw [N]", "stack CARD", "confirm", "fault NAME", "clear", "status", "quit"):
        assert f"\n    {word}" in commands
    for bug in FirmwareBug:
        assert bug.value in done.stdout


def test_fault_restore_says_which_faults_are_still_on() -> None:
    shoe = SimulatedShoe(parse_cards(["2C", "3C"]))
    try:
        execute(shoe, "fault bad-crc")
        execute(shoe, "fault misread")
        execute(shoe, "fault drop")
        assert execute(shoe, "fault restore").endswith(
            "; faults still on: bad-crc, misread (the next card)"
        )
        execute(shoe, "clear")
        execute(shoe, "draw 1")
        assert execute(shoe, "fault restore").endswith("; no faults remain on")
    finally:
        shoe.stop()
