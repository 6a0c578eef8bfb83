"""The live feed under load: fifty screens on /api/ws while 500 cards are dealt.

`tablectl run --sim` runs as its own process; its shoe is a simulated shoe owned here on a pty
(as in bench_daemon), so each card has a precise start: the shoe's note just before it writes the
CARD frame (CLOCK_MONOTONIC, the clock every stamp here is on). The daemon acknowledges a card
only once it is journaled and handed to the feed, so waiting for the ACK paces the dealing
without polling the daemon. Per card, in seven-seat Grand Slam rounds opened through the API:

  receipt   each screen's WebSocket `recv` returning the card's entry. The screens are 50
            connections in one asyncio loop in this process, on the same two cores as the
            daemon; a screen only stamps the message and reads its seq with a regex while
            dealing (the JSON is parsed and checked afterwards), so the loop's own turn-taking
            adds as little as it can to the stamps
  lag       a screen's receipt minus the first screen's receipt of the same entry (every entry,
            not only cards): the fan-out itself, free of the shoe link and the journal commit
  spread    per entry, the last screen's receipt minus the first's

The next card is drawn only when every screen has the last one, so the latencies are per card,
not a queue building up. Each session makes the same HTTP calls (one GET /api/state per card and
per round): the sessions with 0, 1 and 50 screens differ only in the screens. The daemon's CPU
time (utime + stime from /proc/PID/stat, 10 ms ticks) is taken over the dealing of the 500 cards,
and its memory (VmRSS, VmHWM) after it. Afterwards every screen's messages are parsed and checked:
every journal entry exactly once, in order, gapless, each live entry carrying its state.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from benchmarks.bench_daemon import ROUND, TABLECTL, Api, _percentile, _sent_at, _source, _wait_connected
from controller.api.delta import patched
from controller.engine.cards import ShoeComposition
from controller.testing import DEALER, Daemon
from drivers.shoe.simulated import SimulatedShoe

CARDS = 500
SCREENS = 50
DECKS = 6
MOST_CARDS_A_ROUND = 21  # seven seats on three bases
IDLE_S = 3.0  # the daemon idling with its screens connected, before the first card
WAIT_S = 10.0
SEED = 20261205
#: Starlette writes compact JSON in the order the feed builds it: type, then the entry's seq.
_ENTRY_SEQ = re.compile(rb'^\{"type":"entry","seq":(\d+),')

T = TypeVar("T")


class Screen:
    """One screen on /api/ws: each message's bytes with the moment `recv` handed it over."""

    def __init__(self, number: int, fanout: Fanout) -> None:
        self.number = number
        self.fanout = fanout
        self.received: list[tuple[float, bytes]] = []
        self.last_seq = 0
        self.ended: str | None = None  # why the daemon ended the feed, if it did
        self._closing = False
        self._ws: ClientConnection | None = None
        self._task: asyncio.Task[None] | None = None

    async def connect(self, port: int) -> None:
        self._ws = await connect(f"ws://127.0.0.1:{port}/api/ws", open_timeout=WAIT_S, max_size=None)
        await self._ws.send(json.dumps({"after": 0, "token": DEALER}))
        self._task = asyncio.create_task(self._listen(self._ws))

    async def _listen(self, ws: ClientConnection) -> None:
        try:
            while True:
                data = await ws.recv(decode=False)
                arrived = time.monotonic()
                raw = data if isinstance(data, bytes) else data.encode()
                self.received.append((arrived, raw))
                if found := _ENTRY_SEQ.match(raw):
                    before, self.last_seq = self.last_seq, int(found.group(1))
                    self.fanout.reached(before, self.last_seq)
        except ConnectionClosed as closed:
            if self._closing:
                return
            self.ended = f"closed ({closed.rcvd.code if closed.rcvd else 'no close frame'})"
            self.fanout.reached(self.last_seq, 1 << 62)  # a dead screen must not stall the dealer

    async def close(self) -> None:
        if self._ws is not None and self._task is not None:
            self._closing = True
            await self._ws.close()
            await asyncio.wait_for(self._task, WAIT_S)


class Fanout:
    """How many screens still lack the entry the dealer waits for."""

    def __init__(self) -> None:
        self.target = 0
        self.short = 0
        self.done = asyncio.Event()

    def expect(self, seq: int, screens: list[Screen]) -> None:
        self.target = seq
        self.short = sum(s.last_seq < seq for s in screens)
        self.done.clear()
        if not self.short:
            self.done.set()

    def reached(self, before: int, now: int) -> None:
        if before < self.target <= now:
            self.short -= 1
            if self.short == 0:
                self.done.set()

    async def wait(self, seq: int, screens: list[Screen]) -> None:
        self.expect(seq, screens)
        try:
            await asyncio.wait_for(self.done.wait(), WAIT_S)
        except TimeoutError:
            raise RuntimeError(f"{self.short} screens still lack entry {seq} after {WAIT_S:g} s") from None


@dataclass
class Session:
    screens: int
    cards: list[tuple[int, float, float]] = field(default_factory=list)  # (seq, sent, ACK heard)
    rounds: int = 0
    new_shoes: int = 0
    ready: dict[str, int] = field(default_factory=dict)
    idle_before: dict[str, int] = field(default_factory=dict)
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    dealing_s: float = 0.0
    exit_code: int | None = None
    received: list[list[tuple[float, bytes]]] = field(default_factory=list)


async def _blocking(fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(fn, *args)


async def _session(workdir: Path, screens: int) -> Session:
    shoe = SimulatedShoe(
        seed=SEED, composition=ShoeComposition(decks=DECKS), link=str(workdir / "shoe"), shoe_id="FANOUT-SHOE"
    )
    shoe.start()
    config = f'[table]\nid = "FANOUT-1"\n[rules]\ndecks = {DECKS}\n[shoe]\nurl = "{shoe.port}"\n'
    daemon = Daemon(workdir, config, argv=TABLECTL)
    daemon.spawn()
    fanout = Fanout()
    clients = [Screen(n, fanout) for n in range(screens)]
    session = Session(screens)
    api: Api | None = None
    try:
        daemon.wait_ready(timeout=60.0, every=0.005)
        api = Api(daemon.port)
        _wait_connected(api)
        session.ready = daemon.status()
        await asyncio.gather(*(c.connect(daemon.port) for c in clients))
        await _all_greeted(clients)  # the idle window starts once the state messages are sent
        session.idle_before = daemon.status()
        await asyncio.sleep(IDLE_S)
        session.before = daemon.status()
        started = time.monotonic()
        await _deal(session, shoe, api, fanout, clients)
        session.dealing_s = time.monotonic() - started
        session.after = daemon.status()
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        if api is not None:
            api.close()
        session.exit_code = daemon.stop()
        shoe.stop()
    ended = [f"screen {c.number}: {c.ended}" for c in clients if c.ended]
    if ended:
        raise RuntimeError(f"the daemon ended screens' feeds: {ended[:5]}")
    session.received = [c.received for c in clients]
    return session


async def _all_greeted(clients: list[Screen]) -> None:
    """Wait until every screen has its first message (the state: the journal starts empty)."""
    deadline = time.monotonic() + WAIT_S
    while not all(c.received for c in clients):
        if time.monotonic() > deadline:
            raise RuntimeError(f"screens got no state message within {WAIT_S:g} s of connecting")
        await asyncio.sleep(0.01)


async def _deal(session: Session, shoe: SimulatedShoe, api: Api, fanout: Fanout, clients: list[Screen]) -> None:
    rng = random.Random(SEED)
    state = (await _blocking(api.get, "/api/state"))[1]
    while len(session.cards) < CARDS:
        if state["blocked"]:
            raise RuntimeError(f"the table stopped: {state['prompt']}")
        if state["awaiting"]["kind"] != "card":
            if state["payment"] == "due":  # the dealer pays the last round before the next opens
                await _blocking(api.post, "/api/confirm", {}, DEALER)
            if state["shoe"]["remaining"] < MOST_CARDS_A_ROUND:
                await _blocking(api.post, "/api/shoe/reshuffle", {}, DEALER)
                fresh = list(ShoeComposition(decks=DECKS).cards())
                rng.shuffle(fresh)
                await _blocking(shoe.reload, fresh)
                session.new_shoes += 1
            await _blocking(api.post, "/api/rounds", ROUND, DEALER)
            session.rounds += 1
            state = (await _blocking(api.get, "/api/state"))[1]
            await fanout.wait(state["journal_seq"], clients)
        mark = len(shoe.history)
        card = str((await _blocking(shoe.draw, 1))[0])
        if not await _blocking(shoe.wait_acknowledged, WAIT_S):
            raise RuntimeError(f"the daemon did not acknowledge {card} within {WAIT_S:g} s")
        seq = state["journal_seq"] + 1
        state = (await _blocking(api.get, "/api/state"))[1]
        if state["journal_seq"] != seq or state["last_card"] != card:
            raise RuntimeError(f"{card} is not entry {seq}: the table says {state['prompt']}")
        await fanout.wait(seq, clients)
        session.cards.append((seq, _sent_at(shoe, mark, card), _ack_at(shoe, mark)))


def _ack_at(shoe: SimulatedShoe, mark: int) -> float:
    """When the shoe heard the daemon's ACK of the card it sent after `mark` (journaled by then)."""
    for record in shoe.history[mark:]:
        if record.what.startswith("got ACK") and "nothing" not in record.what:
            return record.at
    raise RuntimeError("the simulated shoe has no record of the card's ACK")


# -- checking and summing up ------------------------------------------------------------------------


def _receipts(session: Session) -> dict[int, list[float]]:
    """seq -> each screen's receipt time; raises unless every screen got every entry once, in
    order, gapless, each live entry with the state after it (whole, or its changes applied)."""
    out: dict[int, list[float]] = {}
    last = session.cards[-1][0]
    for number, received in enumerate(session.received):
        seqs: list[int] = []
        state: Any = None  # as the screen has it: a message's whole state, or its changes applied
        for arrived, raw in received:
            message = json.loads(raw)
            if "state" in message:
                state = message["state"]
            elif "changes" in message:
                state = patched(state, message["changes"])
            if message["type"] != "entry":
                continue
            match = _ENTRY_SEQ.match(raw)
            if match is None or int(match.group(1)) != message["seq"]:
                raise RuntimeError(f"screen {number}: the seq read while dealing is not the message's")
            if message["live"] and state["journal_seq"] != message["seq"]:
                raise RuntimeError(f"screen {number}: entry {message['seq']} carries another entry's state")
            seqs.append(message["seq"])
            out.setdefault(message["seq"], []).append(arrived)
        if seqs != list(range(1, last + 1)):
            raise RuntimeError(f"screen {number}: got {len(seqs)} entries, not 1..{last} in order")
    return out


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values) * 1e3, 3),
        "p99_ms": round(_percentile(values, 0.99) * 1e3, 3),
        "max_ms": round(max(values) * 1e3, 3),
        "samples": len(values),
    }


def _cpu_ms(start: dict[str, int], end: dict[str, int]) -> float:
    return (end["cpu_ticks"] - start["cpu_ticks"]) / os.sysconf("SC_CLK_TCK") * 1e3


def _summary(session: Session) -> dict[str, Any]:
    cpu_ms = _cpu_ms(session.before, session.after)
    out: dict[str, Any] = {
        "screens": session.screens,
        "cards": len(session.cards),
        "journal_entries": session.cards[-1][0],
        "rounds": session.rounds,
        "new_shoes": session.new_shoes,
        "dealing_s": round(session.dealing_s, 2),
        "card_sent_to_ack_heard": _ms([ack - sent for _, sent, ack in session.cards]),
        "daemon_cpu_ms_per_card": round(cpu_ms / len(session.cards), 3),
        "daemon_cpu_share_while_dealing": round(cpu_ms / 1e3 / session.dealing_s, 3),
        "daemon_idle_cpu_ms_per_s": round(_cpu_ms(session.idle_before, session.before) / IDLE_S, 2),
        "memory_mb": {
            "vmrss_at_ready": round(session.ready["VmRSS"] / 1024, 1),
            "vmrss_screens_connected": round(session.idle_before["VmRSS"] / 1024, 1),
            "vmrss_after_dealing": round(session.after["VmRSS"] / 1024, 1),
            "vmhwm_after_dealing": round(session.after["VmHWM"] / 1024, 1),
        },
        "threads": session.after["Threads"],
        "exit_code_after_sigterm": session.exit_code,
    }
    if session.screens:
        receipts = _receipts(session)
        out["card_sent_to_receipt"] = _ms([at - sent for seq, sent, _ in session.cards for at in receipts[seq]])
        out["lag_behind_first_screen"] = _ms([at - min(times) for times in receipts.values() for at in times])
        out["spread_first_to_last_screen"] = _ms([max(times) - min(times) for times in receipts.values()])
        out["message_kb_median"] = round(statistics.median(len(raw) for _, raw in session.received[0]) / 1024, 2)
    return out


def run() -> dict[str, Any]:
    sessions: dict[int, dict[str, Any]] = {}
    for screens in (0, 1, SCREENS):
        with tempfile.TemporaryDirectory(prefix="tablectl-fanout-") as tmp:
            sessions[screens] = _summary(asyncio.run(_session(Path(tmp), screens)))
    none, one, many = sessions[0], sessions[1], sessions[SCREENS]
    ratio = many["daemon_cpu_ms_per_card"] / none["daemon_cpu_ms_per_card"]
    return {
        "name": "fanout",
        "what": (
            f"`tablectl run --sim` feeding {SCREENS} WebSocket screens on 127.0.0.1 while {CARDS} cards are dealt "
            "one at a time in 7-seat Grand Slam rounds (shoe simulated here on a pty): per (screen, card) the time "
            "from the shoe writing the CARD frame to the screen's recv returning the entry, and per (screen, entry) "
            "the lag behind the first screen to get it, p50/p99 (lower is better); the daemon's CPU per card and "
            "its memory with the screens connected; every screen checked to get every entry once, in order"
        ),
        "reference": (
            "the same session with no screen connected (and, for latency, with one screen); ratio = the "
            f"daemon's CPU time per card with {SCREENS} screens / with none"
        ),
        "ratio": round(ratio, 2),
        "results": {
            "daemon_source": _source(),
            f"screens_{SCREENS}": many,
            "screens_1": one,
            "screens_0": none,
            "cost_of_screens": {
                "cpu_ms_per_card_per_screen": round(
                    (many["daemon_cpu_ms_per_card"] - none["daemon_cpu_ms_per_card"]) / SCREENS, 3
                ),
                "vmhwm_mb_more_than_no_screens": round(
                    many["memory_mb"]["vmhwm_after_dealing"] - none["memory_mb"]["vmhwm_after_dealing"], 1
                ),
                "vmrss_after_ratio": round(
                    many["memory_mb"]["vmrss_after_dealing"] / none["memory_mb"]["vmrss_after_dealing"], 3
                ),
                "card_to_receipt_p99_ratio_50_vs_1_screen": round(
                    many["card_sent_to_receipt"]["p99_ms"] / one["card_sent_to_receipt"]["p99_ms"], 2
                ),
            },
            "how": {
                "clock": "CLOCK_MONOTONIC in the benchmark process (the shoe's notes and the screens' stamps)",
                "screens": f"{SCREENS} websockets connections in one asyncio loop in the benchmark process",
                "pacing": "next card only after the daemon's ACK (journaled) and every screen has the entry",
                "cpu": "utime+stime of the daemon PID over the dealing, 10 ms ticks",
                "idle": f"daemon CPU over {IDLE_S:g} s with the screens connected and no card dealt",
                "ack": (
                    "card_sent_to_ack_heard: the daemon's shoe reader thread writes the ACK once the table loop "
                    "has journaled the card and queued it for the screens; with many screens that thread waits "
                    "for the GIL behind the fan-out, so the ACK can come after most screens have the entry"
                ),
            },
        },
    }
