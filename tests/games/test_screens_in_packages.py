"""A game is one package down to its screen (issue 29): each shipped game's package holds its
screen module, styles and opening form, served from there (GET /api/game names them), and the
screens' core (controller/api/static/) names no game: not its id, its title, its form's ids or
its drawing's classes."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.api.screens import game_screen, static_dir
from controller.games import adapter
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "controller" / "api" / "static"
#: What would name a game in the core: ids, titles, the forms' and drawings' own prefixes, its bets.
NAMES = re.compile(r"grand.slam|jokers.22|baseball|\bj22-|\bbb-|three_outs|poker_bonus|#wager-panel", re.IGNORECASE)


def test_the_screens_core_names_no_game() -> None:
    files = subprocess.run(["git", "ls-files", str(CORE)], capture_output=True, text=True, cwd=ROOT, check=True)
    named = [
        f"{path}:{n}: {line.strip()}"
        for path in files.stdout.split()
        if path.endswith((".html", ".css", ".js"))
        for n, line in enumerate((ROOT / path).read_text(encoding="utf-8").splitlines(), start=1)
        if NAMES.search(line)
    ]
    assert named == []


@pytest.mark.parametrize("name", ["grand-slam", "jokers-22", "baseball-poker"])
def test_each_game_ships_its_screen_from_its_package(name: str) -> None:
    folder = static_dir(name)
    assert folder is not None and folder.parent.name in ("grand_slam", "jokers22", "baseball")
    info = game_screen(adapter(name))
    base = f"/games/{name}/static"
    assert info["screen"] == {"module": f"{base}/index.js", "styles": f"{base}/screen.css", "form": f"{base}/opening.html"}
    # The module says it is this game's; its form is a form.
    assert re.search(rf'export const id = "{name}";', (folder / "index.js").read_text(encoding="utf-8"))
    assert "<form " in (folder / "opening.html").read_text(encoding="utf-8")
    assert info["opening"]["type"] == "object" and info["opening"]["properties"]


def test_the_app_serves_the_tables_game_from_its_package(tmp_path: Path) -> None:
    """GET /api/game names the files and /games/<name>/static/ serves them, as the screens load them."""
    table = Table(Journal(tmp_path / "j.sqlite3"), game="jokers-22", rules={}, simulated=True)
    with TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR)))) as client:
        assert client.get("/api/game").status_code == 401
        info = client.get("/api/game", headers={"Authorization": f"Bearer {DEALER}"}).json()
        for url in info["screen"].values():
            answer = client.get(url)
            assert answer.status_code == 200, url
        assert client.get("/games/grand-slam/static/index.js").status_code == 404  # not this table's game
        assert "j22-open" in client.get(info["screen"]["form"]).text
        assert info["decision"]["properties"]["action"]
