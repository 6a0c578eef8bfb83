"""The floor store's own MQTT 5 client (controller/floor/mqtt.py) against the real Mosquitto: a
message is acknowledged only when the store says so, what was not acknowledged comes again on the
next connection of the same session, properties arrive, pings keep an idle connection, and a
broker that sends bytes that are not MQTT ends the connection with a clear error."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.floor.mqtt import Connection, MalformedPacket, MqttError, Received

from .conftest import WAIT_S, Mosquitto, wait_until

TOPIC = "tablectl/main/GS-01/surveillance/entry"


class Reader:
    """A Connection run on its own thread, keeping what it receives."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.got: list[Received] = []
        self.error: BaseException | None = None
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.conn.run(self.got.extend)
        except BaseException as exc:  # the test reads it
            self.error = exc
        finally:
            self.ended.set()

    def stop(self) -> None:
        self.conn.close()
        assert self.ended.wait(WAIT_S)


@contextmanager
def reading(mosquitto: Mosquitto, client_id: str = "tablectl-floor-test", **options: object) -> Iterator[Reader]:
    conn = Connection("127.0.0.1", mosquitto.port, client_id, session_expiry_s=60, **options)  # type: ignore[arg-type]
    conn.open(WAIT_S)
    conn.subscribe([(TOPIC, 1)])
    reader = Reader(conn)
    assert wait_until(lambda: f"Received SUBSCRIBE from {client_id}" in mosquitto.log.read_text())
    try:
        yield reader
    finally:
        if not reader.ended.is_set():
            reader.stop()


def publish(mosquitto: Mosquitto, payloads: list[bytes], **props: object) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", mosquitto.port)
    client.loop_start()
    try:
        for payload in payloads:
            properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            for name, value in props.items():
                setattr(properties, name, value)
            client.publish(TOPIC, payload, 1, properties=properties if props else None).wait_for_publish(WAIT_S)
    finally:
        client.disconnect()
        client.loop_stop()


def test_what_was_not_acknowledged_comes_again_on_the_next_connection_and_what_was_does_not(
    mosquitto: Mosquitto,
) -> None:
    with reading(mosquitto) as reader:
        publish(mosquitto, [b"one", b"two", b"three"])
        assert wait_until(lambda: len(reader.got) == 3)
        assert [m.payload for m in reader.got] == [b"one", b"two", b"three"]
        assert all(m.qos == 1 and m.mid for m in reader.got)
        reader.conn.ack([reader.got[0].mid])  # the store committed only the first
        assert wait_until(lambda: "Received PUBACK from tablectl-floor-test" in mosquitto.log.read_text())
    with reading(mosquitto) as again:  # the same session: the broker kept what was not acknowledged
        assert again.conn.session_present
        assert wait_until(lambda: len(again.got) == 2)
        assert [m.payload for m in again.got] == [b"two", b"three"]
        again.conn.ack([m.mid for m in again.got])
        publish(mosquitto, [b"four"])
        assert wait_until(lambda: len(again.got) == 3)
        again.conn.ack([again.got[2].mid])
        assert wait_until(lambda: mosquitto.log.read_text().count("Received PUBACK from tablectl-floor-test") == 4)
    with reading(mosquitto) as last:
        publish(mosquitto, [b"five"])
        assert wait_until(lambda: len(last.got) == 1)
        assert [m.payload for m in last.got] == [b"five"]  # nothing acknowledged came again


def test_a_catch_up_replys_correlation_and_a_requests_response_topic_arrive(mosquitto: Mosquitto) -> None:
    with reading(mosquitto) as reader:
        publish(mosquitto, [b"{}"], CorrelationData=b"\x01\x02ask", ResponseTopic="tablectl/main/GS-01/answer")
        assert wait_until(lambda: len(reader.got) == 1)
        assert reader.got[0].correlation == b"\x01\x02ask"
        assert reader.got[0].response_topic == "tablectl/main/GS-01/answer"
        assert reader.got[0].topic == TOPIC


def test_a_publish_goes_out_with_its_properties(mosquitto: Mosquitto) -> None:
    with reading(mosquitto) as reader:
        assert reader.conn.publish(TOPIC, b"asked", 1, response_topic="back/here", correlation=b"c1")
        assert reader.conn.publish(TOPIC, b"probe", 0)
        assert wait_until(lambda: len(reader.got) == 2)  # its own subscription hands them back
        asked = next(m for m in reader.got if m.payload == b"asked")
        assert (asked.response_topic, asked.correlation) == ("back/here", b"c1")


def test_an_idle_connection_pings_and_stays(mosquitto: Mosquitto) -> None:
    with reading(mosquitto, keepalive=1) as reader:
        assert wait_until(lambda: mosquitto.log.read_text().count("Received PINGREQ from tablectl-floor-test") >= 3)
        assert not reader.ended.is_set()
        publish(mosquitto, [b"still here"])
        assert wait_until(lambda: len(reader.got) == 1)


@pytest.mark.parametrize(
    ("packet", "words"),
    [
        (b"\x36\x05\x00\x01t\x00\x01", "QoS 3"),  # QoS bits 11
        (b"\x32\x04\x00\x09ab", "topic runs past the packet"),
        (b"\x30\x05\x00\x01t\x05\x01", "properties of 5 bytes run past the packet"),
        (b"\x30\x06\x00\x01t\x02\x7fx", "unknown property 0x7f"),
        (b"\x30\xff\xff\xff\xff\x01", "remaining length longer than 4 bytes"),
        (b"\x50\x02\x00\x01", "packet type 5"),
    ],
)
def test_a_malformed_packet_from_the_broker_ends_the_connection_saying_what_was_wrong(
    packet: bytes, words: str
) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def fake_broker() -> None:
        peer, _ = server.accept()
        with peer:
            peer.recv(4096)  # CONNECT
            peer.sendall(b"\x20\x03\x00\x00\x00")  # CONNACK: no session, success, no properties
            peer.sendall(packet)
            peer.recv(4096)  # until the client closes

    thread = threading.Thread(target=fake_broker, daemon=True)
    thread.start()
    try:
        conn = Connection("127.0.0.1", port, "tablectl-floor-test")
        conn.open(WAIT_S)
        with pytest.raises(MalformedPacket, match=words):
            conn.run(lambda messages: None)
        assert conn.closed.is_set()
    finally:
        thread.join(WAIT_S)
        server.close()


def test_a_refused_connection_says_the_brokers_reason() -> None:
    server = socket.create_server(("127.0.0.1", 0))

    def fake_broker() -> None:
        peer, _ = server.accept()
        with peer:
            peer.recv(4096)
            peer.sendall(b"\x20\x0f\x00\x87\x0c\x1f\x00\x09bad login")  # Not authorized, a reason string

    thread = threading.Thread(target=fake_broker, daemon=True)
    thread.start()
    try:
        conn = Connection("127.0.0.1", server.getsockname()[1], "tablectl-floor-test", username="x", password="y")
        with pytest.raises(MqttError, match=r"refused the connection: reason 0x87 \(bad login\)"):
            conn.open(WAIT_S)
    finally:
        thread.join(WAIT_S)
        server.close()


def test_a_close_that_ends_the_session_leaves_nothing_for_the_broker_to_keep(mosquitto: Mosquitto) -> None:
    """A stopped consumer ends its session (its shared subscription would otherwise stay in the
    group for the session's expiry and be dealt a share of every table's entries); a connection
    that is only dropped keeps it, and what it had not acknowledged comes again."""
    with reading(mosquitto) as reader:
        publish(mosquitto, [b"unacknowledged"])
        assert wait_until(lambda: len(reader.got) == 1)
        reader.conn.abort()  # dropped, as by a SIGKILL: no DISCONNECT
        assert reader.ended.wait(WAIT_S)
    with reading(mosquitto) as again:
        assert again.conn.session_present
        assert wait_until(lambda: [m.payload for m in again.got] == [b"unacknowledged"])
        again.conn.close(end_session=True)  # as FloorConsumer.stop
        assert again.ended.wait(WAIT_S)
    publish(mosquitto, [b"to nobody"])
    with reading(mosquitto) as last:
        assert not last.conn.session_present
        publish(mosquitto, [b"fresh"])
        assert wait_until(lambda: len(last.got) >= 1)
        assert [m.payload for m in last.got] == [b"fresh"]  # neither the old one nor what came while away


def test_connections_that_fail_to_open_leave_no_file_descriptor_behind() -> None:
    """A consumer retries a broker that is down every few seconds, for as long as it is down:
    each failed try closes its socket and its wake pipe."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.close()  # nobody listens there now
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        with pytest.raises(OSError):
            Connection("127.0.0.1", port, "tablectl-floor-test").open(WAIT_S)
    assert len(os.listdir("/proc/self/fd")) <= before
