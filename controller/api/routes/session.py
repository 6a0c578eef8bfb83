"""Logging in and out: a screen's session cookie (HttpOnly, SameSite=Strict) for its token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from controller.api.auth import Sessions
from controller.api.deps import Rt, check_token, client_of, journal_access
from controller.api.errors import body_schema, validated
from controller.api.models import LoginBody

router = APIRouter(prefix="/api")


@router.post("/login", openapi_extra=body_schema(LoginBody))
async def login(request: Request, response: Response, rt: Rt) -> dict[str, Any]:
    """Trade a token for a session cookie (HttpOnly, SameSite=Strict; Secure when served over TLS)."""
    body = await validated(request, LoginBody)
    granted = await check_token(rt, client_of(request), body.token)
    await journal_access(rt, {"client": client_of(request), "ok": True, "role": granted})
    sid = rt.sessions.start(granted)
    response.set_cookie(
        Sessions.COOKIE,
        sid,
        httponly=True,
        samesite="strict",
        secure=rt.tls,
        path="/",
        max_age=rt.sessions.cookie_max_age,
    )
    return {"role": granted}


@router.post("/logout")
async def logout(request: Request, response: Response, rt: Rt) -> dict[str, Any]:
    rt.sessions.end(request.cookies.get(Sessions.COOKIE))
    response.delete_cookie(Sessions.COOKIE, path="/", secure=rt.tls, httponly=True, samesite="strict")
    return {"role": None}


@router.get("/whoami")
async def whoami(request: Request, rt: Rt) -> dict[str, Any]:
    """The session's role, or null before login (a question, not a refusal: no 401 here); when the
    screen's session is gone, `ended` says why ("expired", "signed-out", "tokens-changed",
    "unknown") and `why` says it in words for the login box."""
    sid = request.cookies.get(Sessions.COOKIE)
    role = rt.sessions.role_of(sid)
    gone = rt.sessions.why(sid) if role is None else None
    if gone is None:
        return {"role": role}
    return {"role": None, "ended": gone[0], "why": gone[1]}
