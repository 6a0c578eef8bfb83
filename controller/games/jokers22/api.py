"""The bodies of a Jokers 22 round, one model each: the opening (POST /api/rounds), a player's
decision (POST /api/decisions) and the round file (REPLAY.md), which is the opening with the
game, its rule options, the cards and the decisions. `tablectl replay`, the table and the API
read with them (`controller/games/bodies.py`; the table and replay read a body plainly right
without them: `plain.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, StrictInt, StringConstraints

from controller.engine.base import RoundInput
from controller.games.bodies import Body, CardText, Name, Says, read
from controller.games.jokers22.plain import ACTION, decision_of, from_body
from controller.games.jokers22.rules import SPOTS_MAX, Decision

SPOT = f"must be a spot number 1 to {SPOTS_MAX}, not {{input!r}}"
WAGERS = "must be a list of {{player, amount}} in the order placed"
DECIDED_SPOT = "must be a spot number, not {input!r}"
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
    decisions, or RuleError naming the field, the spot and the rule (the table reads a plainly
    right one without this model: `plain.py`)."""
    return from_body(read(Jokers22RoundFile, doc), seats)


def decision(doc: Mapping[str, Any], where: str) -> Decision:
    """One decision as a round file writes it (`where` names it: "decision"), or RuleError."""
    return decision_of(read(DecisionBody, doc, where), where)
