"""Seats per game from the table's layout: each game's most seats (GAMES.md: 7 for Grand Slam and
Jokers 22, 8 for a stud table), the table's own count from its config (`table.seats`, default 7),
and the engine refusing a seat beyond it with the field and the rule; a round file (which has no
seat count, REPLAY.md) may use every seat of its game's table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.app.config import ConfigError, load
from controller.engine.base import RuleError
from controller.engine.cards import parse_card
from controller.games.baseball.rules import GAME as BASEBALL
from controller.games.grand_slam.rules import GAME as GRAND_SLAM
from controller.games.replay import settle_round_file
from controller.journal.log import Journal
from controller.table import Table, TableError
from controller.table.view import snapshot
from controller.testing import replay, tablectl
from tests.eight_seats import COMMUNITY, NETS, eight_seat_hand


def config(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "table.toml"
    path.write_text(text)
    return load(path, simulated=True)


# --- the config --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[table]\ngame = "baseball-poker"\nseats = 9\n', "table.seats: a Baseball poker table seats at most 8 (GAMES.md), not 9"),
        ("[table]\nseats = 8\n", "table.seats: a Grand Slam table seats at most 7 (GAMES.md), not 8"),
        ('[table]\ngame = "jokers-22"\nseats = 8\n', "table.seats: a Jokers 22 table seats at most 7 (GAMES.md), not 8"),
        ("[table]\nseats = 0\n", "table.seats: must be a whole number from 1 to 99, not 0"),
        ('[table]\nseats = "8"\n', "table.seats: must be a whole number"),
    ],
)  # fmt: skip
def test_a_seat_count_the_games_table_does_not_have_is_refused_naming_the_key(
    tmp_path: Path, text: str, says: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        config(tmp_path, text)
    assert str(refused.value).startswith(f"{tmp_path / 'table.toml'}: {says}")


def test_a_table_seats_seven_unless_its_config_says_and_a_stud_table_may_seat_eight(tmp_path: Path) -> None:
    assert load(None, simulated=True).seats == 7
    assert config(tmp_path, '[table]\ngame = "baseball-poker"\n').seats == 7
    assert config(tmp_path, '[table]\ngame = "baseball-poker"\nseats = 8\n').seats == 8
    assert config(tmp_path, "[table]\nseats = 5\n").seats == 5


def test_run_with_another_game_refuses_a_seat_count_that_game_does_not_have(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('[table]\ngame = "baseball-poker"\nseats = 8\n')
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--sim", "--config", str(path), "--game", "grand-slam",
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "--game grand-slam" in done.stderr and "table.seats: a Grand Slam table seats at most 7" in done.stderr


# --- the engine and the table ------------------------------------------------------------------


def table(tmp_path: Path, game: str, seats: int | None, **rules: Any) -> Table:
    return Table(Journal(tmp_path / "journal.sqlite3"), game=game, rules=rules, simulated=True, seats=seats)


def test_the_engine_refuses_a_seat_beyond_the_tables_count_naming_the_field_and_the_rule(tmp_path: Path) -> None:
    six = table(tmp_path / "gs", "grand-slam", 6)
    with pytest.raises(TableError) as refused:
        six.open_round(
            {"seats": [{"seat": 2, "wagers": {"first": 5}}, {"seat": 7, "wagers": {"first": 5}}]}, by="dealer"
        )
    assert refused.value.field == "seats[1].seat"
    assert str(refused.value) == "seats[1].seat: seats are numbered 1 to 6, not 7 (this table seats 6: table.seats = 6)"
    with pytest.raises(TableError, match=r"^blind_seat: seats are numbered 1 to 6, not 7 \(this table seats 6"):
        six.open_round({"seats": [{"seat": 6, "wagers": {"first": 5}}], "blind_seat": 7}, by="dealer")
    assert six.journal.last_seq == 0  # a refused opening leaves no trace
    assert six.open_round({"seats": [{"seat": 6, "wagers": {"first": 5}}]}, by="dealer") == 1

    eight = table(tmp_path / "bb8", "baseball-poker", 8)
    seven_of_eight = table(tmp_path / "bb", "baseball-poker", 7)
    players = {"players": [{"seat": 1, "stack": 50}, {"seat": 8, "stack": 50}]}
    with pytest.raises(TableError) as refused:
        seven_of_eight.open_round(players, by="dealer")
    assert refused.value.field == "players[1].seat"
    assert "seats are numbered 1 to 7, not 8 (this table seats 7: table.seats = 7)" in str(refused.value)
    assert eight.open_round(players, by="dealer") == 1

    spots = table(tmp_path / "j22", "jokers-22", 3)
    with pytest.raises(TableError, match=r"^spots\[0\]\.spot: spots are numbered 1 to 3, not 4 \(this table seats 3"):
        spots.open_round(
            {"banker": {"stake": 100}, "spots": [{"spot": 4, "wagers": [{"player": "a", "amount": 5}]}]}, by="dealer"
        )


def test_a_table_refuses_a_seat_count_its_game_does_not_have(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"table\.seats: a Grand Slam table seats 1 to 7, not 8"):
        table(tmp_path, "grand-slam", 8)


def test_the_journaled_opening_carries_the_tables_count_so_a_restart_keeps_the_round(tmp_path: Path) -> None:
    eight = table(tmp_path, "baseball-poker", 8)
    eight.open_round({"players": [{"seat": 7, "stack": 50}, {"seat": 8, "stack": 50}]}, by="dealer")
    opened = [e for e in eight.journal.entries() if e.kind == "round-open"]
    assert [e.body["event"]["table_seats"] for e in opened] == [8]
    # The config now says 7 seats: the round journaled at the 8-seat table is restored as it was...
    again = Table(eight.journal, game="baseball-poker", rules={}, simulated=True, seats=7)
    assert [s.seat for s in again.state.seats] == [7, 8] and again.awaiting.kind == "card"
    assert snapshot(again)["game_info"]["seats"] == 7
    # ...and the next hand is dealt at the table the config describes.
    again.void(by="supervisor", reason="the table was re-seated")
    with pytest.raises(TableError, match=r"this table seats 7"):
        again.open_round({"players": [{"seat": 7, "stack": 50}, {"seat": 8, "stack": 50}]}, by="dealer")


# --- an eight-player stud hand ------------------------------------------------------------------


def test_the_engine_deals_eight_players_to_the_showdown_with_the_community_card(tmp_path: Path) -> None:
    doc = eight_seat_hand()
    eight = table(tmp_path, "baseball-poker", 8, **doc["rules"])
    eight.open_round({"players": doc["players"]}, by="dealer")
    actions = iter(doc["actions"])
    cards = iter(doc["cards"])
    saw_community = False
    while (awaiting := eight.awaiting).kind != "round":
        if awaiting.kind == "card":
            saw_community |= awaiting.target.get("community") is True
            eight.card(parse_card(next(cards)), {"via": "shoe"})
        else:
            eight.decide(next(actions), by="dealer")
    assert saw_community and next(cards, None) is None and next(actions, None) is None
    settled = eight.current.settlement if eight.current else None
    assert settled is not None and settled["showdown"] and settled["community"] == [COMMUNITY]
    assert {p["seat"]: p["net"] for p in settled["players"]} == NETS
    winner = next(p for p in settled["players"] if p["seat"] == 8)
    assert winner["hand"]["category"] == "four of a kind" and COMMUNITY in winner["hand"]["best"]
    assert all(len(p["cards"]) == 6 for p in settled["players"])  # the 7th card is the community card
    assert settle_round_file(eight.game.round_file(eight.state)) == settled


def test_tablectl_replay_settles_an_eight_seat_round_file_and_refuses_seat_nine(tmp_path: Path) -> None:
    doc = eight_seat_hand()
    out = replay(doc)
    assert out["community"] == [COMMUNITY] and {p["seat"]: p["net"] for p in out["players"]} == NETS
    nine = {**doc, "players": [*doc["players"][:7], {"seat": 9, "stack": 100}]}
    done = tablectl("replay", "-", stdin=json.dumps(nine))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith(
        "players[7].seat: seats are numbered 1 to 8, not 9 (a Baseball poker table seats at most 8)"
    ), done.stderr


def test_a_round_file_without_a_seat_count_may_use_every_seat_of_its_game_but_no_more() -> None:
    assert len(BASEBALL.parse_round_file(eight_seat_hand()).open.players) == 8  # type: ignore[attr-defined]
    opening = GRAND_SLAM.parse_round_file(
        {"game": "grand-slam", "seats": [{"seat": 8, "wagers": {"first": 5}}], "cards": []}
    ).open
    with pytest.raises(RuleError, match=r"^seats\[0\]\.seat: seats are numbered 1 to 7, not 8 \(a Grand Slam"):
        GRAND_SLAM.apply(GRAND_SLAM.initial(), opening)
    with pytest.raises(RuleError, match=r"^players\[1\]\.seat: seats are numbered 1 to 6, not 8 \(this table seats 6"):
        BASEBALL.parse_round_file(
            {**eight_seat_hand(), "players": [{"seat": 1, "stack": 9}, {"seat": 8, "stack": 9}]}, seats=6
        )
