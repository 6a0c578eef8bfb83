"""Baseball poker at the table: who acts and what to call, in words, lamps and on the display."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.engine.base import Awaiting
from controller.games.base import GameAdapter, Lines, Show, Words
from controller.games.baseball.rules import GAME

if TYPE_CHECKING:
    from pydantic import BaseModel


class BaseballAdapter(GameAdapter):
    name = "baseball-poker"
    title = "Baseball poker"
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

    def demo_opening(self, rng: random.Random) -> dict[str, Any]:
        from controller.games.baseball.demo import opening

        return opening(rng)

    def demo_choice(self, awaiting: Awaiting, rng: random.Random) -> dict[str, Any]:
        from controller.games.baseball.demo import choice

        return choice(awaiting.who, awaiting.allowed, rng)


ADAPTER = BaseballAdapter(GAME)
