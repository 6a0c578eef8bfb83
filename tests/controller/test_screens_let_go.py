"""A screen that leaves is let go: its connection, its task and its feed, at once, whether or not
the table deals meanwhile (issue 35 point 5: the API's memory flat through screens that come and go).

Served as the API's process serves them (controller/app/api_process.py's `server_config`: uvicorn
with controller/api/http.py's protocols and the app), each screen connects to `/api/ws`, says its
hello, gets the state and closes. Then, at an idle table (no card dealt):
- no screen's feed is left open (`LiveFeed.subscribers`) and no screen's task is left waiting for
  the table's next entry (it would wait all night at an idle table, its connection with it);
- each screen's connection object (the WebSocket protocol uvicorn made for it), websockets' protocol
  within it (with its frame parser) and its socket's asyncio transport are freed by their
  reference counts alone, the cyclic collector off: the API's process collects rarely
  (controller/app/heap.py), so a connection kept by a reference cycle stays in its memory until
  one of its rare full collections, and grows it with every screen that comes and goes.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import socket
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.http import WebSocketFrames
from controller.api.runtime import Runtime
from controller.app.api_process import server_config
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import PATIENCE_S

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SCREENS = 12


@pytest.fixture
def no_cycle_collector() -> Iterator[None]:
    """The cyclic collector off for the test (as good as off between the API's rare collections)."""
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


async def _until(what: str, check: Callable[[], bool]) -> None:
    """Wait for `check` with a generous bound: the verdict is the outcome, never the time it took."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + PATIENCE_S
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"still not so after {PATIENCE_S} s: {what}")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def _served(
    tmp_path: Path,
) -> AsyncIterator[tuple[uvicorn.Server, Runtime, list[weakref.ref[Any]], list[weakref.ref[Any]]]]:
    """The app served as the API's process serves it, on 127.0.0.1, at an idle table; and a weak
    reference to each WebSocket connection object made (`made`), and to each one's websockets
    protocol and transport (`parts`)."""
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), table_loop=asyncio.get_running_loop())
    made: list[weakref.ref[Any]] = []
    parts: list[weakref.ref[Any]] = []

    class Counted(WebSocketFrames):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            made.append(weakref.ref(self))
            parts.extend((weakref.ref(self.conn), weakref.ref(transport)))
            super().connection_made(transport)

    config = server_config(create_app(rt), {})
    config.ws = Counted
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    await _until("the server started", lambda: server.started or serving.done())
    try:
        yield server, rt, made, parts
    finally:
        rt.live.close_all()  # as the API's process stops: each screen's feed ends, then the server
        server.should_exit = True
        await serving
        table.journal.close()


async def _come_and_go(port: int, screens: int) -> None:
    """`screens` screens, one after another: each connects, says its hello, gets the state, leaves."""
    from websockets.asyncio.client import connect

    for _ in range(screens):
        async with connect(f"ws://127.0.0.1:{port}/api/ws") as ws:
            await ws.send(json.dumps({"after": 0, "token": SUPERVISOR}))
            assert json.loads(await ws.recv())["type"] == "state"


async def _all_let_go(server: uvicorn.Server, rt: Runtime) -> None:
    await _until(
        f"every screen's feed closed ({len(rt.live.subscribers)} left open) and its task ended "
        f"({len(server.server_state.tasks)} left)",
        lambda: not rt.live.subscribers and not server.server_state.tasks and not server.server_state.connections,
    )
    for _ in range(3):  # what the loop had scheduled for them (a task's done callbacks) has run
        await asyncio.sleep(0)


def test_screens_that_leave_an_idle_table_are_let_go(tmp_path: Path) -> None:
    async def run() -> None:
        async with _served(tmp_path) as (server, rt, made, _):
            port = server.servers[0].sockets[0].getsockname()[1]
            await _come_and_go(port, SCREENS)
            assert len(made) == SCREENS
            await _all_let_go(server, rt)
            gc.collect()
            kept = sum(ref() is not None for ref in made)
            assert kept == 0, f"{kept} of {SCREENS} closed screens' connections are still in memory"

    asyncio.run(run())


def test_a_closed_screens_connection_is_freed_by_its_reference_counts(tmp_path: Path, no_cycle_collector: None) -> None:
    async def run() -> None:
        async with _served(tmp_path) as (server, rt, made, parts):
            port = server.servers[0].sockets[0].getsockname()[1]
            await _come_and_go(port, SCREENS)
            await _all_let_go(server, rt)
            kept = [ref() for ref in made if ref() is not None]
            referrers = sorted({type(r).__name__ for r in gc.get_referrers(*kept) if r is not kept}) if kept else []
            assert not kept, f"{len(kept)} of {SCREENS} closed screens' connections kept by a cycle: {referrers}"
            assert len(parts) == 2 * SCREENS
            kept = [ref() for ref in parts if ref() is not None]
            names = sorted({type(part).__name__ for part in kept})
            assert not kept, f"{len(kept)} of the closed screens' protocols and transports kept by a cycle: {names}"

    asyncio.run(run())


def _reached(connection: WebSocketFrames) -> list[Any]:
    """What `connection`'s attributes are, and what each of them holds."""
    return [part for held in vars(connection).values() for part in (held, *gc.get_referents(held))]


def test_an_open_screens_connection_holds_no_more_than_it_uses(tmp_path: Path, no_cycle_collector: None) -> None:
    """While screens stay connected (the API's process's highest memory: every screen of a table at
    once), each one's connection has let go of its handshake's response (websockets' object and its
    headers, sent) and holds no deque of its own (a 624-byte block of the C heap each, four in an
    asyncio.Queue): its receive queue and write flag are controller/api/http.py's `Inbox` and
    `Flag`. The screens are served as ever: each gets the state, then the feed's close as the
    API's process stops (1012: reconnect)."""
    from websockets.asyncio.client import connect

    async def run() -> None:
        async with _served(tmp_path) as (server, rt, _, _):
            port = server.servers[0].sockets[0].getsockname()[1]
            handshakes: list[weakref.ref[Any]] = []
            connections = list(server.server_state.connections)
            original = WebSocketFrames.handle_connect

            def handle_connect(self: WebSocketFrames, event: Any) -> None:
                original(self, event)
                handshakes.append(weakref.ref(self.response))

            async with contextlib.AsyncExitStack() as screens:
                WebSocketFrames.handle_connect = handle_connect  # type: ignore[method-assign]
                try:
                    opened = [
                        await screens.enter_async_context(connect(f"ws://127.0.0.1:{port}/api/ws"))
                        for _ in range(SCREENS)
                    ]
                finally:
                    WebSocketFrames.handle_connect = original  # type: ignore[method-assign]
                for ws in opened:
                    await ws.send(json.dumps({"after": 0, "token": SUPERVISOR}))
                    assert json.loads(await ws.recv())["type"] == "state"
                connections = [c for c in server.server_state.connections if isinstance(c, WebSocketFrames)]
                assert len(connections) == SCREENS
                assert len(handshakes) == SCREENS
                kept = [ref() for ref in handshakes if ref() is not None]
                assert not kept, f"{len(kept)} of {SCREENS} open screens' handshake responses kept"
                held = [
                    {id(part): part for part in _reached(c) if isinstance(part, collections.deque)} for c in connections
                ]
                shared = set.intersection(*(set(deques) for deques in held))  # the loop's, the server's
                own = [deque for deques in held for key, deque in deques.items() if key not in shared]
                assert not own, f"{len(own)} deques held by {SCREENS} open screens' connections of their own"
                rt.live.close_all()  # the feed's last word to every screen: each is told, and closed
                for ws in opened:
                    with contextlib.suppress(Exception):
                        while True:
                            await asyncio.wait_for(ws.recv(), PATIENCE_S)
                    assert ws.close_code == 1012

    asyncio.run(run())
