"""`tablectl analyze`: the outside contract, the exact figures, and Monte Carlo agreeing with them."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from controller.games import simulate
from controller.games.jokers22.analysis import analyze as analyze_jokers22
from tests.exact import grand_slam_figures


def tablectl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "analyze", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_the_json_contract_for_an_infinite_deck() -> None:
    done = tablectl("grand-slam", "--decks", "0", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["wagers"]["first"]["house_edge"] == "573/2197"
    assert doc["wagers"]["first+second"]["house_edge"] == "328/2197"
    assert doc["wagers"]["first+second+third"]["house_edge"] == "19/6591"
    assert doc["side_bets"]["three_outs"]["house_edge"] == "28/2197"
    assert set(doc["side_bets"]) == {"three_outs", "poker_bonus"}
    assert doc["grand_slam_at_table"]["1"]["p"] == "1/13"


@pytest.mark.slow
def test_a_six_deck_shoe_and_an_operator_paytable(tmp_path: Path) -> None:
    done = tablectl(
        "grand-slam",
        "--decks",
        "6",
        "--paytable",
        "pair=1,flush=4,straight=5,three-of-a-kind=30",
        "--json",
        "--chart",
        str(tmp_path / "chart.png"),
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["poker_bonus_paytable"] == {"pair": 1, "flush": 4, "straight": 5, "three of a kind": 30}
    edge = Fraction(doc["side_bets"]["poker_bonus"]["house_edge"])
    assert edge != Fraction(21456, 626665)  # the default paytable's 6-deck edge: this table differs
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["grand-slam", "--units", "1,2,1"], "third <= second <= first"),
        (["grand-slam", "--paytable", "pair=one"], "write hand=odds"),
        (["grand-slam", "--paytable", "royal=5"], "'royal' is not a three-card hand"),
        (["baseball-poker", "--monte-carlo", "--players", "9"], "--players 9: a Baseball poker table seats 2 to 8"),
    ],
)
def test_bad_options_are_refused_in_one_line(args: list[str], says: str) -> None:
    done = tablectl(*args)
    assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_text_report_names_each_wager() -> None:
    done = tablectl("grand-slam", "--decks", "0")
    assert "first+second+third" in done.stdout and "19/6591 = 0.2883%" in done.stdout


@pytest.mark.slow
def test_monte_carlo_agrees_with_the_exact_figures() -> None:
    exact = grand_slam_figures(decks=6)
    simulated = simulate("grand-slam", 6000, seed=11, workers=2, decks=6, units=(1, 1, 1))
    for name in ("first", "first+second", "first+second+third", "three_outs"):
        gap = abs(simulated[name].house_edge - float(exact[name].house_edge))
        # Within 4 standard errors (the 95% half-width is 1.96 of them): a seeded, repeatable check.
        assert gap < 4 * simulated[name].ci95 / 1.96, (name, simulated[name].house_edge, float(exact[name].house_edge))


@pytest.mark.slow
def test_monte_carlo_is_the_same_whatever_the_number_of_workers() -> None:
    one = simulate("grand-slam", 2500, seed=5, workers=1, decks=0, units=(1, 1, 1))
    two = simulate("grand-slam", 2500, seed=5, workers=2, decks=0, units=(1, 1, 1))
    assert {k: (t.total, t.squares) for k, t in one.items()} == {k: (t.total, t.squares) for k, t in two.items()}


@pytest.mark.slow
def test_jokers_22_banker_edge_by_simulation() -> None:
    done = tablectl("jokers-22", "--monte-carlo", "--rounds", "3000", "--seed", "3", "--json")
    assert done.returncode == 0, done.stderr
    banker = json.loads(done.stdout)["banker"]
    assert banker["rounds"] == 3000 and 0 < banker["ci95"] < 0.05
    # The exact edge of the same strategy (infinite shoe: a 6-deck shoe differs by 0.01%).
    assert abs(banker["house_edge"] - analyze_jokers22(decks=0).banker_edge) < 2 * banker["ci95"]


def test_baseball_poker_showdown_categories_and_rainouts_by_simulation() -> None:
    done = tablectl("baseball-poker", "--monte-carlo", "--rounds", "400", "--players", "4", "--seed", "2", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    frequencies = [c["frequency"] for c in doc["showdown_categories"].values()]
    assert abs(sum(frequencies) - 1) < 1e-5  # every showdown hand is exactly one category
    # With 3s and 9s wild, five of a kind happens and beats the straight flush in rarity.
    assert (
        0 < doc["showdown_categories"]["five of a kind"]["frequency"] < doc["showdown_categories"]["pair"]["frequency"]
    )
    # A queen of spades face up rains out about one hand in two (some hands see it more than once).
    assert 0.2 < doc["rainouts_per_hand"]["mean"] < 1.5
    text = tablectl("baseball-poker", "--monte-carlo", "--rounds", "50", "--players", "3")
    assert "five of a kind" in text.stdout and "rainouts per hand" in text.stdout


@pytest.mark.slow
def test_the_paytable_can_come_from_the_tables_config(tmp_path: Path) -> None:
    config = tmp_path / "table.toml"
    config.write_text("[rules]\npoker_bonus_paytable = { pair = 2, flush = 3, straight = 4 }\n")
    done = tablectl("grand-slam", "--decks", "0", "--config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["poker_bonus_paytable"] == {"pair": 2, "flush": 3, "straight": 4}
    bad = tmp_path / "bad.toml"
    bad.write_text("[rules]\npoker_bonus_paytable = { royal = 2 }\n")
    refused = tablectl("grand-slam", "--config", str(bad))
    assert refused.returncode == 2 and "'royal' is not a three-card hand" in refused.stderr
