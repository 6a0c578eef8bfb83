"""Dealers as a supervisor sees them: the supervisor keeps the dealer list (journaled), a dealer
signs in with their own id at the start of a down (checked against the list, through the API as
the dealer screen does it), each round records who dealt it, and GET /api/dealers/figures and
`tablectl report` give each dealer's and each down's rounds, rounds an hour (the dealer's time
only), voids, dead cards, payout corrections and the faults caused and cleared: the test's own
account of what it did, down by down. Then the supervisor's own rating sessions: opened for a
player id typed (or scanned) and closed on the supervisor's word, and still there after a
restart of the table."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.analytics.pace import iso
from controller.api.app import create_app
from controller.api.runtime import Runtime
from controller.engine.cards import CardError, parse_card
from controller.journal.log import Journal
from controller.table import Table
from tests.analytics.test_ratings import RULES, SUP, TOKENS
from tests.analytics.test_report import Shift
from tests.analytics.timeline import Clock, Run, play

DEALER = {"Authorization": "Bearer dealer-token-0123456789"}
SURVEILLANCE = {"Authorization": "Bearer surveillance-token-0123456789"}
LIST = [{"id": "A17", "name": "Ann Lee"}, {"id": "B22", "name": "Bo Chen"}, {"id": "c-9", "name": ""}]
#: The downs the test deals: who signs in (as typed on the screen), how many rounds.
SEED = "downs"  # a seed whose downs have voids and faults of several kinds
DOWNS = (("A17", 9), ("b22", 7), ("A17", 6))


def a_card_in_the_shoe(table: Table) -> str:
    for text in ("2H", "7C", "9D", "KS", "5S", "3C"):
        try:
            table.shoe.check(parse_card(text))
        except CardError:
            continue
        return text
    raise AssertionError("the shoe holds none of the test's cards")


class Floor(Shift):
    """A Grand Slam table played down by down, the sign-ins through the API."""

    def __init__(self, root: Path) -> None:
        self.state = root / "state"
        self.config = root / "table.toml"
        self.config.write_text(
            f'[table]\nid = "GS-7"\ngame = "grand-slam"\n\n[state]\ndir = "{self.state}"\n', encoding="utf-8"
        )
        self.table = Table(Journal(self.state / "journal.sqlite3"), game="grand-slam", rules=RULES, simulated=True)
        self.client = TestClient(create_app(Runtime(table=self.table, tokens=TOKENS)))
        self.start = time.time() - 5 * 3600
        self.runs: list[Run] = []
        self.refusals: list[tuple[int, str]] = []
        clock = Clock(self.start)
        rng = random.Random(SEED)
        with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
            self.refused("/api/dealers/sign-in", {"dealer": "A17"}, DEALER)  # no list yet
            reply = self.client.post("/api/dealers", json={"dealers": LIST, "reason": "shift roster"}, headers=SUP)
            assert reply.status_code == 200, reply.text
            for i, (code, rounds) in enumerate(DOWNS):
                clock.tick(20_000)
                reply = self.client.post("/api/dealers/sign-in", json={"dealer": code}, headers=DEALER)
                assert reply.status_code == 200, reply.text
                clock.tick(20_000)
                run = play(self.table, clock, rng, rounds)
                self.runs.append(run)
                clock.tick(5_000)
                # A card read after the round: dead (no seat is owed one), the dealer's.
                self.table.card(parse_card(a_card_in_the_shoe(self.table)), {"via": "test"})
                clock.tick(5_000)
                if i != 1:  # the camera saw a payout short: corrected, the fault dismissed
                    fault = self.table.raise_fault("payout-mismatch", "seat 2 paid 10 short")
                    clock.tick(30_000)
                    self.table.clear_fault(fault.seq, "dismiss", by="supervisor:sue", reason="paid the 10")
                    run.faults["payout-mismatch"] += 1
            clock.tick(10_000)
            reply = self.client.post("/api/dealers/sign-out", json={}, headers=DEALER)
            assert reply.status_code == 200, reply.text
            self.signed_out = clock.now()
        self.end = clock.now() + 1

    def refused(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        reply = self.client.post(path, json=body, headers=headers)
        assert reply.status_code >= 400, reply.text
        self.refusals.append((reply.status_code, reply.json()["error"]))
        return dict(reply.json())


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Floor:
    return Floor(tmp_path_factory.mktemp("dealers"))


def expected_downs(floor: Floor) -> list[dict[str, Any]]:
    out = []
    for (code, _), run in zip(DOWNS, floor.runs, strict=True):
        faults = Counter(run.faults)
        out.append(
            {
                "dealer": code.upper(),
                "rounds": len(run.settled),
                "rounds_per_hour": round(len(run.settled) * 3600 / run.dealer_s, 2),
                "voids": len(run.voided),
                "dead_cards": 1,
                "payout_corrections": faults["payout-mismatch"],
                "faults": dict(sorted(faults.items())),
                "faults_cleared": sum(faults.values()),
            }
        )
    return out


FIELDS = (
    "dealer",
    "rounds",
    "rounds_per_hour",
    "voids",
    "dead_cards",
    "payout_corrections",
    "faults",
    "faults_cleared",
)


def test_the_list_and_the_sign_in_are_checked_and_said(floor: Floor) -> None:
    assert floor.refusals[0][0] == 409 and "no dealer list yet" in floor.refusals[0][1]
    c = floor.client
    # Only the supervisor keeps the list; a bad id is named where it is.
    assert c.post("/api/dealers", json={"dealers": LIST}, headers=DEALER).status_code == 403
    bad = c.post("/api/dealers", json={"dealers": [*LIST, {"id": "no spaces", "name": "x"}]}, headers=SUP)
    assert bad.status_code == 422 and "dealers[3].id" in bad.json()["error"]
    twice = c.post("/api/dealers", json={"dealers": [*LIST, {"id": "a17", "name": "again"}]}, headers=SUP)
    assert twice.status_code == 422 and "dealers[3].id 'a17': already on the list" in twice.json()["error"]
    wrong = c.post("/api/dealers/sign-in", json={"dealer": "Z99"}, headers=DEALER)
    assert wrong.status_code == 422 and "'Z99' is not on this table's dealer list" in wrong.json()["error"]
    assert c.post("/api/dealers/sign-in", json={"dealer": "A17"}, headers=SURVEILLANCE).status_code == 403
    # Nobody is signed in after the sign-out; the list stands as the supervisor journaled it.
    doc = c.get("/api/dealers", headers=DEALER).json()
    assert doc["on"] is None and doc["dealers"] == LIST
    assert c.post("/api/dealers/sign-out", json={}, headers=DEALER).status_code == 409
    # The audit trail says who set the list and who signed in and out.
    audit = [(r["who"], r["what"]) for r in c.get("/api/audit", params={"last": 500}, headers=SUP).json()["audit"]]
    assert ("supervisor", "set the dealer list: A17, B22, c-9") in audit
    assert [w for _, w in audit if w.startswith("dealer ")] == [
        "dealer A17 signed in", "dealer B22 signed in", "dealer A17 signed in", "dealer A17 signed out"
    ]  # fmt: skip


def test_each_round_records_who_dealt_it(floor: Floor) -> None:
    rounds = {e.round: e.body for e in floor.table.journal.entries() if e.kind == "round-open"}
    for (code, _), run in zip(DOWNS, floor.runs, strict=True):
        for number in run.dealers:
            assert rounds[number]["dealer"] == code.upper(), number


def test_figures_per_dealer_and_per_down_are_the_tests_own(floor: Floor) -> None:
    doc = floor.client.get("/api/dealers/figures", params={"window": "8h"}, headers=SUP).json()
    want = expected_downs(floor)
    assert sum(w["voids"] for w in want) and sum(len(w["faults"]) for w in want) > 2  # something to find
    got = [{k: d[k] for k in FIELDS} for d in doc["downs"]]
    assert got == want
    assert [d["name"] for d in doc["downs"]] == ["Ann Lee", "Bo Chen", "Ann Lee"]
    assert doc["downs"][-1]["to"] == iso(floor.signed_out)
    for name in ("A17", "B22"):
        mine = [w for w in want if w["dealer"] == name]
        d = doc["dealers"][name]
        assert d["rounds"] == sum(w["rounds"] for w in mine)
        assert d["voids"] == sum(w["voids"] for w in mine)
        assert d["dead_cards"] == len(mine)
        assert d["payout_corrections"] == sum(w["payout_corrections"] for w in mine)
        assert d["faults"] == dict(sorted(sum((Counter(w["faults"]) for w in mine), Counter()).items()))
        assert d["faults_cleared"] == sum(w["faults_cleared"] for w in mine)
        assert d["money"]["rounds"] == d["rounds"]
    # Every second of each dealer's is the test's: rounds an hour from the dealing time it spent.
    spent = {"A17": floor.runs[0].dealer_s + floor.runs[2].dealer_s, "B22": floor.runs[1].dealer_s}
    for name, secs in spent.items():
        assert doc["dealers"][name]["dealer_s"] == pytest.approx(secs, abs=0.002)


@pytest.mark.slow
def test_the_report_says_the_same_per_dealer_and_per_down(floor: Floor) -> None:
    api = floor.client.get("/api/dealers/figures", params={"window": "8h"}, headers=SUP).json()
    doc = json.loads(floor.report("--json"))
    assert doc["downs"] == api["downs"]
    for name in ("A17", "B22"):
        assert {k: v for k, v in doc["dealers"][name].items() if k != "name"} == api["dealers"][name]
    text = floor.report()
    assert "Downs: 3" in text and "A17 (Ann Lee)" in text


def test_a_supervisors_rating_session_holds_the_player_id_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    table = Table(Journal(path), game="grand-slam", rules=RULES, simulated=True)
    client = TestClient(create_app(Runtime(table=table, tokens=TOKENS)))
    clock = Clock(time.time() - 3 * 3600)
    rng = random.Random("slip")
    with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
        play(table, clock, rng, 3)
        clock.tick(10_000)
        body = {"action": "open", "place": 2, "player": "  P-1001 "}  # as a scanner types it, with spaces
        assert client.post("/api/ratings/sessions", json=body, headers=DEALER).status_code == 403
        reply = client.post("/api/ratings/sessions", json=body, headers=SUP)
        assert reply.status_code == 201, reply.text
        opened = clock.now()
        before = table.round_no or 0
        play(table, clock, rng, 8)
        seat2 = [
            n for n in range(before + 1, (table.round_no or 0) + 1)
            if table.rounds[n].status == "settled" and any(s["seat"] == 2 for s in table.rounds[n].round_file["seats"])
        ]  # fmt: skip
        clock.tick(10_000)
        reply = client.post("/api/ratings/sessions", json={"action": "close", "place": 2}, headers=SUP)
        assert reply.status_code == 201, reply.text
        closed = clock.now()
        clock.tick(5_000)
        reply = client.post(
            "/api/ratings/sessions", json={"action": "open", "place": 5, "player": "P-2002"}, headers=SUP
        )
        assert reply.status_code == 201
        still_open = clock.now()
        no_id = client.post("/api/ratings/sessions", json={"action": "open", "place": 3}, headers=SUP)
        assert no_id.status_code == 422 and "player" in no_id.json()["error"]
        far = client.post("/api/ratings/sessions", json={"action": "open", "place": 9, "player": "x"}, headers=SUP)
        assert far.status_code == 422 and "places are 1 to 7" in far.json()["error"]
    table.journal.close()
    # A restart: a new table on the same journal, a new API.
    again = Table(Journal(path), game="grand-slam", rules=RULES, simulated=True)
    client = TestClient(create_app(Runtime(table=again, tokens=TOKENS)))
    reply = client.get("/api/ratings", params={"window": "4h", "close_after": 100}, headers=SUP)
    sessions = {s["player"]: s for s in reply.json()["sessions"] if s["player"]}
    slip = sessions["P-1001"]
    assert (slip["place"], slip["status"], slip["opened_by"]) == (2, "closed", "supervisor")
    assert (slip["opened"], slip["closed"]) == (iso(opened), iso(closed))
    assert slip["rounds"] == len(seat2)
    handle: Counter[str] = Counter()
    for n in seat2:
        for s in again.rounds[n].round_file["seats"]:
            if s["seat"] == 2:
                handle.update({**s["wagers"], **s.get("side_bets", {})})
    assert slip["handle"] == dict(sorted(handle.items()))
    waiting = sessions["P-2002"]
    assert (waiting["place"], waiting["status"], waiting["rounds"], waiting["opened"]) == (
        5,
        "open",
        0,
        iso(still_open),
    )
