"""Hardware-in-the-loop rig: `tablectl run --sim` (controller/testing.py, shared with the browser
tests and the benchmarks) and `tablectl sim-shoe` as real processes, a pty for the payout
display, HTTP on 127.0.0.1. Nothing here reaches into the daemon."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.testing import TABLECTL


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
