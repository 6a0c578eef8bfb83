"""Roles, sessions, the CSRF guard, login rate limiting, security headers, the live feed, audit,
config and replay routes: each route tried with no token, a bad token and the wrong role."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from controller.api.app import create_app
from controller.api.auth import LoginLimiter, Tokens
from controller.api.delta import patched
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.games.replay import settle_round_file
from controller.journal.log import Journal, JournalUnwritable
from controller.table import Table
from controller.table.view import prompt, snapshot

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}], "blind_seat": None}

# Every state-changing route, with a body it would accept, and the role it needs.
ROUTES: list[tuple[str, dict[str, Any], str]] = [
    ("/api/rounds", ROUND, "dealer"),
    ("/api/confirm", {}, "dealer"),
    ("/api/shoe/reshuffle", {}, "dealer"),
    ("/api/faults/1/acknowledge", {}, "dealer"),
    ("/api/faults/1/clear", {"action": "dismiss", "reason": "checked"}, "supervisor"),
    ("/api/rounds/current/void", {"reason": "misdeal"}, "supervisor"),
]


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)


@pytest.fixture
def rt(table: Table) -> Runtime:
    return Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), config_view={"table_id": "T-1", "game": "grand-slam"})


@pytest.fixture
def client(rt: Runtime) -> TestClient:
    return TestClient(create_app(rt))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize(("path", "body", "need"), ROUTES)
def test_every_state_changing_route_refuses_no_token_a_bad_token_and_the_wrong_role(
    client: TestClient, table: Table, path: str, body: dict[str, Any], need: str
) -> None:
    before = table.journal.last_seq
    assert client.post(path, json=body).status_code == 401
    assert client.post(path, json=body, headers=bearer("not-the-token-at-all")).status_code == 401
    if need == "supervisor":
        wrong = client.post(path, json=body, headers=bearer(DEALER))
        assert wrong.status_code == 403 and "supervisor" in wrong.json()["error"]
    # Refusals change nothing at the table (failed logins are journaled for the audit, nothing else).
    assert all(e.kind == "login" for e in table.journal.entries(after=before))


def test_the_screens_log_in_with_a_cookie_and_must_send_the_csrf_header(client: TestClient) -> None:
    assert client.get("/api/whoami").json() == {"role": None}
    login = client.post("/api/login", json={"token": DEALER})
    assert login.status_code == 200 and login.json() == {"role": "dealer"}
    cookie = login.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and DEALER not in cookie
    assert client.get("/api/whoami").json() == {"role": "dealer"}
    # A page on another site can make the browser send the cookie, but not this header.
    forged = client.post("/api/rounds", json=ROUND)
    assert forged.status_code == 403 and "X-Tablectl" in forged.json()["error"]
    assert client.post("/api/rounds", json=ROUND, headers={"X-Tablectl": "1"}).status_code == 201
    assert client.post("/api/rounds/current/void", json={"reason": "x"}, headers={"X-Tablectl": "1"}).status_code == 403
    client.post("/api/logout", headers={"X-Tablectl": "1"})
    assert client.get("/api/whoami").json() == {"role": None}
    assert client.post("/api/rounds", json=ROUND, headers={"X-Tablectl": "1"}).status_code == 401


def test_failed_logins_are_rate_limited_per_client_and_journaled(client: TestClient, rt: Runtime, table: Table) -> None:
    rt.limiter = LoginLimiter(limit=3, window_s=60)
    for _ in range(3):
        assert client.post("/api/login", json={"token": "guess-guess-guess"}).status_code == 401
    limited = client.post("/api/login", json={"token": DEALER})  # even the right token waits now
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert "too many failed logins" in limited.json()["error"]
    failures = [e.body for e in table.journal.entries() if e.kind == "login"]
    assert failures == [{"client": "testclient", "ok": False}] * 3 + [{"client": "testclient", "ok": False, "locked_out": 30}]
    audit = client.get("/api/audit", headers=bearer(SUPERVISOR))
    assert audit.status_code == 429  # the same client is locked out of every route that checks a token


def test_responses_carry_security_headers_and_no_cors(client: TestClient) -> None:
    response = client.get("/api/health", headers={"Origin": "https://evil.example"})
    assert "default-src 'self'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["cache-control"] == "no-store"
    assert "access-control-allow-origin" not in response.headers


HSTS = "max-age=31536000"


def every_kind_of_response(client: TestClient) -> list[Any]:
    """A page, a static file, a JSON answer, a login, and refusals: 401, 403, 404, 422."""
    return [
        client.get("/"),
        client.get("/static/css/screens.css"),
        client.get("/api/health"),
        client.post("/api/login", json={"token": DEALER}),
        client.get("/api/state", headers=bearer(DEALER)),
        client.get("/api/config", headers=bearer("not-the-token-at-all")),
        client.get("/api/config", headers=bearer(DEALER)),
        client.get("/api/rounds/99", headers=bearer(DEALER)),
        client.get("/api/rounds?last=0", headers=bearer(DEALER)),
        client.get("/no-such-page"),
    ]


def test_over_https_every_response_tells_the_browser_to_keep_to_https(
    rt: Runtime, table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt.tls = True
    client = TestClient(create_app(rt), base_url="https://testserver")
    responses = every_kind_of_response(client)
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 401, 403, 404, 422, 404]

    # A full disk: the route's refusal, then every POST refused before it reaches a route.
    def full(*_: Any, **__: Any) -> Any:
        raise JournalUnwritable(table.journal.path, "full", "no space left on device")

    monkeypatch.setattr(table.journal, "append", full)
    responses += [client.post("/api/shoe/reshuffle", json={}, headers=bearer(DEALER)) for _ in range(2)]
    assert [r.status_code for r in responses[-2:]] == [503, 503]
    for response in responses:
        assert response.headers.get("strict-transport-security") == HSTS, (response.url, response.status_code)
        assert response.headers["x-frame-options"] == "DENY"


def test_over_plain_http_no_response_claims_https(client: TestClient) -> None:
    for response in every_kind_of_response(client):
        assert "strict-transport-security" not in response.headers, response.url
        assert response.headers["x-frame-options"] == "DENY"


def test_no_secret_appears_in_logs_on_a_failed_login(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        client.post("/api/login", json={"token": "my-secret-guess-123"})
    assert "failed login from" in caplog.text and "my-secret-guess-123" not in caplog.text


def test_audit_lists_who_did_what_when_and_why(client: TestClient, table: Table) -> None:
    table.open_round(ROUND, by="dealer")
    table.card(parse_card("JK"), {"via": "test"})
    fault = snapshot(table)["faults"][0]["id"]  # type: ignore[index]
    client.post(f"/api/faults/{fault}/clear", json={"action": "replace", "card": "5H", "reason": "card is 5H", "name": "Kim"}, headers=bearer(SUPERVISOR))
    client.post("/api/rounds/current/void", json={"reason": "player dispute", "name": "Kim"}, headers=bearer(SUPERVISOR))
    assert client.get("/api/audit", headers=bearer(DEALER)).status_code == 403
    rows = client.get("/api/audit", headers=bearer(SUPERVISOR)).json()["audit"]
    assert [(r["who"], r["what"], r["why"]) for r in rows] == [
        ("supervisor:Kim", f"cleared fault {fault} by replace with 5H", "card is 5H"),
        ("supervisor:Kim", "voided round 1", "player dispute"),
    ]
    assert all(r["at"].endswith("Z") for r in rows)


def test_config_is_read_only_for_the_supervisor(client: TestClient) -> None:
    assert client.get("/api/config").status_code == 401
    assert client.get("/api/config", headers=bearer(DEALER)).status_code == 403
    assert client.get("/api/config", headers=bearer(SUPERVISOR)).json() == {"table_id": "T-1", "game": "grand-slam"}
    assert client.post("/api/config", json={}, headers=bearer(SUPERVISOR)).status_code == 405


def test_a_recalled_round_replays_card_by_card_to_its_settlement(client: TestClient, table: Table) -> None:
    table.open_round(ROUND, by="dealer")
    for card in ("5H", "2C"):
        table.card(parse_card(card), {"via": "test"})
    replay = client.get("/api/rounds/1/replay", headers=bearer(SUPERVISOR)).json()
    steps = replay["steps"]
    assert [s["card"] for s in steps] == [None, "5H", "2C"]
    assert steps[0]["state"]["seats"][0]["stacks"] == {"first": ["first"], "second": ["second"]}
    assert steps[1]["state"]["seats"][0]["stacks"] == {"second": ["second", "first"]}
    assert steps[1]["prompt"] == "Deal to seat 1, second base" and steps[2]["prompt"] == "Settled"
    assert steps[2]["state"]["seats"][0]["stacks"] == {"home": ["second", "first"]}
    assert settle_round_file(client.get("/api/rounds/1/file", headers=bearer(SUPERVISOR)).json())["seats"][0]["net"] == 20


def test_the_confirm_button_from_the_screen_marks_the_round_paid(client: TestClient, table: Table) -> None:
    table.open_round(ROUND, by="dealer")
    for card in ("5H", "2C"):
        table.card(parse_card(card), {"via": "test"})
    assert prompt(table) == "Pay seat 1: 20"
    answer = client.post("/api/confirm", json={}, headers=bearer(DEALER)).json()
    assert answer["prompt"] == "Place wagers and open the round"


def test_the_live_feed_needs_a_login(client: TestClient) -> None:
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 0})
        assert ws.receive_json()["type"] == "error"


def test_the_live_feed_sends_what_was_missed_then_every_new_entry_in_order(client: TestClient, table: Table) -> None:
    client.post("/api/login", json={"token": DEALER})  # journal entry 1: the login
    table.open_round(ROUND, by="dealer")  # 2
    table.card(parse_card("5H"), {"via": "test"})  # 3
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 2})
        missed = ws.receive_json()
        assert (missed["type"], missed["seq"], missed["kind"], missed["live"]) == ("entry", 3, "card", False)
        current = ws.receive_json()
        assert current["type"] == "state" and current["seq"] == 3 and current["state"]["last_card"] == "5H"
        table.card(parse_card("2C"), {"via": "test"})  # 4
        live = ws.receive_json()
        # A live entry carries what it changed of the state (the screen applies it to the one it has).
        after = patched(current["state"], live["changes"])
        assert (live["seq"], live["kind"], live["live"], after["round_status"]) == (4, "card", True, "settled")
        assert after == client.get("/api/state", headers=bearer(DEALER)).json()
        assert "state" not in live and "game_info" not in json.dumps(live["changes"])  # not the whole state again
        assert any(e["kind"] == "grand-slam.seat-settled" for e in live["effects"])
    # Reconnecting after seq 4 misses nothing and repeats nothing.
    table.button("confirm", by="dealer")  # 5
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 4})
        first, second = ws.receive_json(), ws.receive_json()
        assert (first["type"], first["seq"], second["type"], second["seq"]) == ("entry", 5, "state", 5)


def test_the_live_feed_takes_a_token_in_its_first_message_not_in_the_url(client: TestClient) -> None:
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 0, "token": SUPERVISOR})
        assert ws.receive_json()["type"] == "state"


# -- the live feed and the page that opens it (cross-site WebSocket hijacking) -----------------

FOREIGN_ORIGINS = [
    "https://evil.example",
    "http://testserver.evil.example",
    "http://testserver:8080",  # another port is another site
    "https://testserver",  # this server is served over plain HTTP
    "null",  # a sandboxed frame or a file
    "http://evil.example@testserver",
]


def refused_for_origin(client: TestClient, origin: str, hello: dict[str, Any]) -> dict[str, Any]:
    """What a page from `origin` gets when it opens the live feed: the refusal, then close 4403."""
    with client.websocket_connect("/api/ws", headers={"Origin": origin}) as ws:
        ws.send_json(hello)
        refused: dict[str, Any] = ws.receive_json()
        assert refused["type"] == "error", f"a page from {origin} was sent the table: {refused}"
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()  # nothing of the table comes before the close
        assert closed.value.code == 4403
    return refused


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_a_page_from_another_site_cannot_open_the_live_feed_with_the_screens_cookie(
    client: TestClient, origin: str
) -> None:
    assert client.post("/api/login", json={"token": SUPERVISOR}).json() == {"role": "supervisor"}
    assert "tablectl_session" in client.cookies  # the browser would send it to the table with the page's request
    refused = refused_for_origin(client, origin, {"after": 0})
    assert refused["type"] == "error" and refused["code"] == 4403
    assert refused["error"].startswith("the live feed is for this table's own screens, not a page from")
    # The table's own page, with the same cookie, gets the feed.
    with client.websocket_connect("/api/ws", headers={"Origin": "http://testserver"}) as ws:
        ws.send_json({"after": 0})
        assert ws.receive_json()["type"] == "entry"


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS[:2])
def test_a_page_from_another_site_cannot_open_the_live_feed_with_a_token_either(client: TestClient, origin: str) -> None:
    refused = refused_for_origin(client, origin, {"after": 0, "token": DEALER})
    assert refused["code"] == 4403 and "not a page from" in refused["error"]


def test_a_script_without_an_origin_and_the_tables_own_page_still_open_the_live_feed(client: TestClient) -> None:
    with client.websocket_connect("/api/ws") as ws:  # a script sends no Origin
        ws.send_json({"after": 0, "token": DEALER})
        assert ws.receive_json()["type"] == "state"
    for own in ("http://testserver", "HTTP://TestServer:80"):
        with client.websocket_connect("/api/ws", headers={"Origin": own}) as ws:
            ws.send_json({"after": 0, "token": DEALER})
            assert ws.receive_json()["type"] == "state"


def test_under_tls_the_live_feeds_own_origin_is_https(rt: Runtime) -> None:
    rt.tls = True
    client = TestClient(create_app(rt))
    with client.websocket_connect("/api/ws", headers={"Origin": "https://testserver"}) as ws:
        ws.send_json({"after": 0, "token": DEALER})
        assert ws.receive_json()["type"] == "state"
    refused = refused_for_origin(client, "http://testserver", {"after": 0, "token": DEALER})
    assert refused["code"] == 4403 and "'http://testserver'" in refused["error"]
