"""A full disk, for real: the journal on a 2 MB tmpfs filled to the last byte. The write-ahead file
keeps its blocks (controller/journal/log.py, WAL_RESERVE), so a round's entries need no new space:
a disk that fills inside a round lets the round be journaled to its end, durably, and stops the
table at the round's end, in plain words (said once, with a count), before any new round. Nothing
is taken while it lasts, and when space returns the round is copied into the database, the journal
says that the fault is over, and the cards the shoe offers are taken again, in order."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import WAL_RESERVE, Journal, JournalUnwritable
from controller.table import Table, TableError, TableUnavailable
from controller.table.view import prompt, snapshot
from tests.disk import fill, small_disk

WORDS = "the journal cannot be written: the disk is full; no card is being accepted"
SEATS = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}]}  # two cards settle the round


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as where:
        yield where


def _power_cut_copy(disk: Path, to: Path) -> Path:
    """The journal's files as a power cut now would leave them (every commit was fsync'd)."""
    to.mkdir()
    for name in ("journal.sqlite3", "journal.sqlite3-wal", "journal.head"):
        shutil.copy(disk / name, to / name)
    return to / "journal.sqlite3"


def test_a_disk_full_inside_a_round_journals_the_round_and_stops_the_table_at_its_end_until_space_returns(
    disk: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(disk / "journal.sqlite3")
    table = Table(journal, game="grand-slam", rules={})
    table.open_round(SEATS, by="dealer")
    table.card(parse_card("5H"), {"via": "shoe", "session": 1, "seq": 1})
    table.card(parse_card("2C"), {"via": "shoe", "session": 1, "seq": 2})
    table.button("confirm", by="dealer")
    assert journal.path.with_name("journal.sqlite3-wal").stat().st_size == WAL_RESERVE  # kept, not truncated
    table.open_round(SEATS, by="dealer")
    table.card(parse_card("5H"), {"via": "shoe", "session": 1, "seq": 3})
    before = journal.last_seq
    filler = fill(disk)

    caplog.set_level(logging.INFO, logger="controller.table")
    table.card(parse_card("2C"), {"via": "shoe", "session": 1, "seq": 4})  # in the write-ahead file's own blocks
    assert journal.last_seq == before + 1 and table.current is not None and table.current.status == "settled"
    # Found at the round's end: the table stops before any new round, in plain words.
    assert table.blocked and prompt(table).startswith(f"STOP: {WORDS}")
    shown = snapshot(table)
    assert [(f["code"], f["title"], f["actions"]) for f in shown["faults"]] == [("disk-full", "Disk full: no cards", [])]
    # The round is not lost: a power cut now leaves it whole (in the write-ahead file).
    cut = Table(Journal(_power_cut_copy(disk, tmp_path / "cut")), game="grand-slam", rules={})
    assert cut.journal.last_seq == before + 1 and cut.journal.check() == before + 1
    assert cut.current is not None and cut.current.cards == ["5H", "2C"] and cut.current.status == "settled"
    cut.journal.close()

    with pytest.raises(TableUnavailable, match=WORDS):
        table.button("confirm", by="dealer")
    with pytest.raises(TableError, match=f"play is stopped: STOP: {WORDS}"):
        table.open_round(SEATS, by="dealer")
    for _ in range(2):  # the shoe offers 9S again and again
        with pytest.raises(TableUnavailable, match=WORDS):
            table.card(parse_card("9S"), {"via": "shoe", "session": 1, "seq": 5})
    assert journal.last_seq == before + 1  # nothing was taken
    said = [r for r in caplog.records if WORDS in r.getMessage()]
    assert len(said) == 1  # logged once, not on every retransmission

    filler.unlink()
    table.card(parse_card("9S"), {"via": "shoe", "session": 1, "seq": 5})
    table.button("confirm", by="dealer")
    kinds = [(e.kind, e.body.get("card"), e.body.get("refused")) for e in journal.entries(after=before)]
    assert kinds == [("card", "2C", None), ("journal-restored", None, 3), ("card", "9S", None), ("button", None, None)]
    assert not table.blocked and table.meters.dead_cards == 1  # 9S came after the round
    assert table.meters.faults["disk-full"] == 1
    assert any("can be written again" in r.getMessage() and "3 inputs refused" in r.getMessage() for r in caplog.records)
    # Copied into the database itself once there was room: a copy of the database alone holds the round.
    shutil.copy(journal.path, tmp_path / "alone.sqlite3")
    alone = sqlite3.connect(tmp_path / "alone.sqlite3")
    row = alone.execute("SELECT kind, body FROM entries WHERE seq = ?", (before + 1,)).fetchone()
    assert row[0] == "card" and row[1].startswith('{"card":"2C",')
    alone.close()
    journal.close()
    again = Table(Journal(disk / "journal.sqlite3"), game="grand-slam", rules={})
    assert again.snapshot_state() == table.snapshot_state()


def test_a_round_the_database_cannot_take_at_its_end_stays_safe_in_the_wal_and_is_copied_once_there_is_room(
    disk: Path, tmp_path: Path
) -> None:
    journal = Journal(disk / "journal.sqlite3")
    journal.append("card", {"card": "AS"})
    journal.checkpoint()  # a round's end, with room for the next
    filler = fill(disk)
    for n in range(20):  # a round of long entries: within the -wal's blocks, but the database must grow for them
        journal.append("button", {"button": "confirm", "by": "dealer", "note": f"{n}" * 2000})
    journal.checkpoint()  # its end: the database cannot take them
    short = journal.short_of_room
    assert short is not None and short.reason == "full"
    assert "entries up to 21 are safe in the write-ahead file" in short.detail
    with pytest.raises(JournalUnwritable, match=WORDS):
        journal.append("card", {"card": "KD"})
    assert journal.last_seq == 21
    cut = Journal(_power_cut_copy(disk, tmp_path / "cut"))  # a power cut now loses none of them
    assert cut.last_seq == 21 and cut.check() == 21
    cut.close()

    filler.unlink()
    assert journal.append("card", {"card": "KD"}).seq == 22 and journal.short_of_room is None
    shutil.copy(journal.path, tmp_path / "alone.sqlite3")  # the database alone: the round was copied into it
    alone = sqlite3.connect(tmp_path / "alone.sqlite3")
    assert alone.execute("SELECT COUNT(*), MAX(seq) FROM entries").fetchone() == (21, 21)
    alone.close()
    journal.close()


def test_the_wal_is_checkpointed_at_each_rounds_end_and_kept_at_its_size_so_a_small_disk_holds_many_rounds(
    disk: Path,
) -> None:
    from controller.cli.synth import synthesize

    # Before, a 2 MB volume filled after 235 entries: the WAL never reached its automatic checkpoint.
    journal = synthesize(disk, 60, seed=7, durable=True)
    assert journal.path.with_name("journal.sqlite3-wal").stat().st_size == WAL_RESERVE  # neither grown nor cut
    assert journal.last_seq > 400 and journal.short_of_room is None


def test_a_wal_grown_past_its_size_by_a_burst_goes_back_to_it_after_the_next_rounds_end(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    wal = journal.path.with_name("journal.sqlite3-wal")
    journal.append_many([("login", {"ok": False, "pad": "x" * 3000}, None)] * 400)  # a flood of refused logins
    assert wal.stat().st_size > 2 * WAL_RESERVE
    journal.checkpoint()  # the round's end
    journal.append("card", {"card": "AS"})
    assert wal.stat().st_size == WAL_RESERVE  # the disk's space given back
    journal.close()


def test_the_journal_can_be_probed_for_a_full_disk_without_writing_an_entry(disk: Path) -> None:
    journal = Journal(disk / "journal.sqlite3")
    journal.append("card", {"card": "AS"})
    journal.checkpoint()  # as at a round's end: a small write would still fit in the -wal's own blocks
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
        # Found as the daemon's start-up or a round's end finds it (a login alone fits in the -wal).
        rt.gate.submit(lambda t: t.journal.probe_writable(t.journal_down)).result(timeout=10)
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
