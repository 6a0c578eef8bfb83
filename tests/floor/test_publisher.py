"""The publisher against a real Mosquitto: in order, nothing lost to a broker outage, a restart of
the table or of a consumer, and the table marked offline when it dies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher, loop_mark
from controller.journal.log import Journal

from .conftest import (
    SITE,
    WAIT_S,
    Mosquitto,
    Subscriber,
    deal_rounds,
    entries_taken,
    floor_config,
    make_publisher,
    make_table,
)

REPO = Path(__file__).resolve().parents[2]


def test_every_journal_entry_arrives_in_order_with_its_settlements_faults_and_meters(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    subscriber = Subscriber(mosquitto.broker).start()
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 2)
    fault = table.raise_fault("shoe-silent", "The shoe has been silent for 3 s")
    table.clear_fault(fault.seq, "dismiss", by="supervisor", reason="cable reseated")
    deal_rounds(table, 1)
    last = table.journal.last_seq
    assert subscriber.wait_for(lambda s: any(m.seq == last for m in s.parsed("entry")))
    publisher.stop()
    subscriber.stop()

    journal = [e.to_json() for e in table.journal.entries()]
    got = [{k: m.payload[k] for k in ("seq", "at", "round", "kind", "body")} for m in subscriber.parsed("entry")]
    assert got == journal  # every entry, in journal order, as committed
    assert all(m.payload["v"] == 1 and m.site == SITE and m.table == "GS-01" for m in subscriber.parsed())
    settlements = subscriber.parsed("settlement")
    assert [m.payload["round"] for m in settlements] == [1, 2, 3]
    assert [m.payload["settlement"] for m in settlements] == [table.rounds[n].settlement for n in (1, 2, 3)]
    faults = subscriber.parsed("fault")
    assert [[f["code"] for f in m.payload["raised"]] for m in faults] == [["shoe-silent"], []]
    assert faults[1].payload["cleared"][0] | {"open": faults[1].payload["open"]} == {
        "id": fault.seq,
        "code": "shoe-silent",
        "action": "dismiss",
        "by": "supervisor",
        "reason": "cable reseated",
        "open": [],
    }
    assert subscriber.parsed("meters")[-1].payload["meters"] == table.meters.to_json()
    assert table.journal.get_meta(MARK_KEY) == str(last)


def test_with_the_broker_down_while_rounds_are_dealt_every_event_arrives_exactly_once_after_it_returns(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    subscriber = Subscriber(mosquitto.broker, "floor-audit", persistent=True).start()
    publisher = make_publisher(floor_config(mosquitto.broker, inflight=8), table)
    publisher.start()
    deal_rounds(table, 2)
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    mosquitto.stop()
    deal_rounds(table, 6)
    in_flight = publisher.status()["sent"] - publisher.acked
    mosquitto.start()
    last = table.journal.last_seq
    assert publisher.wait_acked(last, WAIT_S)
    assert subscriber.wait_for(lambda s: entries_taken(s)[-1:] == [last])
    publisher.stop()
    subscriber.stop()

    assert in_flight <= 8  # the outage queued in the journal, not in memory
    assert entries_taken(subscriber) == list(range(1, last + 1))
    rounds = [m.payload["round"] for m in subscriber.parsed("settlement")]
    assert sorted(set(rounds)) == list(range(1, 9))
    assert table.journal.get_meta(MARK_KEY) == str(last)


def test_a_restarted_table_resumes_after_the_broker_acknowledged_mark_and_loses_nothing(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    subscriber = Subscriber(mosquitto.broker, "floor-audit", persistent=True).start()
    first = make_publisher(floor_config(mosquitto.broker), table, boot="boot-one")
    first.start()
    deal_rounds(table, 2)
    assert first.wait_acked(table.journal.last_seq, WAIT_S)
    acked_before = table.journal.last_seq
    mosquitto.stop()
    deal_rounds(table, 3)  # journaled while the broker is away: never acknowledged
    first.stop()
    table.journal.close()

    mosquitto.start()
    table = make_table(tmp_path)  # the daemon starts again on the same journal
    assert table.journal.get_meta(MARK_KEY) == str(acked_before)
    second = make_publisher(floor_config(mosquitto.broker), table, boot="boot-two")
    second.start()
    last = table.journal.last_seq
    assert subscriber.wait_for(lambda s: entries_taken(s)[-1:] == [last])
    second.stop()
    subscriber.stop()

    assert entries_taken(subscriber) == list(range(1, last + 1))
    boots = {m.seq: m.boot for m in subscriber.parsed("entry")}
    assert {boots[seq] for seq in range(acked_before + 1, last + 1)} == {"boot-two"}
    assert {boots[seq] for seq in range(1, acked_before + 1)} == {"boot-one"}


def test_a_consumer_restarted_mid_stream_resumes_without_gaps(mosquitto: Mosquitto, tmp_path: Path) -> None:
    table = make_table(tmp_path)
    consumer = Subscriber(mosquitto.broker, "floor-accounting", persistent=True).start()
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 2)
    middle = table.journal.last_seq
    assert consumer.wait_for(lambda s: entries_taken(s)[-1:] == [middle])
    consumer.stop()
    deal_rounds(table, 3)  # the consumer is away
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    again = Subscriber(mosquitto.broker, "floor-accounting", persistent=True)
    again.messages = list(consumer.messages)  # what it had stored before it stopped
    again.start()
    last = table.journal.last_seq
    assert again.wait_for(lambda s: entries_taken(s)[-1:] == [last])
    publisher.stop()
    again.stop()

    assert entries_taken(again) == list(range(1, last + 1))


def test_a_stopped_table_leaves_its_retained_status_offline(mosquitto: Mosquitto, tmp_path: Path) -> None:
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 1)
    assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
    online = Subscriber(mosquitto.broker).start()
    assert online.wait_for(lambda s: bool(s.parsed("status")))
    online.stop()
    publisher.stop()

    later = Subscriber(mosquitto.broker).start()  # a viewer that comes after the table left
    assert later.wait_for(lambda s: bool(s.parsed("status")))
    later.stop()
    assert online.parsed("status")[0].payload["status"] == "online"
    status = later.parsed("status")[0].payload
    assert (status["status"], status["reason"], status["game"]) == ("offline", "stopped", "grand-slam")
    meters = later.parsed("meters")  # retained too: a new viewer sees the meters at once
    assert meters and meters[-1].payload["meters"]["rounds"] == 1


DYING_TABLE = """
import sys, time
sys.path.insert(0, {tests!r})
from conftest import deal_rounds, floor_config, make_publisher, make_table
from controller.adapters.floor.config import Broker
from pathlib import Path
table = make_table(Path({state!r}))
publisher = make_publisher(floor_config(Broker("127.0.0.1", {port}, False)), table)
publisher.start()
deal_rounds(table, 1)
publisher.wait_acked(table.journal.last_seq, 15)
print("published", flush=True)
time.sleep(60)
"""


def test_a_table_that_dies_is_marked_offline_by_its_last_will(mosquitto: Mosquitto, tmp_path: Path) -> None:
    script = DYING_TABLE.format(tests=str(Path(__file__).parent), state=str(tmp_path), port=mosquitto.port)
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"published\n"
        watcher = Subscriber(mosquitto.broker).start()
        assert watcher.wait_for(lambda s: [m.payload["status"] for m in s.parsed("status")] == ["online"])
        os.kill(child.pid, signal.SIGKILL)  # a power cut, as far as the broker can tell
        assert watcher.wait_for(lambda s: [m.payload["status"] for m in s.parsed("status")] == ["online", "offline"])
        watcher.stop()
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait()
    offline = watcher.parsed("status")[-1].payload
    assert offline["reason"] == "connection lost" and offline["table"] == "GS-01"
    assert offline["boot"] == watcher.parsed("status")[0].payload["boot"]


def test_entries_sent_again_after_a_crash_are_dropped_by_table_and_seq(mosquitto: Mosquitto, tmp_path: Path) -> None:
    table = make_table(tmp_path)
    subscriber = Subscriber(mosquitto.broker, "floor-audit", persistent=True).start()
    first = make_publisher(floor_config(mosquitto.broker), table, boot="boot-one")
    first.start()
    deal_rounds(table, 3)
    last = table.journal.last_seq
    assert subscriber.wait_for(lambda s: entries_taken(s)[-1:] == [last])
    first.stop()
    # A crash between the broker's acknowledgement and the mark's commit: the mark is behind.
    table.journal.set_meta(MARK_KEY, "2")
    second = make_publisher(floor_config(mosquitto.broker), table, boot="boot-two")
    second.start()
    assert second.wait_acked(last, WAIT_S)
    assert subscriber.wait_for(
        lambda s: [m.seq for m in s.parsed("entry")][-1:] == [last] and len(s.parsed("entry")) > last
    )
    second.stop()
    subscriber.stop()

    again = [m.seq for m in subscriber.parsed("entry") if m.boot == "boot-two"]
    assert again == list(range(3, last + 1))  # sent twice, under the new boot
    assert entries_taken(subscriber) == list(range(1, last + 1))  # kept once
    settlements = subscriber.parsed("settlement")
    settled_at = {m.payload["round"]: m.seq for m in settlements if m.boot == "boot-one"}
    assert sorted(settled_at) == [1, 2, 3]
    repeated = sorted(m.payload["round"] for m in settlements if m.boot == "boot-two")
    assert repeated == sorted(
        n for n, seq in settled_at.items() if (seq or 0) >= 3
    )  # derived ones repeat with their seq
    assert len({(m.table, m.seq) for m in settlements}) == 3  # so (table, seq) drops them too


def test_wired_as_the_daemon_wires_it_the_mark_is_written_on_the_table_loop(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    async def daemon() -> int:
        table = make_table(tmp_path)
        publisher = FloorPublisher(
            floor_config(mosquitto.broker),
            table.journal.path,
            table_id=table.table_id,
            game=table.game_name,
            rules=table.rules_doc,
            mark=loop_mark(table.journal, asyncio.get_running_loop()),
        )
        table.listeners.append(publisher)
        publisher.start()
        deal_rounds(table, 3)  # on the loop, as the table loop journals
        last = table.journal.last_seq
        assert await asyncio.to_thread(publisher.wait_acked, last, WAIT_S)
        await asyncio.to_thread(publisher.stop)
        await asyncio.sleep(0)  # the loop runs the mark writes the publisher handed it
        table.journal.close()
        return last

    last = asyncio.run(daemon())
    assert Journal(tmp_path / "journal.sqlite3", readonly=True).get_meta(MARK_KEY) == str(last)
