"""bench_day_memory's figure of the daemon's memory counted once (`_resident_once`): a page two
processes share is one page of RAM, counted once; a page one of them has written since the fork is
two. Checked on a process and a child forked from it, sharing a buffer of known size."""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.bench_day_memory import _resident_once

MB = 2**20
BUFFER = 32 * MB


def _pss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no Pss in smaps_rollup")


class Child:
    """A child forked from this process, holding `buffer` as its parent made it, writing the part of
    it it is told to, and saying when it has."""

    def __init__(self, buffer: mmap.mmap) -> None:
        self._orders_r, self._orders_w = os.pipe()
        self._done_r, self._done_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover (the child: never returns into pytest)
            code = 1
            try:
                os.write(self._done_w, b"r")
                while (order := os.read(self._orders_r, 16)) not in (b"", b"end"):
                    start, end = map(int, order.split(b":"))
                    for at in range(start, end, mmap.PAGESIZE):
                        buffer[at] = 2
                    os.write(self._done_w, b"w")
                code = 0
            finally:
                os._exit(code)
        assert os.read(self._done_r, 1) == b"r"

    def write(self, start: int, end: int) -> None:
        os.write(self._orders_w, f"{start}:{end}".encode())
        assert os.read(self._done_r, 1) == b"w"

    def end(self) -> None:
        os.write(self._orders_w, b"end")
        os.waitpid(self.pid, 0)


@pytest.fixture
def family() -> Iterator[tuple[dict[str, int], mmap.mmap, Child]]:
    # Anonymous and private, as a process's heap: copied when written after a fork.
    buffer = mmap.mmap(-1, BUFFER, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buffer.write(b"\1" * BUFFER)  # every page of it in RAM
    child = Child(buffer)
    try:
        yield {"parent": os.getpid(), "child": child.pid}, buffer, child
    finally:
        child.end()
        buffer.close()


def _once(pids: dict[str, int]) -> dict[str, float]:
    found = _resident_once(pids, pss_mb=0.0)
    if not found["once_measure"].startswith("pagemap"):
        why = "the page frame numbers read as 0 here (not root): nothing to count once"
        if os.environ.get("CI") == "true":  # CI runs as root: a figure it cannot check is a failure there
            pytest.fail(why)
        pytest.skip(why)
    return found


def test_a_buffer_a_fork_shares_is_counted_once_until_written(family: tuple[dict[str, int], mmap.mmap, Child]) -> None:
    pids, _, child = family
    shared = _once(pids)
    rss_summed = shared["parent_frames_mb"] + shared["child_frames_mb"]
    # The buffer is in both processes' RSS, in RAM once.
    assert shared["shared_by_both_mb"] >= BUFFER / MB
    assert shared["once_mb"] <= rss_summed - BUFFER / MB
    assert shared["once_anon_mb"] >= BUFFER / MB

    child.write(0, BUFFER // 2)  # the child's own copy of half of it: those pages twice now
    written = _once(pids)
    assert written["once_mb"] - shared["once_mb"] >= BUFFER / 2 / MB
    assert shared["shared_by_both_mb"] - written["shared_by_both_mb"] >= BUFFER / 2 / MB
    # The other half still once.
    assert written["once_mb"] <= written["parent_frames_mb"] + written["child_frames_mb"] - BUFFER / 2 / MB


def test_the_frames_give_the_kernels_pss(family: tuple[dict[str, int], mmap.mmap, Child]) -> None:
    """The frames read are the kernel's: the PSS they give with /proc/kpagecount's map counts is
    smaps_rollup's (read before and after: this process, the parent, allocates as it counts)."""
    pids, _, child = family
    child.write(0, BUFFER // 4)
    before = sum(_pss_mb(pid) for pid in pids.values())
    found = _once(pids)
    after = sum(_pss_mb(pid) for pid in pids.values())
    assert min(before, after) - 0.2 <= found["frames_pss_mb"] <= max(before, after) + 0.2
