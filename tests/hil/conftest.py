"""Hardware-in-the-loop rig: `tablectl run --sim` and `tablectl sim-shoe` as real processes,
a pty for the payout display, HTTP on 127.0.0.1. Nothing here reaches into the daemon."""

from __future__ import annotations

import itertools
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DEALER = "hil-dealer-token-0123456789"
SUPERVISOR = "hil-supervisor-token-0123456789"
TABLECTL = [sys.executable, "-m", "controller.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Daemon:
    """One `tablectl run --sim` process (restartable: same config, state dir and port)."""

    def __init__(self, workdir: Path, config: str, *args: str, env: dict[str, str] | None = None) -> None:
        self.workdir = workdir
        self.args = args  # more of `tablectl run`'s flags, such as --demo
        self.env = env or {}
        self.config = workdir / "table.toml"
        self.config.write_text(config)
        self.state_dir = workdir / "state"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, timeout: float = 30.0) -> None:
        env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR, **self.env}
        env.pop("NOTIFY_SOCKET", None)
        log = open(self.workdir / f"daemon-{self.starts}.log", "wb")  # noqa: SIM115 - kept for the process
        self.proc = subprocess.Popen(
            [
                *TABLECTL,
                "run",
                "--sim",
                "--config",
                str(self.config),
                "--state-dir",
                str(self.state_dir),
                "--http",
                f"127.0.0.1:{self.port}",
                *self.args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        log.close()
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.proc.returncode}: {self.log()}")
            try:
                self.get("/api/health", timeout=1)
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.05)
        raise AssertionError(f"the daemon did not answer within {timeout} s: {self.log()}")

    def log(self) -> str:
        return (self.workdir / f"daemon-{self.starts - 1}.log").read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the daemon did not stop on SIGTERM within 15 s") from None

    def get(self, path: str, timeout: float = 5.0, token: str = SUPERVISOR) -> Any:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return json.loads(r.read())

    def post(self, path: str, body: dict[str, Any], token: str = DEALER, timeout: float = 10.0) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def wait_for(self, what: str, check: Any, timeout: float = 10.0, path: str = "/api/state") -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = self.get(path)
            if check(last):
                return last
            time.sleep(0.02)
        raise AssertionError(f"timed out waiting for {what}; last answer: {str(last)[:300]}")


class SimShoe:
    """`tablectl sim-shoe` as its own process, driven by its stdin command lines."""

    def __init__(self, link: Path, *args: str) -> None:
        self.link = link
        self.proc = subprocess.Popen(
            [*TABLECTL, "sim-shoe", "--link", str(link), "--heartbeat", "0.2", "--retransmit", "0.1", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        first = self._line()
        assert first.startswith("ok SIMULATED shoe on"), first

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"sim-shoe ended: {self.proc.stderr.read() if self.proc.stderr else ''}")
        return line.strip()

    def command(self, line: str) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self._line()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture
def pty_display() -> Iterator[tuple[int, str]]:
    """A pty standing in for the pole display: the daemon writes the slave, the test reads the master."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    path = os.ttyname(slave)
    yield master, path
    os.close(master)
    os.close(slave)


def lamp(answer: dict[str, Any], pin: str) -> list[float]:
    """The states a mock pin went through, oldest first (from the daemon's /api/sim/pins)."""
    return [float(value) for _, value in answer["pins"][pin]]


def changes(values: list[float]) -> int:
    return sum(1 for a, b in itertools.pairwise(values) if a != b)


def display_text(wire: bytes) -> str:
    """What a CD5220 display showed, line after line (ESC Q A / ESC Q B ... CR), read independently."""
    lines = [m.decode("cp437").strip() for m in re.findall(rb"\x1bQ[AB](.*?)\r", wire, flags=re.S)]
    return " ".join(" ".join(lines).split())


def drain(fd: int) -> bytes:
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return out
        except OSError:
            return out
        if not chunk:
            return out
        out += chunk
