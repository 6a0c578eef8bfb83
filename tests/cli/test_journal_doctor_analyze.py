"""The CLI as an operator types it (issue 30, item 11): `journal verify --state-dir D` works from
the state directory alone, as README writes it; `journal --sim` finds the simulated table's
journal as `recall --sim` does (the one game here, or one line asking for --game); `journal` and
`doctor` take `--game`; the long analyses say how far they have got on standard error while
standard output keeps the figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.app.config import DEFAULT_PATH
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

TABLECTL = [sys.executable, "-m", "controller.cli"]
JOKERS_ROUND = {"banker": {"stake": 100}, "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 10}]}]}
no_table_here = pytest.mark.skipif(DEFAULT_PATH.exists(), reason="this machine is configured as a table")


def _jokers_journal(state_dir: Path) -> None:
    """A settled Jokers 22 round, with a one-deck rule the configuration would give."""
    table = Table(Journal(state_dir / "journal.sqlite3"), game="jokers-22", rules={"decks": 1}, simulated=True)
    table.open_round(JOKERS_ROUND, by="dealer")
    for text in ["AH", "9C", "AD"]:
        table.card(parse_card(text), {"via": "test"})
    table.decide({"spot": 1, "action": "stand"}, by="dealer")
    table.card(parse_card("8D"), {"via": "test"})
    assert table.awaiting.kind == "round"
    table.journal.close()


def tablectl(cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@no_table_here
def test_journal_verify_works_from_the_state_directory_alone(tmp_path: Path) -> None:
    state = tmp_path / "copy-of-table-7"
    _jokers_journal(state)
    out = tablectl(tmp_path, "journal", "verify", "--state-dir", str(state))
    assert out.returncode == 0, out.stderr
    assert "entries of a jokers-22 table" in out.stdout and "snapshots all pass" in out.stdout, out.stdout
    rebuilt = tablectl(tmp_path, "journal", "rebuild", "--state-dir", str(state))
    assert rebuilt.returncode == 0, rebuilt.stderr
    # Retention needs what only the table's configuration says: one line asking for it.
    retain = tablectl(tmp_path, "journal", "retain", "--state-dir", str(state))
    assert retain.returncode == 2 and retain.stderr.count("\n") == 1 and "add --config FILE" in retain.stderr
    missing = tablectl(tmp_path, "journal", "verify", "--state-dir", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "there is no journal here" in missing.stderr, missing.stderr


def test_journal_sim_finds_the_one_game_and_asks_for_game_as_recall_does(tmp_path: Path) -> None:
    _jokers_journal(tmp_path / ".tablectl-sim" / "jokers-22")
    one = tablectl(tmp_path, "journal", "verify", "--sim")
    assert one.returncode == 0, one.stderr
    assert ".tablectl-sim/jokers-22/journal.sqlite3" in one.stdout and "a jokers-22 table" in one.stdout, one.stdout

    Journal(tmp_path / ".tablectl-sim" / "grand-slam" / "journal.sqlite3").close()
    for command in (["journal", "verify", "--sim"], ["recall", "--sim"], ["doctor", "--sim"]):
        several = tablectl(tmp_path, *command)
        assert several.returncode == 2, (command, several.stdout, several.stderr)
        assert "(grand-slam, jokers-22): add --game NAME" in several.stderr, several.stderr
        assert several.stderr.count("\n") == 1, several.stderr

    chosen = tablectl(tmp_path, "journal", "verify", "--sim", "--game", "jokers-22")
    assert chosen.returncode == 0 and "a jokers-22 table" in chosen.stdout, chosen.stderr
    unknown = tablectl(tmp_path, "journal", "verify", "--sim", "--game", "blackjack")
    assert unknown.returncode == 2 and "--game blackjack: unknown game" in unknown.stderr, unknown.stderr


def test_doctor_takes_game_and_checks_that_games_simulated_journal(tmp_path: Path) -> None:
    _jokers_journal(tmp_path / ".tablectl-sim" / "jokers-22")
    Journal(tmp_path / ".tablectl-sim" / "grand-slam" / "journal.sqlite3").close()
    out = tablectl(tmp_path, "doctor", "--sim", "--game", "jokers-22")
    assert "Traceback" not in out.stderr, out.stderr
    report = " ".join(out.stdout.split())  # lines wrapped at 100 columns
    assert "jokers-22, simulated table" in report, report
    assert "journal .tablectl-sim/jokers-22/journal.sqlite3: 6 entries" in report, report
    live = tablectl(tmp_path, "doctor", "--game", "jokers-22", "--config", str(tmp_path / "none.toml"))
    assert live.returncode == 2 and live.stderr.count("\n") == 1, live.stderr


def test_analyze_baseball_poker_says_how_far_it_has_got_on_stderr(tmp_path: Path) -> None:
    out = tablectl(tmp_path, "analyze", "baseball-poker", "--rounds", "4000", "--workers", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rounds"] == 4000  # the figures alone on standard output
    lines = out.stderr.splitlines()
    assert "2000/4000 rounds (50%)" in lines and "4000/4000 rounds (100%)" in lines, out.stderr


def test_analyze_grand_slam_says_which_wager_it_is_working_out_on_stderr(tmp_path: Path) -> None:
    out = tablectl(tmp_path, "analyze", "grand-slam", "--json")
    assert out.returncode == 0, out.stderr
    assert "wagers" in json.loads(out.stdout)
    lines = out.stderr.splitlines()
    assert lines[0].startswith("0/") and lines[-1].endswith("wagers (100%)"), out.stderr
    assert any("(poker_bonus)" in line for line in lines), out.stderr
