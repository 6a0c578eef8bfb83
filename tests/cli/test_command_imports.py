"""What each command loads (issue 35 point 3, issue 30 item 11): a command imports only what it
uses, so `recall` and `journal verify` start fast and load neither the API (FastAPI, uvicorn),
the camera (OpenCV, numpy), the floor's MQTT client (paho) nor a device library; with no
table.toml to check (`recall --sim`, `journal verify --state-dir D` on a copy) not pydantic
either; and `tablectl run` without a [floor] loads no paho. Each command runs in a fresh
interpreter, which reports what `sys.modules` holds after it, beside what the command printed.
(Their speed is measured by `make bench`'s `commands`, never here.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli.synth import synthesize
from controller.testing import DEALER, SUPERVISOR, free_port

#: What neither recall nor verify uses: the API, the camera, the floor (this table has none), the
#: devices, metrics, signing.
NOT_FOR_READING = (
    "fastapi", "starlette", "uvicorn", "cv2", "numpy", "paho", "gpiozero", "serial", "prometheus_client",
    "cryptography", "controller.api", "controller.floor", "vision",
)  # fmt: skip
ROUNDS = 6


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(state dir, table.toml naming it): a few seeded rounds written through the table code."""
    root = tmp_path_factory.mktemp("imports")
    state = root / "state"
    synthesize(state, ROUNDS, seed=35).close()
    config = root / "table.toml"
    config.write_text(
        '[table]\nid = "T-35"\n[shoe]\nurl = "/dev/ttyUSB7"\n[display]\nurl = "/dev/ttyUSB8"\n'
        f'[state]\ndir = "{state}"\n',
        encoding="utf-8",
    )
    return state, config


def loaded_by(*argv: str) -> dict[str, Any]:
    """Run `tablectl ARGV` in a fresh interpreter: its exit status, what it printed, and which of
    the top-level packages in sys.modules it loaded."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from controller.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    rc = main({list(argv)!r})\n"
        "print(json.dumps({'rc': rc, 'out': out.getvalue(), 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def heavy(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("command", [("recall",), ("journal", "verify")])
def test_with_a_table_toml_recall_and_verify_load_no_api_camera_floor_or_device(
    table: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    _, config = table
    found = loaded_by(*command, "--config", str(config))
    assert found["rc"] == 0
    assert f"round {ROUNDS} " in found["out"] or "all pass" in found["out"], found["out"]
    assert heavy(found["modules"], NOT_FOR_READING) == []
    assert "pydantic" in found["modules"]  # the file is checked, key by key


@pytest.mark.parametrize("command", [("recall", "--sim"), ("journal", "verify")])
def test_with_no_table_toml_recall_and_verify_do_not_load_pydantic_either(
    table: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    state, _ = table
    found = loaded_by(*command, "--state-dir", str(state))
    assert found["rc"] == 0
    assert f"round {ROUNDS} " in found["out"] or "all pass" in found["out"], found["out"]
    assert heavy(found["modules"], (*NOT_FOR_READING, "pydantic", "pydantic_core")) == []


def test_run_without_a_floor_loads_no_mqtt_client(tmp_path: Path) -> None:
    """`tablectl run --sim`, healthy, then asked what its own (the table's) process loaded: the
    channel to its API's process yes; paho no, and no FastAPI (HTTP is the API's process's)."""
    port = free_port()
    probe = (
        "import json, os, signal, sys, threading, time, urllib.request\n"
        "from controller.cli.main import main\n"
        "def healthy():\n"
        "    while True:\n"
        "        try:\n"
        f"            urllib.request.urlopen('http://127.0.0.1:{port}/api/health', timeout=60).read()\n"
        "        except OSError:\n"
        "            time.sleep(0.05)\n"  # polling for the server's first answer; the backstop is the timeout below
        "            continue\n"
        "        print(json.dumps(sorted(sys.modules)), flush=True)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        return\n"
        "threading.Thread(target=healthy, daemon=True).start()\n"
        f"sys.exit(main(['run', '--sim', '--state-dir', {str(tmp_path)!r}, '--http', '127.0.0.1:{port}']))\n"
    )
    env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
    env.pop("NOTIFY_SOCKET", None)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert "controller.api.channel" in modules  # it did start its API's process
    assert heavy(modules, ("paho", "controller.adapters.floor.publisher", "controller.adapters.floor.history", "fastapi", "uvicorn")) == []
