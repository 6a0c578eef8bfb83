"""The bodies of a Jokers 22 round: the opening (POST /api/rounds) and a player's decision
(POST /api/decisions), as a round file writes them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt, StringConstraints

from controller.games.bodies import Body, Name


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
    """A player's choice: the spot, the action, and the player for surrender, match and decline."""

    spot: StrictInt
    action: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20)]
    player: Name | None = None
