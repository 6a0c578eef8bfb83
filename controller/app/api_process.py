"""The API's own process: `python -m controller.app.api_process PARENT CHANNEL LISTEN...`, started
by `tablectl run` only (controller/api/channel.py's `ApiProcess`). It serves the app over a
`RemoteGate` (controller/api/remote.py) on the sockets the daemon bound, ends with the daemon, and
runs below the table's process in priority: the card path comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import importlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from controller.api.launch import modules_loaded_on_first_use, uvicorn_without_its_command_line

modules_loaded_on_first_use()  # before the libraries import them: run when first used (launch.py)
uvicorn_without_its_command_line()  # before uvicorn's first import: its package without click (launch.py)

import uvicorn  # noqa: E402

from controller.api.channel import NICE, read_frame  # noqa: E402
from controller.api.remote import RemoteGate  # noqa: E402
from controller.app.heap import give_back_memory, settle_garbage_collector  # noqa: E402

#: How long after it listens the API's process settles its garbage collector (controller/app/heap.py):
#: after the first requests of a start, not in their way.
SETTLE_AFTER_S = 1.0

# -- the API's process --------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    """The API's process ends when the daemon does, even killed outright (Linux: PR_SET_PDEATHSIG),
    so it never holds the table's port for a daemon started after."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the daemon was gone before the line above
        os._exit(0)


async def serve_api(channel: socket.socket, listening: Sequence[socket.socket]) -> int:
    """The API's process: the app over a RemoteGate, served on the sockets the daemon bound."""
    openapi_models_built_on_first_use()
    pydantic_v1_asked_of_only_once_loaded()
    websocket_handshakes_without_openssl()
    # What starlette would otherwise import at the first request it answers (anyio's asyncio
    # backend): loaded now, so the first request, /api/health included, is answered sooner. Here
    # and not before the fork (controller/api/launch.py's PRELOAD): the table's process never uses it.
    importlib.import_module("anyio._backends._asyncio")
    from controller.adapters.logs import configure
    from controller.api.app import create_app
    from controller.api.auth import Sessions
    from controller.api.live import LiveFeed
    from controller.api.runtime import Runtime

    reader, writer = await asyncio.open_unix_connection(sock=channel)
    start = await read_frame(reader)
    if start is None or start[0] != "start":
        return 1
    settings: dict[str, Any] = start[1]
    configure(label=settings.get("label", ""))
    live = LiveFeed()
    gate = RemoteGate(reader, writer, settings, live)
    tokens = settings["tokens"]
    sessions_path = settings.get("sessions_path")
    rt = Runtime(
        tokens=tokens,
        gate=gate,
        config_view=settings.get("config_view"),
        sessions=Sessions(path=sessions_path, tokens=tokens) if sessions_path else None,
        live=live,
        tls=bool(settings.get("tls")),
    )
    server = _Server(server_config(create_app(rt), settings["http"]))
    loop = asyncio.get_running_loop()
    reading = asyncio.create_task(gate.run(), name="channel")

    def stop() -> None:
        live.close_all()  # each screen's feed sends its close first, then the server closes
        loop.call_soon(server.exit)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    watching = asyncio.create_task(_stop_when(gate.closed, stop), name="daemon")
    server.on_listening = lambda: gate.send("listening")
    serving = asyncio.create_task(server.serve(sockets=list(listening)), name="http")
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if serving.done() and not server.started:
        exc = serving.exception() if not serving.cancelled() else None
        why = "the HTTP server stopped at once" if exc is None else str(exc) if isinstance(exc, OSError) else repr(exc)
        gate.send("failed", why)
        with contextlib.suppress(Exception):
            await writer.drain()
        return 1
    # Not now: the collector's one full pass over what start-up made (tens of ms of this process's
    # loop on a busy Pi) would hold the first requests' answers, the supervisor's health check
    # among them, whose table's reply arrives meanwhile. Once they are answered.
    loop.call_later(SETTLE_AFTER_S, settle_garbage_collector)
    trimming = asyncio.create_task(_trim_every(10.0))
    with contextlib.suppress(Exception):
        await serving
    for task in (trimming, reading, watching):
        task.cancel()
    return 0


def openapi_models_built_on_first_use() -> None:
    """Import FastAPI with the pydantic models of its OpenAPI document (fastapi.openapi.models,
    33 classes, which FastAPI imports with itself) built on first use (pydantic's `defer_build`):
    they are used only to write /api/openapi.json, which the screens never ask for, and building
    them is a third of FastAPI's import. Each is the same model, built when first used (by the
    first /api/openapi.json), so the document is the same (tests/controller/test_openapi_deferred.py).
    Only those models: the setting is pydantic's BaseModel's own while that module is imported
    (every model defined meanwhile inherits it), as it was before and after. Nothing if FastAPI's
    models are loaded already."""
    if "fastapi.openapi.models" in sys.modules:
        return
    from pydantic import BaseModel

    was = BaseModel.model_config
    BaseModel.model_config = {**was, "defer_build": True}
    try:
        importlib.import_module("fastapi.openapi.models")
    finally:
        BaseModel.model_config = was


def pydantic_v1_asked_of_only_once_loaded() -> None:
    """FastAPI asks of each route's annotations as the app is made, and of each value it encodes,
    whether it is a model of pydantic's first version, and imports pydantic.v1 to ask (17 ms of
    the API's start here; its ~30 modules never used otherwise). No object is such a model before
    pydantic.v1 is imported by whoever made it: FastAPI's two questions are asked here without
    importing it, the same answer either way (no while it is not loaded, pydantic.v1's own once
    it is: tests/controller/test_api_process_imports.py). Nothing if FastAPI's helpers are not
    where this FastAPI keeps them (the test says so)."""
    try:
        from fastapi import _compat, encoders
        from fastapi._compat import shared
    except ImportError:
        return
    lenient_issubclass = getattr(shared, "lenient_issubclass", None)
    if lenient_issubclass is None or not all(
        hasattr(module, name)
        for module, name in (
            (shared, "is_pydantic_v1_model_class"),
            (shared, "is_pydantic_v1_model_instance"),
            (_compat, "is_pydantic_v1_model_instance"),
            (encoders, "is_pydantic_v1_model_instance"),
        )
    ):
        return

    def is_pydantic_v1_model_class(cls: Any) -> bool:
        v1 = sys.modules.get("pydantic.v1")
        return v1 is not None and bool(lenient_issubclass(cls, v1.BaseModel))

    def is_pydantic_v1_model_instance(obj: Any) -> bool:
        v1 = sys.modules.get("pydantic.v1")
        return v1 is not None and isinstance(obj, v1.BaseModel)

    shared.is_pydantic_v1_model_class = is_pydantic_v1_model_class  # annotation_is_pydantic_v1 asks it
    for module in (shared, _compat, encoders):
        module.is_pydantic_v1_model_instance = is_pydantic_v1_model_instance  # type: ignore[attr-defined]


def websocket_handshakes_without_openssl() -> None:
    """websockets answers each screen's handshake (its Sec-WebSocket-Accept, a SHA-1 of the key the
    screen sent) with the interpreter's SHA-1 rather than OpenSSL's: the same answer
    (controller/api/digests.py), without the first OpenSSL digest's 1 MB of libcrypto pages in the
    API's process (tests/controller/test_digests.py). Nothing if this websockets computes it
    elsewhere than `websockets.server.accept_key`."""
    from controller.api.digests import websocket_accept

    try:
        from websockets import server
    except ImportError:
        return
    if callable(getattr(server, "accept_key", None)):
        server.accept_key = websocket_accept  # type: ignore[attr-defined]


def server_config(app: Any, http: dict[str, Any]) -> uvicorn.Config:
    """How the API's process serves `app` (`http`: the daemon's [http] settings it was started with)."""
    from controller.api.http import HttpToolsCoalesced, WebSocketFrames

    return uvicorn.Config(
        app,
        http=HttpToolsCoalesced,  # llhttp's parser; an answer's head and body in one write (controller/api/http.py)
        ws=WebSocketFrames,  # the feed's frames made once, written to each screen as they are
        log_level="warning",
        access_log=False,
        lifespan="off",
        log_config=None,  # uvicorn's lines go through tablectl's (controller/adapters/logs.py)
        proxy_headers=bool(http.get("trusted_proxies")),
        forwarded_allow_ips=list(http.get("trusted_proxies") or []),
        ssl_certfile=http.get("tls_cert"),
        ssl_keyfile=http.get("tls_key"),
        # Each screen's messages compressed one by one cost the API more than the rest of the
        # feed: a table's LAN carries them as they are.
        ws_per_message_deflate=False,
    )


class _Server(uvicorn.Server):
    """uvicorn's server; SIGTERM and SIGINT are the process's own handlers (they close the feed first).
    Its main loop does not tick: uvicorn's wakes ten times a second to keep the Date header
    current and to see whether it should stop; here each answer's Date is made as it is answered
    (`DatedState`, controller/api/http.py) and the loop waits for `exit` (or anything that sets
    `should_exit`): an idle table's API wakes for nothing of its own."""

    exiting: asyncio.Event | None = None
    #: Called as the server starts listening, before the loop runs anything else: the table is told
    #: (its "listening") before any request can be answered, so the table never sees this process
    #: answer (its health check) and end while it still waits to be told the process listens.
    on_listening: Callable[[], None] | None = None

    def __init__(self, config: uvicorn.Config) -> None:
        from controller.api.http import DatedState

        self._should_exit = False
        super().__init__(config)
        self.server_state = DatedState()

    @property
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        if value and self.exiting is not None:
            self.exiting.set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.on_listening is not None:
            self.on_listening()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def exit(self) -> None:
        self.should_exit = True

    async def main_loop(self) -> None:
        self.exiting = exiting = asyncio.Event()
        # uvicorn's on_tick at 0 sets the headers every answer carries (its `server` header, and
        # whether a Date is sent) and says whether to stop already.
        while not await self.on_tick(0):
            await exiting.wait()
            exiting.clear()


async def _stop_when(event: asyncio.Event, stop: Callable[[], None]) -> None:
    await event.wait()
    stop()


async def _trim_every(seconds: float) -> None:
    while True:
        await asyncio.sleep(seconds)
        give_back_memory()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m controller.app.api_process PARENT CHANNEL_FD LISTEN_FD...` (started by the daemon only)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print("controller.app.api_process is started by `tablectl run`, not by hand", file=sys.stderr)
        return 2
    channel = socket.socket(fileno=int(args[1]))
    listening = [socket.socket(fileno=int(fd)) for fd in args[2:]]
    return run(int(args[0]), channel, listening)


def run(parent: int, channel: socket.socket, listening: Sequence[socket.socket], *, name: str | None = None) -> int:
    """The API's process, executed (`main`) or forked from the daemon's (controller/api/launch.py),
    `name` then its name as the kernel shows it (the command line is the daemon's)."""
    _die_with_parent(parent)
    if name is not None:
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME
    with contextlib.suppress(OSError):  # below the table's process: the card path comes first
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
    return asyncio.run(serve_api(channel, listening))


if __name__ == "__main__":
    sys.exit(main())


