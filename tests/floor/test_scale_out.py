"""Several floor store consumers sharing the work (issue 32): MQTT 5 shared subscriptions on a real
Mosquitto, one real PostgreSQL, every entry exactly once whoever took it, through a consumer
SIGKILLed mid-stream, a broker restart and two consumers racing on a catch-up."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.adapters.floor import schema
from controller.floor import consumer as consumer_module
from controller.floor.consumer import FloorConsumer
from controller.floor.store import open_store
from controller.table import Table

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
    store_matches_journal,
    wait_until,
)
from .test_catchup import Asker

REPO = Path(__file__).resolve().parents[2]
GROUP = "floor-stores"


def group_consumer(mosquitto: Mosquitto, url: str, name: str, **options: Any) -> FloorConsumer:
    consumer = FloorConsumer(mosquitto.broker, url, consumer_id=name, group=GROUP, **options)
    consumer.start()
    return consumer


def test_a_group_stores_every_entry_once_through_a_consumer_killed_mid_stream_and_a_broker_restart(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path
) -> None:
    url = postgres.new_database()
    tables = [make_table(tmp_path / f"t{n}", f"GS-{n:02d}") for n in range(1, 5)]
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()
    consumers = [group_consumer(mosquitto, url, f"store-{n}", probe_s=2.0, ask_timeout_s=5.0) for n in (1, 2)]
    log = (tmp_path / "store-3.log").open("wb")
    killed = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "floor", "--broker", f"mqtt://127.0.0.1:{mosquitto.port}",
         "--store", url, "--group", GROUP, "--consumer-id", "store-3", "--probe", "2"],
        cwd=REPO, stdout=log, stderr=log,
    )  # fmt: skip
    try:
        assert wait_until(lambda: "floor store: connected to" in (tmp_path / "store-3.log").read_text(), WAIT_S * 2)
        for c in consumers:
            assert c.connected.wait(WAIT_S)
        dealer = threading.Thread(target=lambda: [deal_rounds(t, 6) for t in tables])
        dealer.start()
        # The third consumer is killed while the broker is handing it its share of the live feed.
        assert wait_until(lambda: "Sending PUBLISH to tablectl-floor-store-3" in mosquitto.log.read_text(), WAIT_S)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        dealer.join()
        mosquitto.kill()  # the broker forgets what it had not saved; the tables deal on
        for t in tables:
            deal_rounds(t, 2)
        mosquitto.start()
        for t in tables:
            deal_rounds(t, 2)
        assert wait_until(lambda: all(store_matches_journal(url, t) for t in tables), WAIT_S * 4, every=0.3)
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
        for c in consumers:
            c.stop()
        for p in publishers:
            p.stop()
    store = open_store(url)
    try:
        assert store.count() == sum(t.journal.last_seq for t in tables)  # once each, whoever took it
        assert all(store.alerts(SITE, t.table_id) == [] for t in tables)
    finally:
        store.close()
    assert all(c.stored > 0 for c in consumers)  # both survivors took a share


class Spy:
    """Every catch-up request and reply `end` on the broker, in the order the broker passed them on."""

    def __init__(self, mosquitto: Mosquitto) -> None:
        self.seen: list[tuple[str, str, dict[str, Any], bytes | None]] = []  # (table, request|end, payload, corr)
        self.lock = threading.Lock()
        subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.on_subscribe = lambda c, u, mid, rc, p: subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", mosquitto.port, clean_start=True)
        self.client.loop_start()
        self.client.subscribe("tablectl/+/+/catchup/#", qos=1)
        assert subscribed.wait(WAIT_S)

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        payload = json.loads(message.payload)
        table = message.topic.split("/")[2]
        correlation = getattr(message.properties, "CorrelationData", None)
        kind = "request" if message.topic.endswith("/request") else payload["reply"]
        if kind not in ("entry", "page"):
            with self.lock:
                self.seen.append((table, kind, payload, correlation))

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_two_consumers_racing_on_a_catch_up_never_ask_a_table_twice_at_once_and_fill_it_together(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "REPLY_LIMIT", 40)  # a backlog of several chunks
    monkeypatch.setattr(schema, "PAGED_LIMIT", 40)  # (in pages of 15)
    monkeypatch.setattr(schema, "PAGE", 15)
    url = postgres.new_database()
    tables = [make_table(tmp_path / f"t{n}", f"GS-{n:02d}") for n in range(1, 4)]
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()
    for t in tables:  # played with no store on the floor: the broker keeps none of it
        deal_rounds(t, 25)
    for p, t in zip(publishers, tables, strict=True):
        assert p.wait_acked(t.journal.last_seq, WAIT_S)
    spy = Spy(mosquitto)
    # Both start at once, and both probe every table they know every 2 s: both would ask every
    # table again and again. A claim lapses only after 60 s: none does here.
    consumers = [group_consumer(mosquitto, url, f"store-{n}", probe_s=2.0, ask_timeout_s=60.0) for n in (1, 2)]
    try:
        assert wait_until(lambda: all(store_matches_journal(url, t) for t in tables), WAIT_S * 4, every=0.3)
    finally:
        for c in consumers:
            c.stop()
        spy.stop()
        for p in publishers:
            p.stop()
    with spy.lock:
        seen = list(spy.seen)
    for t in tables:
        events = [(kind, payload, corr) for table, kind, payload, corr in seen if table == t.table_id]
        requests = [e for e in events if e[0] == "request"]
        assert len(requests) >= t.journal.last_seq // 40  # a chunk an ask
        # Each ask is answered (its `end`, same correlation) before the next ask goes out.
        for n, (kind, _payload, corr) in enumerate(events):
            assert kind == ("request" if n % 2 == 0 else "end"), (t.table_id, n, events[: n + 1])
            if kind == "end":
                assert corr == events[n - 1][2]
        assert len({corr for _, _, corr in requests}) == len(requests)
    assert all(c.stored > 0 for c in consumers)  # the replies went to the group: both stored some


def test_a_table_names_the_holes_in_its_own_journal_in_its_answer_and_sends_from_where_asked(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 2)
    last = table.journal.last_seq
    assert publisher.wait_acked(last, WAIT_S)
    db = sqlite3.connect(table.journal.path)
    with db:
        db.execute("DROP TRIGGER entries_no_delete")  # a journal trimmed by hand
        db.execute("DELETE FROM entries WHERE seq IN (4, 5)")
    db.close()
    asker = Asker(mosquitto)
    asker.ask({"v": 1, "after": 1, "from": 2, "limit": 40, "store": "store-x"})
    assert asker.wait_end()
    publisher.stop()
    asker.stop()
    replies = [r for r, _ in asker.replies]
    assert [r["seq"] for r in replies if r["reply"] == "entry"] == [3, *range(6, last + 1)]
    end = replies[-1]
    assert (end["after"], end["through"], end["more"], end["gaps"]) == (1, last, False, [[4, 5]])
    assert json.loads(table.journal.get_meta("floor.stored") or "{}") == {"store-x": 1}  # `after`, not `from`


def test_claims_keep_a_second_ask_out_until_the_answer_or_the_claim_lapses(postgres: Postgres) -> None:
    url = postgres.new_database()
    first, second = open_store(url), open_store(url)  # two consumers' connections to one store
    try:
        assert first.claim(SITE, "GS-01", "store-1", "aa", hold_s=60)
        assert not second.claim(SITE, "GS-01", "store-2", "bb", hold_s=60)
        assert second.claim(SITE, "GS-02", "store-2", "bb", hold_s=60)  # another table: free
        assert not second.release(SITE, "GS-01", "bb")  # not its ask
        assert second.release(SITE, "GS-01", "aa")  # the answer came to store-2: the claim ends
        assert second.claim(SITE, "GS-01", "store-2", "cc", hold_s=0)
        assert wait_until(lambda: first.claim(SITE, "GS-01", "store-1", "dd", hold_s=60))  # lapsed
    finally:
        first.close()
        second.close()


def test_a_group_on_sqlite_is_refused_saying_sqlite_is_the_one_consumer_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from controller.cli.main import main

    code = main(["floor", "--broker", "mqtt://127.0.0.1:1883", "--store", f"sqlite://{tmp_path}/floor.db",
                 "--group", GROUP])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0
    assert "--group floor-stores: several consumers share one PostgreSQL store; SQLite is the one-consumer" in err
    assert not (tmp_path / "floor.db").exists()


def test_a_consumer_whose_store_stalls_holds_a_bounded_backlog_and_stores_every_entry_once_after(
    mosquitto: Mosquitto, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that cannot keep up (here: locked by another writer) makes paho's thread wait for
    room in the consumer's inbox, so the broker's backlog stays on the broker and in the socket,
    not in the consumer's memory (it once grew without bound: 46 -> 309 MB in floor_scale); none
    of it is acknowledged before it is stored, and all of it is stored once the store is free."""
    monkeypatch.setattr(consumer_module, "INBOX", 10, raising=False)
    path = tmp_path / "floor.db"
    url = f"sqlite://{path}"
    table = make_table(tmp_path / "t1", "GS-01")
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    consumer = make_consumer(mosquitto.broker, url, probe_s=60.0)
    lock = None
    try:
        assert consumer.connected.wait(WAIT_S)
        deal_rounds(table, 1)
        assert wait_until(lambda: store_matches_journal(url, table))
        lock = sqlite3.connect(path, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # the store's writer waits (its busy timeout is 30 s)
        sent_before = _sent_to(mosquitto, "tablectl-floor-store-1")
        deal_rounds(table, 25)
        assert table.journal.last_seq - sent_before > 40
        most = 0

        def all_sent() -> bool:
            nonlocal most
            most = max(most, consumer._inbox.qsize())
            return _sent_to(mosquitto, "tablectl-floor-store-1") >= table.journal.last_seq

        assert wait_until(all_sent, WAIT_S)
        most = max(most, consumer._inbox.qsize())
        lock.execute("ROLLBACK")
        lock.close()
        lock = None
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
        assert most <= 10  # the inbox never held more than its bound, however much the broker sent
    finally:
        if lock is not None:
            lock.close()
        consumer.stop()
        publisher.stop()


def _sent_to(mosquitto: Mosquitto, client_id: str) -> int:
    """How many entries the broker has written to `client_id` (its log, log_type all)."""
    text = mosquitto.log.read_text()
    return sum(1 for line in text.splitlines() if f"Sending PUBLISH to {client_id} " in line and "/surveillance/" in line)


def test_a_batch_never_waits_for_a_table_another_consumer_is_settling(postgres: Postgres) -> None:
    """Consumers of a group each get a share of every table's entries, so their batches span the
    same tables: a batch that waited for each table's row held by another consumer's batch made
    them take turns. Now the entries go in at once; the mark moves and the chain is walked when
    the row is free (the consumer's next batch, or `settle` when idle)."""
    import psycopg

    from controller.floor.store import StoredEntry

    def entry(seq: int) -> StoredEntry:
        return StoredEntry(SITE, "GS-01", seq, "boot-1", f"2026-12-02T10:00:0{seq}.000Z", None, "note", {"n": seq})

    url = postgres.new_database()
    store = open_store(url)
    other = psycopg.connect(url, autocommit=True)  # another consumer, mid-batch on GS-01
    done = threading.Event()
    try:
        store.add([entry(1), entry(2)])
        other.execute("BEGIN")
        other.execute("SELECT 1 FROM floor_tables WHERE site = %s AND table_id = 'GS-01' FOR UPDATE", (SITE,))

        def add() -> None:
            store.add([entry(3), entry(4)])
            done.set()

        threading.Thread(target=add, daemon=True).start()
        assert done.wait(WAIT_S), "the batch waited for the row another consumer held"
        assert store.count() == 4  # stored at once
        assert store.progress(SITE, "GS-01").contiguous == 2  # not settled while the row is held
        assert store.unsettled == 1
        other.execute("ROLLBACK")
        assert store.settle() == {}
        assert store.progress(SITE, "GS-01").contiguous == 4
        assert store.history(SITE, "GS-01")["seq"] == 4  # the chain walked over the four
        assert store.unsettled == 0
    finally:
        if not done.is_set():
            other.execute("ROLLBACK")  # let the waiting batch end
            done.wait(WAIT_S)
        other.close()
        store.close()


def test_a_batch_from_before_a_reconnection_is_stored_but_never_acknowledged_on_the_new_connection(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    """A message id means something only on the connection it came on. A batch whose store was
    slow while the broker restarted was acknowledged, by its old ids, on the new connection:
    the broker took those as acknowledgements of its new messages, not yet stored (and sent
    more than the consumer's Receive Maximum). Now the batch is stored, and not acknowledged."""
    path = tmp_path / "floor.db"
    url = f"sqlite://{path}"
    table = make_table(tmp_path / "t1", "GS-01")
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    consumer = make_consumer(mosquitto.broker, url, probe_s=600.0)
    lock = None
    try:
        assert consumer.connected.wait(WAIT_S)
        deal_rounds(table, 1)
        assert wait_until(lambda: store_matches_journal(url, table))
        lock = sqlite3.connect(path, isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # the store's writer waits (its busy timeout is 30 s)
        deal_rounds(table, 3)
        assert wait_until(lambda: _sent_to(mosquitto, "tablectl-floor-store-1") >= table.journal.last_seq)
        publisher.stop()  # nothing new for the consumer on its next connection but the statuses
        mosquitto.stop()
        before = len(mosquitto.log.read_text())
        mosquitto.start()
        assert wait_until(lambda: consumer.connected.is_set() and "Received SUBSCRIBE from tablectl-floor-store-1"
                          in mosquitto.log.read_text()[before:])  # fmt: skip
        lock.execute("ROLLBACK")
        lock.close()
        lock = None
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
        assert wait_until(lambda: consumer.stored >= table.journal.last_seq)
        after = mosquitto.log.read_text()[before:].splitlines()
        sent = {_mid(line) for line in after if "Sending PUBLISH to tablectl-floor-store-1 (" in line}
        acked = [_mid(line) for line in after if "Received PUBACK from tablectl-floor-store-1 " in line]
        assert set(acked) <= sent - {0}, (sorted(acked), sorted(sent))
    finally:
        if lock is not None:
            lock.close()
        consumer.stop()
        publisher.stop()


def _mid(line: str) -> int:
    """The message id of a Mosquitto log line: `(d0, q1, r0, m7, ...` or `(Mid: 7, RC:0)`."""
    if "Mid: " in line:
        return int(line.split("Mid: ")[1].split(",")[0].split(")")[0])
    return int(line.split(", m")[1].split(",")[0])


def _played_with_no_store(mosquitto: Mosquitto, tmp_path: Path) -> Table:
    """A table that dealt 6 rounds with no store on the floor (the broker keeps none of it), then
    left the floor: its publisher stopped and no longer listening."""
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 6)
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    publisher.stop()
    table.listeners.remove(publisher)
    return table


def test_a_table_that_says_it_is_far_behind_is_asked_at_once_not_after_the_groups_grace(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The grace (another consumer may hold the entries in between, uncommitted) is an hour here,
    # and no probe comes within the test: the backlog comes in only if the store asks the table
    # as soon as it sees how far behind it is (its status, or its next entries' seqs).
    monkeypatch.setattr(consumer_module, "FAR_BEHIND", 20)
    url = postgres.new_database()
    table = _played_with_no_store(mosquitto, tmp_path)
    eraser = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)  # its retained status gone
    eraser.connect("127.0.0.1", mosquitto.port)
    eraser.loop_start()
    eraser.publish(schema.topic(SITE, table.table_id, "status"), b"", 1, retain=True).wait_for_publish(WAIT_S)
    eraser.disconnect()
    eraser.loop_stop()
    consumer = group_consumer(mosquitto, url, "store-1", probe_s=3600.0, grace_s=3600.0)
    back = make_publisher(floor_config(mosquitto.broker), table)
    try:
        assert consumer.connected.wait(WAIT_S)
        assert wait_until(lambda: not consumer._ask_all.is_set())  # its probe at connection: no table known yet
        back.start()  # the table comes back and deals on
        deal_rounds(table, 1)
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
    finally:
        consumer.stop()
        back.stop()
    assert table.journal.last_seq > 20


def test_a_table_first_found_a_little_behind_then_far_behind_is_asked_at_once_not_after_the_grace(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its retained status comes first and says it lacks no more than FAR_BEHIND: the store waits out
    # the grace (an hour here) before asking. Its next entries then show it far behind: it is asked
    # at once (this ordering, status before entries, left it waiting the hour before).
    url = postgres.new_database()
    table = _played_with_no_store(mosquitto, tmp_path)
    monkeypatch.setattr(consumer_module, "FAR_BEHIND", table.journal.last_seq)
    consumer = group_consumer(mosquitto, url, "store-1", probe_s=3600.0, grace_s=3600.0)
    back = make_publisher(floor_config(mosquitto.broker), table)
    try:
        assert consumer.connected.wait(WAIT_S)
        assert wait_until(lambda: _reported_last(url, table) == table.journal.last_seq)  # the status, first
        assert consumer.asks == 0  # a little behind: within the grace
        back.start()  # the table comes back and deals on: its entries show it far behind
        deal_rounds(table, 1)
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
        assert consumer.asks >= 1
    finally:
        consumer.stop()
        back.stop()


def _reported_last(url: str, table: Table) -> int | None:
    store = open_store(url)
    try:
        return store.progress(SITE, table.table_id).reported_last
    finally:
        store.close()


def test_an_ask_nobody_answered_is_sent_again_once_its_claim_lapses_however_long_the_grace(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The table's retained status says it is far behind, but the table is off the floor: the first
    # ask goes nowhere (as one sent before a starting table's responder has subscribed). With an
    # hour's grace and no probe in the test, the table is caught up only if the lost ask is sent
    # again once its claim lapses (ask_timeout_s), as the consumer's docstring promises.
    monkeypatch.setattr(consumer_module, "FAR_BEHIND", 5)
    url = postgres.new_database()
    table = _played_with_no_store(mosquitto, tmp_path)
    consumer = group_consumer(mosquitto, url, "store-1", probe_s=3600.0, grace_s=3600.0, ask_timeout_s=1.0)
    back = make_publisher(floor_config(mosquitto.broker), table)
    try:
        assert wait_until(lambda: consumer.asks >= 1)  # asked at once (far behind), and nobody answered
        back.start()
        assert wait_until(lambda: store_matches_journal(url, table), WAIT_S * 2, every=0.2)
        assert consumer.asks >= 2
    finally:
        consumer.stop()
        back.stop()
    assert table.journal.last_seq > 5


def test_a_consumer_asks_at_most_asks_most_tables_at_once_and_the_next_as_one_ends(
    mosquitto: Mosquitto, postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables far behind are asked a few at a time (consumer.ASKS_MOST; the next once an answer
    ends), never all at once: 1,000 tables an hour behind asked at once had the broker queue
    gigabytes of catch-up pages (Mosquitto was OOM-killed at 23 GB)."""
    monkeypatch.setattr(consumer_module, "ASKS_MOST", 1)
    url = postgres.new_database()
    tables = [make_table(tmp_path / f"t{n}", f"GS-{n:02d}") for n in range(1, 5)]
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()
    for t in tables:
        deal_rounds(t, 2)  # no store on the floor: the broker keeps none of it
    for p in publishers:
        p.stop()
    before = len(mosquitto.log.read_text())
    publishers = [make_publisher(floor_config(mosquitto.broker), t) for t in tables]
    for p in publishers:
        p.start()  # back on the floor: each one's retained status says how far its journal goes
    for t in tables:
        assert wait_until(lambda t=t: f"Received SUBSCRIBE from tablectl-{SITE}-{t.table_id}"
                          in mosquitto.log.read_text()[before:])  # fmt: skip
    store = open_store(url)  # the store heard them say so before (their statuses): it knows they are behind
    try:
        store.reported_many({(SITE, t.table_id): t.journal.last_seq for t in tables})
    finally:
        store.close()
    spy = Spy(mosquitto)
    consumer = group_consumer(mosquitto, url, "store-1", probe_s=3600.0, grace_s=0.0, ask_timeout_s=30.0)
    try:
        assert wait_until(lambda: all(store_matches_journal(url, t) for t in tables), WAIT_S * 2, every=0.2)
    finally:
        consumer.stop()
        spy.stop()
        for p in publishers:
            p.stop()
    out: set[bytes | None] = set()
    most = asked = 0
    with spy.lock:
        for _table, kind, payload, correlation in spy.seen:
            if kind == "request" and payload["page_limit"] == schema.PAGED_LIMIT:  # a catch-up, not a probe
                out.add(correlation)
                asked += 1
            elif kind == "end":
                out.discard(correlation)
            most = max(most, len(out))
    assert asked >= len(tables)  # each table asked
    assert most == 1  # never two at once
