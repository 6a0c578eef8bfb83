"""The screens' sessions survive a restart of the daemon (kept in the state directory, mode 0600,
holding neither a session id nor a token), expire on their own clock, end when the role's token
changes, and a screen whose session is gone is told why (GET /api/whoami)."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import Sessions, Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
TOKENS = Tokens(DEALER, SUPERVISOR)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_session_survives_a_restart_in_a_private_file_holding_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    sid = Sessions(path=path, tokens=TOKENS).start("dealer")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    assert sid not in text and DEALER not in text
    assert Sessions(path=path, tokens=TOKENS).role_of(sid) == "dealer"  # the daemon started again


def test_a_session_expires_on_its_own_clock_across_restarts_and_says_so(tmp_path: Path) -> None:
    path, clock = tmp_path / "sessions.json", Clock()
    sid = Sessions(ttl_s=3600, clock=clock, path=path, tokens=TOKENS).start("supervisor")
    clock.now += 3599
    assert Sessions(ttl_s=3600, clock=clock, path=path, tokens=TOKENS).role_of(sid) == "supervisor"
    clock.now += 1
    later = Sessions(ttl_s=3600, clock=clock, path=path, tokens=TOKENS)
    assert later.role_of(sid) is None
    assert later.why(sid) == ("expired", "This screen's session expired (1 hour after its login): log in again.")


def test_new_tokens_end_the_sessions_they_did_not_open_and_say_which(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    first = Sessions(path=path, tokens=TOKENS)
    dealer, supervisor = first.start("dealer"), first.start("supervisor")
    changed = Sessions(path=path, tokens=Tokens("another-dealer-token-0123", SUPERVISOR))
    assert changed.role_of(supervisor) == "supervisor"
    assert changed.role_of(dealer) is None
    assert changed.why(dealer) == (
        "tokens-changed",
        "The table's dealer token has changed since this screen logged in: log in with the new token.",
    )


def test_signed_out_and_unknown_sessions_say_so_and_no_cookie_says_nothing(tmp_path: Path) -> None:
    sessions = Sessions(path=tmp_path / "sessions.json", tokens=TOKENS)
    sid = sessions.start("dealer")
    sessions.end(sid)
    assert sessions.role_of(sid) is None and sessions.why(sid) == (
        "signed-out",
        "This screen was signed out: log in again.",
    )
    assert sessions.why("never-made")[0] == "unknown"  # type: ignore[index]
    assert sessions.why(None) is None


def test_a_damaged_sessions_file_is_said_in_the_log_and_every_screen_logs_in_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "sessions.json"
    sid = Sessions(path=path, tokens=TOKENS).start("dealer")
    doc = json.loads(path.read_text())
    for record in doc["sessions"].values():
        record["role"] = "owner"  # not a role: the file is not trusted, in part or whole
    path.write_text(json.dumps(doc))
    with caplog.at_level(logging.WARNING):
        again = Sessions(path=path, tokens=TOKENS)
    assert again.role_of(sid) is None
    assert "the screens' sessions cannot be read" in caplog.text and str(path) in caplog.text


def test_whoami_after_a_restart_keeps_the_screen_logged_in_or_says_why_not(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"

    def app(tokens: Tokens) -> TestClient:
        table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
        return TestClient(create_app(Runtime(table=table, tokens=tokens, sessions=Sessions(path=path, tokens=tokens))))

    first = app(TOKENS)
    assert first.post("/api/login", json={"token": DEALER}).json() == {"role": "dealer"}
    cookie = {Sessions.COOKIE: first.cookies[Sessions.COOKIE]}
    first.close()
    again = app(TOKENS)
    again.cookies.update(cookie)
    assert again.get("/api/whoami").json() == {"role": "dealer"}
    assert again.get("/api/state", headers={"X-Tablectl": "1"}).status_code == 200
    again.close()
    changed = app(Tokens("another-dealer-token-0123", SUPERVISOR))
    changed.cookies.update(cookie)
    answer = changed.get("/api/whoami").json()
    assert answer["role"] is None and answer["ended"] == "tokens-changed", answer
    assert "dealer token has changed" in answer["why"]
