"""A long journal: start-up to a healthy API, peak RSS, `tablectl recall --last 100` and
`GET /api/state` on journals of 10k, 100k and 2M entries, against the same figures at 10k.

The journals are written by `tablectl journal synth`'s code (controller/cli/synth.py: the real Table
in this process, no devices, seeded Grand Slam rounds, seven seats on all three bases), grown in
one pass and copied at each size, and kept in TABLECTL_BENCH_JOURNALS (default
~/.cache/tablectl-bench/journals) so a second run measures without building again. Building
goes at 150 entries a second on the shared 2-core VM when it is busy, 3,000 when it is quiet
(every entry through the engine, the journal, the hash chain and the head file, a snapshot at
every round's end), so 2M entries take from minutes to hours. TABLECTL_BENCH_MAX_ENTRIES caps
the largest journal built; a 2M figure not measured is then extrapolated from the measured
sizes and labelled as such in the result.

Measured with `tablectl run --sim` as a process (median of 3 starts each): from exec to the
first 200 from /api/health; VmHWM from /proc after the starts, recalls and requests; `recall`
as its own process; 20 `GET /api/state` requests. The cores are shared with other work, so
timings are noisy: the ratios (each size against 10k) are the figure to read.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

SIZES = (10_000, 100_000, 500_000, 2_000_000)
# As the issue measured: seven seats, each betting all three bases (about 22 entries a round).
SEVEN_SEATS = {"seats": [{"seat": s, "wagers": {"first": 10, "second": 10, "third": 5}} for s in range(1, 8)]}
TOKENS = {
    "TABLECTL_DEALER_TOKEN": "bench-dealer-token-0123456789",
    "TABLECTL_SUPERVISOR_TOKEN": "bench-supervisor-token-0123456789",
}
TABLECTL = [sys.executable, "-m", "controller.cli"]


def store() -> Path:
    return Path(os.environ.get("TABLECTL_BENCH_JOURNALS", Path.home() / ".cache" / "tablectl-bench" / "journals"))


def largest() -> int:
    return int(os.environ.get("TABLECTL_BENCH_MAX_ENTRIES", SIZES[-1]))


def build(log: Any = print) -> dict[int, Path]:
    """Grow one journal through the table code, copying it at each size; cached."""
    from controller.cli.synth import SynthDealer
    from controller.journal.log import Journal
    from controller.table import Table

    root = store()
    sizes = sorted({s for s in SIZES if s <= largest()} | {largest()})
    done = {s: root / f"{s}" for s in sizes if (root / f"{s}" / "journal.sqlite3").exists()}
    if len(done) == len(sizes):
        return done
    work = root / "growing"
    work.mkdir(parents=True, exist_ok=True)
    journal = Journal(work / "journal.sqlite3", durable=False)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    dealer = SynthDealer(table, seed=20261201 + journal.last_seq, opening=lambda _rng: SEVEN_SEATS)
    started = time.monotonic()
    for size in sizes:
        if size in done:
            continue
        while journal.last_seq < size:
            dealer.play_round()
            if journal.last_seq % 50_000 < 8:
                log(f"journal: {journal.last_seq} entries after {time.monotonic() - started:.0f} s")
        journal.sync()
        target = root / f"{size}"
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for name in ("journal.sqlite3", "journal.head"):
            shutil.copy2(work / name, target / name)
        done[size] = target
        log(f"journal: {size} entries kept in {target} ({journal.last_seq} entries, {table.round_no} rounds)")
    journal.close()
    return done


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
        return json.loads(answer.read())


def _start(state: Path, port: int) -> tuple[subprocess.Popen[bytes], float]:
    env = {**os.environ, **TOKENS}
    env.pop("NOTIFY_SOCKET", None)
    started = time.monotonic()
    proc = subprocess.Popen(
        [*TABLECTL, "run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"the daemon exited with {proc.returncode} on {state}")
        try:
            _get(port, "/api/health")
            return proc, time.monotonic() - started
        except OSError:
            time.sleep(0.02)


def _hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(state: Path) -> dict[str, Any]:
    starts, hwm, state_ms, during_ms, checks = [], 0.0, [], [], []
    for _ in range(3):
        port = _port()
        proc, took = _start(state, port)
        starts.append(took)
        while True:  # GET /api/state while the background full check runs, then after it
            t = time.monotonic()
            journal = _get(port, "/api/state")["devices"].get("journal", {})
            if journal.get("check") != "running":
                break
            during_ms.append((time.monotonic() - t) * 1000)
            time.sleep(0.05)
        checks.append(journal.get("seconds"))
        for _ in range(20):
            t = time.monotonic()
            _get(port, "/api/state")
            state_ms.append((time.monotonic() - t) * 1000)
        hwm = max(hwm, _hwm_mb(proc.pid))
        proc.terminate()
        proc.wait(timeout=30)
    recalls = []
    for _ in range(3):
        t = time.monotonic()
        out = subprocess.run(
            [*TABLECTL, "recall", "--sim", "--state-dir", str(state), "--last", "100", "--json"],
            capture_output=True,
            check=True,
        )
        recalls.append(time.monotonic() - t)
        assert len(json.loads(out.stdout)) == 100
    size = sum(p.stat().st_size for p in state.iterdir() if p.is_file())
    return {
        "startup_s": round(statistics.median(starts), 3),
        "rss_peak_mb": round(hwm, 1),
        "recall_last_100_s": round(statistics.median(recalls), 3),
        "get_state_ms_p50": round(statistics.median(state_ms), 2),
        "get_state_ms_p50_during_full_check": round(statistics.median(during_ms), 2) if during_ms else None,
        "background_full_check_s": statistics.median(c for c in checks if c is not None) if any(checks) else None,
        "disk_mb": round(size / 2**20, 1),
    }


def run() -> dict[str, Any]:
    journals = build(lambda text: print(text, file=sys.stderr))
    results: dict[str, Any] = {}
    for size, path in sorted(journals.items()):
        entries = _entries(path)
        results[str(size)] = {"entries": entries, **measure(path)}
    base = results[str(SIZES[0])]
    top = results[str(max(journals))]
    ratio = top["startup_s"] / base["startup_s"]
    for figures in results.values():
        figures["vs_10k"] = {
            key: round(figures[key] / base[key], 3)
            for key in ("startup_s", "rss_peak_mb", "recall_last_100_s", "get_state_ms_p50")
        }
    measured = ", ".join(
        f"{int(k):,} entries: start {v['startup_s']} s, RSS {v['rss_peak_mb']} MB, recall {v['recall_last_100_s']} s, "
        f"state {v['get_state_ms_p50']} ms"
        for k, v in results.items()
    )
    extrapolated = None
    if max(journals) < SIZES[-1]:
        extrapolated = {
            "entries": SIZES[-1],
            "how": "NOT MEASURED: a straight line through the measured sizes (least squares), extended to 2M",
            **{
                key: round(_line(results, key, SIZES[-1]), 3)
                for key in ("startup_s", "rss_peak_mb", "recall_last_100_s", "get_state_ms_p50", "disk_mb")
            },
        }
    return {
        "extrapolated_2m": extrapolated,
        "name": "journal",
        "what": f"tablectl run --sim on synthesised Grand Slam journals: {measured}",
        "reference": f"the same figures on the {SIZES[0]:,}-entry journal (goal: start-up at 2M within 1.5x of it)",
        "ratio": round(ratio, 3),
        "sizes": results,
        "largest_built": max(journals),
        "note": (
            "timings on shared cores are noisy; "
            + ("" if max(journals) >= SIZES[-1] else f"only journals up to {max(journals):,} entries were built")
        ),
    }


def _line(results: dict[str, Any], key: str, at: int) -> float:
    xs = [float(v["entries"]) for v in results.values()]
    ys = [float(v[key]) for v in results.values()]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread if spread else 0.0
    return my + slope * (at - mx)


def _entries(path: Path) -> int:
    import sqlite3

    db = sqlite3.connect(f"{(path / 'journal.sqlite3').resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT MAX(seq) FROM entries").fetchone()[0])
    finally:
        db.close()


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
