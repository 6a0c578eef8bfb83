"""The games' round files and decisions read without pydantic (controller/games/plain.py, each
game's plain.py) read as their models read them (each game's api.py): the same fields, in the same
order, with the same defaults; and at every field of a round file and of a decision, values of every
kind, keys left out and keys unknown, taken without the model only where the model takes them and
as it gives them (else left to the model, whose refusal is the one said). The table reads every
round's opening and every decision this way, so its process never loads pydantic
(tests/controller/test_table_without_pydantic.py)."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from controller.games import adapter
from controller.games import plain as plain_reading
from controller.games.baseball import api as baseball_api
from controller.games.baseball import plain as baseball_plain
from controller.games.grand_slam import api as grand_slam_api
from controller.games.grand_slam import plain as grand_slam_plain
from controller.games.jokers22 import api as jokers22_api
from controller.games.jokers22 import plain as jokers22_plain
from controller.games.plain import NEW_LIST, REQUIRED, Obj

#: Each plain reader and the model it stands for.
PAIRS: list[tuple[Obj, type[BaseModel]]] = [
    (grand_slam_plain.ROUND_FILE, grand_slam_api.GrandSlamRoundFile),
    (grand_slam_plain.SEAT, grand_slam_api.SeatBody),
    (baseball_plain.ROUND_FILE, baseball_api.BaseballRoundFile),
    (baseball_plain.PLAYER, baseball_api.PlayerBody),
    (baseball_plain.ACTION_BODY, baseball_api.ActionBody),
    (jokers22_plain.ROUND_FILE, jokers22_api.Jokers22RoundFile),
    (jokers22_plain.WAGER, jokers22_api.WagerBody),
    (jokers22_plain.SPOT, jokers22_api.SpotBody),
    (jokers22_plain.BANKER, jokers22_api.BankerBody),
    (jokers22_plain.DECISION, jokers22_api.DecisionBody),
]

#: Round files that settle (tests/games/test_round_file_refusals.py's), and a decision of each game.
BASES: dict[str, dict[str, Any]] = {
    "grand-slam": {
        "game": "grand-slam",
        "seats": [
            {"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}, "side_bets": {"three_outs": 5, "poker_bonus": 5}},
            {"seat": 4, "wagers": {"first": 20}},
        ],
        "blind_seat": None,
        "cards": ["5H", "KD", "2C", "9S", "TD"],
    },
    "jokers-22": {
        "game": "jokers-22",
        "rules": {},
        "banker": {"stake": 500, "player": "bank"},
        "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 50}, {"player": "bob", "amount": 20}]}],
        "cards": ["5H", "9D", "KC", "7S", "8D", "2C", "3C"],
        "decisions": [{"spot": 1, "action": "hit"}, {"spot": 1, "action": "stand", "player": "ann"}],
    },
    "baseball-poker": {
        "game": "baseball-poker",
        "players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        "cards": ["2H"],
        "actions": [{"seat": 1, "action": "check"}],
    },
}
DECISIONS: dict[str, tuple[dict[str, Any], Obj, type[BaseModel], Callable[..., Any], Callable[..., Any]]] = {
    "jokers-22": (
        {"spot": 1, "action": "hit", "player": "ann"},
        jokers22_plain.DECISION,
        jokers22_api.DecisionBody,
        jokers22_plain.decision,
        jokers22_api.decision,
    ),
    "baseball-poker": (
        {"seat": 1, "action": "call"},
        baseball_plain.ACTION_BODY,
        baseball_api.ActionBody,
        baseball_plain.action,
        baseball_api.action,
    ),
}
ROUND_FILES = {
    "grand-slam": (grand_slam_plain.ROUND_FILE, grand_slam_api.GrandSlamRoundFile, grand_slam_plain, grand_slam_api),
    "jokers-22": (jokers22_plain.ROUND_FILE, jokers22_api.Jokers22RoundFile, jokers22_plain, jokers22_api),
    "baseball-poker": (baseball_plain.ROUND_FILE, baseball_api.BaseballRoundFile, baseball_plain, baseball_api),
}

#: Values of every kind, near every bound the models set, tried at every field.
VALUES: list[Any] = [
    0, 1, -1, 4, 7, 500, 2**70, True, False, 2.5, 10.0, "10", "", " ", "x", "ann", " ann", "ann\n", "ann\x1c",
    "a" * 20, "a" * 21, "b" * 80, "b" * 81, "hit", "stand", " hit", "check", "call", "first", "JK", "5H", "5h",
    " 5H", "ZZ", "10D", None, [], [1], ["5H"], ["5H", 7], (1,), {}, {"first": 10}, {"first": "10"}, {"a": 1},
    {1: 2}, {"seat": 1, "stack": 100}, {"spot": 1, "action": "hit"}, {"player": "ann", "amount": 50},
    {"stake": 500}, b"5H",
]  # fmt: skip
#: Every field name of every body: set where it is unknown, it is refused.
NAMES = sorted({name for obj, _ in PAIRS for name in obj.fields} | {"hat"})


def data(value: Any) -> Any:
    """A body as read (a model or a namespace) as plain data, each leaf with its type."""
    if isinstance(value, BaseModel):
        return {name: data(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, SimpleNamespace):
        return {name: data(item) for name, item in vars(value).items()}
    if isinstance(value, list):
        return [data(item) for item in value]
    if isinstance(value, dict):
        return {data(key): data(item) for key, item in value.items()}
    return (type(value).__name__, value)


def by_model(model: type[BaseModel], doc: Any) -> Any:
    try:
        return data(model.model_validate(doc))
    except ValidationError:
        return None


def outcome(read: Callable[..., Any], *args: Any) -> Any:
    """What `read(*args)` gives: its result, or its refusal's type, words, field and seat."""
    try:
        return ("read", read(*args))
    except Exception as exc:  # the refusal is the outcome compared
        return ("refused", type(exc).__name__, str(exc), getattr(exc, "field", None), getattr(exc, "seat", None))


def changed(doc: Any) -> Iterator[Any]:
    """`doc` with one change: each value anywhere replaced by each of VALUES, each key left out,
    each field name (known there or not) set to each of VALUES."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*path, i))

    walk(doc, ())
    for path in paths:
        parent_path, node = path[:-1], _at(doc, path)
        if path:
            for value in VALUES:
                yield _set(doc, path, value)
            if isinstance(_at(doc, parent_path), dict):
                out = copy.deepcopy(doc)
                del _at(out, parent_path)[path[-1]]
                yield out
        if isinstance(node, dict):
            for name in NAMES:
                for value in VALUES if name not in node else VALUES[:3]:
                    yield _set(doc, (*path, name), value)


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(doc)
    _at(out, path[:-1])[path[-1]] = copy.deepcopy(value)
    return out


def _nested(read: Any) -> Any:
    """The Obj a field's reader reads, through optional/list_of/dict_of, or None."""
    while not isinstance(read, Obj):
        read = getattr(read, "inner", None)
        if read is None:
            return None
    return read


@pytest.mark.parametrize(("reader", "model"), PAIRS, ids=[obj.model for obj, _ in PAIRS])
def test_each_reader_has_its_models_fields_in_order_with_its_defaults(reader: Obj, model: type[BaseModel]) -> None:
    assert reader.model == model.__name__
    assert list(reader.fields) == list(model.model_fields)
    for name, field in model.model_fields.items():
        read, default = reader.fields[name]
        if field.is_required():
            assert default is REQUIRED, name
        elif field.default_factory is not None:
            assert default is NEW_LIST and field.default_factory() == [], name  # type: ignore[call-arg]
        else:
            assert default == field.default, name
        inner = _nested(read)
        if inner is not None:  # a nested body: its own pair is held above
            assert (inner, inner.model) in [(obj, obj.model) for obj, _ in PAIRS], name


@pytest.mark.parametrize("game", sorted(BASES))
def test_a_round_file_that_settles_is_read_without_its_model(game: str) -> None:
    reader, model, _, _ = ROUND_FILES[game]
    body = plain_reading.plain(reader, BASES[game])
    assert body is not None
    assert data(body) == by_model(model, BASES[game])


@pytest.mark.parametrize("game", sorted(BASES))
def test_the_demo_dealers_openings_are_read_without_the_model(game: str) -> None:
    """What the table reads at each opening: a screen's (here the demo dealer's) body with the
    table's game and rules and no cards yet (controller/table/state.py's `open_event`)."""
    game_adapter = adapter(game)
    reader, _, plain_module, api_module = ROUND_FILES[game]
    rng = random.Random(35)
    for _ in range(50):
        doc = {"game": game, "rules": {}, **game_adapter.demo_opening(rng, seats=7), "cards": []}
        assert plain_reading.plain(reader, doc) is not None, doc
        assert outcome(plain_module.round_input, doc, 7) == outcome(api_module.round_input, doc, 7)


@pytest.mark.parametrize("game", sorted(BASES))
def test_a_round_file_changed_anywhere_is_read_as_its_model_reads_it(game: str) -> None:
    reader, model, plain_module, api_module = ROUND_FILES[game]
    read_plainly = left = 0
    for doc in changed(BASES[game]):
        body = plain_reading.plain(reader, doc)
        if body is None:
            left += 1
        else:
            read_plainly += 1
            assert data(body) == by_model(model, doc), doc
        assert outcome(plain_module.round_input, doc, 7) == outcome(api_module.round_input, doc, 7), doc
    assert read_plainly > 50 and left > 500  # both ways are tried


@pytest.mark.parametrize("game", sorted(DECISIONS))
def test_a_decision_changed_anywhere_is_read_as_its_model_reads_it(game: str) -> None:
    base, reader, model, plainly, checked = DECISIONS[game]
    assert plain_reading.plain(reader, base) is not None
    read_plainly = 0
    for doc in [base, *changed(base)]:
        body = plain_reading.plain(reader, doc)
        if body is not None:
            read_plainly += 1
            assert data(body) == by_model(model, doc), doc
        assert outcome(plainly, doc, "decision") == outcome(checked, doc, "decision"), doc
    assert read_plainly > 20
