"""The overhead camera: what it sees and proposes, opening from its proposal, recalibration."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import Field, StrictInt

from controller.api.deps import Caller, Rt, journal_access
from controller.api.errors import ApiError, body_schema, optional
from controller.api.models import RecalibrateBody
from controller.api.routes import table_call, who
from controller.games.bodies import Body

router = APIRouter(prefix="/api")


class FromCameraBody(Body):
    """The dealer confirms the camera's proposal: `scene_seq` is the view the dealer looked at."""

    scene_seq: StrictInt | None = None
    name: str | None = Field(default=None, max_length=40)


@router.post("/rounds/from-camera", status_code=201, openapi_extra=body_schema(FromCameraBody, required=False))
async def open_from_camera(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    """Open the round the camera proposes (`camera.proposal` in the state), as confirmed."""
    body = await optional(request, FromCameraBody)
    seq = body.scene_seq if body else None
    number = await table_call(rt, "open_from_camera", by=who(role, body), scene_seq=seq)
    return {"round": number}


@router.get("/camera")
async def camera(rt: Rt, role: Caller) -> dict[str, Any]:
    """What the overhead camera sees and proposes, and the camera device's own status."""
    device = (await rt.snapshot(role))["devices"].get("camera")
    view: dict[str, Any] | None = await table_call(rt, "camera", device, role)
    if view is None:
        raise ApiError("not-found", "this table has no overhead camera ([camera] in the configuration)")
    return view


@router.post("/camera/recalibrate", status_code=202, openapi_extra=body_schema(RecalibrateBody, required=False))
async def recalibrate(request: Request, rt: Rt, role: Caller) -> dict[str, Any]:
    body = await optional(request, RecalibrateBody)
    if "recalibrate" not in rt.gate.controls:
        raise ApiError("not-found", "this table has no overhead camera to recalibrate")
    reason = body.reason if body and body.reason else ""
    await journal_access(rt, {"by": who(role, body), "reason": reason}, "camera-recalibrated")
    await rt.gate.control("recalibrate")
    return {"message": "the camera calibrates from its next frame; watch camera.status"}
