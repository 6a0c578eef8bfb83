"""Poker hand ranking: the categories, wild cards (GAMES.md section 3), `tablectl hand`'s object
(REPLAY.md), the Grand Slam POKER BONUS hands, and agreement with a brute-force evaluator."""

from __future__ import annotations

import re
from collections import Counter
from typing import TypedDict, Unpack

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine import hands as hands_module
from controller.engine.cards import STANDARD_DECK, Card, CardError, Rank, Suit, parse_cards
from controller.engine.hands import HandValue, evaluate
from controller.engine.hands_batch import card_number, category_of, evaluate_batch, strength_of
from tests.engine.hand_oracle import brute_force, score_five

THREES_AND_NINES = frozenset({Rank.THREE, Rank.NINE})


class Rules(TypedDict, total=False):
    """The wild-card rule options `evaluate` takes as keywords."""

    double_ace_flush: bool
    natural_wins: bool


def hand(text: str, wild: frozenset[Rank] = frozenset(), **rules: Unpack[Rules]) -> HandValue:
    return evaluate(parse_cards(text.split()), wild, **rules)


def wild_hand(text: str, **rules: Unpack[Rules]) -> HandValue:
    """A Baseball poker hand: threes and nines are wild."""
    return hand(text, THREES_AND_NINES, **rules)


def shown(value: HandValue) -> str:
    return " ".join(str(card) for card in value.best)


# --- `tablectl hand` -------------------------------------------------------------------------


def test_replay_example_prints_the_royal_flush_the_two_wild_cards_complete() -> None:
    value = wild_hand("AS KS 3D 9C QS 7S 2H")
    assert value.to_json() == {
        "category": "straight flush",
        "best": ["AS", "KS", "QS", "JS", "TS"],
        "strength": [9, 14],
    }
    assert value.wild_used == 2


def test_without_wild_ranks_threes_and_nines_are_ordinary_cards() -> None:
    value = hand("AS KS 3D 9C QS 7S 2H")
    assert value.to_json() == {
        "category": "high card",
        "best": ["AS", "KS", "QS", "9C", "7S"],
        "strength": [1, 14, 13, 12, 9, 7],
    }


# --- every category, natural ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "category", "best", "strength"),
    [
        ("AS JD 8C 6H 2S", "high card", "AS JD 8C 6H 2S", (1, 14, 11, 8, 6, 2)),
        ("9C KH 5S KD 2D", "pair", "KH KD 9C 5S 2D", (2, 13, 9, 5, 2)),
        ("4C JS 4H JD AC", "two pair", "JS JD 4H 4C AC", (3, 11, 4, 14)),
        ("7D 7S QC 7C 2H", "three of a kind", "7S 7D 7C QC 2H", (4, 7, 12, 2)),
        ("9D 6C 8H TS 7S", "straight", "TS 9D 8H 7S 6C", (5, 10)),
        ("2H KH 9H 4H JH", "flush", "KH JH 9H 4H 2H", (6, 13, 11, 9, 4, 2)),
        ("5C QD 5S QS QH", "full house", "QS QH QD 5S 5C", (7, 12, 5)),
        ("8S 8D 3C 8C 8H", "four of a kind", "8S 8H 8D 8C 3C", (8, 8, 3)),
        ("7H 4H 6H 5H 8H", "straight flush", "8H 7H 6H 5H 4H", (9, 8)),
    ],
)
def test_each_category_made_with_natural_cards(
    cards: str, category: str, best: str, strength: tuple[int, ...]
) -> None:
    value = hand(cards)
    assert (value.category, shown(value), value.strength, value.wild_used) == (
        category,
        best,
        strength,
        0,
    )


def test_five_of_a_kind_from_a_six_deck_shoe_needs_no_wild_card() -> None:
    value = hand("KS KS KH KD KC")
    assert (value.category, value.strength) == ("five of a kind", (10, 13))


# --- every category, with threes and nines wild -----------------------------------------------


@pytest.mark.parametrize(
    ("cards", "category", "best", "strength", "wild_used"),
    [
        # The wild card pairs the ace, in the highest suit the aces do not show.
        ("AS 3D JC 7H 5D", "pair", "AS AH JC 7H 5D", (2, 14, 11, 7, 5), 1),
        ("KS KD 9C 8H 5D", "three of a kind", "KS KH KD 8H 5D", (4, 13, 8, 5), 1),
        ("QS 3C 9H 7D 2C", "three of a kind", "QS QH QD 7D 2C", (4, 12, 7, 2), 2),
        # The wild card is the missing 6; spades, since no 6 shows.
        ("8S 7D 3C 5H 4D", "straight", "8S 7D 6S 5H 4D", (5, 8), 1),
        ("KH 3C 8H 5H 2H", "flush", "AH KH 8H 5H 2H", (6, 14, 13, 8, 5, 2), 1),
        ("KS KD 7C 7H 3D", "full house", "KS KH KD 7H 7C", (7, 13, 7), 1),
        ("KS KD KC 3H 5D", "four of a kind", "KS KH KD KC 5D", (8, 13, 5), 1),
        ("JD TD 8D 7D 3C", "straight flush", "JD TD 9D 8D 7D", (9, 11), 1),
        # All four suits of king show, so the wild king is written as the king of spades.
        ("KS KD KC KH 3D", "five of a kind", "KS KS KH KD KC", (10, 13), 1),
        ("3S 3H 9D 9C 3D", "five of a kind", "AS AS AH AD AC", (10, 14), 5),
    ],
)
def test_each_category_made_with_wild_cards(
    cards: str, category: str, best: str, strength: tuple[int, ...], wild_used: int
) -> None:
    value = wild_hand(cards)
    assert (value.category, shown(value), value.strength, value.wild_used) == (
        category,
        best,
        strength,
        wild_used,
    )


def test_a_wild_card_makes_trips_of_a_pair_never_two_pair() -> None:
    assert wild_hand("KS KD 9C 7H 5D").category == "three of a kind"


def test_a_wild_card_always_makes_at_least_a_pair() -> None:
    assert wild_hand("AS JD 8C 6H 3S").category == "pair"


def test_five_of_a_kind_beats_a_royal_flush() -> None:
    assert wild_hand("2S 2D 2C 2H 3D").strength > hand("AS KS QS JS TS").strength


# --- straights -------------------------------------------------------------------------------


def test_wheel_is_a_five_high_straight_read_from_the_five_down() -> None:
    value = hand("AS 2D 3C 4H 5D")
    assert (value.category, shown(value), value.strength) == (
        "straight",
        "5D 4H 3C 2D AS",
        (5, 5),
    )
    assert value.strength < hand("2S 3D 4C 5H 6D").strength


def test_wild_card_fills_the_missing_three_of_a_wheel() -> None:
    value = hand("AS 2D 9C 4H 5D", frozenset({Rank.NINE}))
    assert (value.category, shown(value), value.strength) == (
        "straight",
        "5D 4H 3S 2D AS",
        (5, 5),
    )


def test_ace_does_not_wrap_around_from_king_to_two() -> None:
    assert hand("KS AD 2C 3H 4D").category == "high card"


# --- flushes with wild cards -------------------------------------------------------------------


def test_wild_card_in_a_flush_takes_the_highest_rank_the_flush_does_not_hold() -> None:
    value = wild_hand("AH 3C 8H 5H 2H")
    assert (shown(value), value.strength) == ("AH KH 8H 5H 2H", (6, 14, 13, 8, 5, 2))


def test_double_ace_flush_plays_the_wild_card_as_a_second_ace() -> None:
    value = wild_hand("AD 3C 8D 5D 2D", double_ace_flush=True)
    assert (shown(value), value.strength) == ("AD AD 8D 5D 2D", (6, 14, 14, 8, 5, 2))


def test_double_ace_flush_decides_against_an_ace_king_queen_flush() -> None:
    ace_king_queen = hand("AS KS QS TS 7S")
    # Standard rule: A-K-8-5-2 loses to A-K-Q-T-7; double ace flush: A-A-8-5-2 wins.
    assert wild_hand("AD 3C 8D 5D 2D").strength < ace_king_queen.strength
    assert wild_hand("AD 3C 8D 5D 2D", double_ace_flush=True).strength > ace_king_queen.strength


def test_double_ace_flush_makes_every_wild_card_in_a_flush_an_ace() -> None:
    value = wild_hand("AD 3C 9H 8D 2D", double_ace_flush=True)
    assert (shown(value), value.strength) == ("AD AD AD 8D 2D", (6, 14, 14, 14, 8, 2))


# --- natural wins ---------------------------------------------------------------------------


def test_wild_hand_ties_the_same_natural_hand_by_default() -> None:
    natural = hand("KS KD KC 7H 2D")
    with_wild = wild_hand("KH KS 3D 7C 2S")
    assert natural.strength == with_wild.strength


def test_natural_wins_puts_the_natural_hand_above_the_same_wild_hand() -> None:
    natural = wild_hand("KS KD KC 7H 2D", natural_wins=True)
    with_wild = wild_hand("KH KS 3D 7C 2S", natural_wins=True)
    assert natural.strength > with_wild.strength
    # Natural wins decides only between equal hands: a better wild hand still wins.
    assert wild_hand("AH AS 3D 7C 2S", natural_wins=True).strength > natural.strength


def test_natural_wins_lets_a_player_leave_a_spare_wild_card_out_of_a_natural_straight() -> None:
    natural = wild_hand("AS KD QC JH TS 3D 2C", natural_wins=True)
    assert (natural.category, natural.wild_used) == ("straight", 0)
    assert natural.strength > wild_hand("AH KH QD JC 3S 2D 4C", natural_wins=True).strength


# --- kickers and the best five of six or seven ------------------------------------------------


def test_kicker_decides_between_equal_pairs() -> None:
    assert hand("AS AD KC 7H 4D").strength > hand("AH AC QS 7D 4S").strength
    assert hand("AS AD KC 7H 4D").strength == hand("AH AC KS 7D 4S").strength


def test_fifth_card_kicker_decides_between_equal_two_pairs() -> None:
    assert hand("AS AD 5C 5H 9D").strength > hand("AH AC 5S 5D 8S").strength


def test_best_five_of_seven_drops_the_lowest_of_three_pairs() -> None:
    value = hand("2C 2D 7H 7S KD KC AS")
    assert (value.category, shown(value), value.strength) == (
        "two pair",
        "KD KC 7S 7H AS",
        (3, 13, 7, 14),
    )


def test_best_five_of_seven_prefers_the_flush_to_the_straight() -> None:
    value = hand("9H 8H 7C 6H 5H 2H KD")
    assert (value.category, shown(value)) == ("flush", "9H 8H 6H 5H 2H")


def test_best_five_of_six_makes_a_full_house_of_two_threes() -> None:
    value = hand("5C 5D QS QH 5H QD")
    assert (value.category, shown(value), value.strength) == (
        "full house",
        "QS QH QD 5H 5D",
        (7, 12, 5),
    )


def test_six_wild_cards_among_seven_still_play_five_aces() -> None:
    value = wild_hand("3S 3H 3D 9S 9H 9D 2C")
    assert (value.category, value.strength, value.wild_used) == ("five of a kind", (10, 14), 5)


# --- wild cards named one by one (paying for wild cards) -------------------------------------


def by_position(text: str, wild_cards: set[int], **rules: Unpack[Rules]) -> HandValue:
    return evaluate(parse_cards(text.split()), wild_cards=wild_cards, **rules)


def test_a_wild_rank_card_not_named_wild_plays_at_its_own_rank_and_suit() -> None:
    # Only the 9C (position 3) is wild: four spades A-K-Q-7 and one wild card make a flush, the
    # wild card taking the jack, the highest rank the flush lacks; the 3D is just a three. (With
    # both wild the same cards make the royal flush of the REPLAY.md example.)
    value = by_position("AS KS 3D 9C QS 7S 2H", {3})
    assert value.to_json() == {
        "category": "flush",
        "best": ["AS", "KS", "QS", "JS", "7S"],
        "strength": [6, 14, 13, 12, 11, 7],
    }
    assert value.wild_used == 1


def test_an_unpaid_three_shows_as_itself_beside_a_paid_one() -> None:
    # The 3S is wild and joins the kings; the 3D is not and is the last kicker.
    value = by_position("3S 3D KH KD 7C", {0})
    assert (value.category, shown(value), value.strength) == ("three of a kind", "KS KH KD 7C 3D", (4, 13, 7, 3))


def test_no_position_named_means_no_wild_card_even_of_a_wild_rank() -> None:
    assert by_position("AS KS 3D 9C QS 7S 2H", set()) == hand("AS KS 3D 9C QS 7S 2H")


def test_natural_wins_counts_an_unpaid_wild_rank_card_as_natural() -> None:
    # Trip kings with a seven and a three that is not wild is a natural hand; the same hand made
    # with a wild three (the 3D) and a three that is not (the 3S) loses to it under natural wins.
    natural = by_position("KS KD KC 7H 3D", set(), natural_wins=True)
    with_wild = by_position("KH KS 3D 7C 3S", {2}, natural_wins=True)
    assert natural.strength[:-1] == with_wild.strength[:-1]
    assert natural.strength > with_wild.strength


@pytest.mark.parametrize(
    ("positions", "says"),
    [({7}, "wild card position 7 is not among the 7 cards (positions 0 to 6)"), ({-1}, "not -1"), ({True}, "not True")],
)
def test_a_wild_card_position_outside_the_hand_is_refused(positions: set[int], says: str) -> None:
    with pytest.raises(CardError, match=re.escape(says)):
        by_position("AS KS 3D 9C QS 7S 2H", positions)


# --- refusals ------------------------------------------------------------------------------


def test_joker_is_refused_with_a_pointer_to_wild_ranks() -> None:
    with pytest.raises(CardError, match="--wild"):
        hand("JK AS KS QS JS")


def test_fewer_than_five_cards_are_refused() -> None:
    with pytest.raises(CardError, match="five or more cards, not of 4"):
        hand("AS KS QS JS")


def test_a_card_repeated_from_a_six_deck_shoe_is_accepted() -> None:
    assert hand("AS AS KD 7C 2H").strength == (2, 14, 13, 7, 2)


# --- Grand Slam POKER BONUS ------------------------------------------------------------------


# --- agreement with the brute-force evaluator ---------------------------------------------------

WILD_CARDS = [c for c in STANDARD_DECK if c.rank in THREES_AND_NINES]
NATURAL_CARDS = [c for c in STANDARD_DECK if c.rank not in THREES_AND_NINES]


@st.composite
def baseball_hands(draw: st.DrawFn) -> list[Card]:
    """Five to seven cards with at most two threes or nines, sometimes with repeats (a six-deck
    shoe), often crowded into few ranks and suits so straights, flushes and groups turn up."""
    size = draw(st.integers(5, 7))
    wild_count = draw(st.integers(0, 2))
    repeats = draw(st.booleans())
    if draw(st.booleans()):
        suits = draw(st.sets(st.sampled_from(list(Suit)), min_size=1, max_size=2))
        low = draw(st.integers(2, 10))
        ranks = {*range(low, low + 5), int(Rank.ACE)} - {3, 9}
        pool = [c for c in NATURAL_CARDS if c.suit in suits and c.rank in ranks]
    else:
        pool = NATURAL_CARDS
    naturals = draw(
        st.lists(st.sampled_from(pool), min_size=size - wild_count, max_size=size - wild_count,
                 unique=not repeats and len(pool) >= size)
    )
    wilds = draw(st.lists(st.sampled_from(WILD_CARDS), min_size=wild_count, max_size=wild_count))
    return draw(st.permutations(naturals + wilds))


@settings(max_examples=150, deadline=None)
@given(cards=baseball_hands(), double_ace_flush=st.booleans(), natural_wins=st.booleans())
def test_evaluate_agrees_with_brute_force(
    cards: list[Card], double_ace_flush: bool, natural_wins: bool
) -> None:
    rules: Rules = {"double_ace_flush": double_ace_flush, "natural_wins": natural_wins}
    value = evaluate(cards, THREES_AND_NINES, **rules)
    assert (value.category, value.strength) == brute_force(cards, THREES_AND_NINES, **rules)
    # The five cards shown score what the strength says, and every card shown that the player
    # does not hold is one of the wild cards.
    core = value.strength[:-1] if natural_wins else value.strength
    assert score_five(value.best, [], double_ace_flush) == core
    held = Counter(c for c in cards if c.rank not in THREES_AND_NINES)
    stand_ins = Counter(value.best) - held
    wild_count = len(cards) - held.total()
    assert stand_ins.total() <= value.wild_used <= min(wild_count, 5)
    if len(set(cards)) == len(cards):  # one deck's cards: the numpy batch ranks them the same
        row = [card_number(c) for c in cards] + [-1] * (7 - len(cards))
        [code] = evaluate_batch([row], THREES_AND_NINES, **rules)
        assert strength_of(code, natural_wins) == value.strength


@settings(max_examples=100, deadline=None)
@given(first=baseball_hands(), second=baseball_hands(), natural_wins=st.booleans())
def test_two_hands_compare_as_the_brute_force_compares_them(
    first: list[Card], second: list[Card], natural_wins: bool
) -> None:
    # Strengths are tuples, so the order is antisymmetric and transitive by construction; what
    # can go wrong is which hand wins, so that is checked against the brute force.
    def sign(a: tuple[int, ...], b: tuple[int, ...]) -> int:
        return (a > b) - (a < b)

    a = evaluate(first, THREES_AND_NINES, natural_wins=natural_wins).strength
    b = evaluate(second, THREES_AND_NINES, natural_wins=natural_wins).strength
    oracle_a = brute_force(first, THREES_AND_NINES, natural_wins=natural_wins)[1]
    oracle_b = brute_force(second, THREES_AND_NINES, natural_wins=natural_wins)[1]
    assert sign(a, b) == sign(oracle_a, oracle_b)


@st.composite
def wild_positions(draw: st.DrawFn, cards: list[Card]) -> set[int]:
    """Up to two positions named wild, of any rank: a three left out plays natural, a king named
    plays wild."""
    return draw(st.sets(st.integers(0, len(cards) - 1), max_size=2))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), cards=baseball_hands(), double_ace_flush=st.booleans(), natural_wins=st.booleans())
def test_evaluate_with_wild_cards_named_by_position_agrees_with_brute_force(
    data: st.DataObject, cards: list[Card], double_ace_flush: bool, natural_wins: bool
) -> None:
    positions = data.draw(wild_positions(cards))
    rules: Rules = {"double_ace_flush": double_ace_flush, "natural_wins": natural_wins}
    value = evaluate(cards, wild_cards=positions, **rules)
    assert (value.category, value.strength) == brute_force(cards, wild_cards=positions, **rules)
    core = value.strength[:-1] if natural_wins else value.strength
    assert score_five(value.best, [], double_ace_flush) == core
    # Every card shown that is not one of the player's natural cards stands for a wild card.
    held = Counter(c for i, c in enumerate(cards) if i not in positions)
    assert (Counter(value.best) - held).total() <= value.wild_used <= len(positions)


@settings(max_examples=300, deadline=None)
@given(cards=baseball_hands(), double_ace_flush=st.booleans(), natural_wins=st.booleans())
def test_naming_every_three_and_nine_by_position_is_the_same_as_naming_their_ranks(
    cards: list[Card], double_ace_flush: bool, natural_wins: bool
) -> None:
    rules: Rules = {"double_ace_flush": double_ace_flush, "natural_wins": natural_wins}
    positions = {i for i, c in enumerate(cards) if c.rank in THREES_AND_NINES}
    assert evaluate(cards, wild_cards=positions, **rules) == evaluate(cards, THREES_AND_NINES, **rules)


@settings(max_examples=200, deadline=None)
@given(
    cards=baseball_hands(),
    wild=st.sampled_from([frozenset(), THREES_AND_NINES, frozenset({Rank.TWO})]),
    double_ace_flush=st.booleans(),
    natural_wins=st.booleans(),
)
def test_the_fast_path_gives_what_the_category_by_category_evaluator_gives(
    cards: list[Card], wild: frozenset[Rank], double_ace_flush: bool, natural_wins: bool
) -> None:
    # Twice with the same rules: the first call may set the fast path up, the second takes it
    # (and a table entry the first one made); both must be the long way's hand, best included.
    reference = hands_module._evaluate_full(tuple(cards), _bits(wild), None, double_ace_flush, natural_wins)
    for _ in range(2):
        value = evaluate(cards, wild, double_ace_flush=double_ace_flush, natural_wins=natural_wins)
        assert value == reference
        assert (value.category, value.strength, value.wild_used) == (
            reference.category, reference.strength, reference.wild_used
        )  # fmt: skip
        assert value.best == reference.best


def _bits(wild: frozenset[Rank]) -> int:
    return sum(1 << rank for rank in wild)


def test_a_hand_keeps_its_cards_when_the_callers_list_changes_afterwards() -> None:
    # `best` is picked only when read, from the cards the hand kept: not from the list.
    cards = parse_cards(["AS", "KS", "QS", "JS", "TD", "7C", "8H"])
    value = evaluate(cards, THREES_AND_NINES)
    cards[:] = parse_cards(["2C", "2D", "4H", "5S", "TC", "JD", "KC"])
    assert (value.category, shown(value)) == ("straight", "AS KS QS JS TD")
    assert evaluate(cards, THREES_AND_NINES).category == "pair"


def test_cards_from_a_generator_and_a_tuple_are_ranked_as_a_list() -> None:
    text = ["AS", "KS", "3D", "9C", "QS", "7S", "2H"]
    expected = evaluate(parse_cards(text), THREES_AND_NINES)
    assert evaluate(iter(parse_cards(text)), THREES_AND_NINES) == expected
    assert evaluate(tuple(parse_cards(text)), THREES_AND_NINES) == expected


# --- many hands at once (numpy) ---------------------------------------------------------------


def test_a_batch_ranks_the_replay_example_and_hands_of_five_to_seven_cards() -> None:
    def row(text: str) -> list[int]:
        numbers = [card_number(c) for c in parse_cards(text.split())]
        return numbers + [-1] * (7 - len(numbers))

    rows = [row("AS KS 3D 9C QS 7S 2H"), row("AS 2D 3C 4H 5D"), row("3S 3H 9D 9C 3D 2C")]
    codes = evaluate_batch(rows, THREES_AND_NINES)
    # The wild 3C fills the wheel's three; five wild cards make five aces.
    assert [strength_of(c) for c in codes] == [(9, 14), (5, 5), (10, 14)]
    assert list(category_of(codes)) == [9, 5, 10]
    assert strength_of(evaluate_batch(rows[:1])[0]) == (1, 14, 13, 12, 9, 7)  # no wild card


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ([0, 0, 1, 2, 3, 4, 5], "at most once"),
        ([0, 1, 2, 3, -1, -1, -1], "five or more"),
        ([0, 1, 2, 3, 52], "0 to 51"),
        ([0, 1, 2, 3, 4, 5, 6, 7], "at most 7"),
    ],
)
def test_a_batch_refuses_what_is_not_a_hand_of_one_deck(row: list[int], says: str) -> None:
    with pytest.raises(CardError, match=says):
        evaluate_batch([row])
