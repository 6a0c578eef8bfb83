"""The table's process never loads pydantic (issue 35 point 5: 4-5 MB of the daemon's memory),
nor anyio (starlette's: the API's process's alone, 1.8 MB of the table's RSS when loaded before the
fork), nor prometheus_client until /metrics is first scraped (controller/adapters/metrics.py):
the pin map and table.toml are read without it when plainly right (drivers/pins.py,
controller/app/config_plain.py), the games' round files and decisions too (controller/games/plain.py),
and nothing imports it before the API's process is forked (controller/api/launch.py's PRELOAD). The
API's process loads it for its bodies, after the fork.

The real `tablectl run --sim --demo` deals rounds by itself (each opened and each decision taken
through the table's own `open_round` and `decide`, as a dealer screen's are); once a round is
settled, the table's process has no pydantic_core mapped (the API's has), and when it stops
(SIGTERM), its sys.modules holds no pydantic, no anyio and no prometheus_client (a sitecustomize on its
PYTHONPATH writes them down at exit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.testing import Daemon, hooked_env

SITECUSTOMIZE = """
import atexit, json, os, sys

def _written():
    watched = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core", "prometheus_client", "anyio"))
    with open(os.path.join(os.environ["IMPORTS_AT_EXIT"], f"{os.getpid()}.json"), "w") as out:
        json.dump(watched, out)

if os.environ.get("IMPORTS_AT_EXIT"):
    atexit.register(_written)
"""


def _mapped(pid: int) -> bool:
    return "_pydantic_core" in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize("game", ["grand-slam", "jokers-22", "baseball-poker"])
def test_the_tables_process_deals_a_round_without_pydantic(tmp_path: Path, game: str) -> None:
    exits = tmp_path / "exits"
    daemon = Daemon(
        tmp_path,
        '[table]\nid = "T-1"\n',
        args=["--demo", "--game", game, "--demo-interval", "0.05"],
        env=hooked_env(tmp_path, SITECUSTOMIZE, IMPORTS_AT_EXIT="exits"),
    )
    daemon.spawn()
    try:
        daemon.wait_ready()
        assert daemon.proc is not None
        table = daemon.proc.pid
        daemon.wait_for_a_settled_round()
        (api,) = (int(pid) for pid in Path(f"/proc/{table}/task/{table}/children").read_text().split())
        assert Path(f"/proc/{api}/comm").read_text().strip() == "tablectl-api"
        assert _mapped(api), "the API's process reads its bodies with pydantic"
        assert not _mapped(table), "the table's process has pydantic_core loaded"
    finally:
        code = daemon.stop()
    assert code == 0, daemon.log()
    assert json.loads((exits / f"{table}.json").read_text()) == []
