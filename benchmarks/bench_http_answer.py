"""What one `GET /api/state` costs the API's process: its HTTP server's CPU a request, by protocol.

The card workload (`card_cpu`) asks the state once a card, so a request's parse and answer are part
of every card's CPU. Here the product's app (controller/api/app.py, a simulated Grand Slam table in
this process) is served by uvicorn on 127.0.0.1 in a thread of this process, and a client in
another process sends REQUESTS keep-alive GETs of /api/state one after another (a dealer screen's
headers, its token), each answer read whole before the next. The server thread's own CPU time
(/proc/self/task/TID/schedstat: the parse, the answer, the socket's system calls) is divided by
the requests. Nothing changes on the table meanwhile, so every answer is the same view's body,
encoded once: what is measured is the protocol and the app's way to the body, not the JSON.

Arms, each run TURNS times in turn, medians:
  product        controller/api/http.py's HttpToolsCoalesced, the quick answer (llhttp's parser)
  httptools_app  uvicorn's own httptools protocol, every request through the app (FastAPI)
  h11_app        uvicorn's own h11 protocol, every request through the app: the reference
  before         with BENCH_BEFORE=DIR (a copy of an earlier commit's code, as card_cpu takes it): that
                 commit's own protocol from DIR/controller/api/http.py (H11Coalesced before e.g. 667b7a0)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REQUESTS = 3000
WARM = 200
TURNS = 3
TOKEN = "bench-dealer-token-0123456789"

CLIENT = r"""
import socket, sys
port, n, token = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
request = (
    "GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: tablectl-screen\r\nAccept: application/json\r\n"
    f"Accept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\nAuthorization: Bearer {token}\r\n\r\n"
).encode()
s = socket.create_connection(("127.0.0.1", port))
for _ in range(n):
    s.sendall(request)
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(65536)
    head, _, body = head.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    length = int(next(l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")))
    while len(body) < length:
        body += s.recv(65536)
s.close()
"""


def _app(workdir: Path) -> Any:
    from controller.api.app import create_app
    from controller.api.auth import Tokens
    from controller.api.runtime import Runtime
    from controller.journal.log import Journal
    from controller.table import Table

    table = Table(Journal(workdir / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    return create_app(Runtime(table=table, tokens=Tokens(TOKEN, "bench-supervisor-token-0123456789")))


def _before() -> Any | None:
    """The protocol the API's process served with in BENCH_BEFORE's code, loaded from its file."""
    import importlib.util

    tree = os.environ.get("BENCH_BEFORE")
    if not tree:
        return None
    spec = importlib.util.spec_from_file_location("bench_before_http", Path(tree) / "controller/api/http.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, "H11Coalesced", None) or module.HttpToolsCoalesced


def _protocol(arm: str) -> Any:
    if arm == "before":
        return _before()
    if arm == "product":
        from controller.api.http import HttpToolsCoalesced

        return HttpToolsCoalesced
    if arm == "httptools_app":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol


def _turn(arm: str, app: Any) -> dict[str, Any]:
    import uvicorn

    answered = getattr(app.state, "answer_now", None)
    counted = [0]
    if answered is not None:

        def counting(scope: dict[str, Any]) -> Any:
            got = answered(scope)
            counted[0] += got is not None
            return got

        app.state.answer_now = counting
    config = uvicorn.Config(
        app, http=_protocol(arm), host="127.0.0.1", port=0, log_level="warning", access_log=False,
        lifespan="off", log_config=None, proxy_headers=False,
    )  # fmt: skip
    server = uvicorn.Server(config)
    ready, port, tid = threading.Event(), [0], [0]

    def serve() -> None:
        tid[0] = threading.get_native_id()

        async def main() -> None:
            config.load()
            server.lifespan = config.lifespan_class(config)
            await server.startup()
            port[0] = server.servers[0].sockets[0].getsockname()[1]
            ready.set()
            await server.main_loop()
            await server.shutdown()

        asyncio.run(main())

    thread = threading.Thread(target=serve, name="bench-http")
    thread.start()
    try:
        ready.wait(30)

        def cpu_ns() -> int:
            return int(Path(f"/proc/self/task/{tid[0]}/schedstat").read_text().split()[0])

        def client(n: int) -> None:
            subprocess.run([sys.executable, "-c", CLIENT, str(port[0]), str(n), TOKEN], check=True, timeout=300)

        client(WARM)  # the first answer makes the view; the rest are warm
        quick_before, before = counted[0], cpu_ns()
        client(REQUESTS)
        used = cpu_ns() - before
        quick = counted[0] - quick_before
    finally:
        server.should_exit = True
        thread.join(30)
        if answered is not None:
            app.state.answer_now = answered
    return {"server_cpu_us_per_request": round(used / REQUESTS / 1e3, 2), "answered_by_the_protocol": quick}


def run() -> dict[str, Any]:
    arms: tuple[str, ...] = ("product", "httptools_app", "h11_app")
    if _before() is not None:
        arms = ("product", "before", *arms[1:])
    turns: dict[str, list[dict[str, Any]]] = {arm: [] for arm in arms}
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-http-") as tmp:
        app = _app(Path(tmp))
        for turn in range(TURNS):
            for arm in arms if turn % 2 == 0 else arms[::-1]:
                turns[arm].append(_turn(arm, app))
    med = {arm: statistics.median(t["server_cpu_us_per_request"] for t in turns[arm]) for arm in arms}
    for arm in ("product", "before"):
        if any(t["answered_by_the_protocol"] != REQUESTS for t in turns.get(arm, [])):
            raise RuntimeError(f"the {arm} protocol did not answer every request itself: {turns[arm]}")
    return {
        "name": "http_answer",
        "what": (
            f"the API's HTTP server thread's CPU a keep-alive GET /api/state ({REQUESTS} after {WARM} warm, "
            "a client in another process, the product's app on a simulated Grand Slam table, the same view "
            "each time; lower is better)"
        ),
        "reference": "uvicorn's own h11 protocol with every request through the app; ratio = the product's / it",
        "ratio": round(med["product"] / med["h11_app"], 3),
        "results": {
            "median_server_cpu_us_per_request": med,
            "turns": turns,
            "before_source": os.environ.get("BENCH_BEFORE_COMMIT") or os.environ.get("BENCH_BEFORE"),
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "how": (
                f"{TURNS} turns, the arms in turn (every other turn reversed); the server thread's schedstat "
                "CPU (user and system) over the requests; the product's arm checked to answer every request "
                "itself (controller/api/http.py's quick answer), the others through FastAPI"
            ),
        },
    }
