"""The game engine: the shared contract and the registry of games (see README.md in this folder).

No I/O, no clock, no randomness except a passed-in RNG. `get_game(name)` gives a game's state
machine, from the rules of its folder `controller/games/<game>/`; importing this package imports
no game until one is asked for.

A game added outside this tree (a casino's own game, or a test's) is registered by naming its
package in TABLECTL_GAMES (`name=package,name=package`); the package holds `rules.py` and
`adapter.py` as the built-in games do.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from controller.engine.base import Game, RuleError

#: Game id -> the package of its folder (rules.py: GAME, adapter.py: ADAPTER).
GAMES = {
    "grand-slam": "controller.games.grand_slam",
    "jokers-22": "controller.games.jokers22",
    "baseball-poker": "controller.games.baseball",
}


def _registry() -> dict[str, str]:
    extra: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in os.environ.get("TABLECTL_GAMES", "").split(","))):
        name, sep, package = item.partition("=")
        if not sep or not name.strip() or not package.strip():
            raise RuleError(f"TABLECTL_GAMES: {item!r} is not name=package", field="game")
        extra[name.strip()] = package.strip()
    return {**GAMES, **extra}


def game_names() -> tuple[str, ...]:
    """The ids of every game this tablectl runs (the built-in ones first)."""
    return tuple(_registry())


def game_package(name: str) -> str:
    """The package of game `name`'s folder."""
    return _registry()[name]


def get_game(name: object) -> Game[Any]:
    """The state machine of game `name`, or RuleError naming the games this tablectl runs."""
    games = _registry()
    if not isinstance(name, str) or name not in games:
        raise RuleError(f"unknown game {name!r}; the games are {', '.join(games)}", field="game")
    game: Game[Any] = importlib.import_module(f"{games[name]}.rules").GAME
    return game
