"""The floor store in SQLite and in a real PostgreSQL: once, in order, migrated, never overwritten."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from controller.floor.store import MIGRATIONS, SCHEMA_VERSION, FloorStoreError, StoredEntry, open_store


def entry(seq: int, boot: str = "boot-a", table: str = "GS-01", kind: str = "card", card: str = "AS") -> StoredEntry:
    return StoredEntry("main", table, seq, boot, f"2026-12-01T08:00:{seq % 60:02d}.000Z", 1, kind, {"card": card})


def test_entries_are_kept_once_in_journal_order_whatever_the_repeats_resends_and_arrival_order(store_url: str) -> None:
    store = open_store(store_url)
    first = store.add([entry(3), entry(1), entry(5)])
    again = store.add([entry(1, boot="boot-b"), entry(2, boot="boot-b"), entry(3), entry(4, boot="boot-b")])
    rows = list(store.entries("main", "GS-01"))
    progress = store.progress("main", "GS-01")
    store.close()

    assert (first.added, again.added, again.repeats, again.conflicts) == (3, 2, 2, 0)
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]
    assert [r.boot for r in rows] == ["boot-a", "boot-b", "boot-a", "boot-b", "boot-a"]  # who delivered it first
    assert rows[0].to_json() == {
        "site": "main",
        "table": "GS-01",
        "boot": "boot-a",
        "seq": 1,
        "kind": "card",
        "entry": {"seq": 1, "at": "2026-12-01T08:00:01.000Z", "round": 1, "kind": "card", "body": {"card": "AS"}},
    }
    assert (progress.contiguous, progress.highest) == (5, 5)


def test_a_gap_is_seen_until_it_is_filled(store_url: str) -> None:
    store = open_store(store_url)
    store.add([entry(n) for n in (1, 2, 3, 7, 8)])
    store.reported("main", "GS-01", 10)
    before = store.progress("main", "GS-01")
    gaps = store.missing("main", "GS-01", 10)
    store.add([entry(n) for n in (4, 5, 6, 9, 10)])
    after = store.progress("main", "GS-01")
    store.close()

    assert (before.contiguous, before.highest, before.reported_last, before.behind) == (3, 8, 10, True)
    assert gaps == [(4, 6), (9, 10)]
    assert (after.contiguous, after.behind) == (10, False)


def test_two_consumers_writing_the_same_entries_at_once_never_double_a_row(store_url: str) -> None:
    stores = [open_store(store_url), open_store(store_url)]
    assert stores[0].store_id == stores[1].store_id  # one store, whoever opens it

    def consume(store_index: int) -> None:
        for start in range(0, 600, 50):  # the same entries, in batches, from both at once
            stores[store_index].add([entry(n, boot=f"boot-{store_index}") for n in range(start + 1, start + 51)])

    threads = [threading.Thread(target=consume, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seqs = [r.seq for r in stores[0].entries("main", "GS-01")]
    progress = stores[1].progress("main", "GS-01")
    for s in stores:
        s.close()
    assert seqs == list(range(1, 601))
    assert progress.contiguous == 600


def test_an_entry_that_comes_again_different_is_recorded_and_never_overwrites_the_stored_one(store_url: str) -> None:
    store = open_store(store_url)
    store.add([entry(1), entry(2)])
    result = store.add([entry(2, boot="boot-new", card="KD")])  # a replaced journal, or a table id used twice
    kept = [r.body for r in store.entries("main", "GS-01")]
    conflicts = store.conflicts("main", "GS-01")
    store.close()
    assert (result.added, result.conflicts) == (0, 1)
    assert kept == [{"card": "AS"}, {"card": "AS"}]
    assert conflicts == [2]


def test_tables_are_kept_apart(store_url: str) -> None:
    store = open_store(store_url)
    store.add([entry(1, table="GS-01"), entry(1, table="JK-02", card="2C"), entry(2, table="JK-02")])
    tables = store.tables()
    jk = [r.body["card"] for r in store.entries("main", "JK-02")]
    store.close()
    assert tables == [("main", "GS-01"), ("main", "JK-02")]
    assert jk == ["2C", "AS"]


def test_a_store_of_the_first_schema_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.execute("INSERT INTO floor_meta VALUES ('schema', '1'), ('store_id', 'old-store')")
    for seq in (1, 2, 3, 5):
        db.execute(
            "INSERT INTO floor_entries VALUES ('main', 'GS-01', ?, 'b', '2026-12-01T08:00:00.000Z', 1, 'card', "
            "'{\"card\":\"AS\"}', 'now')",
            (seq,),
        )
    db.commit()
    db.close()

    store = open_store(f"sqlite://{path}")
    progress = store.progress("main", "GS-01")
    seqs = [r.seq for r in store.entries("main", "GS-01")]
    assert (store.schema_version, store.store_id) == (SCHEMA_VERSION, "old-store")
    store.close()
    assert seqs == [1, 2, 3, 5]
    assert (progress.contiguous, progress.highest) == (3, 5)


def test_the_postgresql_store_is_migrated_like_the_sqlite_one(postgres: object) -> None:
    import psycopg

    url = postgres.new_database()  # type: ignore[attr-defined]
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO floor_meta VALUES ('schema', '1'), ('store_id', 'pg-old')")
        conn.execute(
            "INSERT INTO floor_entries VALUES ('main', 'GS-01', 1, 'b', 'at', NULL, 'card', '{}', 'now'), "
            "('main', 'GS-01', 2, 'b', 'at', NULL, 'card', '{}', 'now')"
        )
    store = open_store(url)
    progress = store.progress("main", "GS-01")
    assert (store.schema_version, store.store_id, progress.contiguous) == (SCHEMA_VERSION, "pg-old", 2)
    store.close()


def test_a_store_newer_than_this_tablectl_is_refused(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    open_store(url).close()
    db = sqlite3.connect(tmp_path / "floor.db")
    db.execute("UPDATE floor_meta SET value = '99' WHERE key = 'schema'")
    db.commit()
    db.close()
    with pytest.raises(FloorStoreError, match=f"the store has schema 99, newer than the {SCHEMA_VERSION} this tablectl knows"):
        open_store(url)


@pytest.mark.parametrize(
    ("url", "refusal"),
    [
        ("mysql://floor/db", "the scheme must be sqlite:// (one file) or postgresql:// (a server), not 'mysql'"),
        ("sqlite://", "name the file"),
        ("postgresql://floor:hunter2@127.0.0.1:1/floor", "postgresql://floor:***@127.0.0.1:1/floor: cannot connect"),
    ],
)
def test_a_store_that_cannot_be_used_is_refused_in_words_that_carry_no_password(url: str, refusal: str) -> None:
    with pytest.raises(FloorStoreError) as caught:
        open_store(url)
    assert refusal in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(("again", "said"), [([2], "1 entry came again"), ([1, 2], "2 entries came again")])
def test_the_store_check_counts_entries_in_words(tmp_path: Path, again: list[int], said: str) -> None:
    """`tablectl floor export --check` says "1 entry" and "2 entries", never "entr(ies)"."""
    url = f"sqlite://{tmp_path}/floor.db"
    store = open_store(url)
    store.add([entry(1), entry(2)])
    store.add([entry(n, boot="boot-new", card="KD") for n in again])
    store.reported("main", "GS-01", 2)
    store.close()
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "floor", "export", "--store", url, "--table", "GS-01", "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == f"main/GS-01: {said} different (floor_conflicts): {', '.join(map(str, again))}", lines


def test_entries_with_tabs_backslashes_and_line_ends_come_back_as_stored(store_url: str) -> None:
    # PostgreSQL takes a batch by COPY, whose text format escapes these characters; the store
    # must give back exactly what the table sent, whichever field holds them.
    store = open_store(store_url)
    at = "2026-12-01T08:00:0{}.000Z".format
    odd = [  # each with one character COPY escapes, in one field
        StoredEntry("main", "GS-01", 1, "boot-a", at(1), None, "note", {"text": "a\tb\\c\nd\re\\N"}),
        StoredEntry("main", "GS-01", 2, "boot\ta", at(2), 3, "note", {"n": 2}),
        StoredEntry("main", "GS-01", 3, "boot-a", at(3) + "\n", 3, "note", {"n": 3}),
        StoredEntry("main", "GS-01", 4, "boot-a", at(4), 3, "note\rx", {"n": 4}),
        StoredEntry("main", "GS-01", 5, "boot-a", at(5), None, "card", {"card": "AS"}),
    ]
    assert store.add(odd).added == 5
    assert [(e.seq, e.boot, e.at, e.round, e.kind, e.body) for e in store.entries("main", "GS-01")] == [
        (e.seq, e.boot, e.at, e.round, e.kind, e.body) for e in odd
    ]
    store.close()
