"""The table's periodic and on-demand software checks run in a process of their own (issue 31:
nothing here slows the card path), and a check whose process gives no answer is a failed check
that stops play in plain words, never silence (controller/security/checker.py).

The failing cases check a small signed release in a temp dir in which one listed file is a FIFO
that nobody writes: the check's process blocks reading it, as a process stuck on a dying disk
would, until the test kills it or the check's timeout ends it."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.app.config import parse
from controller.app.daemon import Daemon as TableDaemon
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.security.authentication import Report, authenticate
from controller.security.checker import BETWEEN_ROUNDS_HOLD_S, NICE, Checker, RoundHold, io_class
from controller.security.release import MANIFEST, SIGNATURE, manifest_text
from controller.table import Table
from controller.testing import PATIENCE_S, SUPERVISOR, Daemon

ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}

STUCK = "controller/stuck.py"


def nice_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])


def test_a_check_asked_of_the_running_table_runs_in_a_process_of_its_own_below_the_tables_priority(
    tmp_path: Path,
) -> None:
    daemon = Daemon(tmp_path, "")
    daemon.start()
    try:
        assert daemon.proc is not None
        table_pid, api_pid = daemon.proc.pid, daemon.api_pid()
        status, answer = daemon.post("/api/verify", {"seed": "5eed"}, token=SUPERVISOR)
        assert status == 200, answer
        # A checkout is no release (`ok` None), but the check ran, and ran elsewhere.
        assert answer["ok"] is None and "holds no signed release" in answer["summary"], answer
        process = answer["process"]
        assert process["pid"] not in (table_pid, api_pid, None), (process, table_pid, api_pid)
        # NICE nicer than the table, as far as the kernel's 19 lets it (a suite run under nice).
        assert process["nice"] == min(19, nice_of(table_pid) + NICE), (process, nice_of(table_pid))
        assert process["io_class"] == "idle", process  # its disk reads after the journal's
        # The journal keeps the same: which process checked, at what priority.
        journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
        try:
            entry = next(e for e in journal.entries(after=answer["seq"] - 1) if e.seq == answer["seq"])
        finally:
            journal.close()
        assert entry.kind == "software-check" and entry.body["process"] == process, entry
        assert entry.body["trigger"] == "on demand by the API"
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_a_check_asked_while_a_round_is_dealt_runs_once_the_round_has_ended(tmp_path: Path) -> None:
    """No check runs while a round is dealt (a card journaled on a disk would wait for the core the
    check's process took during its fsync): one asked meanwhile waits, says so, and runs after."""
    daemon = Daemon(tmp_path, "")
    daemon.start()
    try:
        status, opened = daemon.post("/api/rounds", ROUND)
        assert status == 201, opened
        with ThreadPoolExecutor(1) as pool:
            asked = pool.submit(daemon.post, "/api/verify", {}, token=SUPERVISOR)
            deadline = time.monotonic() + PATIENCE_S
            while "the software check waits for the round being dealt to end" not in daemon.log():
                assert not asked.done(), f"the check ran while the round was dealt: {asked.result()}"
                assert time.monotonic() < deadline, daemon.log()
                time.sleep(0.05)
            status, voided = daemon.post("/api/rounds/current/void", {"reason": "misdeal", "name": "Kim"},
                                         token=SUPERVISOR)  # fmt: skip
            assert status == 200, voided
            status, answer = asked.result()
        assert status == 200, answer
        journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
        try:
            kinds = {e.seq: e.kind for e in journal.entries(after=0)}
        finally:
            journal.close()
        void = max(seq for seq, kind in kinds.items() if kind == "void")
        assert kinds[answer["seq"]] == "software-check" and answer["seq"] > void, (answer, kinds)
        assert answer["process"]["held_s"] > 0, answer
    finally:
        assert daemon.stop() == 0, daemon.log()


def signed_release(root: Path) -> Path:
    """A signed release at `root` whose file STUCK is a FIFO: its release key's public half."""
    files = [("controller/__init__.py", b'"""a release"""\n'), (STUCK, b"STUCK = True\n")]
    for path, data in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    (root / STUCK).unlink()
    os.mkfifo(root / STUCK)
    info = root / "tablectl-9.9.9.dist-info"
    info.mkdir()
    manifest = manifest_text(files).encode()
    key = Ed25519PrivateKey.generate()
    (info / MANIFEST).write_bytes(manifest)
    (info / SIGNATURE).write_bytes(key.sign(manifest))
    public = root.parent / "release-key.pub"
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert hashlib.sha256(b"STUCK = True\n").hexdigest() in manifest.decode()
    return public


@pytest.fixture
def table_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TableDaemon:
    """The daemon's software checks (the rest of it not started) on a simulated table, checking the
    release at tmp_path/site: the folder its code is imported from, as far as the check knows."""
    (tmp_path / "site").mkdir()
    key = signed_release(tmp_path / "site")
    monkeypatch.setattr("controller.security.authentication.installed_root", lambda: tmp_path / "site")
    config = parse({"security": {"release_key": str(key)}}, "the test's", simulated=True)
    daemon = TableDaemon(config, simulated=True, state_dir=tmp_path, host="127.0.0.1", port=0)
    daemon.table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    return daemon


def checking_process(stuck: Path) -> int:
    """The pid of this test's software-check process, once it runs (the FIFO holds it)."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if b"controller.security.checker" in cmdline.read_bytes() and _parent(cmdline.parent) == os.getpid():
                    return int(cmdline.parent.name)
            except (OSError, ValueError):
                continue  # a process that ended while we looked
        time.sleep(0.02)
    # Not found: the check is not in a process of its own. Let it read the FIFO and end, so the
    # test fails on its assertions instead of hanging.
    with open(stuck, "wb"):
        pass
    raise AssertionError("no software-check process was started")


def _parent(proc: Path) -> int:
    return int((proc / "stat").read_text().rpartition(")")[2].split()[1])


def software_fault(table: Table) -> str:
    faults = [f for f in table.faults.values() if f.code == "software-authentication"]
    assert len(faults) == 1, table.faults
    return faults[0].message


def last_check(table: Table) -> dict[str, object]:
    (entry,) = table.journal.last_of_kinds(("software-check",), 1)
    return dict(entry.body)


def test_the_checks_process_reads_the_disk_in_the_idle_io_class_and_gives_the_same_result(tmp_path: Path) -> None:
    """The check's process is put in the IDLE I/O class (its disk reads served only when no one
    else waits: the journal's fsync does not queue behind them), as this test reads the running
    process's class of the kernel (ioprio_get); the class changes nothing of the result: the same
    digest and seeded HMAC as the check made here, in this process, of the same release."""
    (tmp_path / "site").mkdir()
    key = signed_release(tmp_path / "site")
    stuck = tmp_path / "site" / STUCK
    seed = bytes.fromhex("5eed")
    assert io_class(0) != "idle"  # the test's own (the table's) class is not what the child gets by inheriting

    def while_it_runs() -> str:
        pid = checking_process(stuck)
        wait_state(pid, "S")  # blocked reading the FIFO: mid-check
        seen = io_class(pid)
        stuck.write_bytes(b"STUCK = True\n")  # the file it reads, as listed
        return seen

    with ThreadPoolExecutor(1) as pool:
        seen = pool.submit(while_it_runs)
        report = Checker().run(key, seed=seed, root=tmp_path / "site")
        assert seen.result() == "idle"
    assert report.ok is True, report.summary()
    assert report.process is not None and report.process["io_class"] == "idle", report.process
    stuck.unlink()  # the FIFO made a plain file, as listed, for the check made here
    stuck.write_bytes(b"STUCK = True\n")
    here = authenticate(key, seed, tmp_path / "site")
    assert here.ok is True, here.summary()
    assert (report.digest, report.hmac) == (here.digest, here.hmac) and report.hmac is not None


def while_it_is_stuck(tmp_path: Path, checker: Checker, look: Callable[[int], Any]) -> tuple[Any, Report]:
    """Run `checker` on this test's stuck release; `look` at its process mid-check (blocked on the FIFO)."""
    (tmp_path / "site").mkdir()
    key = signed_release(tmp_path / "site")
    stuck = tmp_path / "site" / STUCK

    def while_it_runs() -> Any:
        pid = checking_process(stuck)
        wait_state(pid, "S")
        try:
            return look(pid)
        finally:
            stuck.write_bytes(b"STUCK = True\n")  # the file it reads, as listed

    with ThreadPoolExecutor(1) as pool:
        seen = pool.submit(while_it_runs)
        report = checker.run(key, root=tmp_path / "site")
        return seen.result(), report


def status_line(pid: int, name: str) -> str:
    line = next(x for x in Path(f"/proc/{pid}/status").read_text().splitlines() if x.startswith(f"{name}:"))
    return line.split(":", 1)[1].strip()


def test_as_the_table_runs_it_the_checks_process_stays_in_the_tables_session_on_every_core(
    tmp_path: Path,
) -> None:
    """As the table runs it: the check's process in the table's session (in a process group of its
    own, which the hold stops and continues), on every core the table has (a session of its own and
    the last core alone were measured and not kept: controller/security/checker.py)."""
    checker = Checker()
    (pid, sid, pgid, cores), report = while_it_is_stuck(
        tmp_path, checker, lambda pid: (pid, os.getsid(pid), os.getpgid(pid), status_line(pid, "Cpus_allowed_list"))
    )
    assert report.ok is True, report.summary()
    assert sid == os.getsid(0)
    assert pgid == pid != os.getpgid(0)
    assert cores == status_line(os.getpid(), "Cpus_allowed_list")
    assert report.process is not None and report.process["cpus"] == sorted(os.sched_getaffinity(0))


def test_a_periodic_check_whose_process_is_killed_stops_play_naming_it(
    table_daemon: TableDaemon, tmp_path: Path
) -> None:
    table = table_daemon.table
    assert table is not None

    async def check_and_kill() -> int:
        checking = asyncio.create_task(table_daemon._periodic_check())
        pid = await asyncio.to_thread(checking_process, tmp_path / "site" / STUCK)
        assert pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        await checking
        return pid

    pid = asyncio.run(check_and_kill())
    said = f"the software check's process (pid {pid}) was killed by signal 9 (SIGKILL) before it answered"
    message = software_fault(table)
    assert f"software authentication failed: {said}: nothing was authenticated" in message, message
    assert "Stop play: the software could not be checked" in message, message
    body = last_check(table)
    assert body["ok"] is False and body["trigger"] == "every 24 h", body
    assert body["process"] == {"pid": pid, "failed": "was killed by signal 9 (SIGKILL)"}, body
    assert table.blocked  # play is stopped until a check passes


def test_a_check_whose_process_does_not_answer_is_ended_and_stops_play(table_daemon: TableDaemon) -> None:
    table = table_daemon.table
    assert table is not None
    table_daemon.checker.timeout = 2.0  # the FIFO holds it for ever: it never answers, however long
    asyncio.run(table_daemon._periodic_check())
    body = last_check(table)
    process = body["process"]
    assert isinstance(process, dict) and process["failed"] == "did not answer within 2 s and was ended", body
    assert f"the software check's process (pid {process['pid']}) did not answer within 2 s" in software_fault(table)
    with pytest.raises(ProcessLookupError):  # ended, and reaped
        os.kill(int(process["pid"]), 0)


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def wait_state(pid: int, wanted: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while state_of(pid) != wanted:
        assert time.monotonic() < deadline, f"pid {pid} stayed {state_of(pid)}, not {wanted}"
        time.sleep(0.02)


def test_a_check_under_way_is_stopped_while_a_round_is_dealt_and_goes_on_after(
    table_daemon: TableDaemon, tmp_path: Path
) -> None:
    table = table_daemon.table
    assert table is not None
    RoundHold(table_daemon.checker, None, 0.0).attach(table)
    stuck = tmp_path / "site" / STUCK

    async def check_across_a_round() -> int:
        checking = asyncio.create_task(table_daemon._periodic_check())
        pid = await asyncio.to_thread(checking_process, stuck)
        await asyncio.to_thread(wait_state, pid, "S")  # blocked on its FIFO: running, as far as we let it
        table.open_round(ROUND, by="dealer")
        await asyncio.to_thread(wait_state, pid, "T")  # stopped for the round
        table.void(by="supervisor", reason="misdeal")
        await asyncio.to_thread(wait_state, pid, "S")  # going on
        await asyncio.to_thread(stuck.write_bytes, b"STUCK = True\n")  # the file it reads, as listed
        await checking
        return pid

    pid = asyncio.run(check_across_a_round())
    body = last_check(table)
    process = body["process"]
    assert isinstance(process, dict) and process["pid"] == pid, body
    assert float(process["held_s"]) > 0, body  # it was held, and said so
    assert body["trigger"] == "every 24 h" and "software-authentication" not in {f.code for f in table.faults.values()}


def test_a_card_dealt_between_rounds_stops_the_check_before_it_is_journaled_and_lets_it_go_after(
    table_daemon: TableDaemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dead card dealt in the paying time, while a check runs, must not wait for its fsync beside
    the check's process: the check is stopped before the card's commit begins, and goes on after."""
    table = table_daemon.table
    assert table is not None
    stuck = tmp_path / "site" / STUCK
    checker = table_daemon.checker
    at_the_commit: list[tuple[str, bool, str]] = []  # (kind, held, the check's process state)
    append = table.journal.append

    async def deal_a_dead_card() -> tuple[int, str]:
        RoundHold(checker, asyncio.get_running_loop(), 0.05).attach(table)
        checking = asyncio.create_task(table_daemon._periodic_check())
        pid = await asyncio.to_thread(checking_process, stuck)
        await asyncio.to_thread(wait_state, pid, "S")  # blocked on its FIFO: running

        def appended(kind: str, *args: Any, **kwargs: Any) -> Any:
            if checker.held:
                wait_state(pid, "T")  # SIGSTOP was sent: stopped before the commit starts
            at_the_commit.append((kind, checker.held, state_of(pid) if Path(f"/proc/{pid}").exists() else "ended"))
            return append(kind, *args, **kwargs)

        monkeypatch.setattr(table.journal, "append", appended)
        table.card(parse_card("Kh"), {"dealer": "burn"})  # between rounds: no round is open
        right_after = state_of(pid)
        await asyncio.to_thread(wait_state, pid, "S")  # let go, `after` (50 ms) later
        await asyncio.to_thread(stuck.write_bytes, b"STUCK = True\n")  # the file it reads, as listed
        await checking
        return pid, right_after

    pid, right_after = asyncio.run(deal_a_dead_card())
    # The card, then the check's own report (journaled after its process ended).
    assert at_the_commit == [("card", True, "T"), ("software-check", False, "ended")], at_the_commit
    assert right_after == "T"  # still stopped as the card's job ends: let go only after it
    assert not checker.held
    body = last_check(table)
    process = body["process"]
    assert isinstance(process, dict) and process["pid"] == pid and float(process["held_s"]) > 0, body
    assert "software-authentication" not in {f.code for f in table.faults.values()}, table.faults


def test_only_the_card_paths_entries_hold_the_check_between_rounds(
    table_daemon: TableDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A login, a camera's scene or a check's own report is no card: the check is not held for it;
    a card, a fault and the shoe's events are (each let go after its job), and a round from its
    opening on."""
    table = table_daemon.table
    assert table is not None
    checker = table_daemon.checker
    held_at: list[tuple[str, bool]] = []
    append = table.journal.append

    def appended(kind: str, *args: Any, **kwargs: Any) -> Any:
        held_at.append((kind, checker.held))
        return append(kind, *args, **kwargs)

    monkeypatch.setattr(table.journal, "append", appended)

    async def entries() -> list[bool]:
        RoundHold(checker, asyncio.get_running_loop(), 0.01).attach(table)
        after: list[bool] = []
        for journal_one in (
            lambda: table.access("login", {"name": "Kim", "role": "dealer", "ok": False}),
            lambda: table.card(parse_card("2c"), {"dealer": "burn"}),
            lambda: table.software_check({"ok": True}, "on demand by the test"),
            lambda: table.raise_fault("misread", "the shoe sent '??'", source={"shoe": "test"}),
            lambda: table.shoe_event("cut-card", {"shoe": "test"}),
        ):
            journal_one()
            while checker.held:  # a card-path entry's hold ends `after` its job
                await asyncio.sleep(0.01)
            after.append(checker.held)
        return after

    assert asyncio.run(entries()) == [False] * 5
    assert held_at == [("login", False), ("card", True), ("software-check", False), ("fault", True),
                       ("shoe-event", True)], held_at  # fmt: skip


class Timeline:
    """A clock and the loop's timers on it, moved on by the test: RoundHold's let-go timers fire
    when the test's time passes them, as they would on the table's loop."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[float, Callable[..., object], tuple[object, ...]]] = []

    def __call__(self) -> float:
        return self.now

    def call_soon(self, callback: Callable[..., object], *args: object) -> None:
        callback(*args)

    def call_later(self, delay: float, callback: Callable[..., object], *args: object) -> None:
        self.timers.append((self.now + delay, callback, args))

    def advance(self, to: float) -> None:
        self.now = to
        due = [t for t in self.timers if t[0] <= to]
        self.timers = [t for t in self.timers if t[0] > to]
        for _, callback, args in sorted(due, key=lambda t: t[0]):
            callback(*args)


def test_a_flood_of_dead_cards_between_rounds_cannot_keep_the_check_from_running(
    table_daemon: TableDaemon, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shoe that sends card after card between rounds (100 a second, for 4 seconds) holds the
    check at most BETWEEN_ROUNDS_HOLD_S on end, then not for as long: the check runs half the time."""
    table = table_daemon.table
    assert table is not None
    checker = table_daemon.checker
    time_ = Timeline()
    RoundHold(checker, time_, 0.1, clock=time_).attach(table)  # type: ignore[arg-type]
    held_at: list[tuple[float, bool]] = []
    append = table.journal.append

    def appended(kind: str, *args: Any, **kwargs: Any) -> Any:
        held_at.append((time_.now, checker.held))
        return append(kind, *args, **kwargs)

    monkeypatch.setattr(table.journal, "append", appended)
    cards = [parse_card(f"{rank}{suit}") for suit in "cdhs" for rank in "23456789TJQKA"] * 8
    for i in range(400):
        time_.advance(i / 100)
        table.card(cards[i], {"dealer": "burn"})
    time_.advance(4.2)
    assert not checker.held  # let go `after` the last card held
    held = [t for t, h in held_at if h]
    free = [t for t, h in held_at if not h]
    assert held[0] == 0.0 and len(held) + len(free) == 400
    # Held from the first card for BETWEEN_ROUNDS_HOLD_S, let run as long, held again, and so on.
    assert max(held) < 4.0 and free, held_at
    span = 2 * BETWEEN_ROUNDS_HOLD_S
    # Held in the first BETWEEN_ROUNDS_HOLD_S of each span (and until the let-go, `after` = 0.1 s
    # past its last held card); let run for the rest.
    assert all(round(t % span, 6) < BETWEEN_ROUNDS_HOLD_S + 0.1 for t in held), held_at
    assert all(round(t % span, 6) >= BETWEEN_ROUNDS_HOLD_S for t in free), held_at
    assert len(free) >= 150, held_at  # about half the time
