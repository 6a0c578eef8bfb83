"""A Jokers 22 table through the API: its own opening body, decisions, refusals naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
AUTH = {"Authorization": f"Bearer {DEALER}"}
SUPERVISOR_AUTH = {"Authorization": "Bearer supervisor-token-0123456789"}
OPENING = {"banker": {"stake": 500}, "spots": [{"spot": 3, "wagers": [{"player": "ann", "amount": 50}]}]}


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="jokers-22", rules={}, simulated=True)


@pytest.fixture
def client(table: Table) -> TestClient:
    return TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, "supervisor-token-0123456789"))))


def test_a_round_with_a_decision_settles_as_its_round_file(client: TestClient, table: Table) -> None:
    assert client.post("/api/rounds", json=OPENING, headers=AUTH).json() == {"round": 1}
    for card in ("9H", "7C", "7D"):  # ann 9, banker 7, ann 16
        table.card(parse_card(card), {"via": "test"})
    state = client.get("/api/state", headers=SUPERVISOR_AUTH).json()
    assert state["awaiting"]["who"] == {"spot": 3, "hand": 1, "player": "ann", "total": "16"}
    assert state["awaiting"]["allowed"] == ["hit", "stand", "double", "surrender"]
    assert state["prompt"] == "Spot 3, ann on 16: hit or stand or double or surrender?"
    answer = client.post("/api/decisions", json={"spot": 3, "action": "stand"}, headers=AUTH)
    assert answer.status_code == 200 and answer.json()["prompt"] == "Deal to the banker"
    for card in ("TS",):  # banker 7 + 10 = 17: stands
        table.card(parse_card(card), {"via": "test"})
    got = client.get("/api/rounds/1", headers=SUPERVISOR_AUTH).json()
    assert got["status"] == "settled"
    assert settle_round_file(client.get("/api/rounds/1/file", headers=SUPERVISOR_AUTH).json()) == got["settlement"]
    assert [(p["player"], p["net"]) for p in got["settlement"]["players"]] == [("ann", -50)]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"banker": {"stake": 500}, "spots": [{"spot": 3, "wagers": [{"player": "ann", "amount": "50"}]}]},
         "body.spots[0].wagers[0].amount: must be a whole number, not '50'"),
        ({"banker": {}, "spots": OPENING["spots"]}, "body.banker.stake: is required"),
        ({"seats": [{"seat": 1, "wagers": {"first": 5}}]}, "body.banker: is required"),
    ],
)
def test_a_bad_opening_is_refused_naming_the_field(client: TestClient, body: dict, says: str) -> None:  # type: ignore[type-arg]
    response = client.post("/api/rounds", json=body, headers=AUTH)
    assert response.status_code == 422 and says in response.json()["error"]


def test_a_decision_when_none_is_due_or_not_allowed_is_refused(client: TestClient, table: Table) -> None:
    assert client.post("/api/decisions", json={"spot": 3, "action": "hit"}, headers=AUTH).status_code == 409
    client.post("/api/rounds", json=OPENING, headers=AUTH)
    for card in ("AH", "7C", "5D"):  # ann A+5 (soft 16), banker 7: no double with an ace
        table.card(parse_card(card), {"via": "test"})
    refused = client.post("/api/decisions", json={"spot": 3, "action": "double"}, headers=AUTH)
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("Spot 3: no double down on a hand holding an ace or a joker")
    assert table.journal.last_seq == 4  # the opening and three cards: the refusals left no entry


def test_a_recalled_round_replays_decision_steps_with_their_question(client: TestClient, table: Table) -> None:
    client.post("/api/rounds", json=OPENING, headers=AUTH)
    for card in ("9H", "7C", "7D"):
        table.card(parse_card(card), {"via": "test"})
    client.post("/api/decisions", json={"spot": 3, "action": "stand"}, headers=AUTH)
    table.card(parse_card("TS"), {"via": "test"})
    steps = client.get("/api/rounds/1/replay", headers=SUPERVISOR_AUTH).json()["steps"]
    asked = [s["prompt"] for s in steps if s["prompt"].endswith("?")]
    assert asked == ["Spot 3, ann on 16: hit or stand or double or surrender?"]
    assert steps[-1]["prompt"] == "Settled"
    assert client.get("/api/state", headers=SUPERVISOR_AUTH).json()["settlement"]["action_spot"] == 3  # the only spot with wagers
