"""The API's own HTTP and WebSocket protocols (controller/api/http.py): an answer's head and body
reach the socket in one write, in order, and nothing held is lost (sent with the next write, on the
loop's next turn, or before a close); a real client is served over them (an answer, a second on
the same connection, a WebSocket upgrade); a frame made once and written as it is reaches the
client as the same text as one sent the ASGI way, in order, and is refused once the screen closed."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import uvicorn
from starlette.types import Receive, Scope, Send

from controller.api.http import FRAMES, Coalesced, Flag, HttpToolsCoalesced, Inbox, WebSocketFrames, text_frame


class Recorded:
    """A transport that records each write it is asked for, and its close."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.writes.append(b"<close>")
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0


async def _turn() -> None:
    await asyncio.sleep(0)
    await asyncio.sleep(0)


def test_head_and_body_are_one_write_and_a_lone_write_goes_on_the_next_turn() -> None:
    async def run() -> None:
        real = Recorded()
        t = Coalesced(real, asyncio.get_running_loop())  # type: ignore[arg-type]
        t.write(b"HTTP/1.1 200 OK\r\n\r\n")
        assert real.writes == []
        t.write(b"")  # (an empty write) nothing, and nothing sent
        t.write(b'{"a":1}')
        assert real.writes == [b'HTTP/1.1 200 OK\r\n\r\n{"a":1}']
        t.write(b"lone")
        assert t.get_write_buffer_size() == 4
        await _turn()
        assert real.writes[1:] == [b"lone"]
        t.write(b"last words")
        t.close()
        assert real.writes[2:] == [b"last words", b"<close>"]

    asyncio.run(run())


async def _app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        message = await receive()
        await send({"type": "websocket.send", "text": "echo " + message["text"]})
        await send({"type": "websocket.close", "code": 1000})
        return
    body = json.dumps({"path": scope["path"]}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def test_a_client_gets_each_answer_whole_and_a_websocket_upgrade_works() -> None:
    from websockets.asyncio.client import connect

    async def run() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(_app, http=HttpToolsCoalesced, log_level="warning", lifespan="off", ws="websockets-sansio")
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answers: list[Any] = []
            for path in ("/one", "/two"):  # kept alive: the second answer on the same connection
                writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                head = await reader.readuntil(b"\r\n\r\n")
                assert head.startswith(b"HTTP/1.1 200 OK\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                answers.append(json.loads(await reader.readexactly(length)))
            assert answers == [{"path": "/one"}, {"path": "/two"}]
            writer.close()
            async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
                await ws.send("hello")
                assert await ws.recv() == "echo hello"
        finally:
            server.should_exit = True
            await serving

    asyncio.run(run())


async def _frames_app(scope: Scope, receive: Receive, send: Send) -> None:
    assert scope["type"] == "websocket"
    await receive()
    await send({"type": "websocket.accept"})
    write = scope["extensions"][FRAMES]
    for n in range(6):  # made once, written as is; and the ASGI way, in turn
        text = json.dumps({"n": n, "card": "5♦"})
        if n % 2:
            await send({"type": "websocket.send", "text": text})
        else:
            assert write(text_frame(text))
    message = await receive()  # the client closes
    assert message["type"] == "websocket.disconnect"
    assert not write(text_frame("too late"))


def test_a_frame_made_once_reaches_the_screen_as_the_same_text_in_order() -> None:
    from websockets.asyncio.client import connect

    async def run() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            _frames_app,
            http=HttpToolsCoalesced,
            ws=WebSocketFrames,
            ws_per_message_deflate=False,  # as the API's process serves the feed
            log_level="warning",
            lifespan="off",
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            async with connect(f"ws://127.0.0.1:{port}/api/ws") as ws:
                got = [json.loads(await ws.recv()) for _ in range(6)]
            assert got == [{"n": n, "card": "5♦"} for n in range(6)]
        finally:
            server.should_exit = True
            await serving

    asyncio.run(run())


def test_the_feed_writes_a_waiting_screen_its_frame_and_queues_in_order_otherwise() -> None:
    """LiveFeed.fan_out: a screen with nothing queued or being sent gets the message written
    straight (one frame made once for its audience, the same bytes for each such screen); one
    that is sending, has messages queued, or whose connection refuses the frame, gets it queued
    behind them, as before, so no screen gets its messages out of order."""
    from controller.api.live import LiveFeed

    async def run() -> None:
        feed = LiveFeed()
        written: dict[str, list[bytes]] = {"a": [], "b": [], "c": []}
        refuse = {"c": True}
        subs = {}
        for name in written:
            sub = feed.subscribe("supervisor")

            def write(frame: bytes, name: str = name) -> bool:
                if refuse.get(name):
                    return False
                written[name].append(frame)
                return True

            sub.write = write
            subs[name] = sub

        def message(seq: int) -> tuple[dict[str, Any], frozenset[str]]:
            return ({"type": "entry", "seq": seq, "state": {"n": seq}}, frozenset())

        feed.fan_out(1, message(1))
        first = written["a"][0]
        assert written["a"] == written["b"] == [first]
        assert first == text_frame(subs["c"].queue.get_nowait()[1])  # c refused: queued, the same text
        subs["b"].busy = True  # b's task holds a message it has not written yet
        feed.fan_out(2, message(2))
        assert len(written["a"]) == 2 and len(written["b"]) == 1
        assert subs["b"].queue.qsize() == 1
        subs["b"].busy = False
        feed.fan_out(3, message(3))  # b still has 2 queued: 3 goes behind it
        assert len(written["b"]) == 1
        assert [subs["b"].queue.get_nowait()[0] for _ in range(2)] == [2, 3]
        feed.fan_out(4, message(4))  # b's queue is empty again: written
        assert len(written["a"]) == len(written["b"]) + 2 == 4

    asyncio.run(run())


def test_a_screens_frames_go_to_its_socket_not_held_for_the_loops_next_turn() -> None:
    """Once upgraded, a screen's connection writes each frame to the socket's own transport: a
    held write (`Coalesced`) would cost every screen a turn of the loop per message."""
    from websockets.asyncio.client import connect

    async def run() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            _frames_app,
            http=HttpToolsCoalesced,
            ws=WebSocketFrames,
            ws_per_message_deflate=False,
            log_level="warning",
            lifespan="off",
        )
        server = uvicorn.Server(config)
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        try:
            async with connect(f"ws://127.0.0.1:{port}/api/ws") as ws:
                await ws.recv()
                screens = [c for c in server.server_state.connections if isinstance(c, WebSocketFrames)]
                assert len(screens) == 1
                assert isinstance(screens[0].transport, asyncio.Transport)
                assert not isinstance(screens[0].transport, Coalesced)
                for _ in range(5):
                    await ws.recv()
        finally:
            server.should_exit = True
            await serving

    asyncio.run(run())


def _receiving(inbox: Any) -> list[Any]:
    """What two waiting receivers get of three messages, one of the two cancelled once woken (its
    message then goes to the other), as uvicorn's WebSocket protocol hands a screen's messages to
    the app."""

    async def run() -> list[Any]:
        got: list[Any] = []

        async def receive(name: str) -> None:
            got.append((name, await inbox.get()))

        first = asyncio.create_task(receive("first"))
        second = asyncio.create_task(receive("second"))
        await asyncio.sleep(0)
        got.append(("empty", inbox.empty()))
        inbox.put_nowait("connect")
        first.cancel()  # woken for "connect", cancelled before it ran: "connect" is the second's
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        got.append(("first cancelled", first.cancelled()))
        inbox.put_nowait("hello")
        inbox.put_nowait("disconnect")
        got.append(("waiting", inbox.empty()))
        third = asyncio.create_task(receive("third"))
        await third
        await second
        got.append(("left", inbox.get_nowait()))
        got.append(("empty", inbox.empty()))
        return got

    return asyncio.run(run())


def test_a_screens_inbox_hands_messages_over_as_an_asyncio_queue() -> None:
    assert (
        _receiving(Inbox())
        == _receiving(asyncio.Queue())
        == [
            ("empty", True),
            ("second", "connect"),
            ("first cancelled", True),
            ("waiting", False),
            ("third", "hello"),
            ("left", "disconnect"),
            ("empty", True),
        ]
    )


def test_a_screens_write_flag_wakes_its_writers_as_an_asyncio_event() -> None:
    async def run(flag: Any) -> list[Any]:
        said: list[Any] = [flag.is_set()]
        waiting = [asyncio.create_task(flag.wait()) for _ in range(2)]
        await asyncio.sleep(0)
        said.append([task.done() for task in waiting])
        flag.set()
        said.append(await asyncio.gather(*waiting))
        flag.clear()
        said.append(flag.is_set())
        later = asyncio.create_task(flag.wait())
        await asyncio.sleep(0)
        said.append(later.done())
        later.cancel()
        flag.set()
        said.append([await flag.wait(), flag.is_set()])
        return said

    assert asyncio.run(run(Flag())) == asyncio.run(run(asyncio.Event())) == [
        False, [False, False], [True, True], False, False, [True, True],
    ]  # fmt: skip
