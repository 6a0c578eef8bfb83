"""What changed between two states of the table, and a state with those changes applied.

The live feed sends the screens the whole table state once (when they connect), then with each
entry only what the entry changed: `changes(old, new)` is a list of `[path, value]`, each path the
keys and list indexes from the top of the state to a value that is now `value` (an empty path:
the whole state is `value`). `patched(state, changes)` is `state` with them applied, a new
document that shares what did not change with `state` (neither is ever changed). The screens apply
them the same way (controller/api/static/js/live.js's `patched`).

Two values are the same when they are equal and of one type (`true` where `1` was, `25.0` where
`25` was, are changes); inside two equal objects or lists, Python's `==` decides (at C speed: this
runs on the table's loop once an entry), so the order of an object's keys, or a `1` deep inside
that was `true`, is not told until that part changes otherwise (the table's typed state makes
neither; a screen gets the whole state again each time it connects). An object whose keys are not
the same, in the same order, is sent whole, as is a list whose length changed: a path never names
a key or an index its document does not already have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Path = list[str | int]
Changes = list[list[Any]]  # [[path, value], ...]


def changes(old: Any, new: Any) -> Changes:
    """What to apply to `old` to make `new` (nothing when they are the same)."""
    out: Changes = []
    if not _same(old, new):
        _diff(old, new, [], out)
    return out


def patched(state: Any, changed: Sequence[Sequence[Any]]) -> Any:
    """`state` with `changed` applied (a new document; `state` is not changed, nor any value in
    `changed`). Each object or list on the way to a change is copied once for all the changes (an
    entry's changes share most of their way from the top), the copies then changed in place."""
    made: dict[int, Any] = {}  # the copies this patch made, by id (kept: no id is taken again meanwhile)
    for path, value in changed:
        if not path:
            state = value
            continue
        top = node = _own(state, path, 0, made)
        for at in range(len(path) - 1):
            key = path[at]
            child = node[key] = _own(node[key], path, at + 1, made)
            node = child
        node[path[-1]] = value
        state = top
    return state


def _own(node: Any, path: Sequence[Any], at: int, made: dict[int, Any]) -> Any:
    """`node`, in which `path[at]` is to change: the copy this patch made of it already, or a new one."""
    key = path[at]
    if isinstance(node, dict):
        if key not in node:
            raise KeyError(f"no key {key!r} at {list(path[:at])} to change")
    elif not (isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node)):
        raise KeyError(f"no {key!r} at {list(path[:at])} to change")
    if made.get(id(node)) is node:
        return node
    copy: Any = dict(node) if isinstance(node, dict) else list(node)
    made[id(copy)] = copy
    return copy


def _same(a: Any, b: Any) -> bool:
    # `==` at C speed (most of a state is unchanged), and of one type: `True` where `1` was is a change.
    return a is b or (type(a) is type(b) and bool(a == b))


def _diff(old: Any, new: Any, path: Path, out: Changes) -> None:
    """`old` and `new` differ: the changes that make one the other, as deep as they can be named."""
    if isinstance(old, dict) and isinstance(new, dict) and list(old) == list(new):
        for key, value in new.items():
            if not _same(old[key], value):
                _diff(old[key], value, [*path, key], out)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, value in enumerate(new):
            if not _same(old[index], value):
                _diff(old[index], value, [*path, index], out)
    else:
        out.append([path, new])
