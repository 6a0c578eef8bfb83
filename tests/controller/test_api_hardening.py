"""The API's hostile inputs: the credentials are checked before any body is read, the live feed
refuses a bad hello with a close code and words, simulation inputs are as strict as the rest,
and a fault offers only the actions that can clear it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import Card, parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}


class SimShoe:
    def __init__(self) -> None:
        self.stacked: list[Card] = []

    def stack(self, cards: list[Card]) -> None:
        self.stacked[:0] = cards

    def draw(self, count: int) -> list[Card]:
        return []

    def reshuffle(self) -> None:
        pass

    def fault(self, name: str, on: bool) -> str:
        return "ok"


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)


@pytest.fixture
def shoe() -> SimShoe:
    return SimShoe()


@pytest.fixture
def client(table: Table, shoe: SimShoe) -> TestClient:
    return TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), sim=shoe)))


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- credentials before bodies ------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/api/rounds", "/api/rounds/current/void", "/api/faults/1/clear", "/api/sim/shoe", "/api/confirm", "/api/decisions"]
)
@pytest.mark.parametrize("body", [b"{not json", b'{"unknown": 1}', b"[]"])
def test_a_bad_body_without_credentials_is_refused_for_the_credentials(client: TestClient, path: str, body: bytes) -> None:
    refused = client.post(path, content=body, headers={"Content-Type": "application/json"})
    assert refused.status_code == 401 and refused.json()["kind"] == "unauthenticated"


def test_a_bad_body_with_the_wrong_role_is_refused_for_the_role(client: TestClient) -> None:
    refused = client.post("/api/rounds/current/void", content=b"{not json", headers=auth(DEALER))
    assert refused.status_code == 403 and "supervisor" in refused.json()["error"]
    bad = client.post("/api/rounds/current/void", content=b"{not json", headers=auth(SUPERVISOR))
    assert bad.status_code == 422 and bad.json()["error"].startswith("body: not valid JSON")


def test_the_schema_still_shows_every_body_read_after_the_credentials(client: TestClient) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    void = paths["/api/rounds/current/void"]["post"]["requestBody"]
    assert void["required"] and "reason" in void["content"]["application/json"]["schema"]["required"]
    opening = paths["/api/rounds"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "seats" in opening["properties"]  # the table's game's own opening (Grand Slam)
    assert paths["/api/confirm"]["post"]["requestBody"]["required"] is False
    assert "401" in paths["/api/state"]["get"]["responses"]


# -- numbers in the path and the query ---------------------------------------------------------

SURVEILLANCE = "surveillance-token-0123456789"
NO_SUCH_ROUNDS = [2**63, 2**64, -(2**63) - 1, 10**30, -1, 0]


@pytest.fixture
def everyone(table: Table) -> TestClient:
    """The app with a token for each of the three roles."""
    return TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE))))


@pytest.mark.parametrize("number", NO_SUCH_ROUNDS)
@pytest.mark.parametrize(
    ("path", "tokens"),
    [
        ("/api/rounds/{n}", [DEALER, SUPERVISOR, SURVEILLANCE]),
        ("/api/rounds/{n}/file", [SUPERVISOR, SURVEILLANCE]),
        ("/api/rounds/{n}/replay", [SUPERVISOR, SURVEILLANCE]),
    ],
)
def test_a_round_number_no_table_can_have_is_not_found_for_every_role(
    everyone: TestClient, caplog: pytest.LogCaptureFixture, path: str, tokens: list[str], number: int
) -> None:
    for token in tokens:
        answer = everyone.get(path.format(n=number), headers=auth(token))
        assert answer.status_code == 404
        assert answer.json() == {"error": f"there is no round {number} at this table", "kind": "not-found"}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_number_too_long_to_read_is_refused_naming_the_parameter(
    everyone: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    digits = "9" * 5001
    for path, where in [
        (f"/api/rounds/{digits}", "path.number"),
        (f"/api/rounds/{digits}/replay", "path.number"),
        (f"/api/rounds?last={digits}", "query.last"),
        (f"/api/audit?last={digits}", "query.last"),
    ]:
        answer = everyone.get(path, headers=auth(SUPERVISOR))
        assert answer.status_code == 422
        said = f"{where}: must be a whole number, not one 5001 digits long"
        assert answer.json() == {"error": said, "kind": "invalid"}
    refused = everyone.post(f"/api/faults/{digits}/acknowledge", headers=auth(DEALER))
    assert refused.status_code == 422 and refused.json()["error"].startswith("path.fault_id: must be a whole number")
    # A fault id no table has, however large, is no open fault.
    for fault_id in (2**63, -5):
        answer = everyone.post(f"/api/faults/{fault_id}/acknowledge", headers=auth(DEALER))
        assert answer.status_code == 409 and answer.json()["error"] == f"there is no open fault {fault_id}"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- the live feed's hello ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hello", "says"),
    [
        ({"after": 10**30, "token": DEALER}, '"after" must be the last sequence number seen, from 0 to'),
        ({"after": -1, "token": DEALER}, '"after" must be the last sequence number seen'),
        ({"after": "3", "token": DEALER}, '"after" must be the last sequence number seen'),
        ({"after": True, "token": DEALER}, '"after" must be the last sequence number seen'),
        ({"after": 0, "token": DEALER, "since": 3}, "unknown key 'since' in the hello"),
        ({"after": 0, "token": 12345}, '"token" must be the token as text'),
        ([0], "the hello must be an object"),
    ],
)
def test_the_live_feed_refuses_a_bad_hello_with_a_close_code_and_words(client: TestClient, hello: object, says: str) -> None:
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json(hello)
        refused = ws.receive_json()
        assert refused["type"] == "error" and says in refused["error"] and refused["code"] == 4400
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4400


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"after": 0, "token": "\\ud800"}', '"token" must be the token as text'),
        ('{"after": 0, "token": "dealer-\\udfff-token"}', '"token" must be the token as text'),
        ('{"after": ' + "1" * 5001 + ', "token": "' + DEALER + '"}', "the hello has a number too long to read"),
        ('{"after": -' + "1" * 5001 + "}", "the hello has a number too long to read"),
    ],
)
def test_the_live_feed_refuses_a_lone_surrogate_token_or_an_unreadable_number_with_4400(
    client: TestClient, text: str, says: str
) -> None:
    with client.websocket_connect("/api/ws") as ws:
        ws.send_text(text)
        refused = ws.receive_json()
        assert refused["type"] == "error" and refused["code"] == 4400 and refused["error"].startswith(says)
        if "number" in says:
            assert 'send {"after": N} first' in refused["error"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4400


def test_the_live_feed_refuses_a_hello_that_is_not_json_or_not_text(client: TestClient) -> None:
    with client.websocket_connect("/api/ws") as ws:
        ws.send_text("after=0")
        assert "the hello is not JSON" in ws.receive_json()["error"]
    with client.websocket_connect("/api/ws") as ws:
        ws.send_bytes(b'{"after": 0}')
        assert "the hello must be a text message" in ws.receive_json()["error"]
    # The table is unharmed: a good hello still gets the state.
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 0, "token": DEALER})
        assert ws.receive_json()["type"] == "state"


# -- simulation inputs --------------------------------------------------------------------------


def test_a_fault_injection_takes_a_boolean_not_a_word(client: TestClient) -> None:
    refused = client.post("/api/sim/fault", json={"fault": "silent", "on": "yes"}, headers=auth(SUPERVISOR))
    assert refused.status_code == 422 and refused.json()["error"].startswith("body.on:")
    assert client.post("/api/sim/fault", json={"fault": "silent", "on": False}, headers=auth(SUPERVISOR)).json()["on"] is False


def test_the_simulated_shoe_takes_only_cards_the_tables_shoe_holds(client: TestClient, shoe: SimShoe) -> None:
    joker = client.post("/api/sim/shoe", json={"cards": ["5H", "JK"]}, headers=auth(DEALER))
    assert joker.status_code == 422 and joker.json()["field"] == "cards"
    assert "JK cannot come from the 6-deck shoe (it holds 0, not 1)" in joker.json()["error"]
    seven = client.post("/api/sim/shoe", json={"cards": ["AS"] * 7}, headers=auth(DEALER))
    assert seven.status_code == 422 and "holds 6, not 7" in seven.json()["error"]
    assert shoe.stacked == []
    meant = client.post("/api/sim/shoe", json={"cards": ["JK"], "impossible": True}, headers=auth(DEALER))
    assert meant.status_code == 200 and shoe.stacked == [parse_card("JK")]


# -- a fault's actions --------------------------------------------------------------------------


def test_a_joker_in_a_grand_slam_shoe_cannot_be_confirmed_nor_replaced_by_another_joker(
    client: TestClient, table: Table
) -> None:
    table.open_round(ROUND, by="dealer")
    table.card(parse_card("JK"), {"via": "test"})
    fault = client.get("/api/state", headers=auth(SUPERVISOR)).json()["faults"][0]
    assert fault["actions"] == ["replace", "void"] and "a supervisor must replace or void" in fault["message"]
    url = f"/api/faults/{fault['id']}/clear"
    confirm = client.post(url, json={"action": "confirm", "reason": "it is a joker"}, headers=auth(SUPERVISOR))
    assert confirm.status_code == 422 and "cleared by replace, void, not 'confirm'" in confirm.json()["error"]
    again = client.post(url, json={"action": "replace", "card": "jk", "reason": "r"}, headers=auth(SUPERVISOR))
    assert again.status_code == 422 and again.json()["field"] == "card"
    assert "JK cannot come from the 6-deck shoe" in again.json()["error"]
    assert [f["id"] for f in client.get("/api/state", headers=auth(SUPERVISOR)).json()["faults"]] == [fault["id"]]
    done = client.post(url, json={"action": "replace", "card": "5H", "reason": "card is 5H"}, headers=auth(SUPERVISOR))
    assert done.status_code == 200 and not table.blocked


def test_a_card_the_shoe_holds_but_has_dealt_out_can_still_be_confirmed(table: Table) -> None:
    table.open_round({"seats": [{"seat": s, "wagers": {"first": 5}} for s in range(1, 8)], "blind_seat": None}, by="dealer")
    for _ in range(7):  # a 6-deck shoe holds six aces of spades: the seventh stops play
        table.card(parse_card("AS"), {"via": "test"})
        if table.blocked:
            break
    fault = next(iter(table.faults.values()))
    assert fault.code == "impossible-card" and fault.actions == ("confirm", "replace", "void")
