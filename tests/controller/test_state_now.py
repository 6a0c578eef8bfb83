"""GET /api/state answered by the API's HTTP protocol itself (controller/api/http.py's
`HttpToolsCoalesced` with the app's `StateNow`, controller/api/app.py): over a real server, the same
answer byte for byte as the app gives it the ASGI way (status line, headers, body), again on the
same kept-alive connection, and with `Connection: close` (the connection then closed); the caller
who may not have it, a stale view and any other request still answered by the app; the answer
made at the end of the loop's turn the request was read in, so what that turn also read (the
table's news of an entry) is in it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.http import HttpToolsCoalesced
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
PLAYERS = {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 3, "stack": 100}]}
CARDS = ["AS", "JD", "7C", "TS", "8D", "6C", "2H", "5D", "9C"]  # face-down cards: the dealer's view masks them


@pytest.fixture
def rt(tmp_path: Path) -> Runtime:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="baseball-poker", rules={}, simulated=True)
    table.open_round(PLAYERS, by="dealer")
    for card in CARDS:
        table.card(parse_card(card), {"via": "test"})
    return Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE))


class Counted:
    """The app's `answer_now`, counting the requests it answered."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.answered = 0

    def __call__(self, scope: dict[str, Any]) -> Any:
        got = self.answer(scope)
        self.answered += got is not None
        return got


@contextlib.asynccontextmanager
async def _served(app: Any) -> AsyncIterator[int]:
    """`app` served on 127.0.0.1 by the API's protocol: its port; stopped on the way out."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app,
        http=HttpToolsCoalesced,
        log_level="warning",
        access_log=False,
        log_config=None,
        lifespan="off",
        date_header=False,  # (a Date could change between two answers compared byte for byte)
        proxy_headers=False,  # as the API's process serves with no trusted proxy (with one: the app's way)
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await serving


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> bytes:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return head + await reader.readexactly(length)


def _get(target: str, token: str, *more: str) -> bytes:
    lines = [f"GET {target} HTTP/1.1", "Host: table", f"Authorization: Bearer {token}", *more]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_the_state_is_the_apps_answer_byte_for_byte_for_each_role_kept_alive_and_closed(rt: Runtime) -> None:
    app = create_app(rt)
    counted = app.state.answer_now = Counted(app.state.answer_now)

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            bodies = {}
            for token in (DEALER, SUPERVISOR):
                # "/api/state?" is the app's way (StateReads, the same answer): not answered now.
                the_apps = await _answer(reader, writer, _get("/api/state?", token))
                answered = counted.answered
                now = await _answer(reader, writer, _get("/api/state", token))
                assert counted.answered == answered + 1  # the protocol's own answer
                assert now == the_apps
                assert now.startswith(b"HTTP/1.1 200 OK\r\n")
                assert b"\r\ncache-control: no-store\r\n" in now
                assert b"\r\ncontent-security-policy: " in now
                bodies[token] = now
                assert await _answer(reader, writer, _get("/api/state", token)) == now  # kept alive
            assert b'"AS"' not in bodies[DEALER]  # the dealer's sight: no face-down card
            assert b'"AS"' in bodies[SUPERVISOR]
            # Closed when asked, as uvicorn closes it.
            the_apps = await _answer(reader, writer, _get("/api/state?", DEALER, "Connection: close"))
            assert await reader.read() == b""
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answered = counted.answered
            now = await _answer(reader, writer, _get("/api/state", DEALER, "Connection: close"))
            assert counted.answered == answered + 1
            assert now == the_apps
            assert b"\r\nconnection: close\r\n" in now.lower()
            assert await reader.read() == b""
            # A caller without a valid token, and HEAD: the app's answers.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answered = counted.answered
            refused = await _answer(reader, writer, _get("/api/state", "not-a-token-of-this-table"))
            assert refused.startswith(b"HTTP/1.1 401 ")
            writer.write(
                b"HEAD /api/state HTTP/1.1\r\nHost: table\r\nAuthorization: Bearer " + DEALER.encode() + b"\r\n\r\n"
            )
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 405 ")  # the route's
            assert counted.answered == answered
            writer.close()

    asyncio.run(run())


class _News:
    """An app whose `answer_now` says what it was last told; the app's own way says "asgi"."""

    def __init__(self) -> None:
        self.state = self
        self.told = "old"
        self.asked = 0

    def answer_now(self, scope: dict[str, Any]) -> Any:
        self.asked += 1
        if self.told == "unknown":
            return None  # the view is not to be had now: the app's way
        return [(b"content-type", b"text/plain"), (b"content-length", str(len(self.told)).encode())], self.told.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"4")]})
        await send({"type": "http.response.body", "body": b"asgi"})


def test_the_answer_has_what_the_same_turn_of_the_loop_read_and_is_the_apps_when_not_to_be_had() -> None:
    app = _News()

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = _get("/api/state", DEALER)
            # The request is read, and later in the same turn of the loop the news arrives (as the
            # table's channel, ready in the same select, is read after the request's socket).
            original = HttpToolsCoalesced.data_received

            def then_news(self: HttpToolsCoalesced, data: bytes) -> None:
                original(self, data)
                app.told = "new"

            HttpToolsCoalesced.data_received = then_news  # type: ignore[method-assign]
            try:
                answer = await _answer(reader, writer, request)
            finally:
                HttpToolsCoalesced.data_received = original  # type: ignore[method-assign]
            assert answer.endswith(b"\r\n\r\nnew")
            app.told = "unknown"
            assert (await _answer(reader, writer, request)).endswith(b"\r\n\r\nasgi")
            app.told = "again"
            assert (await _answer(reader, writer, request)).endswith(b"\r\n\r\nagain")  # the next cycle
            writer.close()

    asyncio.run(run())


def test_pipelined_requests_are_answered_in_order_each_by_its_own_way(rt: Runtime) -> None:
    # Three requests in one write (pipelined, as a client may send them): the first and the last
    # answered by the protocol, the middle one ("?": the app's way) between them; each the same
    # bytes as the app's own answer, in the order asked.
    app = create_app(rt)
    counted = app.state.answer_now = Counted(app.state.answer_now)

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            the_apps = await _answer(reader, writer, _get("/api/state?", SUPERVISOR))
            answered = counted.answered
            writer.write(_get("/api/state", SUPERVISOR) + _get("/api/state?x=1", DEALER) + _get("/api/state", DEALER))
            first = await _answer(reader, writer, b"")
            second = await _answer(reader, writer, b"")
            third = await _answer(reader, writer, b"")
            assert first == the_apps
            assert b'"AS"' in first and b'"AS"' not in second and b'"AS"' not in third  # whose answer is whose
            assert second == third  # the dealer's state, the app's way and the protocol's
            assert counted.answered == answered + 2
            writer.close()

    asyncio.run(run())


def test_a_state_request_that_is_not_plain_is_the_apps_and_a_broken_one_is_refused(rt: Runtime) -> None:
    app = create_app(rt)
    counted = app.state.answer_now = Counted(app.state.answer_now)

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            plain = await _answer(reader, writer, _get("/api/state", DEALER))
            answered = counted.answered
            # With a body (its length said), and as HTTP/1.0: the app's way, the same state.
            with_body = _get("/api/state", DEALER, "Content-Length: 2").replace(b"\r\n\r\n", b"\r\n\r\n{}")
            assert await _answer(reader, writer, with_body) == plain
            writer.write(_get("/api/state", DEALER).replace(b"HTTP/1.1", b"HTTP/1.0"))
            old = await reader.read()  # HTTP/1.0: answered, then closed
            assert old.startswith(b"HTTP/1.1 200 OK\r\n") and old.endswith(plain.split(b"\r\n\r\n", 1)[1])
            assert counted.answered == answered
            # Not HTTP at all: 400, the connection closed; the server answers the next one.
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /api/state HTTP/1.1\r\nHost table\r\n\r\n")
            assert (await reader.read()).startswith(b"HTTP/1.1 400 ")
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            assert await _answer(reader, writer, _get("/api/state", DEALER)) == plain
            assert counted.answered == answered + 1
            writer.close()

    asyncio.run(run())


def test_a_quick_answer_that_fails_is_the_apps_answer_instead() -> None:
    app = _News()

    def broken(scope: dict[str, Any]) -> Any:
        raise RuntimeError("a bug in the quick answer")

    app.answer_now = broken  # type: ignore[method-assign]

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                for _ in range(2):  # answered (not left waiting: the bound only ends a failing run), and again
                    answer = await asyncio.wait_for(_answer(reader, writer, _get("/api/state", DEALER)), 30)
                    assert answer.endswith(b"\r\n\r\nasgi")
            finally:
                writer.close()  # (a request left unanswered would keep the server from stopping)

    asyncio.run(run())


def test_a_request_head_is_bounded_as_h11_bounded_it(rt: Runtime) -> None:
    # llhttp takes headers without end and uvicorn keeps each: one request could fill the API's
    # memory. Over 16 KiB of target and headers it is refused (400, closed); a long header within
    # it (a big cookie) is served as any other.
    app = create_app(rt)

    async def run() -> None:
        async with _served(app) as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answer = await _answer(reader, writer, _get("/api/state", DEALER, "Cookie: " + "c" * 12_000))
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
            pads = [f"X-Pad-{n}: {'p' * 1000}" for n in range(40)]  # 40 KB of headers
            writer.write(_get("/api/state", DEALER, *pads))
            refused = await asyncio.wait_for(reader.read(), 30)  # answered, then closed
            assert refused.startswith(b"HTTP/1.1 400 "), refused[:100]
            writer.close()

    asyncio.run(run())


def test_a_request_head_that_comes_too_slowly_is_refused_and_its_connection_closed(
    rt: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client on the LAN that sends a header line now and then, or nothing at all, held its
    # connection for ever (uvicorn's httptools protocol bounds neither): a few thousand such and no
    # screen could connect. A head not read whole within HEAD_TIMEOUT_S is answered 408 and
    # closed; a connection that sends nothing is closed; a client that asks in time is served
    # meanwhile, and a kept-alive connection idle between requests is the keep-alive's to close.
    monkeypatch.setattr(HttpToolsCoalesced, "HEAD_TIMEOUT_S", 0.3)
    app = create_app(rt)

    async def trickle(writer: asyncio.StreamWriter, stop: asyncio.Event) -> None:
        writer.write(b"GET /api/state HTTP/1.1\r\nHost: table\r\n")
        for n in range(100):
            if stop.is_set():
                return
            with contextlib.suppress(ConnectionError):
                writer.write(f"X-Slow-{n}: a line now and then\r\n".encode())
            await asyncio.sleep(0.1)

    async def run() -> None:
        async with _served(app) as port:
            slow_reader, slow_writer = await asyncio.open_connection("127.0.0.1", port)
            silent_reader, silent_writer = await asyncio.open_connection("127.0.0.1", port)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            stop = asyncio.Event()
            trickling = asyncio.create_task(trickle(slow_writer, stop))
            try:
                assert (await _answer(reader, writer, _get("/api/state", DEALER))).startswith(b"HTTP/1.1 200 OK\r\n")
                refused = await asyncio.wait_for(slow_reader.read(), 30)  # answered, then closed
                assert refused.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), refused[:100]
                assert refused.endswith(b"\r\n\r\nThe request's head came too slowly: 408.")
                assert await asyncio.wait_for(silent_reader.read(), 30) == b""  # closed, nothing said
                # Idle between two requests for longer than a head may take (the keep-alive's 5 s
                # are uvicorn's): the next request on the connection is answered.
                await asyncio.sleep(3 * HttpToolsCoalesced.HEAD_TIMEOUT_S)
                assert (await _answer(reader, writer, _get("/api/state", DEALER))).startswith(b"HTTP/1.1 200 OK\r\n")
            finally:
                stop.set()
                await trickling
                for w in (slow_writer, silent_writer, writer):
                    w.close()

    asyncio.run(run())
