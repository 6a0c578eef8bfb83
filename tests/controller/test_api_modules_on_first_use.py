"""The API's process loads logging.config, html, http.client, http.cookies and OpenTelemetry's
propagators when first used, not as its libraries import them (controller/api/launch.py's `modules_loaded_on_first_use`, issue 35
point 5: 1 MB of the daemon's memory): a screen, the dealer's requests and a refused one are served
without their code run, and a library that uses one gets the module as ever.

The real `tablectl run --sim`: a sitecustomize on its PYTHONPATH writes down, as the forked API's
process ends (its `os._exit`), which of those modules' code has run in it, and which of the modules
they import are loaded."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from controller.api.launch import ON_FIRST_USE
from controller.testing import DEALER, Daemon, hooked_env

SITECUSTOMIZE = """
import json, os, sys

def _ending_writes_modules():
    exit = os._exit

    def written(code):
        ran = [n for n in ("logging.config", "html", "http.client", "http.cookies", "opentelemetry.propagate")
               if n in sys.modules and "__builtins__" in vars(sys.modules[n])]  # its code has run
        loaded = [n for n in ("html.entities", "logging.handlers", "socketserver", "opentelemetry.baggage") if n in sys.modules]
        with open(os.path.join(os.environ["MODULES_AT_EXIT"], f"{os.getpid()}.json"), "w") as out:
            json.dump({"ran": ran, "loaded": loaded}, out)
        exit(code)

    os._exit = written

if os.environ.get("MODULES_AT_EXIT"):
    os.register_at_fork(after_in_child=_ending_writes_modules)
"""


def _screen_reads_the_state(port: int) -> str:
    async def one() -> str:
        async with connect(f"ws://127.0.0.1:{port}/api/ws") as ws:
            await ws.send(json.dumps({"token": DEALER}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "state":
                    return str(message["type"])

    return asyncio.run(one())


def test_the_apis_process_serves_without_running_them(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, '[table]\nid = "T-1"\n', env=hooked_env(tmp_path, SITECUSTOMIZE, MODULES_AT_EXIT="ends"))
    daemon.spawn()
    try:
        daemon.wait_ready()
        api = daemon.api_pid()
        assert daemon.get("/api/state", token=DEALER)["journal_seq"] >= 0
        assert daemon.get("/api/rounds?last=3", token=DEALER) is not None
        with pytest.raises(urllib.error.HTTPError) as refused:  # no token
            urllib.request.urlopen(f"http://127.0.0.1:{daemon.port}/api/state", timeout=30)
        assert refused.value.code == 401
        assert _screen_reads_the_state(daemon.port) == "state"
    finally:
        code = daemon.stop()
    assert code == 0, daemon.log()
    assert api is not None
    assert json.loads((tmp_path / "ends" / f"{api}.json").read_text()) == {"ran": [], "loaded": []}


FIRST_USE = """
import sys
from controller.api.launch import ON_FIRST_USE, modules_loaded_on_first_use
modules_loaded_on_first_use()
import html, http.client, logging.config
from http import cookies
from opentelemetry import propagate
import fastapi.telemetry._asgi, starlette.exceptions, starlette.middleware.errors, starlette.requests, starlette.responses, uvicorn.config
said = [all("__builtins__" not in vars(sys.modules[n]) for n in ON_FIRST_USE), "html.entities" in sys.modules]
modules = [sys.modules[n] for n in ON_FIRST_USE]
said += [html.escape("<&>"), http.client.responses[404], starlette.exceptions.HTTPException(418).detail]
jar = cookies.SimpleCookie()
jar["a"] = "b c"
said += [jar.output(), callable(logging.config.dictConfig), "html.entities" in sys.modules, callable(propagate.extract)]
said += [all(sys.modules[n] is m and type(m).__name__ == "module" for n, m in zip(ON_FIRST_USE, modules))]
print(said)
"""


def test_a_module_loaded_on_first_use_is_the_same_module() -> None:
    done = subprocess.run([sys.executable, "-c", FIRST_USE], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(
        [True, False, "&lt;&amp;&gt;", "Not Found", "I'm a Teapot", 'Set-Cookie: a="b c"', True, True, True, True]
    )
    assert ON_FIRST_USE == ("logging.config", "html", "http.client", "http.cookies", "opentelemetry.propagate")
