"""The daemon end to end: card-to-light latency, resident memory and start-up time.

`tablectl run --sim` runs as its own process, its shoe and its pole display on ptys owned here,
so every card crosses the same bytes, threads and journal commit as at a table. Per card, in
seven-seat Grand Slam rounds opened through the API (all three bases bet):

  sent     the simulated shoe notes writing the CARD frame to its pty (CLOCK_MONOTONIC)
  lamp     the first rising edge of the 74HC595 latch (RCLK) made by the table loop after
           `sent`: the instant the base lamps change. A card that ends a round changes no lamp
           then (its base is still in the dark half of the next-card blink, and home plate's
           scoring flashes start dark), so those cards are counted, not timed
  display  the card's CD5220 frame arriving on the display pty (checked: "LAST <card>", or
           PAY SEAT / ROUND OVER when the card ended the round)
  api      a GET sent once the display bytes came, answering with the card journaled: one HTTP
           round trip on a kept-alive connection, as a polling dealer screen would see it

The API's pin history is gpiozero's per-pin "time since the previous change", summed from the
oldest state the daemon still holds, so it has no fixed origin on the shoe's clock. The lamp
times come from a second session of the same daemon started through this module
(`python -m benchmarks.bench_daemon stamped-run LOG -- run --sim ...`), whose mock pins also
log each latch change with gpiozero's own monotonic stamp; nothing else differs. That session
polls the light /api/health; the unmodified daemon's session polls /api/state (which in
simulation carries the mock pins' history) and gives memory (VmRSS/VmHWM, against the 512 MB
of a Raspberry Pi Zero 2 W) and start-up (spawn until /api/health answers, on a fresh journal
and on the session's journal, which a restart replays).

Where a card's time goes (`breakdown`, on unless BENCH_STAGES=0): in the stamped session the
launcher also wraps the card's way, stage by stage (STAGES: the loop woken by the pty, the bytes
read, the frame parsed, the daemon's routing, Table._commit's hooks before the journal, the
entry encoded, SQLite's INSERT until its first write-ahead write, those writes, the fdatasync,
SQLite after it, the rest of the append, the reducer, the lamps' frame, the chain's shift until
the latch), with time.monotonic stamps, and benchmarks/sync_stamps.c (built with the system's C
compiler, LD_PRELOAD'ed into that daemon alone) stamps SQLite's pwrite64 and fdatasync on the
same clock. Nothing of it is in the daemon's code: a daemon started any other way pays nothing,
and this one pays a few stamps a card (about 15 calls of time.monotonic).
"""

from __future__ import annotations

import bisect
import http.client
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.engine.cards import STANDARD_DECK, ShoeComposition
from controller.testing import DEALER, ROOT, Daemon
from drivers.shoe.protocol import CardMessage, encode_message
from drivers.shoe.simulated import SimulatedShoe

CARDS = 1000
#: The daemon cannot yet journal a reshuffle (no shoe event or API route reaches
#: Table.shoe_reshuffled), so one shoe holds every card of a session: 24 decks, not 6.
DECKS = 24
STARTS = 5
RESTARTS = 5
BAUD = 115200
DISPLAY_BAUD = 9600
CD5220_FRAME_BYTES = 48  # ESC Q A, 20 columns, CR, ESC Q B, 20 columns, CR
PI_ZERO_2W_MB = 512
SEED = 20261129
#: The installed console script, as a table's service runs it.
TABLECTL = [str(Path(sys.executable).with_name("tablectl"))]
STAMPED = [sys.executable, "-m", "benchmarks.bench_daemon", "stamped-run"]
#: Seven seats on all three bases, seats 3 and 6 with both side bets: up to 21 cards a round.
ROUND = {
    "seats": [
        {
            "seat": seat,
            "wagers": {"first": 25, "second": 10, "third": 5},
            **({"side_bets": {"three_outs": 5, "poker_bonus": 5}} if seat % 3 == 0 else {}),
        }
        for seat in range(1, 8)
    ],
    "blind_seat": None,
}
_CD5220_FRAME = re.compile(rb"\x1bQA([^\r]*)\r\x1bQB([^\r]*)\r")


# -- this side of the cables ----------------------------------------------------------------------


class DisplayTap:
    """The pole display's end of a pty: the daemon writes frames, we timestamp and decode them."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # a cooked tty would rewrite the bytes the daemon sends
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self._slave)
        self._buffer = b""

    def drain(self) -> None:
        self._buffer = b""
        try:
            while os.read(self.master, 4096):
                pass
        except BlockingIOError:
            pass

    def next_frame(self, timeout: float = 5.0) -> tuple[float, str, str]:
        """(when the frame's first bytes arrived, upper line, lower line)."""
        deadline = time.monotonic() + timeout
        started = 0.0
        while (found := _CD5220_FRAME.search(self._buffer)) is None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.master], [], [], left)[0]:
                raise RuntimeError(f"the pole display got no frame within {timeout:g} s")
            chunk = os.read(self.master, 4096)
            now = time.monotonic()
            if b"\x1bQA" in chunk or not started:
                started = now
            self._buffer += chunk
        self._buffer = self._buffer[found.end() :]
        upper, lower = (line.decode("cp437").strip() for line in found.groups())
        return started, upper, lower

    def close(self) -> None:
        os.close(self.master)
        os.close(self._slave)


class Api:
    """The daemon's HTTP API on one kept-alive connection, as a dealer screen holds it."""

    def __init__(self, port: int) -> None:
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.sizes: dict[str, list[int]] = {}

    def get(self, path: str) -> tuple[float, dict[str, Any]]:
        """(when the whole answer had arrived, the answer), asked as the dealer's screen asks."""
        self._conn.request("GET", path, headers={"Authorization": f"Bearer {DEALER}"})
        return self._answer(path)

    def post(self, path: str, body: dict[str, Any], token: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self._conn.request("POST", path, body=json.dumps(body), headers=headers)
        return self._answer(path)[1]

    def _answer(self, path: str) -> tuple[float, dict[str, Any]]:
        response = self._conn.getresponse()
        raw = response.read()
        arrived = time.monotonic()
        self.sizes.setdefault(path, []).append(len(raw))
        doc: dict[str, Any] = json.loads(raw)
        if response.status >= 300:
            raise RuntimeError(f"{path}: HTTP {response.status}: {doc}")
        return arrived, doc

    def close(self) -> None:
        self._conn.close()


# -- a dealing session ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardTiming:
    card: str
    sent: float
    display: float
    api: float
    ended_round: bool  # the display went to PAY SEAT / ROUND OVER


@dataclass
class Session:
    timings: list[CardTiming]
    rounds: int
    ready: dict[str, int]
    after: dict[str, int]
    children: int
    exit_code: int
    api_bytes: list[int]
    pins_share: float  # of /api/state's JSON at the end of the session
    lamp_edges: list[tuple[float, bool, bool]] = field(default_factory=list)  # (when, state, by the loop)
    pin_states: int | None = None  # states the mock pins held at exit (stamped session)
    stages: list[dict[str, Any]] | None = None  # per card, the stamps of its way (stamped session, BENCH_STAGES)
    disk_calls: list[tuple[int, int, float, float]] | None = None  # (kind, fd, entered, returned), sync_stamps.c
    disk_calls_not_kept: int = 0  # calls sync_stamps.c counted past its capacity (their cards lose the disk's stages)


class Bench:
    """A work directory, a simulated shoe and a display tap that daemons are pointed at."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.shoe = SimulatedShoe(
            seed=SEED, composition=ShoeComposition(decks=DECKS), link=str(workdir / "shoe"), shoe_id="BENCH-SHOE"
        )
        self.display = DisplayTap()
        self.config = (
            f'[table]\nid = "BENCH-1"\ngame = "grand-slam"\n[rules]\ndecks = {DECKS}\n'
            f'[shoe]\nurl = "{self.shoe.port}"\nbaudrate = {BAUD}\n'
            f'[display]\nurl = "{self.display.path}"\ndialect = "cd5220"\nbaudrate = {DISPLAY_BAUD}\n'
            '[indicators]\npin_map = "seven-seat-595"\n'
        )

    def __enter__(self) -> Bench:
        self.shoe.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shoe.stop()
        self.display.close()

    def time_start(self, state_dir: Path) -> float:
        """Spawn the unmodified daemon on `state_dir`; seconds until /api/health; stop it."""
        daemon = Daemon(self.workdir, self.config, argv=TABLECTL, state_dir=state_dir)
        daemon.spawn()
        try:
            return daemon.wait_ready(timeout=60.0, every=0.005)
        finally:
            daemon.stop()
            self.display.drain()  # its start-up frames

    def session(
        self,
        state_dir: Path,
        cards: int,
        *,
        probe: str,
        stamped_log: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Session:
        argv = [*STAMPED, str(stamped_log), "--"] if stamped_log else TABLECTL
        daemon = Daemon(self.workdir, self.config, argv=argv, state_dir=state_dir, env=env)
        api: Api | None = None
        daemon.spawn()
        try:
            daemon.wait_ready(timeout=60.0, every=0.005)
            api = Api(daemon.port)
            _wait_connected(api)
            ready = daemon.status()
            timings, rounds = self._deal(api, cards, probe)
            after = daemon.status()
            children = daemon.children()
            api_bytes = api.sizes.get(probe, [])
            # How much of /api/state is the simulation-only mock pin history (none on a live table).
            _, state = api.get("/api/state")
            pins_share = len(json.dumps(state["devices"].get("pins", {}))) / len(json.dumps(state))
        finally:
            if api is not None:
                api.close()
            exit_code = daemon.stop()
        session = Session(timings, rounds, ready, after, children, exit_code, api_bytes, pins_share)
        if stamped_log is not None:
            doc = json.loads(stamped_log.read_text())
            session.lamp_edges = [(float(t), bool(s), bool(loop)) for t, s, loop in doc["edges"]]
            session.pin_states = int(doc["pin_states"])
            session.stages = doc.get("stages")
            session.disk_calls = doc.get("disk_calls")
            session.disk_calls_not_kept = int(doc.get("disk_calls_not_kept", 0))
        return session

    def _deal(self, api: Api, cards: int, probe: str) -> tuple[list[CardTiming], int]:
        """Deal `cards` one at a time, opening rounds as they end; time each card (module doc)."""
        timings: list[CardTiming] = []
        rounds = 0
        _, state = api.get("/api/state")
        if state["blocked"]:
            raise RuntimeError(f"the table is stopped before the first card: {state['prompt']}")
        seq, dealing = state["journal_seq"], state["awaiting"]["kind"] == "card"
        while len(timings) < cards:
            if not dealing:
                if api.get("/api/state")[1]["payment"] == "due":  # the dealer pays the last round first
                    api.post("/api/confirm", {}, DEALER)
                    seq += 1
                api.post("/api/rounds", ROUND, DEALER)
                rounds, seq, dealing = rounds + 1, seq + 1, True
            self.display.drain()  # the round-open frame: the next frame is the card's
            if not self.shoe.wait_acknowledged(5):
                raise RuntimeError("the daemon did not acknowledge the last card within 5 s")
            mark = len(self.shoe.history)
            card = str(self.shoe.draw(1)[0])
            shown, upper, lower = self.display.next_frame()
            answered, doc = api.get(probe)
            while doc["journal_seq"] == seq:  # the loop commits before it writes the display
                answered, doc = api.get(probe)
            seq += 1
            if doc["journal_seq"] != seq:
                raise RuntimeError(f"the journal moved by more than {card}: {api.get('/api/state')[1]['prompt']}")
            dealing = lower == f"LAST {card}"
            if not dealing or probe == "/api/state":
                state = doc if probe == "/api/state" else api.get("/api/state")[1]
                settled = state["awaiting"]["kind"] == "round" and upper.startswith(("PAY SEAT", "ROUND OVER"))
                if state["last_card"] != card or state["blocked"] or not (dealing or settled):
                    raise RuntimeError(f"{card}: the display shows {upper!r}/{lower!r}; the table: {state['prompt']}")
            timings.append(CardTiming(card, _sent_at(self.shoe, mark, card), shown, answered, not dealing))
        return timings, rounds


def _wait_connected(api: Api, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if api.get("/api/state")[1]["devices"].get("shoe", {}).get("state") == "connected":
            return
        time.sleep(0.02)
    raise RuntimeError("the daemon's shoe reader never connected to the simulated shoe")


def _sent_at(shoe: SimulatedShoe, mark: int, card: str) -> float:
    """When the shoe wrote the card's frame: its history note, made just before the os.write."""
    for record in shoe.history[mark:]:
        if record.what.startswith("sent CARD") and record.what.endswith(f" {card}"):
            return record.at
    raise RuntimeError(f"the simulated shoe has no record of sending {card}")


def _lamp_latencies(session: Session) -> tuple[list[float], list[CardTiming]]:
    """Per card, the first latch rising edge the table loop made in (sent, display]; and the
    cards that changed no lamp then (the lamp frame they rendered was the one already shown)."""
    rising = sorted(t for t, lit, by_loop in session.lamp_edges if lit and by_loop)
    out: list[float] = []
    unchanged: list[CardTiming] = []
    for timing in session.timings:
        i = bisect.bisect_left(rising, timing.sent)
        if i < len(rising) and rising[i] <= timing.display:
            out.append(rising[i] - timing.sent)
        else:
            unchanged.append(timing)
    return out, unchanged


# -- where a card's time goes: the stamped session's stages ---------------------------------------------

STAGES_ENV = "BENCH_STAGES"  # set for the stamped daemon: its launcher wraps the card's way with stamps
SHIM_ENV = "BENCH_SYNC_STAMPS"  # the stamped daemon's LD_PRELOAD'ed sync_stamps.c, read back through ctypes
#: A card's way to the lamps, stamp to stamp (each stage ends at the next stamp; CLOCK_MONOTONIC).
STAGES: tuple[tuple[str, str, str], ...] = (
    ("pty_to_loop", "woke", "the CARD frame written to the pty until the table's loop runs the shoe's reader"),
    ("read", "read", "os.read of the pty's bytes"),
    ("parse", "parsed", "the link decodes the frame and hands the card to the daemon"),
    ("dispatch", "handled", "the daemon's routing of the shoe's event until Table.card"),
    ("before_journal", "append", "Table._commit before the journal: its ahead hooks (issue 31's round hold)"),
    ("encode", "encoded", "the entry's JSON, time and the content its CRC and chain link are made of"),
    ("sqlite_to_write", "wal_write", "the INSERT's binding and SQLite's own work until its first write-ahead write"),
    ("wal_write", "sync", "SQLite's pwrite64s of the write-ahead file's frames"),
    ("fsync", "synced", "fdatasync of the write-ahead file (the disk's)"),
    ("after_fsync", "committed", "SQLite after its sync until the INSERT returns to Python"),
    ("append_rest", "appended", "Journal.append after the commit: the chain's link, the Entry"),
    ("apply", "lamps", "the reducer applies the entry (parse_entry, the engine) until the lamps are told"),
    ("lamp_frame", "shift", "the lamps' moves, patterns and the frame until the 74HC595 chain's shift begins"),
    ("shift_out", "latch", "the chain's writes until the latch rises"),
)
#: The same without the disk calls' stamps (no C compiler, or the shim not loaded): the commit as one.
STAGES_NO_SHIM: tuple[tuple[str, str, str], ...] = (
    *STAGES[:6],
    ("sqlite_insert_commit", "committed", "the INSERT and its commit, fsync included"),
    *STAGES[10:],
)
AFTER: tuple[tuple[str, str, str], ...] = (
    ("after_lamps", "card_done", "latch risen until Table.card returns: the display, the listeners, the head file"),
    ("to_ack", "acked", "Table.card returned until the shoe's ACK is written"),
)


def _sync_stamps(where: Path) -> Path | None:
    """benchmarks/sync_stamps.c built into `where` (None when there is no C compiler)."""
    out = where / "sync_stamps.so"
    source = Path(__file__).with_name("sync_stamps.c")
    try:
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(out), str(source), "-ldl"], check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out


def _breakdown(session: Session) -> dict[str, Any]:
    """Per stage of a card's way to the lamps, p50/p99 over the cards that changed a lamp."""
    records = session.stages or []
    calls = session.disk_calls
    stages = STAGES if calls is not None else STAGES_NO_SHIM
    if calls is not None:
        _place_disk_calls(records, calls)
    by_card: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_card.setdefault(record["card"], []).append(record)
    rows: list[dict[str, float]] = []
    for timing in session.timings:
        found = [r for r in by_card.get(timing.card, []) if r.get("handled", 0.0) >= timing.sent]
        if not found:
            continue
        record = min(found, key=lambda r: float(r["handled"]))
        row = {"sent": timing.sent, **{k: v for k, v in record.items() if isinstance(v, float)}}
        if all(key in row for _, key, _ in stages):
            rows.append(row)
    if not rows:
        return {"cards": 0, "why": "no card had every stamp (is the stamped launcher's wrapping out of date?)"}
    out: dict[str, Any] = {}
    start = "sent"
    for name, key, what in (*stages, *AFTER):
        values = [row[key] - row[start] for row in rows if key in row and start in row]
        if values:
            out[name] = {**_ms(values), "what": what}
        start = key
    total = [row["latch"] - row["sent"] for row in rows]
    out["total_sent_to_latch"] = _ms(total)
    cpu = [row["latch_cpu"] - row["woke_cpu"] for row in rows if "latch_cpu" in row and "woke_cpu" in row]
    if cpu:
        out["loop_cpu_woke_to_latch"] = {
            **_ms(cpu),
            "what": (
                "CPU time of the table's loop (time.thread_time) from its wake-up by the pty to the latch: the "
                "code's own cost on the card's way, the fsync's wait and other processes' turns apart"
            ),
        }
    p50_sum = sum(out[name]["p50_ms"] for name, _, _ in stages)
    return {
        "cards": len(rows),
        "how": (
            "the stamped session's daemon, its card path wrapped by its launcher (benchmarks/bench_daemon.py's "
            "_stage_stamps, BENCH_STAGES; nothing in the daemon's code) with time.monotonic at each stage's end, "
            "and the write-ahead file's pwrite64/fdatasync stamped in C (benchmarks/sync_stamps.c, LD_PRELOAD): "
            "all CLOCK_MONOTONIC; a stage is the time from the stamp before; p50/p99 of each stage over the "
            "cards that changed a lamp (the p50s need not sum to the total's)"
        ),
        "stages": out,
        "p50_sum_ms": round(p50_sum, 3),
        "disk_stamps": calls is not None,
        "disk_calls_not_kept": session.disk_calls_not_kept,
    }


def _place_disk_calls(records: list[dict[str, Any]], calls: list[tuple[int, int, float, float]]) -> None:
    """Each card's first write-ahead pwrite, its sync's entry and the last sync's return, taken
    from the C stamps that fall within its INSERT (`insert` .. `committed`)."""
    calls = sorted(calls, key=lambda c: c[2])
    enters = [c[2] for c in calls]
    for record in records:
        begin, end = record.get("insert"), record.get("committed")
        if begin is None or end is None:
            continue
        inside = calls[bisect.bisect_left(enters, begin) : bisect.bisect_right(enters, end)]
        writes = [c for c in inside if c[0] == 3]
        syncs = [c for c in inside if c[0] in (1, 2)]
        if writes and syncs:
            record["wal_write"] = writes[0][2]
            record["sync"] = syncs[0][2]
            record["synced"] = syncs[-1][3]
            record["syncs"] = len(syncs)


# -- the result -----------------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values) * 1e3, 3),
        "p99_ms": round(_percentile(values, 0.99) * 1e3, 3),
        "max_ms": round(max(values) * 1e3, 3),
    }


def _cpu_ms_per_card(session: Session) -> float:
    ticks = session.after["cpu_ticks"] - session.ready["cpu_ticks"]
    return round(ticks / os.sysconf("SC_CLK_TCK") * 1e3 / len(session.timings), 2)


def _source() -> str:
    """The commit the daemon ran from, and whether its code had uncommitted changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "controller", "drivers"], cwd=ROOT, check=False)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    return head.stdout.strip() + (" with uncommitted changes in controller/ or drivers/" if dirty.returncode else "")


def run() -> dict[str, Any]:
    staged = os.environ.get("BENCH_STAGES", "1") != "0"  # the stamped session's per-stage stamps (on unless 0)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-") as tmp, Bench(Path(tmp)) as bench:
        starts = [bench.time_start(Path(tmp) / f"fresh-{i}") for i in range(STARTS)]
        stock = bench.session(Path(tmp) / "stock", CARDS, probe="/api/state")
        restarts = [bench.time_start(Path(tmp) / "stock") for _ in range(RESTARTS)]
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-") as tmp, Bench(Path(tmp)) as bench:
        env = None
        if staged:
            env = {STAGES_ENV: "1"}
            shim = _sync_stamps(Path(tmp))
            if shim is not None:
                env |= {"LD_PRELOAD": str(shim), SHIM_ENV: str(shim)}
        stamped = bench.session(
            Path(tmp) / "stamped", CARDS, probe="/api/health", stamped_log=Path(tmp) / "edges.json", env=env
        )
    lamp, unchanged = _lamp_latencies(stamped)
    if len(lamp) < 0.8 * CARDS:
        raise RuntimeError(f"only {len(lamp)} of {CARDS} cards changed a lamp: the latch log is not what it seems")
    line_time = len(encode_message(CardMessage(1, STANDARD_DECK[0]))) * 10 / BAUD
    hwm_mb = stock.after["VmHWM"] / 1024
    return {
        "name": "daemon",
        "what": (
            f"`tablectl run --sim` as a process: CARD frame written to the shoe's pty until the base "
            f"lamps' 74HC595 latch rises, the pole display's bytes arrive and the API answers with the "
            f"card (p50/p99 over {CARDS} cards each, 7-seat Grand Slam rounds; lower is better); "
            "resident memory after the session; start-up until /api/health answers"
        ),
        "reference": (
            f"the line time of one 9-byte CARD frame at {BAUD} baud ({line_time * 1e3:.3f} ms); "
            "ratio = card-to-lamp p99 / line time; memory against the 512 MB of a Raspberry Pi Zero 2 W"
        ),
        "ratio": round(_percentile(lamp, 0.99) / line_time, 3),
        "results": {
            "daemon_source": _source(),
            "line_time_ms": round(line_time * 1e3, 4),
            "card_to_lamp": {
                **_ms(lamp),
                "cards": len(lamp),
                "cards_with_no_lamp_change": len(unchanged),
                "of_which_ended_the_round": sum(t.ended_round for t in unchanged),
                "rounds_ended": sum(t.ended_round for t in stamped.timings),
                "how": "stamped-pin session: latch (GPIO22) edges logged with gpiozero's own monotonic stamp",
            },
            "card_to_display": {
                **_ms([t.display - t.sent for t in stock.timings]),
                "cards": len(stock.timings),
                "stamped_session": _ms([t.display - t.sent for t in stamped.timings]),
                "wire_time_of_one_frame_at_9600_ms": round(CD5220_FRAME_BYTES * 10 / DISPLAY_BAUD * 1e3, 1),
                "how": "first bytes of the card's 48-byte CD5220 frame on the display pty (a pty has no wire delay)",
            },
            "card_to_api_state": {
                **_ms([t.api - t.sent for t in stock.timings]),
                "cards": len(stock.timings),
                "response_kb_median": round(statistics.median(stock.api_bytes) / 1024, 1),
                "response_kb_max": round(max(stock.api_bytes) / 1024, 1),
                "mock_pin_history_share_of_response": round(stock.pins_share, 3),
                "how": "GET /api/state sent after the display bytes came, answered with the card as last_card",
            },
            "card_to_api_health": {
                **_ms([t.api - t.sent for t in stamped.timings]),
                "cards": len(stamped.timings),
                "how": "GET /api/health sent after the display bytes came, answered with the card's journal_seq",
            },
            "breakdown": _breakdown(stamped) if staged else "not measured (BENCH_STAGES=0)",
            "rounds": {"stock_session": stock.rounds, "stamped_session": stamped.rounds},
            "daemon_cpu_ms_per_card": {
                "polling_api_state": _cpu_ms_per_card(stock),
                "polling_api_health": _cpu_ms_per_card(stamped),
            },
            "memory": {
                "vmrss_mb_at_ready": round(stock.ready["VmRSS"] / 1024, 1),
                "vmrss_mb_after": round(stock.after["VmRSS"] / 1024, 1),
                "vmhwm_mb_after": round(hwm_mb, 1),
                "rss_anon_mb_after": round(stock.after["RssAnon"] / 1024, 1),
                "rss_file_mb_after": round(stock.after["RssFile"] / 1024, 1),
                "vmsize_mb_after": round(stock.after["VmSize"] / 1024, 1),
                "threads": stock.after["Threads"],
                "child_processes": stock.children,
                "pi_zero_2w_mb": PI_ZERO_2W_MB,
                "vmhwm_share_of_pi_zero_2w": round(hwm_mb / PI_ZERO_2W_MB, 3),
                "mock_pin_states_held_at_exit": stamped.pin_states,
            },
            "startup": {
                "fresh_journal_s": [round(s, 3) for s in starts],
                "fresh_journal_median_s": round(statistics.median(starts), 3),
                "session_journal_s": [round(s, 3) for s in restarts],
                "session_journal_median_s": round(statistics.median(restarts), 3),
                "how": "process spawn until GET /api/health answers 200, polled every 5 ms",
            },
            "exit_codes_after_sigterm": {"stock": stock.exit_code, "stamped": stamped.exit_code},
        },
    }


# -- the stamped-pin launcher: the same daemon, its lamp latch logged --------------------------------


def _stamped_run(argv: list[str]) -> int:
    """`stamped-run LOG -- run --sim --config FILE ...`: `tablectl` itself, with mock pins that
    also log each lamp latch change (gpiozero's own stamp; made by the table loop or not), then
    LOG. The daemon's code is untouched: only the pin factory it is handed differs."""
    from gpiozero.pins.mock import MockFactory

    import controller.app.daemon
    from controller.app.config import load
    from controller.cli.main import main
    from drivers.pins import DEFAULT_PIN_FILE, SimulatedPin, load_pin_map

    log, cli_argv = Path(argv[0]), argv[argv.index("--") + 1 :]
    config = load(Path(cli_argv[cli_argv.index("--config") + 1]), simulated=True)
    pin_map = load_pin_map(Path(config.indicators.pin_file or DEFAULT_PIN_FILE), config.indicators.pin_map)
    if pin_map.chain is not None:
        watched = {f"GPIO{pin_map.chain.latch}"}  # the lamps change on the latch's rising edge
    else:
        watched = {f"GPIO{pin}" for bases in pin_map.seats.values() for pin in bases.values()}
    loop_thread = threading.get_ident()  # asyncio.run runs the table loop on this thread
    edges: list[tuple[float, bool, bool]] = []
    factories: list[Any] = []

    latch_risen: list[Callable[[float], None]] = []  # the stages' stamp of a card's latch (BENCH_STAGES)

    class StampedPin(SimulatedPin):  # the daemon's own simulated pins, the watched ones stamped
        def __init__(self, factory: Any, info: Any) -> None:
            super().__init__(factory, info)
            if info.name in watched:
                # On the watched pins alone (the latch): the chain's other writes, about 70 a frame,
                # cost what they cost in `tablectl run --sim`, not a stamping call each too.
                self._change_state = self._stamped_change

        def _stamped_change(self, value: Any) -> bool:
            changed = bool(SimulatedPin._change_state(self, value))
            if changed:
                by_loop = threading.get_ident() == loop_thread
                edges.append((self._last_change, bool(value), by_loop))
                if value and by_loop:
                    for risen in latch_risen:
                        risen(self._last_change)
            return changed

    def stamped_factory(simulated: bool, name: str | None = None) -> Any:
        factories.append(MockFactory(pin_class=StampedPin))
        return factories[-1]

    controller.app.daemon.make_pin_factory = stamped_factory  # type: ignore[attr-defined]
    stages = _stage_stamps(latch_risen) if os.environ.get(STAGES_ENV) == "1" else None
    code = main(cli_argv)
    held = sum(len(pin.states) for factory in factories for pin in factory.pins.values())
    doc: dict[str, Any] = {"edges": edges, "pin_states": held}
    if stages is not None:
        doc["stages"] = stages
        shim = os.environ.get(SHIM_ENV)
        if shim and shim in os.environ.get("LD_PRELOAD", ""):
            doc["disk_calls"], doc["disk_calls_not_kept"] = _disk_calls(shim)
    log.write_text(json.dumps(doc))
    return code


def _stage_stamps(latch_risen: list[Callable[[float], None]]) -> list[dict[str, Any]]:
    """Wrap the card's way in this (stamped) daemon with time.monotonic stamps (STAGES): one
    record a card, from the shoe reader's wake-up to the ACK. Installed only here, by the
    launcher: the daemon's code is the same, and a daemon started otherwise pays nothing."""
    from controller.adapters.outputs import LampOutput
    from controller.app.daemon import Daemon as TableDaemon
    from controller.journal import log as journal_log
    from controller.table.table import Table
    from drivers.indicators.sinks import ShiftRegisterSink
    from drivers.shoe.events import CardRead
    from drivers.shoe.link import HostLink
    from drivers.shoe.loop_reader import LoopShoeReader

    clock, cpu = time.monotonic, time.thread_time  # the table's loop's own CPU time, beside the clock's
    cards: list[dict[str, Any]] = []
    pending: dict[str, Any] = {}
    now: list[dict[str, Any] | None] = [None]  # the card on its way (open until Table.card returns)

    def mark(key: str) -> None:
        record = now[0]
        if record is not None and record["open"] and key not in record:
            record[key] = clock()

    def wrap(owner: Any, name: str, before: str | None = None, after: str | None = None) -> None:
        original = getattr(owner, name)

        def stamped(*args: Any, **kwargs: Any) -> Any:
            if before is not None:
                mark(before)
            result = original(*args, **kwargs)
            if after is not None:
                mark(after)
            return result

        setattr(owner, name, stamped)

    readable, receive, write = LoopShoeReader._readable, HostLink.receive, LoopShoeReader._write
    from_shoe, card, execute = TableDaemon._from_shoe_on_loop, Table.card, journal_log._Db.execute

    def stamped_readable(self: Any) -> None:
        pending.clear()
        pending["woke"] = clock()
        pending["woke_cpu"] = cpu()
        readable(self)

    def stamped_receive(self: Any, data: bytes, at: float) -> Any:
        pending["read"] = clock()
        return receive(self, data, at)

    def stamped_from_shoe(self: Any, event: Any) -> None:
        if isinstance(event, CardRead):
            pending["parsed"] = clock()
        from_shoe(self, event)

    def stamped_card(self: Any, which: Any, source: Any) -> Any:
        record = {**pending, "handled": clock(), "card": str(which), "open": True}
        cards.append(record)
        now[0] = record
        try:
            return card(self, which, source)
        finally:
            record["card_done"] = clock()
            record["open"] = False

    def stamped_write(self: Any, port: Any, data: bytes) -> None:
        record = now[0]
        if record is not None and "card_done" in record and "acked" not in record:
            record["acked"] = clock()
        write(self, port, data)

    def stamped_execute(self: Any, sql: str, args: Any = ()) -> Any:
        if not sql.startswith("INSERT INTO entries"):
            return execute(self, sql, args)
        mark("insert")
        rows = execute(self, sql, args)
        mark("committed")
        return rows

    def risen(at: float) -> None:
        record = now[0]
        if record is not None and record["open"] and "latch" not in record:
            record["latch"] = at
            record["latch_cpu"] = cpu()

    LoopShoeReader._readable = stamped_readable  # type: ignore[method-assign]
    HostLink.receive = stamped_receive  # type: ignore[method-assign,assignment]
    LoopShoeReader._write = stamped_write  # type: ignore[method-assign]
    TableDaemon._from_shoe_on_loop = stamped_from_shoe  # type: ignore[method-assign]
    Table.card = stamped_card  # type: ignore[method-assign,assignment]
    journal_log._Db.execute = stamped_execute  # type: ignore[method-assign]
    wrap(journal_log.Journal, "append", before="append", after="appended")
    wrap(journal_log, "_content", after="encoded")
    wrap(LampOutput, "update", before="lamps")
    wrap(ShiftRegisterSink, "_shift_out", before="shift")
    latch_risen.append(risen)
    return cards


def _disk_calls(shim: str) -> tuple[list[tuple[int, int, float, float]], int]:
    """What sync_stamps.c recorded in this process: (kind 1 fsync / 2 fdatasync / 3 pwrite, fd,
    entered, returned), and how many calls it counted past its capacity and did not keep."""
    import ctypes

    lib = ctypes.CDLL(shim)  # the copy LD_PRELOAD loaded: the same file, the same handle
    made = ctypes.c_long.in_dll(lib, "sync_stamp_count").value
    count = min(made, ctypes.c_long.in_dll(lib, "sync_stamp_capacity").value)  # past it, counted, not kept
    kinds = (ctypes.c_int * count).in_dll(lib, "sync_stamp_kind")
    fds = (ctypes.c_int * count).in_dll(lib, "sync_stamp_fd")
    enters = (ctypes.c_double * count).in_dll(lib, "sync_stamp_enter")
    leaves = (ctypes.c_double * count).in_dll(lib, "sync_stamp_leave")
    return [(kinds[i], fds[i], enters[i], leaves[i]) for i in range(count)], made - count


if __name__ == "__main__":
    if sys.argv[1:2] != ["stamped-run"]:
        sys.exit("usage: python -m benchmarks.bench_daemon stamped-run LOG -- run --sim ...")
    sys.exit(_stamped_run(sys.argv[2:]))
