"""The API's process does not import pydantic.v1 to answer FastAPI's question "is this a model of
pydantic's first version?" (controller/app/api_process.py's `pydantic_v1_asked_of_only_once_loaded`):
its app is made, and answers, without pydantic.v1 loaded, and the question gets pydantic.v1's own
answer once something has loaded it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP = """
import sys
from pathlib import Path
from controller.app.api_process import openapi_models_built_on_first_use, pydantic_v1_asked_of_only_once_loaded
openapi_models_built_on_first_use()
pydantic_v1_asked_of_only_once_loaded()
from fastapi.testclient import TestClient
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
table = Table(Journal(Path(sys.argv[1]) / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
client = TestClient(create_app(Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789"))))
headers = {"Authorization": "Bearer dealer-token-0123456789"}
for path in ("/api/health", "/api/state", "/api/rounds", "/api/openapi.json"):
    answer = client.get(path, headers=headers)
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
print("pydantic.v1 loaded:", "pydantic.v1" in sys.modules)
"""


def test_the_api_is_made_and_answers_without_pydantic_v1(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", APP, str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "pydantic.v1 loaded: False"


ASKED = """
import sys
from controller.app.api_process import pydantic_v1_asked_of_only_once_loaded
from fastapi import encoders, utils
from fastapi._compat import shared
pydantic_v1_asked_of_only_once_loaded()
import pydantic
class Now(pydantic.BaseModel):
    x: int = 1
assert "pydantic.v1" not in sys.modules
said = [shared.annotation_is_pydantic_v1(Now), encoders.is_pydantic_v1_model_instance(Now()),
        shared.annotation_is_pydantic_v1(int), shared.annotation_is_pydantic_v1(list[Now])]
assert "pydantic.v1" not in sys.modules
from pydantic import v1
class Then(v1.BaseModel):
    x: int = 1
said += [shared.annotation_is_pydantic_v1(Then), shared.annotation_is_pydantic_v1(list[Then]),
         encoders.is_pydantic_v1_model_instance(Then()), encoders.is_pydantic_v1_model_instance(Now()),
         shared.annotation_is_pydantic_v1(Now)]
print(said)
"""


def test_fastapi_is_told_of_a_pydantic_v1_model_as_before() -> None:
    done = subprocess.run([sys.executable, "-c", ASKED], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[False, False, False, False, True, True, True, False, False]"



BODIES = """
import sys
from pathlib import Path
from controller.api import errors
from controller.api.app import create_app, json_bytes
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
later = list(errors._UNFILLED)
assert len(later) >= 17 and all(extra == {} for extra, _, _ in later)  # none written as the routes were defined
if sys.argv[2] == "at-once":  # as before: each written as its route was defined, before the app is made
    errors.fill_body_schemas()
table = Table(Journal(Path(sys.argv[1]) / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
app = create_app(Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789")))
sys.stdout.write(json_bytes(app.openapi()).decode())
"""


def _document(tmp_path: Path, how: str) -> str:
    (tmp_path / how).mkdir()
    done = subprocess.run(
        [sys.executable, "-c", BODIES, str(tmp_path / how), how], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_routes_bodies_written_when_the_document_is_asked_for_say_the_same(tmp_path: Path) -> None:
    """The routes' request bodies (controller/api/errors.py's `body_schema`) are written when the
    OpenAPI document is first asked for, not as the routes are defined: the same document, byte
    for byte, as with each written at once."""
    later, at_once = _document(tmp_path, "later"), _document(tmp_path, "at-once")
    assert later == at_once
    assert later.count('"requestBody"') >= 17


SERVED = """
import asyncio, importlib.metadata, sys
from pathlib import Path
from controller.app import api_process
import uvicorn
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table

table = Table(Journal(Path(sys.argv[1]) / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
app = create_app(Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789")))

async def served() -> bytes:
    config = api_process.server_config(app, {})
    config.host, config.port = "127.0.0.1", 0
    server = api_process._Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /api/health HTTP/1.1\\r\\nHost: t\\r\\nConnection: close\\r\\n\\r\\n")
    answer = await reader.read()
    writer.close()
    server.exit()
    await serving
    return answer

answer = asyncio.run(served())
assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
print("click loaded:", "click" in sys.modules, "uvicorn.main loaded:", "uvicorn.main" in sys.modules)
# Served with llhttp's parser (controller/api/http.py's HttpToolsCoalesced), h11 not loaded at all.
print("httptools serves:", "httptools" in sys.modules, "h11 loaded:", "h11" in sys.modules)
assert uvicorn.Config is importlib.import_module("uvicorn.config").Config
assert uvicorn.Server is importlib.import_module("uvicorn.server").Server
assert uvicorn.__version__ == importlib.metadata.version("uvicorn")
asked = (uvicorn.main, uvicorn.run)  # uvicorn's command line, loaded now (python -m uvicorn asks so)
main = importlib.import_module("uvicorn.main")
assert asked == (main.main, main.run), asked
print("as uvicorn's own")
"""


def test_the_api_process_serves_with_uvicorn_whose_command_line_is_not_loaded(tmp_path: Path) -> None:
    # uvicorn.main (click, the supervisors: 2.6 MB of the API's process) is loaded only if asked for:
    # uvicorn's package is otherwise its own (controller/api/launch.py's uvicorn_without_its_command_line).
    done = subprocess.run(
        [sys.executable, "-c", SERVED, str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines() == [
        "click loaded: False uvicorn.main loaded: False",
        "httptools serves: True h11 loaded: False",
        "as uvicorn's own",
    ]


# uvicorn 0.54 (the release the bundle pins, deploy/constraints.txt) has no uvicorn._version: its
# version is then read as installed (tests/install found the table could not start with it).
WITHOUT_VERSION_MODULE = 'import sys; sys.modules["uvicorn._version"] = None\n' + SERVED


def test_a_uvicorn_without_its_version_module_serves_as_well(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_VERSION_MODULE, str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines() == [
        "click loaded: False uvicorn.main loaded: False",
        "httptools serves: True h11 loaded: False",
        "as uvicorn's own",
    ]
