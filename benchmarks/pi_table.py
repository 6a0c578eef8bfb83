"""README's "On a Raspberry Pi (estimated)" table, made from the measured figures in benchmarks/results/.

Every figure in benchmarks/results/*.json was measured on the 2-core x86-64 development VM; the table
runs on a Raspberry Pi. This module converts each CPU figure for a Pi 4 and a Pi Zero 2 W with an
ESTIMATED slow-down factor (a range, from published single-core comparisons; see PI_4 and ZERO_2_W), leaves
memory as it is (a Python object is the same size on a 64-bit Pi), and says against each figure's
budget whether it fits on each board.

    python -m benchmarks.pi_table            # write the table into README between its markers
    python -m benchmarks.pi_table --check    # exit 1 if README's table is not what the JSON gives now
    python -m benchmarks.pi_table --stdout   # print the block, write nothing

A figure fits when it is within its budget at the slow end of the factor's range, does not fit when
it is over its budget even at the fast end, and in between the table says at which factor it fits.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
README = HERE.parent / "README.md"
START = "<!-- pi-table: written by `python -m benchmarks.pi_table` from benchmarks/results; do not edit -->"
END = "<!-- /pi-table -->"

#: One 9-byte CARD frame at 115200 baud, 10 bits a byte on the wire (start, 8 data, stop).
LINE_TIME_MS = 9 * 10 / 115_200 * 1000
#: One frame of a 30-frames-a-second camera.
FRAME_MS = 33.0
#: What Linux is left of a Pi Zero 2 W's 512 MB once the GPU has its share (`free` in sbc-bench's
#: log of a Zero 2 W, results/3E85.txt: 427 MiB).
ZERO_2_W_LINUX_MB = 427.0


@dataclass(frozen=True)
class Factor:
    """How many times longer a Pi's core takes than this machine's: an estimate, low to high."""

    board: str
    low: float
    high: float


# 7-zip MIPS single-threaded (p7zip 16.02, `7z b` pinned to one core), all in one collection, sbc-bench's
# Sorted-Results.md: Pi 4 B at 1.8 GHz 1,738-1,897 (at 1.5 GHz 1,606-1,661), Pi Zero 2 at 1.0 GHz 838,
# Pi 5 at 2.4 GHz 3,196-3,305; the desktop-class x86-64 cores there 4,398 (Core i3-N305, 3.8 GHz) and
# 4,448 (Pentium G4600, 3.6 GHz). This machine's core is not in it: taken as 4,400.
THIS_CORE_7ZIP = 4400.0
PI_4 = Factor("Pi 4", low=round(THIS_CORE_7ZIP / 1897, 1), high=4.0)
ZERO_2_W = Factor("Pi Zero 2 W", low=round(THIS_CORE_7ZIP / 838, 1), high=10.0)

SOURCES = (
    "**Factors (ESTIMATED, not measured on a Pi)**: how many times longer a Pi's core takes than this "
    "machine's (a 2-core x86-64 VM, a Xeon core with AMX and AVX-512 FP16, so Sapphire Rapids or newer, "
    f"2.6 GHz nominal). **Pi 4 (Cortex-A72, 1.8 GHz): x{PI_4.low:g} to x{PI_4.high:g}; "
    f"Pi Zero 2 W (Cortex-A53, 1 GHz): x{ZERO_2_W.low:g} to x{ZERO_2_W.high:g}.**",
    "",
    "- The low end is a published single-core comparison: 7-zip MIPS single-threaded in sbc-bench's "
    "results (Thomas Kaiser, https://github.com/ThomasKaiser/sbc-bench/blob/master/Sorted-Results.md; "
    "the logs: Zero 2 W at 1 GHz https://github.com/ThomasKaiser/sbc-bench/blob/master/results/3E85.txt, "
    "Pi 4 B at 1.8 GHz .../results/3Gia.txt): Pi 4 B at 1.8 GHz 1,738-1,897 (1,606-1,661 at 1.5 GHz), "
    "Pi Zero 2 W at 1 GHz 838, Pi 5 at 2.4 GHz 3,196-3,305 (x1.3-1.4, not tabulated); this machine's "
    "core is not in that collection and is taken as 4,400, between the desktop-class x86-64 cores "
    "there (Core i3-N305 at 3.8 GHz 4,398, Pentium G4600 at 3.6 GHz 4,448). 7-zip is integer, "
    "branchy C, the nearest published kind of work to CPython's interpreter loop.",
    '- The high end is issue 35\'s working figure (a Pi 4 core "roughly a quarter to a third" of this '
    "one, a Zero 2 W's \"roughly a tenth\"): CPython's own ratio is likely worse than 7-zip's on the "
    "in-order Cortex-A53 with its 512 KB of L2, and no published CPython (pyperformance) comparison on "
    "a Pi was found to pin it. Vision's OpenCV uses AVX-512 here and 128-bit NEON there, so its ratio "
    "may also be past the low end.",
    "- CPU figures are multiplied; memory is not (the same objects, 64-bit on both); wall times "
    "(card-to-lamp, measured here on a machine shared with other work: its row says the load) are "
    "multiplied as if they were all "
    "CPU, an upper estimate. A figure **fits** when it is within its budget at the high end of the "
    'range, does **not** when it is over even at the low end; "at xN" says the factor it needs.',
)


@dataclass(frozen=True)
class Figure:
    """One row: where its value is in which results file, what kind it is and its budget."""

    label: str
    short: str  # the row's name in the summary under the table
    file: str
    path: tuple[str, ...]
    unit: str  # "ms", "s", "MB" or "ms a second"
    budget: float | None
    budget_text: str
    scaled: bool = True  # False for memory: a Python object is the same size on the Pi
    #: A count in the same file that the label names, put where the label has {count}.
    count_path: tuple[str, ...] = ()


LINE = f"the card's line time, {LINE_TIME_MS:.3f} ms"
FRAME = f"a frame, {FRAME_MS:g} ms"
CARD_CPU = ("results", "cpu_ms_per_card_fsync_apart")
DAY = "memory after a day of play ({count} entries, 50 screens in and out a minute)"
HALF_720 = "halves 1280x720"

FIGURES = (
    Figure(
        "daemon CPU a card, 1 screen (fsync apart), both processes",
        "card CPU, 1 screen",
        "card_cpu",
        (*CARD_CPU, "screens_1"),
        "ms",
        LINE_TIME_MS,
        LINE,
    ),
    Figure(
        "daemon CPU a card, 50 screens (fsync apart), both processes",
        "card CPU, 50 screens",
        "card_cpu",
        (*CARD_CPU, "screens_50"),
        "ms",
        LINE_TIME_MS,
        LINE,
    ),
    Figure(
        "the journal's fsync, CPU a card (1 screen)",
        "fsync CPU",
        "card_cpu",
        ("results", "fsync_cpu_ms_per_card", "screens_1"),
        "ms",
        None,
        "the disk's, counted apart",
    ),
    Figure(
        "daemon CPU while idle, 50 screens connected",
        "idle CPU",
        "card_cpu",
        ("results", "idle_cpu_ms_per_s"),
        "ms a second",
        None,
        "none set for the Pi",
    ),
    Figure(
        "card-to-lamp p50, wall (frame written -> 74HC595 latch)",
        "card-to-lamp p50",
        "daemon",
        ("results", "card_to_lamp", "p50_ms"),
        "ms",
        LINE_TIME_MS,
        LINE,
    ),
    Figure(
        "card-to-lamp p99, wall",
        "card-to-lamp p99",
        "daemon",
        ("results", "card_to_lamp", "p99_ms"),
        "ms",
        LINE_TIME_MS,
        LINE,
    ),
    Figure(
        "`tablectl run --sim` to healthy, CPU of both processes",
        "run --sim",
        "commands",
        ("run_both_processes_cpu_s", "after"),
        "s",
        0.5,
        "0.5 s",
    ),
    Figure(
        "`tablectl recall` on 10k entries, CPU", "recall", "commands", ("figures", "recall", "cpu_s"), "s", 0.3, "0.3 s"
    ),
    Figure(
        "`tablectl recall`, a table.toml no daemon has checked, CPU",
        "recall (unchecked table.toml)",
        "commands",
        ("figures", "recall_first", "cpu_s"),
        "s",
        0.3,
        "0.3 s",
    ),
    Figure(
        "`tablectl journal verify` on 10k entries, CPU",
        "verify",
        "commands",
        ("figures", "verify", "cpu_s"),
        "s",
        0.3,
        "0.3 s",
    ),
    Figure(
        "`tablectl journal verify`, a table.toml no daemon has checked, CPU",
        "verify (unchecked table.toml)",
        "commands",
        ("figures", "verify_first", "cpu_s"),
        "s",
        0.3,
        "0.3 s",
    ),
    Figure("`tablectl replay`, CPU", "replay", "commands", ("figures", "replay", "cpu_s"), "s", 0.3, "0.3 s"),
    Figure("`tablectl hand`, CPU", "hand", "commands", ("figures", "hand", "cpu_s"), "s", 0.3, "0.3 s"),
    Figure(
        "vision, half-table 1280x720, still table, CPU a frame",
        "vision still",
        "vision_speed",
        ("results", f"{HALF_720}, still", "cpu_median_ms"),
        "ms",
        FRAME_MS,
        FRAME,
    ),
    Figure(
        "vision, half-table 1280x720, one wager changes, CPU a frame",
        "vision one wager changes",
        "vision_speed",
        ("results", f"{HALF_720}, one wager changes", "cpu_median_ms"),
        "ms",
        FRAME_MS,
        FRAME,
    ),
    Figure(
        "vision, half-table 1280x720, cold (every zone afresh), CPU a frame",
        "vision cold",
        "vision_speed",
        ("results", f"{HALF_720}, cold", "cpu_median_ms"),
        "ms",
        FRAME_MS,
        FRAME,
    ),
    Figure(
        f"{DAY}, the daemon's resident memory, each page counted once (both processes' physical pages)",
        "memory counted once",
        "day_memory",
        ("results", "after_the_day", "once_mb"),
        "MB",
        70.0,
        "70 MB (issue 35)",
        scaled=False,
        count_path=("results", "entries"),
    ),
    Figure(
        f"{DAY}, RSS of both processes summed (a page they share counted in each)",
        "memory RSS",
        "day_memory",
        ("results", "after_the_day", "rss_mb"),
        "MB",
        ZERO_2_W_LINUX_MB,
        "the Zero 2 W's 512 MB, 427 MB of it Linux's",
        scaled=False,
        count_path=("results", "entries"),
    ),
)

HEADER = ("figure", "here", "Pi 4 (est.)", "Pi Zero 2 W (est.)", "budget", "fits a Pi 4", "fits a Pi Zero 2 W")


@dataclass(frozen=True)
class Row:
    figure: Figure
    here: float
    label: str

    def on(self, factor: Factor) -> tuple[float, float]:
        """The figure on a board: (fast end, slow end) of the estimate."""
        if not self.figure.scaled:
            return self.here, self.here
        return self.here * factor.low, self.here * factor.high

    def fits(self, factor: Factor) -> str:
        budget = self.figure.budget
        if budget is None:
            return "-"
        fast, slow = self.on(factor)
        if slow <= budget:
            return "yes"
        if fast > budget:
            return "no"
        return f"only at x{budget / self.here:.1f} or less"


def _number(value: float) -> str:
    if value < 0.1:
        return f"{value:.3f}"
    if value < 10:
        return f"{value:.2f}"
    if value < 100:
        return f"{value:.1f}"
    return f"{value:,.0f}"


def _value(value: float, unit: str) -> str:
    return f"{_number(value)} {unit}"


def _span(fast: float, slow: float, unit: str) -> str:
    if fast == slow:
        return f"{_value(fast, unit)} (not scaled)"
    return f"{_number(fast)}-{_number(slow)} {unit}"


def _dig(data: Any, path: Sequence[str]) -> float | None:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return float(data) if isinstance(data, int | float) and not isinstance(data, bool) else None


def rows(results: Path = RESULTS) -> list[Row]:
    """The figures the results directory holds now; a figure whose file or key is missing is left out."""
    loaded: dict[str, Any] = {}
    found = []
    for figure in FIGURES:
        if figure.file not in loaded:
            path = results / f"{figure.file}.json"
            loaded[figure.file] = json.loads(path.read_text()) if path.exists() else None
        here = _dig(loaded[figure.file], figure.path)
        if here is None:
            continue
        count = _dig(loaded[figure.file], figure.count_path) if figure.count_path else None
        label = figure.label.replace("{count}", f"{count:,.0f}" if count is not None else "?")
        found.append(Row(figure, here, label))
    return found


def _summary(found: Sequence[Row]) -> list[str]:
    def listed(board: Factor, fit: bool, camera: bool) -> str:
        picked = []
        for r in found:
            budget = r.figure.budget
            if budget is None or (budget == FRAME_MS) != camera or (r.fits(board) == "yes") != fit:
                continue
            if fit or not r.figure.scaled:
                picked.append(f"{r.figure.short} ({_value(r.here, r.figure.unit)})")
            else:
                need = budget / board.high
                picked.append(
                    f"{r.figure.short} ({_value(r.here, r.figure.unit)}, needs {_value(need, r.figure.unit)})"
                )
        return "; ".join(picked) or "none"

    return [
        f"**On a Pi Zero 2 W** (at x{ZERO_2_W.high:g}; in brackets the figure here, and what it would need to "
        f"be here to fit): fit: {listed(ZERO_2_W, True, camera=False)}. Do not fit: "
        f"{listed(ZERO_2_W, False, camera=False)}.",
        "",
        f"**A camera frame within 33 ms on a Pi 4** (at x{PI_4.high:g}): fit: {listed(PI_4, True, camera=True)}. "
        f"Do not fit: {listed(PI_4, False, camera=True)}.",
    ]


def render(found: Sequence[Row]) -> str:
    """The block README holds between its markers, the markers included."""
    lines = [START, "", *SOURCES, ""]
    lines.append("| " + " | ".join(HEADER) + " |")
    lines.append("|" + "---|" * len(HEADER))
    for row in found:
        f = row.figure
        cells = [
            row.label,
            _value(row.here, f.unit),
            _span(*row.on(PI_4), f.unit),
            _span(*row.on(ZERO_2_W), f.unit),
            f.budget_text,
            row.fits(PI_4),
            row.fits(ZERO_2_W),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *_summary(found), "", END]
    return "\n".join(lines)


def _split(readme: str) -> tuple[str, str, str]:
    start = readme.find(START)
    end = readme.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"README has no {START!r} ... {END!r} block to write the Pi table into")
    return readme[:start], readme[start : end + len(END)], readme[end + len(END) :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pi_table", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if README's table differs from the JSON's")
    parser.add_argument("--stdout", action="store_true", help="print the block, write nothing")
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    block = render(rows(args.results))
    if args.stdout:
        print(block)
        return 0
    before, old, after = _split(args.readme.read_text())
    if args.check:
        if old != block:
            print(
                f"{args.readme}: the Pi table is not what {args.results} gives now; "
                "run `python -m benchmarks.pi_table` to write it",
                file=sys.stderr,
            )
            return 1
        return 0
    args.readme.write_text(before + block + after)
    print(block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
