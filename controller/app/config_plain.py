"""table.toml read without pydantic when every key in it is plainly right: what the models in
controller/app/config_schema.py would give (their `model_dump()`), or None to let them read it.

A command reading a table.toml its daemon has not checked (`tablectl recall --config`, `journal
verify --config` on a new or edited file) would otherwise import pydantic and build the models,
a third of its time, only to find the file right. Here each key is taken only when it is of the
one kind and within the bounds the models accept, and taken as they would take it (a number as a
float where they make it one; [rules] and [floor] as written, as the models keep them); anything
else (an unknown section or key, a wrong kind, a number out of its bounds, a TOML date for a key of
text or a number, a whole number written 9600.0) gives None, and the models read the file and
refuse it in their words (vision/documents.py): every refusal is theirs, none is made here.

tests/controller/test_config_plain.py holds the two to the same answers: each key's default, and
each bound and kind, accepted here only where the models accept it, and read the same.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from typing import Any

BAUD_RATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400)
DIALECTS = ("cd5220", "dmd")
CAMERA_BACKENDS = ("opencv", "picamera2", "simulated")


class _NotPlain(Exception):
    """A key not plainly right: the models read the file."""


Read = Callable[[Any], Any]


def _text(value: Any) -> Any:
    if isinstance(value, str) and value.strip():
        return value
    raise _NotPlain


def _whole(low: int, high: int) -> Read:
    def read(value: Any) -> Any:
        if type(value) is int and low <= value <= high:
            return value
        raise _NotPlain

    read.bounds = (low, high)  # type: ignore[attr-defined]  # the test holds them to the models'
    return read


def _number(low: float, high: float) -> Read:
    def read(value: Any) -> Any:
        if type(value) in (int, float) and low <= value <= high:
            return float(value)
        raise _NotPlain

    read.bounds = (low, high)  # type: ignore[attr-defined]  # the test holds them to the models'
    return read


def _one_of(allowed: tuple[Any, ...]) -> Read:
    kind = type(allowed[0])

    def read(value: Any) -> Any:
        if type(value) is kind and value in allowed:
            return value
        raise _NotPlain

    return read


def _game(value: Any) -> Any:
    from controller.engine import game_names

    if isinstance(value, str) and value in game_names():
        return value
    raise _NotPlain


def _flag(value: Any) -> Any:
    if type(value) is bool:
        return value
    raise _NotPlain


def _proxies(value: Any) -> Any:
    if type(value) is not list:
        raise _NotPlain
    for proxy in value:
        if type(proxy) is not str:
            raise _NotPlain
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise _NotPlain from None
    return list(value)


def _device(value: Any) -> Any:
    if (type(value) is int and 0 <= value <= 63) or (type(value) is str and value != ""):
        return value
    raise _NotPlain


def _table(value: Any) -> Any:
    """A table of keys as written ([rules], [floor]: checked by the game and the floor)."""
    if type(value) is dict and all(type(key) is str for key in value):
        return dict(value)
    raise _NotPlain


#: Each section's keys: (what the models' field defaults to, how a key written is read). A default
#: factory's value is made anew each time (`list`).
SECTIONS: dict[str, dict[str, tuple[Any, Read]]] = {
    "table": {"id": ("TABLE-1", _text), "game": ("grand-slam", _game), "seats": (7, _whole(1, 99))},
    "shoe": {
        "url": (None, _text), "baudrate": (115200, _one_of(BAUD_RATES)), "heartbeat_timeout": (3.0, _number(0.2, 60.0)),
    },
    "display": {
        "url": (None, _text), "dialect": ("cd5220", _one_of(DIALECTS)), "baudrate": (9600, _one_of(BAUD_RATES)),
    },
    "indicators": {"pin_map": ("seven-seat-595", _text), "pin_file": (None, _text), "pin_factory": (None, _text)},
    "http": {
        "host": ("127.0.0.1", _text), "port": (8000, _whole(1, 65535)), "tls_cert": (None, _text),
        "tls_key": (None, _text), "allow_plain_http": (False, _flag), "trusted_proxies": (list, _proxies),
    },
    "state": {
        "dir": ("/var/lib/tablectl", _text), "retain_days": (90.0, _number(0, 36500)), "archive_dir": (None, _text),
    },
    "camera": {
        "backend": (None, _one_of(CAMERA_BACKENDS)), "device": (None, _device), "layout": ("grand-slam-7", _text),
        "calibration": (None, _text), "fps": (4.0, _number(0.2, 30.0)), "stable_frames": (3, _whole(1, 100)),
        "fresh_frames": (False, _flag),
    },
    "security": {
        "release_key": ("/etc/tablectl/release-key.pub", _text), "verify_every": (24.0, _number(0.01, 720.0)),
        "table_key": (None, _text),
    },
}  # fmt: skip
#: The sections that are tables as written, and the sections absent unless written (None).
AS_WRITTEN = ("rules", "floor")
OPTIONAL = ("floor", "camera")
#: The sections in the models' order (TableToml's fields).
ORDER = ("table", "rules", "shoe", "display", "indicators", "http", "state", "floor", "camera", "security")


def read(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The form the models would give `doc` (parsed TOML), or None when a key is not plainly right."""
    try:
        if any(name not in ORDER for name in doc):
            return None
        return {name: _section(name, doc) for name in ORDER}
    except _NotPlain:
        return None


def _section(name: str, doc: Mapping[str, Any]) -> Any:
    written = doc.get(name)
    if name in AS_WRITTEN:
        return None if written is None and name in OPTIONAL else _table({} if written is None else written)
    if written is None and name in OPTIONAL:
        return None
    keys = SECTIONS[name]
    if written is None:
        written = {}
    if type(written) is not dict or any(key not in keys for key in written):
        raise _NotPlain
    return {
        key: reader(written[key]) if key in written else (default() if callable(default) else default)
        for key, (default, reader) in keys.items()
    }
