"""The API's routers, one per concern: session, reads, play, camera, simulation, live feed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from controller.api.errors import ApiError
from controller.api.gate import TableBusy
from controller.table import TableError

if TYPE_CHECKING:
    from controller.api.runtime import Runtime


async def table_call(rt: Runtime, command: str, *args: Any, **kwargs: Any) -> Any:
    """Run the table's `command` (controller/api/commands.py) on the table's loop (the only way a
    route reaches the table); a refusal becomes the API error of its kind, a full queue a 503 with
    Retry-After."""
    try:
        return await rt.gate.command(command, *args, **kwargs)
    except TableError as exc:
        raise ApiError.of_table(exc) from None
    except TableBusy as exc:
        raise ApiError("unavailable", str(exc), headers={"Retry-After": "1"}) from None


def who(role: str, body: BaseModel | None) -> str:
    """`role` or `role:name` when the caller names themselves (who, for the audit trail)."""
    name = getattr(body, "name", None) if body is not None else None
    return f"{role}:{name}" if name else role
