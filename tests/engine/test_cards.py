"""The card notation of GAMES.md and the shoe tracker."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.engine.cards import (
    JOKER,
    STANDARD_DECK,
    Card,
    CardError,
    Rank,
    ShoeComposition,
    ShoeTracker,
    Suit,
    parse_card,
)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        ("10h", "TH"),
        ("TD", "TD"),
        ("td", "TD"),
        ("2c", "2C"),
        ("jk", "JK"),
        (" kd ", "KD"),
        ("Qs", "QS"),
    ],
)
def test_card_text_is_read_case_insensitively_and_written_canonically(text: str, canonical: str) -> None:
    assert str(parse_card(text)) == canonical


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1S", "rank '1'"),
        ("AX", "suit 'X'"),
        ("", "write rank then suit"),
        ("A", "write rank then suit"),
        ("11H", "rank '11'"),
        ("JOKER", "rank 'JOKE'"),
        ("S A", "rank 'S '"),
    ],
)
def test_bad_card_text_is_refused_saying_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(CardError, match=f"{text!r} is not a card") as info:
        parse_card(text)
    assert says in str(info.value)


def test_non_text_is_refused() -> None:
    with pytest.raises(CardError, match="written as text"):
        parse_card(14)  # type: ignore[arg-type]


@given(st.sampled_from([*STANDARD_DECK, JOKER]))
def test_every_card_survives_format_then_parse(card: Card) -> None:
    assert parse_card(str(card)) == card
    assert parse_card(str(card).lower()) == card


def test_a_deck_is_52_distinct_cards_and_suits_order_clubs_to_spades() -> None:
    assert len(set(STANDARD_DECK)) == 52
    assert sorted(Suit, key=int) == [Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES]
    assert parse_card("2S") < parse_card("3C") < parse_card("3D") < parse_card("AS") < JOKER


@pytest.mark.parametrize(("decks", "jokers", "size"), [(6, 0, 312), (6, 1, 318), (1, 0, 52), (2, 2, 108)])
def test_shoe_composition_counts_every_card(decks: int, jokers: int, size: int) -> None:
    shoe = ShoeComposition(decks, jokers)
    assert shoe.size == size == len(list(shoe.cards()))
    assert shoe.count(parse_card("AS")) == decks
    assert shoe.count(JOKER) == decks * jokers


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_shoe_of_no_decks_is_refused(bad: object) -> None:
    with pytest.raises(CardError, match="at least one deck"):
        ShoeComposition(bad)  # type: ignore[arg-type]


def test_the_seventh_ace_of_spades_in_a_six_deck_shoe_is_refused_and_not_counted() -> None:
    tracker = ShoeTracker(ShoeComposition(6))
    ace = parse_card("AS")
    for _ in range(6):
        tracker.take(ace)
    with pytest.raises(CardError, match="holds only 6 and all have been dealt"):
        tracker.take(ace)
    assert tracker.remaining(ace) == 0
    assert tracker.dealt_count == 6
    assert tracker.remaining_count == 312 - 6


def test_a_joker_in_a_shoe_without_jokers_is_refused() -> None:
    tracker = ShoeTracker(ShoeComposition(6))
    with pytest.raises(CardError, match="holds no jokers"):
        tracker.take(JOKER)
    assert tracker.dealt_count == 0


def test_jokers_are_tracked_in_a_jokers_22_shoe() -> None:
    tracker = ShoeTracker(ShoeComposition(6, jokers_per_deck=1))
    for _ in range(6):
        tracker.take(JOKER)
    with pytest.raises(CardError):
        tracker.take(JOKER)


def test_no_card_comes_after_the_last_one() -> None:
    tracker = ShoeTracker(ShoeComposition(1), dealt=STANDARD_DECK)
    assert tracker.remaining_count == 0
    assert not tracker.remaining_cards()
    with pytest.raises(CardError, match="all 52 cards have already been dealt"):
        tracker.check(parse_card("AS"))


def test_remaining_cards_lists_what_the_shoe_still_holds() -> None:
    tracker = ShoeTracker(ShoeComposition(1), dealt=[parse_card("AS"), parse_card("KD")])
    left = tracker.remaining_cards()
    assert sum(left.values()) == 50
    assert parse_card("AS") not in left and left[parse_card("AH")] == 1
    tracker.reshuffle()
    assert tracker.remaining_count == 52


def test_rank_and_suit_symbols() -> None:
    assert [r.symbol for r in Rank] == ["2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K", "A"]
    assert Card(Rank.TEN, Suit.HEARTS) == parse_card("10H")


def test_a_card_number_is_four_times_rank_less_two_plus_suit_and_52_for_the_joker() -> None:
    # The numbers the batch evaluator's rows and phevaluator's ids use; a card read from text, or
    # sent through pickle to a simulation worker, has the same number and still equals the card.
    import pickle

    assert [c.number for c in sorted(STANDARD_DECK)] == list(range(52))
    assert parse_card("2C").number == 0 and parse_card("as").number == 51 and JOKER.number == 52
    for card in [*STANDARD_DECK, JOKER]:
        again = pickle.loads(pickle.dumps(card))
        assert again == card and again.number == card.number and hash(again) == hash(card)
    assert repr(parse_card("TH")) == "Card('TH')"


def test_each_card_is_written_as_its_rank_then_its_suit_and_the_joker_as_jk() -> None:
    ranks, suits = "23456789TJQKA", "CDHS"
    assert [str(card) for card in sorted(STANDARD_DECK)] == [r + s for r in ranks for s in suits]
    assert str(JOKER) == "JK" and str(parse_card("10h")) == "TH"


def _read_as_games_md_says(text: str) -> Card | None:
    """GAMES.md's notation, read here on its own: rank then suit, either case, 10 for T, JK."""
    t = text.strip().upper()
    if t == "JK":
        return JOKER
    ranks = {**{str(n): Rank(n) for n in range(2, 10)}, "T": Rank.TEN, "10": Rank.TEN, "J": Rank.JACK,
             "Q": Rank.QUEEN, "K": Rank.KING, "A": Rank.ACE}  # fmt: skip
    suits = {"C": Suit.CLUBS, "D": Suit.DIAMONDS, "H": Suit.HEARTS, "S": Suit.SPADES}
    if len(t) < 2 or t[:-1] not in ranks or t[-1] not in suits:
        return None
    return Card(ranks[t[:-1]], suits[t[-1]])


def test_every_short_text_reads_as_the_card_it_names_or_is_refused() -> None:
    """Canonical text (what the journal and the shoe hold, read by a look-up) and every other way
    of writing a card read alike: each text of one to three characters from the notation's
    letters, either case, with spaces around."""
    letters = "23456789TJQKA10CDHSjkqastcdhx "
    texts = {a + b for a in letters for b in letters} | {a + b + c for a in "1Tt" for b in "0Jj" for c in "CDHSKcs"}
    texts |= {f" {t} " for t in ("AS", "JK", "TD", "10H")} | {str(card) for card in (*STANDARD_DECK, JOKER)}
    read = 0
    for text in sorted(texts):
        expected = _read_as_games_md_says(text)
        if expected is None:
            with pytest.raises(CardError):
                parse_card(text)
            continue
        card = parse_card(text)
        assert (card, card.rank, card.suit, card.number, str(card)) == (
            expected, expected.rank, expected.suit, expected.number, str(expected)
        ), text
        read += 1
    assert read > 53 * 2  # canonical texts and other spellings both
