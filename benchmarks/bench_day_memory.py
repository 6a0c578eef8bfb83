"""The daemon's memory over a day of play: 86,400 journal entries, 50 screens coming and going.

`tablectl run --sim` runs as its own process (its shoe simulated here on a pty, as in
bench_fanout); seven-seat Grand Slam rounds are opened through the API and dealt card by card
(each card waits for the daemon's acknowledgement: journaled) as fast as the daemon takes them,
until the journal holds ENTRIES entries (a day at a busy table: about one a second). Every
"minute" of that day (every ENTRIES / 1440 entries) 50 screens connect to /api/ws asking for what
they miss (`after` the seq they were at), read up to the state, and disconnect: 72,000 connections
in all. Every SAMPLE_EVERY entries the memory of both of the daemon's processes is read:

  rss   VmRSS, each process and the sum (pages two processes share are counted in each)
  pss   the proportional set size (/proc/PID/smaps_rollup): shared pages counted a share each,
        so the two processes add up honestly (the figure a Pi's memory actually gives them)
  private_dirty, shared_dirty   each process's written pages of its own, and the written pages
        the two still share (the API's process is forked from the table's: what was loaded
        before the fork is shared until either process writes a page of it, a reference count
        or an allocation in a free slot enough)

Growth is the slope of a straight line through the samples of the second half of the run (the
caches filled by then), in MB per 10,000 entries; the memory after the day against issue 35's 70 MB.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from benchmarks.bench_daemon import ROUND, TABLECTL, Api, _source, _wait_connected
from controller.engine.cards import ShoeComposition
from controller.testing import DEALER, Daemon
from drivers.shoe.simulated import SimulatedShoe

ENTRIES = 86_400
#: BENCH_ENTRIES=N plays a shorter "day" (the screens still come and go every 60 entries).
PLAYED = int(os.environ.get("BENCH_ENTRIES", ENTRIES))
SCREENS = 50
CHURN_EVERY = ENTRIES // 1440  # a "minute" of the day
SAMPLE_EVERY = 500
DECKS = 6
MOST_CARDS_A_ROUND = 21
SEED = 20261202
GOAL_MB = 70.0
WAIT_S = 30.0
#: The figures whose growth over the second half is reported: both processes' and each one's.
GROWTH_KEYS = (
    "rss_mb", "table_rss_mb", "api_rss_mb", "pss_mb", "table_pss_mb", "api_pss_mb",
    "table_private_dirty_mb", "api_private_dirty_mb",
)


async def _screens_come_and_go(port: int, after: int) -> None:
    """SCREENS screens connect asking for what they miss after `after`, read up to the state, go."""

    async def one() -> None:
        async with connect(f"ws://127.0.0.1:{port}/api/ws", open_timeout=WAIT_S, max_size=None) as ws:
            await ws.send(json.dumps({"after": after, "token": DEALER}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
                if message["type"] == "state":
                    return
                if message["type"] == "error":
                    raise RuntimeError(f"a screen was refused: {message}")

    await asyncio.gather(*(one() for _ in range(SCREENS)))


def _memory(daemon: Daemon) -> dict[str, float]:
    status = daemon.status()
    return {
        "entries": 0,
        "rss_mb": round(status["VmRSS"] / 1024, 1),
        "table_rss_mb": round(status["table_VmRSS"] / 1024, 1),
        "api_rss_mb": round(status["api_VmRSS"] / 1024, 1),
        "pss_mb": round(status.get("Pss", 0) / 1024, 1),
        "table_pss_mb": round(status.get("table_Pss", 0) / 1024, 1),
        "api_pss_mb": round(status.get("api_Pss", 0) / 1024, 1),
        "table_private_dirty_mb": round(status.get("table_Private_Dirty", 0) / 1024, 1),
        "api_private_dirty_mb": round(status.get("api_Private_Dirty", 0) / 1024, 1),
        "shared_dirty_mb": round(status.get("api_Shared_Dirty", 0) / 1024, 1),
    }


def _slope_per_10k(samples: list[dict[str, float]], key: str) -> float:
    xs = [s["entries"] for s in samples]
    ys = [s[key] for s in samples]
    if len(xs) < 2:
        return 0.0
    return round(statistics.linear_regression(xs, ys).slope * 10_000, 3)


async def _day(workdir: Path, entries: int) -> dict[str, Any]:
    shoe = SimulatedShoe(
        seed=SEED, composition=ShoeComposition(decks=DECKS), link=str(workdir / "shoe"), shoe_id="DAY-SHOE"
    )
    shoe.start()
    config = f'[table]\nid = "DAY-1"\n[rules]\ndecks = {DECKS}\n[shoe]\nurl = "{shoe.port}"\n'
    daemon = Daemon(workdir, config, argv=TABLECTL)
    daemon.spawn()
    rng = random.Random(SEED)
    samples: list[dict[str, float]] = []
    started = time.monotonic()
    connections = 0
    try:
        daemon.wait_ready(timeout=60.0, every=0.01)
        api = Api(daemon.port)
        _wait_connected(api)
        ready = _memory(daemon)
        state = api.get("/api/state")[1]
        seq = state["journal_seq"]
        next_churn, next_sample = CHURN_EVERY, SAMPLE_EVERY
        while seq < entries:
            if state["awaiting"]["kind"] != "card":
                if state["payment"] == "due":
                    api.post("/api/confirm", {}, DEALER)
                if state["shoe"]["remaining"] < MOST_CARDS_A_ROUND:
                    api.post("/api/shoe/reshuffle", {}, DEALER)
                    fresh = list(ShoeComposition(decks=DECKS).cards())
                    rng.shuffle(fresh)
                    shoe.reload(fresh)
                api.post("/api/rounds", ROUND, DEALER)
            else:
                shoe.draw(1)
                if not shoe.wait_acknowledged(WAIT_S):
                    raise RuntimeError(f"the daemon did not acknowledge a card within {WAIT_S:g} s")
            state = api.get("/api/state")[1]
            seq = state["journal_seq"]
            if seq >= next_churn:
                next_churn += CHURN_EVERY
                await _screens_come_and_go(daemon.port, max(0, seq - 20))
                connections += SCREENS
                api.close()  # the server ends a kept-alive connection left idle meanwhile: a fresh one
                api = Api(daemon.port)
            if seq >= next_sample:
                next_sample += SAMPLE_EVERY
                samples.append({**_memory(daemon), "entries": seq})
                api.close()  # a fresh connection now and then, as a dealer screen's reloads
                api = Api(daemon.port)
        after = {**_memory(daemon), "entries": seq}
        api.close()
    finally:
        code = daemon.stop()
        shoe.stop()
    if code != 0:
        raise RuntimeError(f"the daemon exited {code}: {daemon.log()}")
    settled = [s for s in samples if s["entries"] >= entries // 2] or samples
    return {
        "entries": after["entries"],
        "screen_connections": connections,
        "wall_s": round(time.monotonic() - started, 1),
        "at_ready": ready,
        "after_the_day": after,
        "growth_mb_per_10k_entries_second_half": {
            key: _slope_per_10k(settled, key) for key in GROWTH_KEYS
        },
        "samples": samples,
    }


def run(entries: int = PLAYED) -> dict[str, Any]:
    source = _source()  # before the run: the code the daemon starts with
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="tablectl-day-") as tmp:
        day = asyncio.run(_day(Path(tmp), entries))
    load_after = os.getloadavg()
    after = day["after_the_day"]
    return {
        "name": "day_memory",
        "what": (
            f"`tablectl run --sim` over a day of play ({entries} journal entries of 7-seat Grand Slam rounds, dealt "
            f"as fast as the daemon takes them) while {SCREENS} WebSocket screens connect, catch up and disconnect "
            f"every {CHURN_EVERY} entries (a minute of the day): the memory of both of its processes (RSS and PSS) "
            "as it goes, and its growth (lower is better)"
        ),
        "reference": f"issue 35 point 5: under {GOAL_MB:g} MB after the day, no growth; ratio = PSS of both processes "
        f"after the day / {GOAL_MB:g} MB",
        "ratio": round(after["pss_mb"] / GOAL_MB, 3),
        "load_average": {"before": [round(x, 1) for x in load_before], "after": [round(x, 1) for x in load_after]},
        "results": {"daemon_source": source, **day},
    }
