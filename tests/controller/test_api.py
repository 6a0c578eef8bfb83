"""The HTTP API on a real Table and journal (no devices): routes, roles, errors in plain words."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import TokenError, Tokens, load_tokens
from controller.api.runtime import Runtime
from controller.engine.base import RuleError
from controller.engine.cards import Card, parse_card
from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"


class FakeShoe:
    """Stands in for the simulated shoe: what is drawn goes to the table as a shoe card would."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.stacked: list[Card] = []

    def stack(self, cards: list[Card]) -> None:
        self.stacked[:0] = cards

    def draw(self, count: int) -> list[Card]:
        drawn, self.stacked = self.stacked[:count], self.stacked[count:]
        for card in drawn:
            self.table.card(card, {"via": "test"})
        return drawn

    def fault(self, name: str, on: bool) -> str:
        if name != "silent":
            raise ValueError(f"unknown fault {name!r}")
        return "ok"


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)


@pytest.fixture
def client(table: Table) -> TestClient:
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), sim=FakeShoe(table))
    return TestClient(create_app(rt))


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10, "third": 5}}, {"seat": 4, "wagers": {"first": 20}}], "blind_seat": None}


def test_health_says_simulated_and_the_game(client: TestClient) -> None:
    assert client.get("/api/health", headers=auth(SUPERVISOR)).json() == {
        "status": "ok", "simulated": True, "game": "grand-slam", "table": "TABLE-1", "journal_seq": 0,
        "version": importlib.metadata.version("tablectl"), "message": "SIMULATED table",
    }


def test_a_whole_round_through_the_api_settles_as_replay_does(client: TestClient) -> None:
    opened = client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    assert opened.status_code == 201 and opened.json() == {"round": 1}
    assert client.get("/api/rounds/1", headers=auth(SUPERVISOR)).json()["status"] == "open"
    assert client.get("/api/rounds/1/file", headers=auth(SUPERVISOR)).status_code == 409
    client.post("/api/sim/shoe", json={"cards": ["5H", "KD", "2C", "9S"]}, headers=auth(DEALER))
    assert client.post("/api/sim/draw", json={"count": 4}, headers=auth(DEALER)).json() == {"drawn": ["5H", "KD", "2C", "9S"]}
    got = client.get("/api/rounds/1", headers=auth(SUPERVISOR)).json()
    assert got["status"] == "settled"
    file = client.get("/api/rounds/1/file", headers=auth(SUPERVISOR)).json()
    assert settle_round_file(file) == got["settlement"]
    assert [(s["seat"], s["net"]) for s in got["settlement"]["seats"]] == [(1, 25), (4, -20)]
    state = client.get("/api/state", headers=auth(SUPERVISOR)).json()
    assert state["prompt"] == "Pay seat 1: 25" and state["last_card"] == "9S"
    meters = client.get("/api/meters", headers=auth(SUPERVISOR)).json()
    assert meters["rounds"] == 1 and meters["total_wagered"] == 45 and meters["wagered"]["first"] == 30


@pytest.mark.parametrize(
    ("headers", "status", "says"),
    [({}, 401, "log in first"), (auth("nope"), 401, "not valid for this table"), ({"Authorization": "Basic abc"}, 401, "bearer")],
)
def test_posts_need_a_valid_token(client: TestClient, headers: dict[str, str], status: int, says: str) -> None:
    response = client.post("/api/rounds", json=ROUND, headers=headers)
    assert response.status_code == status and says in response.json()["error"]
    assert response.headers.get("www-authenticate") == "Bearer"


def test_supervisor_actions_refuse_the_dealer_token(client: TestClient) -> None:
    client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    response = client.post("/api/rounds/current/void", json={"reason": "x"}, headers=auth(DEALER))
    assert response.status_code == 403 and "supervisor" in response.json()["error"]
    ok = client.post("/api/rounds/current/void", json={"reason": "misdeal", "name": "Kim"}, headers=auth(SUPERVISOR))
    assert ok.status_code == 200
    assert client.get("/api/rounds/1", headers=auth(SUPERVISOR)).json()["settlement"]["void"] == {"by": "supervisor:Kim", "reason": "misdeal"}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"seats": [{"seat": 1, "wagers": {"first": 5, "second": 9}}]}, 422, "Seat 1: the wager on second (9) may not exceed the wager on first (5) (seats[0].wagers.second)"),
        ({"seats": [{"seat": 9, "wagers": {"first": 5}}]}, 422, "seats[0].seat: seats are numbered 1 to 7"),
        ({"seats": [{"seat": 1, "wagers": {"first": 5}}], "extra": 1}, 422, "body: unknown key 'extra'"),
        ({"seats": [{"seat": 1, "wagers": {"first": "5"}}]}, 422, "body.seats[0].wagers.first: must be a whole number, not '5'"),
        ({"seats": [{"wagers": {"first": 5}}]}, 422, "body.seats[0].seat: is required"),
    ],
)
def test_bad_rounds_are_refused_with_field_seat_and_rule(client: TestClient, body: dict, status: int, says: str) -> None:  # type: ignore[type-arg]
    response = client.post("/api/rounds", json=body, headers=auth(DEALER))
    assert response.status_code == status and says in response.json()["error"]


def test_body_that_is_not_json_is_refused(client: TestClient) -> None:
    response = client.post("/api/rounds", content=b"{not json", headers={**auth(DEALER), "Content-Type": "application/json"})
    assert response.status_code == 422 and response.json()["error"].startswith("body: not valid JSON")


def test_a_second_round_while_one_is_open_is_a_conflict(client: TestClient) -> None:
    client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    response = client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    assert response.status_code == 409 and "round 1 is still being dealt" in response.json()["error"]


def test_a_fault_blocks_play_until_a_supervisor_clears_it_with_a_reason(client: TestClient, table: Table) -> None:
    client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    table.card(parse_card("JK"), {"via": "test"})
    health = client.get("/api/health", headers=auth(SUPERVISOR)).json()
    assert health["status"] == "fault"
    fault = client.get("/api/state", headers=auth(SUPERVISOR)).json()["faults"][0]
    # A joker cannot come from a Grand Slam shoe: confirming it would only stop play again.
    assert fault["code"] == "impossible-card" and fault["actions"] == ["replace", "void"]
    url = f"/api/faults/{fault['id']}/clear"
    assert client.post(url, json={"action": "replace", "card": "5H"}, headers=auth(SUPERVISOR)).status_code == 422
    assert client.post(url, json={"action": "replace", "reason": "r", "card": "5H"}, headers=auth(DEALER)).status_code == 403
    cleared = client.post(url, json={"action": "replace", "reason": "shoe read a joker; card is 5H", "card": "5H"}, headers=auth(SUPERVISOR))
    assert cleared.status_code == 200
    assert client.get("/api/health", headers=auth(SUPERVISOR)).json()["status"] == "ok"
    assert client.get("/api/state", headers=auth(SUPERVISOR)).json()["last_card"] == "5H"  # the card in play is the replacement
    assert client.get("/api/rounds/1", headers=auth(SUPERVISOR)).json()["cards"] == ["5H"]


def test_unknown_rounds_and_faults_are_404_and_409(client: TestClient) -> None:
    assert client.get("/api/rounds/7", headers=auth(SUPERVISOR)).status_code == 404
    response = client.post("/api/faults/99/clear", json={"action": "dismiss", "reason": "x"}, headers=auth(SUPERVISOR))
    assert response.status_code == 409 and "no open fault 99" in response.json()["error"]


def test_sim_routes_validate_their_input(client: TestClient) -> None:
    assert client.post("/api/sim/shoe", json={"cards": ["ZZ"]}, headers=auth(DEALER)).status_code == 422
    assert client.post("/api/sim/draw", json={"count": 0}, headers=auth(DEALER)).status_code == 422
    assert client.post("/api/sim/fault", json={"fault": "meteor"}, headers=auth(SUPERVISOR)).status_code == 422


def test_sim_routes_are_absent_on_a_table_without_a_simulated_shoe(table: Table) -> None:
    client = TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR))))
    response = client.post("/api/sim/draw", json={"count": 1}, headers=auth(DEALER))
    assert response.status_code == 404 and "no simulated shoe" in response.json()["error"]


def test_recall_lists_the_last_rounds(client: TestClient) -> None:
    for _ in range(3):
        client.post("/api/rounds", json={"seats": [{"seat": 2, "wagers": {"first": 5}}]}, headers=auth(DEALER))
        client.post("/api/sim/shoe", json={"cards": ["3C"]}, headers=auth(DEALER))
        client.post("/api/sim/draw", json={"count": 1}, headers=auth(DEALER))
        client.post("/api/confirm", json={}, headers=auth(DEALER))  # paid
    rounds = client.get("/api/rounds", params={"last": 2}, headers=auth(SUPERVISOR)).json()["rounds"]
    assert [r["round"] for r in rounds] == [2, 3] and all(r["status"] == "settled" for r in rounds)
    assert all(r["paid"] and r["payment"] == "paid" for r in rounds)


def test_tokens_come_from_the_environment_or_files_and_a_real_table_needs_them(tmp_path: Path) -> None:
    env = {"TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
    assert load_tokens(simulated=False, env=env) == Tokens(DEALER, SUPERVISOR)
    (tmp_path / "sup").write_text(SUPERVISOR + "\n")
    env = {"TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN_FILE": str(tmp_path / "sup")}
    assert load_tokens(simulated=False, env=env).supervisor == SUPERVISOR
    with pytest.raises(TokenError, match="a real table needs its API tokens: set TABLECTL_DEALER_TOKEN"):
        load_tokens(simulated=False, env={})
    with pytest.raises(TokenError, match="too short"):
        load_tokens(simulated=False, env={"TABLECTL_DEALER_TOKEN": "short", "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR})
    made = load_tokens(simulated=True, env={})
    assert made.generated and made.dealer != made.supervisor and len(made.dealer) >= 16
    assert made.role_of(made.dealer) == "dealer" and made.role_of(made.supervisor) == "supervisor" and made.role_of("x") is None


def test_a_new_shoe_is_loaded_between_rounds(table: Table) -> None:
    shoe = FakeShoe(table)
    client = TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), sim=shoe)))
    client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    refused = client.post("/api/shoe/reshuffle", json={}, headers=auth(DEALER))
    assert refused.status_code == 409 and "load a new shoe between rounds" in refused.json()["error"]
    client.post("/api/rounds/current/void", json={"reason": "new shoe"}, headers=auth(SUPERVISOR))
    assert client.post("/api/shoe/reshuffle", json={}, headers=auth(DEALER)).status_code == 200
    assert table.shoe.dealt_count == 0


def test_a_refused_opening_names_the_field_and_the_seat_as_json_fields(client: TestClient, table: Table) -> None:
    body = {"seats": [{"seat": 4, "wagers": {"first": 10, "second": 10, "third": 20}}], "blind_seat": None}
    answer = client.post("/api/rounds", json=body, headers=auth(DEALER))
    assert answer.status_code == 422
    got = answer.json()
    assert got["kind"] == "invalid" and got["field"] == "seats[0].wagers.third" and got["seat"] == 4
    # Said as the dealer reads it: the seat, the rule, then where in the body.
    assert got["error"] == "Seat 4: the wager on third (20) may not exceed the wager on second (10) (seats[0].wagers.third)"
    assert table.journal.last_seq == 0  # a refused opening leaves no trace


def test_an_error_says_its_kind_and_the_status_code_follows_the_kind(client: TestClient) -> None:
    assert client.post("/api/rounds", json=ROUND, headers=auth(DEALER)).status_code == 201
    again = client.post("/api/rounds", json=ROUND, headers=auth(DEALER))
    assert again.status_code == 409 and again.json()["kind"] == "conflict"
    assert again.json()["error"] == "round 1 is still being dealt; settle or void it first"
    missing = client.get("/api/rounds/99", headers=auth(SUPERVISOR))
    assert missing.status_code == 404 and missing.json()["kind"] == "not-found"
    nobody = client.post("/api/confirm")
    assert nobody.status_code == 401 and nobody.json()["kind"] == "unauthenticated"
    dealer_voids = client.post("/api/rounds/current/void", json={"reason": "x"}, headers=auth(DEALER))
    assert dealer_voids.status_code == 403 and dealer_voids.json()["kind"] == "forbidden"


def test_a_grand_slam_table_takes_no_decisions(client: TestClient) -> None:
    answer = client.post("/api/decisions", json={"spot": 1, "action": "hit"}, headers=auth(DEALER))
    assert answer.status_code == 409
    assert answer.json() == {"error": "Grand Slam has no decisions: the cards decide every round", "kind": "conflict"}


def test_a_malformed_opening_names_the_field_it_found_wrong(client: TestClient) -> None:
    body = {"seats": [{"seat": 1, "wagers": {"first": 10}}, {"seat": 2, "wagers": {"first": "ten"}}]}
    answer = client.post("/api/rounds", json=body, headers=auth(DEALER))
    assert answer.status_code == 422
    assert answer.json()["field"] == "seats[1].wagers.first"
    assert answer.json()["error"] == "body.seats[1].wagers.first: must be a whole number, not 'ten'"


@pytest.mark.parametrize(
    ("seats", "status", "field", "says"),
    [
        ([], 422, "seats", "a round needs at least one seat with a wager"),  # the engine's rule, not the body's shape
        ([{"seat": 1, "wagers": {"first": 5}, "side_bets": None}], 201, None, None),  # no side bets, as a round file may say
    ],
)
def test_the_api_takes_an_opening_as_replay_takes_it_in_a_round_file(
    client: TestClient, seats: list[dict], status: int, field: str | None, says: str | None  # type: ignore[type-arg]
) -> None:
    """One model reads the opening body and the round file (issue 29 point 3): what replay
    refuses in a round file the API refuses in the same words; what it accepts, the API opens."""
    round_file = {"game": "grand-slam", "seats": seats, "blind_seat": None, "cards": ["3C", "3D"]}
    response = client.post("/api/rounds", json={"seats": seats}, headers=auth(DEALER))
    assert response.status_code == status, response.json()
    if says is None:
        assert settle_round_file(round_file)["seats"][0]["net"] == 5  # type: ignore[index]
    else:
        assert response.json()["field"] == field and says in response.json()["error"]
        with pytest.raises(RuleError) as refused:
            settle_round_file(round_file)
        assert refused.value.field == field and refused.value.rule == says
