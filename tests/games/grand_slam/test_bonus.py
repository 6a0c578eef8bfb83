"""Grand Slam's POKER BONUS hand (GAMES.md section 1's paytable): its own evaluation, in its folder."""

from __future__ import annotations

import pytest

from controller.engine.cards import CardError, parse_cards
from controller.games.grand_slam.bonus import evaluate_three


@pytest.mark.parametrize(
    ("cards", "category", "read"),
    [
        ("7H 7H 7H", "suited three of a kind", "7H 7H 7H"),
        ("TS QS JS", "straight flush", "QS JS TS"),
        ("7D 7C 7H", "three of a kind", "7H 7D 7C"),
        ("2C AH 3D", "straight", "3D 2C AH"),
        ("KC AH QD", "straight", "AH KC QD"),
        ("2H KH 8H", "flush", "KH 8H 2H"),
        ("3S 8C 8D", "pair", "8D 8C 3S"),
        ("KS 4C 9D", "high card", "KS 9D 4C"),
    ],
)
def test_poker_bonus_category_and_reading(cards: str, category: str, read: str) -> None:
    value = evaluate_three(parse_cards(cards.split()))
    assert (value.category, " ".join(str(c) for c in value.cards)) == (category, read)


def test_poker_bonus_categories_rank_in_paytable_order() -> None:
    lowest_first = ["KS 9D 4C", "3S 8C 8D", "2H KH 8H", "2C AH 3D", "7D 7C 7H", "TS QS JS", "7H 7H 7H"]
    strengths = [evaluate_three(parse_cards(c.split())).strength for c in lowest_first]
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(strengths)


def test_king_ace_two_is_not_a_straight() -> None:
    assert evaluate_three(parse_cards(["KC", "AH", "2D"])).category == "high card"


def test_ace_two_three_is_the_lowest_straight_and_queen_king_ace_the_highest() -> None:
    def strength(text: str) -> tuple[int, ...]:
        return evaluate_three(parse_cards(text.split())).strength

    assert strength("AC 2H 3D") < strength("2C 3H 4D") < strength("JC QH KD") < strength("QC KH AD")


def test_poker_bonus_pair_kicker_decides() -> None:
    def strength(text: str) -> tuple[int, ...]:
        return evaluate_three(parse_cards(text.split())).strength

    assert strength("8S 8C KD") > strength("8H 8D QC")


@pytest.mark.parametrize("cards", [["AS", "KS"], ["AS", "KS", "QS", "JS"], ["AS", "KS", "JK"]])
def test_poker_bonus_refuses_anything_but_three_ordinary_cards(cards: list[str]) -> None:
    with pytest.raises(CardError):
        evaluate_three(parse_cards(cards))
