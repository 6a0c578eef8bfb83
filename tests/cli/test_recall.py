"""`tablectl recall`: the last rounds from the journal, and round files that replay to what the
table paid. At least the last 100 rounds stay recallable (regulators ask for 10)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from controller.engine.cards import ShoeComposition, parse_card
from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import replay

ROUNDS = 120


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal of 120 rounds dealt from a shuffled shoe, through the table core."""
    state = tmp_path_factory.mktemp("state")
    table = Table(Journal(state / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rng = random.Random(120)
    shoe = [str(c) for c in ShoeComposition(6).cards()]
    rng.shuffle(shoe)
    for n in range(ROUNDS):
        if len(shoe) < 30:  # the cut card: a new shoe between rounds
            table.shoe_reshuffled(by="dealer")
            shoe = [str(c) for c in ShoeComposition(6).cards()]
            rng.shuffle(shoe)
        seats = sorted(rng.sample(range(1, 8), rng.randint(1, 3)))
        table.open_round({"seats": [{"seat": s, "wagers": {"first": 10, "second": 5}} for s in seats]}, by="dealer")
        if n == 60:
            table.void(by="supervisor:Kim", reason="card exposed")
            continue
        while table.awaiting.kind == "card":
            table.card(parse_card(shoe.pop()), {"via": "test"})
        table.button("confirm", by="dealer")  # the payouts are made
    table.journal.close()
    return state


def recall(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "recall", "--sim", "--state-dir", str(state_dir), *args],
        capture_output=True, text=True, timeout=60, check=False,
    )


def test_recall_prints_the_last_rounds_oldest_first(state_dir: Path) -> None:
    done = recall(state_dir, "--last", "3")
    assert done.returncode == 0, done.stderr
    heads = [line.split()[:3] for line in done.stdout.splitlines() if line.startswith("round ")]
    assert heads == [["round", "118", "settled"], ["round", "119", "settled"], ["round", "120", "settled"]]
    assert "  seat " in done.stdout and "net " in done.stdout


def test_the_last_hundred_rounds_are_all_recallable_and_replay_to_what_was_paid(state_dir: Path) -> None:
    done = recall(state_dir, "--last", "100", "--json")
    rounds = json.loads(done.stdout)
    assert [r["round"] for r in rounds] == list(range(21, 121))
    for r in rounds:
        if r["status"] == "void":
            assert r["round"] == 61 and r["round_file"] is None
        else:
            assert settle_round_file(r["round_file"]) == r["settlement"]


def test_a_void_round_is_recalled_with_who_and_why(state_dir: Path) -> None:
    done = recall(state_dir, "--round", "61")
    assert done.returncode == 0
    assert "round 61  void" in done.stdout and "void by supervisor:Kim: card exposed" in done.stdout


def test_export_writes_a_round_file_that_tablectl_replay_settles_the_same(state_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "round-7.json"
    assert recall(state_dir, "--round", "7", "--export", str(out)).returncode == 0
    replayed = replay(out)
    paid = json.loads(recall(state_dir, "--round", "7", "--json").stdout)[0]["settlement"]
    assert replayed == paid


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--round", "500"], "there is no round 500"),
        (["--export", "x.json"], "--export needs --round N"),
        (["--round", "61", "--export", "-"], "the round was void (every wager went back); it has no round file"),
    ],
)
def test_recall_refuses_what_it_cannot_do_in_one_line(state_dir: Path, args: list[str], says: str) -> None:
    done = recall(state_dir, *args)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_recall_without_a_journal_says_so(tmp_path: Path) -> None:
    done = recall(tmp_path, "--last", "1")
    assert done.returncode == 2 and "there is no journal here" in done.stderr
