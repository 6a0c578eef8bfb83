"""The games tablectl runs, one folder each (controller/games/README.md).

`adapter(name)` gives a game's `GameAdapter`; the engine's registry (`controller.engine`: the
`tablectl.games` entry points) names the packages, so a game is added by its package and one entry
point.
"""

from __future__ import annotations

import importlib

from controller.engine import game_package, get_game
from controller.games.base import GameAdapter


def adapter(name: object) -> GameAdapter:
    """The adapter of game `name`, or RuleError naming the games this tablectl runs."""
    rules = get_game(name)
    found: GameAdapter = importlib.import_module(f"{game_package(rules.name)}.adapter").ADAPTER
    return found
