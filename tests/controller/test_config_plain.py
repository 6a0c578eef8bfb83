"""table.toml read without pydantic (controller/app/config_plain.py) reads as the models read it:
each key it takes, it takes only where the models accept it and as they give it; whatever the
models refuse, it leaves to them (so the refusal is theirs, in their words)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from controller.app import config_plain
from controller.app.config import ConfigError, load, parse
from controller.app.config_schema import TableToml

#: Values of every kind and near every bound the models set, tried at every key.
VALUES: list[Any] = [
    0, 1, -1, 3, 7, 63, 64, 99, 100, 65535, 65536, 36500, 36501, 720, 721, 9600, 9600.0, 115200, 1234,
    0.0, 0.01, 0.009, 0.2, 0.19, 2.5, 30.0, 30.01, 60.0, 60.5, float("nan"), float("inf"), True, False,
    "", " ", "x", "grand-slam", "jokers-22", "blackjack", "cd5220", "dmd", "opencv", "picamera2", "simulated",
    "/dev/video0", "10.0.0.5", [], ["10.0.0.5"], ["10.0.0.0/24", "::1"], ["nope"], [5], ["10.0.0.5", 7], {},
    {"a": 1}, datetime.date(2026, 12, 3),
]  # fmt: skip


def models(doc: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return TableToml.model_validate(doc).model_dump()
    except ValidationError:
        return None


def sections() -> list[str]:
    return [name for name in TableToml.model_fields if name not in config_plain.AS_WRITTEN]


def section_model(name: str) -> type[BaseModel]:
    annotation = TableToml.model_fields[name].annotation
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    raise AssertionError(name)


def test_the_sections_and_keys_and_their_defaults_are_the_models() -> None:
    assert tuple(TableToml.model_fields) == config_plain.ORDER
    assert sorted(config_plain.SECTIONS) == sorted(sections())
    for name in sections():
        fields = section_model(name).model_fields
        assert list(config_plain.SECTIONS[name]) == list(fields), name
        for key, field in fields.items():
            default, _ = config_plain.SECTIONS[name][key]
            expected = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
            assert (default() if callable(default) else default) == expected, f"{name}.{key}"
    assert config_plain.read({}) == models({})


@pytest.mark.parametrize("name", sections())
def test_each_key_is_taken_only_where_the_models_take_it_and_as_they_give_it(name: str) -> None:
    for key in config_plain.SECTIONS[name]:
        for value in VALUES:
            doc = {name: {key: value}}
            plain, checked = config_plain.read(doc), models(doc)
            if checked is None:
                assert plain is None, (name, key, value)
            elif plain is not None:
                assert plain == checked, (name, key, value)
                assert type(plain[name][key]) is type(checked[name][key]), (name, key, value)


@pytest.mark.parametrize("name", sections())
def test_each_numeric_key_is_read_at_its_own_bounds_as_the_models_read_it(name: str) -> None:
    """Each bound written here, tried just inside, at and just outside it (whole and fractional):
    a bound moved in the models or here alone fails, wherever it is moved to."""
    bounded = 0
    for key, (_, reader) in config_plain.SECTIONS[name].items():
        bounds = getattr(reader, "bounds", None)
        if bounds is None:
            continue
        bounded += 1
        probes = set()
        for bound in bounds:
            for step in (0, 1, -1, 0.5, -0.5, 0.001, -0.001):
                probes.update({bound + step, float(bound + step)})
                if float(bound + step).is_integer():
                    probes.add(int(bound + step))
        for value in sorted(probes, key=lambda v: (float(v), type(v).__name__)):
            doc = {name: {key: value}}
            plain, checked = config_plain.read(doc), models(doc)
            assert (plain is None) == (checked is None) or (plain is None and type(value) is float), (name, key, value)
            if plain is not None:
                assert plain == checked and type(plain[name][key]) is type(checked[name][key]), (name, key, value)
    assert bounded or name in ("display", "indicators"), f"[{name}]: no bounded key found"


def test_plainly_right_values_are_taken_without_the_models() -> None:
    """The keys an operator writes (hardware/install.md's table.toml), none of them left to the models."""
    doc = {
        "table": {"id": "GS-07", "game": "jokers-22", "seats": 7},
        "rules": {"decks": 8},
        "shoe": {"url": "/dev/ttyUSB0", "baudrate": 115200, "heartbeat_timeout": 3},
        "display": {"url": "/dev/ttyUSB1", "dialect": "dmd", "baudrate": 9600},
        "indicators": {"pin_map": "seven-seat-595", "pin_file": "/etc/tablectl/pins.toml", "pin_factory": "lgpio"},
        "http": {"host": "10.0.0.9", "port": 8443, "allow_plain_http": True, "trusted_proxies": ["10.0.0.5"]},
        "state": {"dir": "/var/lib/tablectl", "retain_days": 30, "archive_dir": "/srv/archive"},
        "camera": {"backend": "opencv", "device": 0, "calibration": "/var/lib/tablectl/camera.json", "fps": 5},
        "security": {"verify_every": 12, "table_key": "/var/lib/tablectl/table.key"},
        "floor": {"broker": "mqtts://floor.local"},
    }
    plain = config_plain.read(doc)
    assert plain is not None and plain == models(doc)


@pytest.mark.parametrize(
    "doc",
    [
        {"lights": {"on": True}},
        {"shoe": {"speed": 1}},
        {"shoe": "fast"},
        {"rules": 6},
        {"shoe": {"baudrate": 9600.0}},  # the models make it 9600: theirs to read
        {"http": {"trusted_proxies": [5]}},
    ],
)
def test_anything_else_is_left_to_the_models(doc: dict[str, Any]) -> None:
    assert config_plain.read(doc) is None


def test_a_file_read_plainly_gives_the_same_configuration(tmp_path: Path) -> None:
    text = (
        '[table]\nid = "GS-07"\ngame = "jokers-22"\n[rules]\ndecks = 8\n[shoe]\nurl = "/dev/ttyUSB0"\n'
        '[display]\nurl = "/dev/ttyUSB1"\ndialect = "dmd"\n[http]\nport = 8080\n[camera]\ndevice = 0\n'
        'calibration = "/var/lib/tablectl/camera.json"\nfps = 5\n'
    )
    path = tmp_path / "table.toml"
    path.write_text(text)
    import tomllib

    from controller.app.config_schema import ConfigStyle
    from vision.documents import check

    doc = tomllib.loads(text)
    assert config_plain.read(doc) is not None
    by_models = check(TableToml, doc, str(path), ConfigError, ConfigStyle())
    from controller.app.config import _config

    assert load(path, simulated=False) == parse(doc, str(path), simulated=False) == _config(by_models, str(path), False)


def test_the_daemon_keeps_the_models_form_of_a_plain_file(tmp_path: Path) -> None:
    """What the daemon keeps for the commands (CHECKED_FILE), read without the models, is the form
    they give; and a recall reading it back gets the configuration the models would."""
    import json
    import tomllib

    from controller.app.config import CHECKED_FILE, remember_checked

    state = tmp_path / "state"
    state.mkdir()
    path = tmp_path / "table.toml"
    path.write_text(
        f'[table]\nid = "GS-09"\n[shoe]\nheartbeat_timeout = 2\n[http]\ntrusted_proxies = ["10.0.0.5"]\n'
        f'[state]\ndir = "{state}"\nretain_days = 30\n'
    )
    doc = tomllib.loads(path.read_text())
    assert config_plain.read(doc) is not None
    assert remember_checked(path, state)
    kept = json.loads((state / CHECKED_FILE).read_text())["form"]
    assert kept == models(doc)
    assert load(path, simulated=True) == parse(doc, str(path), simulated=True)
