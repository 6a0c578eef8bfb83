"""Who is asking: the API's authentication and roles as FastAPI dependencies.

A route that needs a role declares it (`who: Dealer`, `who: Supervisor`); the role comes from
`Authorization: Bearer TOKEN` (scripts) or from the session cookie `POST /api/login` set (the
screens; a screen's request that changes anything must also carry `X-Tablectl: 1`, which a page
on another site cannot send). Failed tokens are rate-limited per client and journaled.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, Request

from controller.api.auth import Role, Sessions
from controller.api.errors import ApiError
from controller.api.runtime import Runtime

log = logging.getLogger("controller.api")


def runtime(request: Request) -> Runtime:
    rt: Runtime = request.app.state.rt
    return rt


Rt = Annotated[Runtime, Depends(runtime)]


def client_of(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def check_token(rt: Runtime, request: Request, token: str) -> Role:
    """The role `token` grants, or 401 (journaled) / 429 while the client keeps failing."""
    client = client_of(request)
    wait = rt.limiter.retry_after(client)
    if wait > 0:
        raise ApiError(
            "rate-limited",
            f"too many failed logins from {client}; try again in {wait:.0f} s",
            headers={"Retry-After": str(int(wait) + 1)},
        )
    granted = rt.tokens.role_of(token)
    if granted is None:
        rt.limiter.failed(client)
        log.warning("failed login from %s", client)  # never the token itself
        rt.table.access("login", {"client": client, "ok": False})
        raise ApiError("unauthenticated", "the token is not valid for this table")
    rt.limiter.succeeded(client)
    return granted


def _role(request: Request, need: Role) -> Role:
    rt = runtime(request)
    header = request.headers.get("authorization", "")
    granted: Role | None
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError("unauthenticated", "this needs a bearer token (Authorization: Bearer ...)")
        granted = check_token(rt, request, token.strip())
    else:
        granted = rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))
        if granted is None:
            raise ApiError("unauthenticated", "log in first: this needs the dealer's or the supervisor's token")
        if request.method != "GET" and request.headers.get("x-tablectl") != "1":
            raise ApiError("forbidden", "a screen's request must carry the X-Tablectl header")
    if need == "supervisor" and granted != "supervisor":
        raise ApiError("forbidden", "this needs the supervisor's token")
    return granted


def dealer(request: Request) -> Role:
    """The dealer's role or more (the supervisor may do what a dealer does)."""
    return _role(request, "dealer")


def supervisor(request: Request) -> Role:
    return _role(request, "supervisor")


Dealer = Annotated[Role, Depends(dealer)]
Supervisor = Annotated[Role, Depends(supervisor)]
