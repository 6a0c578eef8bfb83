"""`tablectl analyze high-card`: the fourth game's figures through the analysis interface alone
(controller/analysis/base.py): exact, every pair of ranks played through the engine, and the
Monte Carlo's rounds. One seat bets one chip against the dealer on the 6-deck shoe."""

from __future__ import annotations

import argparse
import itertools
import math
import random
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from controller.analysis.base import Chunk, GameAnalysis
from controller.analysis.montecarlo import Tally, play_round
from controller.engine.base import CardDealt, Event
from controller.engine.cards import Card, Rank, Suit

from .rules import GAME, SHOE, OpenRound, Wager

OPENING = OpenRound((Wager(1, 1),))


def _net(seat: Card, dealer: Card) -> int:
    state, _ = GAME.apply(GAME.initial(), OPENING)
    for card in (seat, dealer):
        state, _ = GAME.apply(state, CardDealt(card))
    net: int = GAME.settlement(state)["seats"][0]["net"]
    return net


def exact_distribution() -> dict[int, Fraction]:
    """The seat's net -> its probability: the seat's card and then the dealer's, without
    replacement from the full shoe, by rank (suits change nothing)."""
    total, per_rank = SHOE.decks * 52, SHOE.decks * 4
    out: dict[int, Fraction] = {}
    for mine, theirs in itertools.product(Rank, repeat=2):
        p = Fraction(per_rank, total) * Fraction(per_rank - (mine == theirs), total - 1)
        net = _net(Card(mine, Suit.SPADES), Card(theirs, Suit.HEARTS))
        out[net] = out.get(net, Fraction(0)) + p
    return out


def chunk(seed: tuple[int, int], rounds: int) -> dict[str, Tally]:
    rng = random.Random(f"{seed[0]}:{seed[1]}")
    cards = list(SHOE.cards())
    tally = Tally(1)

    def draw() -> Iterator[Card]:
        return iter(rng.sample(cards, 2))

    def no_decisions(state: Any, awaiting: Any) -> Event:
        raise AssertionError("high card asks nobody to decide")

    for _ in range(rounds):
        state, _ = GAME.apply(GAME.initial(), OPENING)
        tally.add(GAME.settlement(play_round(GAME, state, draw, no_decisions))["seats"][0]["net"])
    return {"high card": tally}


class HighCardAnalysis(GameAnalysis):
    def exact(self, args: argparse.Namespace) -> dict[str, Any]:
        dist = exact_distribution()
        mean = sum((net * p for net, p in dist.items()), Fraction(0))
        variance = sum(((net - mean) ** 2 * p for net, p in dist.items()), Fraction(0))
        wager = {"house_edge": str(-mean), "sd_per_round": round(math.sqrt(variance), 6), "wagered": 1}
        return {"decks": SHOE.decks, "wagers": {"high card": wager}, "push": str(dist.get(0, Fraction(0)))}

    def chunk(self) -> Chunk:
        return chunk

    def simulated(self, args: argparse.Namespace, options: Mapping[str, Any], tallies: dict[str, Tally]) -> dict[str, Any]:
        return {"decks": SHOE.decks, "wagers": {name: t.to_json() for name, t in tallies.items()}}


ANALYSIS = HighCardAnalysis()
