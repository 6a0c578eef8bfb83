"""A round as the table keeps it for recall: its number, status, cards, settlement and round file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from controller.engine.base import JSON


@dataclass
class RoundRecord:
    number: int
    opened_at: str
    status: Literal["open", "settled", "void"] = "open"
    settlement: dict[str, JSON] | None = None
    round_file: dict[str, JSON] | None = None
    cards: list[str] = field(default_factory=list)
    paid: bool = False  # the dealer confirmed the payouts (the confirm button)

    def to_json(self, *, with_file: bool = False) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "round": self.number,
            "status": self.status,
            "opened_at": self.opened_at,
            "cards": list(self.cards),
            "settlement": self.settlement,
        }
        if with_file:
            out["round_file"] = self.round_file
        return out
