"""The table's meters (GLI-style): rounds, voids, wagered and paid by bet type, faults by kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.engine.base import JSON, Game


@dataclass
class Meters:
    """Per game: rounds, voids, wagered and paid by bet type, faults by kind."""

    rounds: int = 0
    voids: int = 0
    wagered: Counter[str] = field(default_factory=Counter)
    paid: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    dead_cards: int = 0

    def settled(self, game: Game[Any], settlement: Mapping[str, Any]) -> None:
        """Count a settled round: every bet's wager and payout under its bet type."""
        self.rounds += 1
        for name, wagered, paid in game.bets(settlement):
            self.wagered[name] += wagered
            self.paid[name] += paid

    def to_json(self) -> dict[str, JSON]:
        return {
            "rounds": self.rounds,
            "voids": self.voids,
            "wagered": dict(self.wagered),
            "paid": dict(self.paid),
            "total_wagered": sum(self.wagered.values()),
            "total_paid": sum(self.paid.values()),
            "faults": dict(self.faults),
            "dead_cards": self.dead_cards,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Meters:
        """The meters `to_json` wrote (totals follow from the counts)."""
        return cls(
            rounds=int(data["rounds"]),
            voids=int(data["voids"]),
            wagered=Counter(data["wagered"]),
            paid=Counter(data["paid"]),
            faults=Counter(data["faults"]),
            dead_cards=int(data["dead_cards"]),
        )
