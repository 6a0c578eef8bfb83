"""One writer: whatever the API's callers do, at once and from many threads, every journal entry is
written by the table's own loop, and a request handler has no way to the table or its journal.

The app runs here as it runs in the daemon: its routes on the API's loop (the test client's), the
table's jobs on the gate's loop in a thread of its own (the daemon's main thread in production).
The journal's `append` notes the thread of every write.

Each caller's app is built before the callers' threads start, as the API's process builds its one
app on one thread. FastAPI builds each route parameter's validator inside `warnings.catch_warnings()`
to silence pydantic's UnsupportedFieldAttributeWarning about the parameter's alias (FastAPI's own:
the path parameter `number` of GET /api/rounds/{number}, the query's `last`, each read by that
name), and pydantic builds some of them only at their first request; catch_warnings is not
thread-safe, and here 12 or 16 test clients, each with its own event loop on its own thread, make
their first requests at once, which the API's process (one loop, one thread) never does: one
thread's catch_warnings may end while another's validator is being built, and the warning FastAPI
meant to silence gets out (an error here failed 2 runs of 14 at a18b1bc-27d9237). So this file
silences it as FastAPI does."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import LoginLimiter, Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table

pytestmark = pytest.mark.filterwarnings("ignore::pydantic.warnings.UnsupportedFieldAttributeWarning")

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"


def test_a_runtime_keeps_no_table_and_no_journal(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    try:
        public = {name: value for name, value in vars(rt).items() if not name.startswith("_")}
        public |= {name: getattr(rt.gate, name) for name in dir(rt.gate) if not name.startswith("_")}
        reachable = [name for name, value in public.items() if isinstance(value, Table | Journal)]
        assert reachable == [], f"a route could reach the table's writer through {reachable}"
    finally:
        rt.gate.close()


def test_every_entry_is_written_by_the_tables_loop_however_many_callers_write_at_once(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    writers: Counter[str] = Counter()
    append = journal.append

    def noted(*args: Any, **kwargs: Any) -> Any:
        writers[threading.current_thread().name] += 1
        return append(*args, **kwargs)

    append_many = journal.append_many

    def noted_many(items: Any) -> Any:  # a burst of accesses, committed together
        writers[threading.current_thread().name] += len(items)
        return append_many(items)

    journal.append = noted  # type: ignore[method-assign]
    journal.append_many = noted_many  # type: ignore[method-assign]
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    # Every wrong token is journaled (the limiter never locks anyone out here): the most writes.
    rt.limiter = LoginLimiter(limit=10**6, window_s=60, lockout_s=1)
    seat = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 10}}]}
    apps = [create_app(rt) for _ in range(12)]  # built here, not on the callers' threads (see above)

    def caller(n: int) -> list[int]:
        codes = []
        with TestClient(apps[n], client=(f"10.0.{n}.1", 50000)) as client:
            for i in range(40):
                kind = (n + i) % 5
                if kind == 0:
                    r = client.post("/api/login", json={"token": f"wrong-{n}-{i}"})
                elif kind == 1:
                    r = client.get("/api/state", headers={"Authorization": f"Bearer wrong-{n}-{i}"})
                elif kind == 2:
                    r = client.post("/api/login", json={"token": DEALER})
                elif kind == 3:
                    r = client.post("/api/rounds", json=seat, headers={"Authorization": f"Bearer {DEALER}"})
                else:
                    r = client.post("/api/confirm", headers={"Authorization": f"Bearer {SUPERVISOR}"})
                codes.append(r.status_code)
        return codes

    try:
        with ThreadPoolExecutor(max_workers=12) as pool:
            codes = [c for part in pool.map(caller, range(12)) for c in part]
    finally:
        rt.gate.close()
    assert len(codes) == 480 and not [c for c in codes if c >= 500], Counter(codes)
    assert set(writers) == {"table"}, writers  # the gate's loop: no request handler's thread wrote
    assert sum(writers.values()) == journal.last_seq
    logins = [e for e in journal.entries() if e.kind == "login"]
    assert len([e for e in logins if not e.body["ok"]]) == sum(1 for c in codes if c == 401)
    assert journal.check() == journal.last_seq  # the chain holds: no entry lost, none twice


@pytest.mark.parametrize("limit", [1, 4])
def test_a_full_queue_refuses_at_once_with_503_and_does_nothing(tmp_path: Path, limit: int) -> None:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    rt.gate._limit = limit  # as a Pi's table would be under a flood
    hold = threading.Event()
    started = threading.Event()

    def stuck(_table: Table) -> None:  # the table's loop busy with a card, as long as the test says
        started.set()
        hold.wait(30)

    try:
        client = TestClient(create_app(rt))
        assert client.get("/api/health").json() == {"status": "ok"}  # the table's view is published
        waiting = [rt.gate.submit(stuck) for _ in range(limit)]
        assert started.wait(10)
        r = client.post(
            "/api/rounds",
            json={"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 10}}]},
            headers={"Authorization": f"Bearer {DEALER}"},
        )
        assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
        assert "busy" in r.json()["error"]
        hold.set()
        for job in waiting:
            job.result(timeout=10)
        assert [e.kind for e in table.journal.entries()] == []  # the refused round was not opened
    finally:
        hold.set()
        rt.gate.close()


def test_a_caller_that_goes_away_does_not_cancel_the_view_the_others_wait_for(tmp_path: Path) -> None:
    import asyncio

    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    hold, started = threading.Event(), threading.Event()

    def busy(_table: Table) -> None:  # the table's loop dealing a card while the view is asked for
        started.set()
        hold.wait(30)

    async def two_readers() -> Any:
        rt.gate.submit(busy)
        assert await asyncio.to_thread(started.wait, 10)
        leaving = asyncio.create_task(rt.gate.view())
        staying = asyncio.create_task(rt.gate.view())
        await asyncio.sleep(0)
        leaving.cancel()  # a client that hung up
        hold.set()
        return await asyncio.wait_for(staying, 10)

    try:
        view = asyncio.run(two_readers())
        assert view.seq == table.journal.last_seq and view.blocked is False
    finally:
        hold.set()
        rt.gate.close()


def test_a_flood_of_wrong_tokens_is_journaled_whole_in_a_few_commits(tmp_path: Path) -> None:
    """Every refused token is in the journal, from its own address, and each caller had its 401
    only once its refusal was on disk; but the crowd cost the disk far fewer commits than tries."""
    journal = Journal(tmp_path / "j.sqlite3")
    commits: list[int] = []
    append_many = journal.append_many

    def counted(items: Any) -> Any:
        commits.append(len(items))
        return append_many(items)

    journal.append_many = counted  # type: ignore[method-assign]
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    rt.limiter = LoginLimiter(limit=10**6, window_s=60, lockout_s=1)
    barrier = threading.Barrier(16)
    apps = [create_app(rt) for _ in range(16)]  # built here, not on the strangers' threads (see above)

    def stranger(n: int) -> list[tuple[int, int]]:
        answers = []
        with TestClient(apps[n], client=(f"10.9.{n}.1", 50000)) as client:
            barrier.wait(30)  # all at once
            for i in range(8):
                r = client.get("/api/state", headers={"Authorization": f"Bearer wrong-{n}-{i}"})
                # Answered only after the refusal was committed: it is in the journal already.
                with closing(sqlite3.connect(f"file:{journal.path}?mode=ro", uri=True)) as db:
                    (on_disk,) = db.execute(
                        "SELECT count(*) FROM entries WHERE kind = 'login' AND body LIKE ?", (f'%"10.9.{n}.1"%',)
                    ).fetchone()
                answers.append((r.status_code, on_disk))
        return answers

    try:
        with ThreadPoolExecutor(max_workers=16) as pool:
            answers = dict(enumerate(pool.map(stranger, range(16))))
    finally:
        rt.gate.close()
    for n, got in answers.items():
        assert [status for status, _ in got] == [401] * 8, (n, got)
        assert [on_disk for _, on_disk in got] == list(range(1, 9)), (n, got)
    refused = [e for e in journal.entries() if e.kind == "login" and not e.body["ok"]]
    assert len(refused) == 16 * 8 and sum(commits) == 16 * 8
    assert len(commits) < 16 * 8 / 2, commits  # bursts: most commits carried several refusals
    assert journal.check() == journal.last_seq
