"""Load on the table's network from outside the daemon: the screens, scripts and strangers a table's
LAN holds, as separate processes, through the daemon's real HTTP and WebSocket interface only.
Used by `bench_api_load` (paced load for a fixed time) and `tests/hil/test_lan_load.py` (a fixed
number of mixed requests, many threads, several processes). Nothing here reaches into the daemon.

    python -m benchmarks.lan_load http   --port P --rate 100 --seconds 60 --net 11
    python -m benchmarks.lan_load ws     --port P --clients 100 --seconds 60
    python -m benchmarks.lan_load attack --port P --requests 1000 --threads 6 --net 21 --seed 1

Each prints one JSON line `{"ready": true}` once it is set up (clients made, screens connected and
greeted), waits for a line on its standard input (the go), runs, and prints its summary as one JSON
line. Good credentials always come from 127.0.0.1; wrong ones from other loopback addresses
(127.NET.x.y, all of 127.0.0.0/8 is this machine's loopback), so the daemon's per-address login
limiter never locks out the good clients, and a stranger trying many addresses is modelled too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx
import websockets.sync.client
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from controller.testing import DEALER

WRONG = "not-this-tables-token-0123456789"
WAIT_S = 60.0  # the bound on any one request or connection: none is a timing assertion
#: The paced mix (bench_api_load): one of each in turn, the wrong tokens from NET's addresses.
HTTP_KINDS = ("state", "health", "openapi", "wrong_token", "rounds")


def address(net: int, n: int) -> str:
    """The n-th (0-based) loopback source address of NET (1-250): 127.NET.x.y, never 127.0.0.1."""
    if not 1 <= net <= 250:
        raise ValueError(f"net {net}: 1 to 250 (127.0.0.1 is the good clients')")
    return f"127.{net}.{n // 250 % 250}.{n % 250 + 1}"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ms(values: list[float]) -> dict[str, float]:
    if not values:
        return {"samples": 0}
    return {
        "p50_ms": round(statistics.median(values) * 1e3, 2),
        "p99_ms": round(_percentile(values, 0.99) * 1e3, 2),
        "max_ms": round(max(values) * 1e3, 2),
        "samples": len(values),
    }


def _go() -> None:
    """Say ready on stdout, then wait for the go: a line on stdin."""
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()


# -- paced HTTP (the benchmark) ---------------------------------------------------------------------


@dataclass
class _Tally:
    status: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    skipped: int = 0  # due while too many were still unanswered: not sent
    seconds: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "status": dict(sorted(self.status.items())),
            "errors": dict(sorted(self.errors.items())),
            "skipped": self.skipped,
            "answered": sum(self.status.values()),
            "latency": _ms(self.seconds),
        }


async def http_load(
    port: int, *, rate: float, seconds: float, net: int, addresses: int, in_flight: int
) -> dict[str, Any]:
    """Open-loop requests at `rate` a second for `seconds`, HTTP_KINDS in turn; a request falling
    due while `in_flight` are unanswered is skipped (counted), so a slow daemon shows as a lower
    achieved rate, not as a generator that slows down with it."""
    base = f"http://127.0.0.1:{port}"
    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    good = httpx.AsyncClient(base_url=base, trust_env=False, timeout=WAIT_S, limits=limits)
    strangers = [
        httpx.AsyncClient(
            base_url=base,
            trust_env=False,
            timeout=WAIT_S,
            transport=httpx.AsyncHTTPTransport(local_address=address(net, n)),
        )
        for n in range(addresses)
    ]
    dealer = {"Authorization": f"Bearer {DEALER}"}
    wrong = {"Authorization": f"Bearer {WRONG}"}
    tallies = {kind: _Tally() for kind in HTTP_KINDS}
    pending: set[asyncio.Task[None]] = set()

    async def one(kind: str, n: int) -> None:
        tally = tallies[kind]
        started = time.perf_counter()
        try:
            if kind == "state":
                r = await good.get("/api/state", headers=dealer)
            elif kind == "health":
                r = await good.get("/api/health")
            elif kind == "openapi":
                r = await good.get("/api/openapi.json")
            elif kind == "rounds":
                r = await good.get("/api/rounds", params={"last": 10}, headers=dealer)
            else:
                r = await strangers[n % len(strangers)].get("/api/state", headers=wrong)
            await r.aread()
        except httpx.HTTPError as exc:
            tally.errors[type(exc).__name__] += 1
            return
        tally.status[str(r.status_code)] += 1
        tally.seconds.append(time.perf_counter() - started)

    _go()
    started = time.monotonic()
    end = started + seconds
    n = 0
    while True:
        due = started + n / rate
        if due >= end:
            break
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        kind = HTTP_KINDS[n % len(HTTP_KINDS)]
        if len(pending) >= in_flight:
            tallies[kind].skipped += 1
        else:
            task = asyncio.create_task(one(kind, n // len(HTTP_KINDS)))
            pending.add(task)
            task.add_done_callback(pending.discard)
        n += 1
    sending_s = time.monotonic() - started
    if pending:
        await asyncio.wait(set(pending), timeout=WAIT_S)
    drained_s = time.monotonic() - started
    for client in (good, *strangers):
        await client.aclose()
    answered = sum(sum(t.status.values()) for t in tallies.values())
    return {
        "planned": n,
        "rate_planned": rate,
        "sending_s": round(sending_s, 2),
        "drained_s": round(drained_s, 2),
        "answered": answered,
        "rate_answered": round(answered / sending_s, 1),
        "status": dict(sorted(sum((t.status for t in tallies.values()), Counter()).items())),
        "errors": dict(sorted(sum((t.errors for t in tallies.values()), Counter()).items())),
        "skipped": sum(t.skipped for t in tallies.values()),
        "stranger_addresses": [address(net, 0), address(net, addresses - 1)],
        "by_kind": {kind: t.summary() for kind, t in tallies.items()},
    }


# -- screens on the live feed (the benchmark) -------------------------------------------------------


def _epoch(at: str) -> float:
    """A journal entry's `at` (ISO 8601 UTC, milliseconds) as seconds since the epoch."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


class _Screen:
    """One screen: says hello with the dealer's token, reads everything; when the daemon ends
    its feed it reconnects with its last seq, as the screens do."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.last_seq = 0
        self.greeted = asyncio.Event()
        self.stopping = False
        self.messages = 0
        self.entries = 0
        self.problems: list[str] = []  # the first few entries out of order, repeated or skipped
        self.out_of_order = 0  # entries whose seq is not the one after the last received
        self.closes: Counter[str] = Counter()
        self.connects = 0
        self.errors: Counter[str] = Counter()
        self.commit_to_screen: list[float] = []  # live entries received during the window
        self.timing = False
        self._ws: ClientConnection | None = None

    async def run(self) -> None:
        while not self.stopping:
            try:
                async with connect(
                    f"ws://127.0.0.1:{self.port}/api/ws", open_timeout=WAIT_S, max_size=None, proxy=None
                ) as ws:
                    self._ws = ws
                    self.connects += 1
                    await ws.send(json.dumps({"after": self.last_seq, "token": DEALER}))
                    async for raw in ws:
                        self._take(raw)
            except ConnectionClosed as closed:
                self.closes[str(closed.rcvd.code) if closed.rcvd else "no close frame"] += 1
            except (OSError, TimeoutError, InvalidStatus) as exc:
                self.errors[type(exc).__name__] += 1
                if not self.stopping:
                    await asyncio.sleep(0.5)
            else:
                if not self.stopping:
                    self.closes["closed by the daemon"] += 1

    def _take(self, raw: str | bytes) -> None:
        received = time.time()
        message = json.loads(raw)
        self.messages += 1
        if message.get("type") == "state":
            self.greeted.set()
        if message.get("type") != "entry":
            return
        seq = message["seq"]
        if seq != self.last_seq + 1:
            self.out_of_order += 1
            if len(self.problems) < 5:
                self.problems.append(f"entry {seq} after {self.last_seq}")
        self.last_seq = max(self.last_seq, seq)
        self.entries += 1
        if self.timing and message.get("live"):
            self.commit_to_screen.append(received - _epoch(message["at"]))

    async def close(self) -> None:
        self.stopping = True
        if self._ws is not None:
            await self._ws.close()


async def screens(port: int, *, clients: int, seconds: float) -> dict[str, Any]:
    """`clients` screens connected and greeted, then (after the go) `seconds` of reading."""
    all_screens = [_Screen(port) for _ in range(clients)]
    tasks = [asyncio.create_task(s.run()) for s in all_screens]
    await asyncio.wait_for(asyncio.gather(*(s.greeted.wait() for s in all_screens)), WAIT_S)
    await asyncio.to_thread(_go)
    before = sum(s.entries for s in all_screens)
    for s in all_screens:
        s.timing = True
    await asyncio.sleep(seconds)
    for s in all_screens:
        s.timing = False
    during = sum(s.entries for s in all_screens) - before
    await asyncio.gather(*(s.close() for s in all_screens), return_exceptions=True)
    await asyncio.wait(tasks, timeout=WAIT_S)
    latencies = [x for s in all_screens for x in s.commit_to_screen]
    return {
        "screens": clients,
        "seconds": seconds,
        "entries_received_in_window": during,
        "messages_received": sum(s.messages for s in all_screens),
        "connections": sum(s.connects for s in all_screens),
        "feeds_ended_by_daemon": dict(sum((s.closes for s in all_screens), Counter())),
        "connect_errors": dict(sum((s.errors for s in all_screens), Counter())),
        "entries_out_of_order": sum(s.out_of_order for s in all_screens),
        "screens_with_entries_out_of_order": sum(1 for s in all_screens if s.out_of_order),
        "out_of_order_first_screen": next((s.problems for s in all_screens if s.problems), []),
        "commit_to_screen": {
            **_ms(latencies),
            "how": "receipt (wall clock) minus the entry's journal `at` (wall clock, ms), live entries only",
        },
    }


# -- the attack (the test): a fixed number of mixed requests from many threads ----------------------

ACTIONS = (
    "wrong_token_get",  # GET /api/state with a wrong bearer token
    "wrong_token_post",  # POST /api/confirm with a wrong bearer token
    "login_bad",  # POST /api/login with a wrong token
    "ws_bad",  # /api/ws hello with a wrong token
    "login_good",  # POST /api/login with the dealer's token
    "state",  # GET /api/state, dealer
    "rounds",  # GET /api/rounds?last=5, dealer
    "health",  # GET /api/health, no token
    "openapi",  # GET /api/openapi.json, no token
    "confirm",  # POST /api/confirm, dealer
    "ws_good",  # /api/ws hello with the dealer's token, read to the state
)
STRANGER = frozenset(ACTIONS[:4])
#: How often each comes, out of the sum: about half of all requests carry a wrong token.
WEIGHTS = (14, 8, 10, 3, 5, 16, 6, 10, 6, 8, 3)
#: Each thread moves to a fresh source address after this many wrong tries (5 lock one out).
TRIES_PER_ADDRESS = 8
#: A connection per request: an idle kept-alive connection that the server times out just as a
#: request is sent on it fails through no fault of the daemon, and the attack's verdict must not.
ONE_SHOT = httpx.Limits(max_keepalive_connections=0)


@dataclass
class Outcome:
    """What each action got: HTTP statuses (or `ws <close code>` for the live feed), transport
    errors by exception, and the first few answers of 500 or more, word for word."""

    answers: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    errors: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    server_errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, action: str, what: str, body: str = "") -> None:
        with self.lock:
            self.answers[action][what] += 1
            if what.removeprefix("ws ").isdigit() and _is_server_error(what) and len(self.server_errors) < 5:
                self.server_errors.append(f"{action}: {what} {body[:300]}")

    def error(self, action: str, exc: BaseException) -> None:
        with self.lock:
            self.errors[action][f"{type(exc).__name__}: {str(exc)[:80]}"] += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "answers": {a: dict(sorted(c.items())) for a, c in sorted(self.answers.items())},
            "errors": {a: dict(c) for a, c in sorted(self.errors.items()) if c},
            "server_errors": self.server_errors,
        }


def _is_server_error(what: str) -> bool:
    """An HTTP status of 500 or more, or a WebSocket closed for a server error (1011) or refused
    at the handshake with a 5xx."""
    if what.startswith("ws "):
        code = what.removeprefix("ws ")
        return code == "1011" or code.startswith("http 5")
    return what.isdigit() and int(what) >= 500


def _plan(seed: int, count: int) -> list[str]:
    return random.Random(seed).choices(ACTIONS, weights=WEIGHTS, k=count)


class _Attacker:
    """One thread's fixed list of actions against the daemon."""

    def __init__(self, port: int, net: int, first_address: int, outcome: Outcome) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.net = net
        self.next_address = first_address
        self.outcome = outcome
        self.good = httpx.Client(base_url=self.base, trust_env=False, timeout=WAIT_S, limits=ONE_SHOT)
        self.stranger: httpx.Client | None = None
        self.stranger_source = ""
        self.stranger_tries = 0
        self.last_seq = 0

    def _stranger(self) -> tuple[httpx.Client, str]:
        if self.stranger is None or self.stranger_tries >= TRIES_PER_ADDRESS:
            if self.stranger is not None:
                self.stranger.close()
            source = self.stranger_source = address(self.net, self.next_address)
            self.next_address += 1
            self.stranger = httpx.Client(
                base_url=self.base,
                trust_env=False,
                timeout=WAIT_S,
                transport=httpx.HTTPTransport(local_address=source, limits=ONE_SHOT),
            )
            self.stranger_tries = 0
        self.stranger_tries += 1
        return self.stranger, self.stranger_source

    def close(self) -> None:
        self.good.close()
        if self.stranger is not None:
            self.stranger.close()

    def act(self, action: str) -> None:
        try:
            if action.startswith("ws_"):
                self._ws(action)
            else:
                self._http(action)
        except (httpx.HTTPError, OSError, TimeoutError, ConnectionClosed) as exc:
            self.outcome.error(action, exc)

    def _http(self, action: str) -> None:
        dealer = {"Authorization": f"Bearer {DEALER}"}
        wrong = {"Authorization": f"Bearer {WRONG}"}
        if action in STRANGER:
            client, _ = self._stranger()
            if action == "wrong_token_get":
                r = client.get("/api/state", headers=wrong)
            elif action == "wrong_token_post":
                r = client.post("/api/confirm", headers=wrong, json={})
            else:
                r = client.post("/api/login", json={"token": WRONG})
        elif action == "login_good":
            r = self.good.post("/api/login", json={"token": DEALER})
            self.good.cookies.clear()
        elif action == "state":
            r = self.good.get("/api/state", headers=dealer)
            if r.status_code == 200:
                self.last_seq = int(r.json()["journal_seq"])
        elif action == "rounds":
            r = self.good.get("/api/rounds", params={"last": 5}, headers=dealer)
        elif action == "health":
            r = self.good.get("/api/health")
        elif action == "openapi":
            r = self.good.get("/api/openapi.json")
        elif action == "confirm":
            r = self.good.post("/api/confirm", headers=dealer, json={})
        else:
            raise ValueError(action)
        self.outcome.answer(action, str(r.status_code), r.text)

    def _ws(self, action: str) -> None:
        if action == "ws_bad":
            _, source = self._stranger()
            token = WRONG
        else:
            source, token = "127.0.0.1", DEALER
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT_S, source_address=(source, 0))
        try:
            ws = websockets.sync.client.connect(
                f"ws://127.0.0.1:{self.port}/api/ws", sock=sock, open_timeout=WAIT_S, proxy=None, max_size=None
            )
        except InvalidStatus as refused:
            sock.close()
            self.outcome.answer(action, f"ws http {refused.response.status_code}")
            return
        with ws:
            ws.send(json.dumps({"after": max(0, self.last_seq - 5), "token": token}))
            try:
                while True:
                    message = json.loads(ws.recv(timeout=WAIT_S))
                    if message.get("type") == "state":
                        self.outcome.answer(action, "ws state")
                        return
            except ConnectionClosed as closed:
                code = closed.rcvd.code if closed.rcvd else "no close frame"
                self.outcome.answer(action, f"ws {code}", closed.rcvd.reason if closed.rcvd else "")


def attack(port: int, *, requests: int, threads: int, net: int, seed: int) -> dict[str, Any]:
    """`requests` actions (the fixed, seeded ACTIONS mix) split over `threads` threads, each
    thread doing its share one after the other; wrong credentials from 127.NET.*, a fresh
    address every TRIES_PER_ADDRESS of them. Returns what each action got."""
    outcome = Outcome()
    plans = [_plan(seed * 1000 + t, requests // threads + (t < requests % threads)) for t in range(threads)]

    def work(t: int) -> None:
        attacker = _Attacker(port, net, first_address=t * 1000, outcome=outcome)
        try:
            for action in plans[t]:
                attacker.act(action)
        finally:
            attacker.close()

    workers = [threading.Thread(target=work, args=(t,), name=f"attack-{t}") for t in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return {
        "requests": sum(len(p) for p in plans),
        "threads": threads,
        "net": net,
        "seconds": round(time.monotonic() - started, 2),
        **outcome.to_json(),
    }


def server_errors(summary: dict[str, Any]) -> dict[str, int]:
    """`what: count` of the answers in an attack summary that are server errors."""
    return {
        f"{action} {what}": n
        for action, answers in summary["answers"].items()
        for what, n in answers.items()
        if _is_server_error(what)
    }


# -- the command line ------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.lan_load")
    sub = parser.add_subparsers(dest="what", required=True)
    http = sub.add_parser("http")
    ws = sub.add_parser("ws")
    hit = sub.add_parser("attack")
    for p in (http, ws, hit):
        p.add_argument("--port", type=int, required=True)
    http.add_argument("--rate", type=float, required=True)
    http.add_argument("--seconds", type=float, required=True)
    http.add_argument("--net", type=int, required=True)
    http.add_argument("--addresses", type=int, default=16)
    http.add_argument("--in-flight", type=int, default=64)
    ws.add_argument("--clients", type=int, required=True)
    ws.add_argument("--seconds", type=float, required=True)
    hit.add_argument("--requests", type=int, required=True)
    hit.add_argument("--threads", type=int, required=True)
    hit.add_argument("--net", type=int, required=True)
    hit.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.what == "http":
        result = asyncio.run(
            http_load(
                args.port,
                rate=args.rate,
                seconds=args.seconds,
                net=args.net,
                addresses=args.addresses,
                in_flight=args.in_flight,
            )
        )
    elif args.what == "ws":
        result = asyncio.run(screens(args.port, clients=args.clients, seconds=args.seconds))
    else:
        _go()
        result = attack(args.port, requests=args.requests, threads=args.threads, net=args.net, seed=args.seed)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
