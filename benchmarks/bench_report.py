"""The shift report of a long journal: `tablectl report` over 90 days of one table, and over one
day of it, as its own process (median of 3), with its peak RSS.

The journal is written by `tablectl journal synth`'s code (controller/cli/synth.py: the real Table in
this process, no devices, seeded Grand Slam rounds as the demo dealer opens them), on a clock
that puts the rounds where a table plays them: `ROUNDS_A_DAY` rounds a day (400: 8 hours at 50
an hour, a round every 60 to 84 seconds), a break of 16 hours between days, for 90 days. It is
kept in TABLECTL_BENCH_JOURNALS/report-90d (default ~/.cache/tablectl-bench/journals) so a second
run measures without building again; building goes at the speed of synth (minutes on a quiet
machine). The goal: the 90-day report in under 5 s. The cores are shared with other work, so
the time is noisy; the result says when it was measured and on what.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DAYS = 90
ROUNDS_A_DAY = int(os.environ.get("TABLECTL_BENCH_REPORT_ROUNDS_A_DAY", "400"))
FIRST_DAY = datetime(2026, 1, 1, 16, 0, tzinfo=UTC).timestamp()
GOAL_S = 5.0
TABLECTL = [sys.executable, "-m", "controller.cli"]


def store() -> Path:
    root = Path(os.environ.get("TABLECTL_BENCH_JOURNALS", Path.home() / ".cache" / "tablectl-bench" / "journals"))
    return root / f"report-{DAYS}d-{ROUNDS_A_DAY}"


def build(log: Any = print) -> Path:
    """The 90-day journal (cached): rounds through the table code on a clock of its own."""
    import random

    import controller.journal.log
    from controller.cli.synth import SynthDealer
    from controller.journal.log import Journal
    from controller.table import Table

    root = store()
    if (root / "done").exists():
        return root
    work = root / "growing"
    if work.exists():
        for part in work.iterdir():
            part.unlink()
    work.mkdir(parents=True, exist_ok=True)
    clock = {"ms": int(FIRST_DAY * 1000)}
    rng = random.Random(90)

    def now() -> str:
        clock["ms"] += rng.randint(3_000, 7_000)  # an entry every 3 to 7 s: 60 to 84 s a round
        return datetime.fromtimestamp(clock["ms"] / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")

    original = controller.journal.log.utc_now
    controller.journal.log.utc_now = now
    try:
        journal = Journal(work / "journal.sqlite3", durable=False)
        table = Table(journal, game="grand-slam", rules={}, simulated=True)
        dealer = SynthDealer(table, seed=20261202)
        started = time.monotonic()
        for day in range(DAYS):
            clock["ms"] = int((FIRST_DAY + day * 86400) * 1000)
            for _ in range(ROUNDS_A_DAY):
                dealer.play_round()
            log(f"report: day {day + 1} of {DAYS}, {journal.last_seq} entries after {time.monotonic() - started:.0f} s")
        journal.sync()
        journal.close()
    finally:
        controller.journal.log.utc_now = original
    for name in ("journal.sqlite3", "journal.head"):
        os.replace(work / name, root / name)
    (root / "done").write_text("built\n")
    return root


def _report(state: Path, start: float, end: float) -> tuple[float, float]:
    """Seconds the report took as its own process: on the clock, and of CPU (user + system: what
    it would take on cores of its own)."""

    def when(t: float) -> str:
        return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    subprocess.run(
        [*TABLECTL, "report", "--sim", "--state-dir", str(state), "--from", when(start), "--to", when(end), "--json"],
        capture_output=True,
        check=True,
    )
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run() -> dict[str, Any]:
    state = build()
    days = {
        "90 days": (FIRST_DAY - 3600, FIRST_DAY + DAYS * 86400),
        "one day": (FIRST_DAY + 45 * 86400, FIRST_DAY + 46 * 86400),
    }
    _report(state, *days["one day"])  # the edges are computed once and kept in the state dir
    figures: dict[str, Any] = {}
    for name, (start, end) in days.items():
        runs = [_report(state, start, end) for _ in range(3)]
        figures[name] = {
            "report_s_median": round(statistics.median(w for w, _ in runs), 3),
            "report_cpu_s_median": round(statistics.median(c for _, c in runs), 3),
            "report_s": [round(w, 3) for w, _ in runs],
            "load_average": os.getloadavg()[0],
        }
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    from controller.journal.log import Journal

    journal = Journal(state / "journal.sqlite3", readonly=True)
    entries = journal.last_seq
    journal.close()
    ninety = figures["90 days"]["report_s_median"]
    cpu = figures["90 days"]["report_cpu_s_median"]
    return {
        "name": "report",
        "what": (
            f"tablectl report --json over {DAYS} days of one Grand Slam table ({DAYS * ROUNDS_A_DAY} rounds, "
            f"{entries} entries): {ninety} s on the clock, {cpu} s of CPU (medians of 3; one day: "
            f"{figures['one day']['report_s_median']} s, {figures['one day']['report_cpu_s_median']} s of CPU), "
            f"peak RSS {rss_mb:.0f} MB; load average {figures['90 days']['load_average']:.1f} on the shared cores"
        ),
        "reference": f"the goal of {GOAL_S} s for the 90-day report (the ratio: its CPU seconds, what it takes alone)",
        "ratio": round(cpu / GOAL_S, 3),
        "entries": entries,
        "rounds": DAYS * ROUNDS_A_DAY,
        "rss_peak_mb": round(rss_mb, 1),
        **figures,
    }
