"""The game engine: the shared contract and the registry of games (see README.md in this folder).

No I/O, no clock, no randomness except a passed-in RNG. `get_game(name)` gives a game's state
machine, from the rules of its package; importing this package imports no game until one is
asked for.

A game is found by its Python entry point in the group `tablectl.games` (as gpiozero finds its
pin factories): `name = "package"`, the package holding `rules.py` (GAME) and `adapter.py`
(ADAPTER). tablectl declares its three games in its own pyproject.toml; a game installed from
elsewhere (a casino's own, or a test's) declares its entry point in its own distribution.
"""

from __future__ import annotations

import functools
import importlib
import sys
from importlib.metadata import entry_points
from typing import Any

from controller.engine.base import Game, RuleError

#: The entry point group every game is registered in.
GROUP = "tablectl.games"
#: The distribution whose games are listed first (tablectl's own; each part by name).
OWN = "tablectl"


def _registry() -> dict[str, str]:
    """Game id -> its package, as the installed distributions declare them (looked up again only
    when sys.path changes)."""
    return _found(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _found(_path: tuple[str, ...]) -> dict[str, str]:
    own: dict[str, str] = {}
    others: dict[str, tuple[str, str]] = {}
    for point in entry_points(group=GROUP):
        where = point.dist.name if point.dist is not None else "?"
        package = point.value.strip()
        if ":" in package or not package:
            raise RuleError(
                f"the entry point {point.name} = {point.value!r} of {where} ({GROUP}) must name the game's package",
                field="game",
            )
        earlier = own.get(point.name) or others.get(point.name, ("", ""))[1]
        if earlier and earlier != package:
            raise RuleError(
                f"game {point.name!r} is installed twice ({earlier} and {package} of {where}): uninstall one",
                field="game",
            )
        if where.lower().replace("_", "-") == OWN:
            own[point.name] = package
        else:
            others[point.name] = (where, package)
    # By name: the installed metadata keeps no order (setuptools writes entry points sorted).
    return {**dict(sorted(own.items())), **{name: package for name, (_, package) in sorted(others.items())}}


def game_names() -> tuple[str, ...]:
    """The ids of every game this tablectl runs: its own by name, then the others by name."""
    return tuple(_registry())


def game_package(name: str) -> str:
    """The package of game `name` (its entry point's value)."""
    return _registry()[name]


def get_game(name: object) -> Game[Any]:
    """The state machine of game `name`, or RuleError naming the games this tablectl runs."""
    games = _registry()
    if not isinstance(name, str) or name not in games:
        if not games:
            raise RuleError(
                f"unknown game {name!r}: no games are installed (no {GROUP} entry points; "
                "reinstall tablectl: pip install -e . or its wheel)",
                field="game",
            )
        raise RuleError(f"unknown game {name!r}; the games are {', '.join(games)}", field="game")
    game: Game[Any] = importlib.import_module(f"{games[name]}.rules").GAME
    return game
