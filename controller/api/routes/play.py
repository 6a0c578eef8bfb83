"""The dealer's and the supervisor's actions: open a round, decide, confirm, void, clear faults."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request

from controller.api.deps import Dealer, Rt, Supervisor
from controller.api.errors import ApiError, validated
from controller.api.models import ClearFaultBody, VoidBody, WhoBody
from controller.api.routes import table_call, who

router = APIRouter(prefix="/api")


@router.post("/rounds", status_code=201)
async def open_round(request: Request, rt: Rt, role: Dealer) -> dict[str, Any]:
    """Open a round with the game's opening body (Grand Slam: seats and blind_seat; Jokers 22:
    banker and spots; Baseball poker: players), as a round file opens one."""
    body = await validated(request, rt.table.adapter.opening_model())
    number = table_call(lambda: rt.table.open_round(body.model_dump(exclude_none=True), by=role))
    return {"round": number}


@router.post("/decisions")
async def decide(request: Request, rt: Rt, role: Dealer) -> dict[str, Any]:
    """A player's choice, in the form the game's round files write it."""
    from controller.view import prompt

    model = rt.table.adapter.decision_model()
    if model is None:
        raise ApiError("conflict", f"{rt.table.adapter.title} has no decisions: the cards decide every round")
    body = await validated(request, model)
    entry = table_call(lambda: rt.table.decide(body.model_dump(exclude_none=True), by=role))
    return {"journal_seq": entry.seq, "prompt": prompt(rt.table)}


@router.post("/confirm")
async def confirm(rt: Rt, role: Dealer, body: WhoBody | None = None) -> dict[str, Any]:
    from controller.view import prompt

    entry = table_call(lambda: rt.table.button("confirm", by=who(role, body)))
    return {"journal_seq": entry.seq, "prompt": prompt(rt.table)}


@router.post("/rounds/current/void")
async def void(body: VoidBody, rt: Rt, role: Supervisor) -> dict[str, Any]:
    entry = table_call(lambda: rt.table.void(by=who(role, body), reason=body.reason))
    return {"journal_seq": entry.seq, "round": entry.round}


@router.post("/faults/{fault_id}/clear")
async def clear_fault(fault_id: int, body: ClearFaultBody, rt: Rt, role: Supervisor) -> dict[str, Any]:
    entry = table_call(
        lambda: rt.table.clear_fault(fault_id, body.action, by=who(role, body), reason=body.reason, card=body.card)
    )
    return {"journal_seq": entry.seq}


@router.post("/faults/{fault_id}/acknowledge")
async def acknowledge(fault_id: int, rt: Rt, role: Dealer, body: WhoBody | None = None) -> dict[str, Any]:
    entry = table_call(lambda: rt.table.acknowledge_fault(fault_id, by=who(role, body)))
    return {"journal_seq": entry.seq}


@router.post("/shoe/reshuffle")
async def reshuffle(rt: Rt, role: Dealer, body: WhoBody | None = None) -> dict[str, Any]:
    entry = table_call(lambda: rt.table.shoe_reshuffled(by=who(role, body)))
    if rt.sim is not None:  # the simulated dealer loads the simulated shoe too
        await asyncio.to_thread(rt.sim.reshuffle)
    return {"journal_seq": entry.seq}
