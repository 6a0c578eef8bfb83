"""The table's HTTP API and screens (FastAPI), served by `tablectl run` on a loop of its own.

Every handler is `async` and runs on the API's loop, in its own thread, never on the table's: a
request changes the table only by handing it a job through the gate (controller/api/gate.py),
which the table's loop runs between cards, and reads what the table last published. So a request
sees and changes the table exactly as the shoe and the buttons do, through the journal, and no
amount of HTTP or WebSocket work can make a card wait for more than one job.

The routes live in routers (`controller/api/routes/`), one per concern. Who may call a route is
the access table's (`controller/api/access.py`), enforced for every route by one dependency the
app declares (`controller.api.deps.caller`), before a route reads its body; what a role sees of
what it reads is `controller.table.visibility`'s. Errors are JSON `{"error": "...", "kind": ...}` in
plain words with the status code of their kind (`controller/api/errors.py`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from controller.api.access import roles_for
from controller.api.deps import caller, granted_quietly
from controller.api.errors import ERROR_RESPONSES, ApiError, fill_body_schemas, problem, request_body
from controller.api.gate import json_bytes
from controller.api.routes import analytics, camera, live, metrics, play, reads, session, sim, software
from controller.api.runtime import Runtime
from controller.api.screens import STATIC_URL, static_dir
from controller.table import TableError
from controller.table.visibility import SEES_EVERY_CARD, mask_cards

#: The screens, shipped as package data and found through importlib.resources wherever tablectl is installed.
STATIC = Path(str(resources.files("controller.api").joinpath("static")))

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
#: Served over HTTPS (`Runtime.tls`): a browser that has seen it never tries plain HTTP here for a year.
HSTS = {"Strict-Transport-Security": "max-age=31536000"}


def create_app(rt: Runtime) -> FastAPI:
    app = FastAPI(
        title="tablectl",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,  # served below, encoded once
        dependencies=[Depends(caller)],
        # FastAPI's own OpenTelemetry (tracing, metrics and logs of each request) is off: tablectl
        # configures none, so a provider or FASTAPI_OTEL_* variable set in the Pi's environment sends
        # nothing of the table's anywhere, and no request asks the three providers first.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.rt = rt

    app.add_middleware(StateReads, rt=rt)  # inside Guard: the same security headers
    app.add_middleware(Guard, rt=rt)
    app.state.answer_now = StateNow(rt)  # the same answer before the app, by the HTTP protocol

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        # A refusal may quote the prompt ("play is stopped: ..."): the caller's sight applies.
        everything = getattr(request.state, "role", None) in SEES_EVERY_CARD
        body, status = exc.body(), exc.status
        if not everything:
            try:
                body = mask_cards(body, (await rt.gate.view()).hidden, rt.gate.adapter)
            except TableError:  # the table is not answering: nothing of the refusal's words is sent
                body = {"error": "the table is not answering; try again in a moment", "kind": "unavailable"}
                status = 503
        return JSONResponse(body, status_code=status, headers=headers or None)

    @app.exception_handler(TableError)
    async def table_error(request: Request, exc: TableError) -> JSONResponse:
        # A refusal that reached a route's caller without table_call's words (the view or a device
        # control while the daemon is stopping: the table is not answering): the same answer.
        return await api_error(request, ApiError.of_table(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [problem(e) for e in exc.errors()]
        body = {"error": "; ".join(problems) or "the request is not valid", "kind": "invalid"}
        return JSONResponse(body, status_code=422)

    for module in (session, reads, play, camera, sim, live, metrics, software, analytics):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    schema_of_routes = app.openapi

    def openapi() -> dict[str, Any]:
        """The routes' schema with the bodies that are this table's game's own."""
        fill_body_schemas()  # the routes' bodies (controller/api/errors.py), before FastAPI writes them
        schema = schema_of_routes()
        for path, model in play.GAME_BODIES.items():
            operation = schema.get("paths", {}).get(path, {}).get("post")
            if operation is not None:
                operation.update(request_body(model(rt.gate.adapter)))
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_api_route("/api/openapi.json", openapi_json, methods=["GET"], include_in_schema=False)

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # The table's game's own screen files, from its package (controller/api/screens.py).
    game_files = static_dir(rt.gate.game_name)
    if game_files is not None:
        app.mount(STATIC_URL.format(name=rt.gate.game_name), StaticFiles(directory=game_files), name="game-static")

    @app.get("/", include_in_schema=False)
    async def dealer_screen() -> FileResponse:
        return _page("dealer.html")

    @app.get("/supervisor", include_in_schema=False)
    async def supervisor_screen() -> FileResponse:
        return _page("supervisor.html")

    return app


async def openapi_json(request: Request) -> Response:
    """What the API is (no table data): the same for every caller, so encoded once. (A module-level
    function: FastAPI caches each route's function for good, which must not keep an app alive.)"""
    state = request.app.state
    if getattr(state, "openapi_json", None) is None:
        state.openapi_json = json_bytes(request.app.openapi())
    return Response(state.openapi_json, media_type="application/json")


class Secured:
    """An answer's headers as `Guard` sends them: the security headers (and HSTS over HTTPS) in
    place of any the app set, and on an /api/ answer `Cache-Control: no-store`."""

    def __init__(self, rt: Runtime) -> None:
        headers = {**SECURITY_HEADERS, **(HSTS if rt.tls else {})}
        self.headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        self.names = {k for k, _ in self.headers}
        self._api_names = self.names | {b"cache-control"}

    def __call__(self, headers: Any, *, api: bool) -> list[tuple[bytes, bytes]]:
        drop = self._api_names if api else self.names
        raw = [(k, v) for k, v in headers if k not in drop]
        raw.extend(self.headers)
        if api:
            raw.append((b"cache-control", b"no-store"))
        return raw


class Guard:
    """Every answer's security headers, and while the journal cannot be written a 503 for every
    POST, in plain words (nothing can be taken). Plain ASGI: it adds nothing to a request's cost
    but the headers, where a `BaseHTTPMiddleware` costs a task and two streams a request."""

    def __init__(self, app: ASGIApp, rt: Runtime) -> None:
        self.app = app
        self.rt = rt
        self.secured = Secured(rt)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = str(scope.get("path", "")).startswith("/api/")
        secured = self.secured

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": secured(message.get("headers", []), api=api)}
            await send(message)

        if scope.get("method") == "POST":
            try:
                fault = (await self.rt.gate.view()).journal_fault
            except TableError as exc:  # the table is not answering (the daemon is stopping)
                fault = str(exc)
            if fault is not None:
                refusal = JSONResponse({"error": fault, "kind": "unavailable"}, status_code=503)
                await refusal(scope, receive, send_with_headers)
                return
        await self.app(scope, receive, send_with_headers)


class StateReads:
    """`GET /api/state`, the read every screen and script repeats after each card, answered before
    FastAPI's routing, dependencies and response handling: the same caller check (`granted_quietly`:
    a valid token from a client not locked out, or a live session), the same body (the view's
    bytes, encoded once per change of the table and audience) and the same headers as the route in
    routes/reads.py. Anything else (no or a wrong token, a locked-out client, a role the access
    table does not open it to, the table not answering) goes on to FastAPI, which answers and
    journals it as before."""

    PATH = "/api/state"

    def __init__(self, app: ASGIApp, rt: Runtime) -> None:
        self.app = app
        self.rt = rt
        self.allowed = roles_for("GET", self.PATH)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "GET" and scope.get("path") == self.PATH:
            granted = granted_quietly(self.rt, Request(scope))
            if granted is not None and (self.allowed is None or granted in self.allowed):
                try:
                    body = await self.rt.snapshot_json(granted)
                except TableError:
                    pass  # the route says so in its words
                else:
                    await Response(body, media_type="application/json")(scope, receive, send)
                    return
        await self.app(scope, receive, send)


class StateNow:
    """`GET /api/state` answered at once, with no task, no ASGI messages and no turn of the loop,
    by the API's HTTP protocol (controller/api/http.py's `HttpToolsCoalesced`, which finds it as the app's
    `state.answer_now`), when `StateReads` would answer it from a view already made: the same
    caller check (`granted_quietly`), the view of the table as it stands now (the feed's last
    message said so: `view_now`), the same body and the same headers (`Response`'s and `Guard`'s),
    byte for byte (tests/controller/test_state_now.py). None in every other case: the request
    then goes the ASGI way, through `StateReads` and FastAPI, as before."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.allowed = roles_for("GET", StateReads.PATH)
        self.secured = Secured(rt)
        self._last: tuple[bytes, list[tuple[bytes, bytes]]] | None = None

    def __call__(self, scope: Scope) -> tuple[list[tuple[bytes, bytes]], bytes] | None:
        """The answer's headers (those the app sets; the server adds its own) and body, or None."""
        view_now = getattr(self.rt.gate, "view_now", None)
        if view_now is None:
            return None
        granted = granted_quietly(self.rt, Request(scope))
        if granted is None or (self.allowed is not None and granted not in self.allowed):
            return None
        view = view_now()
        if view is None:
            return None
        body = view.state_json(granted in SEES_EVERY_CARD)
        last = self._last
        if last is None or last[0] is not body:
            headers = Response(body, media_type="application/json").raw_headers
            last = self._last = (body, self.secured(headers, api=True))
        return last[1], body


def _page(name: str) -> FileResponse:
    path = STATIC / name
    if not path.is_file():
        raise ApiError("not-found", f"the screen {name} is not installed")
    return FileResponse(path, media_type="text/html")
