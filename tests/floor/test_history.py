"""A history that cannot be rewritten unseen (issue 31): signed chain heads, the floor store's
checks, and the table's start-up check against the floor, on a real Mosquitto and store.

The attacker has a shell on the Pi but not the service's key: it edits, inserts, deletes,
reorders or truncates journal entries and recomputes every CRC, the hash chain and
`journal.head` with the product's own code (controller.journal.log's `_crc`, `link`, `HeadFile`), and
removes the snapshots as `tablectl journal rebuild` would. The journal then opens clean. What
left the Pi already (the entries and signed heads the floor store holds) is what catches it:
the store raises its alert, naming the table and the first bad entry, when the rewritten entries
reach it; and the table's start-up question to the floor refuses to open on it.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.adapters.floor.config import FloorConfig
from controller.adapters.floor.history import HistoryRefused, ask_floor, check_history
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher
from controller.floor.store import StoredEntry, open_store
from controller.journal.head import HeadFile, HeadMark
from controller.journal.log import GENESIS, Journal, _crc, link
from controller.security.chainhead import ChainWalk, fingerprint, public_hex, read_fingerprint, table_key
from controller.testing import Daemon

from .conftest import (
    SITE,
    WAIT_S,
    Mosquitto,
    deal_rounds,
    floor_config,
    make_consumer,
    make_publisher,
    make_table,
    wait_until,
)

OPS = ("edit", "insert", "delete", "reorder", "truncate")


def rows_of(path: Path) -> list[tuple[str, int | None, str, str]]:
    """The journal's entries as stored: (at, round, kind, body text), in order."""
    db = sqlite3.connect(path)
    try:
        return [(at, rnd, kind, body) for at, rnd, kind, body in db.execute("SELECT at, round, kind, body FROM entries ORDER BY seq")]
    finally:
        db.close()


def rewrite(path: Path, rows: list[tuple[str, int | None, str, str]]) -> None:
    """The attacker's rewrite: the append-only triggers dropped, every entry numbered again from 1
    with its CRC, the chain and the head file recomputed by the journal's own functions, the
    snapshots and round index dropped."""
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute("DROP TRIGGER entries_no_delete")  # the journal puts them back when it opens
            db.execute("DROP TRIGGER entries_no_update")
            db.execute("DELETE FROM entries")
            db.execute("DELETE FROM snapshots")
            db.execute("DELETE FROM rounds")
            for seq, (at, rnd, kind, body) in enumerate(rows, 1):
                db.execute("INSERT INTO entries (seq, at, round, kind, body, crc) VALUES (?, ?, ?, ?, ?, ?)",
                           (seq, at, rnd, kind, body, _crc(seq, at, rnd, kind, body)))  # fmt: skip
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    chain, marks = GENESIS, []
    for seq, (at, rnd, kind, body) in enumerate(rows, 1):
        chain = link(chain, seq, at, rnd, kind, body)
        marks.append(HeadMark(seq, chain, at))
    head = path.with_name("journal.head")
    head.unlink()
    writer = HeadFile(head)
    for mark in marks[-2:]:  # both slots: the file says this journal ends where it now ends
        writer.write(mark)
    writer.close()


def tamper(rows: list[tuple[str, int | None, str, str]], op: str, k: int) -> list[tuple[str, int | None, str, str]]:
    """`op` at entry k (1-based): the first entry that differs from what the floor holds is k."""
    out = list(rows)
    i = k - 1
    if op == "edit":
        at, rnd, kind, body = out[i]
        out[i] = (at, rnd, kind, body[:-1] + ',"zz":"changed"}')
    elif op == "insert":
        out.insert(i, (out[i][0], out[i][1], "login", '{"client":"10.0.0.66","ok":true,"role":"supervisor"}'))
    elif op == "delete":
        del out[i]
    elif op == "reorder":
        out[i], out[i + 1] = out[i + 1], out[i]
    else:  # truncate: everything from k on is gone
        del out[i:]
    return out


def first_difference(before: list[tuple[str, int | None, str, str]], after: list[tuple[str, int | None, str, str]]) -> int:
    for seq, (a, b) in enumerate(zip(before, after, strict=False), 1):
        if a != b:
            return seq
    return min(len(before), len(after)) + 1


@pytest.fixture(scope="module")
def broker(mosquitto_bin: str, tmp_path_factory: pytest.TempPathFactory) -> object:
    server = Mosquitto(mosquitto_bin, tmp_path_factory.mktemp("broker"))
    server.start()
    yield server
    server.stop()


def enrol(store_url: str, table: str, key: str) -> None:
    """The operator enrols the table's key on the floor (tablectl floor enroll)."""
    store = open_store(store_url)
    try:
        store.enroll(SITE, table, key, "test")
    finally:
        store.close()


def played_and_stored(home: Path, config: FloorConfig, store_url: str, rounds: int) -> tuple[Path, object]:
    """A table that dealt `rounds` rounds, signing its head at each end, everything in the store."""
    table = make_table(home / "state")
    key = table_key(home / "state" / "table.key")
    enrol(store_url, "GS-01", fingerprint(public_hex(key)))
    for _ in range(rounds):
        deal_rounds(table, 1)
        table.sign_head(key)
    consumer = make_consumer(config.broker, store_url)
    publisher = make_publisher(config, table)
    publisher.start()
    last = table.journal.last_seq
    store = open_store(store_url)
    try:
        assert wait_until(lambda: store.history(SITE, table.table_id)["seq"] == last), store.history(SITE, table.table_id)
        assert store.alerts(SITE, table.table_id) == []
    finally:
        store.close()
    publisher.stop()
    table.journal.close()
    return table.journal.path, consumer


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(op=st.sampled_from(OPS), where=st.floats(min_value=0.0, max_value=0.999))
def test_every_rewrite_recomputed_with_the_products_own_code_is_caught_by_the_floor_and_at_start(
    broker: Mosquitto, op: str, where: float
) -> None:
    home = Path(tempfile.mkdtemp(prefix="tablectl-history-"))
    try:
        config = floor_config(broker.broker)
        store_url = f"sqlite://{home}/floor.db"
        path, consumer = played_and_stored(home, config, store_url, rounds=2)
        try:
            before = rows_of(path)
            k = 1 + int(where * (len(before) - 1))  # an entry to change (reorder: with the one after it)
            after = tamper(before, op, k)
            rewrite(path, after)
            journal = Journal(path)  # the rewrite opens clean: CRCs, chain and head file agree
            assert journal.check(derived=False) == len(after)
            # The table refuses to start on it: its journal is behind or forks from the floor's copy.
            answer = ask_floor(config, "GS-01")
            assert answer is not None and answer["seq"] == len(before)
            with pytest.raises(HistoryRefused, match=r"behind the floor's copy|forks from the floor's copy"):
                check_history(journal, answer, "GS-01")
            # Played on and sent again (the attacker reset the floor mark): the store's alert names the
            # table and the first entry that differs from what it holds.
            journal.append("button", {"button": "confirm", "by": "dealer"})
            journal.set_meta(MARK_KEY, "0")
            # The publisher as the daemon makes it (the table itself may not even replay what was done).
            publisher = FloorPublisher(config, path, table_id="GS-01", game="grand-slam", rules={},
                                       mark=lambda seq: journal.set_meta(MARK_KEY, str(seq)), meta=journal.set_meta,
                                       reconnect_max_s=1)  # fmt: skip
            publisher.start()
            bad = first_difference(before, rows_of(path))
            store = open_store(store_url)
            try:
                assert wait_until(lambda: bool(store.alerts(SITE, "GS-01")), WAIT_S), (op, k)
                seq, what = store.alerts(SITE, "GS-01")[0]
                assert seq == bad and f"sequence number {bad} reused" in what, (op, k, store.alerts(SITE, "GS-01"))
            finally:
                store.close()
                publisher.stop()
                journal.close()
        finally:
            consumer.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_the_store_checks_each_signed_head_against_the_chain_it_holds(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    key = table_key(tmp_path / "table.key")
    deal_rounds(table, 1)
    head = table.sign_head(key)
    enrolled = fingerprint(public_hex(key))
    walk = ChainWalk("GS-01", enrolled=enrolled)
    entries = list(table.journal.entries())
    assert [walk.add(e.seq, e.at, e.round, e.kind, e.body) for e in entries] == [None] * len(entries)
    assert walk.key is not None and head.body["chain"] == Journal(table.journal.path, readonly=True).chain_through(head.seq - 1)
    # Another table's name, another key, a forged chain value: each is the store's alert.
    fresh = ChainWalk("GS-02", enrolled=enrolled)
    problems = [fresh.add(e.seq, e.at, e.round, e.kind, e.body) for e in entries]
    assert problems[-1] is not None and "signature is bad" in problems[-1]
    forged = ChainWalk("GS-01", enrolled=enrolled)
    for e in entries[:-1]:
        assert forged.add(e.seq, e.at, e.round, e.kind, e.body) is None
    body = {**head.body, "chain": "f" * 32}
    assert "signature is bad" in str(forged.add(head.seq, head.at, head.round, head.kind, body))
    other = table_key(tmp_path / "other.key")
    resigned = ChainWalk("GS-01", enrolled=enrolled)
    from controller.security.chainhead import sign_head

    for e in entries[:-1]:
        resigned.add(e.seq, e.at, e.round, e.kind, e.body)
    body = sign_head(other, "GS-01", seq=head.body["seq"], chain=head.body["chain"], at=head.body["at"])
    assert f"signed by key {fingerprint(public_hex(other))}, not by the key enrolled for table GS-01" in str(
        resigned.add(head.seq, head.at, head.round, head.kind, body)
    )
    # No key enrolled: not even the table's own key is taken from the head.
    unenrolled = ChainWalk("GS-01")
    problems = [unenrolled.add(e.seq, e.at, e.round, e.kind, e.body) for e in entries]
    assert problems[:-1] == [None] * (len(entries) - 1)
    assert f"table GS-01 has no key enrolled on the floor: its chain head is signed by key {enrolled}" in str(problems[-1])
    assert (tmp_path / "table.key").stat().st_mode & 0o777 == 0o600


def test_a_whole_state_directory_restored_from_an_earlier_copy_is_refused_at_start(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    store_url = f"sqlite://{tmp_path}/floor.db"
    consumer = make_consumer(mosquitto.broker, store_url)
    daemon = Daemon(tmp_path, f'[table]\nid = "GS-01"\n[floor]\nbroker = "mqtt://127.0.0.1:{mosquitto.port}"\nsite = "{SITE}"\n')
    store = open_store(store_url)
    try:
        for n, cards in enumerate((["5H", "9C", "3S"], ["KD", "2C", "7H"]), 1):
            daemon.start()
            if n == 1:  # the key the table made at its first start, enrolled by its table.pub
                public = (daemon.state_dir / "table.pub").read_text()
                enrol(store_url, "GS-01", read_fingerprint(public))
            state = daemon.get("/api/state")
            assert state["devices"]["history"]["state"] == "confirmed"
            if state["payment"] == "due":  # the last round's payouts, confirmed before the next opens
                assert daemon.post("/api/confirm", {})[0] == 200
            base = daemon.get("/api/state")["journal_seq"]
            assert daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})[0] == 201
            assert daemon.post("/api/sim/shoe", {"cards": cards})[0] == 200
            assert daemon.post("/api/sim/draw", {"count": 3})[0] == 200
            # The round's opening, its three cards and the signed head of the chain after them.
            last = daemon.wait_for(
                "the chain's head signed", lambda s, base=base: s["journal_seq"] >= base + 5, timeout=WAIT_S
            )["journal_seq"]
            assert wait_until(lambda last=last: store.history(SITE, "GS-01")["seq"] >= last), store.history(SITE, "GS-01")
            assert daemon.stop() == 0, daemon.log()
            if n == 1:  # the copy an operator (or an attacker) keeps: database, -wal, -shm, journal.head
                shutil.copytree(daemon.state_dir, tmp_path / "copy")
        shutil.rmtree(daemon.state_dir)
        shutil.copytree(tmp_path / "copy", daemon.state_dir)
        assert Journal(daemon.state_dir / "journal.sqlite3").check() == 5  # healthy on its own
        daemon.spawn()
        assert daemon.proc is not None
        code = daemon.proc.wait(timeout=60)
        words = daemon.log()
        assert code == 78, words
        assert "cannot start: the journal is behind the floor's copy of it" in words
        assert f"holds table GS-01's entries through {last}, this journal ends at 5" in words
        assert Journal(daemon.state_dir / "journal.sqlite3", readonly=True).last_seq == 5  # nothing written
    finally:
        store.close()
        consumer.stop()
        if daemon.proc is not None and daemon.proc.poll() is None:
            daemon.kill()



def test_the_store_raises_a_gap_when_the_table_has_sent_all_it_has_and_entries_are_still_missing(tmp_path: Path) -> None:
    store = open_store(f"sqlite://{tmp_path}/floor.db")
    try:
        entries = [StoredEntry(SITE, "GS-01", seq, "b1", f"2026-12-01T08:00:0{seq}.000Z", None, "login", {"ok": True})
                   for seq in (1, 2, 3, 5, 6)]  # fmt: skip
        store.add(entries)
        assert store.alerts(SITE, "GS-01") == []  # missing 4 may only be late: no alert yet
        store.gap_reported(SITE, "GS-01", through=6)  # the table's catch-up reply ended at 6, without 4
        assert store.alerts(SITE, "GS-01") == [(4, "a gap: entries 4 to 4 are not in the table's journal")]
        assert store.history(SITE, "GS-01")["seq"] == 3 and store.history(SITE, "GS-01")["alerts"] == [4]
    finally:
        store.close()
