"""Faults (GAMES.md section 4): their codes, the plain words a dealer reads, and how a supervisor
may clear each. A fault is latched by a journaled `fault` entry (or raised again by replaying the
entry that caused it), blocks the card flow, survives restarts, and is cleared only by a
supervisor's journaled action naming who and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from controller.engine.base import JSON

FaultAction = Literal["confirm", "replace", "dismiss", "void"]

#: Fault codes, the plain words a dealer reads, and what a supervisor may do about each.
FAULTS: dict[str, tuple[str, tuple[FaultAction, ...]]] = {
    # Titles fit one line of the 20-column pole display; the message gives the details.
    "impossible-card": ("Impossible card", ("confirm", "replace", "void")),
    "misread": ("Shoe misread", ("replace", "dismiss", "void")),
    "shoe-disconnected": ("Shoe disconnected", ("dismiss", "void")),
    "shoe-silent": ("Shoe silent", ("dismiss", "void")),
    "shoe-protocol": ("Shoe protocol error", ("dismiss", "void")),
    "shoe-sequence-gap": ("Shoe skipped message", ("dismiss", "void")),
    "shoe-line-noise": ("Shoe line damaged", ("dismiss", "void")),
    "shoe-duplicate": ("Shoe repeated frame", ("dismiss", "void")),
    "rejected-card": ("Card refused by game", ("replace", "dismiss", "void")),
    "device": ("Device failed", ("dismiss",)),
    # The overhead camera (controller/camera/): raised from journaled scene changes and from the
    # dealer's confirmation of the payouts, so a replay raises them again.
    "past-posting": ("Past posting", ("dismiss", "void")),
    "payout-mismatch": ("Payout mismatch", ("dismiss",)),
    "camera-bumped": ("Camera moved", ("dismiss",)),
    # The journal cannot be written: raised and cleared by the table itself (never journaled while
    # it lasts; its end is), so no supervisor action clears it.
    "disk-full": ("Disk full: no cards", ()),
    "disk-failing": ("Disk failing", ()),
    # The background full check found damage in the journal: only restoring a good copy ends it.
    "journal-damaged": ("Journal damaged", ()),
    # The installed software is not the signed release (controller/security/authentication.py): only a
    # check that passes (after reinstalling the approved release) ends it.
    "software-authentication": ("Software auth failed", ()),
}

#: The id of the journal's own fault (a journal seq is never 0).
JOURNAL_FAULT_ID = 0

#: Faults about a card in hand: clearing them deals the held card (confirm) or its replacement.
CARD_FAULTS = ("impossible-card", "rejected-card")


@dataclass
class Fault:
    id: int  # the journal seq that raised it
    code: str
    message: str  # plain words: what, where, what to do
    at: str
    round: int | None
    card: str | None = None  # the held card an impossible-card / rejected-card fault is about
    acknowledged_by: str | None = None
    # Only what can clear this fault: a card the shoe cannot hold at all (a joker in a shoe
    # without jokers) cannot be confirmed, since dealing it would only stop play again.
    unconfirmable: bool = False

    @property
    def title(self) -> str:
        return FAULTS[self.code][0]

    @property
    def actions(self) -> tuple[FaultAction, ...]:
        actions = FAULTS[self.code][1]
        return tuple(a for a in actions if a != "confirm") if self.unconfirmable else actions

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "code": self.code,
            "title": self.title,
            "message": self.message,
            "at": self.at,
            "round": self.round,
            "card": self.card,
            "actions": list(self.actions),
            "acknowledged_by": self.acknowledged_by,
            "blocking": True,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> Fault:
        """The fault `to_json` wrote (its title and blocking follow from its code; a fault whose code
        allows a confirm but whose written actions did not was unconfirmable, and stays so)."""
        code = str(data["code"])
        actions = data.get("actions")
        unconfirmable = (
            isinstance(actions, list) and "confirm" in FAULTS[code][1] and "confirm" not in actions
        )
        return cls(
            int(data["id"]),
            code,
            str(data["message"]),
            str(data["at"]),
            None if data["round"] is None else int(data["round"]),
            None if data["card"] is None else str(data["card"]),
            None if data["acknowledged_by"] is None else str(data["acknowledged_by"]),
            unconfirmable=unconfirmable,
        )
