"""The table's HTTP API and screens (FastAPI), served by `tablectl run` on the table loop itself.

Every handler is `async` and runs on the one asyncio loop that owns the Table, so a request sees
and changes the table exactly as the shoe and the buttons do: through the journal.

Who may do what: reads of the table are open to the table's own network (the server binds
127.0.0.1 unless configured); every state-changing route needs the dealer's or the supervisor's
role, from `Authorization: Bearer TOKEN` (scripts) or from a session cookie set by
`POST /api/login` (the screens; such requests must also carry `X-Tablectl: 1`, which a page on
another site cannot send). Failed logins are rate-limited per client and journaled. Errors are
JSON `{"error": "..."}` in plain words: 401 no or wrong credentials, 403 wrong role, 404 no such
thing, 409 not now, 422 the body is wrong (naming the field), 429 too many failed logins.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from fastapi import FastAPI, Request, Response, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from controller.api.auth import LoginLimiter, Role, Sessions, Tokens
from controller.api.live import LiveFeed
from controller.api.models import (
    OPEN_BODIES,
    ClearFaultBody,
    DecisionBody,
    LoginBody,
    RecalibrateBody,
    SimDrawBody,
    SimFaultBody,
    SimShoeBody,
    VoidBody,
    WhoBody,
)
from controller.engine.base import RuleError, to_json
from controller.engine.cards import Card, CardError, parse_card
from controller.replay import describe, replay_steps
from controller.table import RoundRecord, Table, TableError

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=BaseModel)

STATIC = Path(__file__).resolve().parent / "static"

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


class SimControls(Protocol):
    """What the simulated dealer can do with the simulated shoe (simulation only)."""

    def stack(self, cards: list[Card]) -> None: ...

    def draw(self, count: int) -> list[Card]: ...

    def fault(self, name: str, on: bool) -> str: ...

    def reshuffle(self) -> None: ...


class SimSceneControls(Protocol):
    """What a simulation can do to what the simulated camera sees (simulation only)."""

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


class FromCameraBody(BaseModel):
    """The dealer confirms the camera's proposal: `scene_seq` is the view the dealer looked at."""

    model_config = ConfigDict(extra="forbid")
    scene_seq: StrictInt | None = None
    name: str | None = Field(default=None, max_length=40)


@dataclass
class Runtime:
    """What the API serves: the table, the tokens, and in simulation the simulated shoe."""

    table: Table
    tokens: Tokens
    sim: SimControls | None = None
    sim_pins: Callable[[], dict[str, Any]] | None = None  # mock pin histories (simulation only)
    device_views: dict[str, Callable[[], Any]] = field(default_factory=dict)
    config_view: dict[str, Any] = field(default_factory=dict)
    sim_scene: SimSceneControls | None = None  # the simulated camera's scene (simulation only)
    recalibrate: Callable[[], None] | None = None  # asks the camera to calibrate from its next frame
    sessions: Sessions = field(default_factory=Sessions)
    limiter: LoginLimiter = field(default_factory=LoginLimiter)
    live: LiveFeed = field(default_factory=LiveFeed)


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


def create_app(rt: Runtime) -> FastAPI:
    app = FastAPI(title="tablectl", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    if rt.live not in rt.table.listeners:
        rt.table.listeners.append(rt.live)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        if request.url.path.startswith("/api/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = dict(exc.headers or {})
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers or None)

    @app.exception_handler(RequestValidationError)
    async def bad_body(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(e) for e in exc.errors()]
        return JSONResponse({"error": "; ".join(problems) or "the request is not valid"}, status_code=422)

    # -- who is asking ----------------------------------------------------------------------------

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    def role(request: Request, need: Role) -> Role:
        header = request.headers.get("authorization", "")
        granted: Role | None
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise ApiError(401, "this needs a bearer token (Authorization: Bearer ...)")
            granted = check_token(request, token.strip())
        else:
            granted = rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))
            if granted is None:
                raise ApiError(401, "log in first: this needs the dealer's or the supervisor's token")
            if request.method != "GET" and request.headers.get("x-tablectl") != "1":
                raise ApiError(403, "a screen's request must carry the X-Tablectl header")
        if need == "supervisor" and granted != "supervisor":
            raise ApiError(403, "this needs the supervisor's token")
        return granted

    def check_token(request: Request, token: str) -> Role:
        client = client_of(request)
        wait = rt.limiter.retry_after(client)
        if wait > 0:
            raise ApiError(
                429,
                f"too many failed logins from {client}; try again in {wait:.0f} s",
                {"Retry-After": str(int(wait) + 1)},
            )
        granted = rt.tokens.role_of(token)
        if granted is None:
            rt.limiter.failed(client)
            log.warning("failed login from %s", client)  # never the token itself
            rt.table.access("login", {"client": client, "ok": False})
            raise ApiError(401, "the token is not valid for this table")
        rt.limiter.succeeded(client)
        return granted

    def table_call(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except TableError as exc:
            text = str(exc)
            status = 409 if text.startswith(("play is stopped", "round ", "there is no")) else 422
            raise ApiError(status, text) from None

    # -- login ------------------------------------------------------------------------------------

    @app.post("/api/login")
    async def login(body: LoginBody, request: Request, response: Response) -> dict[str, Any]:
        granted = check_token(request, body.token)
        sid = rt.sessions.start(granted)
        rt.table.access("login", {"client": client_of(request), "ok": True, "role": granted})
        response.set_cookie(
            Sessions.COOKIE, sid, httponly=True, samesite="strict", path="/", max_age=int(rt.sessions.ttl_s)
        )
        return {"role": granted}

    @app.post("/api/logout")
    async def logout(request: Request, response: Response) -> dict[str, Any]:
        rt.sessions.end(request.cookies.get(Sessions.COOKIE))
        response.delete_cookie(Sessions.COOKIE, path="/")
        return {"role": None}

    @app.get("/api/whoami")
    async def whoami(request: Request) -> dict[str, Any]:
        """The session's role, or null before login (a question, not a refusal: no 401 here)."""
        return {"role": rt.sessions.role_of(request.cookies.get(Sessions.COOKIE))}

    # -- reads ------------------------------------------------------------------------------------

    @app.get("/api/health")
    async def health() -> dict[str, Any]:
        table = rt.table
        return {
            "status": "fault" if table.blocked else "ok",
            "simulated": table.simulated,
            "game": table.game_name,
            "table": table.table_id,
            "journal_seq": table.journal.last_seq,
            "message": "SIMULATED table" if table.simulated else "live table",
        }

    def snapshot() -> dict[str, Any]:
        snap = rt.table.snapshot()
        devices = dict(snap.get("devices") or {})
        for name, view in rt.device_views.items():
            devices[name] = view()
        snap["devices"] = devices
        return snap

    rt.live.describe = lambda _table: snapshot()

    @app.get("/api/state")
    async def state() -> dict[str, Any]:
        return snapshot()

    @app.get("/api/meters")
    async def meters() -> dict[str, Any]:
        return {"game": rt.table.game_name, "simulated": rt.table.simulated, **rt.table.meters.to_json()}

    @app.get("/api/devices")
    async def devices() -> dict[str, Any]:
        out: dict[str, Any] = snapshot()["devices"]
        out.setdefault("camera", {"installed": False, "message": "no overhead camera: vision comes later"})
        return out

    @app.get("/api/rounds")
    async def recall(last: int = 10) -> dict[str, Any]:
        if not 1 <= last <= 1000:
            raise ApiError(422, "last: a whole number from 1 to 1000")
        return {"rounds": [r.to_json() for r in rt.table.last_rounds(last)]}

    @app.get("/api/rounds/{number}")
    async def get_round(number: int) -> dict[str, Any]:
        return _record(number).to_json()

    @app.get("/api/rounds/{number}/file")
    async def round_file(number: int) -> Any:
        return _finished_file(number)

    @app.get("/api/rounds/{number}/replay")
    async def round_replay(number: int) -> dict[str, Any]:
        doc = _finished_file(number)
        try:
            _, steps = replay_steps(doc)
        except RuleError as exc:  # the journal's own round file should always replay
            raise ApiError(409, f"round {number} does not replay: {exc}") from None
        return {
            "round": number,
            "steps": [
                {
                    "card": str(step.card) if step.card else None,
                    "state": to_json(step.state),
                    "effects": [to_json(e) for e in step.effects],
                    "prompt": _step_prompt(step.awaiting),
                }
                for step in steps
            ],
        }

    def _record(number: int) -> RoundRecord:
        record = rt.table.rounds.get(number)
        if record is None:
            raise ApiError(404, f"there is no round {number} at this table")
        return record

    def _finished_file(number: int) -> dict[str, Any]:
        record = _record(number)
        if record.status == "void":
            raise ApiError(409, f"round {number} was void: every wager went back, so there is no round file to replay")
        if record.round_file is None:
            raise ApiError(409, f"round {number} is still open; its round file exists once it is settled")
        return dict(record.round_file)

    @app.get("/api/audit")
    async def audit(request: Request, last: int = 100) -> dict[str, Any]:
        role(request, "supervisor")
        if not 1 <= last <= 10000:
            raise ApiError(422, "last: a whole number from 1 to 10000")
        return {"audit": rt.table.audit(last)}

    @app.get("/api/config")
    async def config(request: Request) -> dict[str, Any]:
        role(request, "supervisor")
        return rt.config_view

    # -- the dealer's and the supervisor's actions ------------------------------------------------

    @app.post("/api/rounds", status_code=201)
    async def open_round(request: Request) -> dict[str, Any]:
        who = role(request, "dealer")
        model = OPEN_BODIES.get(rt.table.game_name)
        if model is None:
            raise ApiError(409, f"this tablectl cannot open a {rt.table.game_name} round yet")
        body = await _validated(request, model)
        number = table_call(lambda: rt.table.open_round(body.model_dump(exclude_none=True), by=who))
        return {"round": number}

    @app.post("/api/rounds/from-camera", status_code=201)
    async def open_from_camera(request: Request, body: FromCameraBody | None = None) -> dict[str, Any]:
        """Open the round the camera proposes (`camera.proposal` in the state), as confirmed."""
        who = role(request, "dealer")
        seq = body.scene_seq if body else None
        number = table_call(lambda: rt.table.open_from_camera(by=_who(who, body), scene_seq=seq))
        return {"round": number}

    @app.get("/api/camera")
    async def camera() -> dict[str, Any]:
        """What the overhead camera sees and proposes, and the camera device's own status."""
        device = snapshot()["devices"].get("camera")
        if not rt.table.camera.active and device is None:
            raise ApiError(404, "this table has no overhead camera ([camera] in the configuration)")
        return {"device": device, **rt.table.camera.snapshot(rt.table)}

    @app.post("/api/camera/recalibrate", status_code=202)
    async def recalibrate(request: Request, body: RecalibrateBody | None = None) -> dict[str, Any]:
        who = role(request, "supervisor")
        if rt.recalibrate is None:
            raise ApiError(404, "this table has no overhead camera to recalibrate")
        reason = body.reason if body and body.reason else ""
        rt.table.access("camera-recalibrated", {"by": _who(who, body), "reason": reason})
        rt.recalibrate()
        return {"message": "the camera calibrates from its next frame; watch camera.status"}

    @app.post("/api/decisions")
    async def decide(body: DecisionBody, request: Request) -> dict[str, Any]:
        who = role(request, "dealer")
        entry = table_call(lambda: rt.table.decide(body.model_dump(exclude_none=True), by=who))
        return {"journal_seq": entry.seq, "prompt": rt.table.prompt()}

    @app.post("/api/confirm")
    async def confirm(request: Request, body: WhoBody | None = None) -> dict[str, Any]:
        who = role(request, "dealer")
        entry = table_call(lambda: rt.table.button("confirm", by=_who(who, body)))
        return {"journal_seq": entry.seq, "prompt": rt.table.prompt()}

    @app.post("/api/rounds/current/void")
    async def void(body: VoidBody, request: Request) -> dict[str, Any]:
        who = role(request, "supervisor")
        entry = table_call(lambda: rt.table.void(by=_who(who, body), reason=body.reason))
        return {"journal_seq": entry.seq, "round": entry.round}

    @app.post("/api/faults/{fault_id}/clear")
    async def clear_fault(fault_id: int, body: ClearFaultBody, request: Request) -> dict[str, Any]:
        who = role(request, "supervisor")
        entry = table_call(
            lambda: rt.table.clear_fault(fault_id, body.action, by=_who(who, body), reason=body.reason, card=body.card)
        )
        return {"journal_seq": entry.seq}

    @app.post("/api/faults/{fault_id}/acknowledge")
    async def acknowledge(fault_id: int, request: Request, body: WhoBody | None = None) -> dict[str, Any]:
        who = role(request, "dealer")
        entry = table_call(lambda: rt.table.acknowledge_fault(fault_id, by=_who(who, body)))
        return {"journal_seq": entry.seq}

    @app.post("/api/shoe/reshuffle")
    async def reshuffle(request: Request, body: WhoBody | None = None) -> dict[str, Any]:
        who = role(request, "dealer")
        entry = table_call(lambda: rt.table.shoe_reshuffled(by=_who(who, body)))
        if rt.sim is not None:  # the simulated dealer loads the simulated shoe too
            await asyncio.to_thread(rt.sim.reshuffle)
        return {"journal_seq": entry.seq}

    # -- simulation only --------------------------------------------------------------------------

    def sim() -> SimControls:
        if rt.sim is None:
            raise ApiError(
                404,
                "no simulated shoe in this daemon: a live table has none, and a simulated table "
                "using an external `tablectl sim-shoe` is driven through that program",
            )
        return rt.sim

    @app.post("/api/sim/shoe")
    async def sim_stack(body: SimShoeBody, request: Request) -> dict[str, Any]:
        role(request, "dealer")
        shoe = sim()
        try:
            cards = [parse_card(t) for t in body.cards]
        except CardError as exc:
            raise ApiError(422, f"body.cards: {exc}") from None
        # Off the loop: the shoe's bytes come back through the reader, which needs this loop.
        await asyncio.to_thread(shoe.stack, cards)
        return {"stacked": [str(c) for c in cards]}

    @app.post("/api/sim/draw")
    async def sim_draw(request: Request, body: SimDrawBody | None = None) -> dict[str, Any]:
        role(request, "dealer")
        shoe = sim()
        count = body.count if body else 1
        drawn = await asyncio.to_thread(shoe.draw, count)
        return {"drawn": [str(c) for c in drawn]}

    @app.post("/api/sim/fault")
    async def sim_fault(body: SimFaultBody, request: Request) -> dict[str, Any]:
        role(request, "supervisor")
        shoe = sim()
        said = await asyncio.to_thread(shoe.fault, body.fault, body.on)
        return {"fault": body.fault, "on": body.on, "shoe": said}

    @app.post("/api/sim/scene")
    async def sim_scene(request: Request) -> dict[str, Any]:
        """Change what the simulated camera sees, as a player's or a dealer's hands would:
        {"zones": {"seat3.first": [25, 25], "seat3.second": []}, "pucks": {"blind": "seat4.puck"},
        "hands": [{"over": "seat2.first"}], "bump": true}."""
        role(request, "dealer")
        if rt.sim_scene is None:
            raise ApiError(404, "no simulated camera in this daemon: add [camera] to a --sim table's configuration")
        try:
            body = json.loads(await request.body() or b"{}")
        except json.JSONDecodeError as exc:
            raise ApiError(422, f"body: not valid JSON: {exc}") from None
        if not isinstance(body, dict):
            raise ApiError(422, 'body: an object such as {"zones": {"seat3.first": [25]}}')
        controls = rt.sim_scene
        try:
            return controls.change(body)
        except ValueError as exc:
            raise ApiError(422, str(exc)) from None

    @app.get("/api/sim/pins")
    async def sim_pins() -> dict[str, Any]:
        if rt.sim_pins is None:
            raise ApiError(404, "a live table has real pins, not mock ones: there is no pin history to show")
        return {"pins": rt.sim_pins()}

    # -- live updates -----------------------------------------------------------------------------

    @app.websocket("/api/ws")
    async def live(ws: WebSocket) -> None:
        await ws.accept()
        granted = rt.sessions.role_of(ws.cookies.get(Sessions.COOKIE))
        try:
            hello = json.loads(await asyncio.wait_for(ws.receive_text(), timeout=10))
        except (TimeoutError, json.JSONDecodeError, WebSocketDisconnect, RuntimeError):
            await _refuse_ws(ws, 'send {"after": N} first')
            return
        if granted is None and isinstance(hello, dict) and isinstance(hello.get("token"), str):
            client = ws.client.host if ws.client else "unknown"
            if rt.limiter.retry_after(client) > 0:
                await _refuse_ws(ws, f"too many failed logins from {client}; wait a minute")
                return
            granted = rt.tokens.role_of(hello["token"])
            if granted is None:
                rt.limiter.failed(client)
                log.warning("failed WebSocket login from %s", client)
        if granted is None:
            await _refuse_ws(ws, "log in first: the live feed needs the dealer's or the supervisor's token")
            return
        after = hello.get("after", 0) if isinstance(hello, dict) else None
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            await _refuse_ws(ws, '"after" must be the last sequence number seen, 0 or more')
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

    # -- the screens ------------------------------------------------------------------------------

    if STATIC.is_dir():
        app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/", include_in_schema=False)
    async def dealer_screen() -> FileResponse:
        return _page("dealer.html")

    @app.get("/supervisor", include_in_schema=False)
    async def supervisor_screen() -> FileResponse:
        return _page("supervisor.html")

    return app


def _step_prompt(awaiting: Any) -> str:
    if awaiting.kind == "card":
        return f"Deal to {describe(awaiting.target)}"
    if awaiting.kind == "decision":
        return f"{describe(awaiting.who).capitalize()}: {' or '.join(awaiting.allowed)}?"
    return "Settled"


def _page(name: str) -> FileResponse:
    path = STATIC / name
    if not path.is_file():
        raise ApiError(404, f"the screen {name} is not installed")
    return FileResponse(path, media_type="text/html")


async def _refuse_ws(ws: WebSocket, why: str) -> None:
    try:
        await ws.send_json({"type": "error", "error": why})
        await ws.close(code=4401, reason=why[:120])
    except (WebSocketDisconnect, RuntimeError):
        pass


async def _validated(request: Request, model: type[ModelT]) -> ModelT:
    """The request's JSON body checked against `model`; a 422 naming the field if it is wrong."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [
            {**e, "loc": ("body", *e.get("loc", ()))} if e.get("type") != "json_invalid" else e for e in exc.errors()
        ]
        raise ApiError(422, "; ".join(_problem(e) for e in errors)) from None


def _problem(error: Any) -> str:
    """One pydantic error as the field and the rule, in the words the rest of the API uses."""
    loc = tuple(error.get("loc", ()))
    kind = error.get("type", "")
    if kind == "json_invalid":
        return f"body: not valid JSON: {error.get('ctx', {}).get('error', 'cannot be read')}"
    if kind == "extra_forbidden":
        return f"{_where(loc[:-1])}: unknown key {loc[-1]!r}"
    if kind == "missing":
        return f"{_where(loc)}: is required"
    if kind == "too_short":
        ctx = error.get("ctx", {})
        return f"{_where(loc)}: at least {ctx.get('min_length')} needed, not {ctx.get('actual_length')}"
    if kind in ("int_type", "int_parsing"):
        return f"{_where(loc)}: must be a whole number, not {error.get('input')!r}"
    return f"{_where(loc)}: {error.get('msg', 'is not valid')}"


def _where(loc: Any) -> str:
    """pydantic's error location as the field a person reads: body.seats[0].wagers.first."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "body"


def _who(role: str, body: BaseModel | None) -> str:
    """`role` or `role:name` when the caller names themselves (who, for the audit trail)."""
    name = getattr(body, "name", None) if body is not None else None
    return f"{role}:{name}" if name else role
