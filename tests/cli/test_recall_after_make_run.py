"""`tablectl recall` after `make run`: it finds the journal the simulated table kept in
`.tablectl-sim/<game>/` of the directory it ran in, or says in one line which flag to add."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

TABLECTL = [sys.executable, "-m", "controller.cli"]
JOKERS_ROUND = {"banker": {"stake": 100}, "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 10}]}]}


def _jokers_journal(cwd: Path) -> None:
    """A settled Jokers 22 round in the journal `make run GAME=jokers-22` would keep."""
    table = Table(Journal(cwd / ".tablectl-sim" / "jokers-22" / "journal.sqlite3"), game="jokers-22", rules={}, simulated=True)
    table.open_round(JOKERS_ROUND, by="dealer")
    for text in ["AH", "9C", "AD"]:  # ann A A: a natural, asked stand or surrender; banker 9
        table.card(parse_card(text), {"via": "test"})
    table.decide({"spot": 1, "action": "stand"}, by="dealer")
    table.card(parse_card("8D"), {"via": "test"})
    assert table.awaiting.kind == "round"
    table.journal.close()


def _recall(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, "recall", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_recall_sim_finds_the_one_game_make_run_played(tmp_path: Path) -> None:
    _jokers_journal(tmp_path)
    out = _recall(tmp_path, "--sim", "--json")
    assert out.returncode == 0, out.stderr
    (record,) = json.loads(out.stdout)
    assert record["status"] == "settled" and record["round_file"]["game"] == "jokers-22"
    assert record["round_file"]["decisions"] == []  # the natural's stand is not listed (REPLAY.md)


@pytest.mark.skipif(Path("/etc/tablectl/table.toml").exists(), reason="this machine is configured as a table")
def test_recall_without_sim_says_in_one_line_to_add_sim(tmp_path: Path) -> None:
    _jokers_journal(tmp_path)
    out = _recall(tmp_path)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "add --sim" in out.stderr, out.stderr


def test_several_simulated_games_ask_for_game_in_one_line(tmp_path: Path) -> None:
    _jokers_journal(tmp_path)
    Journal(tmp_path / ".tablectl-sim" / "grand-slam" / "journal.sqlite3").close()
    out = _recall(tmp_path, "--sim")
    assert out.returncode == 2
    assert "(grand-slam, jokers-22): add --game NAME" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    chosen = _recall(tmp_path, "--sim", "--game", "jokers-22", "--json")
    assert chosen.returncode == 0 and len(json.loads(chosen.stdout)) == 1, chosen.stderr


def test_a_journal_of_another_game_is_refused_in_one_line(tmp_path: Path) -> None:
    _jokers_journal(tmp_path)
    out = _recall(tmp_path, "--sim", "--state-dir", ".tablectl-sim/jokers-22")  # the config's game: grand-slam
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "the journal is not a grand-slam table's" in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_make_run_starts_the_game_it_is_given() -> None:
    repo = Path(__file__).resolve().parents[2]
    for args, game in (((), "grand-slam"), (("GAME=jokers-22",), "jokers-22")):
        out = subprocess.run(["make", "-n", "-C", str(repo), "run", *args], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert f"tablectl run --sim --demo --game {game}" in out.stdout, out.stdout
