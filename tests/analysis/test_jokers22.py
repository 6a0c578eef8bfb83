"""`tablectl analyze jokers-22`: the exact banker's advantage for infinite and finite shoes, strategy
tables, coverage modes, and the Monte Carlo through the engine agreeing with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.games import simulate
from controller.games.jokers22.analysis import Strategy, analyze, read_strategy
from tests.analysis.jokers22_oracle import player_return
from tests.exact import jokers22_figures

# Doubles, splits and surrenders, against the banker's first card.
TABLE = """\
# a strategy that uses every choice the rules offer
hand,A,2,3,4,5,6,7,8,9,T,JK
16,R,H,H,S,S,S,H,H,RS,R,H
15,H,S,S,S,S,S,H,H,H,R,H
11,D,D,D,D,D,D,D,D,D,D,D
10,H,D,D,D,D,D,D,D,H,H,H
soft 18,S,DS,DS,DS,DS,DS,S,S,H,H,S
pair 8,P,P,P,P,P,P,P,P,P,P,P
pair 7,P,P,P,P,P,P,P,H,H,H,H
"""


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "analyze", "jokers-22", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "strategy.csv"
    path.write_text(TABLE)
    return path


@pytest.mark.parametrize(("stand_on", "jokers"), [(17, 1), (15, 1), (17, 2)])
def test_the_infinite_shoe_edge_is_the_independent_counts(stand_on: int, jokers: int) -> None:
    figures = analyze(decks=0, jokers_per_deck=jokers, strategy=Strategy(stand_on=stand_on))
    assert figures.player_return == pytest.approx(float(player_return(stand_on, jokers)), abs=1e-12)
    assert sum(figures.distribution.values()) == pytest.approx(1, abs=1e-12)


@pytest.mark.slow
def test_a_one_deck_shoe_without_replacement_has_its_own_edge_and_the_engine_agrees() -> None:
    finite = jokers22_figures(decks=1, depth=3)
    infinite = jokers22_figures(decks=0)
    # One joker in the shoe: a pair of jokers (paid 2 to 1, a net of 4 on 2 chips) cannot be dealt.
    assert infinite.distribution[4] > 0 and 4 not in finite.distribution
    assert finite.banker_edge != pytest.approx(infinite.banker_edge, abs=1e-5)
    simulated = simulate("jokers-22", 2000, seed=4, workers=2, decks=1, wager=2)["banker_edge"]
    # Within 4 standard errors (the 95% half-width is 1.96 of them): seeded, so repeatable.
    assert abs(simulated.house_edge - finite.banker_edge) < 4 * simulated.ci95 / 1.96


@pytest.mark.slow
def test_a_strategy_table_is_played_by_the_exact_count_and_by_the_engine_alike(table: Path) -> None:
    strategy = read_strategy(table)
    exact = analyze(decks=0, strategy=strategy)
    plain = jokers22_figures(decks=0)
    assert exact.banker_edge < plain.banker_edge - 0.01  # doubling 10 and 11 and splitting 8s pay
    assert {-4, -1, 4} <= set(exact.distribution)  # a lost double or split, a surrender, a won double
    simulated = simulate("jokers-22", 3000, seed=9, workers=2, decks=0, strategy=strategy, wager=2)["banker_edge"]
    assert abs(simulated.house_edge - exact.banker_edge) < 4 * simulated.ci95 / 1.96


def test_rotation_covers_a_short_stake_in_part_and_collect_first_takes_whole_losses() -> None:
    full = jokers22_figures(decks=0, wager=2)
    rotation = jokers22_figures(decks=0, wager=4, stake=2, coverage="rotation")
    collect = jokers22_figures(decks=0, wager=4, stake=2, coverage="collect-first")
    # Rotation: the 2 covered chips play, the other 2 go back whatever happens.
    assert rotation.banker_edge == pytest.approx(full.banker_edge / 2, abs=1e-12)
    # Collect-first: a loss is the whole wager, a win is paid only up to the stake.
    assert collect.distribution[-4] > 0 and max(collect.distribution) == 2
    assert collect.banker_edge > full.banker_edge
    simulated = simulate("jokers-22", 2000, seed=2, workers=2, decks=0, wager=4, stake=2, coverage="collect-first")
    edge = simulated["banker_edge"]
    assert abs(edge.house_edge - collect.banker_edge) < 4 * edge.ci95 / 1.96


@pytest.mark.slow
def test_the_command_gives_text_json_and_a_chart(table: Path, tmp_path: Path) -> None:
    chart = tmp_path / "j22.png"
    done = tablectl("--decks", "0", "--strategy", str(table), "--json", "--chart", str(chart))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert (doc["method"], doc["decks"], doc["coverage"], doc["wager"]) == ("exact", 0, "rotation", 2)
    assert str(table) in doc["player_strategy"]
    banker = doc["banker"]
    assert banker["banker_advantage_per_chip"] == -banker["player_return_per_chip"]
    assert banker["house_edge"] == pytest.approx(analyze(decks=0, strategy=read_strategy(table)).banker_edge, abs=1e-8)
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = tablectl("--decks", "1", "--jokers", "2", "--depth", "3")
    assert text.returncode == 0, text.stderr
    assert "1 decks + 2 joker(s) a deck, the first 3 cards exact" in text.stdout
    assert "banker's advantage" in text.stdout and "player's return" in text.stdout


@pytest.mark.parametrize(
    ("lines", "says"),
    [
        ("hand,A,2\n16,H,H\n", "no column for the banker's 3"),
        ("hand,A,2,3,4,5,6,7,8,9,T,JK\n16,H,H,H,H,H,H,H,H,H,H,X\n", "line 2: 'X' is not a code"),
        ("hand,A,2,3,4,5,6,7,8,9,T,JK\nseventeen,S,S,S,S,S,S,S,S,S,S,S\n", "line 2: 'seventeen' is not a hand"),
    ],
)
def test_a_bad_strategy_table_is_refused_naming_the_line(tmp_path: Path, lines: str, says: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(lines)
    done = tablectl("--decks", "0", "--strategy", str(path))
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1
