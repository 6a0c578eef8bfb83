"""The exhaustive enumeration: all 13^3 rank sequences through the engine itself."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from controller.games.grand_slam.analysis import (
    RANK_SEQUENCES,
    enumerate_rounds,
    figures_table,
    p_grand_slam_at_table,
    probabilities,
)
from tests.exact import grand_slam_figures

README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_enumeration_covers_every_rank_sequence_once_with_total_probability_one() -> None:
    outcomes = list(enumerate_rounds({"first": 1, "second": 1, "third": 1}))
    assert len(outcomes) == RANK_SEQUENCES == 13**3
    assert len({o.ranks for o in outcomes}) == 13**3
    assert sum(o.weight for o in outcomes) == 1


def test_grand_slam_and_three_outs_have_their_reference_probabilities_exactly() -> None:
    p = probabilities()
    assert p["grand_slam"] == Fraction(1, 13)
    assert p["three_outs"] == Fraction(5, 13) ** 3


def test_first_base_only_house_edge_matches_a_hand_derivation() -> None:
    # Derived by hand from the card table: home from first with a 3 or 4 (2/13); via third with a
    # 2 then 2-9 (1/13 * 8/13); via second with 5-9 then 2-3 (5/13 * 2/13) or 4-9 then 2-9 at third
    # (5/13 * 6/13 * 8/13).
    p_home = (
        Fraction(2, 13)
        + Fraction(1, 13) * Fraction(8, 13)
        + Fraction(5, 13) * (Fraction(2, 13) + Fraction(6, 13) * Fraction(8, 13))
    )
    expected = sum((o.weight * o.settlement["net"] for o in enumerate_rounds({"first": 1})), Fraction(0))  # type: ignore[misc,operator]
    assert expected == 2 * p_home - 1


def test_readme_reports_the_house_edges_this_enumeration_gives() -> None:
    assert figures_table() in README.read_text()


@pytest.mark.parametrize("decks", [1, 6])
def test_a_finite_shoe_gives_the_without_replacement_probabilities(decks: int) -> None:
    figures = grand_slam_figures(decks=decks)
    n, outs, fours = 52 * decks, 20 * decks, 4 * decks
    # Three out cards in a row, drawn without replacement, is the only way 3 OUT INSURANCE wins.
    assert figures["three_outs"].distribution[15] == Fraction(outs * (outs - 1) * (outs - 2), n * (n - 1) * (n - 2))
    # A Grand Slam (a 4 first) pushes the side bet.
    assert figures["three_outs"].distribution[0] == Fraction(fours, n)
    for f in figures.values():
        assert sum(f.distribution.values()) == 1


def test_the_infinite_deck_is_the_limit_of_ever_larger_shoes() -> None:
    infinite = grand_slam_figures(decks=0)["first+second+third"].house_edge
    edges = [grand_slam_figures(decks=d)["first+second+third"].house_edge for d in (1, 8, 64)]
    gaps = [abs(e - infinite) for e in edges]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < Fraction(1, 10000)


def test_unit_ratios_change_the_edge_and_the_spread() -> None:
    equal = grand_slam_figures(units=(1, 1, 1))["first+second+third"]
    heavy_first = grand_slam_figures(units=(3, 2, 1))["first+second+third"]
    assert heavy_first.wagered == 6 and equal.wagered == 3
    assert heavy_first.house_edge != equal.house_edge and heavy_first.sd > equal.sd


@pytest.mark.parametrize("decks", [0, 6])
def test_at_least_one_grand_slam_at_the_table_by_seat_count(decks: int) -> None:
    one = p_grand_slam_at_table(1, decks)
    assert one == Fraction(1, 13)
    seven = p_grand_slam_at_table(7, decks)
    if decks == 0:
        assert seven == 1 - Fraction(12, 13) ** 7
    else:  # no 4 among 7 first-base cards drawn from 312 holding 24 fours
        none = Fraction(1)
        for i in range(7):
            none *= Fraction(288 - i, 312 - i)
        assert seven == 1 - none
