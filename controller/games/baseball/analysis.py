"""Baseball poker hands dealt straight to the showdown, at simulation speed, by the engine's rules.

`tablectl analyze baseball-poker` asks how often each showdown category comes up when every
player calls to the end (openers bring it in or check, extra cards and wild cards are paid for).
Then no bet changes a card: which cards each player ends with depends only on the deck and the
dealing rules, so `showdown` deals by the rules' dealing schedule without the betting rounds in
between. There is one dealing schedule, in controller/games/baseball/rules.py, and `GAME.apply`
deals by it too: the streets (`STREETS`), each street's next step (`next_step`: the burn card,
the passes by face, the community card when the deck runs short), whether a card rains the deal
out (`rains_out`) and whether it earns an extra card (`earns_extra`); the hands are the rules'
(`hands.evaluate` with the table's wild ranks, as `hand_of` calls it). What `showdown` leaves
out is the betting the engine would ask for, which under call-down changes no card.
`replay_through_engine` plays the same decks through `GAME.apply` and must give the same hands:
the Monte Carlo checks one hand in every chunk that way, and the tests many more.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.analysis.base import Chunk, GameAnalysis, option
from controller.analysis.montecarlo import Tally
from controller.engine.base import CardDealt, ShoeReshuffled
from controller.engine.cards import Card, ShoeComposition
from controller.engine.hands import evaluate
from controller.games.baseball.rules import (
    DECK,
    GAME,
    SEATS_MAX,
    STREETS,
    Action,
    BaseballRules,
    OpenRound,
    Player,
    earns_extra,
    face_up_ranks,
    next_step,
    rains_out,
)


@dataclass(frozen=True)
class Showdown:
    """A hand played to the end: each player's cards (own, then the community cards they share),
    their category, and the number of rainouts."""

    cards: tuple[tuple[Card, ...], ...]
    categories: tuple[str, ...]
    rainouts: int


def showdown(rules: BaseballRules, players: int, decks: Callable[[], Iterator[Card]]) -> Showdown:
    """Deal one hand to `players` players who all stay to the showdown; `decks()` gives a freshly
    shuffled deck for the hand and for each rainout re-deal. Every card goes where the rules'
    dealing schedule sends it (`next_step`, `rains_out`, `earns_extra`: what `GAME.apply` deals by; `face_up_ranks`
    says which face-up cards those two need to see)."""
    wild = rules.wild_ranks
    special = face_up_ranks(rules)  # the face-up cards the two rules need to look at
    rainouts = 0
    while True:  # one deal; a rainout starts the next
        deck = decks()
        held: list[list[Card]] = [[] for _ in range(players)]
        community: list[Card] = []
        in_deck = DECK
        rained = False
        for street in STREETS:
            begun, burned = 0, False
            while not rained and (step := next_step(rules, street, begun, burned, in_deck, players)) is not None:
                begun, burned = step.passes_begun, step.burned
                target = step.target
                if target is not None:  # the burn card, or the community card face up for everyone
                    card = next(deck)
                    in_deck -= 1
                    if target.to == "community":
                        community.append(card)
                        rained = rains_out(rules, card, target.face)
                    continue
                if not step.to_seats:  # the deck is empty: no card
                    continue
                face = step.face
                watch = special if face == "up" else ()
                for cards in held:  # a pass: one card to each player, in seat order
                    card = next(deck)
                    in_deck -= 1
                    cards.append(card)
                    if card.rank in watch:
                        if rains_out(rules, card, face):
                            rained = True
                            break
                        if earns_extra(rules, card, face, in_deck):  # "pay": every player pays
                            cards.append(next(deck))  # the extra face-down card, at once
                            in_deck -= 1
            if rained:
                break
        if not rained:
            break
        rainouts += 1
    hands = tuple((*cards, *community) for cards in held)
    categories = tuple(
        evaluate(cards, wild, double_ace_flush=rules.double_ace_flush, natural_wins=rules.natural_wins).category
        for cards in hands
    )
    return Showdown(hands, categories, rainouts)


def replay_through_engine(rules: BaseballRules, players: int, dealt: Sequence[Sequence[Card]]) -> Showdown:
    """The same hand through `GAME.apply`, every card and every call, from the decks `dealt`
    (each in dealing order, as `showdown` drew them)."""
    opening = OpenRound(rules, tuple(Player(s, 1_000_000) for s in range(1, players + 1)))
    state, _ = GAME.apply(GAME.initial(), opening)
    shoes = iter(dealt)
    shoe = iter(next(shoes))
    while True:
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card":
            state, out = GAME.apply(state, CardDealt(next(shoe)))
            if any(isinstance(fx, ShoeReshuffled) for fx in out):
                shoe = iter(next(shoes))
        elif awaiting.kind == "decision":
            action = next(a for a in ("check", "call", "bring-in", "pay", *awaiting.allowed) if a in awaiting.allowed)
            state, _ = GAME.apply(state, Action(int(awaiting.who["seat"]), action))
        else:
            break
    settlement: dict[str, Any] = GAME.settlement(state)
    cards = tuple((*(c for c in state.seat(p["seat"]).own_cards()), *state.community) for p in settlement["players"])
    return Showdown(cards, tuple(p["hand"]["category"] for p in settlement["players"]), int(settlement["rainouts"]))


class RecordingDecks:
    """Decks from `shuffle()`, kept as dealt so a hand can be played again through the engine."""

    def __init__(self, shuffle: Callable[[], list[Card]]) -> None:
        self._shuffle = shuffle
        self.dealt: list[list[Card]] = []

    def __call__(self) -> Iterator[Card]:
        deck = self._shuffle()
        self.dealt.append(deck)
        return iter(deck)


# --- the Monte Carlo ---------------------------------------------------------------------------

CATEGORIES = (
    "five of a kind", "straight flush", "four of a kind", "full house", "flush",
    "straight", "three of a kind", "two pair", "pair", "high card",
)  # fmt: skip


def chunk(seed: tuple[int, int], rounds: int, decks: int = 1, players: int = 6) -> dict[str, Tally]:
    """`players` players who all call to the showdown (the opener brings it in or checks; extra
    cards are paid for): the frequency of each showdown category with the table's wild cards, and
    rainouts per hand (a hand is dealt from one 52-card deck, whatever `decks` says). Dealt by
    `showdown` on the engine's dealing rules; the chunk's first hand is played again through the
    engine's `apply` and must come out the same."""
    import numpy as np

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


# --- tablectl analyze baseball-poker ------------------------------------------------------------


class BaseballAnalysis(GameAnalysis):
    """`tablectl analyze baseball-poker [--monte-carlo] --rounds 20000 [--players 6]`: simulated
    only (no exact calculation); its report has no distribution of nets."""

    options = (option("--players", type=int, default=6, help="Baseball poker players at the table (6)"),)
    distribution = False

    def chunk(self) -> Chunk:
        return chunk

    def simulation(self, args: argparse.Namespace) -> dict[str, Any]:
        if not 2 <= args.players <= SEATS_MAX:
            raise ValueError(f"--players {args.players}: a Baseball poker table seats 2 to {SEATS_MAX}")
        return {"players": args.players}

    def simulated(
        self, args: argparse.Namespace, options: Mapping[str, Any], tallies: dict[str, Tally]
    ) -> dict[str, Any]:
        return {  # a Baseball poker hand is dealt from one 52-card deck: no "decks"
            "players": args.players,
            "player_strategy": "everyone calls to the showdown; the opener brings it in or checks",
            "showdown_categories": {
                c: {
                    "frequency": round(tallies[c].mean, 6),
                    "ci95": round(1.96 * tallies[c].sd / tallies[c].rounds ** 0.5, 6),
                }
                for c in CATEGORIES
            },
            "rainouts_per_hand": {"mean": round(tallies["rainouts"].mean, 6), "hands": tallies["rainouts"].rounds},
        }

    def text(self, doc: Mapping[str, Any]) -> list[str]:
        lines = [
            f"  {category:<16} {f['frequency'] * 100:7.3f}% +- {f['ci95'] * 100:.3f}% of showdown hands"
            for category, f in doc["showdown_categories"].items()
        ]
        lines.append(f"  rainouts per hand {doc['rainouts_per_hand']['mean']:.4f}")
        lines.append(f"  player: {doc['player_strategy']}")
        return lines


ANALYSIS = BaseballAnalysis()
