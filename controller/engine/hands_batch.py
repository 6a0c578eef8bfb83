"""Poker hands by the hundred thousand: `evaluate_batch` ranks many hands at once with numpy.

For simulations. Each hand is a row of card numbers (`card_number`: 4 x (rank - 2) + suit, so
0 is 2C and 51 is AS; -1 is no card, for hands of different sizes), all from one 52-card deck.
The answer is one integer a hand whose order is the order of `hands.evaluate`'s `strength`
(`strength_of` turns it back into that tuple; `category_of` gives the category's number).

    >>> from controller.engine.cards import Rank, parse_cards
    >>> rows = [[card_number(c) for c in parse_cards("AS KS 3D 9C QS 7S 2H".split())]]
    >>> [strength_of(code) for code in evaluate_batch(rows, {Rank.THREE, Rank.NINE})]
    [(9, 14)]

The tables are `hands.py`'s own (filled by its category-by-category code), laid out as sorted
arrays: one for the hand without suits (rank counts and wild count) and one per wild count for
a suit's flush or straight flush (the suit's 13-bit rank mask). They are built on first use, for
hands of up to `MOST_CARDS` cards, and kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from functools import cache
from itertools import combinations_with_replacement

import numpy as np
import numpy.typing as npt

from controller.engine import hands
from controller.engine.cards import Card, CardError, Rank

#: The most cards a batch hand may hold.
MOST_CARDS = 7
_RANK_BITS = 3  # a rank's count (0-4) in the key without suits
_WILD_AT = 13 * _RANK_BITS
_SIZE_AT = _WILD_AT + 3
_RANKS_MASK = (1 << _WILD_AT) - 1
_TIE_BITS = 4

Codes = npt.NDArray[np.int64]


def card_number(card: Card) -> int:
    """The number of a card in a batch row: 4 x (rank - 2) + suit (2C is 0, AS is 51)."""
    if card.rank is None:
        raise CardError("the joker plays in no poker hand")
    return card.number


def encode(strength: Sequence[int]) -> int:
    """A strength tuple (without the natural-wins flag) as one integer of the same order."""
    code = strength[0]
    ties = list(strength[1:]) + [0] * (5 - len(strength) + 1)
    for rank in ties:
        code = (code << _TIE_BITS) | rank
    return code


def strength_of(code: int, natural_wins: bool = False) -> tuple[int, ...]:
    """`hands.evaluate`'s strength tuple from a batch code."""
    code = int(code)
    flag = None
    if natural_wins:
        code, flag = code >> 1, code & 1
    category = code >> (5 * _TIE_BITS)
    ties = [(code >> (_TIE_BITS * (4 - i))) & 15 for i in range(5)]
    length = _TIE_LENGTH[category]
    out = (category, *ties[:length])
    return (*out, flag) if flag is not None else out


def category_of(codes: Codes, natural_wins: bool = False) -> Codes:
    """The category numbers (1 high card .. 10 five of a kind) of batch codes."""
    return np.asarray(codes) >> (5 * _TIE_BITS + int(natural_wins))


# How many tie-breaking ranks follow each category's number.
_TIE_LENGTH = {1: 5, 2: 4, 3: 3, 4: 3, 5: 1, 6: 5, 7: 2, 8: 2, 9: 1, 10: 1}


def evaluate_batch(
    rows: npt.ArrayLike,
    wild: AbstractSet[Rank] = frozenset(),
    *,
    double_ace_flush: bool = False,
    natural_wins: bool = False,
) -> Codes:
    """The strength code of each row of card numbers (N x up to MOST_CARDS; -1 for no card),
    cards of a `wild` rank being wild, as `hands.evaluate` ranks them. Raises CardError for a row
    of fewer than five cards, a repeated card or a number that is not a card."""
    cards = np.asarray(rows)
    if cards.ndim != 2 or cards.shape[1] > MOST_CARDS:
        raise CardError(f"a batch is rows of at most {MOST_CARDS} card numbers, not shape {cards.shape}")
    if cards.size and (cards.min() < -1 or cards.max() > 51):
        raise CardError("a card number is 0 to 51 (4 x (rank - 2) + suit), or -1 for no card")
    by_card, wild_bits = _card_codes(frozenset(int(r) for r in wild))
    # Each card adds its rank's count (or the wild count) and the card count to one integer,
    # and its own bit to another (16 bits a suit, one a rank). No card, -1, reads the tables'
    # last entry, which is 0.
    columns = np.ascontiguousarray(cards.T, dtype=np.intp)  # one row a card: sums run down it
    summed = by_card[columns].sum(axis=0)
    deck_bits = _DECK_BIT[columns].sum(axis=0)
    sizes = summed >> _SIZE_AT
    # Adding distinct bits never carries: a repeated card shows as fewer bits than cards.
    if (np.bitwise_count(deck_bits) != sizes).any():
        raise CardError("a batch hand holds each card of the deck at most once")
    suit_masks = deck_bits & ~wild_bits
    if (sizes < 5).any():
        raise CardError("a poker hand is the best five of five or more cards")
    rank_key = summed & _RANKS_MASK
    wild_held = (summed >> _WILD_AT) & 7
    wild_count = np.minimum(wild_held, 5)
    natural_count = sizes - wild_held
    best = _best(rank_key, suit_masks, wild_count, natural_count, double_ace_flush)
    code = best >> 3
    if not natural_wins:
        return code
    used = 7 - (best & 7)
    enough = natural_count >= 5  # the hand without its wild cards is a poker hand
    plain = _best(
        np.where(enough, rank_key, _SOME_FIVE),
        suit_masks,
        np.zeros_like(wild_count),
        np.where(enough, natural_count, 5),
        double_ace_flush,
    )
    is_natural = (used == 0) | (enough & (plain >> 3 == code))
    flagged: Codes = (code << 1) | is_natural.astype(np.int64)
    return flagged


def _best(rank_key: Codes, suit_masks: Codes, wild_count: Codes, naturals: Codes, double_ace_flush: bool) -> Codes:
    """code << 3 | (7 - wild cards used) of each hand's best: so the maximum prefers fewer."""
    keys, values = _rank_table(np.bincount(wild_count * 8 + naturals, minlength=48))
    key = rank_key | (wild_count << _WILD_AT)
    # Open addressing: a key sits at its hash's slot or, taken, at the next free one after it.
    slot = _slot(key)
    best = values[slot]
    missed = np.flatnonzero(keys[slot] != key)
    while missed.size:
        slot[missed] = (slot[missed] + 1) & (_SLOTS - 1)
        stored = keys[slot[missed]]
        if (stored == _EMPTY).any():  # cannot happen for rows of distinct cards: the table holds them all
            raise CardError("a batch hand the tables do not hold")
        hit = stored == key[missed]
        best[missed[hit]] = values[slot[missed[hit]]]
        missed = missed[~hit]
    flushes = _flush_tables(double_ace_flush).reshape(-1)
    row = np.minimum(wild_count, 4) << 13
    for s in range(4):
        best = np.maximum(best, flushes[row | ((suit_masks >> (16 * s)) & 8191)])
    # Five wild cards make five aces: the rank table's answer, above any flush.
    return best


@cache
def _card_codes(wild: frozenset[int]) -> tuple[Codes, int]:
    """Per card number (then 0 for no card): its code in the summed key; and the bits of the
    wild cards among the deck bits."""
    by_card = np.zeros(53, dtype=np.int64)
    wild_bits = 0
    for number in range(52):
        rank, suit = number // 4, number % 4
        if rank + 2 in wild:
            by_card[number] = (1 << _WILD_AT) | (1 << _SIZE_AT)
            wild_bits |= 1 << (16 * suit + rank)
        else:
            by_card[number] = (1 << (_RANK_BITS * rank)) | (1 << _SIZE_AT)
    return by_card, wild_bits


_SLOTS = 1 << 19
_EMPTY = -1
_MULTIPLIER_INT = 0x9E3779B97F4A7C15  # Fibonacci hashing
_MULTIPLIER = np.uint64(_MULTIPLIER_INT)


def _slot(key: Codes) -> Codes:
    slot: Codes = (key.astype(np.uint64) * _MULTIPLIER >> np.uint64(64 - 19)).astype(np.int64)
    return slot


def _rank_table(blocks: Codes) -> tuple[Codes, Codes]:
    """The hash table (keys, values) of the hands without suits, holding at least every hand of
    the blocks asked for: blocks[8 * wild + naturals] > 0 asks for every way to hold that many
    natural cards beside that many wild cards (0-5)."""
    for block in np.flatnonzero(blocks).tolist():
        if block not in _BUILT:
            _fill(*divmod(block, 8))
            _BUILT.add(block)
    return _KEYS, _VALUES


def _fill(wild: int, size: int) -> None:
    """Put every hand of `size` natural cards (at most four of a rank) and `wild` wild cards in
    the table, with the code of its best hand without suits as hands.py finds it."""
    if not 5 <= wild + size <= MOST_CARDS:
        return  # no hand the batch holds
    for ranks in combinations_with_replacement(range(14, 1, -1), size):
        if any(ranks[i] == ranks[i + 4] for i in range(size - 4)):
            continue  # five of a rank: not from one deck
        key = wild << _WILD_AT
        for r in ranks:
            key += 1 << (_RANK_BITS * (r - 2))
        naturals = [(r, i % 4) for i, r in enumerate(ranks)]  # suits spread: no flush is looked for
        _, strength, used = hands._best_five(naturals, wild, False, suits=False)
        slot = (key * _MULTIPLIER_INT) % (1 << 64) >> (64 - 19)
        while _KEYS[slot] != _EMPTY:
            slot = (slot + 1) & (_SLOTS - 1)
        _KEYS[slot] = key
        _VALUES[slot] = (encode(strength) << 3) | (7 - used)


_KEYS = np.full(_SLOTS, _EMPTY, dtype=np.int64)
_VALUES = np.zeros(_SLOTS, dtype=np.int64)
_BUILT: set[int] = set()


@cache
def _flush_tables(double_ace_flush: bool) -> Codes:
    """[wild count 0-4, 13-bit rank mask of one suit] -> the code of that suit's best flush or
    straight flush (with the wild cards), or 0 when the suit cannot make one."""
    table = np.zeros((5, 1 << 13), dtype=np.int64)
    for wild in range(5):
        for mask in range(1 << 13):
            if mask.bit_count() + wild < 5:
                continue
            suit_key = _SPREAD[mask & 127] | (_SPREAD[mask >> 7] << 35) | (wild << hands._WILD_SHIFT)
            found = hands._BY_SUIT[double_ace_flush].get(suit_key) or hands._suit_entry(suit_key, double_ace_flush)
            table[wild, mask] = (encode(found[1]) << 3) | (7 - found[2])
    return table


# A 7-bit rank mask spread to one 5-bit field a rank, as hands.py keys a suit's ranks.
_SPREAD = [sum(1 << (5 * i) for i in range(7) if m >> i & 1) for m in range(128)]
_DECK_BIT = np.array([1 << (16 * (n % 4) + n // 4) for n in range(52)] + [0], dtype=np.int64)
_SOME_FIVE = 0b001_001_001_001_001  # 2 3 4 5 6: a key the table holds, for rows it is not asked about
