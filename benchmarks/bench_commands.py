"""The commands' own speed (issue 35 point 3, issue 30 item 11): wall and CPU time of
`tablectl run --sim` until its API answers /api/health, and of `recall`, `journal verify`,
`replay` and `hand` as an operator types them, on a 10k-entry journal, with what each imports
(`python -X importtime`: its 15 slowest imports, and which heavy libraries it loads at all).

The journal is the `journal` benchmark's 10k one, built the same way in a temporary directory
(controller/cli/synth.py's dealer through the real table code, seeded Grand Slam rounds, seven seats
on three bases: 10,007 entries, 455 rounds). `recall` and `journal verify` read it as at a table,
through a table.toml naming it (`--config`: the configuration is read and checked as on a Pi),
and with no table.toml: `recall --sim --state-dir D` (as `make run`'s journal is recalled) and
`journal verify --state-dir D` (a copy of a table's journal on a laptop: its own game and rules);
`replay` settles round 400's file as `recall --round 400 --export` wrote it; `hand` is REPLAY.md's
seven cards with 3s and 9s wild. `run --sim` starts on a fresh copy of the journal each time (a
start journals its own entries), from exec until the first 200 from /api/health; its CPU is the
process's own at that moment (/proc, in clock ticks).

Each command runs as its own process, in turns (one of each a turn, after a warm-up turn not
counted, which also leaves the bytecode caches written), seven turns, medians. The cores are
shared with other work: CPU time is the fair figure, wall time the one a person waits.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_journal import SEVEN_SEATS

TABLECTL = [sys.executable, "-m", "controller.cli"]
ENTRIES = 10_000
TURNS = 7
TOP = 15
GOALS = {"run": 0.5, "recall": 0.3, "recall_sim": 0.3, "verify": 0.3, "verify_copy": 0.3, "replay": 0.3, "hand": 0.3}
#: The libraries a command should load only when it uses them (what the issue named, and their kin).
HEAVY = ("fastapi", "starlette", "uvicorn", "pydantic", "cryptography", "cv2", "numpy", "prometheus_client", "paho")
TOKENS = {
    "TABLECTL_DEALER_TOKEN": "bench-dealer-token-0123456789",
    "TABLECTL_SUPERVISOR_TOKEN": "bench-supervisor-token-0123456789",
}
HAND = ["--wild", "3,9", "AS", "KS", "3D", "9C", "QS", "7S", "2H"]
ROUND = 400

#: The same figures measured on main at da3d16c, before the changes this benchmark came with, by
#: this file's own measure() (its commands run from that commit's tree): three runs of seven turns
#: interleaved with three of the code after, 21 of each command, medians, on 2 cores shared with
#: other work at a load average of 15 to 21 (`import_ms`: the -X importtime total, median of the
#: three; `heavy`: which of HEAVY it loaded).
REFERENCE_COMMIT = "da3d16c"
REFERENCE: dict[str, dict[str, Any]] = {
    "run": {"wall_s": 4.172, "cpu_s": 0.890, "import_ms": 3379.4, "modules": 746,
            "heavy": ["cryptography", "fastapi", "paho", "prometheus_client", "pydantic", "starlette", "uvicorn"]},
    "recall": {"wall_s": 1.240, "cpu_s": 0.343, "import_ms": 824.7, "modules": 259, "heavy": ["pydantic"]},
    "recall_sim": {"wall_s": 1.232, "cpu_s": 0.337, "import_ms": 956.3, "modules": 259, "heavy": ["pydantic"]},
    "verify": {"wall_s": 1.480, "cpu_s": 0.385, "import_ms": 951.6, "modules": 267, "heavy": ["pydantic"]},
    "verify_copy": {"wall_s": 1.503, "cpu_s": 0.398, "import_ms": 805.6, "modules": 267, "heavy": ["pydantic"]},
    "replay": {"wall_s": 0.484, "cpu_s": 0.115, "import_ms": 217.3, "modules": 115, "heavy": []},
    "hand": {"wall_s": 0.345, "cpu_s": 0.086, "import_ms": 206.6, "modules": 106, "heavy": []},
}  # fmt: skip


def _env() -> dict[str, str]:
    env = {**os.environ, **TOKENS}
    env.pop("NOTIFY_SOCKET", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the bytecode is cached after the first run
    return env


def build(root: Path) -> Path:
    """The `journal` benchmark's 10k journal, written through the table code."""
    from controller.cli.synth import SynthDealer
    from controller.journal.log import Journal
    from controller.table import Table

    state = root / "journal"
    state.mkdir()
    journal = Journal(state / "journal.sqlite3", durable=False)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    dealer = SynthDealer(table, seed=20261201 + journal.last_seq, opening=lambda _rng: SEVEN_SEATS)
    while journal.last_seq < ENTRIES:
        dealer.play_round()
    journal.sync()
    journal.close()
    return state


def _config(root: Path, state: Path) -> Path:
    """A table's table.toml (serial ports named as on a Pi; nothing opens them here)."""
    path = root / "table.toml"
    path.write_text(
        '[table]\nid = "BENCH-1"\ngame = "grand-slam"\n\n'
        '[shoe]\nurl = "/dev/serial/by-id/usb-bench-shoe"\n\n'
        '[display]\nurl = "/dev/serial/by-id/usb-bench-display"\n\n'
        f'[state]\ndir = "{state}"\n',
        encoding="utf-8",
    )
    return path


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process (from /proc, in clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed(argv: list[str], *, importtime: bool = False) -> tuple[float, float, str, str]:
    """(wall s, CPU s, stdout, stderr) of `tablectl ARGV` run to its end (it must exit 0); the CPU
    from the child's own rusage, reaped here."""
    flags = ["-X", "importtime"] if importtime else []
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, *flags, *TABLECTL[1:], *argv], stdout=out, stderr=err, env=_env())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"tablectl {' '.join(argv)} exited {proc.returncode}: {stderr.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, stdout, stderr


def _run_sim(journal: Path, work: Path, *, importtime: bool = False) -> tuple[float, float, str]:
    """`tablectl run --sim` on a fresh copy of the journal: (s until /api/health answers, its CPU
    then, what it wrote to stderr)."""
    state = work / "run"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(journal, state)
    port = _port()
    flags = ["-X", "importtime"] if importtime else []
    argv = [*TABLECTL, "run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{port}"]
    with tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            [*argv[:1], *flags, *argv[1:]],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=_env(),
        )
        try:
            while True:
                if proc.poll() is not None:
                    err.seek(0)
                    raise RuntimeError(f"the daemon exited with {proc.returncode}: {err.read()[-400:]}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=30) as answer:
                        answer.read()
                    wall, cpu = time.monotonic() - started, _cpu_of(proc.pid)
                    break
                except OSError:
                    time.sleep(0.005)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        err.seek(0)
        return wall, cpu, err.read()


def importtime_top(stderr: str) -> dict[str, Any]:
    """The `-X importtime` lines of a run: total, the TOP slowest imports (cumulative, any depth:
    a module's own line and the package that brought it in both show), and the heavy libraries."""
    rows = []
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            rows.append((m.group(4), len(m.group(3)) // 2, int(m.group(1)), int(m.group(2))))
    total = sum(cumulative for _, depth, _, cumulative in rows if depth == 0)
    top = sorted(rows, key=lambda r: -r[3])[:TOP]
    names = {name for name, *_ in rows}
    return {
        "total_ms": round(total / 1000, 1),
        "modules": len(rows),
        "heavy": sorted(h for h in HEAVY if h in names),
        "top15": [
            {"module": name, "depth": depth, "cumulative_ms": round(c / 1000, 1), "self_ms": round(s / 1000, 1)}
            for name, depth, s, c in top
        ],
    }


def measure(log: Callable[[str], object] = print) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="tablectl-bench-commands-"))
    try:
        journal = build(work)
        config = _config(work, journal)
        round_file = work / "round.json"
        _timed(["recall", "--config", str(config), "--round", str(ROUND), "--export", str(round_file)])
        commands: dict[str, list[str]] = {
            "recall": ["recall", "--config", str(config)],
            "recall_sim": ["recall", "--sim", "--state-dir", str(journal)],
            "verify": ["journal", "verify", "--config", str(config)],
            "verify_copy": ["journal", "verify", "--state-dir", str(journal)],
            "replay": ["replay", str(round_file)],
            "hand": ["hand", *HAND],
        }
        walls: dict[str, list[float]] = {name: [] for name in ["run", *commands]}
        cpus: dict[str, list[float]] = {name: [] for name in walls}
        outputs: dict[str, str] = {}
        for turn in range(TURNS + 1):  # the first turn warms the caches and is not counted
            wall, cpu, _ = _run_sim(journal, work)
            if turn:
                walls["run"].append(wall)
                cpus["run"].append(cpu)
            for name, argv in commands.items():
                wall, cpu, out, _ = _timed(argv)
                outputs[name] = out
                if turn:
                    walls[name].append(wall)
                    cpus[name].append(cpu)
            log(f"commands: turn {turn} of {TURNS} done")
        imports = {"run": importtime_top(_run_sim(journal, work, importtime=True)[2])}
        for name, argv in commands.items():
            imports[name] = importtime_top(_timed(argv, importtime=True)[3])
        assert outputs["verify"].rstrip().endswith("all pass"), outputs["verify"]
        assert outputs["verify_copy"].rstrip().endswith("all pass"), outputs["verify_copy"]
        assert outputs["recall"] == outputs["recall_sim"], "the same journal recalled two ways"
        assert json.loads(outputs["hand"])["category"], outputs["hand"]
        assert json.loads(outputs["replay"])["game"] == "grand-slam", outputs["replay"]
        return {
            name: {
                "wall_s": round(statistics.median(walls[name]), 3),
                "cpu_s": round(statistics.median(cpus[name]), 3),
                "wall_s_each": [round(w, 3) for w in walls[name]],
                "cpu_s_each": [round(c, 3) for c in cpus[name]],
                "goal_wall_s": GOALS[name],
                "goal_met": statistics.median(walls[name]) <= GOALS[name],
                "importtime": imports[name],
            }
            for name in walls
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


NAMES = {
    "run": "`run --sim` to healthy",
    "recall": "`recall --config`",
    "recall_sim": "`recall --sim --state-dir`",
    "verify": "`journal verify --config`",
    "verify_copy": "`journal verify --state-dir` (a copy, no table.toml)",
    "replay": "`replay`",
    "hand": "`hand`",
}


def run() -> dict[str, Any]:
    load_before = os.getloadavg()
    figures = measure(lambda text: print(text, file=sys.stderr))
    load_after = os.getloadavg()
    now = ", ".join(f"{NAMES[k]} {v['wall_s']} s wall / {v['cpu_s']} s CPU" for k, v in figures.items())
    result: dict[str, Any] = {
        "name": "commands",
        "what": f"tablectl's commands as processes on a 10,007-entry journal (medians of {TURNS} turns): {now}",
        "figures": figures,
        "load_average": {"before": [round(x, 1) for x in load_before], "after": [round(x, 1) for x in load_after]},
        "note": (
            "the machine's 2 cores are shared with other engineers' work: wall times are noisy, CPU time is the "
            "fair figure; run on its own (python -m benchmarks commands), never beside the other benchmarks"
        ),
    }
    before = sum(v["cpu_s"] for v in REFERENCE.values())
    after = sum(v["cpu_s"] for v in figures.values())
    result["reference"] = (
        f"the same figures on main at {REFERENCE_COMMIT}, before: "
        + ", ".join(f"{NAMES[k]} {v['wall_s']} s wall / {v['cpu_s']} s CPU" for k, v in REFERENCE.items())
        + " (load average 15-21); goals: run 0.5 s, the others 0.3 s wall"
    )
    result["before"] = REFERENCE
    result["cpu_after_over_before"] = {k: round(v["cpu_s"] / REFERENCE[k]["cpu_s"], 3) for k, v in figures.items()}
    result["ratio"] = round(after / before, 3)
    result["ratio_is"] = "the seven commands' CPU time after / before, summed (lower is faster)"
    return result


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
