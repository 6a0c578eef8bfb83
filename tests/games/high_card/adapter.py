"""High card at the table, through the adapter interface alone."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, StrictInt

from controller.games.base import GameAdapter, Lines, Show, Words
from controller.games.bodies import Body

from .rules import GAME

if TYPE_CHECKING:
    from controller.analysis.base import GameAnalysis


class WagerBody(Body):
    seat: StrictInt
    amount: StrictInt


class OpenBody(Body):
    wagers: list[WagerBody] = Field(min_length=1, max_length=7)


class HighCardAdapter(GameAdapter):
    name = "high-card"
    title = "High card"
    words = Words(named=(("dealer", lambda t: "the dealer" if t.get("dealer") else ""), ("seat", lambda t: f"seat {t['seat']}")))

    def opening_model(self) -> type[BaseModel]:
        return OpenBody

    def in_play(self, state: Any) -> set[int]:
        return {w.seat for w in state.wagers} if state.phase == "dealing" else set()

    def display_card(self, target: Mapping[str, Any], last: str) -> Show:
        return Lines("DEAL THE DEALER" if target.get("dealer") else f"DEAL SEAT {target['seat']}", last)

    def demo_opening(self, rng: random.Random, *, seats: int) -> dict[str, Any]:
        chosen = sorted(rng.sample(range(1, seats + 1), rng.randint(1, min(3, seats))))
        return {"wagers": [{"seat": s, "amount": rng.choice([5, 10, 25])} for s in chosen]}

    def recall_lines(self, settlement: Mapping[str, Any]) -> list[str]:
        rows = settlement.get("seats", [])
        return [f"  seat {r['seat']}: {r['result']} {r['net']:+d}, card {r['card']}" for r in rows]

    def analysis(self) -> GameAnalysis:
        from .analysis import ANALYSIS

        return ANALYSIS


ADAPTER = HighCardAdapter(GAME)
