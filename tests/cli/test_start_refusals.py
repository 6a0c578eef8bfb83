"""`tablectl run` refuses what it cannot do before it writes or prints anything (issue 30, items
4, 5, 6 and 13): a second daemon on a state directory another one holds, a port in use, a state
directory that is a file or cannot be written. Each is one line on standard error and exit 2,
with no token printed and nothing written. The commands that write the journal refuse beside a
running table; those that read run beside it. The ready line on 0.0.0.0 names addresses a laptop
on the LAN can open, and `--demo` says that the simulated dealer plays by itself.

Every `tablectl` here is a process of its own, typed as an operator types it (the rig's daemon,
or `python -m controller.cli`), except the address listing, which is given a made-up list.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from controller.app.daemon import Daemon as TableDaemon
from controller.app.startup import (
    LOCK_NAME,
    StateDirBusy,
    lock_state_dir,
    parse_fib_trie,
    parse_ip_addr,
    ready_addresses,
)
from controller.cli.synth import synthesize
from controller.testing import Daemon, free_port
from tests.disk import read_only, small_disk

ROOT = Path(__file__).resolve().parents[2]
CONFIG = '[table]\nid = "LOCK-1"\n'


def tablectl(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`tablectl ARGV` as its own process, with no API tokens set: a simulated table that got as
    far as its tokens would make and print some."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": ":".join(sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *argv], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


def one_line_refusal(out: subprocess.CompletedProcess[str]) -> str:
    """The one line a refusal prints, after checking it is all it printed and that it exited 2."""
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stdout == "" and "token" not in out.stderr.lower(), (out.stdout, out.stderr)
    return lines[0]


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()} if directory.is_dir() else {}


# -- item 4: one daemon per state directory ---------------------------------------------------


def test_a_second_daemon_on_a_state_directory_is_refused_naming_the_holder_and_a_killed_one_leaves_no_lock(
    tmp_path: Path,
) -> None:
    first = Daemon(tmp_path, CONFIG, args=["--demo", "--demo-interval", "0.05"])
    first.start()
    state = first.state_dir
    assert first.proc is not None
    pid = first.proc.pid
    try:
        # The demo dealer has played (so the ready line and the start-up's words are logged).
        first.wait_for("a demo round", lambda answer: answer["rounds"], path="/api/rounds?last=1")
        log = first.log()
        assert "the simulated dealer opens rounds, deals and plays every seat by itself" in log, log
        assert "`tablectl run --sim` without --demo" in log, log

        second = tablectl("run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{free_port()}")
        line = one_line_refusal(second)
        assert line.startswith(f"tablectl: cannot start: {state}: ") and f"PID {pid} (tablectl run)" in line, line

        where = ["--sim", "--state-dir", str(state)]
        for writer in (
            ["journal", "rebuild", *where],
            ["journal", "retain", "--days", "1", *where],
            ["journal", "accept-loss", "--by", "pit boss", "--reason", "test", *where],
            ["journal", "synth", "--rounds", "1", *where],
        ):
            line = one_line_refusal(tablectl(*writer))
            assert f"PID {pid} (tablectl run)" in line and f"`tablectl journal {writer[1]}` writes" in line, line
        verify = tablectl("journal", "verify", *where)
        assert verify.returncode == 0 and "all pass" in verify.stdout, verify.stderr
        recall = tablectl("recall", "--json", *where)
        assert recall.returncode == 0 and recall.stdout.startswith("["), recall.stderr

        assert first.get("/api/rounds?last=1")["rounds"]  # the first table plays on, alone
        assert "UNIQUE constraint" not in first.log()
    finally:
        first.kill()  # SIGKILL: nothing is released by the daemon itself
    assert (state / LOCK_NAME).read_text().split() == [str(pid), "tablectl", "run"]  # left behind, not held

    again = Daemon(tmp_path, CONFIG, state_dir=state)
    again.start()
    assert again.proc is not None
    assert (state / LOCK_NAME).read_text().split()[0] == str(again.proc.pid)
    assert again.stop() == 0, again.log()
    rebuilt = tablectl("journal", "rebuild", "--sim", "--state-dir", str(state))
    assert rebuilt.returncode == 0, rebuilt.stderr  # once the table stopped, the writers write


def test_the_lock_is_one_holder_at_a_time_and_its_pid_is_named(tmp_path: Path) -> None:
    held = lock_state_dir(tmp_path / "state", "tablectl journal rebuild")
    with pytest.raises(StateDirBusy) as refused:
        lock_state_dir(tmp_path / "state", "tablectl run")  # another open file: flock refuses it
    assert refused.value.pid == os.getpid() and refused.value.holder == "tablectl journal rebuild"
    held.close()
    lock_state_dir(tmp_path / "state", "tablectl run").close()


# -- item 5: a port in use --------------------------------------------------------------------


def test_a_port_in_use_is_one_line_with_no_token_and_nothing_written(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        line = one_line_refusal(tablectl("run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{port}"))
    assert f"127.0.0.1:{port}" in line and "in use" in line and "another port" in line, line
    assert not state.exists()  # no journal, no lock file, no shoe link: nothing at all


# -- item 6: a state directory it cannot write ---------------------------------------------------


def test_a_state_directory_that_is_a_file_is_said_so(tmp_path: Path) -> None:
    path = tmp_path / "state"
    path.write_text("not a directory\n")
    for state in (path, path / "below"):
        line = one_line_refusal(
            tablectl("run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{free_port()}")
        )
        assert f"{path}: " in line and "is a file, not a directory" in line, line
    assert path.read_text() == "not a directory\n"


def test_a_read_only_state_directory_is_a_mount_problem_not_a_damaged_journal(tmp_path: Path) -> None:
    """A small tmpfs the test mounts, remounted read-only (root writes through directory
    permissions, not through a read-only mount): an empty state directory, one holding a journal,
    and one still to be made on it."""
    with small_disk(tmp_path / "disk", "8m") as disk:
        synthesize(disk / "journal", 2, seed=1).close()
        (disk / "empty").mkdir()
        before = {name: files(disk / name) for name in ("journal", "empty")}
        with read_only(disk):
            for state in (disk / "journal", disk / "empty", disk / "empty" / "new"):
                out = tablectl("run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{free_port()}")
                line = one_line_refusal(out)
                assert "read-only file system" in line and "do not restore it" in line, line
                assert "good copy" not in line, line
        assert {name: files(disk / name) for name in ("journal", "empty")} == before


def test_a_state_directory_it_may_not_write_says_permissions(tmp_path: Path) -> None:
    """An immutable directory (chattr +i) refuses root too: as a permissions problem, whether or
    not an earlier run left its lock file there."""
    if os.geteuid() != 0:
        pytest.skip("chattr +i needs root")
    state = tmp_path / "state"
    synthesize(state, 1, seed=1).close()
    for lock_file_left in (False, True):
        if lock_file_left:
            lock_state_dir(state, "tablectl run").close()
        before = files(state)
        subprocess.run(["chattr", "+i", str(state)], check=True)
        try:
            line = one_line_refusal(
                tablectl("run", "--sim", "--state-dir", str(state), "--http", f"127.0.0.1:{free_port()}")
            )
        finally:
            subprocess.run(["chattr", "-i", str(state)], check=True)
        assert f"{state}: the state directory may not be written" in line and "chattr -i" in line, line
        assert "do not restore it" in line and "good copy" not in line, line
        assert files(state) == before


# -- item 13: the operators' words ------------------------------------------------------------

FIB_TRIE = """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 universe UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 192.0.2.0/24 2 0 2
           |-- 192.0.2.0
              /24 link UNICAST
           |-- 192.0.2.2
              /32 host LOCAL
        |-- 192.0.2.255
           /32 link BROADCAST
Local:
           |-- 192.0.2.2
              /32 host LOCAL
           |-- 10.0.20.11
              /32 host LOCAL
"""


def test_the_hosts_addresses_are_read_from_the_kernels_tables() -> None:
    assert parse_fib_trie(FIB_TRIE) == ["127.0.0.1", "192.0.2.2", "10.0.20.11"]
    ip = "1: lo    inet 127.0.0.1/8 scope host lo\\ ...\n2: eth0    inet 10.0.20.11/24 brd 10.0.20.255 scope global eth0\\"
    assert parse_ip_addr(ip) == ["127.0.0.1", "10.0.20.11"]


def test_the_ready_line_on_every_address_names_ones_a_laptop_can_open() -> None:
    listed = ["127.0.0.1", "10.0.20.11", "169.254.7.1", "fe80::1", "::1", "192.0.2.2", "10.0.20.11"]
    for host in ("0.0.0.0", "::"):
        base, note = ready_addresses("http", host, 8154, listed)
        assert base == "http://10.0.20.11:8154", base
        assert "also at http://192.0.2.2:8154/" in note and "169.254" not in note + base, note
    base, note = ready_addresses("https", "0.0.0.0", 8154, ["127.0.0.1"])
    assert base == "https://127.0.0.1:8154" and "no network address" in note, note
    assert ready_addresses("http", "127.0.0.1", 8000, listed) == ("http://127.0.0.1:8000", "")
    assert ready_addresses("http", "::1", 8000, []) == ("http://[::1]:8000", "")


def test_the_daemon_asks_for_the_hosts_addresses_only_on_every_address(monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.app import daemon as daemon_module
    from controller.app.config import Config

    monkeypatch.setattr(daemon_module, "host_addresses", lambda: ["127.0.0.1", "192.0.2.2"])
    table = TableDaemon(Config(source="test"), simulated=True, state_dir=Path("unused"), host="0.0.0.0", port=8154)
    assert table._screen_addresses()[0] == "http://192.0.2.2:8154"
    table.host = "127.0.0.1"
    assert table._screen_addresses() == ("http://127.0.0.1:8154", "")


def test_make_run_takes_a_port() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PORT", "MAKEFLAGS")}
    for args, address in (((), "127.0.0.1:8000"), (("PORT=8100",), "127.0.0.1:8100")):
        out = subprocess.run(
            ["make", "-n", "-C", str(ROOT), "run", *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert f"tablectl run --sim --demo --game grand-slam --http {address}" in out.stdout, out.stdout
