"""Games that are not tablectl's, installed for a test as a wheel would install one: its own
distribution (tests/fixtures/<dist>/, with its pyproject.toml and `tablectl.games` entry point)
laid out in a directory of the test's, its packages beside a `<name>-<version>.dist-info` made
from that pyproject.toml (METADATA, entry_points.txt), and that directory put on PYTHONPATH.
tablectl finds the game by its entry point alone; nothing imports it from this tree."""

from __future__ import annotations

import os
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
#: The fourth game's distribution: its entry point is `high-card = "high_card"`.
HIGH_CARD = "high_card_game"


def install(dist: str, into: Path) -> Path:
    """Installs the distribution tests/fixtures/`dist` into the directory `into` (its packages and
    their package data, and its dist-info) and gives that directory."""
    source = FIXTURES / dist
    project = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    meta = project["project"]
    into.mkdir(parents=True, exist_ok=True)
    for package in project["tool"]["setuptools"]["packages"]:
        shutil.copytree(source / package, into / package, ignore=shutil.ignore_patterns("__pycache__"))
    info = into / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {meta['version']}\n", encoding="utf-8"
    )
    groups = meta.get("entry-points", {})
    (info / "entry_points.txt").write_text(
        "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) + "\n" for group, points in groups.items()),
        encoding="utf-8",
    )
    return into


def on_path(*dirs: Path) -> dict[str, str]:
    """The environment that puts `dirs` first on a subprocess's sys.path, then the PYTHONPATH as
    it was and the checkout (the product under test)."""
    return {"PYTHONPATH": os.pathsep.join([*map(str, dirs), *filter(None, [os.environ.get("PYTHONPATH")]), str(ROOT)])}
