"""The floor's load generator (benchmarks/bench_floor_scale.py): many tables as the broker sees them.

    python -m benchmarks.floor_load --port P --site S --tables 1000 --template FILE [--workers K]

Speaks the floor's published schema (controller/floor/schema.py) as a table's publisher and
catch-up responder do: each table's entries on `tablectl/<site>/<table>/surveillance/entry` at
QoS 1 (the whole entries, as the store reads them), a retained `status` naming its newest seq,
and answers to `catchup/request` from what it has "journaled" (in memory, entry n of a table
being the template's entry n, rounds renumbered). It publishes only what a table would; nothing
goes into the store another way.

One Python process takes about 200 us of CPU a QoS 1 entry (208 us measured here: paho's publish
and its network thread, the JSON built from pre-encoded parts), at most about 5,000 a second on a
whole core, under the 10,000 a second the floor must take, so `--workers K` runs K processes
(shards), each its own MQTT connection playing every K-th table and answering its tables'
catch-up requests (subscribed table by table), the first process relaying the commands to them.

It reads one command a line on stdin and says on stdout when each is done (`done <name> <unix
time>`, the last shard's): `rate R SECONDS` (every table an entry each 1/R s, spread evenly over
the second), `flood N` (N entries a table as fast as the broker takes them), `behind NAME COUNT`
(a table that journaled COUNT entries the broker never carried: its status says so, catch-up
fills the store), `quit`. Every entry's `at` is the wall clock when it was published, so the
store's `received_at - at` is the entry's lag.
"""

from __future__ import annotations

import argparse
import json
import queue
import subprocess
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
    def __init__(
        self, port: int, site: str, tables: list[str], template: list[dict[str, Any]], name: str = ""
    ) -> None:
        self.site = site
        self.tables = tables
        self.template = template
        self.rounds = max((e["round"] or 0) for e in template) or 1
        self.site_text = json.dumps(site)
        self.texts = [(json.dumps(e["kind"]), json.dumps(e["body"], separators=(",", ":")), e["round"])
                      for e in template]  # fmt: skip
        self.last: dict[str, int] = dict.fromkeys(tables, 0)
        #: When each table's entries were "journaled" (published, or put behind): the `at` a
        #: catch-up reply gives them again, as a table's journal would. (first seq, at) runs.
        self.times: dict[str, list[tuple[int, float]]] = {t: [] for t in tables}
        self.lock = threading.Lock()
        self.requests: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"floorload-{site}{name}", protocol=mqtt.MQTTv5
        )
        self.client.max_inflight_messages_set(2000)
        self.client.max_queued_messages_set(0)
        connected = threading.Event()
        self.client.on_connect = lambda c, u, f, rc, p: connected.set()
        self.client.on_message = lambda c, u, m: self.requests.put(m)
        self.client.connect("127.0.0.1", port, keepalive=60)
        self.client.loop_start()
        if not connected.wait(30):
            raise SystemExit("floor_load: no connection to the broker")
        # Each table's own request topic: a shard answers its tables only.
        for start in range(0, len(tables), 500):
            self.client.subscribe([(schema.request_topic(site, t), 1) for t in tables[start : start + 500]])
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

    def encoded(self, table: str, seq: int, at: float, reply: bool = False, row: bool = False) -> bytes:
        """`schema.encode(self.entry(...))` (with `"reply": "entry"` last for a catch-up reply;
        `row`: only seq, at, round, kind and body, an entry of a catch-up page), byte for byte,
        with the template's kind and body encoded once (json.dumps of every whole entry was a
        third of the generator's CPU)."""
        cycle, index = divmod(seq - 1, len(self.template))
        kind, body, base_round = self.texts[index]
        rnd = "null" if base_round is None else str(base_round + cycle * self.rounds)
        if row:
            return f'{{"seq":{seq},"at":"{stamp(at)}","round":{rnd},"kind":{kind},"body":{body}}}'.encode()
        return (f'{{"v":{schema.VERSION},"site":{self.site_text},"table":"{table}","boot":"{BOOT}","seq":{seq},'
                f'"at":"{stamp(at)}","round":{rnd},"kind":{kind},"body":{body}'
                + (',"reply":"entry"}' if reply else "}")).encode()  # fmt: skip

    def publish_next(self, table: str) -> mqtt.MQTTMessageInfo:
        now = time.time()
        with self.lock:
            seq = self.last[table] + 1
            self.last[table] = seq
            self.times[table].append((seq, now))
        payload = self.encoded(table, seq, now)
        return self.client.publish(schema.surveillance_topic(self.site, table), payload, 1)

    def status(self, table: str) -> None:
        payload = {"v": schema.VERSION, "site": self.site, "table": table, "boot": BOOT, "at": stamp(time.time()),
                   "status": "online", "game": "grand-slam", "last": self.last[table]}  # fmt: skip
        self.client.publish(schema.topic(self.site, table, "status"), schema.encode(payload), 1, True)

    def clear(self) -> None:
        """Take every table's retained status off the broker (an empty retained message), so the
        next run's consumers, on a fresh database, do not hear of this run's tables."""
        infos = [self.client.publish(schema.topic(self.site, t, "status"), b"", 1, True) for t in self.last]
        for info in infos:
            info.wait_for_publish(30)

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
        if table not in self.last:
            self.client.subscribe(schema.request_topic(self.site, table), qos=1)
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
            page = request.get("page")  # a table of today answers in pages when asked (catchup.py)
            most = request.get("page_limit", schema.PAGED_LIMIT) if page else request.get("limit", schema.REPLY_LIMIT)
            limit = int(most)
            out = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            out.CorrelationData = getattr(props, "CorrelationData", b"") or b""
            last = self.last[table]
            through = min(last, start + limit)
            with self.lock:
                ats = [self.at(table, seq) for seq in range(start + 1, through + 1)]
            if page:
                head = (f'{{"v":{schema.VERSION},"site":{self.site_text},"table":"{table}","boot":"{BOOT}",'
                        '"reply":"page","entries":[')  # fmt: skip
                for first in range(start + 1, through + 1, int(page)):
                    rows = b",".join(self.encoded(table, seq, ats[seq - start - 1], row=True)
                                     for seq in range(first, min(first + int(page), through + 1)))  # fmt: skip
                    self.client.publish(response, head.encode() + rows + b"]}", 1, properties=out)
            else:
                for seq, at in zip(range(start + 1, through + 1), ats, strict=True):
                    self.client.publish(response, self.encoded(table, seq, at, reply=True), 1, properties=out)
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
    parser.add_argument("--workers", type=int, default=1, help="processes, each every K-th table")
    parser.add_argument("--shard", type=int, default=-1, help="(internal) which of the K this process is")
    args = parser.parse_args()
    if args.workers > 1 and args.shard < 0:
        return relay(args)
    with open(args.template) as f:
        template = json.load(f)
    tables = [f"T{n:04d}" for n in range(1, args.tables + 1)][max(args.shard, 0) :: args.workers]
    floor = Floor(args.port, args.site, tables, template, name=f"-{args.shard}" if args.workers > 1 else "")
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
    floor.clear()
    floor.client.disconnect()
    floor.client.loop_stop()
    return 0


def relay(args: argparse.Namespace) -> int:
    """The first process of K: starts the K shards, hands each command to every one (`behind` to
    one, chosen by the table's name), and says a command is done when all of them are."""
    argv = [sys.executable, "-m", "benchmarks.floor_load", "--port", str(args.port), "--site", args.site,
            "--tables", str(args.tables), "--template", args.template, "--workers", str(args.workers)]  # fmt: skip
    shards = [
        subprocess.Popen([*argv, "--shard", str(n)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for n in range(args.workers)
    ]

    def said(shard: subprocess.Popen[str]) -> list[str]:
        assert shard.stdout is not None
        words = shard.stdout.readline().split()
        if not words:
            raise SystemExit(f"floor_load: shard {shards.index(shard)} ended")
        return words

    print("ready", max(float(said(s)[-1]) for s in shards), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        chosen = [shards[sum(map(ord, words[1])) % len(shards)]] if words[0] == "behind" else shards
        for shard in chosen:
            assert shard.stdin is not None
            shard.stdin.write(line)
            shard.stdin.flush()
        if words[0] == "quit":
            break
        print("done", words[0], max(float(said(s)[-1]) for s in chosen), flush=True)
    for shard in shards:
        try:
            shard.wait(timeout=30)
        except subprocess.TimeoutExpired:
            shard.kill()
            shard.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
