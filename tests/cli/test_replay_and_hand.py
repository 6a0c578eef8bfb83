"""`tablectl replay` and `tablectl hand` as REPLAY.md defines them, run as real commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = {
    "game": "grand-slam",
    "rules": {"decks": 6},
    "seats": [
        {
            "seat": 1,
            "wagers": {"first": 10, "second": 10, "third": 5},
            "side_bets": {"three_outs": 5, "poker_bonus": 5},
        },
        {"seat": 4, "wagers": {"first": 20}},
    ],
    "blind_seat": None,
    "cards": ["5H", "KD", "2C", "9S", "TD"],
}


def tablectl(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def replay(doc: Any, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(doc))
    return tablectl("replay", str(path))


def test_replay_settles_the_replay_md_example(tmp_path: Path) -> None:
    done = replay(EXAMPLE, tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["game"] == "grand-slam" and out["cards_used"] == 4 and out["blind"] is None
    assert [(s["seat"], s["cards"], s["net"]) for s in out["seats"]] == [(1, ["5H", "2C", "9S"], 15), (4, ["KD"], -20)]
    assert out["seats"][0]["side_bets"]["three_outs"] == {"amount": 5, "result": "lost", "paid": 0}
    assert out["seats"][1]["wagers"] == {"first": {"amount": 20, "result": "out", "paid": 0}}


def test_replay_reads_standard_input() -> None:
    done = tablectl("replay", "-", stdin=json.dumps(EXAMPLE))
    assert done.returncode == 0 and json.loads(done.stdout)["seats"][0]["net"] == 15


def _refused(doc: Any, tmp_path: Path) -> str:
    done = replay(doc, tmp_path)
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # one line, never a traceback
    return lines[0]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            {"seats": [{"seat": 4, "wagers": {"first": 10, "second": 20}}]},
            "seats[0].wagers.second: seat 4: the wager on second (20) may not exceed the wager on first (10)",
        ),
        (
            {"seats": [{"seat": 2, "wagers": {"first": 10}, "side_bets": {"three_outs": 1}}]},
            "seats[0].side_bets.three_outs: seat 2: side bets may be placed only by a seat that bets all three bases",
        ),
        (
            {"cards": ["5H", "KD", "2C"]},
            "cards: seat 1: the round needs another card, for seat 1, third base, but the round file gives only 3",
        ),
        ({"cards": ["5H", "KD", "ZZ", "9S"]}, "cards[2]: 'ZZ' is not a card"),
        ({"cards": ["JK", "KD", "2C", "9S"]}, "cards[0]: JK cannot come from the 6-deck shoe: it holds no jokers"),
        (
            {"rules": {"decks": 1}, "cards": ["5H", "5H", "2C", "9S"]},
            "cards[1]: 5H cannot come from the 1-deck shoe: it holds only 1 and all have been dealt",
        ),
        ({"colour": "red"}, "round file: unknown key 'colour'"),
        ({"rules": {"decks": 6, "speed": 2}}, "rules: unknown key 'speed'"),
        ({"rules": {"dealing": "diagonal"}}, "rules.dealing: must be one of ['base-major', 'seat-major']"),
        ({"seats": [{"seat": 1, "wagers": {"first": 10}, "hat": 1}]}, "seats[0]: unknown key 'hat'"),
        (
            {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": 3},
            "blind_seat: seat 3: the blind puck goes on the seat beside the solo player's (seat 1)",
        ),
        (
            {"seats": [{"seat": 1, "wagers": {"first": "10"}}]},
            "seats[0].wagers.first: seat 1: the wager on first must be a whole number of chips, not '10'",
        ),
        ({"game": "baseball-poker"}, "round file: unknown key 'blind_seat'"),  # a Grand Slam file called baseball
        ({"game": "blackjack"}, "game: unknown game 'blackjack'"),
    ],
)
def test_refused_round_files_exit_2_with_one_line_naming_field_seat_and_rule(
    change: dict[str, Any], says: str, tmp_path: Path
) -> None:
    line = _refused({**EXAMPLE, **change}, tmp_path)
    assert line.startswith("tablectl: refused: ")
    assert says in line, line


def test_two_players_switch_the_blind_hand_off() -> None:
    doc = {
        **EXAMPLE,
        "seats": [{"seat": 1, "wagers": {"first": 10}}, {"seat": 4, "wagers": {"first": 20}}],
        "blind_seat": 2,
    }
    done = tablectl("replay", "-", stdin=json.dumps(doc))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["blind"] is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "line 1 column 2: not valid JSON"),
        ("[1, 2]", "round file: a round file is a JSON object"),
        ('{"seats": []}', "game: is required"),
    ],
)
def test_text_that_is_not_a_round_file_is_refused(text: str, says: str) -> None:
    done = tablectl("replay", "-", stdin=text)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_a_missing_round_file_is_refused_by_name(tmp_path: Path) -> None:
    done = tablectl("replay", str(tmp_path / "nope.json"))
    assert done.returncode == 2 and "nope.json: cannot read the round file" in done.stderr


def test_hand_prints_the_replay_md_example() -> None:
    done = tablectl("hand", "--wild", "3,9", "AS", "KS", "3D", "9C", "QS", "7S", "2H")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "category": "straight flush",
        "best": ["AS", "KS", "QS", "JS", "TS"],
        "strength": [9, 14],
    }


def test_hand_without_wild_cards_and_with_ten_written_10() -> None:
    done = tablectl("hand", "10h", "jh", "qh", "kh", "ah")
    assert json.loads(done.stdout) == {
        "category": "straight flush",
        "best": ["AH", "KH", "QH", "JH", "TH"],
        "strength": [9, 14],
    }
    done = tablectl("hand", "3D", "9C", "QS", "7S", "2H")
    assert json.loads(done.stdout)["category"] == "high card"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["AS", "KS", "QS", "JS"], "five"),
        (["AS", "KS", "QS", "JS", "XX"], "cards[4]: 'XX' is not a card"),
        (["--wild", "1", "AS", "KS", "QS", "JS", "TS"], "--wild[0]: '1' is not a rank"),
        (["AS", "KS", "QS", "JS", "JK"], "joker"),
    ],
)
def test_hand_refuses_bad_input_with_one_line(args: list[str], says: str) -> None:
    done = tablectl("hand", *args)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr


def test_replay_imports_no_opencv_fastapi_or_gpiozero(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    path.write_text(json.dumps(EXAMPLE))
    probe = (
        "import sys, contextlib, io\n"
        "from controller.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['replay', {str(path)!r}]) == 0\n"
        "    assert main(['hand', 'AS', 'KS', 'QS', 'JS', 'TS']) == 0\n"
        "heavy = sorted(m for m in ('cv2', 'fastapi', 'gpiozero', 'serial', 'numpy', 'uvicorn') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_run_refuses_a_demo_dealer_at_a_live_table() -> None:
    done = tablectl("run", "--demo")
    assert done.returncode == 2 and "--demo needs --sim" in done.stderr


def test_run_names_the_file_and_key_of_a_bad_config(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nbaudrate = 1234\n')
    done = tablectl("run", "--sim", "--config", str(config), "--state-dir", str(tmp_path))
    assert done.returncode == 2
    assert f"{config}: shoe.baudrate: must be one of" in done.stderr and "not 1234" in done.stderr


def test_a_live_table_without_api_tokens_refuses_to_start(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "/dev/ttyUSB7"\n[display]\nurl = "/dev/ttyUSB8"\n')
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("TABLECTL_")}
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--state-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )
    assert done.returncode == 78, done.stderr
    assert "a real table needs its API tokens: set TABLECTL_DEALER_TOKEN and TABLECTL_SUPERVISOR_TOKEN" in done.stderr
