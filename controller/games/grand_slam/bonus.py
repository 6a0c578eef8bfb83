"""Grand Slam's POKER BONUS: the three cards of a seat ranked as GAMES.md section 1's paytable
ranks them (no wild cards; A-2-3 and Q-K-A are straights, K-A-2 is not)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.engine.cards import Card, CardError

#: POKER BONUS categories, lowest first, as the paytable of GAMES.md section 1 orders them.
THREE_CARD_CATEGORIES: tuple[str, ...] = (
    "high card",
    "pair",
    "flush",
    "straight",
    "three of a kind",
    "straight flush",
    "suited three of a kind",
)

_ACE = 14


@dataclass(frozen=True, slots=True)
class ThreeCardHand:
    """The three cards of a Grand Slam POKER BONUS: category, the cards as read, and strength.

    `strength` is the category's number (1 high card .. 7 suited three of a kind) then the ranks
    that break ties; hands compare as these tuples compare.
    """

    category: str
    cards: tuple[Card, ...]
    strength: tuple[int, ...]


def evaluate_three(cards: Iterable[Card]) -> ThreeCardHand:
    """Rank exactly three cards as a POKER BONUS hand (no wild cards; A-2-3 and Q-K-A are
    straights, K-A-2 is not). Three cards of one suit are a flush even when two share a rank.
    """
    hand = tuple(cards)
    if len(hand) != 3:
        raise CardError(f"a POKER BONUS hand is exactly three cards, not {len(hand)}")
    held: list[tuple[int, int]] = []
    for card in hand:
        if card.rank is None or card.suit is None:
            raise CardError("the joker plays in no POKER BONUS hand: a Grand Slam shoe holds none")
        held.append((card.rank._value_, card.suit._value_))
    by_value = {(c.rank._value_, c.suit._value_): c for c in hand if c.rank is not None and c.suit is not None}
    held.sort(reverse=True)
    high, mid, low = (r for r, _ in held)
    suited = held[0][1] == held[1][1] == held[2][1]
    if high == low:
        category = 7 if suited else 5
        tiebreak: tuple[int, ...] = (high,)
    elif high - 1 == mid == low + 1:
        category = 6 if suited else 4
        tiebreak = (high,)
    elif (high, mid, low) == (_ACE, 3, 2):
        # The ace plays low: the lowest straight, read 3-2-A.
        category = 6 if suited else 4
        tiebreak = (3,)
        held = held[1:] + held[:1]
    elif suited:
        category = 3
        tiebreak = (high, mid, low)
    elif high == mid or mid == low:
        category = 2
        kicker = low if high == mid else high
        tiebreak = (mid, kicker)
        held.sort(key=lambda rs: (rs[0] == mid, rs), reverse=True)
    else:
        category = 1
        tiebreak = (high, mid, low)
    return ThreeCardHand(
        category=THREE_CARD_CATEGORIES[category - 1],
        cards=tuple(by_value[rs] for rs in held),
        strength=(category, *tiebreak),
    )
