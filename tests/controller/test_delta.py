"""The live feed's changes: what a screen applies to the state it has makes the table's state, exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.api.delta import changes, patched

# The table's state is typed: a value that is a number is never `true` elsewhere (delta.py).
_leaf = st.none() | st.booleans() | st.integers(2, 5) | st.sampled_from([2.5, 3.0]) | st.sampled_from(["", "5H", "a"])
_docs = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=4),
    max_leaves=20,
)


def _text(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))


@given(_docs, _docs)
def test_the_changes_applied_to_the_old_state_make_the_new_one(old: Any, new: Any) -> None:
    before = _text(old)
    assert patched(old, changes(old, new)) == new
    assert _text(old) == before  # the old state is not changed: a screen compares with it


def test_only_what_changed_is_sent_and_a_value_of_another_type_is_a_change() -> None:
    old = {"prompt": "Deal to seat 1", "state": {"seats": [{"cards": ["5H"], "net": 1}, {"cards": []}]}}
    new = {"prompt": "Deal to seat 2", "state": {"seats": [{"cards": ["5H", "2C"], "net": True}, {"cards": []}]}}
    assert changes(old, new) == [
        [["prompt"], "Deal to seat 2"],
        [["state", "seats", 0, "cards"], ["5H", "2C"]],
        [["state", "seats", 0, "net"], True],  # `True` where `1` was, beside a change: a change too
    ]
    # Inside a part equal by Python's `==` a `1` that became `true` is not told (delta.py's trade:
    # one C-speed comparison an entry; the table's typed state never swaps a type in place).
    # An object whose keys changed is sent whole, as is a list whose length changed.
    renamed = {"prompt": "Deal to seat 1", "state": {"seats": [{"cards": ["5H"], "won": 1}, {"cards": ["2C"]}]}}
    assert changes(old, renamed) == [
        [["state", "seats", 0], {"cards": ["5H"], "won": 1}],
        [["state", "seats", 1, "cards"], ["2C"]],
    ]
    assert changes(old, old) == []


def test_changes_that_name_what_the_state_does_not_have_are_refused() -> None:
    with pytest.raises(KeyError, match="no key 'seats' at \\['state'\\]"):
        patched({"state": {}}, [[["state", "seats", 0], 1]])
    with pytest.raises(KeyError):
        patched({"seats": []}, [[["seats", 0], 1]])


@given(_docs, st.lists(_docs, min_size=1, max_size=4))
def test_many_changes_at_once_are_the_same_as_one_after_another(old: Any, news: list[Any]) -> None:
    """An entry's changes applied together (each object on their way copied once for all of them)
    make what applying them one by one makes, and change neither the state nor the changes' values."""
    said: list[list[Any]] = []
    last = old
    for new in news:  # changes after changes: paths that share their way, a part changed twice
        said += changes(last, new)
        last = new
    before, values = _text(old), _text(said)
    one_by_one = old
    for change in said:
        one_by_one = patched(one_by_one, [change])
    assert patched(old, said) == one_by_one == news[-1]
    assert _text(old) == before and _text(said) == values


def test_a_change_within_a_part_made_by_the_patch_still_names_only_what_is_there() -> None:
    with pytest.raises(KeyError, match="no key 'x' at \\['a'\\]"):
        patched({"a": {"b": 1}}, [[["a", "b"], 2], [["a", "x"], 3]])
    with pytest.raises(KeyError):
        patched({"a": [1]}, [[["a", 0], 2], [["a", 1], 3]])
