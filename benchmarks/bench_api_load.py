"""The table under the load of its own network: does a busy LAN slow the cards, raise false faults
or grow the daemon's memory?

`tablectl run --sim --demo --game grand-slam` runs as its own process (a fresh state dir, a free
127.0.0.1 port, the simulated dealer stepping every DEMO_INTERVAL_S), seen only from outside:

  first    the first load the daemon ever sees, WARM_LOAD_S seconds of the same mix as `load`,
           then SETTLE_S seconds: what any first use brings in (modules imported on first use,
           caches, the allocator's pools) is reported as such (rss_mb.at_start and after it),
           and the memory goals below judge a table that has served before
  quiet    WINDOW_S seconds with nothing but this benchmark's own few reads
  load     from starting the load processes (the screens connecting with `{"after": 0}`
           included) until WINDOW_S seconds after all are ready: SCREENS WebSocket screens (one
           process, the `websockets` client: the hello with the dealer's token, then every
           message read and parsed, a feed the daemon ends reconnected from the last seq), and
           RATE requests a second from HTTP_PROCESSES other processes (asyncio + httpx, paced
           open-loop: a request falling due while 64 of its process's are unanswered is skipped
           and counted) in turn: GET /api/state (dealer), /api/health and /api/openapi.json (no
           token), GET /api/state with a wrong token (from 16 loopback addresses a process,
           127.N.0.x), GET /api/rounds (dealer)
  after    SETTLE_S seconds with the load gone, for the memory
  again    the same load once more, then SETTLE_S seconds: memory a leak keeps grows again, what a
           first load only brings in (lazily imported modules, caches, the allocator's pools) not

Over each window, from GET /metrics (the surveillance token, as a fleet's scraper reads): cards
journaled a minute (`tablectl_cards_read` delta), card-to-lamp (`tablectl_card_to_lamp_seconds`:
the daemon exposes a histogram only, so p50/p99 are interpolated within its buckets from the
window's bucket deltas, as Prometheus's histogram_quantile does: a p99 in the 20-50 ms bucket is
only known to be in it; the mean from _sum/_count is exact), faults raised (`tablectl_faults`
delta by kind) and the faults latched at the end (GET /api/state, supervisor). The daemon's RSS
(VmRSS in /proc/PID/status: the daemon's own process and the API's process it starts, summed, and
each alone; and the two's proportional set size, which counts the pages they share once) before the
load, at its end and SETTLE_S after it; CPU over each window (the same). The screens'
commit-to-screen time: receipt minus the entry's journal time (both wall clock, the journal's in ms).

Environment: API_LOAD_WINDOW_S (60), API_LOAD_SETTLE_S (15), API_LOAD_WARMUP_S (10),
API_LOAD_WARM_LOAD_S (20), API_LOAD_DEMO_INTERVAL_S (0.25), API_LOAD_RATE (200),
API_LOAD_SCREENS (100).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from benchmarks.bench_daemon import _source
from controller.testing import ROOT, SUPERVISOR, Daemon

WINDOW_S = float(os.environ.get("API_LOAD_WINDOW_S", "60"))
SETTLE_S = float(os.environ.get("API_LOAD_SETTLE_S", "15"))
WARMUP_S = float(os.environ.get("API_LOAD_WARMUP_S", "10"))
WARM_LOAD_S = float(os.environ.get("API_LOAD_WARM_LOAD_S", "20"))
DEMO_INTERVAL_S = float(os.environ.get("API_LOAD_DEMO_INTERVAL_S", "0.25"))
RATE = float(os.environ.get("API_LOAD_RATE", "200"))
SCREENS = int(os.environ.get("API_LOAD_SCREENS", "100"))
HTTP_PROCESSES = 2
#: A p99 of fewer cards is little more than their slowest: the p99 goal is not judged on it.
MIN_CARDS_FOR_P99 = 50
WAIT_S = 180.0  # the bound on a load process's last requests and report after its window
SEED = 20261202
SURVEILLANCE = "api-load-surveillance-token-0123456789"
CONFIG = '[table]\nid = "LOAD-1"\ngame = "grand-slam"\n'
LOADGEN = [sys.executable, "-m", "benchmarks.lan_load"]
_EXCEPTION = re.compile(r"^[a-zA-Z_][\w.]*(Error|Exception|Group): ")
SETTLED = 'tablectl_rounds_total{status="settled"}'
_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$")


# -- GET /metrics -----------------------------------------------------------------------------------


def _scrape(daemon: Daemon) -> dict[str, float]:
    """The exposition text as {'name{labels}': value}."""
    request = urllib.request.Request(f"{daemon.url}/metrics", headers={"Authorization": f"Bearer {SURVEILLANCE}"})
    with urllib.request.urlopen(request, timeout=60) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        found = _SAMPLE.match(line)
        if found:
            out[found.group(1) + (found.group(2) or "")] = float(found.group(3))
    return out


def _buckets(sample: dict[str, float], name: str) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) of a histogram, in order, +Inf last."""
    out = []
    for key, value in sample.items():
        if key.startswith(f"{name}_bucket{{"):
            bound = re.search(r'le="([^"]+)"', key)
            assert bound is not None
            out.append((float(bound.group(1)), value))
    return sorted(out)


def quantile(deltas: list[tuple[float, float]], q: float) -> float | None:
    """The q-quantile of a histogram's cumulative bucket counts, linearly interpolated within the
    bucket it falls in (from 0 in the first); None without samples; inf if it is in +Inf."""
    total = deltas[-1][1] if deltas else 0.0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for upper, count in deltas:
        if count >= rank:
            if upper == float("inf"):
                return float("inf")
            inside = count - below
            return lower + (upper - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = upper, count
    return float("inf")


def _faults(sample: dict[str, float]) -> dict[str, float]:
    return {
        re.sub(r'.*kind="([^"]+)".*', r"\1", key): value
        for key, value in sample.items()
        if key.startswith("tablectl_faults_total{")
    }


def _ms(seconds: float | None) -> float | str | None:
    if seconds is None:
        return None
    return "over 5000 (the +Inf bucket)" if seconds == float("inf") else round(seconds * 1e3, 1)


# -- one window ---------------------------------------------------------------------------------------


@dataclass
class Window:
    name: str
    seconds: float = 0.0
    start: dict[str, float] = field(default_factory=dict)
    end: dict[str, float] = field(default_factory=dict)
    status_start: dict[str, int] = field(default_factory=dict)
    status_end: dict[str, int] = field(default_factory=dict)
    rss_samples_kb: list[int] = field(default_factory=list)
    load_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    faults_open: list[dict[str, Any]] = field(default_factory=list)
    table_at_end: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        minutes = self.seconds / 60
        cards = self.end["tablectl_cards_read_total"] - self.start["tablectl_cards_read_total"]
        name = "tablectl_card_to_lamp_seconds"
        before = dict(_buckets(self.start, name))
        deltas = [(upper, count - before.get(upper, 0.0)) for upper, count in _buckets(self.end, name)]
        timed = self.end[f"{name}_count"] - self.start[f"{name}_count"]
        spent = self.end[f"{name}_sum"] - self.start[f"{name}_sum"]
        start_faults, end_faults = _faults(self.start), _faults(self.end)
        raised = {k: int(v - start_faults.get(k, 0.0)) for k, v in end_faults.items() if v > start_faults.get(k, 0.0)}
        ticks = self.status_end["cpu_ticks"] - self.status_start["cpu_ticks"]
        return {
            "seconds": round(self.seconds, 1),
            "cards": int(cards),
            "cards_a_minute": round(cards / minutes, 1),
            "rounds_settled": int(self.end[SETTLED] - self.start[SETTLED]),
            "card_to_lamp": {
                "p50_ms": _ms(quantile(deltas, 0.50)),
                "p99_ms": _ms(quantile(deltas, 0.99)),
                "mean_ms": round(spent / timed * 1e3, 2) if timed else None,
                "cards": int(timed),
                "buckets": {("+Inf" if u == float("inf") else f"{u * 1e3:g} ms"): int(c) for u, c in deltas},
            },
            "faults_raised": raised,
            "faults_latched_at_end": self.faults_open,
            "table_at_end": self.table_at_end,
            "daemon_cpu_share": round(ticks / os.sysconf("SC_CLK_TCK") / self.seconds, 3),
            "cpu_share_by_process": {
                proc: round(
                    (self.status_end[f"{proc}_cpu_ticks"] - self.status_start[f"{proc}_cpu_ticks"])
                    / os.sysconf("SC_CLK_TCK")
                    / self.seconds,
                    3,
                )
                for proc in ("table", "api")
            },
            "rss_mb": {
                "start": round(self.status_start["VmRSS"] / 1024, 1),
                "end": round(self.status_end["VmRSS"] / 1024, 1),
                "peak_sampled": round(max(self.rss_samples_kb, default=0) / 1024, 1),
                "vmhwm_end": round(self.status_end["VmHWM"] / 1024, 1),
            },
            "machine_load_average": {"start": self.load_start, "end": self.load_end},
        }


def _measure(daemon: Daemon, name: str, seconds: float, during: Callable[[], None] | None = None) -> Window:
    """Metrics and status at the start, `during` (or a sleep) for `seconds`, then again; the RSS
    sampled every second meanwhile."""
    window = Window(name)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(1.0):
            window.rss_samples_kb.append(daemon.status()["VmRSS"])

    sampler = threading.Thread(target=sample, daemon=True)
    window.load_start = os.getloadavg()
    window.status_start = daemon.status()
    window.start = _scrape(daemon)
    started = time.monotonic()
    sampler.start()
    if during is None:
        time.sleep(seconds)
    else:
        during()
    window.end = _scrape(daemon)
    window.seconds = time.monotonic() - started
    window.status_end = daemon.status()
    window.load_end = os.getloadavg()
    done.set()
    sampler.join()
    state = daemon.get("/api/state", token=SUPERVISOR, timeout=60)
    window.faults_open = [{k: f.get(k) for k in ("code", "message")} for f in state["faults"]]
    window.table_at_end = {k: state[k] for k in ("blocked", "prompt")} | {"awaiting": state["awaiting"]["kind"]}
    return window


# -- the load processes ---------------------------------------------------------------------------------


class Loadgen:
    """One `python -m benchmarks.lan_load ...` process: ready, go, its JSON summary."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [*LOADGEN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
        )

    def _out(self) -> IO[str]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def ready(self) -> None:
        line = self._out().readline()
        if json.loads(line or "{}").get("ready") is not True:
            raise RuntimeError(f"a load process did not get ready (exit {self.proc.wait()}): {line!r}")

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def result(self, timeout: float) -> dict[str, Any]:
        out, _ = self.proc.communicate(timeout=timeout)
        if self.proc.returncode != 0 or not out.strip():
            raise RuntimeError(f"a load process failed (exit {self.proc.returncode})")
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Load:
    """The load processes: `body` is the load window's (start them, wait until each is ready:
    the screens connected and greeted, the daemon's memory then noted; go; WINDOW_S of load);
    `collect` takes their summaries after it (each finishes its last requests, then reports)."""

    def __init__(self, daemon: Daemon, seconds: float = WINDOW_S) -> None:
        self.daemon = daemon
        self.seconds = seconds
        self.gens: dict[str, Loadgen] = {}
        self.results: dict[str, Any] = {}
        self.screens_connected: dict[str, int] = {}
        self.screens_connect_s = 0.0

    def body(self) -> None:
        port = str(self.daemon.port)
        started = time.monotonic()
        seconds = str(self.seconds)
        self.gens["screens"] = Loadgen("ws", "--port", port, "--clients", str(SCREENS), "--seconds", seconds)
        for n in range(HTTP_PROCESSES):
            rate = str(RATE / HTTP_PROCESSES)
            self.gens[f"http_{n}"] = Loadgen(
                "http", "--port", port, "--rate", rate, "--seconds", seconds, "--net", str(11 + n)
            )
        for gen in self.gens.values():
            gen.ready()
        self.screens_connect_s = time.monotonic() - started
        self.screens_connected = self.daemon.status()
        for gen in self.gens.values():
            gen.go()
        time.sleep(self.seconds)

    def collect(self) -> None:
        try:
            for name, gen in self.gens.items():
                self.results[name] = gen.result(timeout=WAIT_S)
        finally:
            self.stop()

    def stop(self) -> None:
        for gen in self.gens.values():
            gen.stop()


def _http_total(results: dict[str, Any]) -> dict[str, Any]:
    parts = [results[f"http_{n}"] for n in range(HTTP_PROCESSES)]
    status: dict[str, int] = {}
    errors: dict[str, int] = {}
    for part in parts:
        for k, v in part["status"].items():
            status[k] = status.get(k, 0) + v
        for k, v in part["errors"].items():
            errors[k] = errors.get(k, 0) + v
    answered = sum(p["answered"] for p in parts)
    return {
        "planned_rate": RATE,
        "achieved_rate": round(answered / max(p["sending_s"] for p in parts), 1),
        "answered": answered,
        "skipped_daemon_behind": sum(p["skipped"] for p in parts),
        "status": dict(sorted(status.items())),
        "errors": errors,
    }


def _session(workdir: Path) -> dict[str, Any]:
    daemon = Daemon(
        workdir,
        CONFIG,
        args=["--demo", "--demo-interval", str(DEMO_INTERVAL_S), "--seed", str(SEED)],
        env={"TABLECTL_SURVEILLANCE_TOKEN": SURVEILLANCE},
    )
    daemon.start(timeout=60)
    gens = Load(daemon)
    again = Load(daemon)
    first = Load(daemon, WARM_LOAD_S)
    try:
        time.sleep(WARMUP_S)
        cold = daemon.status()
        # The first load the daemon ever sees brings in what any first use does (modules imported
        # on first use, caches, the allocator's pools): a short one first, so that the figures
        # below judge what load costs a running table, and `cold` says what the first one cost.
        first.body()
        first.collect()
        time.sleep(SETTLE_S)
        warmed = daemon.status()
        quiet = _measure(daemon, "quiet", WINDOW_S)
        loaded = _measure(daemon, "load", WINDOW_S, gens.body)
        gens.collect()
        time.sleep(SETTLE_S)
        after = daemon.status()
        # The same load once more: memory a leak keeps grows again; what a first load only
        # brings in (modules, caches, the allocator's pools) does not.
        _measure(daemon, "load again", WINDOW_S, again.body)
        again.collect()
        time.sleep(SETTLE_S)
        after_again = daemon.status()
        state = daemon.get("/api/state", token=SUPERVISOR, timeout=60)
    finally:
        first.stop()
        gens.stop()
        again.stop()
        code = daemon.stop()
    load = gens.results
    log = daemon.logfile.read_text(errors="replace")
    return {
        "quiet": quiet.summary(),
        "load": loaded.summary(),
        "rss_mb": {
            "at_start": round(cold["VmRSS"] / 1024, 1),
            f"{SETTLE_S:g}_s_after_the_first_load_ever_{WARM_LOAD_S:g}_s": round(warmed["VmRSS"] / 1024, 1),
            "before_load": round(loaded.status_start["VmRSS"] / 1024, 1),
            "screens_connected": round(gens.screens_connected["VmRSS"] / 1024, 1),
            "end_of_load": round(loaded.status_end["VmRSS"] / 1024, 1),
            f"{SETTLE_S:g}_s_after_load": round(after["VmRSS"] / 1024, 1),
            f"{SETTLE_S:g}_s_after_the_same_load_again": round(after_again["VmRSS"] / 1024, 1),
            "vmhwm": round(after_again["VmHWM"] / 1024, 1),
            # Proportional (pages the two processes share counted once between them): before the
            # load, 15 s after it and after the same load again.
            "pss": {
                "before_load": round(loaded.status_start.get("Pss", 0) / 1024, 1),
                f"{SETTLE_S:g}_s_after_load": round(after.get("Pss", 0) / 1024, 1),
                f"{SETTLE_S:g}_s_after_the_same_load_again": round(after_again.get("Pss", 0) / 1024, 1),
            },
            # The daemon is two processes (the table's, and the API's it starts): each alone.
            "by_process": {
                proc: {
                    "at_start": round(cold[f"{proc}_VmRSS"] / 1024, 1),
                    "before_load": round(loaded.status_start[f"{proc}_VmRSS"] / 1024, 1),
                    "end_of_load": round(loaded.status_end[f"{proc}_VmRSS"] / 1024, 1),
                    f"{SETTLE_S:g}_s_after_load": round(after[f"{proc}_VmRSS"] / 1024, 1),
                    f"{SETTLE_S:g}_s_after_the_same_load_again": round(after_again[f"{proc}_VmRSS"] / 1024, 1),
                }
                for proc in ("table", "api")
            },
        },
        "faults_latched_after_settle": [f["code"] for f in state["faults"]],
        "http_load": _http_total(load),
        "http_by_process": {k: v for k, v in load.items() if k.startswith("http_")},
        "screens": {**load["screens"], "seconds_to_connect_and_greet_all": round(gens.screens_connect_s, 1)},
        "exit_code_after_sigterm": code,
        "daemon_log": {
            "tracebacks": log.count("Traceback (most recent call last)"),
            "exceptions": _exceptions(log),
        },
    }


def _exceptions(log: str) -> dict[str, int]:
    """The daemon log's exception lines (the last line of a traceback), counted."""
    found: dict[str, int] = {}
    for line in log.splitlines():
        if _EXCEPTION.match(line.strip(" |")):
            key = line.strip(" |")[:160]
            found[key] = found.get(key, 0) + 1
    return dict(sorted(found.items(), key=lambda kv: -kv[1]))


def _ratio(a: float | str | None, b: float | str | None) -> float | None:
    """a / b; a p99 in the +Inf bucket counts as its lower bound, 5 s (the ratio is then at least)."""
    a = 5000.0 if isinstance(a, str) else a
    if a is None or not isinstance(b, float | int) or not b:
        return None
    return round(a / b, 3)


def goals(session: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals judged from a session's measurements."""
    quiet, load, rss = session["quiet"], session["load"], session["rss_mb"]
    p99 = _ratio(load["card_to_lamp"]["p99_ms"], quiet["card_to_lamp"]["p99_ms"])
    timed = {"quiet": quiet["card_to_lamp"]["cards"], "load": load["card_to_lamp"]["cards"]}
    cards = _ratio(load["cards_a_minute"], quiet["cards_a_minute"])
    memory = _ratio(rss[f"{SETTLE_S:g}_s_after_load"], rss["before_load"])
    growth = _ratio(rss[f"{SETTLE_S:g}_s_after_the_same_load_again"], rss[f"{SETTLE_S:g}_s_after_load"])
    faults = sum(load["faults_raised"].values())
    server_errors = sum(n for status, n in session["http_load"]["status"].items() if int(status) >= 500)
    return {
        "card_to_lamp_p99_load_over_quiet": {
            "ratio": p99,
            "goal": f"2 or less, judged only with {MIN_CARDS_FOR_P99} cards or more in each window",
            "met": p99 is not None and p99 <= 2 and min(timed.values()) >= MIN_CARDS_FOR_P99,
            "cards_timed": timed,
        },
        "cards_a_minute_load_over_quiet": {
            "ratio": cards,
            "goal": "1 (unchanged; the dealer's pace sets it; met at 0.95 or more)",
            "met": cards is not None and cards >= 0.95,
        },
        "faults_raised_under_load": {"count": faults, "goal": 0, "met": faults == 0},
        "answers_5xx_under_load": {"count": server_errors, "goal": 0, "met": server_errors == 0},
        "rss_after_load_over_before": {
            "ratio": memory,
            "goal": (
                "1 (flat; met at 1.05 or less); before = after the daemon's first load ever, whose own cost is "
                "rss_mb.at_start -> rss_mb after it, reported, not judged"
            ),
            "met": memory is not None and memory <= 1.05,
        },
        "rss_after_a_second_load_over_after_the_first": {
            "ratio": growth,
            "goal": "1 (no growth from load to load: no leak; met at 1.02 or less)",
            "met": growth is not None and growth <= 1.02,
        },
    }


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tablectl-api-load-") as tmp:
        session = _session(Path(tmp))
    return result(session, _source())


def result(session: dict[str, Any], source: str) -> dict[str, Any]:
    """The benchmark's answer from a session's measurements."""
    judged = goals(session)
    p99 = judged["card_to_lamp_p99_load_over_quiet"]["ratio"]
    return {
        "name": "api_load",
        "what": (
            "`tablectl run --sim --demo --game grand-slam` "
            f"(the simulated dealer stepping every {DEMO_INTERVAL_S:g} s) "
            f"for {WINDOW_S:g} s quiet, then {WINDOW_S:g} s with {SCREENS} WebSocket screens and {RATE:g} requests/s "
            "from other processes (GET /api/state and /api/rounds with the dealer's token, /api/health and "
            "/api/openapi.json without one, GET /api/state with a wrong token from 32 loopback addresses): cards "
            "journaled a minute, card-to-lamp p50/p99 (GET /metrics histogram, interpolated in its buckets) and mean, "
            f"faults raised, the daemon's RSS before, at the end of and {SETTLE_S:g} s after the load"
        ),
        "reference": (
            "the same daemon in the quiet window before; ratio = card-to-lamp p99 under load / quiet (goal 2 or "
            "less); also cards a minute load / quiet (goal 1), faults raised under load (goal 0), RSS after / "
            "before the load (goal 1): see results.goals"
        ),
        "ratio": p99 if p99 is not None else 0.0,  # 0: a window without a card (see results)
        "results": {
            "daemon_source": source,
            "goals": judged,
            **session,
            "how": {
                "window_s": WINDOW_S,
                "warmup_s": WARMUP_S,
                "settle_s": SETTLE_S,
                "demo_interval_s": DEMO_INTERVAL_S,
                "load_processes": (
                    f"1 with {SCREENS} screens, {HTTP_PROCESSES} paced HTTP at {RATE / HTTP_PROCESSES:g}/s each"
                ),
                "card_to_lamp": (
                    "the daemon's histogram (buckets 2, 5, 10, 20, 50, 100, 200, 500 ms, 1, 2, 5 s): from the shoe's "
                    "reader handing a card over to the lamps set, journal commit included; quantiles interpolated"
                ),
                "commit_to_screen": "screens.commit_to_screen: wall-clock receipt minus the entry's journal time (ms)",
            },
        },
    }
