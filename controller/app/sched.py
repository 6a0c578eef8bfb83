"""A thread's own time slice in the kernel's fair scheduler: tried for the table's loop thread
(the card path) and NOT used by the table (measured, not kept: controller/security/checker.py's
docstring has the figures); benchmarks/bench_card_path.py alternates it to measure it again.

The kernel's fair scheduler (EEVDF, Linux 6.6 and later) lets the task on a core run out its slice
(about 1.4 ms on a 2-core machine, the base slice scaled by the number of cores) before a woken
task takes it, whatever their nice values: a card that wakes the loop while the software check's
process (nice +10, controller/security/checker.py) runs on that core may wait for it (at the
check's let-go, p99 +1.3 to +1.7 ms over a table without a check in the quiet sitting at d9ade90).
Since Linux 6.12 a thread may ask for its own slice (`sched_setattr(2)`, SCHED_OTHER with
`sched_runtime` in ns, 0.1 to 100 ms), and a woken task whose slice is shorter than the running
one's preempts it at once when it is eligible (the scheduler's PREEMPT_SHORT). Its share of the
CPU does not change (that is its weight, its nice value); its runs are cut more finely, by
whatever else is eligible on its core as well.

No privilege is needed (a thread may set its own slice, as it may raise its own nice value;
systemd's `RestrictRealtime=yes` filters the real-time policies of `sched_setscheduler` only, and
`SystemCallFilter=@system-service` allows `sched_setattr`: systemd/tablectl.service). Only the
thread that asks gets it, and `SCHED_FLAG_RESET_ON_FORK` keeps it so: every thread and process made
from it afterwards (asyncio's worker threads, the signer's, the software check's process started
from one) starts with the kernel's default slice. On a kernel before 6.12 the call succeeds and
changes nothing (its `sched_getattr` then reads 0): `shorten_loop_slice` reads the slice back and
says in one sentence what came of it (the slice, a kernel that keeps none, a refusal).

Python has no wrapper for sched_setattr / sched_getattr: libc's `syscall` through ctypes, the
struct as include/uapi/linux/sched/types.h has it (SCHED_ATTR_SIZE_VER1, 56 bytes)."""

from __future__ import annotations

import ctypes
import platform

from controller.security.checker import linux_syscall

#: The slice tried for the loop thread: the kernel's shortest (it clamps a request to 0.1-100 ms).
LOOP_SLICE_NS = 100_000

SCHED_OTHER = 0
SCHED_FLAG_RESET_ON_FORK = 0x01

#: sched_setattr / sched_getattr's syscall numbers: x86-64, arm64 (a Pi on a 64-bit OS),
#: 32-bit arm (armhf), i386.
_SYSCALLS = {
    "x86_64": (314, 315),
    "aarch64": (274, 275),
    "arm64": (274, 275),
    "armv7l": (380, 381),
    "armv6l": (380, 381),
    "i686": (351, 352),
}


class SchedAttr(ctypes.Structure):
    """struct sched_attr (include/uapi/linux/sched/types.h)."""

    _fields_ = [
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
        ("sched_util_min", ctypes.c_uint32),
        ("sched_util_max", ctypes.c_uint32),
    ]


def _syscall(which: int, *args: object) -> None:
    """sched_setattr (which 0) or sched_getattr (1); OSError on a refusal or an unknown machine."""
    linux_syscall(_SYSCALLS, "sched_setattr", which, *args)


def get_attr(tid: int = 0) -> SchedAttr:
    """Thread `tid`'s scheduling attributes (0: the calling thread). OSError when refused."""
    attr = SchedAttr()
    _syscall(1, ctypes.c_int(tid), ctypes.byref(attr), ctypes.c_uint(ctypes.sizeof(attr)), ctypes.c_uint(0))
    return attr


def slice_ns(tid: int = 0) -> int:
    """Thread `tid`'s time slice in ns as the kernel keeps it (0: the calling thread), the default
    one included; 0 on a kernel that keeps no slice of a thread's own (before 6.12)."""
    return int(get_attr(tid).sched_runtime)


def set_slice(ns: int, tid: int = 0) -> None:
    """Give thread `tid` (0: the calling thread) a time slice of `ns` (0: the kernel's default), its
    nice value kept, the threads and processes it makes afterwards with the default. OSError when
    refused; ValueError for a thread not in the default policy (SCHED_OTHER)."""
    now = get_attr(tid)
    if now.sched_policy != SCHED_OTHER:
        raise ValueError(f"the thread runs in scheduling policy {now.sched_policy}, not the default (SCHED_OTHER)")
    attr = SchedAttr(
        size=ctypes.sizeof(SchedAttr),
        sched_policy=SCHED_OTHER,
        sched_flags=SCHED_FLAG_RESET_ON_FORK,
        sched_nice=now.sched_nice,
        sched_runtime=ns,
    )
    _syscall(0, ctypes.c_int(tid), ctypes.byref(attr), ctypes.c_uint(0))


def shorten_loop_slice(ns: int = LOOP_SLICE_NS) -> tuple[bool, str]:
    """Called on the table's loop thread: give it the slice `ns`. Whether it has it, read back from
    the kernel, and what came of it in one sentence for the log (why the loop keeps the default: a
    kernel before 6.12, a refusal). The table runs on either way."""
    who = "the card path (the table's loop)"
    try:
        set_slice(ns)
        kept = slice_ns()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return False, f"{who} keeps the kernel's default time slice: a shorter one was refused ({reason})"
    if kept != ns:
        return False, (
            f"{who} keeps the kernel's default time slice: this kernel ({platform.release()}) keeps no "
            f"slice of a thread's own (Linux 6.12 or later does; it read {kept} ns)"
        )
    return True, f"{who} runs with a {ns / 1e3:g} us time slice: a card's wake-up preempts the task on its core"
