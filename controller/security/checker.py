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

A check whose process gives no report is itself a failed check, in plain words (a report with
`ok` False and `process["failed"]` saying how it ended), never silence: a process that cannot be
started, exits or is killed (a signal) without a report, answers something that is not one, or
does not answer within CHECK_TIMEOUT_S (then it is killed, with whatever it started). A check the
table's own stop ends (`Checker.stop`) is no result: CheckStopped, and nothing is journaled.

    checker = Checker()
    report = checker.run(Path("/etc/tablectl/release-key.pub"), seed=None)   # blocks; any thread
    checker.stop()                                                           # ends the runs
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from controller.security import authentication
from controller.security.authentication import Report, authenticate

#: The child's nice value above the table's (the API's process runs at +5: controller/api/channel.py).
NICE = 10
#: How long a check may take before its process is ended and the check fails. Generous: a check
#: of a release costs about a second of CPU on a Pi 4, and a busy table's cores go to the card
#: path first; the bytecode comparison alone may take up to 600 s (authentication.py).
CHECK_TIMEOUT_S = 900.0
#: How the table starts the child: this Python, the same code, without the working directory on
#: sys.path (-P: a `controller` folder where the table was started must not be what runs).
COMMAND = (sys.executable, "-P", "-m", "controller.security.checker")


class CheckStopped(Exception):
    """The table stopped while its check ran: no result, nothing to journal."""


class Checker:
    """Runs the software check in a child process, one process per run (several may run at once:
    the periodic check and one asked on demand); `stop()` ends every run under way."""

    def __init__(
        self,
        timeout: float = CHECK_TIMEOUT_S,
        command: tuple[str, ...] = COMMAND,
        started: Callable[[int], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.command = command
        self.started = started  # told each run's pid (its process group's too) once it runs
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[str]] = set()
        self._stopped = False

    def run(self, release_key: Path, seed: bytes | None = None, root: Path | None = None) -> Report:
        """The check of the release at `root` (default: where this code is imported from), as the
        child reported it, or a failed report saying why the child gave none. Blocks: call it from
        a thread, never the table's loop."""
        root = root or authentication.installed_root()
        hex_seed = seed.hex() if seed is not None else None
        request = json.dumps({"release_key": str(release_key), "seed": hex_seed, "root": str(root)})
        with self._lock:
            if self._stopped:
                raise CheckStopped("the table is stopping")
            try:
                proc = subprocess.Popen(
                    self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True, process_group=0, cwd="/",
                )  # fmt: skip
            except OSError as exc:
                return _failed(root, seed, None, f"could not be started ({exc.strerror or exc})")
            self._running.add(proc)
        # Below the table's own priority from its first instructions on (a process may always lower
        # its own or its children's; what the child starts inherits it).
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, proc.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
        if self.started is not None:
            self.started(proc.pid)
        try:
            try:
                out, err = proc.communicate(request, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _end(proc)
                proc.communicate()
                return _failed(root, seed, proc.pid, f"did not answer within {self.timeout:g} s and was ended")
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
        return report

    def stop(self) -> None:
        """End every run under way (the table is stopping); later runs raise CheckStopped."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for proc in running:
            _end(proc)


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
    """The child: the request from stdin, the report (with this process's pid, nice value and CPU
    seconds, its own and its children's) as JSON on stdout."""
    request = json.load(sys.stdin)
    seed = bytes.fromhex(request["seed"]) if request.get("seed") is not None else None
    report = authenticate(Path(request["release_key"]), seed, Path(request["root"]))
    cpu = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )
    report.process = {"pid": os.getpid(), "nice": os.getpriority(os.PRIO_PROCESS, 0), "cpu_s": round(cpu, 3)}
    json.dump(report.to_json(), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
