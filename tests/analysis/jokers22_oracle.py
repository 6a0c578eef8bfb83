"""An exact infinite-shoe count of Jokers 22 written without engine code: the reference the exact
analysis (controller/games/jokers22/analysis.py) is checked against, for a player who only hits or
stands. Moved here from benchmarks/bench_jokers22.py, where it was the benchmark's reference.

A hand's outcome is "JJ" (a pair of jokers), "NAT" (A+A or joker+A) or a total 4..30; every card
is drawn with the shoe's proportions (4 of each rank and `jokers` jokers in 52 + jokers cards).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

Outcome = object


def _cards(jokers: int) -> tuple[list[tuple[int, Fraction]], Fraction]:
    size = 52 + jokers
    ranks = [(v, Fraction(4, size)) for v in range(1, 10)] + [(10, Fraction(16, size))]
    return ranks, Fraction(jokers, size)


def final_hands(hits: Callable[[int, bool], bool], jokers: int = 1) -> dict[Outcome, Fraction]:
    """Distribution of a hand's outcome when it hits while `hits(value, soft)`."""
    ranks, joker = _cards(jokers)
    out: dict[Outcome, Fraction] = {}

    def add(key: Outcome, p: Fraction) -> None:
        out[key] = out.get(key, Fraction(0)) + p

    def draw(hard: int, ace: bool, p: Fraction) -> None:
        value, soft = (hard + 10, True) if ace and hard + 10 <= 21 else (hard, False)
        if not hits(value, soft):
            add(value, p)
            return
        add(21, p * joker)  # a joker: hard 21, no more cards
        for v, q in ranks:
            draw(hard + v, ace or v == 1, p * q)

    cards: list[tuple[int | None, Fraction]] = [*ranks, (None, joker)]  # None: the joker
    for a, pa in cards:
        for b, pb in cards:
            p = pa * pb
            if a is None and b is None:
                add("JJ", p)
            elif a in (None, 1) and b in (None, 1):
                add("NAT", p)
            elif a is None or b is None:
                add(21, p)
            else:
                draw(a + b, a == 1 or b == 1, p)
    return out


def result(p: Outcome, b: Outcome) -> int:
    """The player's win per chip, from GAMES.md's comparison written out again."""
    if p in ("JJ", "NAT") and b in ("JJ", "NAT"):
        return 1 if p == "JJ" and b == "NAT" else 0
    if p == "JJ":
        return 2
    if p == "NAT":
        return 1
    if b in ("JJ", "NAT"):
        return -1
    assert isinstance(p, int) and isinstance(b, int)
    if p <= 21:
        return 1 if b >= 22 or p > b else 0 if p == b else -1
    if b <= 21:
        return -1
    return 0 if p < b else -1


def player_return(stand_on: int = 17, jokers: int = 1) -> Fraction:
    """The player's expected win per chip who hits below `stand_on` and never doubles, splits or
    surrenders, against a banker who hits soft 17 and below."""
    player = final_hands(lambda value, soft: value < stand_on, jokers)
    banker = final_hands(lambda value, soft: value < 17 or (value == 17 and soft), jokers)
    return sum((pp * pb * result(p, b) for p, pp in player.items() for b, pb in banker.items()), Fraction(0))
