"""GET /api/state answered before FastAPI's routing (controller/api/app.py's `StateReads`): the
same answer as the FastAPI route gives, byte for byte (status, headers, body), for each role by
token and by session, masked as before in a Baseball poker hand with face-down cards; a missing,
malformed or wrong token, a locked-out client and HEAD answered as before (by the route)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from controller.api.app import StateReads, create_app
from controller.api.auth import LoginLimiter, Tokens
from controller.api.deps import caller
from controller.api.errors import ApiError
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
TOKENS = {"dealer": DEALER, "supervisor": SUPERVISOR, "surveillance": SURVEILLANCE}
PLAYERS = {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 3, "stack": 100}]}
# Third street: two down cards a seat, then one up (no 4 up, no queen of spades: no extra card).
CARDS = ["AS", "JD", "7C", "TS", "8D", "6C", "2H", "5D", "9C"]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def rt(tmp_path: Path) -> Runtime:
    table = Table(Journal(tmp_path / "j.sqlite3"), game="baseball-poker", rules={}, simulated=True)
    table.open_round(PLAYERS, by="dealer")
    for card in CARDS:
        assert table.awaiting.kind == "card"
        table.card(parse_card(card), {"via": "test"})
    runtime = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE))
    runtime.limiter = LoginLimiter(limit=3, window_s=60, lockout_s=30, clock=Clock())
    return runtime


def through_fastapi(rt: Runtime) -> FastAPI:
    """The app as it was before StateReads: every GET /api/state through the route."""
    app = create_app(rt)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not StateReads]
    return app


def answer(client: TestClient, **kwargs: object) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    response = client.get("/api/state", **kwargs)  # type: ignore[arg-type]
    return response.status_code, list(response.headers.raw), response.content


def test_each_role_gets_the_routes_answer_byte_for_byte_by_token_and_by_session(rt: Runtime) -> None:
    lean, plain = TestClient(create_app(rt)), TestClient(through_fastapi(rt))
    bodies = {}
    for role, token in TOKENS.items():
        bearer = {"Authorization": f"Bearer {token}"}
        got = answer(lean, headers=bearer)
        assert got == answer(plain, headers=bearer)
        assert got[0] == 200
        assert (b"content-type", b"application/json") in got[1]
        assert (b"cache-control", b"no-store") in got[1]
        assert any(k == b"content-security-policy" for k, _ in got[1])
        bodies[role] = got[2]
    for role, token in TOKENS.items():  # the screens' way: a session cookie, no token
        for client in (lean, plain):  # (each login is journaled: the state changes with it)
            assert client.post("/api/login", json={"token": token}).status_code == 200
        by_session = answer(lean)
        assert by_session == answer(plain) == answer(lean, headers={"Authorization": f"Bearer {token}"})
        assert by_session[2] != bodies[role]  # (a new journal_seq)
        lean.cookies.clear()
        plain.cookies.clear()
    # Masked as before: the dealer sees no face-down card of the live hand; the others see them all.
    down = {"AS", "JD", "7C", "TS", "8D", "6C"}
    assert not any(card.encode() in bodies["dealer"] for card in down)
    for role in ("supervisor", "surveillance"):
        assert all(f'"{card}"'.encode() in bodies[role] for card in down)
    assert bodies["supervisor"] == bodies["surveillance"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer not-a-token-of-this-table"},
        {"Authorization": "Basic " + DEALER},
        {"Authorization": "Bearer "},
    ],
    ids=["no-token", "wrong-token", "not-bearer", "empty-bearer"],
)
def test_a_caller_without_a_valid_token_gets_the_routes_refusal(rt: Runtime, headers: dict[str, str]) -> None:
    lean, plain = TestClient(create_app(rt)), TestClient(through_fastapi(rt))
    got = answer(lean, headers=headers)
    assert got[0] == 401
    assert got == answer(plain, headers=headers)


def test_a_locked_out_client_is_refused_even_with_the_right_token(rt: Runtime) -> None:
    lean, plain = TestClient(create_app(rt)), TestClient(through_fastapi(rt))
    for _ in range(3):
        assert answer(lean, headers={"Authorization": "Bearer guess-guess-guess"})[0] == 401
    right = {"Authorization": f"Bearer {DEALER}"}
    got = answer(lean, headers=right)
    assert got[0] == 429
    assert b"too many failed logins" in got[2]
    assert got == answer(plain, headers=right)


def test_head_and_a_session_less_cookie_are_the_routes(rt: Runtime) -> None:
    lean, plain = TestClient(create_app(rt)), TestClient(through_fastapi(rt))
    head = {"Authorization": f"Bearer {DEALER}"}
    assert lean.head("/api/state", headers=head).status_code == plain.head("/api/state", headers=head).status_code
    lean.cookies.set("tablectl_session", "no-such-session")
    plain.cookies.set("tablectl_session", "no-such-session")
    assert answer(lean) == answer(plain)
    assert answer(lean)[0] == 401


def test_the_state_is_answered_without_fastapis_routing(rt: Runtime) -> None:
    """The lean path answers a valid caller itself: FastAPI's dependency, made to refuse everything
    here, is never asked (the route's answer is the one above)."""
    app = create_app(rt)

    def refuse() -> None:
        raise ApiError("forbidden", "through FastAPI")

    app.dependency_overrides[caller] = refuse
    client = TestClient(app)
    for token in TOKENS.values():
        assert client.get("/api/state", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert client.get("/api/health").status_code == 403  # every other route still goes through it
