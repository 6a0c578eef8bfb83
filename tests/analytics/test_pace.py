"""Pace from the journal (GET /api/pace): a table is driven on the test's own clock, each wait
of a known kind (betting, dealing, a player's decision, paying, a shuffle, a fault, a voided
round), and the API must find again, to the millisecond, the dealer's seconds in each phase,
the shuffles and faults apart, and the rounds an hour they give; each round's settlement time
is the one the test saw."""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.analytics.pace import seconds
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
from tests.analytics.timeline import Clock, Run, play

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
SUP = {"Authorization": f"Bearer {SUPERVISOR}"}


def close(a: float, b: float) -> bool:
    """Equal to the millisecond (the journal's times are whole milliseconds)."""
    return abs(a - b) < 0.0015


@pytest.fixture(scope="module", params=["grand-slam", "jokers-22"])
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, Run]:
    game = request.param
    path: Path = tmp_path_factory.mktemp(game) / "journal.sqlite3"
    table = Table(Journal(path), game=game, rules={}, simulated=True)
    clock = Clock(time.time() - 5 * 3600)
    with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
        run = play(table, clock, random.Random(f"pace-{game}"), 45, dealers=("dealer:ann", "dealer:bo"))
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE), config_view={"game": game})
    return TestClient(create_app(rt)), run


def pace(client: TestClient, window: str = "6h") -> dict[str, Any]:
    reply = client.get(f"/api/pace?window={window}", headers=SUP)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def test_rounds_an_hour_count_only_the_dealers_time(played: tuple[TestClient, Run]) -> None:
    client, run = played
    got = pace(client)
    assert run.faults and run.shuffles and run.voided  # the seeded run has each kind of stop
    assert got["rounds"] == len(run.settled)
    assert got["voids"] == len(run.voided)
    assert close(got["dealer_s"], run.dealer_s)
    assert got["rounds_per_hour"] == round(len(run.settled) * 3600 / run.dealer_s, 2)
    for phase in ("betting", "dealing", "decisions", "paying"):
        assert close(got["phases"][phase], run.seconds(phase)), phase
    assert got["shuffles"] == {"count": run.shuffles, "seconds": pytest.approx(run.seconds("shuffle"), abs=0.0015)}
    assert got["faults"]["by_kind"] == dict(run.faults)
    assert got["faults"]["count"] == sum(run.faults.values())
    assert close(got["faults"]["seconds"], run.seconds("fault"))
    assert close(got["void_s"], run.seconds("void"))
    assert got["idle_s"] == 0


def test_each_round_settles_when_the_table_said_it_did(played: tuple[TestClient, Run]) -> None:
    client, run = played
    times = {r["round"]: r for r in pace(client)["round_times"]}
    for number, at in run.settled.items():
        assert close(seconds(times[number]["settled"]), at), number
        assert times[number]["paid"] is not None and seconds(times[number]["paid"]) > at
        assert times[number]["dealer"] == run.dealers[number]
    for number in run.voided:
        assert times[number]["settled"] is None and times[number]["voided"] is not None


def test_pace_per_dealer_adds_up_to_the_tables(played: tuple[TestClient, Run]) -> None:
    client, run = played
    got = pace(client)
    dealers = got["dealers"]
    assert set(dealers) == {"dealer:ann", "dealer:bo"}
    want = {d: sum(1 for n, who in run.dealers.items() if who == d and n in run.settled) for d in dealers}
    assert {d: v["rounds"] for d, v in dealers.items()} == want
    assert close(sum(v["seconds"] for v in dealers.values()), got["dealer_s"])


def test_the_chart_counts_every_round_once(played: tuple[TestClient, Run]) -> None:
    client, run = played
    got = pace(client)
    chart = got["chart"]
    assert sum(point["rounds"] for point in chart) == len(run.settled)
    # An hour a point, on whole hours, from the hour the window starts in to its end.
    hours = [seconds(p["from"]) for p in chart]
    assert all(h % 3600 == 0 for h in hours) and all(b - a == 3600 for a, b in itertools.pairwise(hours))
    assert hours[0] <= seconds(got["from"]) < hours[0] + 3600
    assert hours[-1] < seconds(got["to"]) <= hours[-1] + 3600


def test_a_window_that_is_not_one_is_refused_naming_it(played: tuple[TestClient, Run]) -> None:
    client, _ = played
    for bad in ("forever", "0h", "8w", "30d"):
        reply = client.get(f"/api/pace?window={bad}", headers=SUP)
        assert reply.status_code == 400 or reply.status_code == 422, reply.text
        assert "window" in reply.json()["error"]
    assert client.get("/api/pace", headers={"Authorization": f"Bearer {DEALER}"}).status_code == 403
