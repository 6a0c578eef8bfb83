"""The floor at a casino's size (issue 32): 1,000 tables into a group of 1, 2 and 4 store consumers.

Everything is real and local, and shares this machine's cores: a Mosquitto 2 broker on 127.0.0.1,
a PostgreSQL server of our own (initdb in a temporary directory, a Unix socket, fsync and
synchronous_commit on, the settings hardware/floor.md recommends), each consumer a `tablectl
floor --broker ... --store postgresql://... --group floor-stores` process, and the load
generator (benchmarks/floor_load.py), GENERATORS processes that speak the floor's published
schema over MQTT as 1,000 tables' publishers and catch-up responders do, each for every
GENERATORS-th table, the entries as raw MQTT 5 PUBLISH packets built from parts encoded once
(their entries are Grand Slam journal entries dealt here, the signed chain heads left out: the
generator holds no table key).

For each number of consumers, on a fresh database:

  live      every table 1 entry a second for LIVE_S, then the shift-change burst at 5 a second
            for BURST_S, then 1 a second again for AFTER_S: each entry's lag is the store's
            `received_at` (taken when its batch is stored, just before the commit) minus its
            `at` (when the generator published it), p50/p99 for the steady seconds and the burst
  ingest    FLOOD entries a table, published as fast as the generator can: entries a second from
            the first one's publication to the last one committed (polled); the generator's own
            publishing rate beside it, since it bounds what can be measured
  day       one table a day behind (86,400 entries the broker never carried; its status says
            so, the consumers ask it): seconds until the store holds it
  behind    HOUR_TABLES tables an hour behind (3,600 entries each the broker never carried):
            their status says so, the consumers ask them, seconds until the store holds them all
            (extrapolated to 1,000 tables at the rate measured: a casino's floor an hour behind)

and each consumer's RSS (from /proc) at start, when the live load has been offered, at its
highest and at the end: flat means it grows by less than FLAT_MB from the end of the live load
(its inbox and batch filled once) to its highest, over the phases after it (or, for a store
that did not keep up, over the PHASE_S it was given to catch up). The machine's load average is
recorded before, between the runs and after: it is shared with other work.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from benchmarks.bench_floor import deal
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import free_port

SITE = "scale"
TABLES = 1000
CONSUMERS = (1, 2, 4)
LIVE_S = 10.0
BURST_S = 4.0
AFTER_S = 4.0
FLOOD = 20
#: Load generator processes (one offers about 16,000 entries a second at load 10, raw packets).
GENERATORS = 2
#: A consumer's memory is flat if it grows less than this after the live phase.
FLAT_MB = 25.0
#: "A floor an hour behind catches up in minutes": at most this long, extrapolated to 1,000 tables.
HOUR_GOAL_S = 600
HOUR_TABLES = 100
#: An hour behind at HOUR_TABLES tables: at most this long (then recorded as not caught up).
HOUR_S = 240.0
HOUR = 3600
DAY = 86_400
GROUP = "floor-stores"
#: Each phase's bound: a store that has not filled by then did not keep up (recorded, not waited for).
PHASE_S = 30.0
DAY_S = 45.0
REPO = Path(__file__).resolve().parents[1]
#: PostgreSQL settings of the floor server (hardware/floor.md): durable commits, room for the WAL.
PG_SETTINGS = {
    "shared_buffers": "256MB",
    "max_wal_size": "2GB",
    "checkpoint_timeout": "15min",
    "synchronous_commit": "on",
    "fsync": "on",
    "max_connections": "50",
}


#: The broker's bounds (as hardware/floor/mosquitto.conf ships them, but for the queue's count: the
#: benchmark's flood is 20,000 entries a table at once): what it may queue for one client beyond
#: what is in flight, by count and by bytes. Past them it drops that client's QoS 1 messages (the
#: store asks the tables for them).
MOSQUITTO_LIMITS = {"max_queued_messages": 100000, "max_queued_bytes": 256 * 1024 * 1024, "max_inflight_messages": 1000,
                    "persistence": "false"}  # fmt: skip
#: A run is stopped if the broker grows past this (the machine's 24 GB are shared with others;
#: an hour behind at 1,000 tables once had Mosquitto grow to 23 GB and be OOM-killed).
BROKER_MOST_MB = 4096.0
BROKER_PID: list[int] = []


class BrokerTooBig(RuntimeError):
    pass


def broker_rss_mb() -> float | None:
    return rss_mb(BROKER_PID[0]) if BROKER_PID else None


def check_broker(highest: list[float]) -> None:
    """The broker's RSS noted in `highest`; past BROKER_MOST_MB the run stops."""
    rss = broker_rss_mb()
    if rss is None:
        return
    highest[0] = max(highest[0], rss)
    if rss > BROKER_MOST_MB:
        raise BrokerTooBig(f"the broker grew to {rss:.0f} MB, past {BROKER_MOST_MB:.0f} MB: run stopped")


@contextmanager
def broker(home: Path) -> Iterator[int]:
    binary = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    if binary is None:
        raise RuntimeError("the mosquitto broker is missing: install Debian's package `mosquitto`")
    port = free_port()
    conf = home / "mosquitto.conf"
    limits = "".join(f"{k} {v}\n" for k, v in MOSQUITTO_LIMITS.items())
    if os.environ.get("FLOOR_SCALE_BROKER_LOG"):
        limits += (f"log_dest file {os.environ['FLOOR_SCALE_BROKER_LOG']}\nlog_type error\nlog_type warning\n"
                   "log_type notice\nlog_timestamp true\n")
    conf.write_text(f"listener {port} 127.0.0.1\nuser {getpass.getuser()}\nallow_anonymous true\n{limits}")
    process = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    BROKER_PID[:] = [process.pid]
    try:
        _wait(lambda: _listening(port), 30, "mosquitto did not listen")
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def _listening(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def _wait(done: Any, timeout: float, words: str, every: float = 0.1) -> float:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise RuntimeError(words)
        time.sleep(every)
    return time.time()


def _within(done: Any, timeout: float, every: float = 0.1) -> float | None:
    """When `done` came true (unix time), or None if not within `timeout` seconds."""
    try:
        return _wait(done, timeout, "", every)
    except RuntimeError:
        return None


@contextmanager
def postgres() -> Iterator[str]:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is missing: install Debian's package `postgresql`")
    bindir = found[-1].parent
    home = Path(tempfile.mkdtemp(prefix="tablectl-bench-pg-"))
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if prefix:
        shutil.chown(home, "postgres", "postgres")
    data = home / "data"
    port = free_port()

    def run(*argv: str) -> None:
        subprocess.run([*prefix, *argv], check=True, capture_output=True, timeout=120)

    run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8")
    options = f"-k {home} -c listen_addresses='' -p {port} " + " ".join(f"-c {k}={v}" for k, v in PG_SETTINGS.items())
    run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "-o", options, "start")
    try:
        yield f"postgresql://postgres@/{{db}}?host={home}&port={port}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(home, ignore_errors=True)


def new_database(pattern: str, name: str) -> str:
    import psycopg

    with psycopg.connect(pattern.format(db="postgres"), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pattern.format(db=name)


def cpu_s(pid: int) -> float | None:
    """The process's CPU time so far (user and system, every thread), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def family_cpu_s(pid: int) -> float:
    """The CPU time of a process and its children (the load generator's shards)."""
    total = cpu_s(pid) or 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            total += cpu_s(int(stat.parent.name)) or 0.0
    return total


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


class Generator:
    def __init__(self, port: int, template: Path, log: IO[bytes]) -> None:
        argv = [sys.executable, "-m", "benchmarks.floor_load", "--port", str(port), "--site", SITE,
                "--tables", str(TABLES), "--template", str(template), "--workers", str(GENERATORS)]  # fmt: skip
        self.process = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                        text=True)  # fmt: skip
        self.expect("ready")

    def expect(self, word: str) -> float:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if not line or (line[0] != word and line[:2] != ["done", word]):
            raise RuntimeError(f"the load generator said {line!r}, not {word}")
        return float(line[-1])

    def do(self, command: str) -> tuple[float, float]:
        """Run one command; (when it was sent, when the generator finished it), unix time."""
        assert self.process.stdin is not None
        sent = time.time()
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return sent, self.expect(command.split()[0])

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Sampler:
    """Each consumer's RSS, sampled whenever `sample` is called (the polling loops call it)."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.samples: dict[int, list[float]] = {pid: [] for pid in pids}
        self.last = 0.0
        self.marks: dict[int, int] = {}  # where each consumer's samples stood at the mark
        self.broker_highest = [0.0]  # the broker's RSS at its highest, MB

    def mark(self) -> None:
        """The live phase has ended: what each consumer holds now is the base of `flat`."""
        self.last = 0.0
        self.sample()
        self.marks = {pid: len(s) - 1 for pid, s in self.samples.items() if s}

    def sample(self) -> None:
        if time.monotonic() - self.last < 1.0:
            return
        self.last = time.monotonic()
        check_broker(self.broker_highest)
        for pid in self.pids:
            value = rss_mb(pid)
            if value is not None:
                self.samples[pid].append(value)

    def report(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for pid, s in self.samples.items():
            if not s:
                continue
            row: dict[str, Any] = {"start_mb": s[0], "max_mb": max(s), "end_mb": s[-1]}
            if pid in self.marks:
                base = s[self.marks[pid]]
                row["after_live_mb"] = base
                row["flat"] = max(s[self.marks[pid] :]) - base < FLAT_MB
            out.append(row)
        return out


def start_consumers(consumers: int, port: int, url: str, logs: Path, prefix: str) -> list[subprocess.Popen[bytes]]:
    """`consumers` `tablectl floor --group` processes on the broker at `port` into the store at
    `url`, each logging to logs/consumer-N.log, named PREFIX-N."""
    procs = []
    for n in range(1, consumers + 1):
        argv = [sys.executable, "-m", "controller.cli", "floor", "--broker", f"mqtt://127.0.0.1:{port}",
                "--store", url, "--group", GROUP, "--consumer-id", f"{prefix}-{n}"]  # fmt: skip
        log = (logs / f"consumer-{n}.log").open("wb")
        procs.append(subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=log))
    return procs


def stop_consumers(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to every consumer (a clean stop ends its broker session), then wait for each; one
    that has not ended in 30 s is killed."""
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def wait_connected(logs: Path, consumers: int) -> None:
    _wait(lambda: all("floor store: connected to" in (logs / f"consumer-{n}.log").read_text()
                      for n in range(1, consumers + 1)), 60, "the consumers did not connect")  # fmt: skip


def one_run(consumers: int, pg: str, port: int, template: Path, home: Path) -> dict[str, Any]:
    import psycopg

    url = new_database(pg, f"floor_{consumers}")
    logs = home / f"run-{consumers}"
    logs.mkdir()
    procs = start_consumers(consumers, port, url, logs, f"c{consumers}")
    db = psycopg.connect(url, autocommit=True)
    generator: Generator | None = None
    try:
        wait_connected(logs, consumers)
        sampler = Sampler([p.pid for p in procs])
        sampler.sample()
        generator = Generator(port, template, (logs / "generator.log").open("wb"))

        def stored() -> int:
            sampler.sample()
            return int(db.execute("SELECT COUNT(*) FROM floor_entries").fetchone()[0])  # type: ignore[index]

        # The floor as it runs before the measurement: every table's retained status taken in.
        _wait(lambda: int(db.execute("SELECT COUNT(*) FROM floor_tables").fetchone()[0]) >= TABLES,  # type: ignore[index]
              120, "the tables' statuses did not arrive")  # fmt: skip
        # -- live: 1 a second, the burst at 5, 1 again --
        live_start = time.time()
        generator.do(f"rate 1 {LIVE_S}")
        generator.do(f"rate 5 {BURST_S}")
        generator.do(f"rate 1 {AFTER_S}")
        live_total = TABLES * round(LIVE_S + 5 * BURST_S + AFTER_S)
        live_end = time.time()
        sampler.mark()
        if _within(lambda: stored() >= live_total, PHASE_S) is None:
            got = stored()
            return {"consumers": consumers, "kept_up": False, "consumer_rss": sampler.report(),
                    "live": f"{got} of {live_total} entries stored {PHASE_S:.0f} s after the live load ended: "
                            "the store did not keep up; the other phases were not run",
                    "stored_per_s": round(got / (time.time() - live_start)),
                    "consumers_cpu_s": round(sum(cpu_s(p.pid) or 0.0 for p in procs), 1),
                    "offered_per_s": round(live_total / (live_end - live_start))}  # fmt: skip
        steady_last = round(LIVE_S)
        burst_last = steady_last + round(5 * BURST_S)
        live_last = burst_last + round(AFTER_S)
        lag = {}
        for phase, low, high in (("steady", 1, steady_last), ("burst", steady_last + 1, burst_last)):
            row = db.execute(
                "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d), percentile_cont(0.99) WITHIN GROUP "
                "(ORDER BY d), max(d), count(*) FROM (SELECT EXTRACT(EPOCH FROM received_at::timestamptz - "
                "at::timestamptz) AS d FROM floor_entries WHERE seq BETWEEN %s AND %s AND table_id LIKE 'T%%') x",
                (low, high),
            ).fetchone()
            assert row is not None
            lag[phase] = {"p50_s": round(float(row[0]), 3), "p99_s": round(float(row[1]), 3),
                          "max_s": round(float(row[2]), 3), "entries": int(row[3])}  # fmt: skip
        # -- ingest: a flood --
        before = stored()
        generator_cpu = family_cpu_s(generator.process.pid)
        sent, published = generator.do(f"flood {FLOOD}")
        generator_cpu = family_cpu_s(generator.process.pid) - generator_cpu
        flood_total = before + TABLES * FLOOD
        flood_done = _within(lambda: stored() >= flood_total, PHASE_S, every=0.02)
        done = flood_done if flood_done is not None else time.time()
        first = db.execute(
            "SELECT MIN(EXTRACT(EPOCH FROM at::timestamptz)) FROM floor_entries WHERE seq > %s", (live_last,)
        ).fetchone()
        start = float(first[0]) if first and first[0] is not None else sent
        ingest = {"entries": TABLES * FLOOD, "seconds": round(done - start, 2), "complete": flood_done is not None,
                  "entries_per_s": round(TABLES * FLOOD / (done - start)),
                  "generator_published_per_s": round(TABLES * FLOOD / (published - start)),
                  "generator_cpu_us_an_entry": round(generator_cpu / (TABLES * FLOOD) * 1e6)}  # fmt: skip

        # -- a day, then an hour behind: the day first, because the generator answers catch-up
        # requests on one thread a process (a real table answers its own), and after 100 tables'
        # hour its queue still held the probes' asks (every 10 s, 1,100 tables) and the asks
        # re-sent when their claims lapsed, 550 ahead of the day's first ask --
        def held(tables: list[str], count: int) -> bool:
            sampler.sample()
            row = db.execute(
                "SELECT COUNT(*) FROM floor_tables WHERE site = %s AND table_id = ANY(%s) AND contiguous >= %s",
                (SITE, tables, count),
            ).fetchone()
            return row is not None and int(row[0]) == len(tables)

        started = time.time()
        day_name = f"DAY{consumers}"
        generator.do(f"behind {day_name} {DAY}")
        day_done = _within(lambda: held([day_name], DAY), DAY_S)
        day = _caught_up(db, [day_name], DAY, started, day_done)
        hours = [f"H{n:03d}" for n in range(1, HOUR_TABLES + 1)]
        started = time.time()
        for table in hours:
            generator.do(f"behind {table} {HOUR}")
        hour_done = _within(lambda: held(hours, HOUR), HOUR_S, every=0.5)
        behind = _caught_up(db, hours, HOUR, started, hour_done)
        sampler.sample()
        count = stored()
        cpu = sum(cpu_s(p.pid) or 0.0 for p in procs)
        expected = flood_total + HOUR_TABLES * HOUR + DAY
        dupes = db.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM floor_entries GROUP BY site, table_id, seq HAVING COUNT(*) > 1) x"
        ).fetchone()
        alerts = db.execute("SELECT COUNT(*) FROM floor_alerts").fetchone()
        complete = flood_done is not None and hour_done is not None and day_done is not None
        if complete and count != expected:
            raise RuntimeError(f"{consumers} consumer(s): the store holds {count} entries, not {expected}")
        return {
            "consumers": consumers,
            "kept_up": True,
            "lag": lag,
            "ingest": ingest,
            "hour_behind": behind,
            "table_day": day,
            "stored": count,
            "duplicates": int(dupes[0]) if dupes else None,
            "alerts": int(alerts[0]) if alerts else None,
            "consumer_rss": sampler.report(),
            "broker_rss_max_mb": sampler.broker_highest[0],
            # Every consumer's CPU over the whole run, and a stored entry's share of it: the same
            # a entry whatever the number of consumers means they take turns on the same cores.
            "consumers_cpu_s": round(cpu, 1),
            "consumers_cpu_us_an_entry": round(cpu / count * 1e6) if count else None,
        }
    finally:
        # The consumers first: the generator then takes its tables' retained statuses off the
        # broker, which the next run's consumers would otherwise ask about (and this run's table
        # names come again in it).
        stop_consumers(procs)
        if generator is not None:
            generator.stop()
        db.close()
        if os.environ.get("FLOOR_SCALE_LOGS"):  # keep the consumers' logs to look at
            shutil.copytree(logs, Path(os.environ["FLOOR_SCALE_LOGS"]) / logs.name, dirs_exist_ok=True)


def _caught_up(db: Any, tables: list[str], count: int, started: float, done: float | None) -> dict[str, Any]:
    if done is not None:
        return {"tables": len(tables), "entries": len(tables) * count, "seconds": round(done - started, 2),
                "entries_per_s": round(len(tables) * count / (done - started))}  # fmt: skip
    row = db.execute(
        "SELECT COALESCE(SUM(contiguous), 0) FROM floor_tables WHERE site = %s AND table_id = ANY(%s)", (SITE, tables)
    ).fetchone()
    held = int(row[0]) if row else 0
    seconds = time.time() - started
    return {"tables": len(tables), "entries": len(tables) * count, "complete": False, "held": held,
            "seconds": round(seconds, 1), "entries_per_s": round(held / seconds)}  # fmt: skip


def make_template(home: Path) -> Path:
    """Real Grand Slam entries (a few hundred rounds), the signed chain heads left out."""
    table = Table(Journal(home / "template.sqlite3"), game="grand-slam", rules={}, table_id="T", simulated=True)
    deal(table, 3000)
    entries = [e.to_json() for e in table.journal.entries() if e.kind != "chain-head"]
    table.journal.close()
    path = home / "template.json"
    path.write_text(json.dumps(entries))
    return path


def run() -> dict[str, Any]:
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory() as tmp, broker(Path(tmp)) as port, postgres() as pg:
        home = Path(tmp)
        template = make_template(home)
        for consumers in CONSUMERS:
            runs.append(one_run(consumers, pg, port, template, home))
            runs[-1]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    load_after = os.getloadavg()
    by = {r["consumers"]: r for r in runs}
    kept = [r for r in runs if r["kept_up"]]
    goals = {
        "lag_p99_under_1s_at_1000_tables_1_per_s": {
            str(r["consumers"]): r["kept_up"] and r["lag"]["steady"]["p99_s"] < 1.0 for r in runs
        },
        "ingest_10000_per_s_with_4_consumers": by[4]["kept_up"] and by[4]["ingest"]["entries_per_s"] >= 10_000,
        "table_day_under_10s": any(
            r["table_day"].get("complete", True) and r["table_day"]["seconds"] < 10 for r in kept
        ),
    }
    hour_rate = max([r["hour_behind"]["entries_per_s"] for r in kept] or [0])
    hour_goal = bool(hour_rate) and TABLES * HOUR / hour_rate < HOUR_GOAL_S
    goals[f"hour_behind_at_{TABLES}_tables_under_{HOUR_GOAL_S}_s"] = hour_goal
    goals["consumer_memory_flat"] = {
        str(r["consumers"]): all(c.get("flat", False) for c in r["consumer_rss"]) for r in runs
    }
    return {
        "name": "floor_scale",
        "what": (
            f"{TABLES} tables (a load generator speaking the floor's schema over a local Mosquitto) into one "
            "PostgreSQL through 1, 2 and 4 consumers in a shared-subscription group: lag p50/p99 at 1 entry/s a "
            "table and in a 5x burst, ingest entries/s, an hour behind and a table-day caught up, consumer RSS"
        ),
        "reference": "the goal: 10,000 entries/s ingest with 4 consumers",
        "ratio": round(by[4]["ingest"]["entries_per_s"] / 10_000, 3) if by[4]["kept_up"] else 0.0,
        "goals_met": goals,
        "hour_behind_at_1000_tables_extrapolated_s": round(TABLES * HOUR / hour_rate) if hour_rate else None,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cores": os.cpu_count(),
        "postgresql_settings": PG_SETTINGS,
        "mosquitto_settings": MOSQUITTO_LIMITS,
        "generator_processes": GENERATORS,
        "runs": runs,
    }


#: The direct hour behind (`hour N`): at most this long before it is recorded as not caught up.
HOUR_DIRECT_S = 900.0


def hour(tables: int, consumers: int) -> dict[str, Any]:
    """`tables` tables an hour behind at once (3,600 entries each the broker never carried; their
    statuses say so), measured, not extrapolated: seconds until the store holds them all, each
    consumer's RSS and the broker's (the run stops if the broker passes BROKER_MOST_MB)."""
    import psycopg

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, broker(Path(tmp)) as port, postgres() as pg:
        home = Path(tmp)
        template = make_template(home)
        url = new_database(pg, "floor_hour")
        logs = home / "hour"
        logs.mkdir()
        procs = start_consumers(consumers, port, url, logs, f"h{consumers}")
        db = psycopg.connect(url, autocommit=True)
        generator: Generator | None = None
        try:
            wait_connected(logs, consumers)
            sampler = Sampler([p.pid for p in procs])
            generator = Generator(port, template, (logs / "generator.log").open("wb"))
            _wait(lambda: int(db.execute("SELECT COUNT(*) FROM floor_tables").fetchone()[0]) >= TABLES,  # type: ignore[index]
                  120, "the tables' statuses did not arrive")  # fmt: skip
            sampler.mark()
            names = [f"H{n:04d}" for n in range(1, tables + 1)]

            def held() -> bool:
                sampler.sample()
                row = db.execute(
                    "SELECT COUNT(*) FROM floor_tables WHERE site = %s AND table_id = ANY(%s) AND contiguous >= %s",
                    (SITE, names, HOUR),
                ).fetchone()
                return row is not None and int(row[0]) == len(names)

            started = time.time()
            for name in names:
                generator.do(f"behind {name} {HOUR}")
                sampler.sample()
            put = time.time() - started
            done = _within(held, HOUR_DIRECT_S, every=1.0)
            behind = _caught_up(db, names, HOUR, started, done)
            dupes = db.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM floor_entries GROUP BY site, table_id, seq HAVING COUNT(*) > 1) x"
            ).fetchone()
            alerts = db.execute("SELECT COUNT(*) FROM floor_alerts").fetchone()
            stored = db.execute("SELECT COUNT(*) FROM floor_entries WHERE table_id LIKE 'H%'").fetchone()
            result: dict[str, Any] = {
                "name": "floor_scale_hour",
                "what": f"{tables} tables an hour behind at once ({tables * HOUR} entries), {consumers} consumer(s)",
                "consumers": consumers,
                "hour_behind": behind,
                "goal_s": HOUR_GOAL_S,
                "met": done is not None and done - started < HOUR_GOAL_S,
                "seconds_to_put_them_behind": round(put, 1),
                "stored": int(stored[0]) if stored else None,
                "duplicates": int(dupes[0]) if dupes else None,
                "alerts": int(alerts[0]) if alerts else None,
                "consumer_rss": sampler.report(),
                "broker_rss_max_mb": sampler.broker_highest[0],
                "consumers_cpu_s": round(sum(cpu_s(p.pid) or 0.0 for p in procs), 1),
            }
        finally:
            stop_consumers(procs)
            if generator is not None:
                generator.stop()
            db.close()
            if os.environ.get("FLOOR_SCALE_LOGS"):
                shutil.copytree(logs, Path(os.environ["FLOOR_SCALE_LOGS"]) / logs.name, dirs_exist_ok=True)
    result["load_average_before"] = [round(x, 2) for x in load_before]
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["cores"] = os.cpu_count()
    result["mosquitto_settings"] = MOSQUITTO_LIMITS
    return result


def hours(tables: int, counts: list[int]) -> dict[str, Any]:
    """`hour` for each number of consumers in `counts`, one after another in this sitting, in one
    result (a run of one count no longer writes over the others')."""
    runs = []
    for consumers in counts:
        run_ = hour(tables, consumers)
        run_["date"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        runs.append(run_)
    return {
        "name": "floor_scale_hour",
        "what": (f"{tables:,} tables an hour behind at once ({tables * HOUR:,} entries the broker never carried; "
                 "their statuses say so), measured directly: python -m benchmarks.bench_floor_scale hour "
                 f"{tables} {' '.join(map(str, counts))}"),
        "goal": f"caught up in minutes (under {HOUR_GOAL_S} s)",
        "met_with": {str(r["consumers"]): r["met"] for r in runs},
        "runs": runs,
    }


if __name__ == "__main__":
    # python -m benchmarks.bench_floor_scale                 the whole benchmark (as `make bench` runs it)
    # python -m benchmarks.bench_floor_scale hour N [C ...]  N tables an hour behind, with C consumers
    #                                                        each (2 if none given), into one JSON
    # FLOOR_SCALE_LOGS=DIR keeps the consumers' and the generator's logs; FLOOR_SCALE_BROKER_LOG=FILE
    # has Mosquitto log its notices and warnings (a client's dropped messages) there;
    # FLOOR_LOAD_TRACE=1 has the generator log every catch-up request it answers (ASK lines).
    if sys.argv[1:2] == ["hour"]:
        out = hours(int(sys.argv[2]), [int(c) for c in sys.argv[3:]] or [2])
        path = REPO / "benchmarks" / "results" / "floor_scale_hour.json"
        path.write_text(json.dumps(out, indent=2) + "\n")
        print(json.dumps(out, indent=2))
    else:
        print(json.dumps(run(), indent=2))
