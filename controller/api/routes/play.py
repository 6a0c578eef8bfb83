"""The dealer's and the supervisor's actions: open a round, decide, confirm, void, clear faults.

Each route reads its body after the caller's role is checked (`validated` / `optional`), so a
caller without the role gets 401 or 403 whatever the body; `body_schema` keeps the OpenAPI
schema saying what the body is. The bodies that open a round and take a decision are the
game's: the app fills in their schema (`GAME_BODIES`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from controller.api.deps import Caller, Rt
from controller.api.errors import ApiError, body_schema, optional, validated
from controller.api.models import ClearFaultBody, VoidBody, WhoBody
from controller.api.routes import table_call, who
from controller.games.base import GameAdapter

router = APIRouter(prefix="/api")

#: The routes whose body is the game's own: path -> the game's model of it (POST).
GAME_BODIES: dict[str, Callable[[GameAdapter], type[BaseModel] | None]] = {
    "/api/rounds": lambda game: game.opening_model(),
    "/api/decisions": lambda game: game.decision_model(),
}


@router.post("/rounds", status_code=201)
async def open_round(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """Open a round with the game's opening body (Grand Slam: seats and blind_seat; Jokers 22:
    banker and spots; Baseball poker: players), as a round file opens one."""
    body = await validated(request, rt.gate.adapter.opening_model())
    number = await table_call(rt, "open_round", body.model_dump(exclude_none=True), by=role)
    return {"round": number}


@router.post("/decisions")
async def decide(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """A player's choice, in the form the game's round files write it."""
    model = rt.gate.adapter.decision_model()
    if model is None:
        raise ApiError("conflict", f"{rt.gate.adapter.title} has no decisions: the cards decide every round")
    body = await validated(request, model)
    choice = body.model_dump(exclude_none=True)
    result: dict[str, Any] = await table_call(rt, "decide", choice, role=role)
    return result


@router.post("/confirm", openapi_extra=body_schema(WhoBody, required=False))
async def confirm(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    body = await optional(request, WhoBody)
    by = who(role, body)
    result: dict[str, Any] = await table_call(rt, "confirm", by=by, role=role)
    return result


@router.post("/rounds/current/void", openapi_extra=body_schema(VoidBody))
async def void(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    body = await validated(request, VoidBody)
    entry = await table_call(rt, "void", by=who(role, body), reason=body.reason)
    return {"journal_seq": entry.seq, "round": entry.round}


@router.post("/rounds/current/override-payouts", openapi_extra=body_schema(VoidBody))
async def override_payouts(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """A supervisor lets the next round open although the last round's payouts were not
    confirmed (journaled with who and why; recall and the meters keep that round not paid)."""
    body = await validated(request, VoidBody)
    entry = await table_call(rt, "override_payouts", by=who(role, body), reason=body.reason)
    return {"journal_seq": entry.seq, "round": entry.round}


@router.post("/faults/{fault_id}/clear", openapi_extra=body_schema(ClearFaultBody))
async def clear_fault(fault_id: int, request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    body = await validated(request, ClearFaultBody)
    by = who(role, body)
    entry = await table_call(
        rt, "clear_fault", fault_id, body.action, by=by, reason=body.reason, card=body.card
    )
    return {"journal_seq": entry.seq}


@router.post("/faults/{fault_id}/acknowledge", openapi_extra=body_schema(WhoBody, required=False))
async def acknowledge(fault_id: int, request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    body = await optional(request, WhoBody)
    entry = await table_call(rt, "acknowledge_fault", fault_id, by=who(role, body))
    return {"journal_seq": entry.seq}


@router.post("/shoe/reshuffle", openapi_extra=body_schema(WhoBody, required=False))
async def reshuffle(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """A freshly shuffled shoe is loaded: between rounds, or mid-round once the shoe is empty."""
    body = await optional(request, WhoBody)
    # A simulated shoe is loaded by the simulated dealer as the table counts it (daemon.SimShoeControls).
    entry = await table_call(rt, "shoe_reshuffled", by=who(role, body))
    return {"journal_seq": entry.seq}
