"""Settle a round file (REPLAY.md) with the same engine the daemon runs.

The round's cards go through the shoe tracker and then, one at a time, into the game's state
machine, exactly as the table loop feeds cards from the shoe; the settlement is what the engine
says when it has no more need of cards or decisions. Nothing here knows a game's rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.engine import get_game
from controller.engine.base import JSON, CardDealt, RuleError, run_events
from controller.engine.cards import CardError, ShoeTracker


def settle_round_file(doc: object) -> dict[str, JSON]:
    """The settlement of round file `doc` (parsed JSON), or RuleError naming field, seat and rule."""
    if not isinstance(doc, Mapping):
        raise RuleError("a round file is a JSON object", field="round file")
    if "game" not in doc:
        raise RuleError("is required (grand-slam, jokers-22 or baseball-poker)", field="game")
    game = get_game(doc["game"])
    round_in = game.parse_round_file(doc)
    state, _ = run_events(game, [round_in.open])
    shoe = ShoeTracker(game.shoe(round_in.open))
    used = decided = 0
    while True:
        awaiting = game.awaiting(state)
        if awaiting.kind == "card":
            if used >= len(round_in.cards):
                raise RuleError(
                    f"the round needs another card, for {_describe(awaiting.target)}, "
                    f"but the round file gives only {len(round_in.cards)}",
                    field="cards",
                    seat=_seat_of(awaiting.target),
                )
            card = round_in.cards[used]
            try:
                shoe.take(card)
            except CardError as exc:
                raise RuleError(str(exc), field=f"cards[{used}]") from None
            state, _ = game.apply(state, CardDealt(card))
            used += 1
        elif awaiting.kind == "decision":
            if decided >= len(round_in.decisions):
                raise RuleError(
                    f"the round needs a decision by {_describe(awaiting.who)} but the round file has no more",
                    field="decisions",
                    seat=_seat_of(awaiting.who),
                )
            state, _ = game.apply(state, round_in.decisions[decided])
            decided += 1
        else:
            return game.settlement(state)


def _describe(target: Mapping[str, Any]) -> str:
    parts = []
    if "seat" in target:
        parts.append(f"seat {target['seat']}" + (" (blind hand)" if target.get("blind") else ""))
    if "spot" in target:
        parts.append(f"spot {target['spot']}")
    if "base" in target:
        parts.append(f"{target['base']} base")
    parts.extend(f"{k} {v}" for k, v in target.items() if k not in ("seat", "spot", "base", "blind"))
    return ", ".join(parts) or "the table"


def _seat_of(target: Mapping[str, Any]) -> int | None:
    seat = target.get("seat", target.get("spot"))
    return seat if isinstance(seat, int) else None
