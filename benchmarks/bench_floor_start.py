"""The floor publisher's start (issue 32, point 3): from `FloorPublisher.start()` until a
subscriber has the first entry it publishes, on journals of 10k to 2M entries, against 10k.

The journals are `journal`'s (benchmarks/bench_journal.py: written through the table code by
`tablectl journal synth`'s dealer, seven seats on three bases, a snapshot at each round's end,
cached in TABLECTL_BENCH_JOURNALS; TABLECTL_BENCH_MAX_ENTRIES caps the largest built). Each is
copied to a temporary directory and given a broker mark (`floor.acked`) 10 entries before its
end, inside the last round: a table restarted mid-round whose broker had all but those. The
publisher then rebuilds its state at the mark (Replica.resume: the snapshot at or before it,
checked, and the entries after it through the table's reducer) and sends the 10 entries.

A Mosquitto broker on 127.0.0.1 (as the `floor` benchmark runs it) and one subscriber on the
entry topics, in this process. Nine starts of each size, taken in turns (one of each size a turn,
after a turn not counted), median. Beside it, in-process: the resume alone (median of nine),
and at 10k only the old start, the reducer over every entry up to the mark (what the publisher
did before; it grows with the journal, so 2M is not run: the figure per entry is given). The
cores are shared with other work: read the ratio.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from benchmarks import bench_journal
from benchmarks.bench_floor import mosquitto
from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, FloorConfig
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher, Replica
from controller.journal.log import Journal

BEHIND = 10  # entries the broker had not acknowledged when the table stopped
STARTS = 9
SITE = "bench"
GOAL = 1.5


class FirstEntry:
    """A subscriber on every table's entries that notes when the first one after `armed` comes."""

    def __init__(self, broker: Broker) -> None:
        self.first: tuple[float, int] | None = None
        self.lock = threading.Condition()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(f"{schema.ROOT}/+/+/entry", qos=1)
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        if not self.subscribed.wait(30):
            raise RuntimeError("the subscriber's subscription was never acknowledged")

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        now = time.monotonic()
        seq = schema.parse(message.topic, message.payload).seq
        with self.lock:
            if self.first is None and seq is not None:
                self.first = (now, seq)
                self.lock.notify_all()

    def arm(self) -> None:
        with self.lock:
            self.first = None

    def wait(self, timeout: float = 300.0) -> tuple[float, int]:
        with self.lock:
            if not self.lock.wait_for(lambda: self.first is not None, timeout):
                raise RuntimeError(f"no entry was published within {timeout:g} s of the start")
            assert self.first is not None
            return self.first

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _copy(source: Path, into: Path) -> tuple[Path, int]:
    into.mkdir(parents=True)
    for name in ("journal.sqlite3", "journal.head"):
        shutil.copy2(source / name, into / name)
    journal = Journal(into / "journal.sqlite3")
    last = journal.last_seq
    journal.set_meta(MARK_KEY, str(last - BEHIND))
    journal.close()
    return into / "journal.sqlite3", last - BEHIND


def _resume_s(path: Path, mark: int) -> float:
    reader = Journal(path, readonly=True)
    try:
        started = time.perf_counter()
        Replica.resume(reader, "grand-slam", {}, mark)
        return time.perf_counter() - started
    finally:
        reader.close()


def _full_replay_s(path: Path, mark: int) -> float:
    """The publisher's start before issue 32: the reducer over every entry up to the mark."""
    reader = Journal(path, readonly=True)
    try:
        started = time.perf_counter()
        replica = Replica("grand-slam", {})
        for entry in reader.entries(upto=mark):
            replica.follow(entry)
        return time.perf_counter() - started
    finally:
        reader.close()


def _start_s(path: Path, mark: int, broker: Broker, subscriber: FirstEntry, boot: str) -> float:
    """One start: from `start()` until the subscriber has the first entry after the mark."""
    publisher = FloorPublisher(
        FloorConfig(broker=broker, site=SITE),
        path,
        table_id="GS-01",
        game="grand-slam",
        rules={},
        mark=lambda seq: None,  # the mark stays where it was: every start begins at the same place
        meta=lambda key, value: None,
        boot=boot,
    )
    subscriber.arm()
    started = time.monotonic()
    publisher.start()
    arrived, seq = subscriber.wait()
    publisher.stop()
    if seq != mark + 1:
        raise RuntimeError(f"the first entry published was {seq}, not {mark + 1}")
    return arrived - started


def run() -> dict[str, Any]:
    journals = bench_journal.build(lambda text: print(text, file=sys.stderr))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="tablectl-floor-start-") as tmp, mosquitto(Path(tmp)) as broker:
        copies = {size: _copy(source, Path(tmp) / str(size)) for size, source in sorted(journals.items())}
        os.sync()  # the copies on disk before any start: their write-back would weigh on the sizes measured first
        subscriber = FirstEntry(broker)
        try:
            starts: dict[int, list[float]] = {size: [] for size in copies}
            resumes: dict[int, list[float]] = {size: [] for size in copies}
            # In turns, one start of each size a turn, so the machine's other work weighs on every
            # size alike; the first turn is not counted (imports, caches, the OS's page cache).
            for turn in range(STARTS + 1):
                for size, (path, mark) in copies.items():
                    took = _start_s(path, mark, broker, subscriber, f"start-{turn}")
                    resumed = _resume_s(path, mark)
                    if turn:
                        starts[size].append(took)
                        resumes[size].append(resumed)
            for size, (_path, mark) in copies.items():
                results[str(size)] = {
                    "entries": mark + BEHIND,
                    "mark": mark,
                    "start_to_first_publish_s": round(statistics.median(starts[size]), 4),
                    "starts_s": [round(s, 4) for s in starts[size]],
                    "resume_s": round(statistics.median(resumes[size]), 4),
                }
            smallest = min(copies)
            replay = _full_replay_s(*copies[smallest])
            results[str(smallest)]["before_full_replay_s"] = round(replay, 3)
            results[str(smallest)]["before_per_entry_ms"] = round(1000 * replay / copies[smallest][1], 4)
        finally:
            subscriber.stop()
    base = results[str(min(journals))]
    top = results[str(max(journals))]
    ratio = top["start_to_first_publish_s"] / base["start_to_first_publish_s"]
    for figures in results.values():
        figures["vs_smallest"] = round(figures["start_to_first_publish_s"] / base["start_to_first_publish_s"], 3)
    measured = ", ".join(
        f"{v['entries']:,} entries: {v['start_to_first_publish_s'] * 1000:.0f} ms"
        f" (resume {v['resume_s'] * 1000:.1f} ms)"
        for v in results.values()
    )
    before = base["before_full_replay_s"]
    return {
        "name": "floor_start",
        "what": (
            f"the floor publisher's start to its first entry at a subscriber (Mosquitto on 127.0.0.1), a mark "
            f"{BEHIND} entries before the journal's end: {measured}; before (the reducer over every entry up to "
            f"the mark) {before} s at {base['entries']:,} entries, {base['before_per_entry_ms']} ms an entry"
        ),
        "reference": f"the same start on the {base['entries']:,}-entry journal (goal: within {GOAL}x at 2M)",
        "ratio": round(ratio, 3),
        "sizes": results,
        "largest_built": max(journals),
        "note": (
            "timings on shared cores are noisy; "
            + (
                ""
                if max(journals) >= bench_journal.SIZES[-1]
                else f"only journals up to {max(journals):,} entries were built: 2M NOT MEASURED"
            )
        ),
    }
