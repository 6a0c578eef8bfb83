"""Simulation only: stack and pull cards through the simulated shoe, inject its faults, move the
simulated camera's chips, read the mock pins' histories."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fastapi import APIRouter, Request

from controller.api.deps import Caller, Rt
from controller.api.errors import ApiError, body_schema, optional, validated
from controller.api.models import SimDrawBody, SimFaultBody, SimShoeBody
from controller.api.routes import table_call
from controller.engine.cards import CardError, parse_card

router = APIRouter(prefix="/api/sim")


def _shoe(rt: Rt) -> None:
    if "sim_draw" not in rt.gate.controls:
        raise ApiError(
            "not-found",
            "no simulated shoe in this daemon: a live table has none, and a simulated table "
            "using an external `tablectl sim-shoe` is driven through that program",
        )


@router.post("/shoe", openapi_extra=body_schema(SimShoeBody))
async def sim_stack(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """Put `cards` on top of the simulated shoe, the first to come out first. Only cards this
    table's shoe can hold, as many as it holds, unless `"impossible": true` (a test of the fault)."""
    body = await validated(request, SimShoeBody)
    _shoe(rt)
    try:
        cards = [parse_card(t) for t in body.cards]
    except CardError as exc:
        raise ApiError("invalid", f"body.cards: {exc}", field="cards") from None
    composition = await table_call(rt, "shoe_composition")
    if not body.impossible:
        for card, count in Counter(cards).items():
            holds = composition.count(card)
            if count > holds:
                raise ApiError(
                    "invalid",
                    f"body.cards: {card} cannot come from the {composition.describe()} (it holds {holds}, not "
                    f'{count}); to test the impossible-card fault, send "impossible": true',
                    field="cards",
                )
    # Off the loops: the shoe's bytes come back through the reader, which needs the table's loop.
    await rt.gate.control("sim_stack", cards)
    return {"stacked": [str(c) for c in cards]}


@router.post("/draw", openapi_extra=body_schema(SimDrawBody, required=False))
async def sim_draw(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """Pull `count` cards through the simulated shoe; the answer shows what the caller may see."""
    body = await optional(request, SimDrawBody)
    _shoe(rt)
    count = body.count if body else 1
    # The round as it stands before the draw: where each card goes is judged from it.
    state, stopped = await table_call(rt, "round_as_it_stands")
    drawn = [str(c) for c in await rt.gate.control("sim_draw", count)]
    if not drawn:
        raise ApiError(
            "conflict",
            "The simulated shoe is empty: nothing came out. Load a new shoe (New shoe on the dealer screen, or "
            "POST /api/shoe/reshuffle); the simulated dealer fills it as the table counts it",
        )
    # The dealer learns no card that goes face down, even by drawing it here.
    return {"drawn": await table_call(rt, "drawn", role, drawn, state, stopped)}


@router.post("/fault", openapi_extra=body_schema(SimFaultBody))
async def sim_fault(request: Request, rt: Rt, _: Caller) -> dict[str, Any]:
    body = await validated(request, SimFaultBody)
    _shoe(rt)
    said = await rt.gate.control("sim_fault", body.fault, body.on)
    return {"fault": body.fault, "on": body.on, "shoe": said}


@router.post("/scene")
async def sim_scene(request: Request, rt: Rt, _: Caller) -> dict[str, Any]:
    """Change what the simulated camera sees, as a player's or a dealer's hands would:
    {"zones": {"seat3.first": [25, 25], "seat3.second": []}, "pucks": {"blind": "seat4.puck"},
    "hands": [{"over": "seat2.first"}], "bump": true}."""
    if "sim_scene" not in rt.gate.controls:
        raise ApiError("not-found", "no simulated camera in this daemon: add [camera] to a --sim table's configuration")
    try:
        body = json.loads(await request.body() or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError("invalid", f"body: not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError("invalid", 'body: an object such as {"zones": {"seat3.first": [25]}}')
    try:
        changed: dict[str, Any] = await rt.gate.control("sim_scene", body)
        return changed
    except ValueError as exc:
        raise ApiError("invalid", str(exc)) from None


@router.get("/pins")
async def sim_pins(rt: Rt, _: Caller) -> dict[str, Any]:
    if "sim_pins" not in rt.gate.controls:
        raise ApiError("not-found", "a live table has real pins, not mock ones: there is no pin history to show")
    return {"pins": await rt.gate.control("sim_pins")}
