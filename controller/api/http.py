"""uvicorn's HTTP/1.1 protocol (httptools) with each answer's head and body written together.

uvicorn writes an answer's status line and headers to the socket as soon as the app starts it,
and its body in a second write: two system calls and two TCP segments an answer, each waking the
client, where one would do. On a busy Pi these writes are most of what `GET /api/state` after a
card costs the API's process. `Coalesced` holds a lone write until the next one (the body, a
moment later in the same turn of the loop) and sends both in one; one left alone is sent on the
loop's next turn. A connection upgraded to a WebSocket gets the socket's own transport back: each
feed message is one write already. What is sent, and in what order, is unchanged.

`DatedState` gives each answer its Date header as it is made (uvicorn's server otherwise wakes its
loop every second, idle or not, to write the next second's header ahead of any answer).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from email.utils import formatdate
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState
from websockets.frames import Frame, Opcode
from websockets.protocol import State


class Coalesced:
    """A transport that holds a lone write until the next write (sent together), a close, or the
    loop's next turn; everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.real = transport
        self._loop = loop
        self._held: bytes | None = None
        self._due: asyncio.Handle | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._held is None:
            self._held = bytes(data)
            if self._due is None:
                self._due = self._loop.call_soon(self._flush_due)
            return
        held, self._held = self._held, None
        self.real.write(held + bytes(data))

    def writelines(self, lines: Any) -> None:
        self.write(b"".join(lines))

    def flush(self) -> None:
        """Send what is held now."""
        held, self._held = self._held, None
        if held is not None:
            self.real.write(held)

    def _flush_due(self) -> None:
        self._due = None
        if not self.real.is_closing():
            self.flush()

    def get_write_buffer_size(self) -> int:
        return self.real.get_write_buffer_size() + len(self._held or b"")

    def close(self) -> None:
        if not self.real.is_closing():
            self.flush()
        self.real.close()

    def write_eof(self) -> None:
        self.flush()
        self.real.write_eof()

    def abort(self) -> None:
        self._held = None
        self.real.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class DatedState(ServerState):
    """uvicorn's state shared by its connections, whose `default_headers` (read as each answer and
    each WebSocket handshake is made) carry the Date of the second they are read in: made then, once
    a second at most, from `clock` (seconds since the epoch), so no timer keeps it current. The
    other headers are those uvicorn's server sets (its `on_tick`: the `server` header), and a Date
    only if its config asks for one (whether the headers it sets carry one)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._dated = False
        self._others: list[tuple[bytes, bytes]] = []
        self._second = -1
        self._headers: list[tuple[bytes, bytes]] = []
        super().__init__()

    @property
    def default_headers(self) -> list[tuple[bytes, bytes]]:
        if not self._dated:
            return self._others
        second = int(self._clock())
        if second != self._second:
            self._second = second
            self._headers = [(b"date", formatdate(second, usegmt=True).encode()), *self._others]
        return self._headers

    @default_headers.setter
    def default_headers(self, headers: list[tuple[bytes, bytes]]) -> None:
        self._dated = any(name == b"date" for name, _ in headers)
        self._others = [(name, value) for name, value in headers if name != b"date"]
        self._second = -1


#: What the app offers the protocol to answer a request at once (controller/api/app.py's `StateNow`,
#: found as the app's `state.answer_now`): given a request's ASGI scope, the answer's headers (the
#: app's: the server adds its own) and body, or None (the request then goes to the app).
AnswerNow = Callable[[dict[str, Any]], "tuple[list[tuple[bytes, bytes]], bytes] | None"]


class HttpToolsCoalesced(HttpToolsProtocol):
    """uvicorn's httptools protocol (llhttp's parser, in C) over a `Coalesced` transport
    (uvicorn.Config(http=HttpToolsCoalesced)): what the API's process serves with.

    With h11, in Python, a `GET /api/state` cost the server about 0.12 ms of CPU on this machine
    (parse and answer; a Pi's core several times that), with llhttp half that (benchmarks'
    `http_answer`): the card workload asks the state once a card. A plain `GET` (HTTP/1.1, no
    body, no query, no upgrade, no 100-continue) of a path the app answers at once (`ANSWERED_NOW`, when the app has a
    `state.answer_now`) is answered by the protocol at the end of the loop's turn it was read in
    (where its task would have started: whatever else that turn read, such as the table's news of
    an entry, is taken first): no task and no trip through FastAPI. It is answered through the
    request's own uvicorn cycle (`RequestResponseCycle.send`, run to its end at once: it waits only
    while the transport's writes are paused, and then the request goes the ASGI way instead), so
    the answer's bytes, its `Connection: close` when asked or when the server is stopping, its
    keep-alive timer and the next pipelined request are uvicorn's own, byte for byte as the ASGI
    way would send them. A request the app does not answer then, and any other, goes the ASGI way
    as before."""

    ANSWERED_NOW = (b"/api/state",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        state = getattr(self.app, "state", None)  # a proxy's middleware in front: not answered now
        answer = getattr(state, "answer_now", None) if state is not None else None
        plain = not self.access_log and self.limit_concurrency is None and not self.root_path
        self._answer_now: AnswerNow | None = answer if plain and callable(answer) else None
        self._due: RequestResponseCycle | None = None  # a plain request taken, to be answered now
        self._head_bytes = 0  # the request line's target and the headers read of this request
        self._head_due: asyncio.TimerHandle | None = None  # when the head being read is late

    # A request's head is bounded as h11 bounded it (16 KiB): llhttp takes headers without end and
    # uvicorn keeps each in a list, so a client could fill the API's memory with one request.
    # Refused as h11's was: 400 "Invalid HTTP request received." and the connection closed
    # (uvicorn's answer to a parser error, which an exception in the parser's callback is).

    # A request's head is read whole within HEAD_TIMEOUT_S: of the connection being made for the
    # first (a connection that sends nothing is closed), of its first byte for the next ones (uvicorn
    # closes a kept-alive connection idle for timeout_keep_alive). uvicorn's httptools protocol
    # bounds neither: a client sending a header line every few seconds, or nothing at all, held its
    # connection (a descriptor, a protocol, a parser) for ever, and a few thousand such on the LAN
    # left no descriptor for the screens. A late head is answered 408 and its connection closed; a
    # connection that sent nothing is closed. A body or a WebSocket is not bounded here.
    HEAD_TIMEOUT_S = 10.0

    def on_message_begin(self) -> None:
        self._head_bytes = 0
        if self._head_due is None:
            self._head_due = self.loop.call_later(self.HEAD_TIMEOUT_S, self._head_late)
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._head_in_time()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_in_time()
        super().connection_lost(exc)

    def _head_in_time(self) -> None:
        due, self._head_due = self._head_due, None
        if due is not None:
            due.cancel()

    def _head_late(self) -> None:
        self._head_due = None
        transport = self.transport
        if transport.is_closing():
            return
        if self.flow.read_paused:  # the server is not reading (the app's answer before it runs): not the client's delay
            self._head_due = self.loop.call_later(self.HEAD_TIMEOUT_S, self._head_late)
            return
        if self.headers is None:
            transport.close()  # nothing of a request since the connection was made: no one to answer
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        self.logger.info("%s: a request's head not read whole within %g s: 408, closed", client, self.HEAD_TIMEOUT_S)
        transport.write(_REQUEST_TIMEOUT)
        transport.close()

    def on_url(self, url: bytes) -> None:
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value) + 4)
        super().on_header(name, value)

    def _count_head(self, size: int) -> None:
        self._head_bytes += size
        if self._head_bytes > MAX_HEAD_BYTES:
            raise HeadTooLarge(f"a request's head over {MAX_HEAD_BYTES} bytes")

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(Coalesced(transport, self.loop))  # type: ignore[arg-type]
        self._head_due = self.loop.call_later(self.HEAD_TIMEOUT_S, self._head_late)

    def handle_websocket_upgrade(self) -> None:
        coalesced = self.transport
        if isinstance(coalesced, Coalesced):
            coalesced.flush()
            self.transport = coalesced.real  # the feed's messages are one write each already
        super().handle_websocket_upgrade()
        # The connection is the WebSocket protocol's now, and this one is never told it closed:
        # its parser (which holds it, to call it back) let go, so it and what it holds (the
        # transport) are freed by their reference counts, not kept by that cycle until one of the
        # API's rare collections (tests/controller/test_screens_let_go.py).
        self.parser = None  # type: ignore[assignment]

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        # uvicorn starts each request's task here, as its headers are read (or, pipelined, once the
        # answer before it is sent); a plain one is held until its message is complete.
        if (
            self._answer_now is not None
            and app is self.app
            and self._due is None
            and _plain_scope(cycle.scope, self.ANSWERED_NOW)
        ):
            self._due = cycle
            if not cycle.more_body:  # pipelined: read whole already
                self.loop.call_soon(self._answer_due, cycle)
            return
        super()._start_asgi_task(cycle, app)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        cycle = self._due
        if cycle is not None and cycle is self.cycle and not cycle.more_body:
            self.loop.call_soon(self._answer_due, cycle)

    def _answer_due(self, cycle: RequestResponseCycle) -> None:
        if self._due is not cycle:
            return  # sent the app's way meanwhile
        self._due = None
        if cycle.disconnected or self.transport.is_closing() or cycle.response_complete:
            return  # the connection went meanwhile (or the server is stopping): nobody to answer
        assert self._answer_now is not None
        try:
            answer = None if self.flow.write_paused else self._answer_now(dict(cycle.scope))
        except Exception:  # a bug in the quick answer: the app's way answers it (or says it failed)
            self.logger.exception("the state could not be answered at once; the app answers it")
            answer = None
        if answer is None:  # the app's way after all (its answer waits for the writes to drain)
            super()._start_asgi_task(cycle, self.app)
            return
        headers, body = answer
        try:
            _at_once(cycle.send({"type": "http.response.start", "status": 200, "headers": headers}))
            _at_once(cycle.send({"type": "http.response.body", "body": body, "more_body": False}))
        except Exception as exc:  # as uvicorn's own cycle takes an app's bad answer
            self.logger.error("Exception in ASGI application\n", exc_info=exc)
            self.transport.close()


#: The most a request's target and headers may hold (h11's bound, which the API served with before).
MAX_HEAD_BYTES = 16 * 1024

#: The answer to a request whose head came too slowly (then the connection is closed).
_REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 40\r\nconnection: close\r\n\r\nThe request's head came too slowly: 408."
)


class HeadTooLarge(Exception):
    """A request's head beyond MAX_HEAD_BYTES (the parser then refuses the request)."""


def _at_once(step: Any) -> None:
    """Run a coroutine that does not wait (a cycle's `send` while writes are not paused) to its end."""
    try:
        step.send(None)
    except StopIteration:
        return
    step.close()
    raise RuntimeError("the answer had to wait: not sent at once")


def _plain_scope(scope: Any, paths: tuple[bytes, ...]) -> bool:
    """A GET of one of `paths` (no query) over HTTP/1.1 with no body, no upgrade and no Expect."""
    if (
        scope["method"] != "GET"
        or scope["raw_path"] not in paths
        or scope["query_string"]
        or scope["http_version"] != "1.1"
    ):
        return False
    return not any(name in _NOT_PLAIN for name, _ in scope["headers"])


#: Request headers that make a request not a plain one (a body, an upgrade, a wait for 100-continue).
_NOT_PLAIN = frozenset((b"content-length", b"transfer-encoding", b"upgrade", b"expect"))

#: The ASGI scope's extension under which a WebSocket offers `WebSocketFrames.send_frame`.
FRAMES = "tablectl.websocket.frames"


def text_frame(text: str) -> bytes:
    """`text` as one unmasked, uncompressed WebSocket text frame (a server's), byte for byte what
    the protocol would write for it: made once, written to every screen of an audience."""
    return Frame(Opcode.TEXT, text.encode()).serialize(mask=False)


class Inbox:
    """What uvicorn's WebSocket protocol uses of an `asyncio.Queue` (its ASGI receive events for the
    app: `put_nowait`, `get`, `empty`), in the same order and with the same wake-ups, without the
    queue's four deques (2.5 KB of the C heap a screen, made as each connects)."""

    __slots__ = ("_getters", "_items")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._getters: list[asyncio.Future[None]] = []

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        self._wake_next()

    def get_nowait(self) -> Any:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.pop(0)

    async def get(self) -> Any:
        while not self._items:
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except BaseException:
                getter.cancel()  # as asyncio.Queue: one woken and cancelled wakes the next
                if getter in self._getters:
                    self._getters.remove(getter)
                if self._items and not getter.cancelled():
                    self._wake_next()
                raise
        return self._items.pop(0)

    def _wake_next(self) -> None:
        while self._getters:
            getter = self._getters.pop(0)
            if not getter.done():
                getter.set_result(None)
                return


class Flag:
    """What uvicorn's WebSocket protocol uses of an `asyncio.Event` (whether it may write: `set`,
    `clear`, `is_set`, `wait`), its waiters a list made when one first waits, not a deque made as
    each screen connects (0.6 KB of the C heap)."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: list[asyncio.Future[bool]] | None = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if not self._set:
            self._set = True
            for waiter in self._waiters or ():
                if not waiter.done():
                    waiter.set_result(True)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if self._set:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
            return True
        finally:
            self._waiters.remove(waiter)


class WebSocketFrames(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol offering the app `send_frame` (in the scope's extensions under
    FRAMES): a frame made once (`text_frame`) written as it is, with no task, ASGI message or
    encoding a screen. (uvicorn.Config(ws=WebSocketFrames).)

    A screen's connection holds less than uvicorn's own for as long as the screen stays (issue 35
    point 5: 50 screens connecting at once are the API's process's highest memory): its receive
    queue and write flag are an `Inbox` and a `Flag` (no deque each: 3 KB of the C heap a screen),
    and the handshake's response (websockets' object and its headers, sent) is let go once sent
    (its request stays: websockets' parser holds it for the connection's life)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = Inbox()  # type: ignore[assignment]
        self.writable = Flag()  # type: ignore[assignment]
        self.writable.set()

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)
        if self.handshake_complete:
            self.response = None  # type: ignore[assignment]  # refused at once: sent

    async def send(self, message: Any) -> None:
        try:
            await super().send(message)
        finally:
            if self.handshake_complete:
                self.response = None  # type: ignore[assignment]  # accepted (or refused): sent, never read again

    def schedule_ping(self) -> None:
        """The next keepalive ping at the next multiple of the ping interval on the loop's clock
        (uvicorn's: an interval after this connection's last pong): every screen's ping is then due
        at the same instant and sent in one turn of the loop, where screens connected at different
        times would each wake it once an interval (50 screens: 2.5 wakes a second, idle). A ping
        comes at most an interval after the last pong, as before (the first one sooner), and a
        screen that does not answer within the ping timeout is closed as before."""
        interval = self.ping_interval
        assert interval is not None
        now = self.loop.time()
        at = (math.floor(now / interval) + 1) * interval
        self.ping_timer = self.loop.call_at(at, self.send_keepalive_ping)

    async def run_asgi(self) -> None:
        extensions: dict[str, Any] = dict(self.scope.get("extensions") or {})
        extensions[FRAMES] = self.send_frame
        self.scope["extensions"] = extensions
        try:
            await super().run_asgi()
        finally:
            self._let_go()
            if self.disconnected:  # a close after the connection was lost starts a parser anew
                self._parser_ended()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._let_go()
        # Two more cycles each closed screen's connection would leave for the collector (its
        # objects kept until one of the API's rare collections, controller/app/heap.py: hundreds of
        # screens' at a busy table): websockets' protocol and its parser, a generator whose frame
        # holds the protocol, never finished (it waits at its last step for ever); and asyncio's
        # transport and its read callback, its own bound method. Nothing reads this connection
        # again: both are let go here, and the connection is freed by its reference counts.
        self._parser_ended()
        transport = self.transport
        if transport is not None and getattr(transport, "_read_ready_cb", None) is not None:
            transport._read_ready_cb = None  # type: ignore[attr-defined]

    def _parser_ended(self) -> None:
        parser = getattr(self.conn, "parser", None)
        if parser is not None:
            parser.close()  # its frame, and the protocol it held, let go

    def _let_go(self) -> None:
        """The scope's `send_frame` is this connection's own bound method: a reference cycle
        (connection -> scope -> its extensions -> send_frame -> connection) that kept every closed
        screen's connection, its scope and its buffers until one of the API's rare full collections
        (controller/app/heap.py). Taken out once the connection is lost or the app is done with it,
        the connection is freed by its reference counts as it closes
        (tests/controller/test_screens_let_go.py); a writer the app kept says False from then on."""
        scope = getattr(self, "scope", None)  # none yet: the connection went before its handshake
        if scope is not None:
            extensions = scope.get("extensions")
            if extensions is not None:
                extensions.pop(FRAMES, None)

    def send_frame(self, frame: bytes) -> bool:
        """Write `frame` now if the connection is open and writable with nothing of its own in the
        way (no compression, no fragment, not closing, not paused); False: send it the ASGI way."""
        if (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or self.conn.state is not State.OPEN
            or self.conn.extensions
            or self.conn.expect_continuation_frame
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(frame)
        return True
