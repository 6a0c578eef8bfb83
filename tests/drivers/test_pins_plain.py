"""A pin map read without pydantic (drivers/pins.py's `_plain_fields`) reads as the one validator of
operators' documents reads it (`_checked_fields`, vision/documents.py): the same keys, rules and
optional keys; and at every key of the shipped maps, values of every kind, keys left out and keys
unknown, taken without the validator only where it takes them and as it gives them (else left to
it, whose refusal is the one said). The table starts with its map read this way, so its process
never loads pydantic (tests/controller/test_table_without_pydantic.py)."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from drivers import pins
from drivers.pins import DEFAULT_PIN_FILE, PinError

SHIPPED: dict[str, Any] = tomllib.loads(DEFAULT_PIN_FILE.read_text())

#: Values of every kind, near every bound the rules set, tried at every key.
VALUES: list[Any] = [
    0, 1, 4, 8, 9, 17, 27, 28, -1, 63, 64, True, False, 5.0, "5", "", "x", "gpio", "shift-register", "note",
    None, [], [5], {}, {"confirm": 5}, {"confirm": 5, "void": 6}, {"confirm": 5, "hat": 6}, {"confirm": True},
    {"1": {"first": 17}}, {"9": {"first": 17}}, {"x": {"first": 17}}, {"1": {}}, {"1": {"First": 1}},
    {"1": {"first": "17"}}, {"data": 9, "clock": 10, "latch": 11, "chips": 2}, {"data": 9, "clock": 10, "latch": 11},
]  # fmt: skip
NAMES = sorted({*pins.MAP_KEYS, *pins.CHAIN_KEYS, "hat"})


def checked(table: dict[str, Any]) -> Any:
    try:
        return pins._checked_fields("pins.toml", "m", table)
    except PinError as exc:
        return ("refused", str(exc))


def outcome_plainly(table: dict[str, Any]) -> Any:
    try:
        return pins._parse_map("pins.toml", "m", table)
    except PinError as exc:
        return ("refused", str(exc))


def outcome_checked(table: dict[str, Any]) -> Any:
    fields = checked(table)
    if isinstance(fields, tuple):
        return fields
    try:
        return pins._assemble("m", "pins.toml", **fields)
    except PinError as exc:
        return ("refused", str(exc))


def changed(table: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`table` with one change: each value anywhere replaced by each of VALUES, each key left
    out, each key name (known there or not) set to each of VALUES."""
    paths: list[tuple[str, ...]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*path, key))

    walk(table, ())
    for path in paths:
        node = _at(table, path)
        if path:
            for value in VALUES:
                yield _set(table, path, value)
            out = copy.deepcopy(table)
            del _at(out, path[:-1])[path[-1]]
            yield out
        if isinstance(node, dict):
            for name in NAMES:
                for value in VALUES:
                    yield _set(table, (*path, name), value)


def _at(doc: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _set(doc: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    _at(out, path[:-1])[path[-1]] = copy.deepcopy(value)
    return out


def test_the_keys_are_the_validators() -> None:
    model, _ = pins._models()
    assert list(pins.MAP_KEYS) == list(model.model_fields)
    for key, field in model.model_fields.items():
        assert pins.MAP_KEYS[key][1] == (not field.is_required()), key
    chain = model.model_fields["chain"].annotation.__args__[0]
    assert list(pins.CHAIN_KEYS) == list(chain.model_fields)
    assert all(field.is_required() for field in chain.model_fields.values())


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_shipped_maps_are_read_without_the_validator(name: str) -> None:
    fields = pins._plain_fields(SHIPPED[name])
    assert fields is not None
    assert fields == checked(SHIPPED[name])


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_map_changed_anywhere_is_read_as_the_validator_reads_it(name: str) -> None:
    read_plainly = left = 0
    for table in changed(SHIPPED[name]):
        fields = pins._plain_fields(table)
        if fields is None:
            left += 1
        else:
            read_plainly += 1
            assert fields == checked(table), table
        assert outcome_plainly(table) == outcome_checked(table), table
    assert read_plainly > 20 and left > 200  # both ways are tried
