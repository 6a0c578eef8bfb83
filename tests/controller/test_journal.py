"""The journal: append-only, durable settings, checked at every start."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from controller.journal.log import CACHE_KIB, Journal, JournalCorrupt, JournalError


def test_entries_come_back_in_order_with_gapless_sequence_numbers(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    a = journal.append("round-open", {"x": 1}, round_no=1)
    b = journal.append("card", {"card": "AS"}, round_no=1)
    c = journal.append("fault", {"code": "misread"})
    assert [e.seq for e in (a, b, c)] == [1, 2, 3]
    journal.close()
    again = Journal(tmp_path / "j.sqlite3")
    assert [(e.seq, e.kind, e.round, e.body) for e in again.entries()] == [
        (1, "round-open", 1, {"x": 1}),
        (2, "card", 1, {"card": "AS"}),
        (3, "fault", None, {"code": "misread"}),
    ]
    assert [e.seq for e in again.entries(after=1)] == [2, 3]
    assert [e.seq for e in again.entries(round_no=1)] == [1, 2]
    assert again.append("card", {}).seq == 4


def test_the_journal_runs_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    assert journal._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_the_writers_small_page_cache_still_reads_back_and_verifies_every_entry(tmp_path: Path) -> None:
    # The table's journal keeps SQLite's page cache to CACHE_KIB (the daemon's memory): a journal
    # several times that size still gives back every entry, in order, and opens verified.
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    assert journal._db.execute("PRAGMA cache_size").fetchone()[0] == -CACHE_KIB
    bodies = [{"card": f"{i:05d}", "pad": "x" * 400} for i in range(3000)]
    journal.append_many([("card", body, i // 20 + 1) for i, body in enumerate(bodies)])
    journal.close()
    assert path.stat().st_size > 4 * CACHE_KIB * 1024  # checkpointed at the close
    again = Journal(path)  # verified at the open: every entry's chain and checksum
    assert [e.body for e in again.entries()] == bodies
    assert [e.body for e in again.entries(round_no=77)] == bodies[1520:1540]
    assert again.append("card", {"card": "last"}).seq == 3001
    again.close()


def test_entries_cannot_be_changed_or_deleted(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    Journal(path).append("card", {"card": "AS"})
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE entries SET body='{}'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM entries")


def test_a_tampered_entry_stops_the_table_at_start(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    journal.append("card", {"card": "AS"})
    journal.append("card", {"card": "KD"})
    journal.close()
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER entries_no_update")
    db.execute("""UPDATE entries SET body='{"card":"2C"}' WHERE seq=2""")
    db.commit()
    db.close()
    with pytest.raises(JournalCorrupt, match="entry 2 \\(card\\) does not match its checksum"):
        Journal(path)


def test_a_missing_entry_stops_the_table_at_start(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    for card in ("AS", "KD", "QH"):
        journal.append("card", {"card": card})
    journal.close()
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER entries_no_delete")
    db.execute("DELETE FROM entries WHERE seq=2")
    db.commit()
    db.close()
    with pytest.raises(JournalCorrupt, match="entry 2 is missing"):
        Journal(path)


def test_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    path.write_bytes(b"this is not a database, it is a shopping list" * 100)
    with pytest.raises(JournalCorrupt, match=r"cannot be opened|damaged"):
        Journal(path)


def test_last_rounds_lists_the_newest_rounds_oldest_first(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    for n in range(1, 131):
        journal.append("round-open", {}, round_no=n)
    assert journal.last_rounds(3) == [128, 129, 130]
    assert len(journal.last_rounds(100)) == 100


def test_meta_values_are_kept_beside_the_entries_and_survive_a_reopen(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite3")
    assert journal.get_meta("floor.acked") is None
    journal.set_meta("floor.acked", "17")
    journal.set_meta("floor.acked", "18")
    journal.close()
    assert Journal(tmp_path / "j.sqlite3", readonly=True).get_meta("floor.acked") == "18"
    with pytest.raises(JournalError, match="schema version is not a setting"):
        Journal(tmp_path / "j.sqlite3").set_meta("schema", "9")


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o000], ids=["umask-022", "umask-002", "umask-000"])
def test_the_journal_files_are_the_owners_alone_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    """Outside systemd (whose UMask=0077 does it for the unit) a shell's umask made the database and
    its -wal and -shm 0644: readable by every user of the Pi."""
    state = tmp_path / "state"
    was = os.umask(umask)
    try:
        journal = Journal(state / "journal.sqlite3")
        journal.append("card", {"card": "AS"})  # the -wal, the -shm and the head file exist now
        parts = ["journal.sqlite3", "journal.sqlite3-wal", "journal.sqlite3-shm", "journal.head"]
        assert {p: oct(stat.S_IMODE((state / p).stat().st_mode)) for p in parts} == {p: "0o600" for p in parts}
        journal.close()
    finally:
        os.umask(was)


def test_a_journal_made_readable_to_others_is_made_the_owners_alone_when_the_table_opens_it(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    Journal(path).close()
    path.chmod(0o644)  # as an older tablectl left it, started from a shell
    Journal(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    reader = Journal(path, readonly=True)  # a reader changes nothing
    reader.close()


def test_an_appended_entrys_checksum_and_chain_are_those_of_its_stored_bytes(tmp_path: Path) -> None:
    # `append` encodes an entry's content once for its CRC and its chain link: each stored row's
    # CRC and the chain over the rows are what `_crc` and `link` make of the stored text (what
    # `journal verify` and a start check), for entries fsync'd and not, and the journal reopens.
    from controller.journal.log import GENESIS, _crc, link

    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    journal.append("round-open", {"seats": [{"seat": 3, "wagers": {"first": 5}}], "é": "ü"}, round_no=1)
    journal.append("card", {"card": "AS", "source": {"via": "shoe"}}, round_no=1, head_later=True)
    journal.append("chain-head", {"head_seq": 2}, sync=False)
    journal.append("fault", {"code": "misread"})
    rows = journal._db.execute("SELECT seq, at, round, kind, body, crc FROM entries ORDER BY seq").fetchall()
    chain = GENESIS
    for seq, at, round_no, kind, body, crc in rows:
        assert crc == _crc(seq, at, round_no, kind, body)
        chain = link(chain, seq, at, round_no, kind, body)
    assert len(rows) == 4 and journal._hash == chain
    journal.close()
    again = Journal(path)  # verified at the open: every entry's checksum and the chain
    assert [e.kind for e in again.entries()] == ["round-open", "card", "chain-head", "fault"]
    again.close()
