"""The games tablectl runs, one folder each (controller/games/README.md).

`adapter(name)` gives a game's `GameAdapter`; the engine's registry (`controller.engine`: the
`tablectl.games` entry points) names the packages, so a game is added by its package and one entry
point.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from controller.engine import game_names, game_package, get_game
from controller.games.base import GameAdapter

if TYPE_CHECKING:
    from controller.analysis.base import GameAnalysis
    from controller.analysis.montecarlo import Tally


def adapter(name: object) -> GameAdapter:
    """The adapter of game `name`, or RuleError naming the games this tablectl runs."""
    rules = get_game(name)
    found: GameAdapter = importlib.import_module(f"{game_package(rules.name)}.adapter").ADAPTER
    return found


def analysis_of(game: object) -> GameAnalysis:
    """Game `game`'s analysis; RuleError for a game this tablectl does not run, ValueError for
    one without an analysis (both name the game)."""
    table_game = adapter(game)
    found = table_game.analysis()
    if found is None:
        with_one = [name for name in game_names() if adapter(name).analysis() is not None]
        raise ValueError(
            f"{table_game.name}: {table_game.title} has no analysis; tablectl analyze runs for {', '.join(with_one)}"
        )
    return found


def simulate(game: str, rounds: int, **settings: Any) -> dict[str, Tally]:
    """`rounds` Monte Carlo rounds of game `game` through its own analysis (controller/analysis/
    montecarlo.py); a game this tablectl does not run, or one without an analysis, is refused."""
    from controller.analysis.montecarlo import simulate as run

    return run(game, analysis_of(game), rounds, **settings)
