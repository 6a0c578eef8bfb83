"""The API's process imports FastAPI with its OpenAPI models built on first use
(controller/app/api_process.py's `openapi_models_built_on_first_use`): none of them is built while
the app starts, and /api/openapi.json is the same document, byte for byte, as with FastAPI's
models built at import (as every other process, a test's included, imports them)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP = """
import sys, tempfile
from pathlib import Path
if sys.argv[1] == "deferred":
    from controller.app.api_process import openapi_models_built_on_first_use
    openapi_models_built_on_first_use()
from fastapi.testclient import TestClient
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
import fastapi.openapi.models as models
table = Table(Journal(Path(sys.argv[2]) / "j.sqlite3"), game=sys.argv[3], rules={}, simulated=True)
app = create_app(Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789")))
built = sorted(name for name, m in vars(models).items() if getattr(m, "__pydantic_complete__", False)
               and getattr(m, "__module__", "") == models.__name__)
print("built at start:", ",".join(built))
answer = TestClient(app).get("/api/openapi.json")
assert answer.status_code == 200, answer.status_code
sys.stdout.write(answer.text)
"""


def _openapi(how: str, tmp_path: Path, game: str) -> tuple[str, str]:
    where = tmp_path / how
    where.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", APP, how, str(where), game], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said, _, document = done.stdout.partition("\n")
    return said, document


def test_openapi_models_are_built_on_first_use_and_say_the_same(tmp_path: Path) -> None:
    for game in ("grand-slam", "baseball-poker"):  # the bodies are the game's own (controller/api/app.py)
        (tmp_path / game).mkdir()
        said_deferred, deferred = _openapi("deferred", tmp_path / game, game)
        said_built, built = _openapi("built", tmp_path / game, game)
        at_start = said_deferred.removeprefix("built at start: ").split(",")
        normally = said_built.removeprefix("built at start: ").split(",")
        # Only those FastAPI rebuilds itself at import (the models that refer to themselves) and
        # what the app uses while it starts (its security scheme's flows), of the 33.
        assert "OpenAPI" in normally and len(normally) > 30, said_built
        assert "OpenAPI" not in at_start and len(at_start) < 8, said_deferred
        assert deferred == built
        assert '"openapi":"3.' in deferred
