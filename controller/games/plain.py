"""A game's bodies read without pydantic when every field in them is plainly right: what its
models (controller/games/<game>/api.py, controller/games/bodies.py) would give, or None to let
them read it.

The table reads a round file at every round's opening and a decision at every player's choice
(`parse_round_file`, `parse_decision`); with the models that loads pydantic (and builds them) in
the table's process, 4-5 MB of its memory (issue 35 point 5), only to find the body right. Here
each field is taken only when it is of the one kind the model takes without converting it (a
whole number that is an int, text that is a str with nothing to strip, a list that is a list, an
object with none but its model's keys), and taken as the model would take it; anything else gives
None, and the model reads the body and refuses it in REPLAY.md's words (bodies.py's `read`): every
refusal is the model's, none is made here. The engine's own checks (the rules, a decision's
action) are made after either reading, by the same code.

The tests (test_bodies_plain.py) hold each game's readers to its models: the same fields and
defaults, and at every field of a round file and a decision, values of every kind accepted here
only where the model accepts them, and read the same.

    GRAND_SLAM_FILE = Obj("GrandSlamRoundFile", {
        "seats": (list_of(SEAT), REQUIRED), "blind_seat": (optional(whole), None), ...})
    body = plain(GRAND_SLAM_FILE, doc)  # a namespace with the model's attributes, or None
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from controller.engine.cards import parse_card


class NotPlain(Exception):
    """A field not plainly right: the model reads the body."""


Read = Callable[[Any], Any]
#: A field the body must have (no default).
REQUIRED = object()
#: A field whose default is a new empty list (the model's `Field(default_factory=list)`).
NEW_LIST = object()


def whole(value: Any) -> int:
    """A StrictInt: an int, not a bool."""
    if type(value) is int:
        return value
    raise NotPlain


def text(value: Any) -> str:
    """A `str` field: text as it is."""
    if type(value) is str:
        return value
    raise NotPlain


def stripped(low: int, high: int) -> Read:
    """A `str` with StringConstraints(strip_whitespace=True, min_length=low, max_length=high):
    taken here only when there is nothing to strip (the model's stripping is left to it)."""

    def read(value: Any) -> str:
        if type(value) is str and value == value.strip() and low <= len(value) <= high:
            return value
        raise NotPlain

    read.bounds = (low, high)  # type: ignore[attr-defined]  # the test holds them to the model's
    return read


#: A player's name (bodies.py's `Name`).
name = stripped(1, 80)


def card(value: Any) -> Any:
    """A card as a round file writes it (bodies.py's `CardText`: the same `parse_card`)."""
    try:
        return parse_card(value)
    except Exception:  # the model says why it is not a card
        raise NotPlain from None


def optional(read: Read) -> Read:
    """`X | None`: None, or what `read` takes."""

    def read_optional(value: Any) -> Any:
        return None if value is None else read(value)

    read_optional.inner = read  # type: ignore[attr-defined]
    return read_optional


def list_of(read: Read) -> Read:
    """`list[X]`: a list, each item taken by `read`."""

    def read_list(value: Any) -> list[Any]:
        if type(value) is not list:
            raise NotPlain
        return [read(item) for item in value]

    read_list.inner = read  # type: ignore[attr-defined]
    return read_list


def dict_of(read: Read) -> Read:
    """`dict[str, X]`: an object of text keys, each value taken by `read` (`any_value`: as it is)."""

    def read_dict(value: Any) -> dict[str, Any]:
        if type(value) is not dict or any(type(key) is not str for key in value):
            raise NotPlain
        return {key: read(item) for key, item in value.items()}

    read_dict.inner = read  # type: ignore[attr-defined]
    return read_dict


def any_value(value: Any) -> Any:
    """`Any`: the value as it is."""
    return value


class Obj:
    """A model (a `Body`: unknown keys refused): its fields in order, each its reader and its
    default (REQUIRED, NEW_LIST, or the value). Read, a namespace with the model's attributes."""

    def __init__(self, model: str, fields: Mapping[str, tuple[Read, Any]]) -> None:
        self.model = model
        self.fields = dict(fields)

    def __call__(self, value: Any) -> SimpleNamespace:
        if type(value) is not dict or any(key not in self.fields for key in value):
            raise NotPlain
        out = {}
        for key, (read, default) in self.fields.items():
            if key in value:
                out[key] = read(value[key])
            elif default is REQUIRED:
                raise NotPlain
            else:
                out[key] = [] if default is NEW_LIST else default
        return SimpleNamespace(**out)


def plain(reader: Obj, doc: object) -> Any:
    """`doc` (parsed JSON) read by `reader` when every field in it is plainly right, else None."""
    try:
        return reader(doc)
    except NotPlain:
        return None
    except Exception:  # whatever else a field meets, the model says it in its words
        return None
