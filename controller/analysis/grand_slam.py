"""Exact Grand Slam figures from an enumeration run through the engine itself.

With an infinite deck each card is one of 13 ranks with probability 1/13, independent of the
others. A seat never takes more than three cards, so the 13^3 rank sequences, each of weight
1/13^3, cover every round one seat can have (cards past the ones the round uses are not dealt).
The POKER BONUS also depends on suits, but only on whether the three cards share one suit
(probability 1/16), so each rank sequence is played twice: once suited (weight 1/16) and once
with three different suits (weight 15/16). No rule is restated here: every outcome comes from
`GrandSlam.apply` and its settlement.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.engine.base import CardDealt, run_events
from controller.engine.cards import Card, Rank, Suit
from controller.engine.grand_slam import BASES, GAME, Base, GrandSlamRules, OpenRound, SeatBet, SideBet

RANK_SEQUENCES = 13**3
_SUITED = (Suit.SPADES, Suit.SPADES, Suit.SPADES)
_UNSUITED = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS)


@dataclass(frozen=True)
class Outcome:
    """One enumerated round: its probability and the seat's settlement."""

    weight: Fraction
    ranks: tuple[Rank, Rank, Rank]
    suited: bool
    settlement: Mapping[str, Any]


def enumerate_rounds(
    wagers: Mapping[Base, int],
    side_bets: Mapping[SideBet, int] | None = None,
    rules: GrandSlamRules | None = None,
) -> Iterator[Outcome]:
    """Every round one seat with these wagers can have, with its exact probability."""
    rules = rules or GrandSlamRules()
    bet = SeatBet(seat=1, wagers=dict(wagers), side_bets=dict(side_bets or {}))
    opened, _ = run_events(GAME, [OpenRound(rules=rules, seats=(bet,))])
    suit_patterns = ((True, Fraction(1, 16)), (False, Fraction(15, 16))) if side_bets else ((False, Fraction(1)),)
    for first, second, third in itertools.product(Rank, repeat=3):
        ranks = (first, second, third)
        for suited, suit_weight in suit_patterns:
            suits = _SUITED if suited else _UNSUITED
            state = opened
            for rank, suit in zip(ranks, suits, strict=True):
                if GAME.awaiting(state).kind != "card":
                    break
                state, _ = GAME.apply(state, CardDealt(Card(rank, suit)))
            settlement = GAME.settlement(state)["seats"][0]
            yield Outcome(Fraction(1, RANK_SEQUENCES) * suit_weight, ranks, suited, settlement)


@dataclass(frozen=True)
class BetFigures:
    name: str
    units: int  # chips wagered on the bet(s)
    expected_net: Fraction  # the player's expected win per round (negative: the house's edge)

    @property
    def house_edge(self) -> Fraction:
        return -self.expected_net / self.units


def house_edges(rules: GrandSlamRules | None = None) -> list[BetFigures]:
    """The exact house edge of the three base-bet patterns (one unit a base) and both side bets."""
    figures = []
    for name, bases in (
        ("First only", BASES[:1]),
        ("First + Second", BASES[:2]),
        ("First + Second + Third", BASES),
    ):
        expected = sum(
            (o.weight * o.settlement["net"] for o in enumerate_rounds(dict.fromkeys(bases, 1), rules=rules)),
            Fraction(0),
        )
        figures.append(BetFigures(name, len(bases), expected))
    all_bases: dict[Base, int] = {"first": 1, "second": 1, "third": 1}
    labels: dict[SideBet, str] = {"three_outs": "3 OUT INSURANCE", "poker_bonus": "POKER BONUS"}
    for side, label in labels.items():
        expected = Fraction(0)
        for o in enumerate_rounds(all_bases, {side: 1}, rules=rules):
            entry = o.settlement["side_bets"][side]
            result = {"won": entry["paid"], "lost": -1, "push": 0}[entry["result"]]
            expected += o.weight * result
        figures.append(BetFigures(label, 1, expected))
    return figures


def probabilities() -> dict[str, Fraction]:
    """P(Grand Slam) and P(three out cards) for a seat betting all three bases, from the
    enumeration: a Grand Slam as the engine reports it, three outs as the engine wins the
    3 OUT INSURANCE bet."""
    grand_slam = three_outs = Fraction(0)
    for o in enumerate_rounds({"first": 1, "second": 1, "third": 1}, {"three_outs": 1}):
        if o.settlement["grand_slam"]:
            grand_slam += o.weight
        if o.settlement["side_bets"]["three_outs"]["result"] == "won":
            three_outs += o.weight
    return {"grand_slam": grand_slam, "three_outs": three_outs}


def figures_table(rules: GrandSlamRules | None = None) -> str:
    """The Markdown table of house edges the README reports."""
    lines = ["| bet (1 unit a base) | expected player net per round | house edge |", "|---|---|---|"]
    for f in house_edges(rules):
        lines.append(f"| {f.name} | {f.expected_net} | {f.house_edge} = {float(f.house_edge) * 100:.4f}% |")
    return "\n".join(lines)
