"""Errors of the API: JSON `{"error": "...", "kind": ...}` in plain words, with a status code
from the error's kind, never from its words.

    401 unauthenticated   no or wrong credentials
    403 forbidden         the wrong role, or a screen's request without X-Tablectl
    404 not-found         no such thing
    409 conflict          not now (the wrong phase, play stopped by a fault)
    422 invalid           the body is wrong (`field` and `seat` name where, when the rules do)
    429 rate-limited      too many failed logins
    503 unavailable       the journal cannot be written (a full or failing disk): nothing is taken
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from controller.table import TableError

ModelT = TypeVar("ModelT", bound=BaseModel)

STATUS = {
    "unauthenticated": 401,
    "forbidden": 403,
    "not-found": 404,
    "conflict": 409,
    "invalid": 422,
    "rate-limited": 429,
    "unavailable": 503,
}


class ApiError(Exception):
    """An error the API answers with: its kind (the status code), the words, where."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        field: str = "",
        seat: int | None = None,
    ) -> None:
        super().__init__(message)
        if kind not in STATUS:
            raise ValueError(f"unknown API error kind {kind!r}")
        self.kind = kind
        self.status = STATUS[kind]
        self.message = message
        self.headers = headers
        self.field = field
        self.seat = seat

    @classmethod
    def of_table(cls, exc: TableError) -> ApiError:
        return cls(exc.kind, str(exc), field=exc.field, seat=exc.seat)

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"error": self.message, "kind": self.kind}
        if self.field:
            out["field"] = self.field
        if self.seat is not None:
            out["seat"] = self.seat
        return out


async def validated(request: Request, model: type[ModelT]) -> ModelT:
    """The request's JSON body checked against `model`; a 422 naming the field if it is wrong."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        errors = [
            {**e, "loc": ("body", *e.get("loc", ()))} if e.get("type") != "json_invalid" else e for e in exc.errors()
        ]
        raise ApiError("invalid", "; ".join(problem(e) for e in errors)) from None


def problem(error: Any) -> str:
    """One pydantic error as the field and the rule, in the words the rest of the API uses."""
    loc = tuple(error.get("loc", ()))
    kind = error.get("type", "")
    if kind == "json_invalid":
        return f"body: not valid JSON: {error.get('ctx', {}).get('error', 'cannot be read')}"
    if kind == "extra_forbidden":
        return f"{_where(loc[:-1])}: unknown key {loc[-1]!r}"
    if kind == "missing":
        return f"{_where(loc)}: is required"
    if kind == "too_short":
        ctx = error.get("ctx", {})
        return f"{_where(loc)}: at least {ctx.get('min_length')} needed, not {ctx.get('actual_length')}"
    if kind in ("int_type", "int_parsing"):
        return f"{_where(loc)}: must be a whole number, not {error.get('input')!r}"
    return f"{_where(loc)}: {error.get('msg', 'is not valid')}"


def _where(loc: Any) -> str:
    """pydantic's error location as the field a person reads: body.seats[0].wagers.first."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "body"
