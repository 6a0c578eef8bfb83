"""The software check in a process of its own, below the table's priority.

The check (controller/security/authentication.py) hashes every file of the installed release and
compiles the sources of its bytecode to compare. Run on a thread of the table's process it took
the interpreter's lock and a core from the card path: a card dealt during a check waited p50
+0.8 ms, p99 +3.3 ms longer (benchmarks/bench_card_path.py, before this module). So the table's
periodic and on-demand checks run here instead: `python -m controller.security.checker`, a child
process of the table's at nice +NICE (relative to the table's own; the kernel gives a shared core
to the card path first, and the child shares no interpreter lock with it), which reads its
request on stdin (the release key, the seed, the folder to check: the one the table's code is
imported from) and writes the report as JSON on stdout, with its pid, nice value and CPU time.
The table's loop journals it as before (controller/app/daemon.py).

A lower priority is not enough while a round is dealt: a card journaled on a disk waits for its
fsync, and the check's process then takes the core; when the fsync ends the table's loop waits to
get it back, up to the kernel's time slice (benchmarks/bench_card_path.py, before this: a card
dealt while a check ran waited p50 +3.0 ms, p99 +33 ms on the disk). So no check runs while a
round is being dealt: the table HOLDS its checker when a round opens and LETS IT GO after the
round's end (RoundHold below, attached by controller/app/daemon.py): a run under way is stopped
(SIGSTOP to its process group) and continued (SIGCONT) after, and a run asked meanwhile (on demand,
or the periodic one) starts only then. Its report's `process["held_s"]` says how long it waited. A
dealer's paying time between rounds is seconds; a check needs about a second of CPU on a Pi 4. In
that time the only cards are dead ones (a burn, a card dropped): each, and any other entry of the
card path, holds the check from before its commit until CHECK_AFTER_S after it (RoundHold.ahead).

`SCHED_IDLE` for the child was tried and measured (benchmarks/bench_card_path.py, 600 rounds on a
quiet machine, 2026-12-03) and not kept. The kernel's fair scheduler lets the task on a core run out
its slice before a woken one preempts it, whatever their nice values, and a SCHED_IDLE task is
preempted at once instead; so a dead card dealt as the check's process is continued should wait
less. On the tmpfs it did (its p99 against a table with no check: +0.49 ms, -1.22 to +1.31, against
+1.09, +0.41 to +2.22, with nice alone in the run before, at 007b172). On the disk it waited more:
p50 +0.33 ms (+0.24 to +0.42) while a check ran, at the let-go and 150 ms into the check alike,
against +0.02 and +0.12 with nice alone (that run); and the let-go's p99 +1.61 ms (+0.92 to +3.03)
against +0.77 (-0.80 to +1.95). A core that runs only SCHED_IDLE tasks counts as idle where the
kernel places a waking thread, so the table's thread woken from the journal's fsync is likely put on
the core the check holds, to preempt it there, rather than on the core that is free. A table's
journal is on a disk, so nice it stays.

Three more leads for the let-go's wait were measured with benchmarks/bench_card_path.py on
2026-12-03 and not kept: the table's loop thread with a 100 us time slice, the check's process kept
on the last core, and the check's process in a session (autogroup) of its own. Their figures are
in benchmarks/HISTORY.md#card_path; their code was removed after 550b5d6. The check's process runs
on any core, in the table's session, at nice +NICE.

Its disk reads go last too: the child runs in the IDLE I/O class (`ioprio_set(IOPRIO_CLASS_IDLE)`,
set by the table on the child's pid as it sets its nice value, right after it is started, before
its interpreter has read its modules): a block device's scheduler (mq-deadline, bfq) serves its
reads only when no one else's wait, so the journal's commit and its fsync do not queue behind
them. Set by the syscall (ctypes, libc's `syscall`) rather than by starting the child under
`ionice -c3`: the child stays this Python (no util-linux binary needed on the table's PATH, the
same command tests and the bench start), and a refusal is seen (logged, the check runs anyway: the
class is a matter of speed, not of the check's result). The report says the class the child ran in
(`process["io_class"]`, read by the child of itself: "idle").

A check whose process gives no report is itself a failed check, in plain words (a report with
`ok` False and `process["failed"]` saying how it ended), never silence: a process that cannot be
started, exits or is killed (a signal) without a report, answers something that is not one, or
does not answer within CHECK_TIMEOUT_S of the time it was let run (then it is killed, with
whatever it started; the time it was held does not count). A check the table's own stop ends
(`Checker.stop`) is no result: CheckStopped, and nothing is journaled.

    checker = Checker()
    report = checker.run(Path("/etc/tablectl/release-key.pub"), seed=None)   # blocks; any thread
    checker.hold(); checker.let_go()                                         # a round dealt between
    checker.stop()                                                           # ends the runs
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import logging
import os
import platform
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from controller.security import authentication
from controller.security.authentication import Report, authenticate

if TYPE_CHECKING:
    import asyncio


class Table(Protocol):
    """What RoundHold reads of the table it listens to (controller.table's Table; security sits
    below the table, so it names only what it uses)."""

    listeners: list[Any]
    ahead: list[Any]

    @property
    def now(self) -> Any: ...


log = logging.getLogger("tablectl.checker")

#: The child's nice value above the table's (the API's process runs at +5: controller/api/channel.py).
NICE = 10
#: How long a check may take before its process is ended and the check fails. Generous: a check
#: of a release costs about a second of CPU on a Pi 4, and a busy table's cores go to the card
#: path first; the bytecode comparison alone may take up to 600 s (authentication.py).
CHECK_TIMEOUT_S = 900.0
#: While a run is held, how often its thread looks whether its deadline (which the holding moves
#: on) has come: a backstop only, the deadline is computed from the times held and let go.
HELD_LOOK_S = 5.0
#: How the table starts the child: this Python, the same code, without the working directory on
#: sys.path (-P: a `controller` folder where the table was started must not be what runs).
COMMAND = (sys.executable, "-P", "-m", "controller.security.checker")

#: Linux's I/O priority classes (include/uapi/linux/ioprio.h): a class in the value's top bits,
#: a level (0-7) in its low ones; IDLE has no level.
IOPRIO_CLASS_SHIFT = 13
IOPRIO_CLASSES = {0: "none", 1: "realtime", 2: "best-effort", 3: "idle"}
IOPRIO_CLASS_IDLE = 3
IOPRIO_CLASS_BE = 2
IOPRIO_WHO_PROCESS = 1
#: ioprio_set / ioprio_get's syscall numbers (no libc wrapper): x86-64, arm64 (a Pi 4/5 on a
#: 64-bit OS), 32-bit arm (armhf), i386.
_IOPRIO_SYSCALLS = {
    "x86_64": (251, 252),
    "aarch64": (30, 31),
    "arm64": (30, 31),
    "armv7l": (314, 315),
    "armv6l": (314, 315),
    "i686": (289, 290),
}


def linux_syscall(numbers: dict[str, tuple[int, int]], name: str, which: int, *args: Any) -> int:
    """Linux system call `numbers[machine][which]` (one with no libc wrapper) with ctypes `args`:
    its result, OSError on a refusal or on a machine `numbers` does not know (`name` says which)."""
    known = numbers.get(platform.machine())
    if known is None:
        raise OSError(errno.ENOSYS, f"no {name} syscall number known for {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    result = int(libc.syscall(ctypes.c_long(known[which]), *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _ioprio_syscall(which: int, *args: int) -> int:
    """ioprio_set (which 0) or ioprio_get (1); OSError on a refusal or an unknown machine."""
    return linux_syscall(_IOPRIO_SYSCALLS, "ioprio", which, *(ctypes.c_int(a) for a in args))


def set_io_class(pid: int, io_class: int = IOPRIO_CLASS_IDLE, level: int = 0) -> None:
    """Put process `pid` (0: this thread) in I/O class `io_class` (IDLE by default: its disk reads
    served only when no other process waits for the disk). OSError when refused."""
    _ioprio_syscall(0, IOPRIO_WHO_PROCESS, pid, (io_class << IOPRIO_CLASS_SHIFT) | level)


def io_class(pid: int = 0) -> str:
    """The I/O class process `pid` (0: this thread) runs in: "idle", "best-effort", "realtime", or
    "none" (the default: best-effort at a level from its nice value). OSError when it cannot be read."""
    return IOPRIO_CLASSES.get(_ioprio_syscall(1, IOPRIO_WHO_PROCESS, pid) >> IOPRIO_CLASS_SHIFT, "?")


class CheckStopped(Exception):
    """The table stopped while its check ran: no result, nothing to journal."""


class Checker:
    """Runs the software check in a child process, one process per run (several may run at once:
    the periodic check and one asked on demand); `hold()` stops them and keeps new ones from
    starting until `let_go()`; `stop()` ends every run under way."""

    def __init__(
        self,
        timeout: float = CHECK_TIMEOUT_S,
        command: tuple[str, ...] = COMMAND,
        started: Callable[[int], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.command = command
        self.started = started  # told each run's pid (its process group's too) once it runs
        self.io_class = IOPRIO_CLASS_IDLE  # the I/O class each run's process is put in
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._stopped = False
        self._free = threading.Event()  # set while not held
        self._free.set()
        self._held_since: float | None = None  # time.monotonic() of the hold under way
        self._held_total = 0.0  # seconds held before it, since this checker was made

    def hold(self) -> None:
        """A round is being dealt: every run under way stops (SIGSTOP to its process group) and no
        run starts until `let_go()`. Cheap: the table's loop calls it as the round opens."""
        with self._lock:
            if self._held_since is not None:
                return
            self._held_since = time.monotonic()
            self._free.clear()
            for proc in self._running:
                _signal(proc, signal.SIGSTOP)

    def let_go(self) -> None:
        """The round has ended: the runs held go on (SIGCONT), the runs asked meanwhile start."""
        with self._lock:
            if self._held_since is None:
                return
            self._held_total += time.monotonic() - self._held_since
            self._held_since = None
            for proc in self._running:
                _signal(proc, signal.SIGCONT)
            self._free.set()

    @property
    def held(self) -> bool:
        return self._held_since is not None

    def _held_so_far(self) -> float:
        """Seconds held since this checker was made (the hold under way too); under the lock."""
        return self._held_total + (time.monotonic() - self._held_since if self._held_since is not None else 0.0)

    def run(self, release_key: Path, seed: bytes | None = None, root: Path | None = None) -> Report:
        """The check of the release at `root` (default: where this code is imported from), as the
        child reported it, or a failed report saying why the child gave none. Blocks: call it from
        a thread, never the table's loop."""
        root = root or authentication.installed_root()
        hex_seed = seed.hex() if seed is not None else None
        request = json.dumps({"release_key": str(release_key), "seed": hex_seed, "root": str(root)})
        with self._lock:
            held_before = self._held_so_far()
        if not self._free.is_set():
            log.info("the software check waits for the round being dealt to end")
        while True:  # not started while a round is dealt: it starts once the round has ended
            self._free.wait()
            with self._lock:
                if self._stopped:
                    raise CheckStopped("the table is stopping")
                if self._held_since is not None:
                    continue
                try:
                    proc = subprocess.Popen(
                        self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True, cwd="/", process_group=0,
                    )  # fmt: skip
                except OSError as exc:
                    return _failed(root, seed, None, f"could not be started ({exc.strerror or exc})")
                self._running.add(proc)
                break
        # Below the table's own priority from its first instructions on (a process may always lower
        # its own or its children's; what the child starts inherits it).
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
        try:  # and its disk reads after everyone else's (the journal's commits and fsyncs first)
            set_io_class(proc.pid, self.io_class)
        except OSError as exc:
            log.warning("the software check's process (pid %d) runs in the default I/O class: %s", proc.pid, exc)
        if self.started is not None:
            self.started(proc.pid)
        try:
            began = time.monotonic()
            with self._lock:
                held_at_start = self._held_so_far()
            given: str | None = request
            while True:
                with self._lock:
                    ran = time.monotonic() - began - (self._held_so_far() - held_at_start)
                    look = HELD_LOOK_S if self._held_since is not None else self.timeout - ran
                if ran >= self.timeout:
                    _end(proc)
                    proc.communicate()
                    return _failed(root, seed, proc.pid, f"did not answer within {self.timeout:g} s and was ended")
                try:
                    out, err = proc.communicate(given, timeout=max(look, 0.0))
                    break
                except subprocess.TimeoutExpired:
                    given = None  # sent: the next wait goes on from where this one was
        finally:
            with self._lock:
                self._running.discard(proc)
                stopped = self._stopped
        if stopped and proc.returncode != 0:
            raise CheckStopped("the table stopped while its software check ran")
        if proc.returncode < 0:
            name = signal.Signals(-proc.returncode).name if -proc.returncode in signal.valid_signals() else "?"
            return _failed(root, seed, proc.pid, f"was killed by signal {-proc.returncode} ({name})", err)
        if proc.returncode != 0:
            return _failed(root, seed, proc.pid, f"ended with exit status {proc.returncode}", err)
        try:
            report = Report.from_json(json.loads(out))
        except ValueError as exc:
            return _failed(root, seed, proc.pid, f"answered something that is not a report ({exc})", err)
        if report.root != str(root):
            return _failed(root, seed, proc.pid, f"checked {report.root}, not {root}")
        with self._lock:
            held = self._held_so_far() - held_before
        if report.process is not None:
            report.process["held_s"] = round(held, 3)  # waited to start, and stopped, while rounds were dealt
        return report

    def stop(self) -> None:
        """End every run under way (the table is stopping); later runs raise CheckStopped."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
            self._free.set()  # the runs waiting for a round's end: none starts
        for proc in running:
            _end(proc)


#: The entries of the card path: a card, a dealer's button or decision, a fault (a shoe's among
#: them), a round opened, the shoe's own events. Told AHEAD of their commit (Table.ahead), they
#: hold the check between rounds too; a scene, a chain head or a check's own report do not.
CARD_PATH_KINDS = frozenset({"card", "button", "decision", "fault", "round-open", "shoe-event", "shoe-reshuffled"})

#: Between rounds, such entries hold the check at most this long on end, and then not for as long
#: again: a shoe or a client that sends them without end (a flood of dead cards or faults) cannot
#: keep the periodic and on-demand checks from running; they run at least half the time, beside it.
BETWEEN_ROUNDS_HOLD_S = 1.0


class RoundHold:
    """A table listener: holds `checker` while a round is being dealt (from its opening entry on)
    and lets it go `after` seconds after the round has ended (after the round's end is signed:
    controller/app/daemon.py's SIGN_AFTER_S), counted from the end of the job that ended it.
    A table restarted mid-round holds it from the start.

    Between rounds too, a card-path entry (CARD_PATH_KINDS: a dead card, a burnt one, a button)
    holds it, BEFORE the entry is journaled (the table tells it ahead, Table.ahead), and lets it
    go `after` seconds after the job that journaled it. Held only from the entry's own commit on,
    such a card waited for its fsync beside the running check: with both cores busy this disk's
    fdatasync took a flat 1.9 ms instead of 0.26 (p99 up to 3.6), whatever the check's priority,
    and the dead card dealt at the let-go waited p99 +2.3 ms (tmpfs) / +20.9 ms (disk) more than
    with no check (benchmarks/HISTORY.md#card_path, fe0beb7). With the check stopped just before
    each fsync, the fsync's p99 was that of an idle machine (0.6-0.8 ms). Such holds last at most
    BETWEEN_ROUNDS_HOLD_S on end, then none for as long: a flood of them cannot starve the check."""

    def __init__(
        self,
        checker: Checker,
        loop: asyncio.AbstractEventLoop | None,
        after: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.checker = checker
        self.loop = loop
        self.after = after
        self.clock = clock
        self._due: object | None = None  # the round's end whose let-go is due (a stale timer does nothing)
        self._held_from: float | None = None  # when the between-rounds hold under way began
        self._free_until = float("-inf")  # no between-rounds hold before then (one was cut short)

    def attach(self, table: Table) -> RoundHold:
        table.listeners.append(self)
        table.ahead.append(self.ahead)
        self.update(table, None, ())
        return self

    def ahead(self, kind: str) -> None:
        """An entry of `kind` is about to be journaled: a card-path one holds the check now (a
        round's holds it on; between rounds it is let go `after` seconds after this job)."""
        if kind not in CARD_PATH_KINDS or (self.checker.held and self._due is None):
            return  # not the card path's, or a round's (held till its end already)
        now = self.clock()
        if now < self._free_until:
            return  # a flood: the check runs beside these entries for now
        if self._held_from is None:
            self._held_from = now
        elif now - self._held_from >= BETWEEN_ROUNDS_HOLD_S:
            self._held_from, self._free_until = None, now + BETWEEN_ROUNDS_HOLD_S
            return  # held on end too long: let go `after` the last entry held, as it would be
        self.checker.hold()
        if self.loop is None:
            self._due = None  # the update that follows the entry lets it go (or keeps it, in a round)
        else:
            due = self._due = object()
            self.loop.call_soon(self.loop.call_later, self.after, self._let_go, due)

    def update(self, table: Table, entry: Any, effects: tuple[Any, ...]) -> None:
        record = table.now.current
        if record is not None and record.status == "open":
            self._due = self._held_from = None
            self.checker.hold()
        elif self.checker.held and self._due is None:
            due = self._due = object()
            if self.loop is None:
                self._let_go(due)
            else:
                self.loop.call_soon(self.loop.call_later, self.after, self._let_go, due)

    def _let_go(self, due: object) -> None:
        if due is self._due:
            self._due = self._held_from = None
            self.checker.let_go()

    def redrive(self, table: Table) -> None:
        return


def _signal(proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    """`sig` to the child's own process group (the check's process and what it started)."""
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, sig)


def _end(proc: subprocess.Popen[str]) -> None:
    """SIGKILL to the child's own process group: the child and whatever it started."""
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


def _failed(root: Path, seed: bytes | None, pid: int | None, how: str, stderr: str = "") -> Report:
    """A check whose process gave no report: failed, saying which process and how it ended."""
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    process = f"the software check's process (pid {pid})" if pid is not None else "the software check's process"
    said = f"{process} {how} before it answered: nothing was authenticated" + (f" ({last})" if last else "")
    return Report(ok=False, root=str(root), seed=seed.hex() if seed is not None else None, problem=said,
                  process={"pid": pid, "failed": how})  # fmt: skip


def main() -> int:
    """The child: the request from stdin, the report (with this process's pid, nice value, I/O
    class and CPU seconds, its own and its children's) as JSON on stdout."""
    request = json.load(sys.stdin)
    seed = bytes.fromhex(request["seed"]) if request.get("seed") is not None else None
    report = authenticate(Path(request["release_key"]), seed, Path(request["root"]))
    cpu = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    try:
        ran_in = io_class(0)
    except OSError as exc:
        ran_in = f"unknown ({exc.strerror or exc})"
    report.process = {
        "pid": os.getpid(),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "io_class": ran_in,
        "cpus": sorted(os.sched_getaffinity(0)),
        "cpu_s": round(cpu, 3),
    }
    json.dump(report.to_json(), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
