"""Jokers 22 at the table: spots and the banker in words, lamps and on the pole display."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.engine.base import Awaiting, Event
from controller.games.base import GameAdapter, Lines, Show, Words
from controller.games.jokers22.rules import GAME, SPOTS_MAX, stands_unlisted, unlisted_action

if TYPE_CHECKING:
    from pydantic import BaseModel

    from controller.analysis.base import GameAnalysis

# The choices in 20 columns: "HIT STD DBL SPL SUR".
_SHORT = {"hit": "HIT", "stand": "STD", "double": "DBL", "split": "SPL", "surrender": "SUR", "decline": "DECL"}


class Jokers22Adapter(GameAdapter):
    name = "jokers-22"
    title = "Jokers 22"
    seats_max = SPOTS_MAX
    words = Words(
        named=(
            ("banker", lambda t: "the banker" if t.get("banker") else ""),
            ("spot", lambda t: f"spot {t['spot']}"),
        )
    )

    def payee(self, pay: Mapping[str, Any]) -> str:
        return f"{pay['player']} at spot {pay['spot']}"

    def decision_prompt(self, who: Mapping[str, Any], allowed: Sequence[str]) -> str:
        """"Spot 3, ann on 16: hit or stand?": the player by the name the dealer gave, as the
        dealer screen's decision box and the payouts name them (a hand after a split by number)."""
        hand = who.get("hand")
        which = f", hand {hand}" if isinstance(hand, int) and hand > 1 else ""
        player = who.get("player") or "the player"
        return f"Spot {who.get('spot')}{which}, {player} on {who.get('total')}: {' or '.join(allowed)}?"

    def unlisted_decision(self, awaiting: Awaiting) -> dict[str, Any] | None:
        action = unlisted_action(awaiting.allowed)  # stand or surrender, and nobody surrendered
        return {"spot": awaiting.who["spot"], "action": action} if action else None

    def unlisted_before(self, state: Any, decision: Event) -> bool:
        return stands_unlisted(state, decision)

    def opening_model(self) -> type[BaseModel]:
        from controller.games.jokers22.api import Jokers22OpenBody

        return Jokers22OpenBody

    def decision_model(self) -> type[BaseModel]:
        from controller.games.jokers22.api import DecisionBody

        return DecisionBody

    # -- what the dealer may see: a double down's card lies face down until the hand is shown ----

    derived_keys = frozenset({"total", "soft"})  # a hand's total beside its cards (a card placed, a settled hand)

    def hidden_cards(self, state: Any) -> frozenset[str]:
        """The card each doubled hand took for its double (its third: a double is on the first two
        cards only), face down while the round is dealt (GAMES.md). A 6-deck shoe may hold the
        same card face up elsewhere: its text is hidden with the face-down one's."""
        if state.phase != "dealing":
            return frozenset()
        return frozenset(str(h.cards[2]) for s in state.spots for h in s.hands if h.doubled and len(h.cards) > 2)

    def hidden_after(
        self, settlement: Mapping[str, Any], round_file: Mapping[str, Any] | None, cards: Sequence[str]
    ) -> frozenset[str]:
        """A settled round turned every hand over at the banker's showdown: nothing stays hidden.
        A void round turned nothing over, and its settlement does not say which hands doubled: the
        third card of every hand that may have been a double (three cards, no ace or joker in the
        first two) stays hidden."""
        if "void" not in settlement:
            return frozenset()
        hidden = set()
        for spot in settlement.get("spots", []):
            for hand in spot.get("hands", []):
                held = [str(c) for c in hand.get("cards", [])]
                if len(held) == 3 and not any(c == "JK" or c.startswith("A") for c in held[:2]):
                    hidden.add(held[2])
        return frozenset(hidden)

    def next_card_hidden(self, awaiting: Awaiting) -> bool:
        return awaiting.kind == "card" and awaiting.target.get("face") == "down"

    def in_play(self, state: Any) -> set[int]:
        return {spot.spot for spot in state.spots} if state.phase == "dealing" else set()

    def display_card(self, target: Mapping[str, Any], last: str) -> Show:
        if target.get("banker"):
            return Lines("DEAL THE BANKER", last)
        return Lines(f"DEAL SPOT {target['spot']} HAND {target.get('hand', 1)}", last)

    def display_decision(self, who: Mapping[str, Any], allowed: Sequence[str]) -> Show:
        return Lines(
            f"SPOT {who.get('spot')} {str(who.get('player') or '').upper()}".strip(),
            " ".join(_SHORT.get(a, a.upper()) for a in allowed),
        )

    def display_payouts(self, pays: list[dict[str, Any]]) -> Show:
        if len(pays) == 1:  # a player at a spot: the name tells the dealer whose chips
            first = pays[0]
            return Lines(f"PAY {first['player'].upper()} SPOT {first['spot']}", str(first["pay"]).rjust(20))
        return super().display_payouts(pays)

    def demo_opening(self, rng: random.Random, *, seats: int) -> dict[str, Any]:
        from controller.games.jokers22.demo import opening

        return opening(rng, seats)

    def demo_choice(self, awaiting: Awaiting, rng: random.Random) -> dict[str, Any]:
        from controller.games.jokers22.demo import choice

        return choice(awaiting.who, awaiting.allowed)

    def analysis(self) -> GameAnalysis:
        from controller.games.jokers22.analysis import ANALYSIS

        return ANALYSIS


ADAPTER = Jokers22Adapter(GAME)
