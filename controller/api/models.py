"""Request bodies of the API as pydantic models: a bad body is a 422 that names the field.

The models check shape and types (strict: "10" is not a number of chips); the engine checks the
rules (wager order, limits, seats) and says which rule, so no rule is written twice.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
CardText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=3)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SeatBody(Body):
    seat: StrictInt
    wagers: dict[str, StrictInt]
    side_bets: dict[str, StrictInt] = Field(default_factory=dict)


class OpenRoundBody(Body):
    seats: list[SeatBody] = Field(min_length=1, max_length=7)
    blind_seat: StrictInt | None = None


class LoginBody(Body):
    token: Annotated[str, StringConstraints(min_length=1, max_length=512)]


class WhoBody(Body):
    name: Name | None = None


class VoidBody(Body):
    reason: Text
    name: Name | None = None


class RecalibrateBody(Body):
    reason: Text | None = None
    name: Name | None = None


class ClearFaultBody(Body):
    action: Literal["confirm", "replace", "dismiss", "void"]
    reason: Text
    card: CardText | None = None
    name: Name | None = None


class SimShoeBody(Body):
    cards: list[CardText] = Field(min_length=1, max_length=416)


class SimDrawBody(Body):
    count: StrictInt = Field(default=1, ge=1, le=52)


class SimFaultBody(Body):
    fault: Literal["silent", "bad-crc", "slow", "garbage", "duplicate", "misread", "drop", "restore"]
    on: bool = True


class WagerBody(Body):
    player: Name
    amount: StrictInt


class SpotBody(Body):
    spot: StrictInt
    wagers: list[WagerBody] = Field(min_length=1, max_length=7)


class BankerBody(Body):
    stake: StrictInt
    player: Name | None = None


class Jokers22OpenBody(Body):
    banker: BankerBody
    spots: list[SpotBody] = Field(min_length=1, max_length=7)


class DecisionBody(Body):
    """A player's choice as a round file writes it: Jokers 22 names the spot (and the player for
    surrender, match and decline)."""

    spot: StrictInt | None = None
    seat: StrictInt | None = None
    action: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20)]
    player: Name | None = None


class PlayerBody(Body):
    seat: StrictInt
    stack: StrictInt


class BaseballOpenBody(Body):
    players: list[PlayerBody] = Field(min_length=2, max_length=7)


#: The body that opens a round (a hand), per game.
OPEN_BODIES: dict[str, type[Body]] = {
    "grand-slam": OpenRoundBody,
    "jokers-22": Jokers22OpenBody,
    "baseball-poker": BaseballOpenBody,
}
