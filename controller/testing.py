"""The daemon rig: `tablectl run --sim` as a real process on a free 127.0.0.1 port, and the HTTP
calls a test or a benchmark makes of it. The one copy used by the tests (tests/hil, tests/browser,
tests/floor, tests/cli, ...) and the benchmarks; nothing here reaches into the daemon.

    >>> daemon = Daemon(tmp_path, '[table]\\nid = "T-1"\\n')
    >>> daemon.start()                      # seconds from spawn until /api/health answered
    >>> daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})
    >>> assert daemon.stop() == 0, daemon.log()

It is test support, not part of the table: the daemon never imports it. It lives in the package
(not in tests/ or benchmarks/) so that both import it the same way, `from controller.testing
import Daemon`, and mypy checks it with the rest of `controller`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from controller.api.launch import NAME as API_NAME
from controller.camera.process import NAME as CAMERA_NAME

ROOT = Path(__file__).resolve().parent.parent
DEALER = "rig-dealer-token-0123456789"
SUPERVISOR = "rig-supervisor-token-0123456789"
TABLECTL = [sys.executable, "-m", "controller.cli"]


# Ports are handed out from a block of their own for each process that runs tests at once
# (pytest-xdist's workers gw0, gw1, ... and a plain run), below the kernel's ephemeral range so
# that no outgoing connection holds one, and never twice in one process: two servers started at
# the same moment by two tests can then never be told the same port between one's check and the
# other's bind (the kernel's "any free port" can give the same one to both).
_PORT_BLOCK = 1_000
_PORTS_FROM = 12_000
_next_port: list[int] = []

# The backstop of every wait on the daemon (its start, an answer, a state it should reach): each
# waits for its event and this long only if it never comes. Tests run on CI machines shared at a
# load of 10-20 on 2 cores, where what takes milliseconds when idle takes seconds.
PATIENCE_S = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on right now, not handed out before by this process."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    block = int(worker[2:]) + 1 if worker.startswith("gw") and worker[2:].isdigit() else 0
    first = _PORTS_FROM + block * _PORT_BLOCK
    if first + _PORT_BLOCK > 32_768:  # the kernel's ephemeral ports start there
        raise RuntimeError(f"too many test workers for the port blocks: {worker}")
    if not _next_port:
        _next_port.append(first + (os.getpid() % _PORT_BLOCK))  # a restarted run starts elsewhere
    for _ in range(_PORT_BLOCK):
        port = first + (_next_port[0] - first) % _PORT_BLOCK
        _next_port[0] = port + 1
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port on 127.0.0.1 from {first} to {first + _PORT_BLOCK - 1}")


def tablectl(*args: str, stdin: str = "", env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tablectl ARGS` as a process of its own, the way the rig runs the daemon (this checkout's
    `controller`, the rig's tokens not set), with `env` added to the environment and `stdin` as its
    input. Its exit code is the caller's to judge: a refusal is an answer too."""
    return subprocess.run(
        [*TABLECTL, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
        check=False,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


def replay(round_file: Mapping[str, Any] | Path, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settlement `tablectl replay` prints for a round file (its JSON, sent on stdin, or the
    path of one), in a process of its own as surveillance runs it. A refusal fails the caller with
    replay's own words; a test of a refusal calls `tablectl("replay", ...)` instead."""
    if isinstance(round_file, Path):
        done = tablectl("replay", str(round_file), env=env)
    else:
        done = tablectl("replay", "-", stdin=json.dumps(round_file), env=env)
    assert done.returncode == 0, f"tablectl replay refused (exit {done.returncode}): {done.stderr}"
    return dict(json.loads(done.stdout))


def hooked_env(workdir: Path, sitecustomize: str, **dirs: str) -> dict[str, str]:
    """More of a daemon's environment (`Daemon(env=...)`): `sitecustomize` (Python source) run at
    the start of every interpreter it starts, the API's process included, through a PYTHONPATH of
    `workdir/hooks` first; and each of `dirs` (an environment variable -> a directory's name) a
    new directory under `workdir` named in that variable, for the hook to write in."""
    hooks = workdir / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(sitecustomize)
    env = {"PYTHONPATH": os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")])}
    for variable, name in dirs.items():
        (workdir / name).mkdir()
        env[variable] = str(workdir / name)
    return env


class Daemon:
    """One `tablectl run --sim` process with the rig's tokens; restartable on the same config,
    state dir and port. Stopped by SIGTERM (or SIGKILL) to its own PID, never by name.

    `argv` is the program before `run --sim ...` (a benchmark may wrap `tablectl` in its own
    entry point); `config` is the TOML text, written to `workdir/table.toml`."""

    def __init__(
        self,
        workdir: Path,
        config: str,
        *,
        argv: Sequence[str] = TABLECTL,
        state_dir: Path | None = None,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.workdir = workdir
        self.cwd = cwd or ROOT  # where it runs: `python -m` (the API's process) imports from here first
        self.args = list(args)  # more of `tablectl run`'s flags, such as --demo
        self.env = dict(env or {})  # more of the environment, such as PYTHONPATH
        self.config = workdir / "table.toml"
        self.config.write_text(config)
        self.state_dir = state_dir or workdir / "state"
        self.argv = list(argv)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.spawned = 0.0

    @property
    def logfile(self) -> Path:
        """The log of the latest start (stdout and stderr)."""
        return self.workdir / f"daemon-{self.port}-{max(self.starts - 1, 0)}.log"

    def spawn(self) -> None:
        """Start the process without waiting for it to answer."""
        env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR, **self.env}
        env.pop("NOTIFY_SOCKET", None)  # not systemd's service
        args = ["run", "--sim", "--config", str(self.config), "--state-dir", str(self.state_dir), *self.args]
        self.starts += 1
        with self.logfile.open("wb") as log:
            self.spawned = time.monotonic()
            self.proc = subprocess.Popen(
                [*self.argv, *args, "--http", f"127.0.0.1:{self.port}"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.cwd,
            )

    def wait_ready(self, timeout: float = 2 * PATIENCE_S, every: float = 0.05) -> float:
        """Seconds from spawn until /api/health answers, polled every `every` seconds."""
        assert self.proc is not None, "spawn the daemon first"
        while time.monotonic() < self.spawned + timeout:
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.proc.returncode}: {self.log()}")
            try:
                self.get("/api/health", timeout=10)
                return time.monotonic() - self.spawned
            except (OSError, urllib.error.URLError):
                time.sleep(every)
        raise AssertionError(f"the daemon did not answer within {timeout:g} s: {self.log()}")

    def start(self, timeout: float = 2 * PATIENCE_S) -> float:
        """Spawn, then wait until /api/health answers; the seconds that took."""
        self.spawn()
        return self.wait_ready(timeout)

    def serve(self) -> Iterator[Daemon]:
        """Start, hand the daemon over, stop: a fixture's whole body (`yield from
        Daemon(...).serve()`). The daemon must then exit 0; its log says why if not."""
        self.start()
        try:
            yield self
        finally:
            code = self.stop()
        assert code == 0, self.log()

    def log(self) -> str:
        """The end of the latest start's log."""
        return self.logfile.read_text(errors="replace")[-3000:] if self.logfile.exists() else ""

    def kill(self) -> None:
        """SIGKILL, as a power cut would: no journal close, no goodbye."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=PATIENCE_S)

    def stop(self) -> int:
        """SIGTERM to our PID, then its exit code (SIGKILL to the same PID only if it hangs)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the daemon did not stop on SIGTERM within {PATIENCE_S:g} s") from None

    def get(self, path: str, token: str | None = SUPERVISOR, timeout: float = PATIENCE_S) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(f"{self.url}{path}", headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return json.loads(r.read())

    def metric(self, name: str) -> float:
        """One unlabelled sample of GET /metrics (Prometheus text), e.g. "tablectl_cards_read_total"."""
        request = urllib.request.Request(f"{self.url}/metrics", headers={"Authorization": f"Bearer {SUPERVISOR}"})
        with urllib.request.urlopen(request, timeout=PATIENCE_S) as r:
            found = re.search(rf"^{re.escape(name)} (\S+)$", r.read().decode(), flags=re.M)
        assert found, f"GET /metrics has no {name}"
        return float(found.group(1))

    def post(
        self, path: str, body: dict[str, Any], token: str = DEALER, timeout: float = PATIENCE_S
    ) -> tuple[int, Any]:
        """(status, answer): a refusal is an answer too, not an exception."""
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def deal(self, body: dict[str, Any], cards: list[str]) -> int:
        """A round opened with `body`, `cards` stacked on the simulated shoe and drawn one by one
        through its pty, then settled: its number. The payouts are left to the caller."""
        status, opened = self.post("/api/rounds", body)
        assert status == 201, opened
        number = int(opened["round"])
        assert self.post("/api/sim/shoe", {"cards": cards})[0] == 200
        for _ in cards:
            assert self.post("/api/sim/draw", {"count": 1})[0] == 200
        self.wait_for(f"round {number} to settle", lambda s: s["round"] == number and s["round_status"] == "settled")
        return number

    def wait_for_a_settled_round(self) -> Any:
        """Poll the last rounds until one of them has settled (a `--demo` table's dealer plays them);
        that answer."""
        settled = lambda answer: any(r["status"] == "settled" for r in answer["rounds"])  # noqa: E731
        return self.wait_for("a round settled", settled, path="/api/rounds?last=3")

    def wait_for(
        self, what: str, check: Callable[[Any], object], timeout: float = PATIENCE_S, path: str = "/api/state"
    ) -> Any:
        """Poll GET `path` until `check` holds for its answer; that answer."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = self.get(path)
            if check(last):
                return last
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}; last answer: {str(last)[:300]}")

    # -- what the process costs (the benchmarks) ----------------------------------------------

    def status(self) -> dict[str, int]:
        """Memory (kB) and threads from /proc/PID/status, CPU ticks (utime + stime) from stat, of the
        whole daemon: its own process (the table's) and the API's process it started, summed; each
        alone under `table_` and `api_` (the API's zero while it has none)."""
        assert self.proc is not None
        table = _proc_status(self.proc.pid)
        api_pid = self.api_pid()
        api = _proc_status(api_pid) if api_pid is not None else {}
        out = {key: table.get(key, 0) + api.get(key, 0) for key in table}
        out |= {f"table_{key}": value for key, value in table.items()}
        out |= {f"api_{key}": api.get(key, 0) for key in table}
        return out

    def api_pid(self) -> int | None:
        """The PID of the daemon's API process, if it runs: forked from the daemon's (named
        `tablectl-api`, controller/api/launch.py) or executed (`python -m controller.app.api_process`)."""
        for pid in self._children():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == API_NAME:
                    return pid
                if b"controller.app.api_process" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
            except OSError:
                continue
        return None

    def camera_pids(self) -> list[int]:
        """The PIDs of the daemon's camera processes (`tablectl-camera`, controller/camera/process.py)."""
        found = []
        for pid in self._children():
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == CAMERA_NAME:
                    found.append(pid)
            except OSError:
                continue
        return found

    def children(self) -> int:
        """How many processes the daemon has started (one: the API's)."""
        return len(self._children())

    def _children(self) -> list[int]:
        assert self.proc is not None
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                if int(stat.read_text().rpartition(")")[2].split()[1]) == self.proc.pid:
                    found.append(int(stat.parent.name))
            except (OSError, ValueError, IndexError):
                continue  # a process that ended while we looked
        return found


def _proc_status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "VmSize", "Threads"):
            out[key] = int(value.split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    out["cpu_ticks"] = int(fields[11]) + int(fields[12])
    # The proportional set size: pages shared with other processes (the two of the daemon share
    # the interpreter's and the libraries' code) counted a share each, so the two add up honestly;
    # written pages of its own (Private_Dirty) and written pages still shared (Shared_Dirty: those
    # the API's process, forked, shares with the table's until one of them writes them).
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("Pss", "Pss_Anon", "Private_Dirty", "Shared_Dirty"):
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out
