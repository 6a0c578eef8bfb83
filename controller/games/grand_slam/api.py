"""The body that opens a Grand Slam round (POST /api/rounds), as a round file writes it."""

from __future__ import annotations

from pydantic import Field, StrictInt

from controller.games.bodies import Body
from controller.games.grand_slam.rules import SEATS_MAX


class SeatBody(Body):
    seat: StrictInt
    wagers: dict[str, StrictInt]
    side_bets: dict[str, StrictInt] = Field(default_factory=dict)


class OpenRoundBody(Body):
    seats: list[SeatBody] = Field(min_length=1, max_length=SEATS_MAX)
    blind_seat: StrictInt | None = None
