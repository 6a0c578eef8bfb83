"""The table's HTTP API (FastAPI), served by `tablectl run` on the table loop itself.

Every handler is `async` and runs on the one asyncio loop that owns the Table, so a request sees
and changes the table exactly as the shoe and the buttons do: through the journal. Every POST
needs a bearer token (dealer or supervisor); reads are open to the table's own network (the
server binds 127.0.0.1 unless configured otherwise). Errors are JSON `{"error": "..."}` in plain
words: 401 no or wrong token, 403 wrong role, 404 no such thing, 409 not now (a fault stops
play, a round is still open), 422 the body is wrong (the text names the field and the rule).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from controller.api.auth import Role, Tokens
from controller.engine.cards import Card, CardError, parse_card
from controller.table import Table, TableError


class SimControls(Protocol):
    """What the simulated dealer can do with the simulated shoe (simulation only)."""

    def stack(self, cards: list[Card]) -> None: ...

    def draw(self, count: int) -> list[Card]: ...

    def fault(self, name: str, on: bool) -> str: ...

    def reshuffle(self) -> None: ...


@dataclass
class Runtime:
    """What the API serves: the table, the tokens, and in simulation the simulated shoe."""

    table: Table
    tokens: Tokens
    sim: SimControls | None = None
    sim_pins: Callable[[], dict[str, Any]] | None = None  # mock pin histories (simulation only)
    device_views: dict[str, Callable[[], Any]] = field(default_factory=dict)


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(rt: Runtime) -> FastAPI:
    app = FastAPI(title="tablectl", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")

    @app.exception_handler(ApiError)
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)

    def role(request: Request, need: Role) -> Role:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "this needs a bearer token (Authorization: Bearer ...)")
        granted = rt.tokens.role_of(token.strip())
        if granted is None:
            raise ApiError(401, "the token is not valid for this table")
        if need == "supervisor" and granted != "supervisor":
            raise ApiError(403, "this needs the supervisor's token")
        return granted

    async def body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw:
            return {}
        try:
            doc = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ApiError(422, f"body: not valid JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise ApiError(422, "body: must be a JSON object")
        return doc

    def table_call(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except TableError as exc:
            text = str(exc)
            status = 409 if text.startswith(("play is stopped", "round ", "there is no")) else 422
            raise ApiError(status, text) from None

    def text_field(doc: dict[str, Any], key: str) -> str:
        value = doc.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ApiError(422, f"body.{key}: required, as non-empty text")
        return value.strip()

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

    @app.get("/api/state")
    async def state() -> dict[str, Any]:
        snap = rt.table.snapshot()
        for name, view in rt.device_views.items():
            snap.setdefault("devices", {})[name] = view()
        return snap

    @app.get("/api/meters")
    async def meters() -> dict[str, Any]:
        return {"game": rt.table.game_name, "simulated": rt.table.simulated, **rt.table.meters.to_json()}

    @app.post("/api/rounds", status_code=201)
    async def open_round(request: Request) -> dict[str, Any]:
        who = role(request, "dealer")
        doc = await body(request)
        number = table_call(lambda: rt.table.open_round(doc, by=who))
        return {"round": number}

    @app.get("/api/rounds")
    async def recall(last: int = 10) -> dict[str, Any]:
        if not 1 <= last <= 1000:
            raise ApiError(422, "last: a whole number from 1 to 1000")
        return {"rounds": [_round_json(r) for r in rt.table.last_rounds(last)]}

    @app.get("/api/rounds/{number}")
    async def get_round(number: int) -> dict[str, Any]:
        return _round_json(_record(number))

    @app.get("/api/rounds/{number}/file")
    async def round_file(number: int) -> Any:
        record = _record(number)
        if record.status == "void":
            raise ApiError(409, f"round {number} was void: every wager went back, so there is no round file to replay")
        if record.round_file is None:
            raise ApiError(409, f"round {number} is still open; its round file exists once it is settled")
        return record.round_file

    def _record(number: int) -> Any:
        record = rt.table.rounds.get(number)
        if record is None:
            raise ApiError(404, f"there is no round {number} at this table")
        return record

    @app.post("/api/rounds/current/void")
    async def void(request: Request) -> dict[str, Any]:
        who = role(request, "supervisor")
        doc = await body(request)
        reason = text_field(doc, "reason")
        entry = table_call(lambda: rt.table.void(by=_who(who, doc), reason=reason))
        return {"journal_seq": entry.seq, "round": entry.round}

    @app.post("/api/faults/{fault_id}/clear")
    async def clear_fault(fault_id: int, request: Request) -> dict[str, Any]:
        who = role(request, "supervisor")
        doc = await body(request)
        action = text_field(doc, "action")
        reason = text_field(doc, "reason")
        card = doc.get("card")
        if card is not None and not isinstance(card, str):
            raise ApiError(422, "body.card: a card such as 'AS'")
        entry = table_call(lambda: rt.table.clear_fault(fault_id, action, by=_who(who, doc), reason=reason, card=card))
        return {"journal_seq": entry.seq}

    @app.post("/api/faults/{fault_id}/acknowledge")
    async def acknowledge(fault_id: int, request: Request) -> dict[str, Any]:
        who = role(request, "dealer")
        doc = await body(request)
        entry = table_call(lambda: rt.table.acknowledge_fault(fault_id, by=_who(who, doc)))
        return {"journal_seq": entry.seq}

    @app.post("/api/shoe/reshuffle")
    async def reshuffle(request: Request) -> dict[str, Any]:
        who = role(request, "dealer")
        doc = await body(request)
        entry = table_call(lambda: rt.table.shoe_reshuffled(by=_who(who, doc)))
        if rt.sim is not None:  # the simulated dealer loads the simulated shoe too
            await off_loop(rt.sim.reshuffle)
        return {"journal_seq": entry.seq}

    # -- simulation only ------------------------------------------------------------------------

    def sim() -> SimControls:
        if rt.sim is None:
            raise ApiError(
                404,
                "no simulated shoe in this daemon: a live table has none, and a simulated table "
                "using an external `tablectl sim-shoe` is driven through that program",
            )
        return rt.sim

    async def off_loop(fn: Callable[[], Any]) -> Any:
        # The shoe's bytes come back through the reader, which needs this loop to journal them.
        return await asyncio.to_thread(fn)

    @app.post("/api/sim/shoe")
    async def sim_stack(request: Request) -> dict[str, Any]:
        role(request, "dealer")
        shoe = sim()
        doc = await body(request)
        texts = doc.get("cards")
        if not isinstance(texts, list) or not texts:
            raise ApiError(422, 'body.cards: a non-empty list of cards such as ["AS", "KD"]')
        try:
            cards = [parse_card(t) for t in texts]
        except CardError as exc:
            raise ApiError(422, f"body.cards: {exc}") from None
        await off_loop(lambda: shoe.stack(cards))
        return {"stacked": [str(c) for c in cards]}

    @app.post("/api/sim/draw")
    async def sim_draw(request: Request) -> dict[str, Any]:
        role(request, "dealer")
        shoe = sim()
        doc = await body(request)
        count = doc.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 52:
            raise ApiError(422, "body.count: a whole number of cards from 1 to 52")
        drawn = await off_loop(lambda: shoe.draw(count))
        return {"drawn": [str(c) for c in drawn]}

    @app.post("/api/sim/fault")
    async def sim_fault(request: Request) -> dict[str, Any]:
        role(request, "supervisor")
        shoe = sim()
        doc = await body(request)
        name = text_field(doc, "fault")
        on = doc.get("on", True)
        if not isinstance(on, bool):
            raise ApiError(422, "body.on: true or false")
        try:
            said = await off_loop(lambda: shoe.fault(name, on))
        except (ValueError, KeyError) as exc:
            raise ApiError(422, f"body.fault: {exc}") from None
        return {"fault": name, "on": on, "shoe": said}

    @app.get("/api/sim/pins")
    async def sim_pins() -> dict[str, Any]:
        if rt.sim_pins is None:
            raise ApiError(404, "a live table has real pins, not mock ones: there is no pin history to show")
        return {"pins": rt.sim_pins()}

    return app


def _who(role: str, doc: dict[str, Any]) -> str:
    """`role` or `role:name` when the caller names themselves (who, for the audit trail)."""
    name = doc.get("name")
    return f"{role}:{name.strip()}" if isinstance(name, str) and name.strip() else role


def _round_json(record: Any) -> dict[str, Any]:
    return {
        "round": record.number,
        "status": record.status,
        "opened_at": record.opened_at,
        "cards": record.cards,
        "settlement": record.settlement,
    }
