"""The API's routers, one per concern: session, reads, play, camera, simulation, live feed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from controller.api.errors import ApiError
from controller.table import TableError

T = TypeVar("T")


def table_call(fn: Callable[[], T]) -> T:
    """Run a table input; a refusal becomes the API error of its kind."""
    try:
        return fn()
    except TableError as exc:
        raise ApiError.of_table(exc) from None


def who(role: str, body: BaseModel | None) -> str:
    """`role` or `role:name` when the caller names themselves (who, for the audit trail)."""
    name = getattr(body, "name", None) if body is not None else None
    return f"{role}:{name}" if name else role
