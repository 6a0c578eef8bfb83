"""Seat ratings (GET /api/ratings): a Grand Slam table with its own rules (2 decks, an operator's
POKER BONUS paytable) deals random rounds; the test reads every settled round's file
(GET /api/rounds/{n}/file, the REPLAY.md contract) and its settlement, makes the rating sessions
itself (a seat's session closes after 3 settled rounds without its wagers) and computes each
session's theoretical win with house edges it derives on its own: every three-card sequence
from a 2-deck shoe, by the table card's rules as GAMES.md states them, in exact fractions. The
API must give the same sessions and the same theoretical win, exactly. Jokers 22 and Baseball
poker: the handle, the result and the house's take (time collection; no rake)."""

from __future__ import annotations

import csv
import functools
import io
import itertools
import random
import time
from collections.abc import Mapping
from fractions import Fraction
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

SUP = {"Authorization": "Bearer supervisor-token-0123456789"}
TOKENS = Tokens("dealer-token-0123456789", "supervisor-token-0123456789", "surveillance-token-0123456789")
DECKS = 2
PAYTABLE = {
    "suited three of a kind": 60,
    "straight flush": 40,
    "three of a kind": 25,
    "straight": 5,
    "flush": 4,
    "pair": 1,
}
RULES = {"decks": DECKS, "poker_bonus_paytable": PAYTABLE}
RANKS = range(2, 15)  # 11 J, 12 Q, 13 K, 14 A
OUT = {10, 11, 12, 13, 14}


# -- the house edges, derived here from GAMES.md section 1 ----------------------------------------


def move(base: int, rank: int) -> int | str:
    """Where a stack on `base` (1, 2, 3) goes when it receives `rank`: a base, "home", "out" or
    "slam" (a 4 at first base)."""
    if rank in OUT:
        return "out"
    if base == 1:
        return {2: 3, 3: "home", 4: "slam"}.get(rank, 2)
    if base == 2:
        return "home" if rank in (2, 3) else 3
    return "home"


def base_results(bases: tuple[int, ...], ranks: tuple[int, ...]) -> tuple[dict[int, int], bool, int]:
    """Each wager's result (+1 home, -1 out) when a lone seat betting `bases` is dealt `ranks` in
    order, pass by pass over first, second, third; whether it was a Grand Slam; cards used."""
    where: dict[int, int | str] = {b: b for b in bases}
    cards = iter(ranks)
    used = 0
    for base in (1, 2, 3):
        if base not in where.values():
            continue
        rank = next(cards)
        used += 1
        to = move(base, rank)
        if to == "slam":
            return {b: 1 for b in bases}, True, used
        for wager, at in where.items():
            if at == base:
                where[wager] = to
    return {b: 1 if where[b] == "home" else -1 for b in bases}, False, used


def poker_bonus(cards: tuple[tuple[int, int], ...]) -> int:
    """The paytable's odds for three cards (rank, suit), 0 below the table."""
    ranks = sorted(r for r, _ in cards)
    suited = len({s for _, s in cards}) == 1
    trips = ranks[0] == ranks[2]
    straight = (ranks[1] == ranks[0] + 1 and ranks[2] == ranks[1] + 1) or ranks == [2, 3, 14]
    if trips and suited:
        return PAYTABLE["suited three of a kind"]
    if straight and suited:
        return PAYTABLE["straight flush"]
    if trips:
        return PAYTABLE["three of a kind"]
    if straight:
        return PAYTABLE["straight"]
    if suited:
        return PAYTABLE["flush"]
    if ranks[0] == ranks[1] or ranks[1] == ranks[2]:
        return PAYTABLE["pair"]
    return 0


@functools.cache
def derived_edges() -> dict[str, Fraction]:
    """The house's expected win per chip of each wager (by base and the seat's bases) and side bet,
    over every three cards a seat can be dealt from a full 2-deck shoe, without replacement."""
    total = 52 * DECKS
    deck = [(r, s) for r in RANKS for s in range(4)]
    edges: dict[str, Fraction] = {}
    expected: dict[str, Fraction] = {}
    den = Fraction(1, total * (total - 1) * (total - 2))
    rank_weight: dict[tuple[int, ...], Fraction] = {}
    for cards in itertools.product(deck, repeat=3):
        ways = 1
        for i, card in enumerate(cards):
            ways *= DECKS - cards[:i].count(card)
        if not ways:
            continue
        p = ways * den
        ranks = tuple(r for r, _ in cards)
        rank_weight[ranks] = rank_weight.get(ranks, Fraction(0)) + p
        results, slam, _ = base_results((1, 2, 3), ranks)
        if slam:
            continue  # both side bets push
        odds = poker_bonus(cards)
        expected["poker_bonus"] = expected.get("poker_bonus", Fraction(0)) + p * (odds if odds else -1)
    for ranks, p in rank_weight.items():
        results, slam, _ = base_results((1, 2, 3), ranks)
        if not slam:
            won = all(r in OUT for r in ranks)
            expected["three_outs"] = expected.get("three_outs", Fraction(0)) + p * (15 if won else -1)
        for bases in ((1,), (1, 2), (1, 2, 3)):
            results, _, _ = base_results(bases, ranks)
            shape = "+".join(("first", "second", "third")[b - 1] for b in bases)
            for b in bases:
                key = f"{('first', 'second', 'third')[b - 1]}/{shape}"
                expected[key] = expected.get(key, Fraction(0)) + p * results[b]
    for key, value in expected.items():
        edges[key] = -value
    return edges


def test_the_derivation_gives_the_figures_the_rules_card_states() -> None:
    """The test's own model, checked on what GAMES.md states: P(three outs) with an infinite
    deck is (5/13)^3; with 2 decks, 3 OUT INSURANCE pays only when all three are out cards."""
    p = sum(
        (Fraction(1, 13**3) for ranks in itertools.product(RANKS, repeat=3) if all(r in OUT for r in ranks)),
        Fraction(0),
    )
    assert p == Fraction(5, 13) ** 3
    assert base_results((1, 2), (5, 2, 7)) == ({1: 1, 2: 1}, False, 2)  # 5 to second; 2 sends both home
    assert base_results((1, 2, 3), (4, 14, 14)) == ({1: 1, 2: 1, 3: 1}, True, 1)


# -- the sessions, made here from the round files ------------------------------------------------


def sessions_of(
    rounds: list[tuple[dict[str, Any], dict[str, Any]]], edges: Mapping[str, Fraction]
) -> list[dict[str, Any]]:
    """(place, rounds, handle, theoretical win, player net) of each session, in the order opened
    (seat order within a round)."""
    open_: dict[int, dict[str, Any]] = {}
    done: list[dict[str, Any]] = []
    for number, (file, settlement) in enumerate(rounds):
        nets = {s["seat"]: s["net"] for s in settlement["seats"]}
        here = set()
        for seat in file["seats"]:
            n = seat["seat"]
            here.add(n)
            s = open_.setdefault(
                n,
                {
                    "place": n,
                    "rounds": 0,
                    "handle": {},
                    "theo": Fraction(0),
                    "net": 0,
                    "missed": 0,
                    "first": number,
                },
            )
            s["rounds"] += 1
            s["missed"] = 0
            s["net"] += nets[n]
            bases = [b for b in ("first", "second", "third") if b in seat["wagers"]]
            for b in bases:
                s["theo"] += seat["wagers"][b] * edges[f"{b}/{'+'.join(bases)}"]
                s["handle"][b] = s["handle"].get(b, 0) + seat["wagers"][b]
            for side, amount in seat.get("side_bets", {}).items():
                s["theo"] += amount * edges[side]
                s["handle"][side] = s["handle"].get(side, 0) + amount
        for n in list(open_):
            if n not in here:
                open_[n]["missed"] += 1
                if open_[n]["missed"] >= 3:
                    done.append(open_.pop(n))
    return [
        {"place": s["place"], "rounds": s["rounds"], "handle": s["handle"], "theo": s["theo"], "net": s["net"]}
        for s in sorted([*done, *open_.values()], key=lambda s: (s["first"], s["place"]))
    ]


def table_client(tmp: Path, game: str, rules: dict[str, Any], rounds: int, seed: str) -> tuple[TestClient, Run]:
    table = Table(Journal(tmp / "journal.sqlite3"), game=game, rules=rules, simulated=True)
    clock = Clock(time.time() - 3 * 3600)
    with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
        run = play(table, clock, random.Random(seed), rounds)
    return TestClient(create_app(Runtime(table=table, tokens=TOKENS))), run


def settled_rounds(client: TestClient, run: Run) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for n in sorted(run.settled):
        file = client.get(f"/api/rounds/{n}/file", headers=SUP).json()
        settlement = client.get(f"/api/rounds/{n}", headers=SUP).json()["settlement"]
        out.append((file, settlement))
    return out


def ratings(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    reply = client.get("/api/ratings", params={"window": "4h", **params}, headers=SUP)
    assert reply.status_code == 200, reply.text
    sessions: list[dict[str, Any]] = reply.json()["sessions"]
    return sessions


@pytest.mark.slow
def test_grand_slam_sessions_and_their_exact_theoretical_win(tmp_path: Path) -> None:
    client, run = table_client(tmp_path, "grand-slam", RULES, 60, "ratings-gs")
    rounds = settled_rounds(client, run)
    assert any(seat.get("side_bets") for file, _ in rounds for seat in file["seats"])
    want = sessions_of(rounds, derived_edges())
    got = ratings(client)
    assert [(s["place"], s["rounds"]) for s in got] == [(s["place"], s["rounds"]) for s in want]
    for g, w in zip(got, want, strict=True):
        assert Fraction(g["theoretical_win_exact"]) == w["theo"], g["place"]
        assert g["theoretical_win"] == round(float(w["theo"]), 2)
        assert g["handle"] == dict(sorted(w["handle"].items()))
        assert g["player_net"] == w["net"] and g["actual_win"] == -w["net"]
    assert sum(s["rounds"] for s in got) == sum(len(f["seats"]) for f, _ in rounds)
    # The edges were kept in the state directory: a second read finds them and answers the same.
    assert (tmp_path / "analytics-edges.json").is_file()
    assert ratings(client) == got
    # The CSV export: one row a session, the same figures.
    reply = client.get("/api/ratings", params={"window": "4h", "format": "csv"}, headers=SUP)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(reply.text)))
    assert [(int(r["place"]), int(r["rounds"]), Fraction(r["theoretical_win_exact"])) for r in rows] == [
        (w["place"], w["rounds"], w["theo"]) for w in want
    ]
    assert [int(r["handle_first"]) for r in rows] == [w["handle"].get("first", 0) for w in want]


def test_jokers22_ratings_are_per_player_with_the_time_collection(tmp_path: Path) -> None:
    client, run = table_client(tmp_path, "jokers-22", {"time_fee": 2}, 12, "ratings-j22")
    rounds = settled_rounds(client, run)
    handle: dict[tuple[int, str], int] = {}
    fees: dict[tuple[int, str], int] = {}
    nets: dict[tuple[int, str], int] = {}
    for file, settlement in rounds:
        for spot in file["spots"]:
            for i, w in enumerate(spot["wagers"]):
                key = (spot["spot"], w["player"])
                handle[key] = handle.get(key, 0) + w["amount"]
                fees[key] = fees.get(key, 0) + (2 if i == 0 else 0)
        for p in settlement["players"]:
            key = (p["spot"], p["player"])
            nets[key] = nets.get(key, 0) + p["net"]
    got = ratings(client, close_after=100)  # one session a player over these rounds
    assert {(s["place"], s["player"]): s["handle"]["spot"] for s in got} == handle
    assert {(s["place"], s["player"]): s["house_take"] for s in got} == fees
    assert {(s["place"], s["player"]): s["player_net"] for s in got} == nets
    assert all(s["theoretical_win"] > 0 for s in got)  # the banker's advantage over each player


def test_baseball_poker_has_no_theoretical_win_without_a_rake(tmp_path: Path) -> None:
    client, run = table_client(tmp_path, "baseball-poker", {}, 6, "ratings-bp")
    rounds = settled_rounds(client, run)
    got = ratings(client, close_after=100)
    nets: dict[int, int] = {}
    for _, settlement in rounds:
        for p in settlement["players"]:
            nets[p["seat"]] = nets.get(p["seat"], 0) + p["net"]
    assert {s["place"]: s["player_net"] for s in got} == nets
    assert all(s["theoretical_win_exact"] == "0" and s["actual_win"] == 0 for s in got)


def test_a_bad_close_after_or_format_is_refused_naming_it(tmp_path: Path) -> None:
    client, _ = table_client(tmp_path, "baseball-poker", {}, 1, "ratings-refused")
    for params, name in (({"close_after": 0}, "close_after"), ({"format": "xml"}, "format")):
        reply = client.get("/api/ratings", params={"window": "4h", **params}, headers=SUP)
        assert reply.status_code in (400, 422) and name in reply.json()["error"], reply.text


def test_a_round_that_cannot_be_rated_is_named_not_guessed(tmp_path: Path) -> None:
    """A round index record without its seats (a damaged index that still passes its checksum)
    is refused naming the round and what to do; nothing is rated from a guess."""
    import json
    import sqlite3
    import zlib

    client, run = table_client(tmp_path, "grand-slam", {}, 8, "ratings-damaged")
    number = min(run.settled)
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    (body,) = db.execute("SELECT body FROM rounds WHERE round = ?", (number,)).fetchone()
    record = json.loads(body)
    del record["round_file"]["seats"]
    text = json.dumps(record)
    db.execute(
        "UPDATE rounds SET body = ?, crc = ? WHERE round = ?",
        (text, zlib.crc32(f"{number}\x1f{text}".encode()), number),
    )
    db.commit()
    db.close()
    reply = client.get("/api/ratings", params={"window": "4h"}, headers=SUP)
    assert reply.status_code == 409, reply.text
    assert f"round {number}:" in reply.json()["error"] and "journal rebuild" in reply.json()["error"]


def test_sessions_survive_a_restart_of_the_table(tmp_path: Path) -> None:
    """The daemon stopped mid-session and started again on the same journal: the same sessions,
    the open ones still open, and a round played after the restart joins its seat's session."""
    client, _ = table_client(tmp_path, "grand-slam", {}, 10, "ratings-restart")
    before = ratings(client)
    assert any(s["status"] == "open" for s in before)
    journal = Journal(tmp_path / "journal.sqlite3")
    last = seconds(next(journal.entries(after=journal.last_seq - 1)).at)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    again = TestClient(create_app(Runtime(table=table, tokens=TOKENS)))
    assert ratings(again) == before
    clock = Clock(last + 30)
    with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
        more = play(table, clock, random.Random("after the restart"), 1)
    (number,) = more.settled
    seats = {s["seat"] for s in table.rounds[number].round_file["seats"]}  # type: ignore[index]
    after = ratings(again)
    was_open = {s["place"]: s for s in before if s["status"] == "open"}
    continued = [s for s in after if s["place"] in seats and s["place"] in was_open and s["status"] == "open"]
    continued = [s for s in continued if s["opened"] == was_open[s["place"]]["opened"]]
    assert continued  # the seeded round has a seat whose session was open before the restart
    for s in continued:
        assert s["rounds"] == was_open[s["place"]]["rounds"] + 1
    assert len(after) == len(before) + len(seats - set(was_open))
