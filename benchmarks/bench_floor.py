"""The floor link: how fast one table's journal reaches a subscriber, and a floor of 20 tables.

A Mosquitto broker runs on 127.0.0.1 (Debian's `mosquitto`, started here from a config file in a
temporary directory and stopped by its PID). Tables are real `Table`s on real journals (WAL,
synchronous=FULL: every entry is fsync'd) dealing Grand Slam rounds; each has a real
FloorPublisher. One subscriber on `tablectl/#` at QoS 1, in this process, stamps every entry as
paho hands it over. An entry's start is a table listener placed before the publisher: it runs
right after the entry is committed and applied, so the latency is journal commit -> subscriber,
through the publisher's wake-up, its journal read, the broker and the subscriber's network thread.
All stamps are CLOCK_MONOTONIC. Everything shares this process (and its GIL) and the two cores
with the broker, so the figures are what a floor server would see at most, not better.

  backlog   2000 entries already in a journal (a broker outage, or a table first joining the
            floor): entries per second from the publisher's start to the last one's arrival. This
            is the publisher's own rate, with no journal commit in the way; the ratio is this
  burst     one table journals 2000 entries as fast as it can (each an fsync'd commit) with the
            publisher running: entries per second from the first commit to the last arrival
  paced     one table, an entry every 5 ms (200/s, about a hundred times a fast dealer's pace):
            latency p50/p99
  floor     20 tables in 20 threads, each an entry every 50 ms (400/s in all), for 5 s: latency
            p50/p99 across the floor, and every entry of every table received (after dropping
            repeats by (table, seq))
"""

from __future__ import annotations

import getpass
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, FloorConfig
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher
from controller.engine.cards import parse_card
from controller.journal.log import Entry, Journal
from controller.table import Table
from controller.testing import free_port

BURST = 2000
PACED = 1000
PACE_S = 0.005
TABLES = 20
FLOOR_PACE_S = 0.05
FLOOR_S = 5.0
DEALER_PACE = 1.0  # entries per second at a fast table: a card about every second
DECK = [f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"]


@contextmanager
def mosquitto(home: Path) -> Iterator[Broker]:
    binary = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    if binary is None:
        raise RuntimeError("the mosquitto broker is missing: install Debian's package `mosquitto`")
    port = free_port()
    conf = home / "mosquitto.conf"
    conf.write_text(
        f"listener {port} 127.0.0.1\nuser {getpass.getuser()}\nallow_anonymous true\nmax_queued_messages 0\n"
    )
    process = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.01)
        yield Broker("127.0.0.1", port, False)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


class Stamps:
    """A listener placed before the publisher: when each entry of each table was committed."""

    def __init__(self) -> None:
        self.committed: dict[tuple[str, int], float] = {}

    def update(self, table: Table, entry: Entry, effects: tuple[Any, ...]) -> None:
        self.committed[(table.table_id, entry.seq)] = time.monotonic()

    def redrive(self, table: Table) -> None:
        pass


class Receiver:
    """One subscriber on tablectl/#: when each entry first arrived, repeats dropped by (table, seq)."""

    def __init__(self, broker: Broker) -> None:
        self.arrived: dict[tuple[str, int], float] = {}
        self.repeats = 0
        self.ledger = schema.Ledger()
        self.lock = threading.Condition()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe("tablectl/+/+/entry", qos=1)
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.subscribed.wait(10)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        now = time.monotonic()
        parsed = schema.parse(message.topic, message.payload)
        with self.lock:
            if self.ledger.take(parsed) and parsed.seq is not None:
                self.arrived[(parsed.table, parsed.seq)] = now
            else:
                self.repeats += 1
            self.lock.notify_all()

    def wait(self, count: int, timeout: float = 60.0) -> None:
        with self.lock:
            if not self.lock.wait_for(lambda: len(self.arrived) >= count, timeout):
                raise RuntimeError(f"only {len(self.arrived)} of {count} entries arrived")

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def new_table(
    state: Path, table_id: str, broker: Broker, stamps: Stamps, backlog: int = 0
) -> tuple[Table, FloorPublisher, float]:
    """A table with `backlog` entries already journaled, its publisher started (and when)."""
    journal = Journal(state / table_id / "journal.sqlite3")
    table = Table(journal, game="grand-slam", rules={}, table_id=table_id, simulated=True)
    deal(table, backlog)
    publisher = FloorPublisher(
        FloorConfig(broker=broker, site="bench"),
        journal.path,
        table_id=table_id,
        game="grand-slam",
        rules={},
        mark=lambda seq: journal.set_meta(MARK_KEY, str(seq)),
    )
    table.listeners += [stamps, publisher]
    started = time.monotonic()
    publisher.start()
    return table, publisher, started


def deal(table: Table, entries: int, pace_s: float = 0.0, until: float | None = None) -> None:
    """Journal `entries` entries (or until the monotonic `until`): rounds opened and dealt, with a
    fresh shoe whenever the 6 decks run low."""
    done = 0
    next_at = time.monotonic()
    while done < entries and (until is None or time.monotonic() < until):
        if table.awaiting.kind == "round":
            if table.payouts_due():  # the dealer pays the last round before the next opens
                table.button("confirm", by="bench")
            elif table.shoe.remaining_count < 20:
                table.shoe_reshuffled(by="bench")
            else:
                table.open_round({"seats": [{"seat": 2, "wagers": {"first": 10}}]}, by="bench")
        else:
            table.card(parse_card(DECK[table.shoe.dealt_count % len(DECK)]), {"via": "bench"})
        done += 1
        if pace_s:
            next_at += pace_s
            time.sleep(max(0.0, next_at - time.monotonic()))


def latencies(stamps: Stamps, receiver: Receiver) -> list[float]:
    return [
        (receiver.arrived[key] - start) * 1000 for key, start in stamps.committed.items() if key in receiver.arrived
    ]


def percentiles(values_ms: list[float]) -> dict[str, float]:
    ordered = sorted(values_ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50_ms": round(q[49], 2), "p99_ms": round(q[98], 2), "max_ms": round(ordered[-1], 2)}


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, mosquitto(Path(tmp)) as broker:
        state = Path(tmp)

        receiver = Receiver(broker)
        table, publisher, started = new_table(state, "BACKLOG", broker, Stamps(), backlog=BURST)
        receiver.wait(BURST)
        backlog_rate = BURST / (max(receiver.arrived.values()) - started)
        publisher.stop()
        receiver.stop()

        stamps, receiver = Stamps(), Receiver(broker)
        table, publisher, _ = new_table(state, "BURST", broker, stamps)
        deal(table, BURST)
        receiver.wait(BURST)
        first = min(stamps.committed.values())
        last = max(receiver.arrived.values())
        burst_rate = BURST / (last - first)
        burst_lat = percentiles(latencies(stamps, receiver))
        publisher.stop()
        receiver.stop()

        stamps, receiver = Stamps(), Receiver(broker)
        table, publisher, _ = new_table(state, "PACED", broker, stamps)
        deal(table, PACED, PACE_S)
        receiver.wait(PACED)
        paced_lat = percentiles(latencies(stamps, receiver))
        publisher.stop()
        receiver.stop()

        stamps, receiver = Stamps(), Receiver(broker)
        floor = [new_table(state, f"T{n:02d}", broker, stamps)[:2] for n in range(TABLES)]
        until = time.monotonic() + FLOOR_S
        dealers = [
            threading.Thread(target=deal, args=(t, 10**9, FLOOR_PACE_S, until)) for t, _ in floor
        ]  # each table journals from its own thread, as each Pi's table loop does
        for dealer in dealers:
            dealer.start()
        for dealer in dealers:
            dealer.join()
        total = sum(t.journal.last_seq for t, _ in floor)
        receiver.wait(total)
        floor_lat = percentiles(latencies(stamps, receiver))
        complete = all(
            receiver.ledger.last("bench", t.table_id) == t.journal.last_seq
            and not receiver.ledger.missing("bench", t.table_id)
            for t, _ in floor
        )
        for _, p in floor:
            p.stop()
        receiver.stop()

    return {
        "name": "floor",
        "what": (
            "MQTT floor link on 127.0.0.1 (Mosquitto, QoS 1): entries/s one table publishes (a backlog; a burst "
            "of fsync'd commits), and latency "
            "journal commit -> subscriber for one paced table and for 20 tables at once; higher ratio is better"
        ),
        "reference": f"a fast dealer's pace at one table, {DEALER_PACE:g} journal entry per second",
        "ratio": round(backlog_rate / DEALER_PACE, 1),
        "results": {
            "backlog": {"entries": BURST, "entries_per_s": round(backlog_rate, 1)},
            "burst": {"entries": BURST, "entries_per_s": round(burst_rate, 1), **burst_lat},
            "paced": {"entries": PACED, "every_ms": PACE_S * 1000, **paced_lat},
            "floor": {
                "tables": TABLES,
                "every_ms_per_table": FLOOR_PACE_S * 1000,
                "seconds": FLOOR_S,
                "entries": total,
                "entries_per_s": round(total / FLOOR_S, 1),
                "every_entry_once_in_order": complete,
                "repeats_dropped": receiver.repeats,
                **floor_lat,
            },
        },
    }
