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


#: The error body every refusal has, and the refusals every route may answer (for the schema).
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error", "kind"],
    "properties": {
        "error": {"type": "string"},
        "kind": {"type": "string", "enum": list(STATUS)},
        "field": {"type": "string"},
        "seat": {"type": "integer"},
    },
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": kind, "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    for kind, status in STATUS.items()
}


async def validated(request: Request, model: type[ModelT]) -> ModelT:
    """The request's JSON body checked against `model`; a 422 naming the field if it is wrong.
    Routes read their body with this after the caller's role is checked (a body param would be
    parsed by FastAPI first), and declare it with `body_schema` so the OpenAPI schema shows it."""
    try:
        return model.model_validate_json(await request.body())
    except ValidationError as exc:
        raw = exc.errors()
        errors = [{**e, "loc": ("body", *e.get("loc", ()))} if e.get("type") != "json_invalid" else e for e in raw]
        # The body's field the first problem is in (a key it does not know: the object holding it).
        first: tuple[Any, ...] = tuple(raw[0]["loc"]) if raw and raw[0].get("type") != "json_invalid" else ()
        if raw and raw[0].get("type") == "extra_forbidden":
            first = first[:-1]
        raise ApiError("invalid", "; ".join(problem(e) for e in errors), field=_where(first) if first else "") from None


async def optional(request: Request, model: type[ModelT]) -> ModelT | None:
    """As `validated`, for a route whose body may be left out (no body, or an empty one)."""
    if not (await request.body()).strip():
        return None
    return await validated(request, model)


def body_schema(model: type[BaseModel] | None, *, required: bool = True) -> dict[str, Any]:
    """`openapi_extra` for a route that reads `model` with `validated` / `optional`: filled when
    the OpenAPI document is first written (`fill_body_schemas`, app.py's `openapi`), not as the
    routes are defined: a model's JSON schema costs a third of a millisecond, 17 of them on every
    start of the API's process (issue 35 point 3), for a document only /api/openapi.json serves.
    FastAPI keeps this very dict as the route's `openapi_extra` (tests/controller/test_openapi_deferred.py:
    the document the same byte for byte)."""
    extra: dict[str, Any] = {}
    if model is not None:
        _UNFILLED.append((extra, model, required))
    return extra


#: The routes' `openapi_extra` not filled yet, with the model and whether the body is required.
_UNFILLED: list[tuple[dict[str, Any], type[BaseModel], bool]] = []


def fill_body_schemas() -> None:
    """Each `body_schema` made so far filled with its model's schema (before the routes' OpenAPI
    document is written)."""
    while _UNFILLED:
        extra, model, required = _UNFILLED.pop(0)
        extra.update(request_body(model, required=required))


def request_body(model: type[BaseModel] | None, *, required: bool = True) -> dict[str, Any]:
    """An operation's `requestBody` for `model` (none for None), written now."""
    if model is None:
        return {}
    schema = _inline(model.model_json_schema())
    return {"requestBody": {"required": required, "content": {"application/json": {"schema": schema}}}}


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """A pydantic schema with its `$defs` put in place, so it stands alone in the OpenAPI document."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(dict(defs[ref.removeprefix("#/$defs/")]))
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out: dict[str, Any] = walk(schema)
    return out


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
    if kind == "int_parsing_size":  # more digits than Python reads (4300): not worth quoting
        return f"{_where(loc)}: must be a whole number, not one {len(str(error.get('input', '')))} digits long"
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
