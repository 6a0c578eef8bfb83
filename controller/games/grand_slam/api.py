"""The bodies of a Grand Slam round, one model each: the opening (POST /api/rounds) and the round
file (REPLAY.md), which is the opening with the game, its rule options and the cards. `tablectl
replay`, the table and the API read with them (`controller/games/bodies.py`; the table and
replay read a body plainly right without them: `plain.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import StrictInt

from controller.engine.base import RoundInput
from controller.games.bodies import Body, CardText, Says, read
from controller.games.grand_slam.plain import from_body
from controller.games.grand_slam.rules import SEATS_MAX

SEAT = f"must be a seat number 1 to {SEATS_MAX}, not {{input!r}}"
Chips = Annotated[StrictInt, Says("the wager on {key} must be a whole number of chips, not {input!r}", seat="seat")]
SideChips = Annotated[StrictInt, Says("the side bet must be a whole number of chips, not {input!r}", seat="seat")]


class SeatBody(Body):
    seat: Annotated[StrictInt, Says(SEAT, missing=SEAT)]
    wagers: Annotated[
        dict[str, Chips],
        Says("must be an object of base: amount", missing="must be an object of base: amount", seat="seat"),
    ]
    side_bets: Annotated[dict[str, SideChips] | None, Says("must be an object of side bet: amount", seat="seat")] = None


SeatItem = Annotated[SeatBody, Says("must be an object with seat, wagers and side_bets")]


class OpenRoundBody(Body):
    # How many seats, and which, is the engine's to say (a round needs one; the table's count).
    seats: Annotated[list[SeatItem], Says("must be a list of seats")]
    blind_seat: Annotated[StrictInt | None, Says("must be a seat number or null, not {input!r}")] = None


class GrandSlamRoundFile(OpenRoundBody):
    game: str
    rules: Annotated[dict[str, Any] | None, Says("must be an object of rule options")] = None
    cards: Annotated[list[CardText], Says("must be a list of cards")]


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats`) and its cards, or RuleError
    (the table reads a plainly right one without this model: `plain.py`)."""
    return from_body(read(GrandSlamRoundFile, doc), seats)
