"""Monte Carlo through the engine: seeded, reproducible, on every core, with confidence intervals.

Rounds are simulated in chunks; chunk k always uses the seed (seed, k), so a run gives the same
figures whatever the number of worker processes. Each round is dealt from a freshly shuffled shoe
through the game's own `apply`, exactly as the table would deal it; nothing about the rules is
restated here except the player's strategy where a game asks the player to choose.
"""

from __future__ import annotations

import math
import os
import random
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from controller.engine import get_game
from controller.engine.base import CardDealt, Event, ShoeReshuffled
from controller.engine.cards import Card, ShoeComposition

CHUNK = 2000


@dataclass
class Tally:
    """Sums of a bet's net per round, enough for its mean and confidence interval."""

    wagered: int  # chips on the bet per round
    rounds: int = 0
    total: int = 0
    squares: int = 0
    histogram: dict[int, int] = field(default_factory=dict)

    def add(self, net: int) -> None:
        self.rounds += 1
        self.total += net
        self.squares += net * net
        self.histogram[net] = self.histogram.get(net, 0) + 1

    def merge(self, other: Tally) -> None:
        self.rounds += other.rounds
        self.total += other.total
        self.squares += other.squares
        for net, n in other.histogram.items():
            self.histogram[net] = self.histogram.get(net, 0) + n

    @property
    def mean(self) -> float:
        return self.total / self.rounds if self.rounds else math.nan

    @property
    def sd(self) -> float:
        if self.rounds < 2:
            return math.nan
        return math.sqrt(max(self.squares / self.rounds - self.mean**2, 0.0))

    @property
    def house_edge(self) -> float:
        return -self.mean / self.wagered

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of the house edge."""
        return 1.96 * self.sd / math.sqrt(self.rounds) / self.wagered

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "house_edge": round(self.house_edge, 6),
            "ci95": round(self.ci95, 6),
            "sd_per_round": round(self.sd, 6),
            "wagered": self.wagered,
        }


# --- the games' simulated rounds ----------------------------------------------------------------


def _deal(game: Any, state: Any, deck: Callable[[], Iterator[Card]], decide: Callable[[Any, Any], Event]) -> Any:
    """Play a round to its end: cards from `deck()` (a fresh one whenever the game says the deck
    is reshuffled, as a Baseball poker rainout does), choices from `decide`."""
    shoe = deck()
    while True:
        awaiting = game.awaiting(state)
        if awaiting.kind == "card":
            state, out = game.apply(state, CardDealt(next(shoe)))
            if any(isinstance(fx, ShoeReshuffled) for fx in out):
                shoe = deck()
        elif awaiting.kind == "decision":
            state, _ = game.apply(state, decide(state, awaiting))
        else:
            return state


def _grand_slam_chunk(seed: tuple[int, int], rounds: int, decks: int, units: tuple[int, int, int]) -> dict[str, Tally]:
    from controller.games.grand_slam.rules import BASES, GAME, GrandSlamRules, OpenRound, SeatBet

    rng = random.Random(f"{seed[0]}:{seed[1]}")
    rules = GrandSlamRules(decks=max(decks, 1))
    cards = list(rules.shoe.cards())
    shapes = {"first": BASES[:1], "first+second": BASES[:2], "first+second+third": BASES}
    tallies = {name: Tally(sum(units[: len(b)])) for name, b in shapes.items()}
    tallies |= {"three_outs": Tally(1), "poker_bonus": Tally(1)}
    openings = {
        name: OpenRound(
            rules=rules,
            seats=(
                SeatBet(
                    1,
                    {b: units[i] for i, b in enumerate(bases)},
                    {"three_outs": 1, "poker_bonus": 1} if len(bases) == 3 else {},
                ),
            ),
        )
        for name, bases in shapes.items()
    }

    def draw() -> Iterator[Card]:
        return iter(rng.choices(cards, k=3) if decks == 0 else rng.sample(cards, 3))

    for _ in range(rounds):
        for name, opening in openings.items():
            # An infinite deck draws each card afresh; a shoe deals its top cards without replacement.
            state, _ = GAME.apply(GAME.initial(), opening)
            seat = GAME.settlement(_deal(GAME, state, draw, _no_decisions))["seats"][0]
            tallies[name].add(
                sum(w["paid"] if w["result"] == "home" else -w["amount"] for w in seat["wagers"].values())
            )
            for side, bet in seat["side_bets"].items():
                tallies[side].add({"won": bet["paid"], "lost": -1, "push": 0}[bet["result"]])
    return tallies


def _no_decisions(state: Any, awaiting: Any) -> Event:
    raise AssertionError("Grand Slam never asks a player to decide")


def _jokers22_chunk(
    seed: tuple[int, int],
    rounds: int,
    decks: int,
    strategy: Any = None,
    jokers_per_deck: int = 1,
    wager: int = 1,
    stake: int | None = None,
    coverage: str = "rotation",
) -> dict[str, Tally]:
    """One spot, one player betting `wager` against the banker's `stake` (None: always covers)
    under `coverage`; the player follows `strategy` (controller.analysis.jokers22.Strategy; by
    default hit below 17, never double, split or surrender) where the rules leave a choice."""
    from controller.analysis.jokers22 import Strategy
    from controller.games.jokers22.rules import (
        GAME,
        Banker,
        Decision,
        Jokers22Rules,
        OpenRound,
        SpotBet,
        Wager,
        hand_total,
    )

    rng = random.Random(f"{seed[0]}:{seed[1]}")
    rules = Jokers22Rules(decks=max(decks, 1), jokers_per_deck=jokers_per_deck, coverage=coverage)  # type: ignore[arg-type]
    cards = list(rules.shoe.cards())
    banker = Banker(stake=stake if stake is not None else 10**9)
    opening = OpenRound(rules, banker, (SpotBet(1, (Wager("player", wager),)),))
    chosen = strategy or Strategy()
    tally = Tally(wager)

    def decide(state: Any, awaiting: Any) -> Event:
        hand = state.spot(int(awaiting.who["spot"])).hands[int(awaiting.who["hand"]) - 1]
        action = chosen.choose(hand.cards, hand_total(hand.cards), state.banker_cards[0], awaiting.allowed)
        return Decision(spot=int(awaiting.who["spot"]), action=action, player=str(awaiting.who["player"]))

    def draw() -> Iterator[Card]:
        return iter(rng.choices(cards, k=40) if decks == 0 else rng.sample(cards, 40))

    for _ in range(rounds):
        state, _ = GAME.apply(GAME.initial(), opening)
        settlement = GAME.settlement(_deal(GAME, state, draw, decide))
        tally.add(-int(settlement["banker"]["net"]))  # the banker's edge: the player's loss
    return {"banker_edge": tally}


CATEGORIES = (
    "five of a kind", "straight flush", "four of a kind", "full house", "flush",
    "straight", "three of a kind", "two pair", "pair", "high card",
)  # fmt: skip


def _baseball_chunk(seed: tuple[int, int], rounds: int, decks: int, players: int) -> dict[str, Tally]:
    """`players` players who all call to the showdown (the opener brings it in or checks; extra
    cards are paid for): the frequency of each showdown category with the table's wild cards, and
    rainouts per hand. Dealt by controller.analysis.baseball on the engine's dealing rules; the
    chunk's first hand is played again through the engine's `apply` and must come out the same."""
    import numpy as np

    from controller.analysis.baseball import RecordingDecks, replay_through_engine, showdown
    from controller.games.baseball.rules import BaseballRules

    rules = BaseballRules(ante=1, small_bet=2, big_bet=4)
    deck_cards = list(ShoeComposition(decks=1).cards())
    generator = np.random.default_rng([seed[0], seed[1]])
    ready: list[list[int]] = []

    def shuffled() -> list[Card]:
        if not ready:  # shuffled decks a few hundred at a time: numpy orders them
            ready.extend(np.argsort(generator.random((512, len(deck_cards))), axis=1).tolist())
        return [deck_cards[i] for i in ready.pop()]

    def draw() -> Iterator[Card]:
        return iter(shuffled())

    shown: dict[str, int] = dict.fromkeys(CATEGORIES, 0)
    rainouts = Tally(1)
    for n in range(rounds):
        if n == 0:
            recorded = RecordingDecks(shuffled)
            hand = showdown(rules, players, recorded)
            engine = replay_through_engine(rules, players, recorded.dealt)
            if engine != hand:
                raise AssertionError(f"chunk {seed}: the engine deals this hand otherwise: {engine} against {hand}")
        else:
            hand = showdown(rules, players, draw)
        rainouts.add(hand.rainouts)
        for category in hand.categories:
            shown[category] += 1
    hands = sum(shown.values())
    tallies: dict[str, Tally] = {}
    for category, count in shown.items():  # every showdown hand once: 1 in its category, 0 elsewhere
        tallies[category] = Tally(1, hands, count, count, {1: count, 0: hands - count})
    return tallies | {"rainouts": rainouts}


CHUNKERS: dict[str, Callable[..., dict[str, Tally]]] = {
    "baseball-poker": _baseball_chunk,
    "grand-slam": _grand_slam_chunk,
    "jokers-22": _jokers22_chunk,
}


def simulate(
    game: str,
    rounds: int,
    *,
    seed: int = 1,
    workers: int | None = None,
    progress: bool = False,
    **options: Any,
) -> dict[str, Tally]:
    """`rounds` rounds of `game` through the engine, in chunks over `workers` processes."""
    get_game(game)  # a game this tablectl does not run is refused in plain words
    chunker = CHUNKERS.get(game)
    if chunker is None:
        raise ValueError(f"no Monte Carlo for {game} yet")
    if rounds < 1:
        raise ValueError(f"rounds must be 1 or more, not {rounds}")
    sizes = [min(CHUNK, rounds - start) for start in range(0, rounds, CHUNK)]
    workers = workers or os.cpu_count() or 1
    totals: dict[str, Tally] = {}
    done = 0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(chunker, (seed, k), size, **options) for k, size in enumerate(sizes)]
        for k, future in enumerate(futures):  # in chunk order: the same sums however they ran
            for name, tally in future.result().items():
                totals.setdefault(name, Tally(tally.wagered)).merge(tally)
            done += sizes[k]
            if progress:
                _bar(done, rounds)
    if progress:
        print(file=sys.stderr)
    return totals


def _bar(done: int, total: int, width: int = 40) -> None:
    filled = width * done // total
    print(f"\r[{'#' * filled}{' ' * (width - filled)}] {done}/{total} rounds", end="", file=sys.stderr, flush=True)
