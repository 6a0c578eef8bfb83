"""What the screens load of the table's game: the files its package ships for them, and its bodies.

A game's package may ship its screen in a `static/` folder beside its rules (the three games do:
`controller/games/<game>/static/`): `index.js`, its screen module (the exports
`controller/api/static/js/games/README.md` lists); `screen.css`, its styles; `opening.html`, its
opening form. The app serves that folder at `/games/<name>/static/`, and `GET /api/game` names
each file that is there. A game that ships no screen module gets the screens' generic one, which
builds its opening form from the JSON schema of the game's own opening body (`opening`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from controller.engine import game_package
from controller.games.base import GameAdapter

#: Where a game's own screen files are served.
STATIC_URL = "/games/{name}/static"
#: The files of a game's `static/` the screens ask for: what `GET /api/game` calls each.
SCREEN_FILES = {"module": "index.js", "styles": "screen.css", "form": "opening.html"}


def static_dir(name: str) -> Path | None:
    """The `static/` folder game `name`'s package ships, or None."""
    folder = resources.files(game_package(name)).joinpath("static")
    return Path(str(folder)) if folder.is_dir() else None


@cache
def game_screen(adapter: GameAdapter) -> dict[str, Any]:
    """GET /api/game: the game's name and title, the URL of each screen file its package ships
    (None where it ships none), and the JSON schemas of its opening and decision bodies."""
    folder = static_dir(adapter.name)
    url = STATIC_URL.format(name=adapter.name)
    decision = adapter.decision_model()
    return {
        "name": adapter.name,
        "title": adapter.title,
        "screen": {
            key: f"{url}/{file}" if folder is not None and (folder / file).is_file() else None
            for key, file in SCREEN_FILES.items()
        },
        "opening": adapter.opening_model().model_json_schema(),
        "decision": decision.model_json_schema() if decision is not None else None,
    }
