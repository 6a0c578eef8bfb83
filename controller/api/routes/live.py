"""The live feed over a WebSocket: every journaled entry in order, for the screens.

The hello is checked before anything is sent: a hello that is not `{"after": N}` with N a
sequence number (0 to 2**53) is refused with close code 4400 and a message saying what to send;
no credentials 4401; a role the access table does not open the feed to 4403; a locked-out
address 4429. A WebSocket opened by a page from another site (an `Origin` that is not this
server's own) is refused with 4403 before its hello is read, whether it has a cookie or a token;
one with no `Origin` (a script, not a browser) is not. Each refusal is first sent as
`{"type": "error", "error": ...}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from controller.api.access import role_words, roles_for
from controller.api.auth import Role, Sessions
from controller.api.deps import check_token
from controller.api.errors import ApiError
from controller.api.gate import TableBusy
from controller.api.http import FRAMES
from controller.api.live import Subscriber
from controller.api.runtime import Runtime
from controller.table import TableError

router = APIRouter(prefix="/api")
log = logging.getLogger("controller.api")

MAX_SEQ = 2**53  # larger than any journal will reach; JSON numbers stay exact up to here
HELLO = 'send {"after": N} first: N is the last sequence number you have, 0 for everything'


@router.websocket("/ws")
async def live(ws: WebSocket) -> None:
    """Send `{"after": N}` first (with `"token"` when there is no session cookie); then every
    entry after N, the whole state, and each new entry as it is journaled with what it changed of
    the state."""
    rt: Runtime = ws.app.state.rt
    await ws.accept()
    origin = ws.headers.get("origin")
    if origin is not None and not _own_origin(origin, ws, rt.tls):
        # A page on another site: the browser would send it the screens' cookie (cross-site hijacking).
        await _refuse(ws, 4403, f"the live feed is for this table's own screens, not a page from {origin[:60]!a}")
        return
    hello = await _hello(ws)
    if hello is None:
        return
    granted: Role | None = rt.sessions.role_of(ws.cookies.get(Sessions.COOKIE))
    token = hello.get("token")
    if granted is None and token is not None:
        client = ws.client.host if ws.client else "unknown"
        if not isinstance(token, str) or not token or not _is_text(token):
            await _refuse(ws, 4400, '"token" must be the token as text')
            return
        try:
            granted = await check_token(rt, client, token)
        except ApiError as exc:
            await _refuse(ws, 4000 + exc.status, exc.message)
            return
    allowed = roles_for("WS", "/api/ws") or ()
    if granted is None:
        await _refuse(ws, 4401, f"log in first: the live feed needs {role_words(allowed)} token")
        return
    if granted not in allowed:
        await _refuse(ws, 4403, f"the live feed needs {role_words(allowed)} token")
        return
    after = hello.get("after", 0)
    if isinstance(after, bool) or not isinstance(after, int) or not 0 <= after <= MAX_SEQ:
        said = f"{after!r}"[:40]
        await _refuse(ws, 4400, f'"after" must be the last sequence number seen, from 0 to {MAX_SEQ}, not {said}')
        return
    sub = rt.live.subscribe(granted)
    leaving = asyncio.create_task(_until_gone(ws, sub), name="screen")
    try:
        since = 0
        try:
            async for part in rt.live.history(rt.gate, sub, after):
                if isinstance(part, int):
                    since = part  # the last thing said: where the live messages take over
                    continue
                for message in part:  # the backlog, a slice at a time, then the state
                    await ws.send_text(message)
        except TableBusy:
            await _refuse(ws, 1013, "the table is busy; reconnect in a moment")
            return
        except TableError:  # the table is not answering (the daemon is stopping)
            await _refuse(ws, 1012, "the table is restarting; reconnect with your last seq")
            return
        # From now on the feed may write a message straight to this screen, as one frame made once
        # for its audience, while nothing of its own is queued or being sent (controller/api/live.py).
        sub.since = since
        sub.write = ws.scope.get("extensions", {}).get(FRAMES)
        while True:
            live_message = await sub.queue.get()
            if live_message is None:  # too far behind, or the daemon is stopping: reconnect
                await ws.close(code=1012, reason="reconnect with your last seq")
                return
            tick, text = live_message
            if tick > since:  # older ones are in the backlog already
                sub.busy = True
                try:
                    await ws.send_text(text)
                finally:
                    sub.busy = False
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        leaving.cancel()
        rt.live.unsubscribe(sub)


async def _until_gone(ws: WebSocket, sub: Subscriber) -> None:
    """Ends `sub`'s feed as soon as its screen goes (its `None`: the screen's task closes and
    returns), not at the next message the table hands over: at an idle table that could be hours,
    the screen's task, subscription and connection kept meanwhile (tests/controller/test_screens_let_go.py).
    A screen says nothing after its hello: whatever else it sends is read and ignored."""
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        while (await ws.receive())["type"] != "websocket.disconnect":
            pass
    with contextlib.suppress(asyncio.QueueFull):  # full: the screen's task has messages to fail on
        sub.queue.put_nowait(None)


async def _hello(ws: WebSocket) -> dict[str, Any] | None:
    """The screen's first message as an object, or None once it has been refused."""
    try:
        message = await asyncio.wait_for(ws.receive(), timeout=10)
    except TimeoutError:
        await _refuse(ws, 4400, f"no hello within 10 s: {HELLO}")
        return None
    if message.get("type") == "websocket.disconnect":
        return None
    text = message.get("text")
    if not isinstance(text, str):
        await _refuse(ws, 4400, f"the hello must be a text message: {HELLO}")
        return None
    try:
        hello = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        await _refuse(ws, 4400, f"the hello is not JSON: {HELLO}")
        return None
    except ValueError:  # JSON, but a number with more digits than Python reads (4300)
        await _refuse(ws, 4400, f"the hello has a number too long to read: {HELLO}")
        return None
    if not isinstance(hello, dict):
        await _refuse(ws, 4400, f"the hello must be an object: {HELLO}")
        return None
    unknown = sorted(set(hello) - {"after", "token"})
    if unknown:
        await _refuse(ws, 4400, f"unknown key {unknown[0]!r} in the hello: {HELLO}"[:200])
        return None
    return hello


def _own_origin(origin: str, ws: WebSocket, tls: bool) -> bool:
    """Whether `origin` (the Origin header a browser sends) is this server's own: the scheme it is
    served with (https under TLS, or as a trusted proxy says) and the host and port of the Host header."""
    secure = tls or ws.url.scheme in ("wss", "https")
    own = _site("https" if secure else "http", ws.headers.get("host", ""))
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.path or parts.query or parts.fragment or parts.username is not None or parts.password is not None:
        return False
    return own is not None and _site(parts.scheme, parts.netloc) == own


def _site(scheme: str, netloc: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a scheme and `host[:port]`, the port filled in; None if it is no such thing."""
    scheme = scheme.lower()
    default = {"http": 80, "https": 443}.get(scheme)
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    if default is None or not parts.hostname or parts.username is not None or parts.password is not None:
        return None
    return scheme, parts.hostname, port if port is not None else default


def _is_text(value: str) -> bool:
    """Whether `value` is text UTF-8 can carry (JSON lets a lone surrogate such as \\ud800 through)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _refuse(ws: WebSocket, code: int, why: str) -> None:
    try:
        await ws.send_json({"type": "error", "error": why, "code": code})
        # A close frame's reason is at most 123 bytes: cut the words to 120 bytes, not characters.
        await ws.close(code=code, reason=why.encode()[:120].decode(errors="ignore"))
    except (WebSocketDisconnect, RuntimeError):
        pass
