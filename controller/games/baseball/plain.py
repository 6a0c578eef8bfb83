"""A Baseball poker round file and a player's action read without pydantic when every field in
them is plainly right (controller/games/plain.py says how), else by their models (`api.py`), which
refuse them in REPLAY.md's words. The table reads every round's opening and every action here: its
process never loads pydantic for a right one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.engine.base import RoundInput, RuleError
from controller.games.baseball.rules import ACTIONS, Action, OpenRound, Player, parse_rules, validate_open
from controller.games.plain import (
    NEW_LIST,
    REQUIRED,
    Obj,
    any_value,
    card,
    dict_of,
    list_of,
    optional,
    plain,
    stripped,
    text,
    whole,
)

ACTION = f"the action must be one of {', '.join(ACTIONS)}, not {{input!r}}"

#: api.py's PlayerBody.
PLAYER = Obj("PlayerBody", {"seat": (whole, REQUIRED), "stack": (whole, REQUIRED)})
#: api.py's ActionBody.
ACTION_BODY = Obj("ActionBody", {"seat": (whole, REQUIRED), "action": (stripped(1, 20), REQUIRED)})
#: api.py's BaseballRoundFile.
ROUND_FILE = Obj(
    "BaseballRoundFile",
    {
        "players": (list_of(PLAYER), REQUIRED),
        "game": (text, REQUIRED),
        "rules": (optional(dict_of(any_value)), None),
        "cards": (list_of(card), REQUIRED),
        "actions": (list_of(ACTION_BODY), NEW_LIST),
    },
)


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats`), its cards and its actions,
    or RuleError naming the field, the seat and the rule."""
    body = plain(ROUND_FILE, doc)
    if body is None:
        from controller.games.baseball.api import round_input as checked

        return checked(doc, seats)
    return from_body(body, seats)


def action(doc: Mapping[str, Any], where: str) -> Action:
    """One action as a round file writes it (`where` names it: "decision"), or RuleError."""
    body = plain(ACTION_BODY, doc)
    if body is None:
        from controller.games.baseball.api import action as checked

        return checked(doc, where)
    return action_of(body, where)


def from_body(body: Any, seats: int) -> RoundInput:
    """The round file as read (by its model or here) as its opening event, cards and actions."""
    opening = OpenRound(
        rules=parse_rules(body.rules or {}),
        players=tuple(Player(seat=p.seat, stack=p.stack) for p in body.players),
        table_seats=seats,
    )
    validate_open(opening)
    actions = tuple(action_of(a, f"actions[{i}]") for i, a in enumerate(body.actions))
    return RoundInput(open=opening, cards=tuple(body.cards), decisions=actions)


def action_of(body: Any, where: str) -> Action:
    """An action as read (by its model or here), or RuleError for an action the game has not."""
    if body.action not in ACTIONS:
        raise RuleError(ACTION.format(input=body.action), field=where, seat=body.seat)
    return Action(seat=body.seat, action=body.action)
