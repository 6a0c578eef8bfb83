"""The journal's head file made durable after each entry: fdatasync (today) against fsync (before).

`controller/journal/head.py` writes the chain's head into one of two fixed 512-byte slots after
each entry commits (after the lamps, before the shoe's acknowledgement) and makes it durable. The
file's blocks and size never change after its creation, so fdatasync is enough; fsync also writes
the inode's times, which on a file system with a journal (ext4 on a Raspberry Pi's SD card) commits
that journal on every entry.

Measured on a journaled ext4 made for the run on a loop device of this disk (root and mkfs.ext4
needed: this machine's own root file system has no journal, so there the two calls cost the same;
without them the run is made in a temporary directory of the current file system and says so):
the real `HeadFile.write` with its sync (after) and the same write followed by os.fsync (before),
in turns, one entry every INTERVAL_S (a slower pace than the file system's time stamps' grain, as
a table's entries are), the wall time of the sync and the journal's commits a call (jbd2's count).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.bench_daemon import _percentile
from controller.journal.head import HeadFile, HeadMark

CALLS = int(os.environ.get("BENCH_HEAD_CALLS", "300"))  # each arm
INTERVAL_S = 0.02


@contextlib.contextmanager
def _journaled_ext4() -> Iterator[tuple[Path, Path | None, str]]:
    """A directory on a fresh journaled ext4 (its jbd2 info file), or a temporary directory of
    this file system when one cannot be made here (not root, no mkfs.ext4)."""
    with tempfile.TemporaryDirectory(prefix="tablectl-head-sync-") as tmp:
        mkfs = shutil.which("mkfs.ext4") or shutil.which("mkfs.ext4", path="/sbin:/usr/sbin")
        if os.geteuid() != 0 or mkfs is None:
            yield Path(tmp), None, "a temporary directory of this file system (not root, or no mkfs.ext4)"
            return
        image, mount = Path(tmp) / "ext4.img", Path(tmp) / "mnt"
        mount.mkdir()
        with open(image, "wb") as f:
            f.truncate(128 * 1024 * 1024)
        subprocess.run([mkfs, "-q", "-F", str(image)], check=True)
        subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
        try:
            source = subprocess.run(
                ["findmnt", "-n", "-o", "SOURCE", str(mount)], check=True, capture_output=True, text=True
            ).stdout.strip()
            info = next(Path("/proc/fs/jbd2").glob(f"{Path(source).name}-*/info"), None)
            yield mount, info, f"a fresh 128 MB ext4 with its journal (mkfs.ext4's defaults) on {source}, a file here"
        finally:
            subprocess.run(["umount", str(mount)], check=True)


def _commits(info: Path | None) -> int:
    if info is None:
        return 0
    return int(info.read_text().split()[0])  # "N transactions (M requested), ..."


def run() -> dict[str, Any]:
    with _journaled_ext4() as (where, info, said):
        head = HeadFile(where / "journal.head")
        head.write(HeadMark(0, "0" * 64, "2026-12-04T00:00:00.000Z"))  # created: both slots, fsync'd
        fd = head._open()
        times: dict[str, list[float]] = {"after": [], "before": []}
        commits = {"after": 0, "before": 0}
        for i in range(1, 2 * CALLS + 1):
            pair = (i - 1) // 2  # in pairs, after then before, then before then after: each first half the time
            arm = "after" if ((i - 1) % 2 == 0) == (pair % 2 == 0) else "before"
            mark = HeadMark(i, f"{i:064x}", "2026-12-04T00:00:00.000Z")
            time.sleep(INTERVAL_S)
            counted = _commits(info)
            started = time.perf_counter()
            if arm == "after":
                head.write(mark)
            else:
                head.write(mark, fsync=False)
                os.fsync(fd)
            times[arm].append(time.perf_counter() - started)
            commits[arm] += _commits(info) - counted
        head.close()

    def summary(values: list[float], arm: str) -> dict[str, float]:
        return {
            "p50_ms": round(statistics.median(values) * 1e3, 3),
            "p90_ms": round(_percentile(values, 0.9) * 1e3, 3),
            "p99_ms": round(_percentile(values, 0.99) * 1e3, 3),
            "journal_commits_a_call": round(commits[arm] / len(values), 2) if info is not None else -1,
        }

    after, before = summary(times["after"], "after"), summary(times["before"], "before")
    return {
        "name": "head_sync",
        "what": (
            "the head file's write and sync after each entry, wall time (lower is better): HeadFile.write "
            f"with its fdatasync against the same write with fsync, {CALLS} calls each in turns, one every "
            f"{INTERVAL_S * 1e3:.0f} ms, on {said}"
        ),
        "reference": "the same write made durable with fsync, as before (the inode's times too)",
        "ratio": round(after["p50_ms"] / before["p50_ms"], 3) if before["p50_ms"] else None,
        "results": {"fdatasync": after, "fsync": before, "file_system": said, "calls_each": CALLS},
    }
