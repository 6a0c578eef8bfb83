"""What each command loads (issue 35 point 3, issue 30 item 11): a command imports only what it
uses, so `recall` and `journal verify` start fast and load neither the API (FastAPI, uvicorn),
the camera (OpenCV, numpy), the floor's MQTT client (paho) nor a device library; with no
table.toml to check (`recall --sim`, `journal verify --state-dir D` on a copy) not pydantic
either, nor with one the table's daemon has checked already (an installed table's), nor with one
whose every key is plainly right (controller/app/config_plain.py); `tablectl run`
starts its API's process before it loads the table's code, and without a [floor] loads no paho.
Each command runs in a fresh interpreter, which reports what `sys.modules` holds after it, beside
what the command printed.
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
from controller.testing import DEALER, SUPERVISOR, Daemon, free_port, tablectl

#: What neither recall nor verify uses: the API, the camera, the floor (this table has none), the
#: devices, metrics, signing. (Of vision, only `vision.documents`, table.toml's validator, may load.)
NOT_FOR_READING = (
    "fastapi", "starlette", "uvicorn", "cv2", "numpy", "paho", "gpiozero", "serial", "prometheus_client",
    "cryptography", "controller.api", "controller.floor", "controller.adapters.floor", "controller.camera",
    "vision.reader", "vision.calibration", "vision.layout", "vision.render", "vision.scene", "vision.chips",
    "vision.fusion", "vision.health",
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
    # The file, new to the daemon, is checked key by key; each key plainly right, it is read without
    # pydantic (controller/app/config_plain.py), as the models would read it: nor the models' validator
    # (vision/documents.py), nor any of vision's.
    assert heavy(found["modules"], (*NOT_FOR_READING, "vision", "pydantic", "pydantic_core")) == []


@pytest.mark.parametrize("command", [("recall",), ("journal", "verify")])
def test_a_table_toml_with_a_wrong_key_is_refused_in_the_models_words(
    table: tuple[Path, Path], command: tuple[str, ...], tmp_path: Path
) -> None:
    """A key not plainly right is left to the models (pydantic), which refuse it naming the file,
    the key and the rule, as before; recall and verify read nothing of the journal then."""
    _, config = table
    edited = tmp_path / "table.toml"
    edited.write_text(config.read_text(encoding="utf-8") + "[camera]\nfps = 100\n", encoding="utf-8")
    done = tablectl(*command, "--config", str(edited))
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == f"tablectl: refused: {edited}: camera.fps: must be a number from 0.2 to 30, not 100"


@pytest.mark.parametrize("command", [("recall", "--sim"), ("journal", "verify")])
def test_with_no_table_toml_recall_and_verify_do_not_load_pydantic_either(
    table: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    state, _ = table
    found = loaded_by(*command, "--state-dir", str(state))
    assert found["rc"] == 0
    assert f"round {ROUNDS} " in found["out"] or "all pass" in found["out"], found["out"]
    assert heavy(found["modules"], (*NOT_FOR_READING, "pydantic", "pydantic_core")) == []


#: A simulated table's table.toml (its daemon starts its own simulated shoe and display).
TOML = '[table]\nid = "T-35"\n[http]\nport = 8035\n[state]\ndir = "{state}"\n'


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(state dir, table.toml naming it) of a table whose daemon has started on that file once, as
    an installed table's has: it keeps what the file reads as in the state directory
    (controller/app/config.py's CHECKED_FILE)."""
    root = tmp_path_factory.mktemp("started")
    state = root / "state"
    synthesize(state, ROUNDS, seed=35).close()
    daemon = Daemon(root, TOML.format(state=state), state_dir=state)
    for _ in daemon.serve():  # started, then stopped: it exits 0
        pass
    return state, daemon.config


@pytest.mark.parametrize("command", [("recall",), ("journal", "verify")])
def test_with_a_table_toml_the_daemon_checked_recall_and_verify_load_no_pydantic(
    started: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    _, config = started
    found = loaded_by(*command, "--sim", "--config", str(config))
    assert found["rc"] == 0
    assert f"round {ROUNDS} " in found["out"] or "all pass" in found["out"], found["out"]
    assert heavy(found["modules"], (*NOT_FOR_READING, "pydantic", "pydantic_core")) == []


def test_a_table_toml_changed_since_the_daemon_checked_it_is_checked_again(
    started: tuple[Path, Path], tmp_path: Path
) -> None:
    """What the daemon kept is of the file's bytes then: a file written since, for the same state
    directory, is read by its models again, and refused by them in their words."""
    _, config = started
    edited = tmp_path / "table.toml"
    edited.write_text(config.read_text(encoding="utf-8").replace("8035", "70000"), encoding="utf-8")
    done = tablectl("recall", "--sim", "--config", str(edited))
    assert done.returncode == 2, done.stdout
    assert done.stderr.strip() == (
        f"tablectl: refused: {edited}: http.port: must be a whole number from 1 to 65535, not 70000"
    )
    edited.write_text(config.read_text(encoding="utf-8").replace("T-35", "T-36"), encoding="utf-8")
    found = loaded_by("recall", "--sim", "--config", str(edited))
    assert found["rc"] == 0 and f"round {ROUNDS} " in found["out"], found["out"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """`tablectl run --sim` until healthy, then stopped: what the table's process had loaded when
    it started its API's process (`at_launch`: forked, as `tablectl run` does, controller/api/launch.py)
    and once the API answered (`healthy`)."""
    state = tmp_path_factory.mktemp("run")
    port = free_port()
    probe = (
        "import json, os, signal, sys, threading, time, urllib.request\n"
        "import controller.api.launch as launch\n"
        "from controller.cli.main import main\n"
        "at_launch = []\n"
        "started = launch.launch\n"
        "async def launched(sockets, **how):\n"
        "    at_launch.extend(sorted(sys.modules))\n"
        "    done = await started(sockets, **how)\n"
        # The asking thread starts once the API's process has: a process with a thread is not forked.
        "    threading.Thread(target=healthy, daemon=True).start()\n"
        "    return done\n"
        "launch.launch = launched\n"
        "def healthy():\n"
        "    while True:\n"
        "        try:\n"
        f"            urllib.request.urlopen('http://127.0.0.1:{port}/api/health', timeout=60).read()\n"
        "        except OSError:\n"
        "            time.sleep(0.05)\n"  # polling for the server's first answer; the backstop is the timeout below
        "            continue\n"
        "        print(json.dumps({'healthy': sorted(sys.modules), 'at_launch': at_launch}), flush=True)\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        return\n"
        f"sys.exit(main(['run', '--sim', '--state-dir', {str(state)!r}, '--http', '127.0.0.1:{port}']))\n"
    )
    env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
    env.pop("NOTIFY_SOCKET", None)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_run_without_a_floor_loads_no_mqtt_client(ran: dict[str, list[str]]) -> None:
    """`tablectl run --sim`, healthy, then asked what its own (the table's) process loaded: the
    channel to its API's process yes; paho no, and no FastAPI (HTTP is the API's process's)."""
    modules = ran["healthy"]
    assert "controller.api.channel" in modules  # it did start its API's process
    assert heavy(modules, ("paho", "controller.adapters.floor.publisher", "controller.adapters.floor.history", "fastapi", "uvicorn")) == []


def test_run_starts_its_api_process_before_it_loads_the_table(ran: dict[str, list[str]]) -> None:
    """The API's process is started first, so it loads FastAPI while the table's process loads the
    table's own code and the devices (issue 35 point 3): when it is asked for, none of them is
    loaded (the fork then loads what both use once, launch.PRELOAD, before it forks)."""
    assert ran["at_launch"], "the API's process was started through controller/api/launch.py"
    assert heavy(ran["at_launch"], (
        "controller.app.daemon", "controller.table", "controller.api.channel", "drivers", "pydantic", "fastapi",
    )) == []  # fmt: skip


def test_run_loads_cryptography_only_to_check_a_signed_release_or_sign(ran: dict[str, list[str]]) -> None:
    """The table's process loads cryptography only for what uses it (issue 35 point 5: its memory):
    checking a signed release's manifest, or signing the chain's heads for a floor. A checkout's
    `run --sim` without a [floor] does neither."""
    assert heavy(ran["healthy"], ("cryptography",)) == []
