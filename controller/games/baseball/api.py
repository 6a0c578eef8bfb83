"""The bodies of a Baseball poker hand, one model each: the opening (POST /api/rounds), a player's
action (POST /api/decisions) and the round file (REPLAY.md), which is the opening with the game,
its rule options, the cards and the actions. `tablectl replay`, the table and the API read with
them (`controller/games/bodies.py`; the table and replay read a body plainly right without them:
`plain.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, StrictInt, StringConstraints

from controller.engine.base import RoundInput, seat_refused
from controller.games.baseball.plain import ACTION, action_of, from_body
from controller.games.baseball.rules import SEATS, SEATS_MAX, Action
from controller.games.bodies import Body, CardText, Says, read

ACTED_SEAT = "must be a seat number, not {input!r}"


def _seat_refused(seat: object) -> str:
    return seat_refused(seat, SEATS, SEATS_MAX, "Baseball poker")


class PlayerBody(Body):
    seat: Annotated[StrictInt, Says(_seat_refused)]
    stack: Annotated[
        StrictInt,
        Says("the stack must be a whole number of 1 or more chips, not {input!r}", seat="seat", seat_if_missing=False),
    ]


PlayerItem = Annotated[PlayerBody, Says("must be an object with seat and stack")]


class BaseballOpenBody(Body):
    # How many players, and which seats, is the engine's to say (two or more; the table's count).
    players: Annotated[list[PlayerItem], Says("must be a list of {{seat, stack}}")]


class ActionBody(Body):
    """A player's action: the seat and what it does (call, raise, fold, pay, decline, ...)."""

    not_an_object: ClassVar[str | None] = "must be an object with seat and action"

    seat: Annotated[StrictInt, Says(ACTED_SEAT, missing=ACTED_SEAT)]
    action: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=20),
        Says(ACTION, missing=ACTION, seat="seat", whole=True),
    ]


class BaseballRoundFile(BaseballOpenBody):
    game: str
    rules: Annotated[dict[str, Any] | None, Says("must be an object of rule options")] = None
    cards: Annotated[list[CardText], Says("must be a list of cards")]
    actions: Annotated[list[ActionBody], Says("must be a list of actions")] = Field(default_factory=list)


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats`), its cards and its actions,
    or RuleError naming the field, the seat and the rule (the table reads a plainly right one
    without this model: `plain.py`)."""
    return from_body(read(BaseballRoundFile, doc), seats)


def action(doc: Mapping[str, Any], where: str) -> Action:
    """One action as a round file writes it (`where` names it: "decision"), or RuleError."""
    return action_of(read(ActionBody, doc, where), where)
