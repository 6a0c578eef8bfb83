"""Who is asking: the API's authentication and roles as FastAPI dependencies.

`caller` runs first for every HTTP route (the app declares it once, for all), on the API's loop,
never in a worker thread: it finds the route's roles in the access table
(`controller/api/access.py`), identifies the caller and refuses before the route's body is read. A
route that needs the caller's role for the audit trail asks for it (`role: Caller`). The role comes
from `Authorization: Bearer TOKEN` (scripts) or from the session cookie `POST /api/login` set (the
screens; a screen's request that changes anything must also carry `X-Tablectl: 1`, which a page on
another site cannot send). Failed tokens are rate-limited per client address and journaled, by the
table's loop: the API never writes the journal itself (controller/api/gate.py).

The client address is the TCP peer. A forwarded header (`X-Forwarded-For`) is believed only
when uvicorn was told the peer is a trusted proxy (`[http] trusted_proxies`); by default none is,
so a client cannot write another address into the audit trail or dodge the limiter.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Literal

from fastapi import Depends, Request
from starlette.requests import HTTPConnection

from controller.api.access import role_words, roles_for
from controller.api.auth import Role, Sessions
from controller.api.errors import ApiError
from controller.api.runtime import Runtime
from controller.engine.base import JSON
from controller.table import TableError

log = logging.getLogger("controller.api")


async def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.rt
    return rt


Rt = Annotated[Runtime, Depends(runtime)]


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def check_token(rt: Runtime, client: str, token: str) -> Role:
    """The role `token` grants, or 401 (journaled, on the table's loop) / 429 while the client
    keeps failing; 503 when the journal cannot be written (the failure could not be recorded)."""
    wait = rt.limiter.retry_after(client)
    if wait > 0:
        if rt.tokens.role_of(token) is None:
            rt.limiter.failed(client)  # still guessing: the lock-out goes on
            wait = rt.limiter.retry_after(client)
        raise ApiError(
            "rate-limited",
            f"too many failed logins from {client}; try again in {wait:.0f} s",
            headers={"Retry-After": str(int(wait) + 1)},
        )
    granted = rt.tokens.role_of(token)
    if granted is None:
        locked = rt.limiter.failed(client)
        log.warning("failed login from %s", client)  # never the token itself
        await journal_access(rt, {"client": client, "ok": False})
        if locked:
            seconds = int(rt.limiter.lockout_s)
            log.warning("%s locked out for %d s after %d failed logins", client, seconds, rt.limiter.limit)
            await journal_access(rt, {"client": client, "ok": False, "locked_out": seconds})
        raise ApiError("unauthenticated", "the token is not valid for this table")
    return granted


async def journal_access(
    rt: Runtime, body: dict[str, JSON], kind: Literal["login", "camera-recalibrated"] = "login"
) -> None:
    """An access journaled for the audit trail, by the table's loop (never refused as busy: a
    failed login is always recorded; the limiter bounds how many one address can cause, and the
    gate commits a burst of them together)."""
    try:
        # Shielded: a caller that hangs up does not take its failed login out of the audit trail.
        await asyncio.shield(asyncio.wrap_future(rt.gate.access(kind, body)))
    except TableError as exc:  # the journal cannot be written: 503, said once by the table
        raise ApiError.of_table(exc) from None


async def identify(request: Request) -> Role | None:
    """The caller's role from a bearer token or the session cookie; None without credentials."""
    rt: Runtime = request.app.state.rt
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError("unauthenticated", "this needs a bearer token (Authorization: Bearer ...)")
        return await check_token(rt, client_of(request), token.strip())
    granted = rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))
    if granted is not None and request.method not in ("GET", "HEAD") and request.headers.get("x-tablectl") != "1":
        raise ApiError("forbidden", "a screen's request must carry the X-Tablectl header")
    return granted


def granted_quietly(rt: Runtime, request: Request) -> Role | None:
    """The caller's role when `identify` would grant it with nothing to record or refuse (a valid
    bearer token from a client not locked out, or a live session cookie on a GET); None in every
    other case, which `identify` then answers in full (a refusal, a failed login journaled). For the
    hot reads answered before FastAPI's routing (controller/api/app.py's `StateReads`)."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        if rt.limiter.retry_after(client_of(request)) > 0:
            return None
        return rt.tokens.role_of(token.strip())
    if request.method != "GET":
        return None
    return rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))


async def caller(conn: HTTPConnection) -> Role | None:
    """The role of whoever calls this route, checked against the access table (None: a public
    route called without credentials). The live feed checks its own hello (routes/live.py)."""
    if conn.scope["type"] == "websocket":
        return None
    request = conn if isinstance(conn, Request) else Request(conn.scope)
    route = request.scope.get("route")
    path = getattr(route, "path", request.url.path)
    try:
        allowed = roles_for(request.method, path)
    except LookupError as exc:
        log.error("%s", exc)
        raise ApiError("forbidden", f"{request.method} {path} is not open to any role") from None
    if allowed is None:
        # A public route: credentials are optional, but wrong ones are still wrong.
        request.state.role = await identify(request) if request.headers.get("authorization") else _session_role(request)
        return request.state.role  # type: ignore[no-any-return]
    granted = await identify(request)
    request.state.role = granted  # what the error handler masks a refusal's words for
    if granted is None:
        raise ApiError("unauthenticated", f"log in first: this needs {role_words(allowed)} token")
    if granted not in allowed:
        raise ApiError("forbidden", f"this needs {role_words(allowed)} token, not the {granted}'s")
    return granted


def _session_role(request: Request) -> Role | None:
    rt: Runtime = request.app.state.rt
    return rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))


async def role(granted: Annotated[Role | None, Depends(caller)]) -> Role:
    """The caller's role on a route that needs one (`caller` has refused anyone without)."""
    if granted is None:  # a public route asking for a role: a programming error
        raise ApiError("unauthenticated", "log in first")
    return granted


Caller = Annotated[Role, Depends(role)]
Anyone = Annotated[Role | None, Depends(caller)]
