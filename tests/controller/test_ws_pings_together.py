"""The screens' keepalive pings (controller/api/http.py's `WebSocketFrames.schedule_ping`): screens
connected at different moments are pinged at the same instant, one turn of the API's loop for all
of them, at most a ping interval away; a screen that answers stays connected; one that never
answers is closed after the ping timeout, as before."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
from typing import Any

import uvicorn
from starlette.types import Receive, Scope, Send

from controller.api.http import HttpToolsCoalesced, WebSocketFrames

INTERVAL_S = 0.2


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    assert scope["type"] == "websocket"
    await receive()
    await send({"type": "websocket.accept"})
    while (await receive())["type"] != "websocket.disconnect":
        pass


def _screens(server: uvicorn.Server) -> list[Any]:
    return [c for c in server.server_state.connections if isinstance(c, WebSocketFrames) and c.handshake_complete]


async def _silent_screen(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket client that completes its handshake and then never reads or answers a ping."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101")
    return reader, writer


def test_screens_are_pinged_together_and_one_that_never_answers_is_closed() -> None:
    from websockets.asyncio.client import connect

    async def run() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            _app,
            http=HttpToolsCoalesced,
            ws=WebSocketFrames,
            ws_per_message_deflate=False,
            ws_ping_interval=INTERVAL_S,
            ws_ping_timeout=INTERVAL_S,
            log_level="warning",
            lifespan="off",
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        loop = asyncio.get_running_loop()
        try:
            async with connect(f"ws://127.0.0.1:{port}/ws") as first, connect(f"ws://127.0.0.1:{port}/ws") as second:
                screens = _screens(server)
                assert len(screens) == 2
                # Whatever each screen's moment of connecting, its ping is due at the same instant,
                # within an interval from now (each timer set when its screen connected, or
                # answered a ping meanwhile: then the next multiple, the same for both).
                for _ in range(3):
                    whens = {s.ping_timer.when() for s in screens if s.ping_timer is not None}
                    assert len(whens) <= 1, whens
                    assert all(0 < w - loop.time() <= INTERVAL_S for w in whens)
                    await first.ping()  # (the client's own ping: a turn of both sides' loops)
                    await second.ping()
                # A screen that never answers is closed after the ping timeout; these two answer.
                reader, writer = await _silent_screen(port)
                said = await asyncio.wait_for(reader.read(), 60.0)  # all it is sent, to the end
                assert b"\x03\xf3" in said  # the server's close frame: 1011, keepalive ping timeout
                writer.close()
                await first.send("still here")
                await second.send("still here")
                assert len(_screens(server)) == 2
        finally:
            server.should_exit = True
            await serving

    asyncio.run(run())
