"""A Jokers 22 round file and a player's decision read without pydantic when every field in them
is plainly right (controller/games/plain.py says how), else by their models (`api.py`), which
refuse them in REPLAY.md's words. The table reads every round's opening and every decision here:
its process never loads pydantic for a right one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.engine.base import RoundInput
from controller.games.jokers22.rules import (
    ACTIONS,
    ANSWERS,
    Banker,
    Decision,
    OpenRound,
    SpotBet,
    SpotError,
    Wager,
    parse_rules,
    validate_open,
)
from controller.games.plain import (
    NEW_LIST,
    REQUIRED,
    Obj,
    any_value,
    card,
    dict_of,
    list_of,
    name,
    optional,
    plain,
    stripped,
    text,
    whole,
)

ACTION = f"the action must be one of {', '.join(ACTIONS)}, not {{input!r}}"

#: api.py's WagerBody, SpotBody, BankerBody and DecisionBody.
WAGER = Obj("WagerBody", {"player": (name, REQUIRED), "amount": (whole, REQUIRED)})
SPOT = Obj("SpotBody", {"spot": (whole, REQUIRED), "wagers": (list_of(WAGER), REQUIRED)})
BANKER = Obj("BankerBody", {"stake": (whole, REQUIRED), "player": (optional(name), None)})
DECISION = Obj(
    "DecisionBody",
    {"spot": (whole, REQUIRED), "action": (stripped(1, 20), REQUIRED), "player": (optional(name), None)},
)
#: api.py's Jokers22RoundFile.
ROUND_FILE = Obj(
    "Jokers22RoundFile",
    {
        "banker": (BANKER, REQUIRED),
        "spots": (list_of(SPOT), REQUIRED),
        "game": (text, REQUIRED),
        "rules": (optional(dict_of(any_value)), None),
        "cards": (list_of(card), REQUIRED),
        "decisions": (list_of(DECISION), NEW_LIST),
    },
)


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats` spots), its cards and its
    decisions, or RuleError naming the field, the spot and the rule."""
    body = plain(ROUND_FILE, doc)
    if body is None:
        from controller.games.jokers22.api import round_input as checked

        return checked(doc, seats)
    return from_body(body, seats)


def decision(doc: Mapping[str, Any], where: str) -> Decision:
    """One decision as a round file writes it (`where` names it: "decision"), or RuleError."""
    body = plain(DECISION, doc)
    if body is None:
        from controller.games.jokers22.api import decision as checked

        return checked(doc, where)
    return decision_of(body, where)


def from_body(body: Any, seats: int) -> RoundInput:
    """The round file as read (by its model or here) as its opening event, cards and decisions."""
    opening = OpenRound(
        rules=parse_rules(body.rules or {}),
        banker=Banker(stake=body.banker.stake, player=body.banker.player),
        spots=tuple(
            SpotBet(spot=s.spot, wagers=tuple(Wager(player=w.player, amount=w.amount) for w in s.wagers))
            for s in body.spots
        ),
        table_seats=seats,
    )
    validate_open(opening)
    decisions = tuple(decision_of(d, f"decisions[{i}]") for i, d in enumerate(body.decisions))
    return RoundInput(open=opening, cards=tuple(body.cards), decisions=decisions)


def decision_of(body: Any, where: str) -> Decision:
    """A decision as read (by its model or here), or SpotError for one the game does not take."""
    if body.action not in ACTIONS:
        raise SpotError(ACTION.format(input=body.action), field=where, spot=body.spot)
    if body.player is None and body.action in ("surrender", *ANSWERS):
        raise SpotError(f"a {body.action} names the player who takes it", field=where, spot=body.spot)
    return Decision(spot=body.spot, action=body.action, player=body.player)
