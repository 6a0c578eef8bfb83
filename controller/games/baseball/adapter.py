"""Baseball poker at the table: who acts and what to call, in words, lamps and on the display."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.engine.base import Awaiting, CardDealt, Event
from controller.engine.cards import Card
from controller.games.base import GameAdapter, Lines, Show, Words
from controller.games.baseball.rules import GAME, SEATS_MAX, CardPlaced, OpenRound

if TYPE_CHECKING:
    from pydantic import BaseModel

    from controller.analysis.base import GameAnalysis


class BaseballAdapter(GameAdapter):
    name = "baseball-poker"
    title = "Baseball poker"
    seats_max = SEATS_MAX
    between_rounds = "Seat the players and open the hand"
    words = Words(
        named=(
            ("community", lambda t: "the community card" if t.get("community") else ""),
            ("burn", lambda t: "the burn card" if t.get("burn") else ""),
            ("seat", lambda t: f"seat {t['seat']}"),
            ("extra", lambda t: "the extra card for a 4" if t.get("extra") else ""),
            ("face", lambda t: f"face {t['face']}"),
            ("to_call", lambda t: f"to call {t['to_call']}" if t.get("to_call") else ""),
        ),
        # Bookkeeping the screens show on their own (stack, pot, amounts) stays out of the words.
        hidden=frozenset({"stack", "pot", "amounts"}),
    )

    def opening_model(self) -> type[BaseModel]:
        from controller.games.baseball.api import BaseballOpenBody

        return BaseballOpenBody

    def decision_model(self) -> type[BaseModel]:
        from controller.games.baseball.api import ActionBody

        return ActionBody

    shown_hand_keys = frozenset({"best"})  # the showdown's best five (HandShown, a settled hand)

    def hidden_cards(self, state: Any) -> frozenset[str]:
        """Every card of the hand but those face up (the players' up cards, the community card;
        after a rainout, what the earlier deals showed): the down cards, the burn cards."""
        if state.phase != "dealing":
            return frozenset()
        down = {str(h.card) for s in state.seats for h in s.cards if h.face == "down"} | {str(c) for c in state.burns}
        if state.rainouts:  # the earlier deals' cards are no longer in the seats: ask the record
            shown = _ever_up(OpenRound(rules=state.rules, players=state.players), state.dealt, state.actions)
        else:
            shown = {str(c) for s in state.seats for c in s.up_cards()}
        shown |= {str(c) for c in state.community}
        return frozenset({str(c) for c in state.dealt} - (shown - down))

    def hidden_after(
        self, settlement: Mapping[str, Any], round_file: Mapping[str, Any] | None, cards: Sequence[str]
    ) -> frozenset[str]:
        """A finished hand as the rules show it: the up cards and the community card, and at a
        showdown every card of the players still in; the folded players' down cards, a hand won
        without a showdown, the burn cards and a void hand's down cards stay face down."""
        shown = {str(c) for c in settlement.get("community", [])}
        down: set[str] = set()
        for p in settlement.get("players", []):
            shown |= set(p.get("up", []))
            if settlement.get("showdown") and not p.get("folded"):
                shown |= set(p.get("cards", []))
            else:
                down |= set(p.get("cards", [])) - set(p.get("up", []))
        if settlement.get("rainouts") and round_file is not None:
            played = GAME.parse_round_file(round_file)
            shown |= _ever_up(played.open, played.cards, played.decisions)
        every = {str(c) for p in settlement.get("players", []) for c in p.get("cards", [])} | set(cards)
        return frozenset(every - (shown - down))

    def next_card_hidden(self, awaiting: Awaiting) -> bool:
        return awaiting.kind == "card" and awaiting.target.get("face") == "down"

    def in_play(self, state: Any) -> set[int]:
        return {seat.seat for seat in state.seats if not seat.folded} if state.phase == "dealing" else set()

    def display_card(self, target: Mapping[str, Any], last: str) -> Show:
        if target.get("community"):
            return Lines("DEAL COMMUNITY CARD", last)
        if target.get("burn"):
            return Lines("BURN A CARD", last)
        return Lines(f"DEAL SEAT {target.get('seat')}", last)

    def display_decision(self, who: Mapping[str, Any], allowed: Sequence[str]) -> Show:
        if "for" in who:  # pay for a wild or an extra card, or not
            return Lines(f"SEAT {who['seat']} PAY {who.get('price', '')}?", f"FOR {who['for']}".upper())
        return Lines(f"SEAT {who['seat']} TO CALL {who.get('to_call', 0)}", f"POT {who.get('pot', '')}".strip())

    def demo_opening(self, rng: random.Random, *, seats: int) -> dict[str, Any]:
        from controller.games.baseball.demo import opening

        return opening(rng, seats)

    def demo_choice(self, awaiting: Awaiting, rng: random.Random) -> dict[str, Any]:
        from controller.games.baseball.demo import choice

        return choice(awaiting.who, awaiting.allowed, rng)

    def analysis(self) -> GameAnalysis:
        from controller.games.baseball.analysis import ANALYSIS

        return ANALYSIS


ADAPTER = BaseballAdapter(GAME)


def _ever_up(opening: Event, cards: Sequence[Card], decisions: Sequence[Event]) -> set[str]:
    """The cards dealt face up at any time in a hand: its deals replayed from the opening, the
    cards and the decisions (a rainout's earlier deals left the seats, not the table's memory)."""
    state, _ = GAME.apply(GAME.initial(), opening)
    dealt, decided = iter(cards), iter(decisions)
    up: set[str] = set()
    while state.phase == "dealing":
        kind = GAME.awaiting(state).kind
        event = next(dealt, None) if kind == "card" else next(decided, None)
        if event is None:
            break
        state, effects = GAME.apply(state, CardDealt(event) if isinstance(event, Card) else event)
        up |= {str(e.card) for e in effects if isinstance(e, CardPlaced) and e.face == "up"}
    return up
