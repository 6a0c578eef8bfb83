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
        "main", "GS-01", "grand-slam", "online", "4", "settled", "18", "-", "4", "845", "910", "21:04:33",
    ]  # fmt: skip
    assert row(text, "J22-3") == [
        "main", "J22-3", "jokers-22", "OFFLINE", "2", "open", "7", "1:", "Shoe", "silent", "-", "-", "-", "20:58:02",
    ]  # fmt: skip
    assert text.splitlines()[0].split()[:3] == ["SITE", "TABLE", "GAME"]


def test_a_repeated_entry_does_not_move_the_board_back_and_an_unreadable_message_is_counted() -> None:
    board = FloorBoard()
    for topic, payload in RECORDED[:4]:
        board.take(topic, payload)
    assert not board.take(*RECORDED[1])  # seq 17 again, after 18: a repeat
    assert not board.take("tablectl/main/GS-01/entry", b"{not json")
    assert not board.take(*msg("GS-01", "entry", seq="18"))
    text = render(board)
    assert row(text, "GS-01")[4:7] == ["4", "settled", "18"]
    assert "2 message(s) not understood; the last: tablectl/main/GS-01/entry: seq must be" in text


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
        publisher = make_publisher(floor_config(mosquitto.broker), table)
        publisher.start()
        deal_rounds(table, 2 if name == "GS-01" else 1)
        assert publisher.wait_acked(table.journal.last_seq, WAIT_S)
        publishers.append(publisher)
    publishers[1].stop()  # GS-02 closes; GS-01 stays open

    code = run(parse_args("--broker", f"mqtt://127.0.0.1:{mosquitto.port}", "--once", "--wait", "5"))
    for publisher in publishers[:1]:
        publisher.stop()

    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == f"tablectl floor: mqtt://127.0.0.1:{mosquitto.port} (connected), 2 table(s)"
    assert row(out, "GS-01")[:4] == [SITE, "GS-01", "grand-slam", "online"]
    assert row(out, "GS-02")[:4] == [SITE, "GS-02", "grand-slam", "OFFLINE"]
    assert row(out, "GS-01")[-4] == "2"  # rounds, from the retained meters
    assert row(out, "GS-02")[-4] == "1"


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (["--broker", "http://floor:80"], "--broker: the scheme must be mqtts:// (TLS) or mqtt://, not 'http'"),
        (["--broker", "mqtts://gs:hunter2@floor"], "--broker: the URL carries a user or password"),
        (["--broker", "mqtt://floor", "--password-file", "/x", "--username", "u"], "only used over TLS; use mqtts://"),
        (["--broker", "mqtt://floor", "--site", "main/#"], "--site: 'main/#' cannot be a topic level"),
    ],
)
def test_floor_refuses_a_bad_argument_and_says_which(
    argv: list[str], refusal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(parse_args(*argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablectl floor: refused: ") and refusal in err
    assert "hunter2" not in err
