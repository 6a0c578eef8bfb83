"""A brute-force poker evaluator: the reference `evaluate` is checked and benchmarked against.

It shares no code with controller/engine/hands.py. It tries every five-card subset and every
way to replace each wild card in it by one of the 52 cards, scores each resulting five cards by
the textbook definitions, and keeps the maximum. The wild-card rules of GAMES.md section 3 enter
only where a wild card stands for a card in a flush: it may not repeat a rank of the flush,
except that under the double-ace-flush rule it may be an ace. Under the natural-wins rule a
score gets a last element 1 when no wild card is among the five, else 0. Wild cards are named by
rank, or by position in the hand (`wild_cards`), as `evaluate` names them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from itertools import combinations, combinations_with_replacement

from controller.engine.cards import STANDARD_DECK, Card, Rank

NAMES = (
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

Score = tuple[int, ...]


def score_five(naturals: Sequence[Card], stand_ins: Sequence[Card], double_ace_flush: bool) -> Score:
    """Score five cards: the player's natural cards plus the cards wild cards stand for."""
    cards = [*naturals, *stand_ins]
    assert len(cards) == 5
    ranks = [int(c.rank) for c in cards if c.rank is not None]
    counts = Counter(ranks)
    # Tie-break order: bigger groups first, then higher ranks.
    ordered = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    tiebreak = tuple(r for r in ordered for _ in range(counts[r]))
    distinct = sorted(counts, reverse=True)
    straight_top = 0
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            straight_top = distinct[0]
        elif distinct == [14, 5, 4, 3, 2]:
            straight_top = 5
    one_suit = len({c.suit for c in cards}) == 1
    repeats_allowed = all(
        counts[int(c.rank)] == 1 or (double_ace_flush and c.rank == Rank.ACE)
        for c in stand_ins
        if c.rank is not None
    )
    flush = one_suit and repeats_allowed
    if shape == [5]:
        return (10, ordered[0])
    if straight_top and flush:
        return (9, straight_top)
    if shape == [4, 1]:
        return (8, *ordered)
    if shape == [3, 2]:
        return (7, *ordered)
    if flush:
        return (6, *sorted(ranks, reverse=True))
    if straight_top:
        return (5, straight_top)
    if shape == [3, 1, 1]:
        return (4, *tiebreak[2:])
    if shape == [2, 2, 1]:
        return (3, tiebreak[0], tiebreak[2], tiebreak[4])
    if shape == [2, 1, 1, 1]:
        return (2, *tiebreak[1:])
    return (1, *tiebreak)


def brute_force(
    cards: Sequence[Card],
    wild: AbstractSet[Rank] = frozenset(),
    *,
    double_ace_flush: bool = False,
    natural_wins: bool = False,
    wild_cards: Iterable[int] | None = None,
) -> tuple[str, Score]:
    """(category, strength) of the best hand among `cards`, by trying everything. With
    `wild_cards` the cards at those positions are the wild ones, instead of those of a `wild` rank."""
    listed = None if wild_cards is None else set(wild_cards)
    is_wild = [c.rank in wild if listed is None else i in listed for i, c in enumerate(cards)]
    best: Score = ()
    for five in combinations(range(len(cards)), 5):
        naturals = [cards[i] for i in five if not is_wild[i]]
        missing = 5 - len(naturals)
        # Wild cards are interchangeable, so each multiset of stand-ins is tried once.
        for stand_ins in combinations_with_replacement(STANDARD_DECK, missing):
            score = score_five(naturals, stand_ins, double_ace_flush)
            if natural_wins:
                score = (*score, 0 if missing else 1)
            best = max(best, score)
    return NAMES[best[0] - 1], best
