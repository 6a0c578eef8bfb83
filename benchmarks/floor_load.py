"""The floor's load generator (benchmarks/bench_floor_scale.py): many tables as the broker sees them.

    python -m benchmarks.floor_load --port P --site S --tables 1000 --template FILE

One process, one MQTT 5 connection, speaking the floor's published schema (controller/floor/
schema.py) as a table's publisher and catch-up responder do: each table's entries on
`tablectl/<site>/<table>/surveillance/entry` at QoS 1 (the whole entries, as the store reads
them), a retained `status` naming its newest seq, and answers to `catchup/request` from what it
has "journaled" (in memory, entry n of a table being the template's entry n, rounds renumbered).
It publishes only what a table would; nothing goes into the store another way.

It reads one command a line on stdin and says on stdout when each is done (`done <name> <unix
time>`): `rate R SECONDS` (every table an entry each 1/R s, spread evenly over the second),
`flood N` (N entries a table as fast as the broker takes them), `behind NAME COUNT` (a table
that journaled COUNT entries the broker never carried: its status says so, catch-up fills the
store), `quit`. Every entry's `at` is the wall clock when it was published, so the store's
`received_at - at` is the entry's lag.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.adapters.floor import schema

BOOT = "floorload"


def stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Floor:
    def __init__(self, port: int, site: str, tables: list[str], template: list[dict[str, Any]]) -> None:
        self.site = site
        self.tables = tables
        self.template = template
        self.rounds = max((e["round"] or 0) for e in template) or 1
        self.last: dict[str, int] = dict.fromkeys(tables, 0)
        #: When each table's entries were "journaled" (published, or put behind): the `at` a
        #: catch-up reply gives them again, as a table's journal would. (first seq, at) runs.
        self.times: dict[str, list[tuple[int, float]]] = {t: [] for t in tables}
        self.lock = threading.Lock()
        self.requests: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"floorload-{site}", protocol=mqtt.MQTTv5)
        self.client.max_inflight_messages_set(2000)
        self.client.max_queued_messages_set(0)
        connected = threading.Event()
        self.client.on_connect = lambda c, u, f, rc, p: connected.set()
        self.client.on_message = lambda c, u, m: self.requests.put(m)
        self.client.connect("127.0.0.1", port, keepalive=60)
        self.client.loop_start()
        if not connected.wait(30):
            raise SystemExit("floor_load: no connection to the broker")
        self.client.subscribe(f"{schema.ROOT}/{site}/+/catchup/request", qos=1)
        threading.Thread(target=self._answer, daemon=True).start()

    def at(self, table: str, seq: int) -> float:
        runs = self.times[table]
        low, high = 0, len(runs) - 1
        while low < high:  # the last run starting at or before seq
            mid = (low + high + 1) // 2
            if runs[mid][0] <= seq:
                low = mid
            else:
                high = mid - 1
        return runs[low][1]

    def entry(self, table: str, seq: int, at: float) -> dict[str, Any]:
        cycle, index = divmod(seq - 1, len(self.template))
        base = self.template[index]
        rnd = None if base["round"] is None else base["round"] + cycle * self.rounds
        return {"v": schema.VERSION, "site": self.site, "table": table, "boot": BOOT, "seq": seq, "at": stamp(at),
                "round": rnd, "kind": base["kind"], "body": base["body"]}  # fmt: skip

    def publish_next(self, table: str) -> mqtt.MQTTMessageInfo:
        now = time.time()
        with self.lock:
            seq = self.last[table] + 1
            self.last[table] = seq
            self.times[table].append((seq, now))
        payload = schema.encode(self.entry(table, seq, now))
        return self.client.publish(schema.surveillance_topic(self.site, table), payload, 1)

    def status(self, table: str) -> None:
        payload = {"v": schema.VERSION, "site": self.site, "table": table, "boot": BOOT, "at": stamp(time.time()),
                   "status": "online", "game": "grand-slam", "last": self.last[table]}  # fmt: skip
        self.client.publish(schema.topic(self.site, table, "status"), schema.encode(payload), 1, True)

    def rate(self, per_s: float, seconds: float) -> None:
        """Every table an entry each 1/per_s s, the tables spread evenly over that interval."""
        ticks = 100  # per second
        per_tick = len(self.tables) * per_s / ticks
        owed = 0.0
        index = 0
        start = time.monotonic()
        for tick in range(int(seconds * ticks)):
            owed += per_tick
            while owed >= 1:
                self.publish_next(self.tables[index])
                index = (index + 1) % len(self.tables)
                owed -= 1
            time.sleep(max(0.0, start + (tick + 1) / ticks - time.monotonic()))

    def flood(self, per_table: int) -> None:
        info = None
        for _ in range(per_table):
            for table in self.tables:
                info = self.publish_next(table)
        if info is not None:
            try:
                info.wait_for_publish(120)
            except (ValueError, RuntimeError) as exc:  # the broker cut the generator off: said, not hidden
                print(f"floor_load: the flood's last message was not taken: {exc}", file=sys.stderr, flush=True)

    def behind(self, table: str, count: int) -> None:
        with self.lock:
            self.times.setdefault(table, []).append((self.last.get(table, 0) + 1, time.time()))
            self.last[table] = self.last.get(table, 0) + count
        self.status(table)

    def _answer(self) -> None:
        while True:
            message = self.requests.get()
            table = message.topic.split("/")[2]
            props = message.properties
            response = getattr(props, "ResponseTopic", None)
            request = json.loads(message.payload)
            if not response or table not in self.last:
                continue
            start = max(int(request["after"]), int(request.get("from", request["after"])))
            limit = int(request.get("limit", schema.REPLY_LIMIT))
            out = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            out.CorrelationData = getattr(props, "CorrelationData", b"") or b""
            last = self.last[table]
            through = min(last, start + limit)
            with self.lock:
                ats = [self.at(table, seq) for seq in range(start + 1, through + 1)]
            for seq, at in zip(range(start + 1, through + 1), ats, strict=True):
                payload = {**self.entry(table, seq, at), "reply": "entry"}
                self.client.publish(response, schema.encode(payload), 1, properties=out)
            end = {"v": schema.VERSION, "site": self.site, "table": table, "boot": BOOT, "reply": "end",
                   "after": request["after"], "through": max(through, start), "last": last, "more": through < last,
                   "gaps": []}  # fmt: skip
            self.client.publish(response, schema.encode(end), 1, properties=out)  # queued: a table answers at once


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--site", required=True)
    parser.add_argument("--tables", type=int, required=True)
    parser.add_argument("--template", required=True)
    args = parser.parse_args()
    with open(args.template) as f:
        template = json.load(f)
    floor = Floor(args.port, args.site, [f"T{n:04d}" for n in range(1, args.tables + 1)], template)
    for table in floor.tables:
        floor.status(table)
    print("ready", time.time(), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "rate":
            floor.rate(float(words[1]), float(words[2]))
        elif words[0] == "flood":
            floor.flood(int(words[1]))
        elif words[0] == "behind":
            floor.behind(words[1], int(words[2]))
        print("done", words[0], time.time(), flush=True)
    floor.client.disconnect()
    floor.client.loop_stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
