"""The code's layers are visible and one-way (issue 29): every import, at module level, inside a
function or for type checking only, points down the order below, never up and never round a cycle;
vision and drivers import nothing of the controller's but the card type (a leaf drivers may use);
the table's side never imports the floor's server side; and every package says what it owns.

Read from the source with `ast`, so an import hidden in a function is seen like any other."""

from __future__ import annotations

import ast
import graphlib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("controller", "drivers", "vision")

#: The layers from the bottom up: a unit may import only units before it in this order.
ORDER = (
    "controller.engine",  # cards, hands, the game contract: no I/O
    "vision",  # the camera's reading and the one validator of operators' documents
    "controller.journal",  # the log, its chain and head, entries as records, rounds for recall
    "controller.analysis",  # house edge machinery (a game's own analysis lives with the game)
    "drivers",  # devices, real and simulated
    "controller.security",  # release manifest, authentication, signed chain heads
    "controller.games",  # one package a game
    "controller.camera",  # the camera feed into the table
    "controller.table",  # the reducer, the commit, faults, snapshots, what each audience sees
    "controller.adapters",  # effects out: lamps, display, metrics, notify, logs
    "controller.adapters.floor",  # the table's publisher to the floor
    "controller.analytics",  # pace and ratings, read from the journal
    "controller.floor",  # the floor's server side
    "controller.api",  # FastAPI, auth, the screens' shell
    "controller.app",  # wiring: the daemon, its config and start-up
    "controller.cli",  # the commands
)
#: Modules that belong to no layer: the rig tests and benchmarks share sits above everything.
OUTSIDE = {"controller", "controller.testing"}


def _unit(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "controller":
        return parts[0]
    if parts[1:3] == ["adapters", "floor"]:
        return "controller.adapters.floor"
    return ".".join(parts[:2])


def _imports() -> dict[str, set[str]]:
    """Each module of ours -> the modules of ours it imports anywhere in its source."""
    found: dict[str, set[str]] = defaultdict(set)
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
                found[module] |= {name for name in names if name.split(".")[0] in PACKAGES}
    return found


IMPORTS = _imports()


def test_every_module_is_in_a_layer() -> None:
    units = {_unit(module) for module in IMPORTS if module not in OUTSIDE}
    assert units <= set(ORDER), f"modules outside every layer: {sorted(units - set(ORDER))}"


def test_every_import_points_down() -> None:
    rank = {unit: i for i, unit in enumerate(ORDER)}
    up = sorted(
        f"{module} imports {name}"
        for module, names in IMPORTS.items()
        if module not in OUTSIDE
        for name in names
        if name not in OUTSIDE and _unit(name) in rank and rank[_unit(name)] > rank[_unit(module)]
    )
    assert up == [], "\n".join(up)


def test_no_import_cycle_between_packages() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, names in IMPORTS.items():
        if module in OUTSIDE:
            continue
        for name in names:
            if name not in OUTSIDE and _unit(name) != _unit(module):
                graph[_unit(module)].add(_unit(name))
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError naming the cycle


def test_vision_and_drivers_import_nothing_of_the_controller_but_cards() -> None:
    reached = sorted(
        f"{module} imports {name}"
        for module, names in IMPORTS.items()
        if module.split(".")[0] in ("vision", "drivers")
        for name in names
        if name.startswith("controller") and not (module.startswith("drivers") and name.startswith("controller.engine.cards"))
    )
    assert reached == [], "\n".join(reached)


def test_the_table_never_imports_the_floors_server_side() -> None:
    commands = ("controller.cli", "controller.floor")  # `tablectl floor` is the server's own command
    reached = sorted(
        f"{module} imports {name}"
        for module, names in IMPORTS.items()
        if not module.startswith(commands)
        for name in names
        if name == "controller.floor" or name.startswith("controller.floor.")
    )
    assert reached == [], "\n".join(reached)


def test_every_package_says_what_it_owns() -> None:
    silent = []
    for package in PACKAGES:
        for init in (ROOT / package).rglob("__init__.py"):
            if "tests" in init.parts:
                continue
            doc = ast.get_docstring(ast.parse(init.read_text()))
            if not doc or len(doc.split()) < 8:
                silent.append(str(init.relative_to(ROOT)))
    assert silent == [], f"packages that do not say what they own: {silent}"
