"""Poker hand ranking: the best five of five or more cards, with wild cards (the game passes its
wild ranks and rules: Baseball poker's are its own, games/baseball/rules.py).

`evaluate` finds the best five cards a player can show, under the wild-card rules GAMES.md
writes for games with wild cards (section 3): a wild rank stands for any card, even one the
player already holds, so five of a kind exists and ranks above a straight flush; in a flush a
wild card takes the highest rank the flush does not already hold (with `double_ace_flush` every
wild card in a flush plays as an ace); with `natural_wins` a hand made with wild cards loses to
the same hand made without.

    >>> from controller.engine.cards import Rank, parse_cards
    >>> hand = evaluate(parse_cards("AS KS 3D 9C QS 7S 2H".split()), {Rank.THREE, Rank.NINE})
    >>> hand.to_json()
    {'category': 'straight flush', 'best': ['AS', 'KS', 'QS', 'JS', 'TS'], 'strength': [9, 14]}

Wildness goes by rank (`wild`) or, where one card of a wild rank plays wild and another does not
(a game that lets a player pay for a wild card), by position (`wild_cards`: the indices of the wild cards
in `cards`); a card of a wild rank not listed then plays at its own rank and suit.

    >>> evaluate(parse_cards("AS KS 3D 9C QS 7S 2H".split()), wild_cards={3}).to_json()["best"]
    ['AS', 'KS', 'QS', 'JS', '7S']

Hands compare by `strength` (greater wins, equal ties). The best hand is worked out from rank and
suit counts, category by category from the top, never by trying wild substitutions (`_best_five`);
since this runs inside Monte Carlo simulations, `evaluate` keeps what that finds in tables keyed
by a hand's rank counts and wild-card count (the best hand needing no suit), and by one suit's
rank counts (its best flush or straight flush), so that a hand seen before in that shape costs
a few integer additions and dict lookups. For five to seven cards under the wild ranks and rules
of the call before, a fast path adds one word-sized code a card and reads the whole value from
one table entry (see _fast_tables); a hand that can make a flush also looks up its suit. The
five cards of `best` are picked only when read, from the cards the value keeps.
`hands_batch.evaluate_batch` ranks many hands at once with numpy from the same tables.
(Grand Slam's three-card POKER BONUS is its own: games/grand_slam/bonus.py.)
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from operator import itemgetter
from typing import Any

from controller.engine.cards import Card, CardError, Rank, Suit

#: Poker categories, lowest first; a category's index here plus one leads its strength.
CATEGORIES: tuple[str, ...] = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
    "five of a kind",
)
(
    HIGH_CARD,
    PAIR,
    TWO_PAIR,
    THREE_OF_A_KIND,
    STRAIGHT,
    FLUSH,
    FULL_HOUSE,
    FOUR_OF_A_KIND,
    STRAIGHT_FLUSH,
    FIVE_OF_A_KIND,
) = range(1, 11)

# Inside the evaluator a card is (rank number, suit number): plain ints are what makes it fast.
RankSuit = tuple[int, int]

_ACE = 14
_SPADES = 3
_SUITS_HIGH_FIRST = (3, 2, 1, 0)
_RANKS_HIGH_FIRST = tuple(range(14, 1, -1))
# _CARD[rank][suit] is the Card again, for `best`.
_CARD: tuple[tuple[Card, ...], ...] = tuple(
    tuple(Card(Rank(r), Suit(s)) for s in range(4)) if r >= 2 else () for r in range(15)
)


def _window(top: int) -> tuple[int, ...]:
    """The ranks of the straight with this top card, as read: a wheel is 5-4-3-2-A."""
    return tuple(r if r > 1 else _ACE for r in range(top, top - 5, -1))


# Straights from the top down: (top card, ranks as read, bit mask of those ranks).
_STRAIGHTS: tuple[tuple[int, tuple[int, ...], int], ...] = tuple(
    (top, _window(top), sum(1 << r for r in _window(top))) for top in range(14, 4, -1)
)
# The best straight a rank mask makes with a number of wild cards, as (top, wild cards needed);
# filled as hands come, so a simulation pays for each mask once.
_STRAIGHT_CACHE: dict[tuple[int, int], tuple[int, int]] = {}


class HandValue(tuple):  # type: ignore[type-arg]
    """A player's best five cards: what `tablectl hand` prints and a showdown compares.

    `best` is ordered as a player reads the hand (groups by size then rank, straights from the
    top, a wheel as 5-4-3-2-A), a wild card written as the card it stands for. `strength` is the
    category's number (1 high card .. 10 five of a kind) then the ranks that break ties, plus,
    under the natural-wins rule, a last element 1 for a natural hand and 0 for one made with wild
    cards. `wild_used` counts the wild cards among the five.

    `evaluate` finds the category and strength from lookup tables; the five cards of `best` are
    picked only when first asked for, so a simulation that compares strengths never pays for
    them. A HandValue is immutable (a tuple underneath, which is what makes it cheap to make);
    two are equal when category, best, strength and wild_used are.
    """

    # Underneath: (category, strength, wild_used, rules, *cards), the rules and the cards being
    # what `best` is picked from (see Context). Made by tuple's own constructor, which is the
    # cheapest object Python makes; `of` makes one from its parts.

    @classmethod
    def of(cls, category: str, best: Iterable[Card], strength: Iterable[int], wild_used: int) -> HandValue:
        value = cls((category, tuple(strength), wild_used, None))
        value.__dict__["best"] = tuple(best)
        return value

    category: str = property(itemgetter(0))  # type: ignore[assignment]
    strength: tuple[int, ...] = property(itemgetter(1))  # type: ignore[assignment]
    wild_used: int = property(itemgetter(2))  # type: ignore[assignment]

    @property
    def best(self) -> tuple[Card, ...]:
        # Picked once, then kept in the instance's dict (the property is looked up first).
        found: tuple[Card, ...] | None = self.__dict__.get("best")
        if found is None:
            found = _evaluate_full(self[4:], *self[3]).best
            self.__dict__["best"] = found
        return found

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a HandValue cannot be changed (its {name})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandValue):
            return NotImplemented
        return self[:3] == other[:3] and self.best == other.best

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self[:3])

    def __repr__(self) -> str:
        return (
            f"HandValue(category={self.category!r}, best={self.best!r}, strength={self.strength!r}, "
            f"wild_used={self.wild_used!r})"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "category": self.category,
            "best": [str(card) for card in self.best],
            "strength": list(self.strength),
        }



def evaluate(
    cards: Iterable[Card],
    wild: AbstractSet[Rank] = frozenset(),
    *,
    double_ace_flush: bool = False,
    natural_wins: bool = False,
    wild_cards: Iterable[int] | None = None,
) -> HandValue:
    """The best five-card hand among `cards` (five or more), cards of a `wild` rank being wild.

    With `wild_cards` (positions in `cards`, counted from 0) exactly the cards at those
    positions are wild, whatever their rank, and `wild` is not used. Repeated cards are allowed
    (a six-deck shoe deals them); whether a deck can hold them is the shoe's concern. Raises
    CardError for fewer than five cards, a joker, or a position that is not among the cards.
    """
    # The fast path (see _fast_tables): the same wild ranks and rules as the last call, five to
    # seven cards; the hand's value is one table entry, made once (its five cards are picked
    # from the cards kept in it when `best` is read). A hand that can make a flush takes a second
    # look at its cards (_fast_flush); any other hand and any card the codes do not know go the
    # general way (_evaluate_tables), which also says what is wrong with a hand. The codes are
    # added with `+` (specialised int additions), measured quicker than sum() over a tuple of them.
    fast_wild, fast_aces, fast_natural, codes, table, context = _fast
    if wild is fast_wild and double_ace_flush is fast_aces and natural_wins is fast_natural and wild_cards is None:
        try:
            size = len(cards)  # type: ignore[arg-type]
            if size == 7:
                c0, c1, c2, c3, c4, c5, c6 = cards
                acc = (
                    _FAST_BASE
                    + codes[c0.number] + codes[c1.number] + codes[c2.number]
                    + codes[c3.number] + codes[c4.number] + codes[c5.number]
                    + codes[c6.number]
                )  # fmt: skip
                category, strength, used, rules = table[acc & _FAST_KEY]
                if category:
                    return HandValue((category, strength, used, rules, c0, c1, c2, c3, c4, c5, c6))
                return _fast_flush((c0, c1, c2, c3, c4, c5, c6), acc, table, context)
            elif size == 6:
                c0, c1, c2, c3, c4, c5 = cards
                acc = (
                    _FAST_BASE
                    + codes[c0.number] + codes[c1.number] + codes[c2.number]
                    + codes[c3.number] + codes[c4.number] + codes[c5.number]
                )  # fmt: skip
                category, strength, used, rules = table[acc & _FAST_KEY]
                if category:
                    return HandValue((category, strength, used, rules, c0, c1, c2, c3, c4, c5))
                return _fast_flush((c0, c1, c2, c3, c4, c5), acc, table, context)
            elif size == 5:
                c0, c1, c2, c3, c4 = cards
                acc = (
                    _FAST_BASE
                    + codes[c0.number] + codes[c1.number] + codes[c2.number]
                    + codes[c3.number] + codes[c4.number]
                )  # fmt: skip
                category, strength, used, rules = table[acc & _FAST_KEY]
                if category:
                    return HandValue((category, strength, used, rules, c0, c1, c2, c3, c4))
                return _fast_flush((c0, c1, c2, c3, c4), acc, table, context)
        except KeyError:  # a rank multiset not seen yet under these rules
            return _fast_miss(tuple(cards), acc, table, context)
        except (TypeError, AttributeError, IndexError, ValueError):  # not five to seven cards the codes know
            pass
        return _evaluate_tables(tuple(cards), context[0], None, double_ace_flush, natural_wins)
    return _evaluate_slow(cards, wild, double_ace_flush, natural_wins, wild_cards)


def _evaluate_slow(
    cards: Iterable[Card],
    wild: AbstractSet[Rank],
    double_ace_flush: bool,
    natural_wins: bool,
    wild_cards: Iterable[int] | None,
) -> HandValue:
    """`evaluate` for a call that is not the fast path's: other wild ranks or rules than the last
    call (which then become the fast path's, when they cannot change), or wild cards by position."""
    held = tuple(cards)
    if wild_cards is not None:
        positions = _positions(wild_cards)
        total = len(held)
        if positions and max(positions) >= total >= 5:
            raise CardError(
                f"wild card position {max(positions)} is not among the {total} cards (positions 0 to {total - 1})"
            )
        return _evaluate_tables(held, 0, positions, double_ace_flush, natural_wins)
    bits = 0
    for rank in wild:
        bits |= 1 << rank
    codes, table, context = _fast_tables(bits, bool(double_ace_flush), bool(natural_wins))
    if type(wild) is frozenset and type(double_ace_flush) is bool and type(natural_wins) is bool:
        # A set that cannot change, known again by identity: the next calls take the fast path.
        global _fast
        _fast = (wild, double_ace_flush, natural_wins, codes, table, context)
    if not 5 <= len(held) <= 7:
        return _evaluate_tables(held, bits, None, context[2], context[3])
    # The fast path's way, as a loop.
    acc = _FAST_BASE
    try:
        for card in held:
            acc += codes[card.number]  # type: ignore[operator]
        entry = table[acc & _FAST_KEY]
    except KeyError:
        return _fast_miss(held, acc, table, context)
    except (TypeError, AttributeError, IndexError):
        return _evaluate_tables(held, bits, None, context[2], context[3])
    if entry[0]:
        return HandValue((*entry, *held))
    return _fast_flush(held, acc, table, context)


def _evaluate_tables(
    held: tuple[Card, ...],
    wild_bits: int,
    positions: frozenset[int] | None,
    double_ace_flush: bool,
    natural_wins: bool,
) -> HandValue:
    """`evaluate` from the tables without the fast path: any number of cards, wild cards by rank
    (`wild_bits`) or by position, and any flush. Raises CardError for what is not a hand."""
    # One integer adds up every card's code: rank counts, wild cards, each suit's ranks and
    # count, and the number of cards (see _codes); the tables are keyed by slices of it.
    acc = 0
    try:
        if positions is None:
            codes = _CODES.get(wild_bits) or _codes(wild_bits)
            for card in held:
                acc += codes[card.rank._value_][card.suit._value_]  # type: ignore[union-attr]
        else:
            codes = _CODES.get(0) or _codes(0)
            for i, card in enumerate(held):
                code = codes[card.rank._value_][card.suit._value_]  # type: ignore[union-attr]
                acc += _WILD_CODE if i in positions else code
    except AttributeError:
        raise CardError(
            "the joker plays in no poker hand: deal it out of the hand, "
            "and name the wild ranks with --wild (for example --wild 3,9)"
        ) from None
    context = (wild_bits, positions, double_ace_flush, natural_wins)
    total = acc >> _TOTAL_SHIFT
    if total < 5:
        raise CardError(f"a poker hand is the best five of five or more cards, not of {total}")
    if total > _MOST_CARDS:  # more than the code's fields hold: the long way
        return _evaluate_full(held, *context)
    wild_count = (acc >> _WILD_SHIFT) & _FIELD
    if wild_count >= 5:
        entry = _best_code(acc, 5, double_ace_flush)
    else:
        entry = _BY_RANKS.get(acc & _KEY_MASK) or _rank_entry(acc & _KEY_MASK)
        if (acc + _NEED[wild_count]) & _TOP_BITS:
            entry = _best_code(acc, wild_count, double_ace_flush)
    if natural_wins:
        category, strength, used = entry
        if used and total - wild_count >= 5 and _best_code(acc, 0, double_ace_flush)[1] == strength:
            used = 0
        entry = (category, (*strength, 0 if used else 1), used)
    return HandValue((*entry, context, *held))  # `best` is picked when it is read


def _evaluate_full(
    held: tuple[Card, ...],
    wild_bits: int,
    positions: frozenset[int] | None,
    double_ace_flush: bool,
    natural_wins: bool,
) -> HandValue:
    """`evaluate` the long way, from rank and suit counts category by category: it picks the
    five cards of `best` as well as the strength (the tables give only the strength)."""
    naturals: list[RankSuit] = []
    wild_count = 0
    for total, card in enumerate(held):
        if card.rank is None or card.suit is None:
            raise CardError("the joker plays in no poker hand")
        r = card.rank._value_
        if (wild_bits >> r & 1) if positions is None else (total in positions):
            wild_count += 1
        else:
            naturals.append((r, card.suit._value_))
    naturals.sort(reverse=True)
    # A wild card can be anything a natural card can, so the best hand plays every wild card it
    # can fit; only five of them fit.
    found = _best_five(naturals, min(wild_count, 5), double_ace_flush)
    if natural_wins:
        if found[2] and len(naturals) >= 5:
            natural = _best_five(naturals, 0, double_ace_flush)
            if natural[1] == found[1]:
                found = natural
        found = (found[0], (*found[1], 0 if found[2] else 1), found[2])
    return _hand_value(found)


# --- the tables --------------------------------------------------------------------------------
#
# A card's code is a sum of fields, five bits each unless said: its rank's count (13 fields from
# bit 0), or the wild-card count (bit 65) for a wild card; then, for a natural card, its rank's
# count within its suit (four blocks of 13 fields from bit 70) and its suit's count (four 6-bit
# fields from bit 330); and 1 in the card count (bit 354). Adding the codes of a hand's cards
# gives all of these at once; no field overflows while the hand has at most 31 cards.

_FIELD = 31
_RANK_BITS = 65
_RANKS_MASK = (1 << _RANK_BITS) - 1
_WILD_SHIFT = 65
_KEY_MASK = (1 << 70) - 1  # rank counts and wild count: the key of the table without suits
_SUIT_SHIFT = (70, 135, 200, 265)
_COUNT_SHIFT = 330
_TOTAL_SHIFT = 354
_MOST_CARDS = 31
_WILD_CODE = (1 << _WILD_SHIFT) | (1 << _TOTAL_SHIFT)
# A suit's 6-bit count field plus _NEED[w] carries into the field's top bit when the count
# reaches 5 - w: the suits that can make a flush with w wild cards.
_NEED = tuple(sum((32 - (5 - w)) << (_COUNT_SHIFT + 6 * s) for s in range(4)) for w in range(5))
_TOP_BITS = sum(32 << (_COUNT_SHIFT + 6 * s) for s in range(4))
# Tables fill as hands come; a table that grows past this (hands of many cards) starts again.
_TABLE_LIMIT = 200_000  # about 50 MB: a Raspberry Pi worker keeps well within its memory

_CODES: dict[int, list[list[int]]] = {}
# By card number, for the fast path's flushes (see _suit_codes).
_SUIT_CODES: dict[int, list[int]] = {}
# category, strength, wild cards used: of the best hand that needs no suit (by rank counts and
# wild count), and of the best flush or straight flush in one suit (by the suit's rank counts
# and wild count), per double_ace_flush.
Entry = tuple[str, tuple[int, ...], int]
_BY_RANKS: dict[int, Entry] = {}
_BY_SUIT: tuple[dict[int, Entry], dict[int, Entry]] = ({}, {})


# --- the fast path's tables ------------------------------------------------------------------
#
# For five to seven cards a card's code is smaller (it fits one machine word): each suit's count
# in a 4-bit field (bits 0-15) that starts at 3 and that a wild card adds 1 to as well, so that
# the field's top bit is set exactly when that suit can make a flush (its natural cards plus the
# wild cards reach five); then each rank's count in a 3-bit field (from bit 16) and the wild-card
# count (bit 55). No field overflows with seven cards, repeated or not. The sum of a hand's codes
# with its suit counts cleared (flush bits kept) is the key of a table of the hand's value when no
# flush is possible: one dict lookup gives category, strength, wild cards used and the rules, all
# made once (a key with a flush bit is never in the table: such a hand goes the general way).

_FAST_BASE = 0x3333
_FAST_FLUSH = 0x8888
_FAST_RANK_SHIFT = 16
_FAST_WILD_SHIFT = 55
_FAST_KEY = ((1 << 58) - 1) & ~0x7777
_FAST_WILD_CODE = 0x1111 | (1 << _FAST_WILD_SHIFT)
_FAST_KEY_NO_FLUSH = _FAST_KEY & ~_FAST_FLUSH
# The flush bits of a fast code -> where the blocks of those suits start in _suit_codes's sum.
_FLUSH_SHIFTS: dict[int, tuple[int, ...]] = {
    bits: tuple(_RANK_BITS * s for s in range(4) if bits >> (4 * s + 3) & 1)
    for bits in (sum(8 << 4 * s for s in range(4) if mask >> s & 1) for mask in range(16))
}

# What a rule context is: wild ranks as bits, wild positions (None: by rank), double_ace_flush,
# natural_wins. A HandValue keeps it with its cards to pick `best` when asked.
Context = tuple[int, frozenset[int] | None, bool, bool]
FastEntry = tuple[str, tuple[int, ...], int, Context]
FastTables = tuple[list[int | None], dict[int, FastEntry], Context]
_FAST_TABLES: dict[Context, FastTables] = {}
_FAST_VALUES: dict[FastEntry, FastEntry] = {}  # each distinct entry once (see _fast_entry)


def _fast_tables(wild_bits: int, double_ace_flush: bool, natural_wins: bool) -> FastTables:
    """The fast path's codes (by card number, see Card.number; None for the joker) and table for these rules."""
    context: Context = (wild_bits, None, double_ace_flush, natural_wins)
    found = _FAST_TABLES.get(context)
    if found is None:
        codes: list[int | None] = []
        for n in range(52):  # rank n // 4 + 2, suit n % 4
            wild_card = wild_bits >> (n // 4 + 2) & 1
            codes.append(_FAST_WILD_CODE if wild_card else 1 << (_FAST_RANK_SHIFT + 3 * (n // 4)) | 1 << 4 * (n % 4))
        codes.append(None)  # the joker: the general way says why it plays in no poker hand
        found = (codes, {}, context)
        _FAST_TABLES[context] = found
    return found


def _fast_miss(held: tuple[Card, ...], acc: int, table: dict[int, FastEntry], context: Context) -> HandValue:
    """A hand whose fast key is not in the table yet: its entry is made and kept (for a key whose
    hand can make a flush, a mark that sends it to _fast_flush)."""
    key = acc & _FAST_KEY
    entry = _fast_entry(key, context) if not acc & _FAST_FLUSH else ("", (), 0, context)
    if len(table) >= _TABLE_LIMIT:
        table.clear()
    table[key] = entry
    if entry[0]:
        return HandValue((*entry, *held))
    return _fast_flush(held, acc, table, context)


def _fast_flush(held: tuple[Card, ...], acc: int, table: dict[int, FastEntry], context: Context) -> HandValue:
    """A fast-path hand that can make a flush: the best of the hand without suits and of each
    suit's best flush or straight flush, as _best_code finds it (five wild cards, and the
    natural-wins rule, go the general way)."""
    wild_bits, _, double_ace_flush, natural_wins = context
    wild = (acc >> _FAST_WILD_SHIFT) & 7
    if wild >= 5 or natural_wins:
        return _evaluate_tables(held, wild_bits, None, double_ace_flush, natural_wins)
    key = acc & _FAST_KEY_NO_FLUSH
    best = table.get(key)
    if best is None:
        best = table[key] = _fast_entry(key, context)
    # Every natural card's rank counted in its suit's block, all four suits in one sum; each
    # suit that can make a flush is then one slice of it, counted by rank as _suit_entry keys it.
    suit_codes = _SUIT_CODES.get(wild_bits) or _suit_codes(wild_bits)
    suits = 0
    for card in held:
        suits += suit_codes[card.number]
    by_suit = _BY_SUIT[double_ace_flush]
    wild_key = wild << _WILD_SHIFT
    for shift in _FLUSH_SHIFTS[acc & _FAST_FLUSH]:
        suit_key = (suits >> shift) & _RANKS_MASK | wild_key
        found = by_suit.get(suit_key) or _suit_entry(suit_key, double_ace_flush)
        if found[1] > best[1] or (found[1] == best[1] and found[2] < best[2]):  # fewer wild cards win ties
            best = (*found, context)
    return HandValue(best + held)


def _suit_codes(wild_bits: int) -> list[int]:
    """_suit_codes(bits)[n]: card number n's rank as a 5-bit count (_ranks_of's fields) in its
    suit's block of _RANK_BITS bits (suit s from bit s * _RANK_BITS); 0 for a wild card."""
    codes = [0 if wild_bits >> (n // 4 + 2) & 1 else 1 << (_RANK_BITS * (n % 4) + 5 * (n // 4)) for n in range(52)]
    _SUIT_CODES[wild_bits] = codes
    return codes


def _fast_entry(key: int, context: Context) -> FastEntry:
    """The value of a fast key (no flush possible) from the table without suits."""
    by_ranks = 0  # the same rank counts in _BY_RANKS's key
    naturals = 0
    for r in range(2, 15):
        count = (key >> (_FAST_RANK_SHIFT + 3 * (r - 2))) & 7
        by_ranks |= count << 5 * (r - 2)
        naturals += count
    wild = (key >> _FAST_WILD_SHIFT) & 7
    with_wild = by_ranks | wild << _WILD_SHIFT
    category, strength, used = _BY_RANKS.get(with_wild) or _rank_entry(with_wild)
    if context[3]:  # natural_wins: the same hand without wild cards plays as natural
        if used and naturals >= 5 and (_BY_RANKS.get(by_ranks) or _rank_entry(by_ranks))[1] == strength:
            used = 0
        strength = (*strength, 0 if used else 1)
    # One object a value, however many keys share it (most do: a hand's value mostly comes of its
    # top ranks): fewer objects to keep, and fewer for a run of hands to bring into the cache.
    entry = (category, strength, used, context)
    if len(_FAST_VALUES) >= _TABLE_LIMIT:
        _FAST_VALUES.clear()
    return _FAST_VALUES.setdefault(entry, entry)


_fast: tuple[Any, ...] = (object(), None, None, [], {}, (0, None, False, False))


def _codes(wild_bits: int) -> list[list[int]]:
    """_codes(bits)[rank][suit]: the code of each card, the ranks in `wild_bits` being wild."""
    table: list[list[int]] = [[0] * 4 for _ in range(15)]
    for r in range(2, 15):
        for s in range(4):
            if wild_bits >> r & 1:
                table[r][s] = _WILD_CODE
            else:
                field = 5 * (r - 2)
                table[r][s] = (
                    (1 << field)
                    | (1 << (_SUIT_SHIFT[s] + field))
                    | (1 << (_COUNT_SHIFT + 6 * s))
                    | (1 << _TOTAL_SHIFT)
                )
    _CODES[wild_bits] = table
    return table


def _best_code(acc: int, wild: int, double_ace_flush: bool) -> Entry:
    """The best hand of a summed code, with `wild` (0-5) of its wild cards in play."""
    key = (acc & _RANKS_MASK) | (wild << _WILD_SHIFT)
    best = _BY_RANKS.get(key)
    if best is None:
        best = _rank_entry(key)
    if wild < 5:
        suits = (acc + _NEED[wild]) & _TOP_BITS
        if suits:
            by_suit = _BY_SUIT[double_ace_flush]
            for s in range(4):
                if suits >> (_COUNT_SHIFT + 6 * s + 5) & 1:
                    suit_key = ((acc >> _SUIT_SHIFT[s]) & _RANKS_MASK) | (wild << _WILD_SHIFT)
                    found = by_suit.get(suit_key)
                    if found is None:
                        found = _suit_entry(suit_key, double_ace_flush)
                    if (found[1], -found[2]) > (best[1], -best[2]):
                        best = found
    return best


def _ranks_of(key: int) -> list[int]:
    """The ranks counted in the rank fields of `key`, high first."""
    ranks: list[int] = []
    for r in _RANKS_HIGH_FIRST:
        n = (key >> 5 * (r - 2)) & _FIELD
        if n:
            ranks += [r] * n
    return ranks


def _rank_entry(key: int) -> Entry:
    """Fill the table without suits: the best hand other than a flush or straight flush."""
    if len(_BY_RANKS) > _TABLE_LIMIT:
        _BY_RANKS.clear()
    # Suits spread so that no flush can form; _best_five is told to look for none anyway.
    naturals = [(r, i % 4) for i, r in enumerate(_ranks_of(key))]
    naturals.sort(reverse=True)
    _, strength, used = _best_five(naturals, key >> _WILD_SHIFT, False, suits=False)
    entry = (CATEGORIES[strength[0] - 1], strength, used)
    _BY_RANKS[key] = entry
    return entry


def _suit_entry(key: int, double_ace_flush: bool) -> Entry:
    """Fill a table of one suit: the best straight flush, else flush, of these ranks plus wild cards."""
    table = _BY_SUIT[double_ace_flush]
    if len(table) > _TABLE_LIMIT:
        table.clear()
    ranks = _ranks_of(key)
    wild = key >> _WILD_SHIFT
    mask = 0
    for r in ranks:
        mask |= 1 << r
    top, used = _straight(mask, wild)
    if top:
        entry: Entry = (CATEGORIES[STRAIGHT_FLUSH - 1], (STRAIGHT_FLUSH, top), used)
    else:
        chosen, used = _flush_ranks(ranks, wild, double_ace_flush)
        entry = (CATEGORIES[FLUSH - 1], (FLUSH, *chosen), used)
    table[key] = entry
    return entry


def _positions(wild_cards: Iterable[int]) -> frozenset[int]:
    """The positions of the wild cards, each checked to be a whole number from 0."""
    positions = frozenset(wild_cards)
    for position in positions:
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise CardError(f"a wild card is named by its position among the cards (0, 1, ...), not {position!r}")
    return positions


def _straight(mask: int, wild: int) -> tuple[int, int]:
    """The highest straight within the rank mask plus `wild` wild cards: (top, wild cards used),
    or (0, 0) when there is none."""
    key = (mask, wild)
    found = _STRAIGHT_CACHE.get(key)
    if found is None:
        found = (0, 0)
        for top, _, window in _STRAIGHTS:
            missing = (window & ~mask).bit_count()
            if missing <= wild:
                found = (top, missing)
                break
        _STRAIGHT_CACHE[key] = found
    return found


def _group(naturals: list[RankSuit], rank: int, size: int, held: int) -> list[RankSuit]:
    """`size` cards of `rank`: the player's `held` highest-suited ones, wild cards for the rest,
    each wild card taking the highest suit the group does not show yet (spades if all show)."""
    cards = [rs for rs in naturals if rs[0] == rank][:held]
    shown = {s for _, s in cards}
    for _ in range(size - held):
        suit = next((s for s in _SUITS_HIGH_FIRST if s not in shown), _SPADES)
        shown.add(suit)
        cards.append((rank, suit))
    cards.sort(reverse=True)
    return cards


def _kickers(naturals: list[RankSuit], groups: tuple[int, ...], count: int) -> list[RankSuit]:
    return [rs for rs in naturals if rs[0] not in groups][:count]


# What _best_five finds: the five cards (as rank, suit), the strength, the wild cards used.
Found = tuple[list[RankSuit], tuple[int, ...], int]


def _value(category: int, cards: list[RankSuit], tiebreak: tuple[int, ...], wild_used: int) -> Found:
    return cards, (category, *tiebreak), wild_used


def _hand_value(found: Found) -> HandValue:
    cards, strength, wild_used = found
    return HandValue.of(CATEGORIES[strength[0] - 1], [_CARD[r][s] for r, s in cards], strength, wild_used)


def _best_five(naturals: list[RankSuit], wild: int, double_ace_flush: bool, suits: bool = True) -> Found:
    """The best hand of the natural cards (sorted high first) plus `wild` wild cards (0-5),
    trying each category from five of a kind down; each step may assume every higher category
    failed, which bounds how many wild cards can still be in play. With `suits` false, flushes
    and straight flushes are not looked for (no lower category depends on their failing)."""
    counts = [0] * 15
    suit_count = [0, 0, 0, 0]
    suit_mask = [0, 0, 0, 0]
    mask = 0
    present: list[int] = []  # the ranks held, high first
    for r, s in naturals:
        if not counts[r]:
            present.append(r)
        counts[r] += 1
        suit_count[s] += 1
        bit = 1 << r
        suit_mask[s] |= bit
        mask |= bit
    most = max(counts)
    longest_suit = max(suit_count)

    if most + wild >= 5:
        # Five wild cards make five aces whatever else the player holds.
        rank = _ACE if wild >= 5 else next(r for r in present if counts[r] + wild >= 5)
        held = min(counts[rank], 5)
        return _value(FIVE_OF_A_KIND, _group(naturals, rank, 5, held), (rank,), 5 - held)

    if suits and (wild or longest_suit >= 5):
        best: tuple[int, int, int] | None = None  # top, -wild cards used, suit
        for s in _SUITS_HIGH_FIRST:
            if suit_count[s] + wild >= 5:
                top, used = _straight(suit_mask[s], wild)
                if top and (best is None or (top, -used) > best[:2]):
                    best = (top, -used, s)
        if best is not None:
            top, minus_used, s = best
            window = _STRAIGHTS[14 - top][1]
            return _value(STRAIGHT_FLUSH, [(r, s) for r in window], (top,), -minus_used)

    if most + wild >= 4:
        rank = next(r for r in present if counts[r] + wild >= 4)
        held = min(counts[rank], 4)
        cards = _group(naturals, rank, 4, held) + _kickers(naturals, (rank,), 1)
        return _value(FOUR_OF_A_KIND, cards, (rank, cards[4][0]), 4 - held)

    if most + wild >= 3:
        for trips in present:
            trips_held = min(counts[trips], 3)
            spare = wild - (3 - trips_held)
            if spare < 0:
                continue
            pair = next((r for r in present if r != trips and counts[r] + spare >= 2), 0)
            if pair:
                pair_held = min(counts[pair], 2)
                cards = _group(naturals, trips, 3, trips_held) + _group(naturals, pair, 2, pair_held)
                used = 5 - trips_held - pair_held
                return _value(FULL_HOUSE, cards, (trips, pair), used)

    if suits and longest_suit + wild >= 5:
        flush = _best_flush(naturals, suit_count, wild, double_ace_flush)
        ranks = tuple(r for r, _ in flush[0])
        return _value(FLUSH, flush[0], ranks, flush[1])

    top, used = _straight(mask, wild)
    if top:
        window = _STRAIGHTS[14 - top][1]
        cards = [next((rs for rs in naturals if rs[0] == r), (r, _SPADES)) for r in window]
        return _value(STRAIGHT, cards, (top,), used)

    if most + wild >= 3:
        rank = next(r for r in present if counts[r] + wild >= 3)
        held = min(counts[rank], 3)
        cards = _group(naturals, rank, 3, held) + _kickers(naturals, (rank,), 2)
        return _value(THREE_OF_A_KIND, cards, tuple(r for r, _ in cards[2:]), 3 - held)

    if most + wild >= 2:
        high = next(r for r in present if counts[r] + wild >= 2)
        high_held = min(counts[high], 2)
        spare = wild - (2 - high_held)
        low = next((r for r in present if r != high and counts[r] + spare >= 2), 0)
        if low:
            low_held = min(counts[low], 2)
            cards = (
                _group(naturals, high, 2, high_held)
                + _group(naturals, low, 2, low_held)
                + _kickers(naturals, (high, low), 1)
            )
            used = 4 - high_held - low_held
            return _value(TWO_PAIR, cards, (high, low, cards[4][0]), used)
        cards = _group(naturals, high, 2, high_held) + _kickers(naturals, (high,), 3)
        return _value(PAIR, cards, tuple(r for r, _ in cards[1:]), 2 - high_held)

    cards = naturals[:5]
    return _value(HIGH_CARD, cards, tuple(r for r, _ in cards), 0)


def _best_flush(
    naturals: list[RankSuit], suit_count: list[int], wild: int, double_ace_flush: bool
) -> tuple[list[RankSuit], int]:
    """The best flush over all suits as (cards high first, wild cards used); ties go to the
    flush using fewer wild cards, then to the higher suit."""
    best: tuple[tuple[int, ...], int, list[RankSuit]] | None = None
    for s in _SUITS_HIGH_FIRST:
        if suit_count[s] + wild < 5:
            continue
        chosen, used = _flush_ranks([r for r, suit in naturals if suit == s], wild, double_ace_flush)
        key = (tuple(chosen), -used)
        if best is None or key > best[:2]:
            best = (key[0], key[1], [(r, s) for r in chosen])
    assert best is not None  # the caller checked that some suit reaches five
    return best[2], -best[1]


def _flush_ranks(ranks: list[int], wild: int, double_ace_flush: bool) -> tuple[list[int], int]:
    """The five ranks of the best flush of one suit's `ranks` (high first) and `wild` wild cards
    (together five or more), and the wild cards it uses."""
    if double_ace_flush:
        # Every wild card in the flush plays as an ace, even beside the player's own ace.
        return ([_ACE] * wild + ranks)[:5], min(wild, 5)
    # Walk down from the ace: the player's cards of the suit where they hold the rank,
    # a wild card at each rank they do not (the highest the flush does not hold).
    chosen: list[int] = []
    used, i = 0, 0
    for rank in _RANKS_HIGH_FIRST:
        if i < len(ranks) and ranks[i] == rank:
            while i < len(ranks) and ranks[i] == rank and len(chosen) < 5:
                chosen.append(rank)
                i += 1
        elif used < wild:
            chosen.append(rank)
            used += 1
        if len(chosen) == 5:
            break
    return chosen, used
