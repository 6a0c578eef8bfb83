"""Property-based fuzzing of the whole API from its own OpenAPI schema (schemathesis), against a
simulated Baseball poker table (face-down cards, decisions, every route), once for each role and
once without credentials: no 5xx, every response as the schema says (status, content type,
body), the table alive after every request, and a refused request changing nothing at the
table. A bounded number of examples per operation keeps the run short."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from controller.api.app import create_app
from controller.api.auth import LoginLimiter, Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import Card, parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
TOKENS = {"dealer": DEALER, "supervisor": SUPERVISOR, "surveillance": SURVEILLANCE}
EXAMPLES = 6  # per operation and role: the run stays well under a minute


class SimShoe:
    """The simulated shoe's controls: what is drawn reaches the table as a shoe's card would."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.stacked: list[Card] = []

    def stack(self, cards: list[Card]) -> None:
        self.stacked[:0] = cards

    def draw(self, count: int) -> list[Card]:
        drawn, self.stacked = self.stacked[:count], self.stacked[count:]
        for card in drawn:
            self.table.card(card, {"via": "fuzz"})
        return drawn

    def reshuffle(self) -> None:
        self.stacked.clear()

    def fault(self, name: str, on: bool) -> str:
        return f"{name} {'on' if on else 'off'}"


def build(tmp_path: Path) -> tuple[FastAPI, Table]:
    table = Table(Journal(tmp_path / "fuzz.sqlite3"), game="baseball-poker", rules={}, simulated=True)
    rt = Runtime(
        table=table,
        tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE),
        sim=SimShoe(table),
        sim_pins=lambda: {"GPIO4": []},
        config_view={"game": "baseball-poker"},
        # The limiter has its own tests: here a wrong login must not lock the fuzzer out of the rest.
        limiter=LoginLimiter(limit=10**9),
    )
    app = create_app(rt)
    with TestClient(app) as client:  # a hand in play: down cards to hide, decisions to take
        client.post(
            "/api/rounds",
            json={"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}]},
            headers={"Authorization": f"Bearer {DEALER}"},
        )
    for text in ("AS", "KD", "TS", "8D", "2H", "5D"):
        table.card(parse_card(text), {"via": "fuzz"})
    return app, table


# The schema is the app's own, loaded once at import (schemathesis makes one test per operation).
_WORKDIR = tempfile.TemporaryDirectory(prefix="tablectl-fuzz-")
SERVED = build(Path(_WORKDIR.name))
# Probes with other methods: two are enough to show a route refuses what it does not serve.
CONFIG = SchemathesisConfig.from_dict({"phases": {"coverage": {"unexpected-methods": ["TRACE", "DELETE"]}}})
schema = schemathesis.openapi.from_asgi("/api/openapi.json", SERVED[0], config=CONFIG)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[FastAPI, Table]]:
    yield SERVED
    SERVED[1].journal.close()
    _WORKDIR.cleanup()


def table_view(table: Table) -> str:
    """What a refused request must not change: the table's state, faults and rounds."""
    from controller.table.view import snapshot

    snap = dict(snapshot(table))
    snap.pop("journal_seq")
    return json.dumps(snap, sort_keys=True, default=str)


FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@schema.parametrize()
@FUZZ
def test_without_credentials_every_route_holds_to_its_schema(case: Any, served: tuple[FastAPI, Table]) -> None:
    fuzz(case, None, served)


@schema.parametrize()
@FUZZ
def test_as_the_dealer_every_route_holds_to_its_schema(case: Any, served: tuple[FastAPI, Table]) -> None:
    fuzz(case, "dealer", served)


@schema.parametrize()
@FUZZ
def test_as_the_supervisor_every_route_holds_to_its_schema(case: Any, served: tuple[FastAPI, Table]) -> None:
    fuzz(case, "supervisor", served)


@schema.parametrize()
@FUZZ
def test_as_surveillance_every_route_holds_to_its_schema(case: Any, served: tuple[FastAPI, Table]) -> None:
    fuzz(case, "surveillance", served)


CALLS = [0]


def fuzz(case: Any, role: str | None, served: tuple[FastAPI, Table]) -> None:
    CALLS[0] += 1
    _, table = served
    headers = {"Authorization": f"Bearer {TOKENS[role]}"} if role else {}
    before, seq = table_view(table), table.journal.last_seq
    response = case.call(headers=headers)
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]}"
    case.validate_response(
        response,
        checks=[status_code_conformance, content_type_conformance, response_schema_conformance],
        headers=headers,
    )
    if response.status_code >= 400:
        assert table_view(table) == before, f"{case.method} {case.formatted_path} was refused but changed the table"
        journaled = {e.kind for e in table.journal.entries(after=seq)}
        assert journaled <= {"login"}, f"{case.method} {case.formatted_path} was refused but journaled {journaled}"
    asked = case.method.upper() == case.operation.method.upper()  # not a probe with another method
    if asked and role is None and case.path not in ("/api/login", "/api/logout", "/api/whoami", "/api/health", "/api/openapi.json"):
        assert response.status_code == 401, f"{case.method} {case.formatted_path} answered {response.status_code} without a role"
    if CALLS[0] % 10 == 0:  # the table still answers (and at the end, test_the_table_is_alive_after_the_fuzzing)
        assert_alive(case.operation.schema)


def assert_alive(api: Any) -> None:
    health = api.transport.send(api["/api/health"]["GET"].Case(), headers={"Authorization": f"Bearer {SUPERVISOR}"})
    assert health.status_code == 200 and health.json()["journal_seq"] >= 1


def test_the_table_is_alive_after_the_fuzzing(served: tuple[FastAPI, Table]) -> None:
    # The four runs above did run. Under pytest-xdist schemathesis makes one test of each run, with
    # far fewer calls (116 calls against 3,804 without it): `make test` runs this file apart, without xdist.
    assert CALLS[0] > 1000, f"only {CALLS[0]} fuzzing calls ran: run this file without xdist, as `make test` does"
    assert_alive(schema)
    with TestClient(served[0]) as client:
        state = client.get("/api/state", headers={"Authorization": f"Bearer {DEALER}"})
    assert state.status_code == 200 and state.json()["game"] == "baseball-poker"
