"""Simulation only: stack and pull cards through the simulated shoe, inject its faults, move the
simulated camera's chips, read the mock pins' histories."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fastapi import APIRouter, Request

from controller.api.deps import Dealer, Rt, Supervisor
from controller.api.errors import ApiError
from controller.api.models import SimDrawBody, SimFaultBody, SimShoeBody
from controller.api.runtime import SimControls
from controller.engine.cards import CardError, parse_card

router = APIRouter(prefix="/api/sim")


def _shoe(rt: Rt) -> SimControls:
    if rt.sim is None:
        raise ApiError(
            "not-found",
            "no simulated shoe in this daemon: a live table has none, and a simulated table "
            "using an external `tablectl sim-shoe` is driven through that program",
        )
    return rt.sim


@router.post("/shoe")
async def sim_stack(body: SimShoeBody, rt: Rt, _: Dealer) -> dict[str, Any]:
    shoe = _shoe(rt)
    try:
        cards = [parse_card(t) for t in body.cards]
    except CardError as exc:
        raise ApiError("invalid", f"body.cards: {exc}", field="cards") from None
    # Off the loop: the shoe's bytes come back through the reader, which needs this loop.
    await asyncio.to_thread(shoe.stack, cards)
    return {"stacked": [str(c) for c in cards]}


@router.post("/draw")
async def sim_draw(rt: Rt, _: Dealer, body: SimDrawBody | None = None) -> dict[str, Any]:
    shoe = _shoe(rt)
    count = body.count if body else 1
    drawn = await asyncio.to_thread(shoe.draw, count)
    return {"drawn": [str(c) for c in drawn]}


@router.post("/fault")
async def sim_fault(body: SimFaultBody, rt: Rt, _: Supervisor) -> dict[str, Any]:
    shoe = _shoe(rt)
    said = await asyncio.to_thread(shoe.fault, body.fault, body.on)
    return {"fault": body.fault, "on": body.on, "shoe": said}


@router.post("/scene")
async def sim_scene(request: Request, rt: Rt, _: Dealer) -> dict[str, Any]:
    """Change what the simulated camera sees, as a player's or a dealer's hands would:
    {"zones": {"seat3.first": [25, 25], "seat3.second": []}, "pucks": {"blind": "seat4.puck"},
    "hands": [{"over": "seat2.first"}], "bump": true}."""
    if rt.sim_scene is None:
        raise ApiError("not-found", "no simulated camera in this daemon: add [camera] to a --sim table's configuration")
    try:
        body = json.loads(await request.body() or b"{}")
    except json.JSONDecodeError as exc:
        raise ApiError("invalid", f"body: not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ApiError("invalid", 'body: an object such as {"zones": {"seat3.first": [25]}}')
    try:
        return rt.sim_scene.change(body)
    except ValueError as exc:
        raise ApiError("invalid", str(exc)) from None


@router.get("/pins")
async def sim_pins(rt: Rt) -> dict[str, Any]:
    if rt.sim_pins is None:
        raise ApiError("not-found", "a live table has real pins, not mock ones: there is no pin history to show")
    return {"pins": rt.sim_pins()}
