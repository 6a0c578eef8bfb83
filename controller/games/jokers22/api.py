"""The bodies of a Jokers 22 round, one model each: the opening (POST /api/rounds), a player's
decision (POST /api/decisions) and the round file (REPLAY.md), which is the opening with the
game, its rule options, the cards and the decisions. `tablectl replay`, the table and the API
read with them (`controller/games/bodies.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, StrictInt, StringConstraints

from controller.engine.base import RoundInput
from controller.games.bodies import Body, CardText, Name, Says, read
from controller.games.jokers22.rules import (
    ACTIONS,
    ANSWERS,
    SPOTS_MAX,
    Banker,
    Decision,
    OpenRound,
    SpotBet,
    SpotError,
    Wager,
    parse_rules,
    validate_open,
)

SPOT = f"must be a spot number 1 to {SPOTS_MAX}, not {{input!r}}"
WAGERS = "must be a list of {{player, amount}} in the order placed"
DECIDED_SPOT = "must be a spot number, not {input!r}"
ACTION = f"the action must be one of {', '.join(ACTIONS)}, not {{input!r}}"
NAMED = "the player must be named, not {input!r}"


class WagerBody(Body):
    player: Annotated[Name, Says(NAMED, seat="spot")]
    amount: Annotated[StrictInt, Says("the wager must be a whole number of chips, not {input!r}", seat="spot")]


class SpotBody(Body):
    # How many spots and wagers, and which, is the engine's to say (its rules name them).
    spot: Annotated[StrictInt, Says(SPOT, missing=SPOT)]
    wagers: Annotated[
        list[Annotated[WagerBody, Says("must be an object with player and amount", seat="spot")]],
        Says(WAGERS, missing=WAGERS, seat="spot"),
    ]


class BankerBody(Body):
    stake: Annotated[StrictInt, Says("the banker's stake must be a whole number of 1 or more chips, not {input!r}")]
    player: Annotated[Name | None, Says("the banker's name must be text")] = None


class Jokers22OpenBody(Body):
    banker: Annotated[BankerBody, Says("must be an object with the banker's stake")]
    spots: Annotated[
        list[Annotated[SpotBody, Says("must be an object with spot and wagers")]], Says("must be a list of spots")
    ]


class DecisionBody(Body):
    """A player's choice: the spot, the action, and the player for surrender, match and decline."""

    not_an_object: ClassVar[str | None] = "must be an object with spot, action and player"

    spot: Annotated[StrictInt, Says(DECIDED_SPOT, missing=DECIDED_SPOT)]
    action: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=20),
        Says(ACTION, missing=ACTION, seat="spot", whole=True),
    ]
    player: Annotated[Name | None, Says(NAMED, seat="spot", whole=True)] = None


class Jokers22RoundFile(Jokers22OpenBody):
    game: str
    rules: Annotated[dict[str, Any] | None, Says("must be an object of rule options")] = None
    cards: Annotated[list[CardText], Says("must be a list of cards")]
    decisions: Annotated[list[DecisionBody], Says("must be a list of decisions")] = Field(default_factory=list)


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats` spots), its cards and its
    decisions, or RuleError naming the field, the spot and the rule."""
    body = read(Jokers22RoundFile, doc)
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
    decisions = tuple(_decision(d, f"decisions[{i}]") for i, d in enumerate(body.decisions))
    return RoundInput(open=opening, cards=tuple(body.cards), decisions=decisions)


def decision(doc: Mapping[str, Any], where: str) -> Decision:
    """One decision as a round file writes it (`where` names it: "decision"), or RuleError."""
    return _decision(read(DecisionBody, doc, where), where)


def _decision(body: DecisionBody, where: str) -> Decision:
    if body.action not in ACTIONS:
        raise SpotError(ACTION.format(input=body.action), field=where, spot=body.spot)
    if body.player is None and body.action in ("surrender", *ANSWERS):
        raise SpotError(f"a {body.action} names the player who takes it", field=where, spot=body.spot)
    return Decision(spot=body.spot, action=body.action, player=body.player)
