"""Cards, their one notation, shoe composition and the shoe tracker.

Every card anywhere in tablectl (journal, API, round files, logs, the shoe's wire) is a `Card`
written in the notation of GAMES.md: rank `2`-`9`, `T` (`10` accepted on input), `J`, `Q`, `K`,
`A`, then suit `C` `D` `H` `S`; the joker is `JK`. Input is case-insensitive, output canonical.

    >>> parse_card("10h")
    Card('TH')
    >>> str(parse_card("jk"))
    'JK'
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


class CardError(ValueError):
    """Text that is not a card, or a card a shoe cannot hold."""


class Rank(enum.IntEnum):
    """Card ranks by natural order (2 low, ace high); the value is the rank's number."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        return _RANK_SYMBOL[self]


class Suit(enum.IntEnum):
    """Suits, ordered as GAMES.md breaks ties: clubs < diamonds < hearts < spades."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        return "CDHS"[self]


_RANK_SYMBOL = {r: ("T" if r == 10 else "JQKA"[r - 11] if r > 10 else str(int(r))) for r in Rank}
_RANK_BY_SYMBOL = {sym: r for r, sym in _RANK_SYMBOL.items()} | {"10": Rank.TEN}
_SUIT_BY_SYMBOL = {s.symbol: s for s in Suit}
#: Each card's text by its number (`Card.number`; the joker's last): `str` of a card is one look-up
#: (the state's JSON writes every card dealt in a round again after each card).
_TEXT_BY_NUMBER: tuple[str, ...] = (*(r.symbol + s.symbol for r in Rank for s in Suit), "JK")


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card, or the joker (rank and suit both None).

    Cards order by rank then suit; the joker sorts last.
    """

    rank: Rank | None
    suit: Suit | None
    #: The card's number: 4 x (rank - 2) + suit, 2C 0 to AS 51, and 52 for the joker. A plain int
    #: made with the card: the poker evaluator looks its cards up by it in flat tables.
    number: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.rank is None) != (self.suit is None):
            raise CardError("a card has both a rank and a suit, or neither (the joker)")
        number = 52 if self.rank is None else 4 * (int(self.rank) - 2) + int(self.suit)  # type: ignore[arg-type]
        object.__setattr__(self, "number", number)

    @property
    def is_joker(self) -> bool:
        return self.rank is None

    def __str__(self) -> str:
        return _TEXT_BY_NUMBER[self.number]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return _sort_key(self) < _sort_key(other)


def _sort_key(card: Card) -> tuple[int, int]:
    if card.rank is None or card.suit is None:
        return (15, 0)
    return (int(card.rank), int(card.suit))


JOKER = Card(None, None)

#: The 52 ordinary cards, by suit then rank.
STANDARD_DECK: tuple[Card, ...] = tuple(Card(r, s) for s in Suit for r in Rank)


#: Each card by its canonical text ("AS", "TD", "JK"): the text every journal entry holds.
_CARD_BY_TEXT: dict[str, Card] = {str(card): card for card in (*STANDARD_DECK, JOKER)}


def parse_card(text: str) -> Card:
    """Read one card in GAMES.md notation; raise CardError saying why the text is not a card."""
    if type(text) is str and (card := _CARD_BY_TEXT.get(text)) is not None:
        return card  # canonical text, as the journal and the shoe's frames give it: a look-up
    if not isinstance(text, str):
        raise CardError(f"a card is written as text such as 'AS' or 'JK', not {text!r}")
    t = text.strip().upper()
    if t == "JK":
        return JOKER
    if len(t) < 2:
        raise CardError(f"{text!r} is not a card: write rank then suit, such as 'AS', 'TD' or 'JK'")
    rank = _RANK_BY_SYMBOL.get(t[:-1])
    suit = _SUIT_BY_SYMBOL.get(t[-1])
    if rank is None:
        raise CardError(f"{text!r} is not a card: rank {t[:-1]!r} is not one of 2-9, T (or 10), J, Q, K, A")
    if suit is None:
        raise CardError(f"{text!r} is not a card: suit {t[-1]!r} is not one of C, D, H, S")
    return Card(rank, suit)


def parse_cards(texts: Iterable[str]) -> list[Card]:
    return [parse_card(t) for t in texts]


@dataclass(frozen=True, slots=True)
class ShoeComposition:
    """What a full shoe holds: `decks` standard decks with `jokers_per_deck` jokers each."""

    decks: int
    jokers_per_deck: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.decks, int) or isinstance(self.decks, bool) or self.decks < 1:
            raise CardError(f"a shoe holds at least one deck, not {self.decks!r}")
        if (
            not isinstance(self.jokers_per_deck, int)
            or isinstance(self.jokers_per_deck, bool)
            or self.jokers_per_deck < 0
        ):
            raise CardError(f"jokers per deck is a whole number of 0 or more, not {self.jokers_per_deck!r}")

    def count(self, card: Card) -> int:
        """How many copies of `card` a full shoe holds."""
        return self.decks * (self.jokers_per_deck if card.is_joker else 1)

    @property
    def size(self) -> int:
        return self.decks * (52 + self.jokers_per_deck)

    def cards(self) -> Iterator[Card]:
        """Every card of a full shoe, unshuffled."""
        for _ in range(self.decks):
            yield from STANDARD_DECK
            for _ in range(self.jokers_per_deck):
                yield JOKER

    def describe(self) -> str:
        decks = f"{self.decks}-deck shoe"
        return decks if not self.jokers_per_deck else f"{decks} with {self.jokers_per_deck} joker(s) a deck"


class ShoeTracker:
    """Counts the cards that have left a shoe and refuses a card the shoe cannot hold.

    `take(card)` records a card as dealt, or raises CardError (an eighth ace of spades in a
    6-deck shoe, a joker in a shoe without jokers, any card once the shoe is empty) and records
    nothing, so the caller can raise a fault and the count stays right.

        >>> shoe = ShoeTracker(ShoeComposition(decks=1))
        >>> shoe.take(parse_card("AS")); shoe.remaining(parse_card("AS"))
        0
    """

    def __init__(self, composition: ShoeComposition, dealt: Iterable[Card] = ()) -> None:
        self.composition = composition
        self._dealt: Counter[Card] = Counter()
        self._total = 0
        for card in dealt:
            self.take(card)

    def remaining(self, card: Card) -> int:
        return self.composition.count(card) - self._dealt[card]

    @property
    def dealt_count(self) -> int:
        return self._total

    @property
    def remaining_count(self) -> int:
        return self.composition.size - self._total

    def remaining_cards(self) -> Counter[Card]:
        """Every card still in the shoe with how many of it remain."""
        left: Counter[Card] = Counter()
        for card in set(self.composition.cards()):
            n = self.remaining(card)
            if n:
                left[card] = n
        return left

    def check(self, card: Card) -> None:
        """Raise CardError if the shoe cannot give `card` now; record nothing."""
        if self.remaining_count <= 0:
            raise CardError(
                f"{card} cannot come from the {self.composition.describe()}: "
                f"all {self.composition.size} cards have already been dealt"
            )
        if self.composition.count(card) == 0:
            raise CardError(f"{card} cannot come from the {self.composition.describe()}: it holds no jokers")
        if self.remaining(card) <= 0:
            raise CardError(
                f"{card} cannot come from the {self.composition.describe()}: "
                f"it holds only {self.composition.count(card)} and all have been dealt"
            )

    def take(self, card: Card) -> None:
        self.check(card)
        self._dealt[card] += 1
        self._total += 1

    def reshuffle(self) -> None:
        """All cards back in the shoe (a new shoe after the shuffle)."""
        self._dealt.clear()
        self._total = 0

    def to_json(self) -> dict[str, int]:
        """The count: each card dealt since the last shuffle, with how many times."""
        return {str(card): n for card, n in sorted(self._dealt.items(), key=lambda item: str(item[0]))}

    def restore(self, dealt: dict[str, int]) -> None:
        """Set the count `to_json` wrote (the composition stays the table's)."""
        self._dealt = Counter({parse_card(text): int(n) for text, n in dealt.items()})
        self._total = sum(self._dealt.values())
