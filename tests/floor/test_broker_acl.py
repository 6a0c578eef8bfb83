"""The shipped broker configuration (hardware/floor/mosquitto.conf and acl), run by a real Mosquitto:
each table publishes only under its own id, and the floor store still catches up through it."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.adapters.floor import schema
from controller.adapters.floor.history import ask_floor

from .conftest import (
    PASSWORDS,
    SITE,
    WAIT_S,
    Mosquitto,
    deal_rounds,
    make_publisher,
    make_table,
    shipped_config,
    shipped_store_consumer,
    store_matches_journal,
    wait_until,
)


def test_the_shipped_acl_refuses_a_table_publishing_under_another_tables_topic(
    shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="tablectl.floor")
    # The floor store's reader, logged in as the ACL's floor-store user, sees everything allowed.
    seen: list[tuple[str, dict[str, object]]] = []
    reader = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    reader.tls_set(ca_certs=str(certificates["ca_pem"]))
    reader.username_pw_set("floor-store", PASSWORDS["floor-store"])
    subscribed = threading.Event()
    reader.on_subscribe = lambda c, u, mid, rc, p: subscribed.set()
    reader.on_message = lambda c, u, m: seen.append((m.topic, json.loads(m.payload)))
    reader.connect("127.0.0.1", shipped_broker.port)
    reader.loop_start()
    reader.subscribe(schema.EVENTS_FILTER, qos=1)
    assert subscribed.wait(WAIT_S)

    honest = make_table(tmp_path / "honest", "GS-01")
    good = make_publisher(shipped_config(shipped_broker, "GS-01", tmp_path, certificates), honest, boot="honest")
    # GS-02's credentials, but configured as table GS-01: it would write under GS-01's topics.
    rogue_table = make_table(tmp_path / "rogue", "GS-01")
    rogue = make_publisher(shipped_config(shipped_broker, "GS-02", tmp_path, certificates), rogue_table, boot="rogue")
    good.start()
    rogue.start()
    deal_rounds(honest, 1)
    deal_rounds(rogue_table, 1)
    try:
        assert good.wait_acked(honest.journal.last_seq, WAIT_S)
        assert not rogue.wait_acked(1, 2.0)  # refused, so never marked as delivered
        rogue_status = rogue.status()
    finally:
        good.stop()
        rogue.stop()
        reader.disconnect()
        reader.loop_stop()

    boots = {payload.get("boot") for _, payload in seen}
    assert "honest" in boots and "rogue" not in boots
    assert rogue_status["acked"] == 0 and "refused message" in str(rogue_status["refused"])
    assert "the broker's ACL must let this table's user write tablectl/test-floor/GS-01/#" in caplog.text


def test_through_the_shipped_acl_the_floor_store_catches_up_from_a_table(
    shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path
) -> None:
    table = make_table(tmp_path, "GS-01")
    publisher = make_publisher(shipped_config(shipped_broker, "GS-01", tmp_path, certificates), table)
    publisher.start()
    deal_rounds(table, 3)  # before the store exists: only catch-up can bring these
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    url = f"sqlite://{tmp_path}/floor.db"
    consumer = shipped_store_consumer(shipped_broker, url, certificates)
    try:
        assert wait_until(lambda: store_matches_journal(url, table))
        answer = ask_floor(shipped_config(shipped_broker, "GS-01", tmp_path, certificates), "GS-01", timeout=WAIT_S)
        assert answer is not None and answer["seq"] == table.journal.last_seq  # the store answers a starting table
    finally:
        consumer.stop()
        publisher.stop()


def _client(broker: Mosquitto, user: str, certificates: dict[str, Path]) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.tls_set(ca_certs=str(certificates["ca_pem"]))
    client.username_pw_set(user, PASSWORDS[user])
    connected = threading.Event()
    client.on_connect = lambda c, u, f, rc, p: connected.set()
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    assert connected.wait(WAIT_S)
    return client


def _publish(client: mqtt.Client, topic: str, payload: dict[str, object], correlation: bytes = b"") -> str:
    """Publish at QoS 1 and return the broker's answer (MQTT 5's PUBACK reason)."""
    answered = threading.Event()
    reasons: list[str] = []

    def on_publish(c: mqtt.Client, u: object, mid: int, reason: object, p: object) -> None:
        reasons.append(str(reason))
        answered.set()

    client.on_publish = on_publish
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    if correlation:
        props.CorrelationData = correlation
    client.publish(topic, schema.encode(payload), 1, properties=props)
    assert answered.wait(WAIT_S)
    return reasons[0]


def test_through_the_shipped_acl_only_the_floor_store_answers_a_starting_tables_question(
    shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="tablectl.floor.history")
    # Someone with the table's own account (a shell on the Pi) answers the table's start-up question
    # first, "the floor holds nothing of you", so that a journal restored from an earlier copy would
    # open; the floor store (a stand-in logged in as floor-store) answers after it.
    rogue = _client(shipped_broker, "GS-01", certificates)
    floor = _client(shipped_broker, "floor-store", certificates)
    said: list[str] = []
    genuine = {"v": schema.VERSION, "seq": 7, "chain": "ab" * 16, "head_seq": 7, "alerts": []}

    def on_request(c: mqtt.Client, u: object, message: mqtt.MQTTMessage) -> None:
        response, correlation = message.properties.ResponseTopic, message.properties.CorrelationData
        forged = {"v": schema.VERSION, "seq": 0, "chain": "0" * 32, "head_seq": 0, "alerts": []}
        said.append(_publish(rogue, response, forged, correlation))  # handled by the broker before the store's
        garbled = {"v": schema.VERSION, "seq": "all", "chain": "0" * 32, "head_seq": 0, "alerts": []}
        c.publish(response, schema.encode(garbled), 1, properties=_correlated(correlation))  # read, and refused
        c.publish(response, schema.encode(genuine), 1, properties=_correlated(correlation))

    subscribed = threading.Event()
    floor.on_subscribe = lambda c, u, mid, rc, p: subscribed.set()
    floor.on_message = on_request
    floor.subscribe(schema.HISTORY_REQUEST_FILTER, qos=1)
    assert subscribed.wait(WAIT_S)
    try:
        answer = ask_floor(shipped_config(shipped_broker, "GS-01", tmp_path, certificates), "GS-01", timeout=WAIT_S)
        # Nor may a service's account publish as a table of its own name.
        posing = _publish(floor, schema.topic(SITE, "floor-store", "entry"), {"v": schema.VERSION})
    finally:
        for client in (rogue, floor):
            client.disconnect()
            client.loop_stop()
    assert said == ["Not authorized"]
    assert answer == genuine
    assert "is not the floor store's: seq 'all' is not an entry number; ignored" in caplog.text
    assert posing == "Not authorized"


def _correlated(correlation: bytes) -> Properties:
    props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
    props.CorrelationData = correlation
    return props
