"""A Grand Slam round file read without pydantic when every field in it is plainly right
(controller/games/plain.py says how), else by its model (`api.py`), which refuses it in REPLAY.md's
words. The table reads every round's opening here: its process never loads pydantic for a right one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from controller.engine.base import RoundInput
from controller.games.grand_slam.rules import Base, OpenRound, SeatBet, SideBet, parse_rules
from controller.games.plain import REQUIRED, Obj, any_value, card, dict_of, list_of, optional, plain, text, whole

#: api.py's SeatBody.
SEAT = Obj(
    "SeatBody",
    {"seat": (whole, REQUIRED), "wagers": (dict_of(whole), REQUIRED), "side_bets": (optional(dict_of(whole)), None)},
)
#: api.py's GrandSlamRoundFile.
ROUND_FILE = Obj(
    "GrandSlamRoundFile",
    {
        "seats": (list_of(SEAT), REQUIRED),
        "blind_seat": (optional(whole), None),
        "game": (text, REQUIRED),
        "rules": (optional(dict_of(any_value)), None),
        "cards": (list_of(card), REQUIRED),
    },
)


def round_input(doc: Mapping[str, Any], seats: int) -> RoundInput:
    """Round file `doc` as its opening event (at a table of `seats`) and its cards, or RuleError."""
    body = plain(ROUND_FILE, doc)
    if body is None:
        from controller.games.grand_slam.api import round_input as checked

        return checked(doc, seats)
    return from_body(body, seats)


def from_body(body: Any, seats: int) -> RoundInput:
    """The round file as read (by its model or here) as its opening event and its cards."""
    bets = tuple(
        SeatBet(s.seat, cast(dict[Base, int], s.wagers), cast(dict[SideBet, int], s.side_bets or {}))
        for s in body.seats
    )
    opening = OpenRound(rules=parse_rules(body.rules or {}), seats=bets, blind_seat=body.blind_seat, table_seats=seats)
    return RoundInput(open=opening, cards=tuple(body.cards))
