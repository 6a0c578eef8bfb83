"""The API in a process of its own (controller/api/remote.py), seen as an operator sees it.

`tablectl run --sim --demo` as a process: HTTP and the screens are served by one child process
(`python -m controller.app.api_process`) that never holds the journal open (only the daemon's own
process writes it); killing the API's process outright does not stop the table (the simulated
dealer's cards go on being journaled, no fault), and the daemon starts a new one that answers on
the same port; killing the daemon outright takes the API's process with it, so a daemon started
again gets its port. Every wait is on an event with a generous bound, never a timing verdict.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.api.channel import NICE
from controller.testing import PATIENCE_S, Daemon

CONFIG = '[table]\nid = "API-PROC-1"\ngame = "grand-slam"\n'
DEMO = ["--demo", "--demo-interval", "0.05", "--seed", "7"]


def until(what: str, check: Callable[[], object], timeout: float = 2 * PATIENCE_S) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def journal_seq(state: Path) -> tuple[int, int]:
    """(last seq, faults raised) read from the journal as it is on disk, without writing it."""
    with sqlite3.connect(f"file:{state / 'journal.sqlite3'}?mode=ro", uri=True) as db:
        last = db.execute("SELECT coalesce(max(seq), 0) FROM entries").fetchone()[0]
        faults = db.execute("SELECT count(*) FROM entries WHERE kind = 'fault'").fetchone()[0]
    return int(last), int(faults)


def open_files(pid: int) -> set[str]:
    out = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            out.add(os.readlink(fd))
        except OSError:
            continue
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG, args=DEMO).serve()


def test_the_api_is_a_process_of_its_own_that_never_opens_the_journal(daemon: Daemon) -> None:
    until("the simulated dealer's first cards", lambda: journal_seq(daemon.state_dir)[0] >= 5)
    api = daemon.api_pid()
    assert api is not None and daemon.children() == 1, "the daemon serves HTTP from one child process"
    assert daemon.get("/api/health")["status"] == "ok"
    journal = str(daemon.state_dir / "journal.sqlite3")
    assert journal in open_files(daemon.proc.pid)  # type: ignore[union-attr]  # the check can see it
    assert not {f for f in open_files(api) if f.startswith(journal)}, "the API's process holds the journal"


def test_killing_the_api_process_does_not_stop_the_table_and_it_comes_back(daemon: Daemon) -> None:
    until("the simulated dealer's first cards", lambda: journal_seq(daemon.state_dir)[0] >= 5)
    first = daemon.api_pid()
    assert first is not None
    os.kill(first, signal.SIGKILL)
    killed_at, _ = journal_seq(daemon.state_dir)
    # The table deals on while the API is gone and while it comes back.
    until("20 more entries journaled", lambda: journal_seq(daemon.state_dir)[0] >= killed_at + 20)
    until("a new API process", lambda: (pid := daemon.api_pid()) is not None and pid != first)
    until("the new API process answering", lambda: _answers(daemon))
    health = daemon.get("/api/health")
    assert health["status"] == "ok" and health["journal_seq"] >= killed_at + 20
    assert journal_seq(daemon.state_dir)[1] == 0, "no fault was raised"
    assert "the API's process ended" in daemon.logfile.read_text()


def test_killing_the_daemon_takes_its_api_process_with_it(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, CONFIG, args=DEMO)
    daemon.start()
    api = daemon.api_pid()
    assert api is not None
    daemon.kill()  # SIGKILL, as a power cut or the watchdog would
    until("the API's process to end with the daemon", lambda: not alive(api))
    daemon.start()  # the same port and state directory: free again
    try:
        assert daemon.get("/api/health")["status"] == "ok"
    finally:
        assert daemon.stop() == 0, daemon.log()


def nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])


def _answers(daemon: Daemon) -> bool:
    try:
        return bool(daemon.get("/api/health", timeout=5)["status"])
    except OSError:
        return False


def test_the_api_process_is_forked_from_the_daemon_and_one_started_again_is_executed(daemon: Daemon) -> None:
    """The first API process is a fork of the daemon's, made before the table's code loads (their
    common pages shared, controller/api/launch.py): `tablectl-api` in ps and top. One started again
    after it ended is executed (`python -m controller.app.api_process`): the table's process has its
    threads and its journal open by then."""
    first = daemon.api_pid()
    assert first is not None
    assert Path(f"/proc/{first}/comm").read_text().strip() == "tablectl-api"
    assert b"controller.app.api_process" not in Path(f"/proc/{first}/cmdline").read_bytes()
    table = daemon.proc.pid  # type: ignore[union-attr]  # started by the fixture
    assert nice(first) == min(19, nice(table) + NICE), "the API's process runs below the table's"
    os.kill(first, signal.SIGKILL)
    until("a new API process", lambda: (pid := daemon.api_pid()) is not None and pid != first)
    again = daemon.api_pid()
    assert again is not None
    assert b"controller.app.api_process" in Path(f"/proc/{again}/cmdline").read_bytes()
    until("the new API process answering", lambda: _answers(daemon))
