"""The [floor] settings and the message schema, without a broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, FloorConfigError, parse_floor

SRC = "/etc/tablectl/table.toml"


def test_a_floor_section_gives_the_broker_site_and_tls_files() -> None:
    config = parse_floor(
        {
            "broker": "mqtts://floor.casino.lan",
            "site": "main-floor",
            "pit": "pit-3",
            "username": "gs-01",
            "password_file": "/etc/tablectl/floor-password",
            "ca_file": "/etc/tablectl/floor-ca.pem",
        },
        SRC,
    )
    assert config is not None
    assert config.broker == Broker("floor.casino.lan", 8883, True)  # the MQTT-over-TLS port by default
    assert str(config.broker) == "mqtts://floor.casino.lan:8883"
    assert (config.site, config.username, config.keepalive, config.inflight) == ("main-floor", "gs-01", 30, 100)
    assert config.pit == "pit-3"  # the live view's pit, sent in the table's status
    assert parse_floor(None, SRC) is None  # no section: the table reports to no floor


@pytest.mark.parametrize(
    ("section", "error"),
    [
        ({"site": "main"}, "floor.broker: is required when there is a [floor] section"),
        ({"broker": "mqtt://f", "site": "main", "port": 1}, "floor.port: unknown key"),
        (
            {"broker": "tcp://f:1883", "site": "main"},
            "floor.broker: the scheme must be mqtts:// (TLS) or mqtt://, not 'tcp'",
        ),
        ({"broker": "mqtts://f:99999", "site": "main"}, "floor.broker: not a broker URL"),
        ({"broker": "mqtts://", "site": "main"}, "floor.broker: the URL names no host"),
        ({"broker": "mqtts://f", "site": "main/+"}, "floor.site: 'main/+' cannot be a topic level"),
        ({"broker": "mqtts://f", "site": "main", "pit": "pit #3"}, "floor.pit: 'pit #3' cannot be a topic level"),
        (
            {"broker": "mqtts://f", "site": "main", "cert_file": "/c.pem"},
            "floor.cert_file: a client certificate needs both",
        ),
        (
            {"broker": "mqtt://f", "site": "main", "ca_file": "/ca.pem"},
            "floor.broker: ca_file and cert_file are for TLS",
        ),
        (
            {"broker": "mqtts://f", "site": "main", "password_file": "/p"},
            "floor.password_file: a password needs floor.username",
        ),
        (
            {"broker": "mqtt://f", "site": "main", "username": "u", "password_file": "/p"},
            "floor.password_file: a password is only sent over TLS",
        ),
        (
            {"broker": "mqtts://f", "site": "main", "inflight": 0},
            "floor.inflight: must be a whole number from 1 to 10000, not 0",
        ),
        (
            {"broker": "mqtts://f", "site": "main", "keepalive": True},
            "floor.keepalive: must be a whole number from 5 to 3600",
        ),
    ],
)
def test_a_bad_floor_setting_is_refused_naming_the_file_and_key(section: dict[str, Any], error: str) -> None:
    with pytest.raises(FloorConfigError) as refused:
        parse_floor(section, SRC)
    assert str(refused.value).startswith(f"{SRC}: ") and error in str(refused.value)


def test_a_password_in_the_broker_url_is_refused_without_being_repeated() -> None:
    with pytest.raises(FloorConfigError) as refused:
        parse_floor({"broker": "mqtts://gs-01:hunter2@floor.lan:8883", "site": "main"}, SRC)
    assert "put the user in floor.username and the password in the file floor.password_file" in str(refused.value)
    assert "hunter2" not in str(refused.value)


def test_the_password_is_the_first_line_of_its_file_and_a_missing_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("s3cret\n")
    config = parse_floor(
        {"broker": "mqtts://f", "site": "m", "username": "u", "password_file": str(tmp_path / "pw")}, SRC
    )
    assert config is not None and config.password() == "s3cret"
    missing = parse_floor(
        {"broker": "mqtts://f", "site": "m", "username": "u", "password_file": str(tmp_path / "no")}, SRC
    )
    assert missing is not None
    with pytest.raises(FloorConfigError, match=r"floor.password_file=.*/no: cannot read the password: No such file"):
        missing.password()


def message(seq: Any, table: str = "GS-01", kind: str = "entry", **extra: Any) -> schema.FloorMessage:
    payload = {"v": 1, "site": "main", "table": table, "boot": "b", "seq": seq, **extra}
    return schema.parse(f"tablectl/main/{table}/{kind}", json.dumps(payload).encode())


def test_the_ledger_keeps_each_entry_once_and_names_the_ones_missing() -> None:
    ledger = schema.Ledger()
    taken = [m.seq for m in map(message, [1, 2, 2, 5, 3, 1, 4, 5, 6]) if ledger.take(m)]
    assert taken == [1, 2, 5, 3, 4, 6]
    assert ledger.missing("main", "GS-01") == []
    assert ledger.take(message(9)) and ledger.missing("main", "GS-01") == [7, 8]
    assert ledger.take(message(1, table="GS-02"))  # each table has its own seqs
    assert ledger.take(message(6, kind="meters")) and not ledger.take(message(6, kind="meters"))


@pytest.mark.parametrize(
    ("topic", "payload", "error"),
    [
        ("tablectl/main/GS-01", {}, "not a tablectl/<site>/<table>/<kind> topic"),
        ("tablectl/main/GS-01/chips", {}, "unknown kind 'chips'"),
        (
            "tablectl/main/GS-01/entry",
            {"v": 2, "site": "main", "table": "GS-01", "boot": "b", "seq": 1},
            "payload version 2; this version reads 1",
        ),
        (
            "tablectl/main/GS-01/entry",
            {"v": 1, "site": "main", "table": "GS-02", "boot": "b", "seq": 1},
            "the payload names another table ('GS-02')",
        ),
        (
            "tablectl/main/GS-01/entry",
            {"v": 1, "site": "main", "table": "GS-01", "seq": 1},
            "the payload has no boot id",
        ),
        (
            "tablectl/main/GS-01/meters",
            {"v": 1, "site": "main", "table": "GS-01", "boot": "b", "seq": 0},
            "seq must be a journal sequence number, not 0",
        ),
        ("tablectl/main/GS-01/entry", [1], "the payload is not a JSON object"),
    ],
)
def test_a_message_this_version_cannot_read_is_refused_naming_its_topic(topic: str, payload: Any, error: str) -> None:
    with pytest.raises(schema.FloorMessageError) as refused:
        schema.parse(topic, json.dumps(payload).encode())
    assert str(refused.value).startswith(f"{topic}: ") and error in str(refused.value)
