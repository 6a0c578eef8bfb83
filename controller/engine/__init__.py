"""The game engine: pure rules for every game tablectl runs (see README.md in this folder).

No I/O, no clock, no randomness except a passed-in RNG. `get_game(name)` gives a game's state
machine; importing this package imports no game until one is asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from controller.engine.base import Game, RuleError

#: Game id -> (module, attribute) of its state machine. Games not yet built are listed in PLANNED.
GAMES = {
    "grand-slam": ("controller.engine.grand_slam", "GAME"),
    "jokers-22": ("controller.engine.jokers22", "GAME"),
    "baseball-poker": ("controller.engine.baseball", "GAME"),
}
PLANNED: tuple[str, ...] = ()


def get_game(name: object) -> Game[Any]:
    """The state machine of game `name`, or RuleError naming the games this tablectl runs."""
    if name in PLANNED:
        raise RuleError(
            f"{name} is not built into this tablectl yet; it settles only {', '.join(GAMES)}",
            field="game",
        )
    if not isinstance(name, str) or name not in GAMES:
        raise RuleError(f"unknown game {name!r}; the games are {', '.join([*GAMES, *PLANNED])}", field="game")
    module, attr = GAMES[name]
    game: Game[Any] = getattr(importlib.import_module(module), attr)
    return game
