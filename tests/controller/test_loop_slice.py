"""The table's loop thread runs with a short time slice of the kernel's fair scheduler, so that a
card's wake-up preempts the task on its core (controller/app/sched.py); nothing else of the table
gets it, it needs no privilege, and a kernel that keeps none or a refusal leaves the table as it
was, saying so once. Each slice is read back from the kernel (/proc/PID/task/TID/sched)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from controller.app import sched
from controller.app.sched import LOOP_SLICE_NS, shorten_loop_slice


def slice_of(pid: int, tid: int | None = None) -> int:
    """The slice the kernel keeps for thread `tid` of process `pid` (its main thread by default)."""
    for line in Path(f"/proc/{pid}/task/{tid or pid}/sched").read_text().splitlines():
        if line.startswith("se.slice"):
            return int(line.split(":")[1])
    raise AssertionError(f"no se.slice in /proc/{pid}/task/{tid or pid}/sched")


def in_a_thread(job: object) -> object:
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(job()))  # type: ignore[operator]
    thread.start()
    thread.join()
    return out[0]


def kernel_keeps_slices() -> bool:
    """Whether this kernel keeps a thread's own slice (Linux 6.12 or later), tried on a thread of
    this test's own that ends at once."""
    return bool(in_a_thread(lambda: shorten_loop_slice()[0]))


def default_slice() -> int:
    """The kernel's default slice, as a fresh thread of this test's has it."""
    return int(in_a_thread(lambda: slice_of(os.getpid(), threading.get_native_id())))  # type: ignore[arg-type]


def test_a_thread_without_privilege_shortens_its_own_slice(tmp_path: Path) -> None:
    """As the service runs it (user tablectl, no capability): a forked child of this test, made
    nobody when the test runs as root, shortens its slice and reads it back; a thread it makes
    after has the default."""
    keeps = kernel_keeps_slices()
    default = default_slice()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest from here on, only os._exit
        try:
            os.close(read)
            if os.getuid() == 0:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)  # every capability dropped with root
            done, said = shorten_loop_slice()
            mine = slice_of(os.getpid())
            theirs = in_a_thread(lambda: slice_of(os.getpid(), threading.get_native_id()))
            os.write(write, f"{os.geteuid()}|{done}|{mine}|{theirs}|{said}".encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        uid, done, mine, theirs, said = answer.read().decode().split("|", 4)
    os.waitpid(pid, 0)
    assert int(uid) != 0
    if keeps:
        assert (done, int(mine), int(theirs)) == ("True", LOOP_SLICE_NS, default), said
    else:
        assert (done, int(mine)) == ("False", default), said


def test_a_refused_slice_leaves_the_thread_as_it_was_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    default = default_slice()

    def refused(which: int, *args: object) -> None:
        if which == 0:
            raise OSError(errno.EPERM, os.strerror(errno.EPERM))
        real(which, *args)

    real = sched._syscall
    monkeypatch.setattr(sched, "_syscall", refused)
    done, said = in_a_thread(shorten_loop_slice)  # type: ignore[misc]
    assert not done
    assert said == (
        "the card path (the table's loop) keeps the kernel's default time slice: a shorter one was refused "
        "(Operation not permitted)"
    )
    assert in_a_thread(lambda: slice_of(os.getpid(), threading.get_native_id())) == default


def test_a_kernel_that_keeps_no_slice_of_a_threads_own_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before Linux 6.12 sched_setattr takes the slice and changes nothing; sched_getattr reads 0."""
    real = sched.get_attr

    def before_6_12(tid: int = 0) -> sched.SchedAttr:
        attr = real(tid)
        attr.sched_runtime = 0
        return attr

    monkeypatch.setattr(sched, "get_attr", before_6_12)
    monkeypatch.setattr(sched, "set_slice", lambda ns, tid=0: None)
    monkeypatch.setattr(sched.platform, "release", lambda: "6.6.51-v8+")
    done, said = shorten_loop_slice()
    assert not done
    assert "this kernel (6.6.51-v8+) keeps no slice of a thread's own (Linux 6.12 or later does" in said
