"""Settle a round file (REPLAY.md) with the same engine the daemon runs.

The round's cards go through the shoe tracker and then, one at a time, into the game's state
machine, exactly as the table loop feeds cards from the shoe; the settlement is what the engine
says when it has no more need of cards or decisions. Nothing here knows a game's rules.
`replay_steps` gives the same run step by step, for game recall on the supervisor's screen.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from controller.engine import game_names
from controller.engine.base import JSON, Awaiting, CardDealt, Effect, Event, RuleError, ShoeReshuffled
from controller.engine.cards import Card, CardError, ShoeTracker
from controller.games import adapter
from controller.games.base import GameAdapter, seat_of


@dataclass(frozen=True)
class Step:
    """One step of a replayed round: the input (the opening, a card or a decision) and after it."""

    event: Event
    card: Card | None
    state: Any
    effects: tuple[Effect, ...]
    awaiting: Awaiting


def settle_round_file(doc: object) -> dict[str, JSON]:
    """The settlement of round file `doc` (parsed JSON), or RuleError naming field, seat and rule."""
    game, steps = _run(doc)
    (last,) = deque(steps, maxlen=1)  # run every step; the last one holds the settled state
    return game.rules.settlement(last.state)


def replay_steps(doc: object) -> tuple[GameAdapter, list[Step]]:
    """Every step of round file `doc`, from the opening to the settlement, and its game."""
    game, steps = _run(doc)
    return game, list(steps)


def _run(doc: object) -> tuple[GameAdapter, Iterator[Step]]:
    if not isinstance(doc, Mapping):
        raise RuleError("a round file is a JSON object", field="round file")
    if "game" not in doc:
        *others, last = game_names()
        raise RuleError(f"is required ({', '.join(others)} or {last})", field="game")
    table_game = adapter(doc["game"])
    game = table_game.rules
    round_in = game.parse_round_file(doc)
    state, effects = game.apply(game.initial(), round_in.open)
    shoe = ShoeTracker(game.shoe(round_in.open))

    def steps() -> Iterator[Step]:
        nonlocal state
        yield Step(round_in.open, None, state, effects, game.awaiting(state))
        used = decided = 0
        while True:
            awaiting = game.awaiting(state)
            if awaiting.kind == "card":
                if used >= len(round_in.cards):
                    seat, place = seat_of(awaiting.target)
                    raise RuleError(
                        f"the round needs another card, for {table_game.describe(awaiting.target)}, "
                        f"but the round file gives only {len(round_in.cards)}",
                        field="cards",
                        seat=seat,
                        place=place,
                    )
                card = round_in.cards[used]
                try:
                    shoe.take(card)
                except CardError as exc:
                    raise RuleError(str(exc), field=f"cards[{used}]") from None
                event: Event = CardDealt(card)
                used += 1
            elif awaiting.kind == "decision":
                unlisted = table_game.unlisted_decision(awaiting)
                if unlisted is not None and (
                    decided >= len(round_in.decisions)
                    or table_game.unlisted_before(state, round_in.decisions[decided])
                ):
                    # A decision the file leaves out (a hand at 20 that nobody surrendered
                    # stands): taken here, before the cards the file's next decision waits for.
                    event, card = game.parse_decision(unlisted, "decisions"), None
                elif decided >= len(round_in.decisions):
                    seat, place = seat_of(awaiting.who)
                    raise RuleError(
                        f"the round needs a decision by {table_game.describe(awaiting.who)} "
                        "but the round file has no more",
                        field="decisions",
                        seat=seat,
                        place=place,
                    )
                else:
                    event, card = round_in.decisions[decided], None
                    decided += 1
            else:
                return
            state, out = game.apply(state, event)
            if any(isinstance(fx, ShoeReshuffled) for fx in out):
                shoe.reshuffle()  # the game deals on from a freshly shuffled deck (a rainout)
            yield Step(event, card if isinstance(event, CardDealt) else None, state, out, game.awaiting(state))

    return table_game, steps()



