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

  once  the daemon's resident memory counted once (`_resident_once`): the union of the physical
        pages both processes hold (/proc/PID/pagemap's page frame numbers), a page the two share
        (what the fork left shared, a library's code) counted once, as the kernel and a cgroup
        charge it and as a Pi's RAM holds it; split into anonymous pages (the heap, Python's
        objects, a page either process wrote since the fork) and file-backed ones (code and data
        of the interpreter and the libraries: pages the page cache holds once whoever maps them).
        RSS summed counts every page the two share twice; PSS gives each process a share of a
        page mapped by other processes on the machine too, so it moves with what else runs. Needs
        root (CAP_SYS_ADMIN) for the frame numbers: without it they read as 0, and `once_mb` is
        then PSS summed, said so in `once_measure`.

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
from collections import Counter
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
    "once_mb", "once_anon_mb", "rss_mb", "table_rss_mb", "api_rss_mb", "pss_mb", "table_pss_mb", "api_pss_mb",
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


def _memory(daemon: Daemon) -> dict[str, Any]:
    status = daemon.status()
    assert daemon.proc is not None
    pids = {"table": daemon.proc.pid}
    api = daemon.api_pid()
    if api is not None:
        pids["api"] = api
    pss_mb = round(status.get("Pss", 0) / 1024, 1)
    return {
        "entries": 0,
        "rss_mb": round(status["VmRSS"] / 1024, 1),
        "table_rss_mb": round(status["table_VmRSS"] / 1024, 1),
        "api_rss_mb": round(status["api_VmRSS"] / 1024, 1),
        "pss_mb": pss_mb,
        "table_pss_mb": round(status.get("table_Pss", 0) / 1024, 1),
        "api_pss_mb": round(status.get("api_Pss", 0) / 1024, 1),
        "table_private_dirty_mb": round(status.get("table_Private_Dirty", 0) / 1024, 1),
        "api_private_dirty_mb": round(status.get("api_Private_Dirty", 0) / 1024, 1),
        "shared_dirty_mb": round(status.get("api_Shared_Dirty", 0) / 1024, 1),
        **_resident_once(pids, pss_mb),
    }


PAGE = os.sysconf("SC_PAGE_SIZE")
_PRESENT = 1 << 63  # /proc/PID/pagemap (Documentation/admin-guide/mm/pagemap.rst): the page is in RAM
_FILE_OR_SHARED = 1 << 61  # a file's page (the page cache) or shared anonymous memory: not the process's own
_FRAME = (1 << 55) - 1  # bits 0-54: the page frame number (0 without CAP_SYS_ADMIN)
_KPF_ZERO_PAGE = 1 << 24  # /proc/kpageflags: the kernel's zero page (no RSS counts it)
_KPF_THP = 1 << 22


def _frames(pid: int) -> tuple[Counter[int], set[int]]:
    """The physical pages process `pid` holds in RAM: each frame number with how many of its
    virtual pages map it, and those of them that are a file's (or shared memory)."""
    frames: Counter[int] = Counter()
    files: set[int] = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb", buffering=0) as pagemap:
        for line in maps:
            span, perms = line.split(maxsplit=2)[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if perms.startswith("---") or start >= 1 << 47:  # guard pages; [vsyscall]
                continue
            entries = memoryview(os.pread(pagemap.fileno(), (end - start) // PAGE * 8, start // PAGE * 8)).cast("Q")
            for entry in entries:
                if entry & _PRESENT:
                    frame = entry & _FRAME
                    frames[frame] += 1
                    if entry & _FILE_OR_SHARED:
                        files.add(frame)
    return frames, files


def _kpage(table: str, frames: list[int]) -> dict[int, int]:
    """/proc/kpagecount's or /proc/kpageflags's word for each of `frames` (sorted), read in runs."""
    out: dict[int, int] = {}
    fd = os.open(f"/proc/{table}", os.O_RDONLY)
    try:
        i = 0
        while i < len(frames):
            j = i
            while j + 1 < len(frames) and frames[j + 1] - frames[j] < 64:
                j += 1
            first = frames[i]
            words = memoryview(os.pread(fd, (frames[j] - first + 1) * 8, first * 8)).cast("Q")
            for frame in frames[i : j + 1]:
                out[frame] = words[frame - first]
            i = j + 1
    finally:
        os.close(fd)
    return out


def _resident_once(pids: dict[str, int], pss_mb: float) -> dict[str, Any]:
    """The daemon's resident memory with each physical page counted once, however many of its
    processes map it (module docstring): the union of `pids`' frames, anonymous and file-backed
    apart, and the pages its processes share. With it, its cross-checks: each process's frames
    (its RSS, read apart) and the PSS those frames give with the kernel's map counts of them
    (/proc/kpagecount), against smaps_rollup's `pss_mb`. Without the frame numbers (not root:
    they read as 0), PSS summed in their place, said so."""
    mb = PAGE / 2**20
    held = {name: _frames(pid) for name, pid in pids.items()}
    everything = set().union(*(frames.keys() for frames, _ in held.values()))
    if everything and everything <= {0}:
        return {
            "once_measure": "PSS summed: the page frame numbers read as 0 here (not root), no page counted once",
            "once_mb": pss_mb,
        }
    ordered = sorted(everything)
    flags = _kpage("kpageflags", ordered)
    zero = {frame for frame in ordered if flags[frame] & _KPF_ZERO_PAGE}  # in no process's RSS
    counts = _kpage("kpagecount", ordered)
    files = set().union(*(f for _, f in held.values())) - zero
    union = everything - zero
    shared = set.intersection(*(set(frames) for frames, _ in held.values())) - zero if len(held) > 1 else set()
    out: dict[str, Any] = {
        "once_measure": "pagemap: the union of both processes' physical pages",
        "once_mb": round(len(union) * mb, 1),
        "once_anon_mb": round(len(union - files) * mb, 1),
        "once_file_mb": round(len(files) * mb, 1),
        "shared_by_both_mb": round(len(shared) * mb, 1),
        "thp_mb": round(sum(1 for frame in union if flags[frame] & _KPF_THP) * mb, 1),
    }
    pss = 0.0
    for name, (frames, _) in held.items():
        out[f"{name}_frames_mb"] = round(sum(1 for frame in frames if frame not in zero) * mb, 1)
        pss += sum(n / max(counts[frame], n) for frame, n in frames.items() if frame not in zero)
    out["frames_pss_mb"] = round(pss * mb, 1)
    return out


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
            key: _slope_per_10k(settled, key) for key in GROWTH_KEYS if all(key in sample for sample in settled)
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
            f"every {CHURN_EVERY} entries (a minute of the day): the daemon's resident memory counted once (the "
            "union of both processes' physical pages), and beside it their RSS summed, PSS, and each process's, "
            "as it goes, and its growth (lower is better)"
        ),
        "reference": f"issue 35 point 5: under {GOAL_MB:g} MB after the day, no growth; ratio = the daemon's resident "
        f"memory counted once after the day ({after['once_measure']}) / {GOAL_MB:g} MB",
        "ratio": round(after["once_mb"] / GOAL_MB, 3),
        "load_average": {"before": [round(x, 1) for x in load_before], "after": [round(x, 1) for x in load_after]},
        "results": {"daemon_source": source, **day},
    }
