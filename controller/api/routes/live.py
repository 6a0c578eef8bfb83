"""The live feed over a WebSocket: every journaled entry in order, for the screens."""

from __future__ import annotations

import asyncio
import json
import logging

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from controller.api.auth import Sessions
from controller.api.runtime import Runtime

router = APIRouter(prefix="/api")
log = logging.getLogger("controller.api")


@router.websocket("/ws")
async def live(ws: WebSocket) -> None:
    """Send `{"after": N}` first (with `"token"` when there is no session cookie); then every
    entry after N, the state, and each new entry as it is journaled."""
    rt: Runtime = ws.app.state.rt
    await ws.accept()
    granted = rt.sessions.role_of(ws.cookies.get(Sessions.COOKIE))
    try:
        hello = json.loads(await asyncio.wait_for(ws.receive_text(), timeout=10))
    except (TimeoutError, json.JSONDecodeError, WebSocketDisconnect, RuntimeError):
        await _refuse(ws, 'send {"after": N} first')
        return
    if granted is None and isinstance(hello, dict) and isinstance(hello.get("token"), str):
        client = ws.client.host if ws.client else "unknown"
        if rt.limiter.retry_after(client) > 0:
            await _refuse(ws, f"too many failed logins from {client}; wait a minute")
            return
        granted = rt.tokens.role_of(hello["token"])
        if granted is None:
            rt.limiter.failed(client)
            log.warning("failed WebSocket login from %s", client)
    if granted is None:
        await _refuse(ws, "log in first: the live feed needs the dealer's or the supervisor's token")
        return
    after = hello.get("after", 0) if isinstance(hello, dict) else None
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        await _refuse(ws, '"after" must be the last sequence number seen, 0 or more')
        return
    backlog, sub = rt.live.subscribe(rt.table, after)
    try:
        for message in backlog:
            await ws.send_text(message)
        while True:
            live_message = await sub.queue.get()
            if live_message is None:  # too far behind, or the daemon is stopping: reconnect
                await ws.close(code=1012, reason="reconnect with your last seq")
                return
            await ws.send_text(live_message)
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        rt.live.unsubscribe(sub)


async def _refuse(ws: WebSocket, why: str) -> None:
    try:
        await ws.send_json({"type": "error", "error": why})
        await ws.close(code=4401, reason=why[:120])
    except (WebSocketDisconnect, RuntimeError):
        pass
