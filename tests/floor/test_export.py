"""`tablectl floor export`: a table's stored entries in order, and `--check` against the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli.main import main
from controller.floor.store import StoredEntry, open_store

from .conftest import SITE, Mosquitto, deal_rounds, floor_config, make_publisher, make_table


def _fill(url: str, seqs: list[int], reported: int) -> None:
    store = open_store(url)
    store.add([StoredEntry(SITE, "GS-01", n, "b1", f"2026-12-01T08:00:0{n % 10}.000Z", 1, "card", {"card": "AS"})
               for n in seqs])  # fmt: skip
    store.reported(SITE, "GS-01", reported)
    store.close()


def test_export_json_prints_every_stored_entry_in_journal_order_one_object_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    _fill(url, [2, 1, 3], 3)
    assert main(["floor", "export", "--store", url, "--table", "GS-01", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(x["table"], x["boot"], x["seq"], x["kind"]) for x in lines] == [("GS-01", "b1", n, "card") for n in (1, 2, 3)]
    assert lines[0]["entry"] == {"seq": 1, "at": "2026-12-01T08:00:01.000Z", "round": 1, "kind": "card",
                                 "body": {"card": "AS"}}  # fmt: skip


def test_check_exits_1_and_names_the_missing_entries_when_the_store_lacks_what_the_table_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    _fill(url, [1, 2, 5, 6], 9)
    assert main(["floor", "export", "--store", url, "--table", "GS-01", "--check"]) == 1
    out = capsys.readouterr().out
    assert out == f"{SITE}/GS-01: the table last told the store its journal ends at 9; the store holds 4 of 9: MISSING 3-4, 7-9\n"
    _fill(url, [3, 4, 7, 8, 9], 9)
    assert main(["floor", "export", "--store", url, "--table", "GS-01", "--check"]) == 0
    assert capsys.readouterr().out.endswith("the store holds 9 of 9: complete\n")


def test_check_asks_the_table_itself_and_exits_1_when_the_table_has_more_than_the_store(
    mosquitto: Mosquitto, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = make_table(tmp_path)
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    deal_rounds(table, 2)
    url = f"sqlite://{tmp_path}/floor.db"
    _fill(url, [1, 2], 2)  # the store believes the table has 2 entries
    try:
        code = main(["floor", "export", "--store", url, "--table", "GS-01", "--check",
                     "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"])  # fmt: skip
    finally:
        publisher.stop()
    last = table.journal.last_seq
    assert code == 1
    missing = "3" if last == 3 else f"3-{last}"
    assert capsys.readouterr().out == (
        f"{SITE}/GS-01: the table says its journal ends at {last}; the store holds 2 of {last}: MISSING {missing}\n"
    )


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["--table", "GS-09"], 2, "the store has nothing of table GS-09"),
        (["--table", "GS-09", "--check"], 1, "the store has nothing of table GS-09"),
        (["--table", "GS/01"], 2, "--table: 'GS/01' cannot be a topic level"),
        (["--table", "GS-01", "--broker", "mqtt://127.0.0.1:1"], 2, "--broker is for --check"),
    ],
)
def test_export_refuses_in_plain_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, words: str
) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    _fill(url, [1], 1)
    assert main(["floor", "export", "--store", url, *argv]) == code
    assert words in capsys.readouterr().err
