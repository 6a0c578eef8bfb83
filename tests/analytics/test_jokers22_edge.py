"""Jokers 22's theoretical win checked on its own: the test derives the banker's exact advantage
per chip a player wagers from GAMES.md section 2 alone (its own enumeration, in fractions, not
the product's analysis code) and compares every rating session's theoretical win from the API
(and the shift report's) with the session's wagers times it, to the hundredth of a chip.

The edge rated (controller/analytics/edges.py, README): one spot, the player hitting below 17
where the rules leave the choice and never doubling, splitting or surrendering, a bank that
covers the wager; the round's first three cards (the spot's first, the banker's up card, the
spot's second) drawn without replacement from the table's shoe and every card after them from
the shoe as it stood then. The derivation here follows the rules card by card under that model:

- values 2-9, T J Q K 10, A 1 or 11 (11 while it keeps the total at 21 or less), a joker with any
  other card a hard 21 that takes no more cards; naturals JK+JK, A+A, JK+A on the first two;
- the player hits below 17 (must hit 11 or less, must stand on 20 and 21, 22 or more takes no
  card); the banker hits soft 17 and below, stands on hard 17 and above, whatever the player has;
- naturals: both push, but the player's JK+JK against A+A or JK+A wins 1 to 1; the player's
  JK+JK against no natural wins 2 to 1, another natural 1 to 1; the banker's natural wins;
- otherwise: both 21 or less, the higher total; the banker 22 or more, the player (21 or less)
  wins; the player 22 or more, the banker (21 or less) wins; both 22 or more, the player pushes
  when closer to 22 (lower), else loses.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tests.analytics.test_ratings import SUP, ratings, settled_rounds, table_client

# A card kind: its value (2-10; 1 the ace) or "JK".
KINDS: tuple[int | str, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "JK")
Counts = tuple[int, ...]  # how many of each kind, in KINDS' order


def shoe(decks: int, jokers_per_deck: int) -> Counts:
    return tuple(16 * decks if k == 10 else jokers_per_deck * decks if k == "JK" else 4 * decks for k in KINDS)


def without(counts: Counts, *taken: int) -> Counts:
    out = list(counts)
    for i in taken:
        out[i] -= 1
    return tuple(out)


# A hand that is not a natural: (the sum counting aces as 1, holds an ace, holds a joker).
Hand = tuple[int, bool, bool]


def add(hand: Hand, kind: int | str) -> Hand:
    hard, ace, joker = hand
    if kind == "JK":
        return hard, ace, True
    assert isinstance(kind, int)
    return hard + kind, ace or kind == 1, joker


def total(hand: Hand, cards: int) -> tuple[int, bool]:
    """(the total, soft); a joker with another card: hard 21."""
    hard, ace, joker = hand
    if joker and cards >= 2:
        return 21, False
    if ace and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


#: Draws after the first two cards that any hand can take (each adds 1 or more to a total that
#: stops by 17 or 18): the distributions below are whole numbers over (cards left) ** DRAWS.
DRAWS = 16


@functools.cache
def play_out(hand: Hand, cards: int, counts: Counts, banker: bool, draws: int = DRAWS) -> dict[int, int]:
    """The final total's distribution (22 and over kept as they are), drawing from `counts` with
    replacement (after the round's first three cards): exact, as whole numbers over
    sum(counts) ** draws."""
    n = sum(counts)
    value, soft = total(hand, cards)
    hits = (value < 17 or (value == 17 and soft)) if banker else value < 17
    if (hand[2] and cards >= 2) or value >= 22 or not hits:
        return {value: n**draws}
    assert draws > 0, "a hand took more cards than DRAWS allows for"
    out: dict[int, int] = {}
    for i, kind in enumerate(KINDS):
        if counts[i]:
            for t, ways in play_out(add(hand, kind), cards + 1, counts, banker, draws - 1).items():
                out[t] = out.get(t, 0) + counts[i] * ways
    return out


def natural(a: int | str, b: int | str) -> str | None:
    pair = {a, b}
    if pair == {"JK"}:
        return "JKJK"
    if pair <= {"JK", 1}:
        return "AA" if pair == {1} else "JKA"
    return None


def net(p_nat: str | None, p: int, b_nat: str | None, b: int) -> int:
    """The player's result per chip."""
    if p_nat and b_nat:
        return 1 if p_nat == "JKJK" and b_nat != "JKJK" else 0
    if p_nat:
        return 2 if p_nat == "JKJK" else 1
    if b_nat:
        return -1
    if p <= 21 and b <= 21:
        return (p > b) - (p < b)
    if p <= 21:
        return 1
    if b <= 21:
        return -1
    return 0 if p < b else -1


@functools.cache
def banker_after(ib: int, left: Counts) -> dict[tuple[str | None, int], int]:
    """The banker's final hand (natural or not, total) with up card KINDS[ib], the second card
    and the draws from `left`: whole numbers over sum(left) ** (DRAWS + 1)."""
    out: dict[tuple[str | None, int], int] = {}
    n = sum(left)
    for j, b2 in enumerate(KINDS):
        if not left[j]:
            continue
        b_nat = natural(KINDS[ib], b2)
        hand = add(add((0, False, False), KINDS[ib]), b2)
        dist = {0: n**DRAWS} if b_nat else play_out(hand, 2, left, True)
        for b, ways in dist.items():
            out[(b_nat, b)] = out.get((b_nat, b), 0) + left[j] * ways
    return out


@functools.cache
def banker_edge(decks: int, jokers_per_deck: int) -> Fraction:
    full = shoe(decks, jokers_per_deck)
    total_cards = sum(full)
    expected = Fraction(0)
    for i1, c1 in enumerate(KINDS):  # the spot's first card
        for ib in range(len(KINDS)):  # the banker's up card
            for i2, c2 in enumerate(KINDS):  # the spot's second card
                left = without(full, i1, ib, i2)
                if min(left) < 0:
                    continue
                weight = (
                    Fraction(full[i1], total_cards)
                    * Fraction(without(full, i1)[ib], total_cards - 1)
                    * Fraction(without(full, i1, ib)[i2], total_cards - 2)
                )
                if not weight:
                    continue
                p_nat = natural(c1, c2)
                n = sum(left)
                start = add(add((0, False, False), c1), c2)
                player = {0: n**DRAWS} if p_nat else play_out(start, 2, left, False)
                inner = sum(
                    pp * bp * net(p_nat, p, b_nat, b)
                    for p, pp in player.items() for (b_nat, b), bp in banker_after(ib, left).items()
                )  # fmt: skip
                expected += weight * Fraction(inner, n ** (2 * DRAWS + 1))
    return -expected


def sessions_theo(
    rounds: list[tuple[dict[str, Any], dict[str, Any]]], edge: Fraction
) -> dict[tuple[int, str], Fraction]:
    """Each player's (spot, name) wagers over the rounds times the edge (one session a player:
    the API is asked with close_after=100)."""
    out: dict[tuple[int, str], Fraction] = {}
    for file, _ in rounds:
        for spot in file["spots"]:
            for w in spot["wagers"]:
                key = (spot["spot"], w["player"])
                out[key] = out.get(key, Fraction(0)) + w["amount"] * edge
    return out


def check(got: list[Mapping[str, Any]], want: dict[tuple[int, str], Fraction]) -> None:
    assert {(s["place"], s["player"]) for s in got} == set(want)
    for s in got:
        theo = want[(s["place"], s["player"])]
        assert abs(float(theo) - s["theoretical_win"]) < 0.005, (s["place"], s["player"])
        assert abs(Fraction(s["theoretical_win_exact"]) - theo) < Fraction(1, 10**6)


@pytest.mark.slow
def test_jokers22_theoretical_win_is_the_wagers_times_the_exact_edge(tmp_path: Path) -> None:
    rules = {"decks": 4, "jokers_per_deck": 2, "time_fee": 1}
    client, run = table_client(tmp_path, "jokers-22", rules, 14, "j22-edge")
    rounds = settled_rounds(client, run)
    assert len(rounds) >= 10
    edge = banker_edge(4, 2)
    assert Fraction(0) < edge < Fraction(1, 10)  # the banker's small advantage
    want = sessions_theo(rounds, edge)
    check(ratings(client, close_after=100), want)
    # The report's money (the dealers' figures): the table's theoretical win is the same sum.
    report = client.get("/api/dealers/figures", params={"window": "4h"}, headers=SUP).json()
    table_theo = sum(Fraction(d["money"]["theoretical_win_exact"]) for d in report["dealers"].values() if d["money"])
    assert abs(table_theo - sum(want.values())) < Fraction(1, 10**6)
