"""The installed software: its authentication on demand (supervisor and surveillance)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from controller.api.deps import Caller, Rt
from controller.api.errors import ApiError, body_schema, optional, validated
from controller.api.models import AcceptConfigBody, VerifyBody
from controller.api.routes import table_call, who

router = APIRouter(prefix="/api")


@router.post("/verify", openapi_extra=body_schema(VerifyBody, required=False))
async def verify(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """Authenticate the installed software now (every file against the signed manifest), with the
    program's HMAC-SHA256 under `seed` when one is given; journaled whatever its result (a failure
    stops play until a check passes). The answer is the report and the entry's `seq`."""
    body = await optional(request, VerifyBody)
    if "authenticate" not in rt.gate.controls:
        raise ApiError("not-found", "this table was started without software authentication")
    seed = bytes.fromhex(body.seed) if body is not None and body.seed else None
    report = await rt.gate.control("authenticate", seed)  # hashing every file: on neither loop
    by = who(role, body)
    entry = await table_call(rt, "software_check", report.to_json(), "on demand by the API", by=by)
    return {**report.to_json(), "seq": entry.seq}


@router.post("/config/accept", openapi_extra=body_schema(AcceptConfigBody))
async def accept_config(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """The supervisor accepts the configuration file as it is now (after a change the software check
    failed on): journaled with its digest and the reason; the check runs again and is journaled."""
    body = await validated(request, AcceptConfigBody)
    if "authenticate" not in rt.gate.controls:
        raise ApiError("not-found", "this table was started without software authentication")
    by = who(role, body)
    accepted = await table_call(rt, "accept_config", by, body.reason)
    report = await rt.gate.control("authenticate", None)
    entry = await table_call(rt, "software_check", report.to_json(), "after the configuration was accepted", by=by)
    return {"accepted": accepted, "check": {**report.to_json(), "seq": entry.seq}}
