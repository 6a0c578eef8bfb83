"""The table's process loads gpiozero's package on first use (controller/api/launch.py's
`TABLE_ON_FIRST_USE`, issue 35 point 5: 0.5-0.6 MB of the daemon's memory counted once): its
drivers import the devices they use from gpiozero's own modules (drivers/buttons.py,
drivers/indicators/sinks.py), so the package's __init__, which imports every device gpiozero has
(its boards, SPI devices, internal devices, fonts), never runs while the table deals, lights its
lamps and watches its buttons; a library that asks the package for a name gets gpiozero as ever.

The real `tablectl run --sim --demo`: a sitecustomize on its PYTHONPATH writes down, as the table's
process exits, whether gpiozero's __init__ has run in it and which of the modules it imports are
loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from controller.testing import Daemon, hooked_env

SITECUSTOMIZE = """
import atexit, json, os, sys

def _written():
    package = sys.modules.get("gpiozero")
    said = {
        "imported": package is not None,
        "ran": package is not None and "__builtins__" in vars(package),  # its __init__'s code has run
        "loaded": [n for n in ("gpiozero.boards", "gpiozero.spi_devices", "gpiozero.internal_devices", "gpiozero.fonts")
                   if n in sys.modules],
    }
    with open(os.path.join(os.environ["GPIOZERO_AT_EXIT"], f"{os.getpid()}.json"), "w") as out:
        json.dump(said, out)

if os.environ.get("GPIOZERO_AT_EXIT"):
    atexit.register(_written)
"""


def test_the_tables_process_deals_without_gpiozeros_package_run(tmp_path: Path) -> None:
    daemon = Daemon(
        tmp_path,
        '[table]\nid = "T-1"\n',
        args=["--demo", "--demo-interval", "0.05"],
        env=hooked_env(tmp_path, SITECUSTOMIZE, GPIOZERO_AT_EXIT="exits"),
    )
    daemon.spawn()
    try:
        daemon.wait_ready()
        assert daemon.proc is not None
        table = daemon.proc.pid
        daemon.wait_for_a_settled_round()
    finally:
        code = daemon.stop()
    assert code == 0, daemon.log()
    assert json.loads((tmp_path / "exits" / f"{table}.json").read_text()) == {
        "imported": True,
        "ran": False,
        "loaded": [],
    }


FIRST_USE = """
import sys
from controller.api.launch import TABLE_ON_FIRST_USE, modules_loaded_on_first_use
modules_loaded_on_first_use(TABLE_ON_FIRST_USE)
import drivers.buttons, drivers.indicators.sinks, drivers.pins
package = sys.modules["gpiozero"]
said = ["__builtins__" in vars(package), "gpiozero.boards" in sys.modules]
import gpiozero
from gpiozero.output_devices import LED
said += [gpiozero.LED is LED, gpiozero.Button.__name__, "gpiozero.boards" in sys.modules]
said += [sys.modules["gpiozero"] is package, type(package).__name__ == "module"]
print(said)
"""


def test_gpiozeros_package_asked_for_a_name_is_gpiozero_as_ever() -> None:
    done = subprocess.run([sys.executable, "-c", FIRST_USE], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str([False, False, True, "Button", True, True, True])
