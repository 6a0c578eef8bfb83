"""The API's process idle (controller/app/api_process.py's `_Server`, controller/api/http.py's
`DatedState`): its server keeps no timer of its own (uvicorn's wakes ten times a second, the one
before once a second), yet each answer's Date header is the second it is answered in, its
`server` header kept, and the server stops as soon as it is told."""

from __future__ import annotations

import asyncio
import socket
import time
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import uvicorn
from starlette.types import Receive, Scope, Send

from controller.api.http import DatedState, HttpToolsCoalesced, WebSocketFrames
from controller.app.api_process import _Server


def test_the_date_header_is_made_for_the_second_it_is_read_in() -> None:
    now = [1_800_000_000.25]
    state = DatedState(clock=lambda: now[0])
    assert state.default_headers == []  # nothing set yet by the server
    state.default_headers = [(b"date", b"Thu, 01 Jan 1970 00:00:00 GMT"), (b"server", b"uvicorn")]
    assert state.default_headers == [
        (b"date", formatdate(1_800_000_000, usegmt=True).encode()),
        (b"server", b"uvicorn"),
    ]
    now[0] += 0.5  # the same second: the same header
    assert state.default_headers[0] == (b"date", b"Fri, 15 Jan 2027 08:00:00 GMT")
    now[0] += 3600 * 24 + 0.6  # a day later, nothing having woken in between
    assert state.default_headers == [(b"date", b"Sat, 16 Jan 2027 08:00:01 GMT"), (b"server", b"uvicorn")]
    state.default_headers = [(b"server", b"uvicorn")]  # a config without the Date header
    assert state.default_headers == [(b"server", b"uvicorn")]


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _server_timers(loop: asyncio.AbstractEventLoop) -> list[Any]:
    """The loop's live timers (asyncio's own list of them: the test's question is the loop's)."""
    return [h for h in getattr(loop, "_scheduled") if not h.cancelled()]  # noqa: B009


def test_an_idle_server_keeps_no_timer_answers_with_the_date_of_now_and_stops_when_told() -> None:
    async def run() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            _app, http=HttpToolsCoalesced, ws=WebSocketFrames, log_level="warning", lifespan="off", log_config=None
        )
        server = _Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:  # (uvicorn says so by a flag only)
            await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        try:
            for _ in range(2):
                before = int(time.time())
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                after = time.time()
                writer.close()
                await reader.read()  # the server closed its end: its keep-alive timer is gone
                headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if line)
                answered = parsedate_to_datetime(headers["date"]).timestamp()
                assert before <= answered <= after, (before, headers["date"], after)
                assert headers["server"] == "uvicorn"
            # Idle: no timer of the server's is set (none of this test's either).
            assert _server_timers(loop) == []
        finally:
            server.exit()
        await asyncio.wait_for(serving, 60.0)  # told: it stops, no tick to wait for

    asyncio.run(run())
