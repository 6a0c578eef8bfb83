"""What issue 31's work costs the card path, measured apart from the machine's noise.

The `daemon` benchmark's p99 moves more from run to run on a shared machine (3.9 vs 7.0 ms on the
same commit) than the 0.2 ms issue 31 allows, so two runs of it, before and after, cannot show
the difference. Here the card path runs in one process, three tables side by side on one table
loop, their rounds INTERLEAVED (a round of each in turn), so whatever the machine does hits the
three alike:

  off       the table as before issue 31: its journal (on the disk, every entry fsync'd), the
            lamps (a 74HC595 chain on mock pins, the blinker thread), the pole display, the API's
            table side (the gate and the live feed, each message pickled down a socket as the
            channel sends it to the API's process) and the floor publisher to a Mosquitto broker
            on 127.0.0.1 (its own threads)
  signing   the same, and issue 31's head signing: at each round's end the chain's head is
            signed (Ed25519) and journaled as a `chain-head` entry (fsync'd), which the floor
            publisher then publishes
  checking  the same as signing, while the periodic software authentication runs (a signed
            release of this code in a temporary directory, every file hashed against the signed
            manifest) back to back in a thread: the worst case, every card dealt during a check
            (a table runs one every `[security] verify_every` hours, 24 by default)

Each card is handed to the table's loop from a thread, as the shoe's reader does
(run_coroutine_threadsafe, then waiting for the result), and timed from the hand-over until the
table has journaled it and told every output (the moment the shoe's thread acknowledges it).
Per card: the wall time (p50/p99) and the CPU time of the loop's thread from the card until the
next card (so the signing its round's last card causes is counted with that card). The
difference of each arm from `off`, with a 95% bootstrap interval (cards resampled within each arm).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from benchmarks.bench_daemon import ROUND, _source
from benchmarks.bench_floor import mosquitto
from controller.adapters.floor.config import Broker, FloorConfig
from controller.adapters.floor.publisher import FloorPublisher, loop_mark
from controller.adapters.outputs import DisplayOutput, LampOutput
from controller.api.channel import frame
from controller.api.side import table_side
from controller.app.daemon import SWITCH_INTERVAL_S, HeadSigner
from controller.engine.cards import Card
from controller.journal.log import Journal
from controller.security.authentication import authenticate
from controller.security.release import MANIFEST, SIGNATURE, manifest_text
from controller.table import Table
from controller.testing import ROOT
from drivers.display.device import open_display
from drivers.indicators.base_indicators import BaseIndicators
from drivers.pins import DEFAULT_PIN_FILE, load_pin_map

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "100"))  # rounds of each arm
DECKS = 6
SEED = 20261202
ARMS = ("off", "signing", "checking")
BOOTSTRAP = 2000
LIMIT_MS = 0.2  # issue 31: nothing slows the card path by more than this at p99


class Arm:
    """One table with its outputs, listeners and threads, as the daemon builds it."""

    def __init__(self, name: str, home: Path, broker: Broker, loop: asyncio.AbstractEventLoop, stack: ExitStack):
        from gpiozero.pins.mock import MockFactory, MockPWMPin

        self.name = name
        self.journal = Journal(home / name / "journal.sqlite3")
        stack.callback(self.journal.close)
        pin_map = load_pin_map(Path(DEFAULT_PIN_FILE), "seven-seat-595")
        lamps = BaseIndicators.from_pin_map(pin_map, pin_factory=MockFactory(pin_class=MockPWMPin))
        stack.callback(lamps.close)
        display = open_display({"dialect": "cd5220"}, simulated=True)
        stack.callback(display.close)
        outputs: list[Any] = [LampOutput(lamps, frozenset(pin_map.seats)), DisplayOutput(display, f"SIM {name}")]
        self.table = Table(self.journal, game="grand-slam", rules={"decks": DECKS}, table_id=name.upper(),
                           simulated=True, outputs=outputs)  # fmt: skip
        # The API's table side, its live feed written (by the loop's transport, as the channel
        # writes it) down a socket to another process that reads it, as the API's process does.
        self.channel, theirs = socket.socketpair()
        stack.callback(self.channel.close)
        reader = subprocess.Popen(["cat"], stdin=theirs.fileno(), stdout=subprocess.DEVNULL)
        theirs.close()
        stack.callback(reader.wait, 30)
        stack.callback(reader.kill)
        self.writer: asyncio.StreamWriter | None = None

        def deliver(tick: int, message: Any) -> None:
            assert self.writer is not None
            self.writer.write(frame(("feed", tick, message)))

        gate = table_side(self.table, loop, deliver=deliver)
        assert gate.commands.feed is not None
        gate.commands.feed.count = 1  # one screen listens
        self.signer: HeadSigner | None = None
        if name != "off":
            from controller.security.chainhead import table_key

            self.signer = HeadSigner(self.table, table_key(home / name / "table.key"), loop)
            self.table.listeners.append(self.signer)
        publisher = FloorPublisher(
            FloorConfig(broker=broker, site="bench"),
            self.journal.path,
            table_id=self.table.table_id,
            game="grand-slam",
            rules={"decks": DECKS},
            mark=loop_mark(self.journal, loop),
        )
        self.table.listeners.append(publisher)
        publisher.start()
        stack.callback(publisher.stop)
        self.publisher = publisher
        self.rng = random.Random(SEED)
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.ends: list[float] = []  # the loop CPU of each round's last card
        self.heads = 0

    def next_cards(self) -> list[Card]:
        shoe = self.table.shoe
        if shoe.remaining_count < 21:
            self.table.shoe_reshuffled(by="bench")
        cards = shoe.remaining_cards()
        pool = [card for card, n in sorted(cards.items(), key=lambda c: str(c[0])) for _ in range(n)]
        self.rng.shuffle(pool)
        return pool


async def _round(arm: Arm, shoe_thread: ShoeThread) -> None:
    table = arm.table
    if table.payouts_due():
        table.button("confirm", by="bench")
    pool = arm.next_cards()
    table.open_round(ROUND, by="bench")
    await asyncio.sleep(0)
    while table.awaiting.kind == "card":
        card = pool.pop()
        started_cpu = time.thread_time()
        wall = await shoe_thread.hand(lambda c=card: table.card(c, {"via": "bench"}))  # type: ignore[misc]
        # Whatever the card set going on the loop (the head signing, two hops after it) runs now,
        # before the next card, and is counted with it.
        for _ in range(3):
            await asyncio.sleep(0)
        arm.wall.append(wall)
        arm.cpu.append(time.thread_time() - started_cpu)
        if table.awaiting.kind != "card":  # the round's last card: the one whose round end is signed
            arm.ends.append(arm.cpu[-1])


class ShoeThread:
    """The shoe reader's thread: hands a card to the loop and waits until the table has it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    async def hand(self, job: Callable[[], Any]) -> float:
        def in_thread() -> float:
            started = time.perf_counter()

            async def on_loop() -> None:
                job()

            asyncio.run_coroutine_threadsafe(on_loop(), self.loop).result(timeout=60)
            return time.perf_counter() - started

        return await asyncio.to_thread(in_thread)


@contextmanager
def _checking(
    release: Path, key: Path, running: threading.Event, idle: threading.Event
) -> Iterator[list[float]]:
    """The software check, back to back in a thread while `running` is set (`idle` while no run
    is under way): each run's CPU."""
    done = threading.Event()
    runs: list[float] = []
    failed: list[str] = []

    def loop() -> None:
        while not done.is_set():
            if not running.wait(0.05):
                continue
            idle.clear()
            started = time.thread_time()
            report = authenticate(key, root=release)
            runs.append(time.thread_time() - started)
            idle.set()
            if report.ok is not True:
                failed.append(report.summary())
                return

    thread = threading.Thread(target=loop, name="software-check", daemon=True)
    thread.start()
    try:
        yield runs
    finally:
        done.set()
        thread.join(timeout=120)
    if failed:
        raise RuntimeError(f"the benchmark's release did not authenticate: {failed[0]}")


def _release(home: Path) -> tuple[Path, Path]:
    """A signed release of this code in `home` (the package's files and a signed manifest, as
    `make release` makes one): (its root, the release's public key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    root = home / "site"
    files: list[tuple[str, bytes]] = []
    for package in ("controller", "drivers", "vision"):
        for path in sorted((ROOT / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc",):
                rel = path.relative_to(ROOT).as_posix()
                target = root / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
                files.append((rel, path.read_bytes()))
    info = root / "tablectl-0.0.0.dist-info"
    info.mkdir()
    manifest = manifest_text(files).encode()
    key = Ed25519PrivateKey.generate()
    (info / MANIFEST).write_bytes(manifest)
    (info / SIGNATURE).write_bytes(key.sign(manifest))
    public = home / "release-key.pub"
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return root, public


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values) * 1e3, 4),
        "p99_ms": round(_percentile(values, 0.99) * 1e3, 4),
        "mean_ms": round(statistics.fmean(values) * 1e3, 4),
    }


def _difference(arm: list[float], base: list[float], measure: Callable[[list[float]], float]) -> dict[str, Any]:
    """measure(arm) - measure(base) in ms, with a 95% bootstrap interval."""
    rng = random.Random(SEED)
    diffs = sorted(
        measure(rng.choices(arm, k=len(arm))) - measure(rng.choices(base, k=len(base))) for _ in range(BOOTSTRAP)
    )
    return {
        "ms": round((measure(arm) - measure(base)) * 1e3, 4),
        "ci95_ms": [round(diffs[int(0.025 * BOOTSTRAP)] * 1e3, 4), round(diffs[int(0.975 * BOOTSTRAP)] * 1e3, 4)],
    }


async def _session(home: Path, broker: Broker, release: Path, key: Path) -> tuple[dict[str, Arm], list[float]]:
    loop = asyncio.get_running_loop()
    sys.setswitchinterval(SWITCH_INTERVAL_S)  # as the daemon's table loop runs
    running, idle = threading.Event(), threading.Event()
    idle.set()
    with ExitStack() as stack:
        arms = {name: Arm(name, home, broker, loop, stack) for name in ARMS}
        for arm in arms.values():
            arm.writer = (await asyncio.open_unix_connection(sock=arm.channel))[1]
        checks = stack.enter_context(_checking(release, key, running, idle))
        shoe_thread = ShoeThread(loop)
        for _ in range(3):  # warm up: every code path loaded and run once
            for arm in arms.values():
                await _round(arm, shoe_thread)
        for arm in arms.values():
            arm.wall.clear()
            arm.cpu.clear()
            arm.ends.clear()
        order = list(arms)
        for turn in range(ROUNDS):
            # Each arm in turn, the order rotated every time: none always follows another.
            for name in order[turn % len(order) :] + order[: turn % len(order)]:
                if name == "checking":
                    running.set()
                    await asyncio.sleep(0.02)  # the check is under way
                await _round(arms[name], shoe_thread)
                running.clear()
                await asyncio.to_thread(idle.wait)  # no check runs into the next arm's round
        for arm in arms.values():
            arm.publisher.wait_acked(arm.journal.last_seq, 30.0)
            arm.heads = len(arm.journal.last_of_kinds(("chain-head",), 10_000))
            await asyncio.to_thread(arm.publisher.stop)
        await asyncio.sleep(0.1)  # the publishers' last marks are written before the journals close
        return arms, list(checks)


def _summary(arms: dict[str, Arm], checks: list[float]) -> dict[str, Any]:
    base = arms["off"]
    results: dict[str, Any] = {}
    for name, arm in arms.items():
        results[name] = {
            "cards": len(arm.wall),
            "chain_heads_signed": arm.heads,
            "card_wall": _stats(arm.wall),
            "card_loop_cpu": _stats(arm.cpu),
            "round_end_card_loop_cpu": _stats(arm.ends),
        }
        if arm is not base:
            results[name]["more_than_off"] = {
                "wall_p99": _difference(arm.wall, base.wall, lambda v: _percentile(v, 0.99)),
                "wall_p50": _difference(arm.wall, base.wall, statistics.median),
                "loop_cpu_mean": _difference(arm.cpu, base.cpu, statistics.fmean),
                "round_end_card_loop_cpu_mean": _difference(arm.ends, base.ends, statistics.fmean),
            }
    results["software_check"] = {
        "runs_while_checking": len(checks),
        "cpu_s_per_run_median": round(statistics.median(checks), 4) if checks else None,
    }
    return results


def _verdict(signing: dict[str, Any]) -> str:
    """What the signing arm's differences show against the 0.2 ms bound, in words."""
    words = []
    for key, label in (("wall_p50", "p50"), ("wall_p99", "p99")):
        low, high = signing[key]["ci95_ms"]
        if high <= LIMIT_MS:
            words.append(f"{label}: within {LIMIT_MS} ms (95% interval {low} to {high} ms)")
        elif low > LIMIT_MS:
            words.append(f"{label}: MORE than {LIMIT_MS} ms (95% interval {low} to {high} ms)")
        else:
            words.append(f"{label}: not resolved to {LIMIT_MS} ms on this machine (95% interval {low} to {high} ms)")
    return "; ".join(words)


def run() -> dict[str, Any]:
    """Two sessions: the journals on a tmpfs (/dev/shm: an fsync costs nothing there, so what is
    left is the code's) and on the disk (every fsync the disk's own, as at a table)."""
    results: dict[str, Any] = {"daemon_source": _source()}
    for where, parent in (("tmpfs", "/dev/shm"), ("disk", None)):
        with tempfile.TemporaryDirectory(prefix="tablectl-card-path-", dir=parent) as tmp:
            home = Path(tmp)
            release, key = _release(home)
            with mosquitto(home) as broker:
                arms, checks = asyncio.run(_session(home, broker, release, key))
            results[f"journal_on_{where}"] = _summary(arms, checks)
    signing = results["journal_on_tmpfs"]["signing"]["more_than_off"]
    results["verdict"] = _verdict(signing)
    results["how"] = {
        "order": (
            f"a round of each arm in turn ({', '.join(ARMS)}), the order rotated each turn, {ROUNDS} rounds each "
            "after 3 to warm up; a software check never runs into another arm's round"
        ),
        "card": "handed from a thread to the table's loop (run_coroutine_threadsafe) until journaled and told",
        "cpu": "thread CPU of the table's loop from the card until the next card (the signing counted)",
        "ci": f"95% bootstrap interval, {BOOTSTRAP} resamples of the cards of each arm",
        "machine": "shared with other engineers' builds and tests (load varied); the arms share the noise",
    }
    return {
        "name": "card_path",
        "what": (
            "the card path (handed from the shoe's thread until journaled, fsync'd and told to lamps, display, "
            "the API's feed and the floor publisher) with and without issue 31's work (head signing at each "
            "round's end and its publish; and with the software check running), interleaved round by round "
            "in one process: wall p50/p99 and loop CPU per card, the difference from `off` with a 95% interval "
            "(lower is better)"
        ),
        "reference": (
            f"issue 31's bound: at most {LIMIT_MS} ms more at p99; ratio = the upper end of the 95% interval "
            f"of the signing arm's p99 difference (journal on the tmpfs) / {LIMIT_MS} ms: at most 1 shows the "
            "bound held"
        ),
        "ratio": round(signing["wall_p99"]["ci95_ms"][1] / LIMIT_MS, 3),
        "results": results,
    }
