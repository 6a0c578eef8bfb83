"""The floor store: how fast 20 tables' entries get into it, how long a day's catch-up takes, and
how big a table-day is, in SQLite and in PostgreSQL.

A Mosquitto broker runs on 127.0.0.1 (from bench_floor), a PostgreSQL server is started here
(Debian's, initdb in a temporary directory, a Unix socket, fsync on), and the consumer is the real
FloorConsumer (`tablectl floor --store`) in this process. Everything shares the two cores.

  live      20 tables, each with 500 entries journaled and its FloorPublisher then started, the
            consumer already running: entries per second from the publishers' start to the last
            entry committed in the store (every entry stored once is checked)
  catch-up  one table's day: 86,400 entries (one a second for 24 hours, the pace of a fast dealer
            all day), already delivered to a broker that kept nothing for the store; an empty
            store's consumer starts and asks the table (its CatchupResponder, reading the journal):
            seconds until the store holds every entry. The day's journal is written with
            Journal.append from a template of real Grand Slam entries (rounds renumbered), since
            dealing 86,400 entries through the engine would take minutes of set-up
  size      the store's size after that day, per table-day and per entry

The ratio is SQLite's catch-up rate against the fast dealer's 1 entry a second: how many times
faster than real time a store catches up a table (higher is better).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from benchmarks.bench_floor import DEALER_PACE, deal, mosquitto
from controller.adapters.floor import schema
from controller.adapters.floor.catchup import CatchupResponder
from controller.adapters.floor.config import Broker, FloorConfig
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher
from controller.floor.consumer import FloorConsumer
from controller.floor.store import open_store
from controller.journal.log import Journal
from controller.table import Table

SITE = "bench"
TABLES = 20
PER_TABLE = 500
DAY = 86_400
TEMPLATE = 3000


@contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL server of our own; yields the URL of a fresh database. Stopped by pg_ctl on its
    own data directory. Its directory is its own (the postgres user must reach it)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is missing: install Debian's package `postgresql`")
    bindir = found[-1].parent
    home = Path(tempfile.mkdtemp(prefix="tablectl-bench-pg-"))
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        shutil.chown(home, "postgres", "postgres")
    data = home / "data"
    port = 5400 + os.getpid() % 500

    def run(*argv: str) -> None:
        subprocess.run([*prefix, *argv], check=True, capture_output=True, timeout=120)

    run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
    run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "-o",
        f"-k {home} -c listen_addresses='' -p {port}", "start")  # fmt: skip
    try:
        import psycopg

        base = f"postgresql://postgres@/postgres?host={home}&port={port}"
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute("CREATE DATABASE floor")
        yield f"postgresql://postgres@/floor?host={home}&port={port}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(home, ignore_errors=True)


def wait_stored(url: str, tables: dict[str, int], timeout: float) -> float:
    """Poll until the store holds every entry of every table (table id -> last seq); when."""
    store = open_store(url)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if all(store.progress(SITE, t).contiguous >= last for t, last in tables.items()):
                return time.monotonic()
            if time.monotonic() > deadline:
                have = {t: store.progress(SITE, t).contiguous for t in tables}
                raise RuntimeError(f"the store did not fill in {timeout} s: {have}")
            time.sleep(0.05)
    finally:
        store.close()


def live(url: str, journals: dict[str, Path], broker: Broker) -> dict[str, Any]:
    consumer = FloorConsumer(broker, url, consumer_id="bench-live", probe_s=5.0)
    consumer.start()
    assert consumer.connected.wait(10)
    publishers = []
    for table_id, path in journals.items():
        journal = Journal(path)
        journal.set_meta(MARK_KEY, "0")  # every entry is sent again for this store
        publishers.append(
            (
                FloorPublisher(
                    FloorConfig(broker=broker, site=SITE),
                    path,
                    table_id=table_id,
                    game="grand-slam",
                    rules={},
                    mark=_mark_writer(journal),
                    meta=journal.set_meta,
                ),
                journal,
            )
        )
    started = time.monotonic()
    for publisher, _ in publishers:
        publisher.start()
    done = wait_stored(url, {t: PER_TABLE for t in journals}, 300)
    for publisher, journal in publishers:
        publisher.stop()
        journal.close()
    consumer.stop()
    store = open_store(url)
    count = store.count()
    store.close()
    if count != TABLES * PER_TABLE:
        raise RuntimeError(f"the store holds {count} rows, not {TABLES * PER_TABLE}")
    return {"tables": TABLES, "entries": count, "seconds": round(done - started, 2),
            "entries_per_s": round(count / (done - started), 1)}  # fmt: skip


def _mark_writer(journal: Journal) -> Callable[[int], None]:
    return lambda seq: journal.set_meta(MARK_KEY, str(seq))


def day_journal(path: Path, template: list[Any]) -> int:
    """A day of one table: the template's entries again and again, rounds renumbered."""
    journal = Journal(path)
    rounds = max((e.round or 0) for e in template)
    cycle = 0
    while journal.last_seq < DAY:
        for entry in template:
            if journal.last_seq >= DAY:
                break
            rnd = None if entry.round is None else entry.round + cycle * rounds
            journal.append(entry.kind, entry.body, rnd)
        cycle += 1
    last = journal.last_seq
    journal.close()
    return last


def catch_up(url: str, path: Path, broker: Broker) -> dict[str, Any]:
    responder = CatchupResponder(
        FloorConfig(broker=broker, site=SITE),
        path,
        table_id="DAY",
        client_id="tablectl-bench-DAY-catchup",
        boot="bench",
        password=None,
        meta=None,
    )
    responder.start()
    # What the broker holds of the table: its retained status, as its publisher leaves it.
    status = {"v": schema.VERSION, "site": SITE, "table": "DAY", "boot": "bench", "at": "2026-12-01T00:00:00.000Z",
              "status": "online", "game": "grand-slam", "last": DAY}  # fmt: skip
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.connect(broker.host, broker.port)
    client.loop_start()
    client.publish(schema.topic(SITE, "DAY", "status"), schema.encode(status), 1, True).wait_for_publish(10)
    client.disconnect()
    client.loop_stop()
    time.sleep(0.5)  # the responder connected and subscribed to its requests
    consumer = FloorConsumer(broker, url, consumer_id="bench-day", probe_s=0.2)
    started = time.monotonic()
    consumer.start()
    done = wait_stored(url, {"DAY": DAY}, 900)
    consumer.stop()
    responder.stop()
    return {"entries": DAY, "seconds": round(done - started, 1), "entries_per_s": round(DAY / (done - started), 1)}


def size_of(url: str, path: Path | None) -> int:
    if path is not None:
        import sqlite3

        lite = sqlite3.connect(path)
        lite.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        lite.close()
        return path.stat().st_size
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pg_total_relation_size('floor_entries') + pg_total_relation_size('floor_tables')"
        ).fetchone()
    return int(row[0]) if row else 0


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, mosquitto(Path(tmp)) as broker:
        home = Path(tmp)
        # Set-up on tmpfs where there is one (fsync is the only thing it saves; the store is not there).
        shm = Path(tempfile.mkdtemp(dir="/dev/shm")) if Path("/dev/shm").is_dir() else home / "setup"
        try:
            template_table = Table(Journal(shm / "template.sqlite3"), game="grand-slam", rules={}, table_id="T",
                                   simulated=True)  # fmt: skip
            deal(template_table, TEMPLATE)
            template = list(template_table.journal.entries())
            template_table.journal.close()
            journals = {}
            for n in range(1, TABLES + 1):
                path = home / f"GS-{n:02d}" / "journal.sqlite3"
                path.parent.mkdir()
                journal = Journal(path)
                for entry in template[:PER_TABLE]:
                    journal.append(entry.kind, entry.body, entry.round)
                journal.close()
                journals[f"GS-{n:02d}"] = path
            day = shm / "day.sqlite3"
            day_journal(day, template)
            journal_size = day.stat().st_size

            results: dict[str, Any] = {}
            sqlite_path = home / "floor.db"
            sqlite_url = f"sqlite://{sqlite_path}"
            results["sqlite"] = {"live": live(sqlite_url, journals, broker)}
            day_url = f"sqlite://{home / 'day.db'}"
            results["sqlite"]["catch_up_day"] = catch_up(day_url, day, broker)
            day_bytes = size_of(day_url, home / "day.db")
            results["sqlite"]["size"] = {"bytes_per_table_day": day_bytes, "bytes_per_entry": round(day_bytes / DAY)}
            with postgres() as pg_url:
                results["postgresql"] = {"live": live(pg_url, journals, broker)}
            with postgres() as pg_day:
                results["postgresql"]["catch_up_day"] = catch_up(pg_day, day, broker)
                pg_bytes = size_of(pg_day, None)
                results["postgresql"]["size"] = {"bytes_per_table_day": pg_bytes,
                                                 "bytes_per_entry": round(pg_bytes / DAY)}  # fmt: skip
            results["journal_bytes_per_table_day"] = journal_size
        finally:
            if shm.parent == Path("/dev/shm"):
                shutil.rmtree(shm, ignore_errors=True)
    rate = results["sqlite"]["catch_up_day"]["entries_per_s"]
    return {
        "name": "floor_store",
        "what": (
            "floor store (SQLite file; PostgreSQL server) fed over a local Mosquitto by the real consumer: entries/s "
            "from 20 tables' publishers into the store, seconds to catch up one table's day (86,400 entries) from "
            "the table alone, and bytes per table-day; higher ratio is better"
        ),
        "reference": "a fast dealer's pace at one table, 1 journal entry per second (catch-up speed against real time)",
        "ratio": round(rate / DEALER_PACE, 1),
        "results": results,
    }

