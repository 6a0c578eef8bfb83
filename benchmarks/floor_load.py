"""The floor's load generator (benchmarks/bench_floor_scale.py): many tables as the broker sees them.

    python -m benchmarks.floor_load --port P --site S --tables 1000 --template FILE [--workers K]

Speaks the floor's published schema (controller/floor/schema.py) as a table's publisher and
catch-up responder do: each table's entries on `tablectl/<site>/<table>/surveillance/entry` at
QoS 1 (the whole entries, as the store reads them), a retained `status` naming its newest seq,
and answers to `catchup/request` from what it has "journaled" (in memory, entry n of a table
being the template's entry n, rounds renumbered). It publishes only what a table would; nothing
goes into the store another way.

The entries go out through `RawPublisher`: its own MQTT 5 connection to the same broker, each
entry one PUBLISH packet at QoS 1 built from parts encoded once per table and seq (the topic, the
envelope, the template's kind and body) and the wall clock's `at` (formatted once a tick),
a tick's packets written to the socket at once, at most the broker's Receive Maximum of them
unacknowledged (its PUBACKs read on a thread of their own; a refused one is counted and said).
paho took about 200 us of CPU an entry (its publish and its network thread): at most about 5,000
a second on a whole core, under the 10,000 a second the floor must take; the raw packets take a
few microseconds. The status, the catch-up answers and the clearing at the end stay on paho
(request/response properties, few messages). `--workers K` still runs K processes (shards), each
playing every K-th table and answering its tables' catch-up requests (subscribed table by table),
the first process relaying the commands to them.

It reads one command a line on stdin and says on stdout when each is done (`done <name> <unix
time>`, the last shard's): `rate R SECONDS` (every table an entry each 1/R s, spread evenly over
the second), `flood N` (N entries a table as fast as the broker takes them), `behind NAME COUNT`
(a table that journaled COUNT entries the broker never carried: its status says so, catch-up
fills the store), `quit`. Every entry's `at` is the wall clock when it was published, so the
store's `received_at - at` is the entry's lag.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import socket
import struct
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


#: FLOOR_LOAD_TRACE=1: every catch-up request answered is logged on stderr (an ASK line).
TRACE = bool(os.environ.get("FLOOR_LOAD_TRACE"))


def stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def varint(n: int) -> bytes:
    """MQTT's variable byte integer."""
    out = bytearray()
    while True:
        n, digit = n >> 7, n & 0x7F
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("!H", len(data)) + data


class RawPublisher:
    """An MQTT 5 client that only publishes at QoS 1, packet by packet over its own socket: CONNECT
    (clean start), PUBLISH, PUBACK read on a thread, PINGREQ every 20 s. `send` takes a list of
    (topic, payload) and writes them in as few socket writes as the broker's Receive Maximum
    (from its CONNACK) lets it: never more than that unacknowledged."""

    def __init__(self, port: int, client_id: str, keepalive: int = 60) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        body = b"\x00\x04MQTT\x05\x02" + struct.pack("!H", keepalive) + b"\x00" + _string(client_id)
        self.sock.sendall(b"\x10" + varint(len(body)) + body)
        kind, data = self._read()
        if kind != 0x20 or len(data) < 2 or data[1] >= 0x80:
            raise SystemExit(f"floor_load: the broker refused the raw connection: {data[1:2].hex()}")
        self.most = self._receive_maximum(data[2:])
        self.sock.settimeout(None)
        self.inflight = 0
        self.refused = 0
        self.acked = 0
        self._mid = 0
        self._room = threading.Condition()
        self._send_lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._read_acks, daemon=True).start()
        threading.Thread(target=self._ping, args=(20.0,), daemon=True).start()

    def _read_exactly(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return bytes(data)

    def _read(self) -> tuple[int, bytes]:
        first = self._read_exactly(1)[0]
        length, shift = 0, 0
        while True:
            digit = self._read_exactly(1)[0]
            length |= (digit & 0x7F) << shift
            shift += 7
            if not digit & 0x80:
                break
        return first & 0xF0, self._read_exactly(length)

    @staticmethod
    def _receive_maximum(props: bytes) -> int:
        """The Receive Maximum (0x21) of a CONNACK's properties; 65,535 when not given."""
        length, shift, at = 0, 0, 0
        while True:
            digit = props[at]
            at += 1
            length |= (digit & 0x7F) << shift
            shift += 7
            if not digit & 0x80:
                break
        end = at + length
        sizes = {0x01: 1, 0x02: 4, 0x11: 4, 0x13: 2, 0x17: 1, 0x19: 1, 0x21: 2, 0x22: 2, 0x23: 2, 0x24: 1,
                 0x25: 1, 0x27: 4, 0x28: 1, 0x29: 1, 0x2A: 1}  # fmt: skip
        while at < end:
            ident = props[at]
            at += 1
            if ident == 0x21:
                return int(struct.unpack_from("!H", props, at)[0])
            if ident in sizes:
                at += sizes[ident]
            elif ident == 0x26:  # a user property: two strings
                for _ in range(2):
                    at += 2 + struct.unpack_from("!H", props, at)[0]
            else:  # a string or binary data
                at += 2 + struct.unpack_from("!H", props, at)[0]
        return 65535

    def _read_acks(self) -> None:
        try:
            while True:
                kind, data = self._read()
                if kind != 0x40:
                    continue  # PINGRESP
                if len(data) > 2 and data[2] >= 0x80:
                    self.refused += 1
                with self._room:
                    self.inflight -= 1
                    self.acked += 1
                    self._room.notify_all()
        except (OSError, ConnectionError) as exc:
            if not self.closed:
                print(f"floor_load: the raw connection ended: {exc}", file=sys.stderr, flush=True)
            with self._room:
                self.closed = True
                self._room.notify_all()

    def _ping(self, every: float) -> None:
        while not self.closed:
            time.sleep(every)
            with self._send_lock:
                if not self.closed:
                    self.sock.sendall(b"\xc0\x00")

    def send(self, packets: list[tuple[bytes, bytes]]) -> None:
        """Publish each (topic packed as MQTT writes it, payload) at QoS 1, in order."""
        at = 0
        while at < len(packets):
            with self._room:
                self._room.wait_for(lambda: self.inflight < self.most or self.closed)
                if self.closed:
                    raise ConnectionError("the raw connection is closed")
                take = min(len(packets) - at, self.most - self.inflight)
                self.inflight += take
            out = []
            mid = self._mid
            for topic, payload in packets[at : at + take]:
                mid = mid % 65535 + 1
                out.append(b"\x32" + varint(len(topic) + 3 + len(payload)) + topic + mid.to_bytes(2, "big") + b"\x00")
                out.append(payload)
            self._mid = mid
            with self._send_lock:
                self.sock.sendall(b"".join(out))
            at += take

    def drain(self, timeout: float) -> bool:
        """Wait until the broker has acknowledged everything sent; False if not within `timeout`."""
        with self._room:
            return self._room.wait_for(lambda: self.inflight == 0 or self.closed, timeout) and not self.closed

    def close(self) -> None:
        self.closed = True
        with self._send_lock, contextlib.suppress(OSError):
            self.sock.sendall(b"\xe0\x00")
        self.sock.close()


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
        # What every entry of a table shares, encoded once: its topic as a PUBLISH packet carries
        # it, the envelope up to its seq; and each template entry's kind and body after `round`.
        self.topics = {t: _string(schema.surveillance_topic(site, t)) for t in tables}
        self.heads = {t: f'{{"v":{schema.VERSION},"site":{self.site_text},"table":"{t}","boot":"{BOOT}","seq":'
                      for t in tables}  # fmt: skip
        self.tails = [f',"kind":{kind},"body":{body}}}' for kind, body, _ in self.texts]
        self._stamped_at = -1.0
        self._stamped = ""
        self.last: dict[str, int] = dict.fromkeys(tables, 0)
        #: When each table's entries were "journaled" (published, or put behind): the `at` a
        #: catch-up reply gives them again, as a table's journal would. (first seq, at) runs.
        self.times: dict[str, list[tuple[int, float]]] = {t: [] for t in tables}
        self.lock = threading.Lock()
        self.requests: queue.Queue[mqtt.MQTTMessage] = queue.Queue()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=f"floorload-{site}{name}", protocol=mqtt.MQTTv5
        )
        # Under the broker's Receive Maximum (max_inflight_messages 1000 in the benchmark's
        # Mosquitto): paho does not hold to it, and the broker cuts off a client that sends more
        # unacknowledged (100 tables' answers at once did), its subscriptions gone with its session.
        self.client.max_inflight_messages_set(500)
        self.client.max_queued_messages_set(0)
        connected = threading.Event()

        def on_connect(client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
            self._subscribe()
            connected.set()

        self.client.on_connect = on_connect
        self.client.on_disconnect = lambda c, u, f, rc, p: print(
            f"floor_load: the broker disconnected {name or 'the generator'}: {rc}", file=sys.stderr, flush=True
        )
        self.client.on_message = lambda c, u, m: self.requests.put(m)
        self.client.connect("127.0.0.1", port, keepalive=60)
        self.client.loop_start()
        if not connected.wait(30):
            raise SystemExit("floor_load: no connection to the broker")
        threading.Thread(target=self._answer, daemon=True).start()
        self.raw = RawPublisher(port, f"floorload-raw-{site}{name}")

    def _subscribe(self) -> None:
        """Each table's own request topic (a shard answers its tables only), at every connection."""
        tables = list(self.last)
        for start in range(0, len(tables), 500):
            self.client.subscribe([(schema.request_topic(self.site, t), 1) for t in tables[start : start + 500]])

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

    def next_packet(self, table: str, now: float) -> tuple[bytes, bytes]:
        """The table's next entry as `RawPublisher.send` takes it: `encoded(table, seq, now)`, byte
        for byte, from the parts encoded once (`at` formatted once for a tick's `now`: exactly as a
        catch-up answer formats it again from the `now` kept in `times`; formatted from the
        millisecond instead, about one entry in a thousand came back a millisecond apart, and the
        store rightly alerted a sequence number reused)."""
        if now != self._stamped_at:
            self._stamped_at, self._stamped = now, stamp(now)
        with self.lock:
            seq = self.last[table] + 1
            self.last[table] = seq
            self.times[table].append((seq, now))
        cycle, index = divmod(seq - 1, len(self.template))
        base_round = self.texts[index][2]
        rnd = "null" if base_round is None else str(base_round + cycle * self.rounds)
        payload = f'{self.heads[table]}{seq},"at":"{self._stamped}","round":{rnd}{self.tails[index]}'
        return self.topics[table], payload.encode()

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
            packets = []
            now = time.time()
            while owed >= 1:
                packets.append(self.next_packet(self.tables[index], now))
                index = (index + 1) % len(self.tables)
                owed -= 1
            self.raw.send(packets)
            time.sleep(max(0.0, start + (tick + 1) / ticks - time.monotonic()))

    def flood(self, per_table: int) -> None:
        """`per_table` entries a table, as fast as the broker takes them (its Receive Maximum
        unacknowledged at most), in rounds of every table, a few hundred packets a write."""
        for _ in range(per_table):
            for first in range(0, len(self.tables), 500):
                now = time.time()
                self.raw.send([self.next_packet(t, now) for t in self.tables[first : first + 500]])
        if not self.raw.drain(120):  # the broker cut the generator off: said, not hidden
            print("floor_load: the flood was not all acknowledged by the broker", file=sys.stderr, flush=True)
        if self.raw.refused:
            print(f"floor_load: the broker refused {self.raw.refused} entries", file=sys.stderr, flush=True)

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
            if TRACE:
                print(f"ASK {time.time():.3f} {table} after={request['after']} from={request.get('from')} "
                      f"limit={request.get('page_limit', request.get('limit'))} last={self.last[table]} "
                      f"queued={self.requests.qsize()}", file=sys.stderr, flush=True)
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
    floor.raw.drain(30)
    floor.raw.close()
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
