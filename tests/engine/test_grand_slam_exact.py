"""The exhaustive enumeration: all 13^3 rank sequences through the engine itself."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from controller.analysis.grand_slam import RANK_SEQUENCES, enumerate_rounds, figures_table, probabilities

README = Path(__file__).resolve().parents[2] / "README.md"


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
