"""The bodies of a Baseball poker hand: the opening (POST /api/rounds) and a player's action
(POST /api/decisions), as a round file writes them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt, StringConstraints

from controller.games.baseball.rules import SEATS_MAX
from controller.games.bodies import Body


class PlayerBody(Body):
    seat: StrictInt
    stack: StrictInt


class BaseballOpenBody(Body):
    players: list[PlayerBody] = Field(min_length=2, max_length=SEATS_MAX)  # the engine checks the table's count


class ActionBody(Body):
    """A player's action: the seat and what it does (call, raise, fold, pay, decline, ...)."""

    seat: StrictInt
    action: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=20)]
