"""End-to-end catch-up against a real Mosquitto: a floor store asks the tables for what it lacks, the
tables answer from their journals, and each table keeps what no store has confirmed."""

from __future__ import annotations

import json
import logging
import re
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.adapters.floor import schema
from controller.adapters.floor.catchup import STORED_KEY, retention_limit
from controller.adapters.floor.publisher import MARK_KEY
from controller.floor.store import open_store

from .conftest import (
    SITE,
    WAIT_S,
    Mosquitto,
    Postgres,
    deal_rounds,
    floor_config,
    make_consumer,
    make_publisher,
    make_table,
    postgres_bin,
    store_matches_journal,
    wait_until,
)


class Asker:
    """A bare MQTT 5 client that sends catch-up requests by hand and records the replies."""

    def __init__(self, mosquitto: Mosquitto, consumer: str = "asker") -> None:
        self.consumer = consumer
        self.replies: list[tuple[dict[str, Any], bytes | None]] = []
        self.changed = threading.Condition()
        subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_subscribe = lambda c, u, mid, rc, p: subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", mosquitto.port, clean_start=True)
        self.client.loop_start()
        self.client.subscribe(schema.reply_filter(consumer), qos=1)
        assert subscribed.wait(WAIT_S)

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        with self.changed:
            self.replies.append((json.loads(message.payload), getattr(message.properties, "CorrelationData", None)))
            self.changed.notify_all()

    def ask(self, request: dict[str, Any] | bytes, table: str = "GS-01", response: str | None = None) -> None:
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.ResponseTopic = response or schema.reply_topic(SITE, table, self.consumer)
        props.CorrelationData = b"ask-1"
        data = request if isinstance(request, bytes) else json.dumps(request).encode()
        self.client.publish(schema.request_topic(SITE, table), data, 1, properties=props).wait_for_publish(WAIT_S)

    def wait_end(self, count: int = 1, timeout: float = WAIT_S) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: sum(r["reply"] == "end" for r, _ in self.replies) >= count, timeout)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_a_table_answers_a_catch_up_request_in_journal_order_and_records_the_store_confirmed_mark(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 4)
    last = table.journal.last_seq
    assert publisher.wait_acked(last, WAIT_S)
    asker = Asker(mosquitto)
    asker.ask({"v": 1, "after": 3, "limit": 5, "store": "store-x"})
    assert asker.wait_end()
    assert wait_until(lambda: table.journal.get_meta(STORED_KEY) is not None)
    status = publisher.status()
    publisher.stop()
    asker.stop()

    entries = [r for r, _ in asker.replies if r["reply"] == "entry"]
    journal = [e.to_json() for e in table.journal.entries()]
    assert [{k: r[k] for k in ("seq", "at", "round", "kind", "body")} for r in entries] == journal[3:8]
    end = asker.replies[-1][0]
    assert (end["reply"], end["after"], end["through"], end["last"], end["more"]) == ("end", 3, 8, last, True)
    assert {c for _, c in asker.replies} == {b"ask-1"}  # every reply carries the request's correlation data
    # The broker's mark is at the end; what a store confirmed is only what it said it holds.
    assert table.journal.get_meta(MARK_KEY) == str(last)
    assert json.loads(table.journal.get_meta(STORED_KEY) or "") == {"store-x": 3}
    assert status["stored"] == {"store-x": 3} and status["acked"] == last


def test_requests_the_table_cannot_answer_are_refused_loudly_and_the_table_keeps_publishing(
    mosquitto: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tablectl.floor")
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 1)
    first = table.journal.last_seq
    asker = Asker(mosquitto)
    asker.ask({"v": 1, "after": 0}, response=schema.reply_topic(SITE, "GS-02", "asker"))  # another table's tree
    asker.ask(b"{not json")
    asker.ask({"v": 1, "after": 10_000, "store": "store-x"})  # more than this journal ever wrote
    assert asker.wait_end()
    deal_rounds(table, 1)
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    publisher.stop()
    asker.stop()

    [(end, _)] = asker.replies
    assert end["error"] == f"the journal of GS-01 ends at {first}, before 10000"
    assert table.journal.get_meta(STORED_KEY) is None  # a store claiming too much confirms nothing
    said = caplog.text
    assert "the response topic must be tablectl/test-floor/GS-01/catchup/reply/<consumer>" in said
    assert "the payload is not JSON" in said
    assert "store store-x says it holds entries up to 10000 but this journal ends at" in said


def test_a_consumer_that_was_away_gets_what_it_missed_from_the_table_and_confirms_it(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    consumer = make_consumer(mosquitto.broker, url)
    deal_rounds(table, 2)
    assert wait_until(lambda: store_matches_journal(url, table))
    consumer.stop()  # clean start, no session: the broker keeps nothing for it
    deal_rounds(table, 3)
    last = table.journal.last_seq
    assert publisher.wait_acked(last, WAIT_S)
    assert retention_limit(table.journal) < last  # the broker has it all; no store has confirmed it
    again = make_consumer(mosquitto.broker, url)
    assert wait_until(lambda: store_matches_journal(url, table))
    store = open_store(url)
    store_id = store.store_id
    store.close()
    assert wait_until(lambda: json.loads(table.journal.get_meta(STORED_KEY) or "{}").get(store_id) == last)
    again.stop()
    publisher.stop()
    assert retention_limit(table.journal) == last


def test_twenty_tables_into_one_postgresql_store_every_entry_once_in_order(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path
) -> None:
    url = postgres.new_database()
    tables = [make_table(tmp_path / f"t{n}", f"GS-{n:02d}") for n in range(1, 21)]
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()
    consumer = make_consumer(mosquitto.broker, url, probe_s=2.0)
    for _ in range(2):
        for t in tables:
            deal_rounds(t, 1)
    try:
        assert wait_until(lambda: all(store_matches_journal(url, t) for t in tables), every=0.3)
    finally:
        consumer.stop()
        for p in publishers:
            p.stop()
    store = open_store(url)
    assert store.count() == sum(t.journal.last_seq for t in tables)
    assert store.tables() == [(SITE, t.table_id) for t in tables]
    store.close()


def test_a_consumer_started_an_hour_after_the_tables_catches_up_from_the_tables_alone(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    tables = [make_table(tmp_path / f"t{n}", f"GS-{n:02d}") for n in range(1, 4)]
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()
    # An hour of play (about 60 rounds a table, dealt here at once) with no store on the floor:
    # the broker acknowledges everything and keeps none of it for a consumer that does not exist.
    for t in tables:
        deal_rounds(t, 60)
    for p, t in zip(publishers, tables, strict=True):
        assert p.wait_acked(t.journal.last_seq, WAIT_S)
    url = f"sqlite://{tmp_path}/floor.db"
    consumer = make_consumer(mosquitto.broker, url)
    try:
        assert wait_until(lambda: all(store_matches_journal(url, t) for t in tables), every=0.2)
    finally:
        consumer.stop()
        for p in publishers:
            p.stop()
    assert min(t.journal.last_seq for t in tables) > 150


def test_a_store_server_that_goes_away_loses_nothing_and_the_consumer_carries_on(
    mosquitto: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="tablectl.floor.consumer")
    server = Postgres(postgres_bin())  # its own server: this test stops it
    server.start()
    try:
        url = server.new_database()
        table = make_table(tmp_path)
        publisher = make_publisher(floor_config(mosquitto.broker), table)
        publisher.start()
        consumer = make_consumer(mosquitto.broker, url)
        try:
            deal_rounds(table, 2)
            assert wait_until(lambda: store_matches_journal(url, table))
            server.halt()  # the store's server goes down while the table deals on
            deal_rounds(table, 3)
            assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
            assert wait_until(lambda: "could not store a batch" in caplog.text)
            server.resume()
            assert wait_until(lambda: store_matches_journal(url, table))
        finally:
            consumer.stop()
            publisher.stop()
    finally:
        server.stop()
    assert "the tables keep them" in caplog.text


def test_two_consumers_feeding_one_store_never_double_a_row(mosquitto: Mosquitto, tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 2)  # before either consumer: both will ask the table for it
    consumers = [make_consumer(mosquitto.broker, url, f"store-{n}") for n in (1, 2)]
    try:
        deal_rounds(table, 3)  # live, to both
        assert wait_until(lambda: store_matches_journal(url, table))
    finally:
        for c in consumers:
            c.stop()
        publisher.stop()
    store = open_store(url)
    assert store.count() == table.journal.last_seq
    store.close()


def test_a_table_asked_for_pages_answers_many_entries_a_message_in_journal_order(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    """A day's catch-up as a few large messages, not one message an entry (issue 32): a request
    with `page` gets the entries `page` to a message, up to `page_limit` of them, then the end."""
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 4)
    last = table.journal.last_seq
    assert last > 12
    assert publisher.wait_acked(last, WAIT_S)
    asker = Asker(mosquitto)
    asker.ask({"v": 1, "after": 3, "limit": 5, "page": 3, "page_limit": 8, "store": "store-x"})
    assert asker.wait_end()
    publisher.stop()
    asker.stop()

    replies = [r for r, _ in asker.replies]
    assert [r["reply"] for r in replies] == ["page", "page", "page", "end"]
    assert [len(r["entries"]) for r in replies[:3]] == [3, 3, 2]
    journal = [e.to_json() for e in table.journal.entries()]
    assert [row for r in replies[:3] for row in r["entries"]] == journal[3:11]
    assert all(schema.parse_reply(schema.reply_topic(SITE, "GS-01", "asker"), json.dumps(r).encode()) for r in replies)
    end = replies[-1]
    assert (end["after"], end["through"], end["last"], end["more"]) == (3, 11, last, True)


def test_a_page_with_a_bad_entry_is_refused_naming_the_entry() -> None:
    topic = schema.reply_topic(SITE, "GS-01", "store-1")
    good = {"seq": 4, "at": "2026-12-02T10:00:00.000Z", "round": 1, "kind": "card", "body": {}}
    page = {"v": 1, "site": SITE, "table": "GS-01", "boot": "b", "reply": "page"}
    for rows, said in (
        ([good, {**good, "seq": 4}], "entries[1] of the page: seq must be a journal sequence number after 4, not 4"),
        ([good, {**good, "seq": 5, "body": "x"}], "entries[1]: entry 5: body must be a JSON object"),
        ([], "a page's entries must be a list of entries"),
    ):
        with pytest.raises(schema.FloorMessageError, match=re.escape(said)):
            schema.parse_reply(topic, json.dumps({**page, "entries": rows}).encode())


def test_a_consumer_fills_its_store_from_a_table_from_before_pages(
    mosquitto: Mosquitto, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table running the code from before pages ignores `page` and answers entry by entry, at
    most REPLY_LIMIT an ask: the consumer, which asks for pages, reads that form as well."""
    from controller.adapters.floor.catchup import CatchupResponder

    monkeypatch.setattr(schema, "REPLY_LIMIT", 10)  # a backlog of several asks
    heard = CatchupResponder._on_message

    def before_pages(self: CatchupResponder, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        request = json.loads(message.payload)
        assert request["page"] == schema.PAGE  # the consumer asked for pages
        del request["page"], request["page_limit"]
        message.payload = json.dumps(request).encode()
        heard(self, client, userdata, message)

    monkeypatch.setattr(CatchupResponder, "_on_message", before_pages)
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 12)  # with no store on the floor: the broker keeps none of it
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    assert table.journal.last_seq > 30
    url = f"sqlite://{tmp_path}/floor.db"
    consumer = make_consumer(mosquitto.broker, url)
    try:
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
    finally:
        consumer.stop()
        publisher.stop()
