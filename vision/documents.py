"""The one validator of the documents an operator writes: table.toml (with its [floor] section),
the pin maps and the table layouts.

Each document is a pydantic model of `Document`s (unknown keys refused, nothing coerced); each
field says what it accepts with the checks below, and cross-field rules are model validators.
`check` reads a parsed TOML document into its model, and a refusal is one line that names the
file and the key, in the words the rest of tablectl uses:

    /etc/tablectl/table.toml: http.port: must be a whole number from 1 to 65535, not 70000

It lives at the bottom of tablectl's layers (docs/architecture.md): vision's layouts use it, the
drivers' pin maps (drivers import vision) and the controller's table.toml too, and it imports
nothing of ours: it knows no game, device or file, only pydantic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

M = TypeVar("M", bound=BaseModel)


class Document(BaseModel):
    """A part of an operator's document: unknown keys are refused, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def problem(why: str) -> PydanticCustomError:
    """A refusal in tablectl's words: `why` follows the key (it starts with ": " or " = ")."""
    return PydanticCustomError("tablectl", "{why}", {"why": why})


def rule(check: Callable[[Any], Any]) -> Any:
    """A field checked by `check(value) -> value`, which raises `problem(...)` to refuse it."""
    return BeforeValidator(check)


def one_of(allowed: Sequence[Any]) -> Any:
    """Exactly one of `allowed` (a TOML boolean is never a number)."""

    def check(value: Any) -> Any:
        if isinstance(value, bool) or value not in allowed:
            raise problem(f": must be one of {', '.join(map(str, allowed))}, not {value!r}")
        return value

    return rule(check)


def number(low: float, high: float, *, whole: bool = False) -> Any:
    """A number from `low` to `high` (a whole number with `whole`)."""

    def check(value: Any) -> Any:
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            kind = "a whole number" if whole else "a number"
            raise problem(f": must be {kind} from {low:g} to {high:g}, not {value!r}")
        return value if whole else float(value)

    return rule(check)


def _text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        raise problem(f": must be non-empty text, not {value!r}")
    return value


#: Non-empty text.
Text = Annotated[str, rule(_text)]


class Style:
    """How a document names a key and says what is unknown or missing (the config's way)."""

    def where(self, loc: Sequence[str | int]) -> str:
        return ".".join(str(part) for part in loc)

    def unknown(self, loc: Sequence[str | int], allowed: Sequence[str]) -> str:
        what = "section" if len(loc) == 1 else "key"
        return f"{self.where(loc)}: unknown {what}; the {what}s are {sorted(allowed)}"

    def missing(self, loc: Sequence[str | int]) -> str:
        return f"{self.where(loc)}: is required"

    def other(self, loc: Sequence[str | int], message: str, value: Any) -> str:
        return f"{self.where(loc)}: {message}, not {value!r}"


def check(model: type[M], doc: Any, source: str, error: type[Exception], style: Style | None = None) -> M:
    """`doc` read into `model`, or `error("SOURCE: KEY...: WHY")` for its first problem."""
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        raise error(f"{source}: {explain(model, exc, style or Style())}") from None


def explain(model: type[BaseModel], exc: ValidationError, style: Style) -> str:
    """The first problem of a refused document, as the key and the rule."""
    first = exc.errors(include_url=False)[0]
    loc = tuple(first.get("loc", ()))
    kind = first.get("type", "")
    if kind == "tablectl":
        return f"{style.where(loc)}{first['ctx']['why']}"
    if kind == "extra_forbidden":
        return style.unknown(loc, _fields_at(model, loc[:-1]))
    if kind == "missing":
        return style.missing(loc)
    return style.other(loc, str(first.get("msg", "is not valid")), first.get("input"))


def _fields_at(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys the model allows at `loc` (where a key it does not know was found)."""
    current: Any = model
    for part in loc:
        fields = current.model_fields if isinstance(current, type) and issubclass(current, BaseModel) else {}
        field = fields.get(str(part))
        if field is None:
            return []
        current = _model_of(field.annotation)
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return []
    return [f.alias or name for name, f in current.model_fields.items()]


def _model_of(annotation: Any) -> Any:
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None
