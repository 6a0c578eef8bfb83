"""Baseball poker hands dealt straight to the showdown, at simulation speed, on the engine's rules.

`tablectl analyze baseball-poker` asks how often each showdown category comes up when every
player calls to the end (openers bring it in or check, extra cards and wild cards are paid for).
Then no bet changes a card: which cards each player ends with depends only on the deck and the
dealing rules, so `showdown` walks the engine's dealing schedule without its betting rounds:
the engine's streets and passes (`STREETS`, `PASSES`), its table options (`extra_card`,
`rainout`, `burn_cards`, the wild ranks, `double_ace_flush`, `natural_wins`), its reading of
the rainout card (`QUEEN_OF_SPADES`) and its hands (`hands.evaluate`, as `hand_of` calls it).
What it leaves out is the betting the engine would ask for, which under call-down changes no
card. `replay_through_engine` plays the same decks through `GAME.apply` and must give the same
hands: the Monte Carlo checks one hand in every chunk that way, and the tests many more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from controller.engine.base import CardDealt, ShoeReshuffled
from controller.engine.cards import Card, Rank
from controller.engine.hands import evaluate
from controller.games.baseball.rules import (
    DECK,
    GAME,
    PASSES,
    QUEEN_OF_SPADES,
    STREETS,
    Action,
    BaseballRules,
    OpenRound,
    Player,
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
    shuffled deck for the hand and for each rainout re-deal."""
    wild = rules.wild_ranks
    extra = rules.extra_card != "none"  # "pay": every player pays for it
    rainout = rules.rainout
    four, queen, spades = Rank.FOUR, QUEEN_OF_SPADES.rank, QUEEN_OF_SPADES.suit
    rainouts = 0
    while True:  # one deal; a rainout starts the next
        deck = decks()
        held: list[list[Card]] = [[] for _ in range(players)]
        community: list[Card] = []
        in_deck = DECK
        rained = False
        for street in STREETS:
            if street > 3 and rules.burn_cards and in_deck > 0:
                next(deck)
                in_deck -= 1
            for face in PASSES[street]:
                up = face == "up"
                if in_deck < players:  # too few cards for a pass: one card face up for everyone
                    if in_deck > 0:
                        card = next(deck)
                        in_deck -= 1
                        community.append(card)
                        if rainout and card.rank is queen and card.suit is spades:
                            rained = True
                            break
                    continue
                for cards in held:
                    card = next(deck)
                    in_deck -= 1
                    cards.append(card)
                    if up:
                        if rainout and card.rank is queen and card.suit is spades:
                            rained = True
                            break
                        if extra and card.rank is four and in_deck > 0:
                            cards.append(next(deck))  # the extra face-down card, at once
                            in_deck -= 1
                if rained:
                    break
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
    cards = tuple(
        (*(c for c in state.seat(p["seat"]).own_cards()), *state.community) for p in settlement["players"]
    )
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
