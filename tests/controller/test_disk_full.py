"""A full disk, for real: the journal on a 2 MB tmpfs filled to the last byte. The table stops in
plain words (said once, with a count), takes nothing while it lasts, and when space returns it
journals that the fault is over and takes the cards the shoe offers again, in order."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table, TableUnavailable
from controller.table.view import prompt, snapshot
from tests.disk import fill, small_disk

WORDS = "the journal cannot be written: the disk is full; no card is being accepted"


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as where:
        yield where


def test_a_full_disk_stops_the_table_in_plain_words_and_clears_itself_when_space_returns(
    disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(disk / "journal.sqlite3")
    table = Table(journal, game="grand-slam", rules={})
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}]}, by="dealer")
    table.card(parse_card("5H"), {"via": "shoe", "session": 1, "seq": 1})
    before = journal.last_seq
    filler = fill(disk)

    caplog.set_level(logging.INFO, logger="controller.table")
    for seq, card in enumerate(("2C", "2C", "2C", "9S"), start=2):  # the shoe offers 2C again and again
        with pytest.raises(TableUnavailable, match=WORDS):
            table.card(parse_card(card), {"via": "shoe", "session": 1, "seq": seq if card == "9S" else 2})
    assert journal.last_seq == before  # nothing was taken
    assert table.blocked and prompt(table).startswith(f"STOP: {WORDS}")
    shown = snapshot(table)
    assert [(f["code"], f["title"], f["actions"]) for f in shown["faults"]] == [("disk-full", "Disk full: no cards", [])]
    said = [r for r in caplog.records if WORDS in r.getMessage()]
    assert len(said) == 1  # logged once, not on every retransmission

    filler.unlink()
    table.card(parse_card("2C"), {"via": "shoe", "session": 1, "seq": 2})
    table.card(parse_card("9S"), {"via": "shoe", "session": 1, "seq": 3})
    kinds = [(e.kind, e.body.get("card"), e.body.get("refused")) for e in journal.entries(after=before)]
    assert kinds == [("journal-restored", None, 4), ("card", "2C", None), ("card", "9S", None)]
    assert not table.blocked and table.current is not None and table.current.cards == ["5H", "2C"]
    assert table.current.status == "settled" and table.meters.dead_cards == 1  # 9S came after the round
    assert table.meters.faults["disk-full"] == 1
    assert any("can be written again" in r.getMessage() and "4 inputs refused" in r.getMessage() for r in caplog.records)
    journal.close()
    again = Table(Journal(disk / "journal.sqlite3"), game="grand-slam", rules={})
    assert again.snapshot_state() == table.snapshot_state()


def test_the_wal_is_checkpointed_at_each_rounds_end_so_a_small_disk_holds_many_rounds(disk: Path) -> None:
    from controller.cli.synth import synthesize

    # Before, a 2 MB volume filled after 235 entries: the WAL never reached its automatic checkpoint.
    journal = synthesize(disk, 60, seed=7, durable=True)
    assert journal.path.with_name("journal.sqlite3-wal").stat().st_size < 64 * 1024
    assert journal.last_seq > 400


def test_the_journal_can_be_probed_for_a_full_disk_without_writing_an_entry(disk: Path) -> None:
    journal = Journal(disk / "journal.sqlite3")
    journal.append("card", {"card": "AS"})
    journal.checkpoint()  # as at a round's end: the -wal is empty, so the next write needs free space
    assert journal.probe_writable()
    filler = fill(disk)
    told: list[str] = []
    assert not journal.probe_writable(lambda exc: told.append(f"{exc.reason}: {exc}"))
    assert len(told) == 1 and told[0].startswith(f"full: {WORDS}")
    filler.unlink()
    assert journal.probe_writable()
    assert journal.last_seq == 1 and [e.seq for e in journal.entries()] == [1]  # no entry was written
    journal.close()


def test_a_wrong_token_on_a_full_disk_is_a_503_that_says_so_not_a_500(disk: Path) -> None:
    from fastapi.testclient import TestClient

    from controller.api.app import create_app
    from controller.api.auth import Tokens
    from controller.api.runtime import Runtime

    table = Table(Journal(disk / "journal.sqlite3"), game="grand-slam", rules={})
    rt = Runtime(table=table, tokens=Tokens("dealer-token-0123456789", "supervisor-token-0123456789"))
    try:
        client = TestClient(create_app(rt))
        filler = fill(disk)
        for ask in (
            lambda: client.get("/api/state", headers={"Authorization": "Bearer wrong-token"}),
            lambda: client.post("/api/login", json={"token": "wrong-token"}),
        ):
            answer = ask()  # the failed login cannot be journaled: nothing is taken, and it says why
            assert answer.status_code == 503 and answer.json()["kind"] == "unavailable", answer.text
            assert "disk is full" in answer.json()["error"]
        filler.unlink()
        rt.gate.submit(lambda t: t.retry_journal()).result(timeout=10)  # as the daemon's watchdog does
        assert client.post("/api/login", json={"token": "wrong-token"}).status_code == 401
        assert [e.body["ok"] for e in table.journal.entries() if e.kind == "login"] == [False]
    finally:
        rt.gate.close()
