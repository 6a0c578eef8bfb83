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
seven cards with 3s and 9s wild. The state directory holds what an installed table's does: the
daemon's checked form of that table.toml (controller/app/config.py's CHECKED_FILE, written here as the
daemon writes it at its start: by each code measured, in a copy of the journal of its own, since a
form is kept for the code that checked it and another code's is not used); `recall_first` and `verify_first` are
the same commands on a copy of the table.toml the daemon has not started on (its models read it).
`run --sim` starts on a fresh copy of the journal each time (a start journals its own entries),
from exec until the first 200 from /api/health; its CPU is the table's process's own at that
moment (/proc, in clock ticks), `api_cpu_s` its API's process's, and `api_started_s` how long
after the table's process the API's was started (/proc start times, in clock ticks). Since the API's
process is forked from the table's (controller/api/launch.py), what both use is loaded once, in the
table's process, and counted in its CPU (`api_cpu_s` is the API's own work after the fork: compare
the two summed), and `run`'s `-X importtime` lists both processes' imports (the fork inherits the
flag), a module loaded before the fork once.

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
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.bench_journal import SEVEN_SEATS

TABLECTL = [sys.executable, "-m", "controller.cli"]
ENTRIES = 10_000
TURNS = 7
TOP = 15
GOALS = {
    "run": 0.5, "recall": 0.3, "recall_first": 0.3, "recall_sim": 0.3, "verify": 0.3, "verify_first": 0.3,
    "verify_copy": 0.3, "replay": 0.3, "hand": 0.3,
}  # fmt: skip
#: The libraries a command should load only when it uses them (what the issue named, and their kin).
HEAVY = ("fastapi", "starlette", "uvicorn", "pydantic", "cryptography", "cv2", "numpy", "prometheus_client", "paho")
TOKENS = {
    "TABLECTL_DEALER_TOKEN": "bench-dealer-token-0123456789",
    "TABLECTL_SUPERVISOR_TOKEN": "bench-supervisor-token-0123456789",
}
HAND = ["--wild", "3,9", "AS", "KS", "3D", "9C", "QS", "7S", "2H"]
ROUND = 400

#: The same figures measured on main at f589af6, before the checked form of table.toml and the
#: API's early start, by this file's own measure() with `--before` (that commit's tree run in turns
#: alternating with the code after: seven turns each, medians) on 2 cores shared with other work
#: at a load average of 22 to 33 (`import_ms`: the -X importtime total; `heavy`: which of HEAVY it
#: loaded; `run`: its table's process, and its API's process's CPU and start). The figures of
#: da3d16c, before this benchmark's first changes, are in benchmarks/HISTORY.md#commands.
REFERENCE_COMMIT = "f589af6"
REFERENCE: dict[str, dict[str, Any]] = {
    "run": {"wall_s": 8.154, "cpu_s": 0.62, "api_cpu_s": 0.77, "api_started_s": 2.53, "import_ms": 3557.4,
            "modules": 486, "heavy": ["cryptography", "prometheus_client", "pydantic"]},
    "recall": {"wall_s": 2.399, "cpu_s": 0.397, "import_ms": 1177.2, "modules": 259, "heavy": ["pydantic"]},
    "recall_first": {"wall_s": 2.255, "cpu_s": 0.402, "import_ms": 1728.6, "modules": 259, "heavy": ["pydantic"]},
    "recall_sim": {"wall_s": 1.259, "cpu_s": 0.227, "import_ms": 798.2, "modules": 151, "heavy": []},
    "verify": {"wall_s": 2.888, "cpu_s": 0.465, "import_ms": 1310.1, "modules": 260, "heavy": ["pydantic"]},
    "verify_first": {"wall_s": 2.7, "cpu_s": 0.461, "import_ms": 1766.2, "modules": 260, "heavy": ["pydantic"]},
    "verify_copy": {"wall_s": 1.233, "cpu_s": 0.25, "import_ms": 999.4, "modules": 152, "heavy": []},
    "replay": {"wall_s": 0.7, "cpu_s": 0.128, "import_ms": 414.7, "modules": 115, "heavy": []},
    "hand": {"wall_s": 0.538, "cpu_s": 0.099, "import_ms": 570.7, "modules": 106, "heavy": []},
}  # fmt: skip
REFERENCE_LOAD = "load average 22-33"


#: This checkout: the commands run from it unless another tree is named.
HERE = Path(__file__).resolve().parent.parent


def _env(code: Path | None = None) -> dict[str, str]:
    """The commands' environment; `code`: the checkout whose `controller` they run (another commit's
    tree, to measure it by the same code), else this one's."""
    env = {**os.environ, **TOKENS}
    env.pop("NOTIFY_SOCKET", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: the bytecode is cached after the first run
    env["PYTHONPATH"] = str(code or HERE)
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


def _remember(config: Path, state: Path, code: Path | None) -> None:
    """The checked form of `config` in `state`, as the daemon of `code` writes it at its start."""
    said = (
        "import sys; from pathlib import Path; from controller.app.config import remember_checked; "
        "sys.exit(0 if remember_checked(Path(sys.argv[1]), Path(sys.argv[2])) else 1)"
    )
    done = subprocess.run(
        [sys.executable, "-c", said, str(config), str(state)], env=_env(code), cwd=code or HERE, check=False
    )
    assert done.returncode == 0, "the daemon's checked form of table.toml"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process (from /proc, in clock ticks)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _started(pid: int) -> float:
    """When the process started, in seconds since boot (from /proc, in clock ticks)."""
    return int(_stat(pid)[19]) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _timed(argv: list[str], *, importtime: bool = False, code: Path | None = None) -> tuple[float, float, str, str]:
    """(wall s, CPU s, stdout, stderr) of `tablectl ARGV` run to its end (it must exit 0); the CPU
    from the child's own rusage, reaped here."""
    flags = ["-X", "importtime"] if importtime else []
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, *flags, *TABLECTL[1:], *argv], stdout=out, stderr=err, env=_env(code), cwd=code or HERE
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"tablectl {' '.join(argv)} exited {proc.returncode}: {stderr.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, stdout, stderr


def _run_sim(
    journal: Path, work: Path, *, importtime: bool = False, code: Path | None = None
) -> tuple[float, float, str, dict[str, float]]:
    """`tablectl run --sim` on a fresh copy of the journal: (s until /api/health answers, its CPU
    then, what it wrote to stderr, and its API's process then: its CPU and when it was started)."""
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
            env=_env(code),
            cwd=code or HERE,  # `python -m` puts the working directory first on the path
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
                    api = _children(proc.pid)
                    api_figures = {
                        "api_cpu_s": sum(_cpu_of(pid) for pid in api),
                        "api_started_s": min((_started(pid) for pid in api), default=0.0) - _started(proc.pid),
                    }
                    break
                except OSError:
                    time.sleep(0.005)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        err.seek(0)
        return wall, cpu, err.read(), api_figures


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
    # Each module's package (a package imported as the parent of its first submodule has no line
    # of its own: FastAPI's, in the API's process, reached first through fastapi.openapi.models).
    names = {name.split(".")[0] for name, *_ in rows}
    return {
        "total_ms": round(total / 1000, 1),
        "modules": len(rows),
        "heavy": sorted(h for h in HEAVY if h in names),
        "top15": [
            {"module": name, "depth": depth, "cumulative_ms": round(c / 1000, 1), "self_ms": round(s / 1000, 1)}
            for name, depth, s, c in top
        ],
    }


def measure(
    log: Callable[[str], object] = print, codes: Mapping[str, Path | None] | None = None
) -> dict[str, dict[str, Any]]:
    """The figures of each of `codes` (label -> the checkout whose `controller` the commands run;
    None: this one), measured in turns that alternate between them, so a busy machine weighs on
    each alike."""
    codes = dict(codes or {"after": None})
    work = Path(tempfile.mkdtemp(prefix="tablectl-bench-commands-"))
    try:
        journal = build(work)
        round_file = work / "round.json"
        # Each code its own table: the journal's copy, its table.toml and the checked form of it
        # that code's daemon writes (a form is keyed by the code that checked it: another code's
        # would not be used, and its commands would read the file through the models).
        tables: dict[str, dict[str, list[str]]] = {}
        for label, code in codes.items():
            state = work / label / "journal"
            shutil.copytree(journal, state)
            config = _config(work / label, state)
            _remember(config, state, code)
            first = work / label / "table-first.toml"  # another file (one comment more): not checked
            first.write_text("# a table.toml the daemon has not started on\n" + config.read_text(encoding="utf-8"))
            if not round_file.exists():
                _timed(["recall", "--config", str(config), "--round", str(ROUND), "--export", str(round_file)])
            tables[label] = {
                "recall": ["recall", "--config", str(config)],
                "recall_first": ["recall", "--config", str(first)],
                "recall_sim": ["recall", "--sim", "--state-dir", str(state)],
                "verify": ["journal", "verify", "--config", str(config)],
                "verify_first": ["journal", "verify", "--config", str(first)],
                "verify_copy": ["journal", "verify", "--state-dir", str(state)],
                "replay": ["replay", str(round_file)],
                "hand": ["hand", *HAND],
            }
        commands = tables[next(iter(codes))]
        names = ["run", *commands]
        walls: dict[str, dict[str, list[float]]] = {label: {name: [] for name in names} for label in codes}
        cpus: dict[str, dict[str, list[float]]] = {label: {name: [] for name in names} for label in codes}
        apis: dict[str, dict[str, list[float]]] = {label: {"api_cpu_s": [], "api_started_s": []} for label in codes}
        outputs: dict[str, dict[str, str]] = {label: {} for label in codes}
        for turn in range(TURNS + 1):  # the first turn warms the caches and is not counted
            for label, code in codes.items():
                wall, cpu, _, api = _run_sim(journal, work, code=code)
                if turn:
                    walls[label]["run"].append(wall)
                    cpus[label]["run"].append(cpu)
                    for key, value in api.items():
                        apis[label][key].append(value)
                for name, argv in tables[label].items():
                    wall, cpu, out, _ = _timed(argv, code=code)
                    outputs[label][name] = out
                    if turn:
                        walls[label][name].append(wall)
                        cpus[label][name].append(cpu)
            log(f"commands: turn {turn} of {TURNS} done")
        figures: dict[str, dict[str, Any]] = {}
        for label, code in codes.items():
            imports = {"run": importtime_top(_run_sim(journal, work, importtime=True, code=code)[2])}
            for name, argv in tables[label].items():
                imports[name] = importtime_top(_timed(argv, importtime=True, code=code)[3])
            said = outputs[label]
            for name in ("verify", "verify_first", "verify_copy"):
                assert said[name].rstrip().endswith("all pass"), said[name]
            assert said["recall"] == said["recall_sim"] == said["recall_first"], "the same journal recalled three ways"
            assert json.loads(said["hand"])["category"], said["hand"]
            assert json.loads(said["replay"])["game"] == "grand-slam", said["replay"]
            figures[label] = {
                name: {
                    "wall_s": round(statistics.median(walls[label][name]), 3),
                    "cpu_s": round(statistics.median(cpus[label][name]), 3),
                    "wall_s_each": [round(w, 3) for w in walls[label][name]],
                    "cpu_s_each": [round(c, 3) for c in cpus[label][name]],
                    "goal_wall_s": GOALS[name],
                    "goal_met": statistics.median(walls[label][name]) <= GOALS[name],
                    "importtime": imports[name],
                }
                for name in names
            }
            for key, values in apis[label].items():
                figures[label]["run"][key] = round(statistics.median(values), 3)
                figures[label]["run"][key + "_each"] = [round(v, 3) for v in values]
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


NAMES = {
    "run": "`run --sim` to healthy",
    "recall": "`recall --config`",
    "recall_first": "`recall --config` (a table.toml the daemon has not checked)",
    "recall_sim": "`recall --sim --state-dir`",
    "verify": "`journal verify --config`",
    "verify_first": "`journal verify --config` (a table.toml the daemon has not checked)",
    "verify_copy": "`journal verify --state-dir` (a copy, no table.toml)",
    "replay": "`replay`",
    "hand": "`hand`",
}


def _summary(figures: dict[str, Any]) -> dict[str, Any]:
    """A command's figures as REFERENCE keeps them."""
    if "importtime" not in figures:
        return figures
    kept = {k: figures[k] for k in ("wall_s", "cpu_s", "api_cpu_s", "api_started_s") if k in figures}
    imports = figures["importtime"]
    return kept | {"import_ms": imports["total_ms"], "modules": imports["modules"], "heavy": imports["heavy"]}


def _commit_of(tree: Path) -> str:
    """The commit a checkout is at (a tree without git: its directory's name)."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else tree.name


def run(before: Path | None = None) -> dict[str, Any]:
    """The figures now, against REFERENCE; with `before` (a checkout of REFERENCE_COMMIT's tree),
    that tree measured too, in turns alternating with this one, and compared against that instead."""
    load_before = os.getloadavg()
    codes: dict[str, Path | None] = {"after": None} if before is None else {"before": before, "after": None}
    measured = measure(lambda text: print(text, file=sys.stderr), codes)
    load_after = os.getloadavg()
    figures = measured["after"]
    reference: dict[str, dict[str, Any]] = REFERENCE if before is None else measured["before"]
    commit = REFERENCE_COMMIT if before is None else _commit_of(before)
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
    both = [k for k in figures if k in reference]
    result["reference"] = (
        f"the same figures on main at {commit}, before"
        + (" (measured in the same turns)" if before is not None else f" ({REFERENCE_LOAD})")
        + ": "
        + ", ".join(f"{NAMES[k]} {reference[k]['wall_s']} s wall / {reference[k]['cpu_s']} s CPU" for k in both)
        + "; goals: run 0.5 s, the others 0.3 s wall"
    )
    result["before"] = {k: _summary(v) for k, v in reference.items()}
    result["cpu_after_over_before"] = {k: round(figures[k]["cpu_s"] / reference[k]["cpu_s"], 3) for k in both}
    if "api_cpu_s" in figures["run"] and "api_cpu_s" in reference.get("run", {}):
        # `run`'s two processes together: what both load is counted in the table's since the API's is forked.
        result["run_both_processes_cpu_s"] = {
            "after": round(figures["run"]["cpu_s"] + figures["run"]["api_cpu_s"], 3),
            "before": round(reference["run"]["cpu_s"] + reference["run"]["api_cpu_s"], 3),
        }
    result["ratio"] = round(sum(figures[k]["cpu_s"] for k in both) / sum(reference[k]["cpu_s"] for k in both), 3)
    result["ratio_is"] = f"the {len(both)} commands' CPU time after / before, summed (lower is faster)"
    return result


if __name__ == "__main__":
    # python -m benchmarks.bench_commands [--before DIR]: DIR a checkout of the tree to compare with
    # (REFERENCE_COMMIT's: `git archive REFERENCE_COMMIT | tar -x -C DIR`; or main's), measured in the same turns.
    args = sys.argv[1:]
    print(json.dumps(run(Path(args[1]) if args[:1] == ["--before"] else None), indent=2))
