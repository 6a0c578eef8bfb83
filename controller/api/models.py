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
