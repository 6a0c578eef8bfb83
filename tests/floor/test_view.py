"""The floor view: the board rendered from recorded messages, and `--once` against a real broker."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from controller.floor.view import FloorBoard, add_arguments, render, run

from .conftest import SITE, WAIT_S, Mosquitto, deal_rounds, floor_config, make_publisher, make_table


def msg(table: str, topic_kind: str, boot: str = "b1", **fields: Any) -> tuple[str, bytes]:
    """A message as hardware/floor.md documents it."""
    payload = {"v": 1, "site": "main", "table": table, "boot": boot, **fields}
    return f"tablectl/main/{table}/{topic_kind}", json.dumps(payload).encode()


SILENT = {"id": 40, "code": "shoe-silent", "title": "Shoe silent", "message": "The shoe has been silent for 3 s"}
RECORDED = [
    msg("GS-01", "status", status="online", game="grand-slam", at="2026-01-05T21:00:00.000Z"),
    msg("GS-01", "entry", seq=17, at="2026-01-05T21:04:31.120Z", round=4, kind="round-open", body={}),
    msg("GS-01", "entry", seq=18, at="2026-01-05T21:04:33.002Z", round=4, kind="card", body={"card": "AS"}),
    msg("GS-01", "settlement", seq=18, at="2026-01-05T21:04:33.002Z", round=4, status="settled", settlement={}),
    msg("GS-01", "meters", seq=18, game="grand-slam", meters={"rounds": 4, "total_wagered": 845, "total_paid": 910}),
    msg("J22-3", "status", status="online", game="jokers-22"),
    msg("J22-3", "entry", seq=7, at="2026-01-05T20:58:02.500Z", round=2, kind="round-open", body={}),
    msg("J22-3", "fault", seq=8, raised=[SILENT], cleared=[], open=[SILENT]),
    msg("J22-3", "status", status="offline", game="jokers-22", reason="connection lost"),
]


def row(text: str, table: str) -> list[str]:
    line = next(line for line in text.splitlines() if f" {table} " in line)
    return line.split()


def test_the_board_shows_each_tables_game_status_round_faults_and_meters() -> None:
    board = FloorBoard()
    for topic, payload in RECORDED:
        board.take(topic, payload)
    text = render(board)

    assert row(text, "GS-01") == [
        "main", "-", "GS-01", "grand-slam", "online", "4", "settled", "18", "-", "4", "845", "910", "21:04:33",
    ]  # fmt: skip
    assert row(text, "J22-3") == [
        "main", "-", "J22-3", "jokers-22", "OFFLINE", "2", "open", "7", "1:", "Shoe", "silent", "-", "-", "-",
        "20:58:02",
    ]  # fmt: skip
    assert text.splitlines()[0] == "2 table(s): 1 with faults, 1 OFFLINE"
    assert text.splitlines()[1].split()[:4] == ["SITE", "PIT", "TABLE", "GAME"]


def test_a_repeated_entry_does_not_move_the_board_back_and_an_unreadable_message_is_counted() -> None:
    board = FloorBoard()
    for topic, payload in RECORDED[:4]:
        board.take(topic, payload)
    assert not board.take(*RECORDED[1])  # seq 17 again, after 18: a repeat
    assert not board.take("tablectl/main/GS-01/entry", b"{not json")
    assert not board.take(*msg("GS-01", "entry", seq="18"))
    text = render(board)
    assert row(text, "GS-01")[5:8] == ["4", "settled", "18"]
    assert "2 message(s) not understood; the last: tablectl/main/GS-01/entry: seq must be" in text


def floor_of(count: int) -> FloorBoard:
    """`count` tables over 4 pits, as their messages make them; every 97th faulted, every 89th offline."""
    board = FloorBoard()
    for n in range(count):
        table = f"T{n:04d}"
        status = "offline" if n % 89 == 5 else "online"
        board.take(*msg(table, "status", status=status, game="grand-slam", pit=f"pit-{n % 4}"))
        board.take(*msg(table, "entry", seq=100 + n, at="2026-01-05T21:04:31.120Z", round=9, kind="card", body={}))
        board.take(*msg(table, "meters", seq=100 + n, game="grand-slam", meters={"rounds": 9, "total_wagered": 90}))
        if n % 97 == 3:
            board.take(*msg(table, "fault", seq=100 + n, raised=[SILENT], cleared=[], open=[SILENT]))
    return board


def test_at_a_thousand_tables_faulted_then_offline_tables_come_first_and_a_pit_can_be_chosen() -> None:
    board = floor_of(1000)
    faulted = [f"T{n:04d}" for n in range(1000) if n % 97 == 3]
    offline = [f"T{n:04d}" for n in range(1000) if n % 89 == 5 and n % 97 != 3]

    lines = render(board).splitlines()
    assert lines[0] == f"1000 table(s): {len(faulted)} with faults, 12 OFFLINE"
    tables = [line.split()[2] for line in lines[2:]]
    assert len(tables) == 1000
    assert sorted(tables[: len(faulted)]) == faulted  # every faulted table on top ...
    assert sorted(tables[len(faulted) : len(faulted) + len(offline)]) == offline  # ... then the offline ones
    rest = tables[len(faulted) + len(offline) :]
    assert rest == sorted(rest, key=lambda t: (int(t[1:]) % 4, t))  # then by pit, then table

    pit = render(board, pit="pit-3").splitlines()
    assert pit[0].endswith("in pit pit-3") and all(line.split()[1] == "pit-3" for line in pit[2:])
    assert len(pit) - 2 == 250
    by_table = [line.split()[2] for line in render(board, sort="table").splitlines()[2 + len(faulted) + len(offline) :]]
    assert by_table == sorted(by_table)


def test_on_a_terminal_the_board_fits_the_screen_and_says_how_many_are_not_shown() -> None:
    board = floor_of(1000)
    lines = render(board, "tablectl floor: mqtt://floor:1883 (connected), 1000 table(s)", rows=40).splitlines()
    assert len(lines) <= 40
    assert lines[-1] == "... 964 more table(s) not shown: choose one pit with --pit or a site with --site"
    on_screen = [line.split()[2] for line in lines[3:-1]]
    assert {f"T{n:04d}" for n in range(1000) if n % 97 == 3} <= set(on_screen)  # every faulted table is on it
    assert "(no table in pit pit-9)" in render(board, pit="pit-9")


def test_an_empty_floor_says_no_table_has_published() -> None:
    assert "(no table has published yet)" in render(FloorBoard())


def parse_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="tablectl floor")
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_floor_once_lists_every_table_publishing_on_the_broker(
    mosquitto: Mosquitto, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    publishers = []
    for name in ("GS-01", "GS-02"):
        table = make_table(tmp_path / name, name)
        pit = "pit-1" if name == "GS-01" else "pit-2"  # the table's floor.pit, carried in its status
        publisher = make_publisher(floor_config(mosquitto.broker, pit=pit), table)
        publisher.start()
        deal_rounds(table, 2 if name == "GS-01" else 1)
        assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
        publishers.append(publisher)
    publishers[1].stop()  # GS-02 closes; GS-01 stays open

    broker = f"mqtt://127.0.0.1:{mosquitto.port}"
    code = run(parse_args("--broker", broker, "--once", "--wait", "5"))
    out = capsys.readouterr().out
    one_pit = run(parse_args("--broker", broker, "--once", "--wait", "5", "--pit", "pit-1"))
    pit_out = capsys.readouterr().out
    for publisher in publishers[:1]:
        publisher.stop()

    assert code == 0 and one_pit == 0
    assert out.splitlines()[0] == f"tablectl floor: mqtt://127.0.0.1:{mosquitto.port} (connected), 2 table(s)"
    assert out.splitlines()[1] == "2 table(s): 0 with faults, 1 OFFLINE"
    assert row(out, "GS-01")[:5] == [SITE, "pit-1", "GS-01", "grand-slam", "online"]
    assert row(out, "GS-02")[:5] == [SITE, "pit-2", "GS-02", "grand-slam", "OFFLINE"]
    assert row(out, "GS-01")[-4] == "2"  # rounds, from the retained meters
    assert row(out, "GS-02")[-4] == "1"
    assert pit_out.splitlines()[1] == "1 table(s): 0 with faults, 0 OFFLINE in pit pit-1"
    assert " GS-01 " in pit_out and " GS-02 " not in pit_out


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (["--broker", "http://floor:80"], "--broker: the scheme must be mqtts:// (TLS) or mqtt://, not 'http'"),
        (["--broker", "mqtts://gs:hunter2@floor"], "--broker: the URL carries a user or password"),
        (["--broker", "mqtt://floor", "--password-file", "/x", "--username", "u"], "only used over TLS; use mqtts://"),
        (["--broker", "mqtt://floor", "--site", "main/#"], "--site: 'main/#' cannot be a topic level"),
        (["--broker", "mqtt://floor", "--pit", "pit 1"], "--pit: 'pit 1' cannot be a topic level"),
        (["--broker", "mqtt://floor", "--http", "10.0.0.5:8090"], "needs --http-password-file"),
        (["--broker", "mqtt://floor", "--http", "127.0.0.1:99999"], "a port from 1 to 65535"),
        (["--broker", "mqtt://floor", "--http-password-file", "/x"], "it needs --http"),
    ],
)
def test_floor_refuses_a_bad_argument_and_says_which(
    argv: list[str], refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parse_args(*argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablectl floor: refused: ") and refusal in err
    assert "hunter2" not in err
