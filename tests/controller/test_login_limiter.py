"""The login limiter as a person at the table meets it: a locked-out address gets in with the
right token once it has stopped failing; one that keeps guessing stays out; the lock-out is
journaled once, not once a try."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import LoginLimiter, Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
WRONG = {"token": "guess-guess-guess"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)


@pytest.fixture
def client(table: Table, clock: Clock) -> TestClient:
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))
    rt.limiter = LoginLimiter(limit=3, window_s=60, lockout_s=30, clock=clock)
    return TestClient(create_app(rt))


def lockouts(table: Table) -> list[dict[str, object]]:
    return [e.body for e in table.journal.entries() if e.kind == "login" and e.body.get("locked_out")]


def test_the_right_token_gets_in_once_the_address_has_stopped_failing(client: TestClient, clock: Clock) -> None:
    for _ in range(3):
        assert client.post("/api/login", json=WRONG).status_code == 401
    clock.now += 29
    locked = client.post("/api/login", json={"token": DEALER})
    assert locked.status_code == 429 and locked.headers["retry-after"] == "2"
    clock.now += 1.5  # 30.5 s after the last wrong token: the right one is taken, the right one only
    assert client.post("/api/login", json={"token": DEALER}).json() == {"role": "dealer"}


def test_an_address_that_keeps_guessing_stays_locked_out(client: TestClient, clock: Clock, table: Table) -> None:
    for _ in range(3):
        client.post("/api/login", json=WRONG)
    for _ in range(5):  # a guess every 20 s: each keeps the lock-out going for 30 s more
        clock.now += 20
        assert client.post("/api/login", json=WRONG).status_code == 429
    assert client.post("/api/login", json={"token": DEALER}).status_code == 429
    clock.now += 31
    assert client.post("/api/login", json={"token": DEALER}).status_code == 200
    # Three failures journaled, then the lock-out once; the tries while locked out are not journaled.
    logins = [e.body for e in table.journal.entries() if e.kind == "login"]
    assert logins[:3] == [{"client": "testclient", "ok": False}] * 3
    assert lockouts(table) == [{"client": "testclient", "ok": False, "locked_out": 30}]
    assert logins[-1] == {"client": "testclient", "ok": True, "role": "dealer"} and len(logins) == 5


def test_a_lock_out_is_in_the_audit_trail_in_words(client: TestClient, clock: Clock) -> None:
    for _ in range(3):
        client.post("/api/login", json=WRONG)
    clock.now += 31
    rows = client.get("/api/audit", headers={"Authorization": f"Bearer {SUPERVISOR}"}).json()["audit"]
    assert rows[-1]["what"] == "was locked out for 30 s after repeated failed logins"
    assert rows[-1]["who"] == "someone at testclient"


def test_a_good_token_does_not_wipe_the_failures_of_its_address(client: TestClient) -> None:
    client.post("/api/login", json=WRONG)
    client.post("/api/login", json=WRONG)
    assert client.get("/api/state", headers={"Authorization": f"Bearer {SUPERVISOR}"}).status_code == 200
    assert client.post("/api/login", json=WRONG).status_code == 401  # the third: locked now
    assert client.post("/api/login", json={"token": DEALER}).status_code == 429


def test_the_live_feed_counts_a_wrong_token_like_any_login(client: TestClient, table: Table) -> None:
    for _ in range(3):
        with client.websocket_connect("/api/ws") as ws:
            ws.send_json({"after": 0, "token": "guess-guess-guess"})
            assert ws.receive_json()["code"] == 4401
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 0, "token": DEALER})
        refused = ws.receive_json()
        assert refused["code"] == 4429 and "too many failed logins" in refused["error"]
    assert len(lockouts(table)) == 1
