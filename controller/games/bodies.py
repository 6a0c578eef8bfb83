"""What every game's bodies share: strict pydantic models that refuse unknown keys, and the one
translation of their refusals into a round file's words (REPLAY.md).

A game's `api.py` holds ONE model per body: the opening of a round (POST /api/rounds), a decision
(POST /api/decisions), and its round file, which is the opening with the game, its rule options,
the cards and the decisions. `tablectl replay`, the table (`parse_round_file`, `parse_decision`)
and the API all read with them (the table and replay through the game's `plain.py` first, which
reads a body plainly right without pydantic: controller/games/plain.py). The models check shape
and types (strict: "10" is not a number of chips); the engine checks the rules (wager order,
limits, seats) and says which rule, so no rule is written twice.

The API answers a bad body with pydantic's own words (`controller/api/errors.py`); a round file
or a body the table reads is refused by `read` in REPLAY.md's words: one RuleError naming the
field, the seat and the rule. A field says how its refusal is worded with `Says` in its type:

    seat: Annotated[StrictInt, Says("must be a seat number 1 to 7, not {input!r}")]
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, TypeVar, get_args, get_origin

from pydantic import BaseModel, ConfigDict, PlainValidator, StringConstraints, ValidationError
from pydantic_core import PydanticCustomError

from controller.engine.base import RuleError
from controller.engine.cards import Card, CardError, parse_card

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]

ModelT = TypeVar("ModelT", bound=BaseModel)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: How a round file's refusal words a value that is not this object at all, where the type
    #: that holds it says nothing (`Says`): "must be an object with seat and action".
    not_an_object: ClassVar[str | None] = None


@dataclasses.dataclass(frozen=True)
class Says:
    """How a round file's refusal words a wrong value in the field whose type carries it.

    rule     the words for a wrong value, with `{input!r}` (the value) and `{key}` (the key of
             a dict's entry), or a function of the value giving them; None: pydantic's own
    missing  the words when the field is left out (`{input!r}` is None); None: "is required"
    seat     the key ("seat" or "spot") of the enclosing object whose number the refusal names
    seat_if_missing  whether a left-out field names that seat too
    whole    the refusal names the object holding the field, not the field
    """

    rule: str | Callable[[object], str] | None = None
    missing: str | None = None
    seat: str | None = None
    seat_if_missing: bool = True
    whole: bool = False


def _card(value: object) -> Card:
    try:
        return parse_card(value)  # type: ignore[arg-type]  # parse_card says what a non-text is
    except CardError as exc:
        raise PydanticCustomError("card", str(exc)) from None


#: A card as a round file writes it ("5H", "TD", "JK"), read in GAMES.md's notation.
CardText = Annotated[Card, PlainValidator(_card)]


def read(model: type[ModelT], doc: object, where: str = "") -> ModelT:
    """`doc` (parsed JSON) read by `model`, or RuleError in REPLAY.md's words: the field (under
    `where`, the body's own place: "decisions[2]"), the seat and the rule."""
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        raise refusal(exc, model, doc, where) from None


def refusal(exc: ValidationError, model: type[BaseModel], doc: object, where: str = "") -> RuleError:
    """The one refusal a round file's reader says for `exc`: the first problem in the order a
    reader meets them (an object's unknown keys, then its required keys, then its fields in
    order), worded as its field's `Says` asks."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    for candidate in errors:  # an object's unknown keys, then its left-out keys, come before its fields
        if _before(candidate, first, model):
            first = candidate
    loc = tuple(first["loc"])
    kind = first["type"]
    if kind == "extra_forbidden":
        owner = _walk(model, loc[:-1])
        allowed = sorted(owner.model.model_fields) if owner.model is not None else []
        return RuleError(
            f"unknown key {loc[-1]!r}; allowed keys are {allowed}", field=_path(where, loc[:-1]) or "round file"
        )
    found = _walk(model, loc)
    says = found.says or Says()
    missing = kind == "missing"
    value = None if missing else first.get("input")
    key = loc[-1] if loc else ""
    if missing:
        text = "is required" if says.missing is None else says.missing.format(input=value, key=key)
    elif callable(says.rule):
        text = says.rule(value)
    elif says.rule is not None:
        text = says.rule.format(input=value, key=key)
    else:
        text = str(first["msg"])
    seat = None
    if says.seat is not None and (says.seat_if_missing or not missing):
        seat = _seat(doc, found.models, says.seat, loc)
    field = _path(where, loc[:-1] if says.whole else loc) or "round file"
    return RuleError(text, field=field, seat=seat, place=says.seat or "seat")


def _before(candidate: Mapping[str, Any], first: Mapping[str, Any], model: type[BaseModel]) -> bool:
    """Whether a reader meets `candidate` before `first`: an unknown key of an object holding
    `first` (the outer one first), or a plainly left-out key of it, meets it before its fields."""
    loc, first_loc = tuple(candidate["loc"]), tuple(first["loc"])
    if candidate["type"] == "extra_forbidden":
        owner = loc[:-1]
        if first["type"] == "extra_forbidden":  # the outer object's first, then in the order of their names
            if owner == first_loc[:-1]:
                return str(loc[-1]) < str(first_loc[-1])
            return len(owner) < len(first_loc) - 1 and first_loc[: len(owner)] == owner
        return first_loc[: len(owner)] == owner
    if candidate["type"] == "missing" and first["type"] not in ("extra_forbidden", "missing"):
        owner = loc[:-1]
        says = _walk(model, loc).says
        plain = says is None or says.missing is None
        return plain and first_loc[: len(owner)] == owner and first_loc != loc
    return False


@dataclasses.dataclass
class _Found:
    models: list[tuple[int, type[BaseModel]]]  # the models along the way, at their depth in loc
    says: Says | None = None
    model: type[BaseModel] | None = None  # the model at the end of the way, if it ends at one


def _walk(model: type[BaseModel], loc: Sequence[int | str]) -> _Found:
    """The models met along `loc` in `model`'s types, and the `Says` of the field at its end."""
    found = _Found(models=[])
    tp: Any = model
    says: Says | None = None
    for depth, part in enumerate(loc):
        tp, says = _unwrap(tp, says)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            found.models.append((depth, tp))
            field = tp.model_fields.get(part) if isinstance(part, str) else None
            if field is None:
                return found
            tp = field.annotation
            says = next((m for m in field.metadata if isinstance(m, Says)), None)
        elif get_origin(tp) is list and isinstance(part, int):
            tp, says = get_args(tp)[0], None
        elif get_origin(tp) is dict and isinstance(part, str):
            tp, says = get_args(tp)[1], None
        else:
            return found
    tp, found.says = _unwrap(tp, says)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        found.model = tp
        shape = getattr(tp, "not_an_object", None)
        if found.says is None and shape is not None:
            found.says = Says(shape)
    return found


def _unwrap(tp: Any, says: Says | None) -> tuple[Any, Says | None]:
    """`tp` without its Annotated metadata (keeping the outermost `Says`) and without None."""
    while True:
        if get_origin(tp) is Annotated:
            tp, *meta = get_args(tp)
            says = says or next((m for m in meta if isinstance(m, Says)), None)
        elif get_origin(tp) in (typing.Union, types.UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp, says
            tp = members[0]
        else:
            return tp, says


def _seat(doc: object, models: list[tuple[int, type[BaseModel]]], key: str, loc: Sequence[int | str]) -> int | None:
    """The number under `key` of the innermost model object enclosing the field at `loc` that
    has one (a whole number), or None."""
    for depth, model in reversed(models):
        if key not in model.model_fields or tuple(loc) == (*loc[:depth], key):
            continue
        node: Any = doc
        for part in loc[:depth]:
            node = node[part]
        value = node.get(key) if isinstance(node, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _path(where: str, loc: Sequence[int | str]) -> str:
    """A field as a round file's refusal names it: seats[0].wagers.first."""
    out = where
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
