"""What a card costs the daemon's CPU: both its processes, with 1 and 50 screens, and idle; profiled.

The workload is bench_fanout's, unchanged (`tablectl run --sim` as a process, its shoe simulated
here on a pty, seven-seat Grand Slam rounds opened through the API, one GET /api/state per card,
the next card only once the daemon has acknowledged the last and every screen has its entry), so
the figures compare with that benchmark's. What is measured differs:

  cpu      the CPU time of the whole daemon (the table's process and the API's process it
           starts, each alone too) over the dealing of the cards, per card: from
           /proc/PID/task/*/schedstat (nanoseconds on the CPU, every thread), not 10 ms ticks
  idle     the same over IDLE_S seconds with the screens connected and no card dealt, the daemon
           settled: the IDLE_S seconds after those from the moment every screen is greeted
           (`idle_from_greeting`: the window measured before, where the daemon's one-off work just
           after its start, such as the API's collector settled SETTLE_AFTER_S after it listens,
           falls); issue 35's goal is the settled figure with 50 screens
  fsync    each session is run twice, its state directory on the disk and on a tmpfs
           (/dev/shm, where an fsync costs nothing): the difference is the journal's fsync,
           stated apart (it is the disk's, not the code's)
  profile  one more session with 50 screens whose two processes run under a sampling profiler
           (`Sampler`, below: each thread's CPU clock read every millisecond, the CPU given to the
           stack the thread is in) from just before the first card to just after the last: the
           top functions of each process, ms a card
  before   with BENCH_BEFORE=DIR (a copy of an earlier commit's code), that daemon's sessions run
           too, interleaved with this code's

Sessions are run in turn (disk, tmpfs, before), REPEATS of each, so machine noise on a shared
machine hits them alike; the median of the repeats is given.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_daemon import TABLECTL, Api, _source, _wait_connected
from benchmarks.bench_fanout import CARDS, DECKS, SEED, Fanout, Screen, Session, _all_greeted, _deal
from controller.engine.cards import ShoeComposition
from controller.testing import Daemon
from drivers.shoe.simulated import SimulatedShoe

IDLE_S = 5.0
REPEATS = int(os.environ.get("BENCH_REPEATS", "2"))  # sessions of each kind (more on a noisy machine)
TOP = 10
SAMPLE_S = 0.001
SPY_RATE = 500  # py-spy's samples a second, per process
PROFILED = [sys.executable, "-m", "benchmarks.bench_card_cpu", "profiled"]
#: The goals of issue 35 point 1 (ms of CPU a card; ms of CPU a second idle).
GOAL_ONE_SCREEN_MS = 1.0
GOAL_FIFTY_SCREENS_MS = 1.5
GOAL_IDLE_MS_PER_S = 1.0


def _cpu_ns(pid: int | None) -> int:
    """Nanoseconds on the CPU of every thread of `pid` so far (0 for no process)."""
    if pid is None:
        return 0
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended while we looked
    return total


def _system_ns(pid: int | None) -> int:
    """Nanoseconds `pid` spent in the kernel so far (its system time, every thread: /proc/PID/stat,
    in clock ticks of 10 ms; 0 for no process)."""
    if pid is None:
        return 0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0
    return int(fields[12]) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def _cpu(daemon: Daemon) -> dict[str, int]:
    """Each process's CPU, both summed, and of it the kernel's (`*_system`: the system calls and
    what they do, such as waking the process at the other end of a socket)."""
    assert daemon.proc is not None
    pid, api_pid = daemon.proc.pid, daemon.api_pid()
    table, api = _cpu_ns(pid), _cpu_ns(api_pid)
    return {
        "table": table,
        "api": api,
        "both": table + api,
        "table_system": _system_ns(pid),
        "api_system": _system_ns(api_pid),
    }


async def _session(
    workdir: Path,
    state_dir: Path,
    screens: int,
    *,
    profile: Path | None = None,
    source: str | None = None,
    spy: Path | None = None,
    trace: Path | None = None,
) -> dict[str, Any]:
    shoe = SimulatedShoe(
        seed=SEED, composition=ShoeComposition(decks=DECKS), link=str(workdir / "shoe"), shoe_id="CARD-CPU-SHOE"
    )
    shoe.start()
    config = f'[table]\nid = "CARD-CPU-1"\n[rules]\ndecks = {DECKS}\n[shoe]\nurl = "{shoe.port}"\n'
    argv = [*PROFILED, str(profile), "--"] if profile is not None else TABLECTL
    # The before copy runs from its own directory: the API's process (`python -m`) imports from the
    # directory it runs in first, so run from this checkout it would be this code's, not the copy's.
    daemon = Daemon(
        workdir,
        config,
        argv=argv,
        state_dir=state_dir,
        env={"PYTHONPATH": source} if source else {},
        cwd=Path(source) if source else None,
    )
    daemon.spawn()
    fanout = Fanout()
    clients = [Screen(n, fanout) for n in range(screens)]
    session = Session(screens)
    api: Api | None = None
    out: dict[str, Any] = {}
    try:
        daemon.wait_ready(timeout=60.0, every=0.005)
        api = Api(daemon.port)
        _wait_connected(api)
        await asyncio.gather(*(c.connect(daemon.port) for c in clients))
        await _all_greeted(clients)
        idle = _cpu(daemon)
        await asyncio.sleep(IDLE_S)
        settling = _cpu(daemon)
        await asyncio.sleep(IDLE_S)
        before = _cpu(daemon)
        api.close()  # the server ends a kept-alive connection idle this long: a fresh one
        api = Api(daemon.port)
        pids = [pid for pid in (daemon.proc.pid if daemon.proc else None, daemon.api_pid()) if pid is not None]
        if profile is not None:
            for pid in pids:
                os.kill(pid, signal.SIGUSR1)
        spies = _spies(spy, daemon) if spy is not None else _tracers(trace, daemon) if trace is not None else []
        started = time.monotonic()
        await _deal(session, shoe, api, fanout, clients)
        dealing = time.monotonic() - started
        after = _cpu(daemon)
        for running in spies:
            running.send_signal(signal.SIGINT)  # py-spy writes its samples as it stops
        for running in spies:
            running.wait(timeout=60)
        if profile is not None:
            for pid in pids:
                os.kill(pid, signal.SIGUSR2)
        cards = len(session.cards)
        out = {
            "cards": cards,
            "dealing_s": round(dealing, 2),
            "cpu_ms_per_card": {k: round((after[k] - before[k]) / 1e6 / cards, 3) for k in after},
            "idle_cpu_ms_per_s": {k: round((before[k] - settling[k]) / 1e6 / IDLE_S, 3) for k in after},
            "idle_from_greeting_cpu_ms_per_s": {k: round((settling[k] - idle[k]) / 1e6 / IDLE_S, 3) for k in after},
        }
    finally:
        await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
        if api is not None:
            api.close()
        code = daemon.stop()
        shoe.stop()
    if code != 0:
        raise RuntimeError(f"the daemon exited {code}: {daemon.log()}")
    return out


def _py_spy() -> str | None:
    """py-spy, if this machine has it (BENCH_PYSPY names it, else PATH): not a dependency."""
    return os.environ.get("BENCH_PYSPY") or shutil.which("py-spy")


def _spies(spy: Path, daemon: Daemon) -> list[subprocess.Popen[bytes]]:
    """py-spy sampling each of the daemon's processes (every thread, only while it runs: py-spy's
    own test of idleness) into spy.table / spy.api, until sent SIGINT."""
    program = _py_spy()
    assert program is not None and daemon.proc is not None
    out = []
    for name, pid in (("table", daemon.proc.pid), ("api", daemon.api_pid())):
        argv = [program, "record", "--pid", str(pid), "--rate", str(SPY_RATE), "--format", "raw"]
        argv += ["--threads", "--function", "--nonblocking", "-o", f"{spy}.{name}"]
        out.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1.0)  # py-spy attaches before the first card
    return out


def _tracers(trace: Path, daemon: Daemon) -> list[subprocess.Popen[bytes]]:
    """strace counting the system calls of each of the daemon's processes (every thread) into
    trace.table / trace.api, until sent SIGINT."""
    assert daemon.proc is not None
    out = []
    for name, pid in (("table", daemon.proc.pid), ("api", daemon.api_pid())):
        argv = ["strace", "-f", "-c", "-o", f"{trace}.{name}", "-p", str(pid)]
        out.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1.0)  # strace attaches before the first card
    return out


def _traced(path: Path, cards: int) -> dict[str, Any]:
    """strace -c's table: the system calls a card, by call (the TOP ones) and in all; epoll_wait's
    count is the loop's turns that waited (or looked) for its sockets."""
    calls: dict[str, int] = {}
    for line in path.read_text().splitlines():
        cols = line.split()
        if len(cols) >= 5 and cols[-1] != "total" and cols[0][0].isdigit() and cols[3].isdigit():
            calls[cols[-1]] = int(cols[3])
    ranked = sorted(calls.items(), key=lambda kv: -kv[1])[:TOP]
    return {
        "calls_per_card": round(sum(calls.values()) / cards, 2),
        "top_per_card": {name: round(n / cards, 2) for name, n in ranked},
    }


def _spied(path: Path) -> dict[str, Any]:
    """py-spy's samples (collapsed stacks): each thread's share, and the TOP functions by own
    samples and by samples within them (the share of the process's samples)."""
    own: dict[str, int] = {}
    within: dict[str, int] = {}
    threads: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        thread, *frames = stack.split(";")
        total += n
        name = thread.partition(": ")[2] or thread
        threads[name] = threads.get(name, 0) + n
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + n
        for frame in set(frames):
            within[frame] = within.get(frame, 0) + n

    def rows(table: dict[str, int], keep: Callable[[str], bool]) -> list[dict[str, Any]]:
        ranked = sorted(((n, where) for where, n in table.items() if keep(where)), reverse=True)[:TOP]
        return [{"function": where, "share": round(n / total, 3)} for n, where in ranked]

    if not total:
        return {"samples": 0}

    def ours(where: str) -> bool:
        return ("(controller/" in where or "(drivers/" in where) and "<module>" not in where

    return {
        "samples": total,
        "threads_share": {name: round(n / total, 3) for name, n in sorted(threads.items())},
        "top_own": rows(own, lambda where: True),
        "top_within_own_code": rows(within, ours),
    }


def _idle(
    sessions: dict[str, list[dict[str, Any]]], *, before: bool, key: str = "idle_cpu_ms_per_s", screens: int = 0
) -> float:
    """Idle CPU (ms a second, both processes, settled or `key`): the median over every session of
    that code (with 1 or 50 screens connected, the journal on the disk or the tmpfs), or over those
    with `screens` screens only."""
    runs = [
        r
        for name, rs in sessions.items()
        if name.endswith("_before") == before and (not screens or name.startswith(f"screens_{screens}_"))
        for r in rs
    ]
    return round(statistics.median(r[key]["both"] for r in runs), 3) if runs else 0.0


def _median(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    return {k: round(statistics.median(r[key][k] for r in runs), 3) for k in runs[0][key]}


def _top(path: Path, cards: int) -> dict[str, Any]:
    """The sampled CPU: each thread's, the TOP functions by own CPU, and by CPU within them (the
    daemon's own code only: the library calls it makes are inside), in ms a card."""
    doc = json.loads(path.read_text())
    total = sum(doc["own"].values())

    def rows(table: dict[str, float], keep: Callable[[str], bool]) -> list[dict[str, Any]]:
        ranked = sorted(((cpu, where) for where, cpu in table.items() if keep(where)), reverse=True)[:TOP]
        return [{"function": where, "ms_per_card": round(cpu * 1e3 / cards, 3), "share": round(cpu / total, 3)}
                for cpu, where in ranked]  # fmt: skip

    return {
        "sampled_cpu_ms_per_card": round(total * 1e3 / cards, 3),
        "threads_ms_per_card": {name: round(cpu * 1e3 / cards, 3) for name, cpu in sorted(doc["threads"].items())},
        "top_own": rows(doc["own"], lambda where: True),
        "top_within_own_code": rows(
            doc["within"], lambda where: where.startswith(("controller/", "drivers/")) and "(<module>)" not in where
        ),
    }


def _cprofiled(path: Path, cards: int) -> dict[str, Any]:
    """cProfile's view of one process's main thread (BENCH_CPROFILE=1): the TOP functions by their
    own time and by the time within them, in ms a card (cProfile's hooks slow every call: the
    shares, not the times, are the guide)."""
    stats = pstats.Stats(str(path))
    rows = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for _, _, tt, _, _ in rows.values()) or 1.0

    def where(key: tuple[str, int, str]) -> str:
        file, line, name = key
        return f"{_short(file)}:{line}({name})"

    def top(index: int) -> list[dict[str, Any]]:
        ranked = sorted(rows.items(), key=lambda kv: kv[1][index], reverse=True)[:TOP]
        out = []
        for key, v in ranked:
            ms, share = round(v[index] * 1e3 / cards, 3), round(v[index] / total, 3)
            out.append({"function": where(key), "ms_per_card": ms, "share": share})
        return out

    return {"top_own": top(2), "top_within": top(3)}


def _short(file: str) -> str:
    for marker in ("/controller/", "/drivers/", "/site-packages/", "/lib/python3"):
        if marker in file:
            return file[file.index(marker) + 1 :]
    return file


def run() -> dict[str, Any]:
    """BENCH_BEFORE=DIR (a copy of the code of an earlier commit, such as `git archive COMMIT controller
    drivers vision | tar -x -C DIR`; BENCH_BEFORE_COMMIT names it) runs that daemon too, its
    sessions interleaved with this code's (on the tmpfs), so the two see the same machine."""
    before = os.environ.get("BENCH_BEFORE")
    plan: list[tuple[str, str, str | None]] = [("after", "disk", None), ("after", "tmpfs", None)]
    if before:
        plan.append(("before", "tmpfs", before))
    sessions: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="tablectl-card-cpu-") as tmp, tempfile.TemporaryDirectory(
        prefix="tablectl-card-cpu-", dir="/dev/shm"
    ) as shm:
        n = 0
        for repeat in range(REPEATS):
            for screens in (1, 50):
                # Every other turn in the other order, so a machine getting busier or quieter
                # over a turn does not favour whichever code runs first in it.
                for code, where, source in plan if repeat % 2 == 0 else plan[::-1]:
                    n += 1
                    work = Path(tmp) / f"s{n}"
                    work.mkdir()
                    state = (Path(tmp) if where == "disk" else Path(shm)) / f"state{n}"
                    result = asyncio.run(_session(work, state, screens, source=source))
                    name = f"screens_{screens}_{where}" + ("_before" if code == "before" else "")
                    sessions.setdefault(name, []).append(result)
        work = Path(tmp) / "profiled"
        work.mkdir()
        profiled = asyncio.run(_session(work, Path(shm) / "profiled", 50, profile=work / "profile"))
        tops = {name: _top(work / f"profile.{name}", profiled["cards"]) for name in ("table", "api")}
        for name in ("table", "api"):
            if (work / f"profile.{name}.cprofile").exists():
                tops[name]["cprofile_main_thread"] = _cprofiled(work / f"profile.{name}.cprofile", profiled["cards"])
        spied: dict[str, Any] = {"py_spy": "not on this machine (BENCH_PYSPY=PATH or py-spy on PATH)"}
        if _py_spy() is not None:
            spied = {}
            for screens in (1, 50):
                work = Path(tmp) / f"spied{screens}"
                work.mkdir()
                run = asyncio.run(_session(work, Path(shm) / f"spied{screens}", screens, spy=work / "spy"))
                spied[f"screens_{screens}"] = {
                    "cpu_ms_per_card": run["cpu_ms_per_card"],
                    **{name: _spied(work / f"spy.{name}") for name in ("table", "api")},
                }
        traced: dict[str, Any] = {"strace": "not on this machine"}
        if shutil.which("strace") is not None:
            traced = {}
            for screens in (1, 50):
                work = Path(tmp) / f"traced{screens}"
                work.mkdir()
                run = asyncio.run(_session(work, Path(shm) / f"traced{screens}", screens, trace=work / "trace"))
                traced[f"screens_{screens}"] = {
                    "cpu_ms_per_card": run["cpu_ms_per_card"],
                    **{name: _traced(work / f"trace.{name}", run["cards"]) for name in ("table", "api")},
                }
    figures: dict[str, Any] = {}
    for name, runs in sessions.items():
        figures[name] = {
            "cpu_ms_per_card": _median(runs, "cpu_ms_per_card"),
            "idle_cpu_ms_per_s": _median(runs, "idle_cpu_ms_per_s"),
            "idle_from_greeting_cpu_ms_per_s": _median(runs, "idle_from_greeting_cpu_ms_per_s"),
            "runs": runs,
        }
    one = figures["screens_1_tmpfs"]["cpu_ms_per_card"]["both"]
    fifty = figures["screens_50_tmpfs"]["cpu_ms_per_card"]["both"]
    idle = _idle(sessions, before=False, screens=50)
    idle_all = _idle(sessions, before=False)
    greeting = _idle(sessions, before=False, key="idle_from_greeting_cpu_ms_per_s")
    fsync = {}
    for s in (1, 50):
        disk, tmpfs = figures[f"screens_{s}_disk"], figures[f"screens_{s}_tmpfs"]
        fsync[f"screens_{s}"] = round(disk["cpu_ms_per_card"]["both"] - tmpfs["cpu_ms_per_card"]["both"], 3)
    compared: dict[str, Any] = {}
    if before:
        compared = {
            "before_source": os.environ.get("BENCH_BEFORE_COMMIT", before),
            "idle_cpu_ms_per_s": {"before": _idle(sessions, before=True, screens=50), "after": idle},
            "idle_cpu_ms_per_s_all_sessions": {"before": _idle(sessions, before=True), "after": idle_all},
            "idle_from_greeting_cpu_ms_per_s": {
                "before": _idle(sessions, before=True, key="idle_from_greeting_cpu_ms_per_s"),
                "after": greeting,
            },
            **{
                f"screens_{s}": {
                    "before_cpu_ms_per_card": figures[f"screens_{s}_tmpfs_before"]["cpu_ms_per_card"],
                    "after_cpu_ms_per_card": figures[f"screens_{s}_tmpfs"]["cpu_ms_per_card"],
                    "before_idle_cpu_ms_per_s": figures[f"screens_{s}_tmpfs_before"]["idle_cpu_ms_per_s"],
                    "after_idle_cpu_ms_per_s": figures[f"screens_{s}_tmpfs"]["idle_cpu_ms_per_s"],
                    "before_idle_from_greeting_cpu_ms_per_s": figures[f"screens_{s}_tmpfs_before"][
                        "idle_from_greeting_cpu_ms_per_s"
                    ],
                    "after_idle_from_greeting_cpu_ms_per_s": figures[f"screens_{s}_tmpfs"][
                        "idle_from_greeting_cpu_ms_per_s"
                    ],
                }
                for s in (1, 50)
            },
        }
    return {
        "name": "card_cpu",
        "what": (
            f"the daemon's CPU time per card (its table process and its API process, every thread, from "
            f"schedstat) while {CARDS} cards are dealt in bench_fanout's workload with 1 and 50 WebSocket "
            f"screens, and idle over {IDLE_S:g} s with the screens connected (settled: the {IDLE_S:g} s after "
            f"the {IDLE_S:g} s from their greeting, those too); the journal on the disk and "
            "on a tmpfs (the difference is the fsync's); a sampling profile's top functions in each process "
            "(lower is better)"
        ),
        "reference": (
            f"issue 35 point 1: at most {GOAL_ONE_SCREEN_MS} ms a card with 1 screen, {GOAL_FIFTY_SCREENS_MS} ms "
            f"with 50 (fsync apart), {GOAL_IDLE_MS_PER_S} ms a second idle; ratio = CPU per card with 50 "
            f"screens (fsync apart) / {GOAL_FIFTY_SCREENS_MS} ms"
        ),
        "ratio": round(fifty / GOAL_FIFTY_SCREENS_MS, 3),
        "results": {
            "daemon_source": os.environ.get("BENCH_SOURCE_COMMIT") or _source(),
            "cpu_ms_per_card_fsync_apart": {"screens_1": one, "screens_50": fifty},
            "fsync_cpu_ms_per_card": fsync,
            "idle_cpu_ms_per_s": idle,
            "idle_cpu_ms_per_s_all_sessions": idle_all,
            "idle_from_greeting_cpu_ms_per_s": greeting,
            "before_and_after": compared,
            "sessions": figures,
            "profiled_session": profiled,
            "profile_top": tops,
            "profile_py_spy": spied,
            "system_calls": traced,
            "how": {
                "cpu": "sum over /proc/PID/task/*/schedstat of both processes (ns), dealing only",
                "idle": (
                    f"idle_cpu_ms_per_s: the {IDLE_S:g} s after the {IDLE_S:g} s from every screen's greeting, "
                    "no card dealt, median of the sessions with 50 screens (_all_sessions: 1 and 50); "
                    "idle_from_greeting_cpu_ms_per_s: the first of those windows, which holds the daemon's "
                    "one-off work after its start (the API's collector settled 1 s after it listens), as "
                    "measured in the runs before 5b76285"
                ),
                "order": (
                    "sessions in turn: 1 screen (disk, tmpfs, the before copy on tmpfs), then 50 screens the same; "
                    f"{REPEATS} times (BENCH_REPEATS), every other time in the reverse order; medians"
                ),
                "profile": (
                    f"Sampler: every {SAMPLE_S * 1e3:g} ms each thread's CPU clock is read and the CPU since the "
                    "last sample given to the stack the thread is in then (from SIGUSR1 just before the first card "
                    "to SIGUSR2 after the last); a thread that ran and then blocked has its CPU given to where it "
                    "blocks (a socket write, select), so the functions 'within' are the better guide; the sampler "
                    "slows the daemon (the profiled session's own figures are not the measurement)"
                ),
                "py_spy": (
                    f"one more session each with 1 and 50 screens, each process sampled by py-spy at {SPY_RATE} Hz "
                    "(--threads --function; a thread counted only while py-spy finds it running, in a system call "
                    "too) over the dealing: the share of each process's samples in each function (own) and "
                    "within it; its cpu_ms_per_card is that session's, slowed by the sampling"
                ),
                "system": (
                    "`*_system` in cpu_ms_per_card: the kernel's part of each process's CPU (utime/stime of "
                    "/proc/PID/stat, 10 ms ticks: about +-0.02 ms a card over 500 cards)"
                ),
                "system_calls": (
                    "one more session each with 1 and 50 screens, each process under `strace -f -c` over the "
                    "dealing: the system calls a card (its cpu_ms_per_card is that session's, slowed by strace)"
                ),
                "machine": "shared with other engineers' work (load varied); CPU time, not wall",
            },
        },
    }


# -- the profiled launcher: the same daemon, its two processes under cProfile on a signal -------------


class Sampler:
    """A sampling profiler over every thread of this process, weighted by CPU time: every
    SAMPLE_S it reads each thread's CPU clock and gives the CPU spent since the last sample to the
    Python stack the thread is in now (cProfile's per-call hooks cost more than the calls they
    time here, and see one thread only). Its own thread's CPU is not counted."""

    def __init__(self) -> None:
        self.own: dict[str, float] = {}  # innermost function -> CPU seconds
        self.within: dict[str, float] = {}  # every function on the stack -> CPU seconds
        self.threads: dict[str, float] = {}  # thread name -> CPU seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        last: dict[int, float] = {}
        while not self._stop.wait(SAMPLE_S):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                try:
                    cpu = time.clock_gettime(time.pthread_getcpuclockid(ident))
                except OSError:
                    continue  # ended meanwhile
                spent, last[ident] = cpu - last.get(ident, cpu), cpu
                if spent <= 0:
                    continue
                name = names.get(ident, str(ident))
                self.threads[name] = self.threads.get(name, 0.0) + spent
                seen: set[str] = set()
                where = _where(frame)
                self.own[where] = self.own.get(where, 0.0) + spent
                f: Any = frame
                while f is not None:
                    where = _where(f)
                    if where not in seen:
                        seen.add(where)
                        self.within[where] = self.within.get(where, 0.0) + spent
                    f = f.f_back

    def dump(self, path: str) -> None:
        Path(path).write_text(json.dumps({"own": self.own, "within": self.within, "threads": self.threads}))


def _where(frame: Any) -> str:
    code = frame.f_code
    return f"{_short(code.co_filename)}:{code.co_firstlineno}({code.co_name})"


def _profiled(argv: list[str]) -> int:
    """`profiled OUT -- run --sim ...` (the table's process: `tablectl` itself) or `profiled OUT
    --api controller.app.api_process -- PARENT FD...` (the API's process it starts): the Sampler from
    SIGUSR1 to SIGUSR2, written to OUT.table / OUT.api. The daemon's code is untouched: only how
    its API process is started differs (through this launcher)."""
    out, rest = argv[0], argv[argv.index("--") + 1 :]
    api = "--api" in argv[: argv.index("--")]
    sampler = Sampler()

    # BENCH_CPROFILE=1: cProfile on the wall clock; =cpu: on the thread's CPU clock (time spent
    # waiting for the loop's select, or preempted inside a write by the process it woke, not counted).
    how = os.environ.get("BENCH_CPROFILE")
    traced = None
    if how in ("1", "cpu"):
        traced = cProfile.Profile(time.thread_time) if how == "cpu" else cProfile.Profile()

    def start(*_: Any) -> None:
        sampler.start()
        if traced is not None:
            traced.enable()  # the main thread's (the table's loop, the API's loop)

    def stop(*_: Any) -> None:
        if traced is not None:
            traced.disable()
            traced.dump_stats(f"{out}.{'api' if api else 'table'}.cprofile")
        sampler.stop()
        sampler.dump(f"{out}.{'api' if api else 'table'}")

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    if api:
        from controller.app.api_process import main as api_main

        return api_main(rest)
    from controller.cli.main import main

    spawn = asyncio.create_subprocess_exec

    async def through_here(program: str, *args: Any, **kwargs: Any) -> Any:
        if args[:2] == ("-m", "controller.app.api_process"):
            # "controller.app.api_process" stays in its command line: the rig finds the API's process by it.
            args = ("-m", "benchmarks.bench_card_cpu", "profiled", out, "--api", args[1], "--", *args[2:])
        return await spawn(program, *args, **kwargs)

    asyncio.create_subprocess_exec = through_here  # type: ignore[assignment]  # how channel.py starts it
    from controller.api import launch

    launch.FORK = False  # executed, through the line above, not forked (controller/api/launch.py)
    return main(rest)


if __name__ == "__main__":
    if sys.argv[1:2] != ["profiled"]:
        sys.exit("usage: python -m benchmarks.bench_card_cpu profiled OUT [--api] -- ARGS...")
    sys.exit(_profiled(sys.argv[2:]))
