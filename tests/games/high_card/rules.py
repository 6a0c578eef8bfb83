"""High card's rules as the engine's state machine (the `Game` protocol of controller/engine/base.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.engine.base import (
    JSON,
    Awaiting,
    CardDead,
    CardDealt,
    Effect,
    Event,
    Phase,
    RoundInput,
    RoundVoided,
    RuleError,
    Void,
    VoidRound,
    effect,
    event,
    only_keys,
    parse_card_list,
)
from controller.engine.cards import Card, ShoeComposition

SEATS = range(1, 8)
SHOE = ShoeComposition(decks=6)


@dataclass(frozen=True)
class Wager:
    seat: int
    amount: int


@event("high-card.open")
@dataclass(frozen=True)
class OpenRound(Event):
    wagers: tuple[Wager, ...]


@effect("high-card.card-placed")
@dataclass(frozen=True)
class CardPlaced(Effect):
    seat: int | None  # None: the dealer
    card: Card


@effect("high-card.round-settled")
@dataclass(frozen=True)
class RoundSettled(Effect):
    paid: int
    collected: int


@dataclass(frozen=True)
class HighCardState:
    phase: Phase = "idle"
    wagers: tuple[Wager, ...] = ()
    cards: tuple[Card, ...] = ()  # seat cards in seat order, then the dealer's
    void: Void | None = None


def _rank(card: Card) -> int:
    assert card.rank is not None, "the shoe holds no jokers"
    return int(card.rank)


class HighCard:
    name = "high-card"
    state_type = HighCardState

    def initial(self) -> HighCardState:
        return HighCardState()

    def shoe(self, open_event: Event) -> ShoeComposition:
        return SHOE

    def shoe_for_rules(self, doc: Mapping[str, Any]) -> ShoeComposition:
        only_keys(doc, set(), "rules")
        return SHOE

    def apply(self, state: HighCardState, ev: Event) -> tuple[HighCardState, tuple[Effect, ...]]:
        if isinstance(ev, OpenRound):
            if state.phase == "dealing":
                raise RuleError("a round is being dealt", field="event")
            _validate(ev)
            return HighCardState("dealing", ev.wagers), ()
        if isinstance(ev, CardDealt):
            if state.phase != "dealing":
                return state, (CardDead(ev.card, "no round is being dealt"),)
            seat = state.wagers[len(state.cards)].seat if len(state.cards) < len(state.wagers) else None
            new = dataclasses.replace(state, cards=(*state.cards, ev.card))
            effects: list[Effect] = [CardPlaced(seat, ev.card)]
            if seat is None:
                new = dataclasses.replace(new, phase="settled")
                rows = _settle(new)
                effects.append(
                    RoundSettled(sum(r["paid"] for r in rows), sum(r["amount"] for r in rows if r["result"] == "lost"))
                )
            return new, tuple(effects)
        if isinstance(ev, VoidRound):
            if state.phase != "dealing":
                raise RuleError("there is no round being dealt to void", field="event")
            returned = {w.seat: w.amount for w in state.wagers}
            return dataclasses.replace(state, phase="void", void=Void(ev.by, ev.reason)), (
                RoundVoided(ev.by, ev.reason, returned),
            )
        raise RuleError(f"high card has no event {ev.kind!r}", field="event")

    def awaiting(self, state: HighCardState) -> Awaiting:
        if state.phase != "dealing":
            return Awaiting("round")
        if len(state.cards) < len(state.wagers):
            return Awaiting("card", target={"seat": state.wagers[len(state.cards)].seat})
        return Awaiting("card", target={"dealer": True})

    def settlement(self, state: HighCardState) -> dict[str, JSON]:
        if state.void is not None:
            return {"game": self.name, "void": {"by": state.void.by, "reason": state.void.reason}}
        return {"game": self.name, "dealer": str(state.cards[-1]), "seats": _settle(state)}

    def parse_round_file(self, doc: Mapping[str, Any], *, seats: int | None = None) -> RoundInput:
        only_keys(doc, {"game", "rules", "wagers", "cards"}, "round file")
        self.shoe_for_rules(doc.get("rules") or {})
        wagers_doc = doc.get("wagers")
        if not isinstance(wagers_doc, list) or not wagers_doc:
            raise RuleError("must be a list of {seat, amount}", field="wagers")
        wagers = []
        for i, w in enumerate(wagers_doc):
            if not isinstance(w, Mapping):
                raise RuleError("must be an object {seat, amount}", field=f"wagers[{i}]")
            only_keys(w, {"seat", "amount"}, f"wagers[{i}]")
            seat, amount = w.get("seat"), w.get("amount")
            if isinstance(seat, bool) or not isinstance(seat, int):
                raise RuleError(f"must be a seat number, not {seat!r}", field=f"wagers[{i}].seat")
            if isinstance(amount, bool) or not isinstance(amount, int):
                raise RuleError(f"must be a whole number of chips, not {amount!r}", field=f"wagers[{i}].amount")
            if seats is not None and seat > seats:
                raise RuleError(f"this table seats {seats}", field=f"wagers[{i}].seat", seat=seat)
            wagers.append(Wager(seat, amount))
        opening = OpenRound(tuple(wagers))
        _validate(opening)
        return RoundInput(open=opening, cards=parse_card_list(doc))

    def parse_decision(self, doc: Mapping[str, Any], where: str) -> Event:
        raise RuleError("high card has no decisions", field=where)

    def round_file(self, state: HighCardState) -> dict[str, JSON]:
        return {
            "game": self.name,
            "rules": {},
            "wagers": [{"seat": w.seat, "amount": w.amount} for w in state.wagers],
            "cards": [str(c) for c in state.cards],
        }

    def payouts(self, settlement: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            {"seat": r["seat"], "pay": r["paid"], "collect": r["amount"] if r["result"] == "lost" else 0, "net": r["net"]}
            for r in settlement.get("seats", [])
        ]

    def bets(self, settlement: Mapping[str, Any]) -> list[tuple[str, int, int]]:
        return [("high card", r["amount"], r["paid"]) for r in settlement.get("seats", [])]


def _validate(ev: OpenRound) -> None:
    seen: set[int] = set()
    for i, w in enumerate(ev.wagers):
        if w.seat not in SEATS:
            raise RuleError("the table has seats 1 to 7", field=f"wagers[{i}].seat", seat=w.seat)
        if w.seat in seen:
            raise RuleError("a seat bets once", field=f"wagers[{i}].seat", seat=w.seat)
        if not 1 <= w.amount <= 1000:
            raise RuleError("a wager is 1 to 1000 chips", field=f"wagers[{i}].amount", seat=w.seat)
        seen.add(w.seat)
    if [w.seat for w in ev.wagers] != sorted(seen):
        raise RuleError("wagers are listed in seat order", field="wagers")


def _settle(state: HighCardState) -> list[dict[str, Any]]:
    dealer = _rank(state.cards[-1])
    rows = []
    for wager, card in zip(state.wagers, state.cards, strict=False):
        mine = _rank(card)
        result = "won" if mine > dealer else "lost" if mine < dealer else "push"
        paid = wager.amount if result == "won" else 0
        net = paid if result == "won" else -wager.amount if result == "lost" else 0
        rows.append({"seat": wager.seat, "card": str(card), "amount": wager.amount, "result": result, "paid": paid, "net": net})
    return rows


GAME = HighCard()
