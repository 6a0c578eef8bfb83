"""Reading the table: health, state, meters, devices, recall, audit, configuration.

Who may read which is the access table's (`controller/api/access.py`); what the dealer sees of
the table and of recall passes through `controller.table.visibility` (no face-down card of a live hand,
a finished hand as the rules show it)."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as dist_version
from typing import Any

from fastapi import APIRouter, Response

from controller.api.deps import Anyone, Caller, Rt
from controller.api.errors import ApiError
from controller.api.routes import table_call
from controller.api.screens import game_screen
from controller.engine.base import RuleError, to_json
from controller.games.replay import replay_steps
from controller.table.visibility import SEES_EVERY_CARD

router = APIRouter(prefix="/api")

#: Answers of GET /api/rounds kept until the table changes (by how many rounds and whose sight).
RECALLS_KEPT = 8


@cache
def installed_version() -> str:
    """tablectl's installed version (the release install.sh waits for after an upgrade)."""
    try:
        return dist_version("tablectl")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


@router.get("/health")
async def health(rt: Rt, role: Anyone) -> dict[str, Any]:
    """Whether the table is up; the rest (game, table, journal, version) only to a caller with a role."""
    view = await rt.gate.view()
    status = "fault" if view.blocked else "ok"
    if role is None:
        return {"status": status}
    return {
        "status": status,
        "simulated": rt.gate.simulated,
        "game": rt.gate.game_name,
        "table": rt.gate.table_id,
        "journal_seq": view.seq,
        "version": installed_version(),
        "message": "SIMULATED table" if rt.gate.simulated else "live table",
    }


@router.get("/state", response_model=dict[str, Any])
async def state(rt: Rt, role: Caller) -> Response:
    """The table as `role` sees it (encoded once per change of the table, however many ask)."""
    return Response(await rt.snapshot_json(role), media_type="application/json")


@router.get("/game")
async def game(rt: Rt, _: Caller) -> dict[str, Any]:
    """What the screens load of the table's game: its screen files (`screen`: the URL of its
    module, styles and opening form, or null where its package ships none) and the JSON schemas
    of its opening and decision bodies (controller/api/screens.py)."""
    return game_screen(rt.gate.adapter)


@router.get("/meters")
async def meters(rt: Rt, _: Caller) -> dict[str, Any]:
    view = await rt.gate.view()
    return {"game": rt.gate.game_name, "simulated": rt.gate.simulated, **view.meters}


@router.get("/devices")
async def devices(rt: Rt, role: Caller) -> dict[str, Any]:
    out: dict[str, Any] = dict((await rt.snapshot(role))["devices"])
    out.setdefault("camera", {"installed": False, "message": "no overhead camera in the configuration"})
    return out


@router.get("/rounds")
async def recall(rt: Rt, role: Caller, last: int = 10) -> dict[str, Any]:
    if not 1 <= last <= 1000:
        raise ApiError("invalid", "last: a whole number from 1 to 1000", field="last")

    everything = role in SEES_EVERY_CARD
    # The last rounds change only when the table does: asked for again before it changes, they are
    # answered from what the table said last (however many screens poll, one job a change).
    version = (await rt.gate.view()).version
    kept = rt.recalls.get((last, everything))
    if kept is not None and kept[0] == version:
        return kept[1]
    answer = {"rounds": rt.gate.unmasked(await table_call(rt, "recalled", None, last, everything))}
    rt.recalls.pop((last, everything), None)
    rt.recalls[(last, everything)] = (version, answer)
    while len(rt.recalls) > RECALLS_KEPT:
        del rt.recalls[next(iter(rt.recalls))]
    return answer


@router.get("/rounds/{number}")
async def get_round(number: int, rt: Rt, role: Caller) -> dict[str, Any]:
    everything = role in SEES_EVERY_CARD
    # A round the table does not have: "no such round" in the table's words.
    return rt.gate.unmasked(await table_call(rt, "recalled", [number], 0, everything, check=True))[0]


@router.get("/rounds/{number}/file")
async def round_file(number: int, rt: Rt, _: Caller) -> Any:
    return await table_call(rt, "round_file", number)


@router.get("/rounds/{number}/replay")
async def round_replay(number: int, rt: Rt, _: Caller) -> dict[str, Any]:
    doc = await table_call(rt, "round_file", number)
    try:
        game, steps = replay_steps(doc)
    except RuleError as exc:  # the journal's own round file should always replay
        raise ApiError("conflict", f"round {number} does not replay: {exc}") from None
    return {
        "round": number,
        "steps": [
            {
                "card": str(step.card) if step.card else None,
                "state": to_json(step.state),
                "effects": [to_json(e) for e in step.effects],
                "prompt": game.step_prompt(step.awaiting),
            }
            for step in steps
        ],
    }


@router.get("/audit")
async def audit(rt: Rt, _: Caller, last: int = 100) -> dict[str, Any]:
    if not 1 <= last <= 10000:
        raise ApiError("invalid", "last: a whole number from 1 to 10000", field="last")
    return {"audit": await table_call(rt, "audit", last)}


@router.get("/config")
async def config(rt: Rt, _: Caller) -> dict[str, Any]:
    return rt.config_view
