"""A full disk under the running daemon: its state directory is a real 2 MB tmpfs, filled to the
last byte while a round is dealt. The fault is said in plain words on the API, the pole display
and the status lamp, once in the log; every POST answers 503 with a JSON error; the cards the
shoe holds meanwhile are journaled in order when space returns, and the fault clears itself."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.rig import Daemon
from controller.journal import Journal

from .conftest import SimShoe, display_text, drain

WORDS = "the journal cannot be written: the disk is full; no card is being accepted"

CONFIG = """
[table]
id = "DISK-1"
[shoe]
url = "{link}"
heartbeat_timeout = 2.0
[display]
url = "{display}"
"""


@contextlib.contextmanager
def small_disk(where: Path, size: str = "2m") -> Iterator[Path]:
    """A real tmpfs of `size` at `where` (root only: CI runs as root)."""
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("the disk-full test needs root to mount a tmpfs, and CI runs as root")
        pytest.skip("needs root to mount a small tmpfs")
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 64, 1):
            while True:
                try:
                    if os.write(fd, b"\0" * size) < size:
                        break
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    break
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_is_a_plain_fault_everywhere_and_clears_itself_with_the_held_cards_in_order(
    tmp_path: Path, pty_display: tuple[int, str]
) -> None:
    master, display = pty_display
    with small_disk(tmp_path / "state") as state_dir:
        shoe = SimShoe(tmp_path / "shoe-link", "--seed", "7")
        daemon = Daemon(tmp_path, CONFIG.format(link=tmp_path / "shoe-link", display=display))
        try:
            daemon.start()
            seats = {"seats": [{"seat": s, "wagers": {"first": 10, "second": 10, "third": 5}} for s in (1, 2, 3)]}
            assert daemon.post("/api/rounds", seats)[0] == 201
            before = daemon.get("/api/state")["journal_seq"]
            filler = fill(state_dir)
            drawn = shoe.command("draw 3").split()[2:]
            state = daemon.wait_for("the disk-full fault", lambda s: any(f["code"] == "disk-full" for f in s["faults"]))
            assert state["prompt"].startswith(f"STOP: {WORDS}") and state["journal_seq"] == before
            assert daemon.get("/api/health")["status"] == "fault"
            assert state["devices"]["lamps"]["fault"] is True  # the status lamp
            for path, body in (("/api/rounds", seats), ("/api/confirm", {}), ("/api/login", {"token": "x"})):
                status, answer = daemon.post(path, body)
                assert status == 503 and answer["kind"] == "unavailable" and WORDS in answer["error"], (path, answer)
            time.sleep(1.0)  # the shoe offers its first card again and again meanwhile
            assert "DISK FULL" in display_text(drain(master)).upper()

            filler.unlink()
            daemon.wait_for("the held cards", lambda s: not s["blocked"] and s["journal_seq"] >= before + 4, timeout=15)
            assert daemon.post("/api/confirm", {})[0] == 200
            assert daemon.stop() == 0
        finally:
            if daemon.proc and daemon.proc.poll() is None:
                daemon.proc.kill()
            shoe.stop()
        log = daemon.logfile.read_text(errors="replace")
        assert log.count(WORDS) == 1, log  # once, however often the shoe offered the card again
        assert "Traceback" not in log
        journal = Journal(state_dir / "journal.sqlite3", readonly=True)
        after = list(journal.entries(after=before))
        journal.close()
    assert after[0].kind == "journal-restored" and after[0].body["refused"] >= 5
    assert [e.body["card"] for e in after if e.kind == "card"] == drawn  # in the shoe's order, once each
