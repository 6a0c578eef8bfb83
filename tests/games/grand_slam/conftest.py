"""Helpers for driving the Grand Slam engine the way the table does: an opening, then cards."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from controller.engine.base import CardDealt, Effect, run_events
from controller.engine.cards import parse_card
from controller.games.grand_slam.rules import GAME, GrandSlamRules, GrandSlamState, OpenRound, SeatBet


def open_round(
    seats: Mapping[int, Mapping[str, int]],
    side_bets: Mapping[int, Mapping[str, int]] | None = None,
    blind_seat: int | None = None,
    **rules: Any,
) -> OpenRound:
    side_bets = side_bets or {}
    return OpenRound(
        rules=GrandSlamRules(**rules),
        seats=tuple(SeatBet(seat, dict(w), dict(side_bets.get(seat, {}))) for seat, w in seats.items()),
        blind_seat=blind_seat,
    )


def play(opening: OpenRound, cards: Sequence[str]) -> tuple[GrandSlamState, list[Effect]]:
    """Open the round and deal `cards` while the engine still wants cards."""
    state, effects = run_events(GAME, [opening])
    for text in cards:
        if GAME.awaiting(state).kind != "card":
            break
        state, out = GAME.apply(state, CardDealt(parse_card(text)))
        effects.extend(out)
    return state, effects


def seat_result(state: GrandSlamState, seat: int) -> dict[str, Any]:
    for entry in GAME.settlement(state)["seats"]:
        if entry["seat"] == seat:
            return dict(entry)
    raise KeyError(seat)


@pytest.fixture
def all_bases() -> dict[str, int]:
    return {"first": 10, "second": 10, "third": 10}
