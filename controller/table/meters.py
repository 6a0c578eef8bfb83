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
    # Settled rounds a supervisor let the next round open over, their payouts not confirmed.
    unpaid: int = 0

    def settled(self, game: Game[Any], settlement: Mapping[str, Any]) -> None:
        """Count a settled round: every bet's wager and payout under its bet type."""
        self.rounds += 1
        for name, wagered, paid in game.bets(settlement):
            self.wagered[name] += wagered
            self.paid[name] += paid

    def to_json(self) -> dict[str, JSON]:
        """The meters as kept in a snapshot: `unpaid` only once it is not 0, so a table that
        never had an override keeps its meters exactly as before the count existed."""
        out: dict[str, JSON] = {
            "rounds": self.rounds,
            "voids": self.voids,
            "wagered": dict(self.wagered),
            "paid": dict(self.paid),
            "total_wagered": sum(self.wagered.values()),
            "total_paid": sum(self.paid.values()),
            "faults": dict(self.faults),
            "dead_cards": self.dead_cards,
        }
        if self.unpaid:
            out["unpaid"] = self.unpaid
        return out

    def report(self, *, due: bool) -> dict[str, JSON]:
        """The meters as the supervisor reads them: the settled rounds told apart by their
        payouts (`due`: the last settled round still waits for the dealer's confirm)."""
        out = self.to_json()
        out.pop("unpaid", None)
        unpaid = self.unpaid
        return {
            **out,
            "rounds_settled": self.rounds,
            "rounds_paid": self.rounds - unpaid - (1 if due else 0),
            "rounds_unpaid": unpaid,
            "rounds_payouts_due": 1 if due else 0,
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
            unpaid=int(data.get("unpaid", 0)),
        )
