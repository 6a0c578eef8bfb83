"""The publisher starts from the journal's snapshot at or before its mark, not from the first
entry: what it then publishes (entries, settlements, faults, meters) is exactly what a full replay
of the journal would have published, on a journal with several rounds, faults and a restart of
the table mid-round, on the old journals of tests/controller/fixtures, and after retention has
archived the journal's first rounds (where a replay from the first entry kept is wrong)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from controller.adapters.floor.config import Broker
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher, Replica
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.journal.retention import retain
from controller.table import Table

from .conftest import DECK, SITE, Mosquitto, Subscriber, deal_rounds, floor_config, make_publisher, make_table

FIXTURES = Path(__file__).resolve().parents[1] / "controller" / "fixtures"
OFFLINE = Broker("127.0.0.1", 9, False)  # never connected to: messages are made, not sent


def published(
    path: Path, game: str, replica: Replica, mark: int, upto: int | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """Every message the publisher makes for the entries after `mark` (to `upto`), starting from `replica`."""
    publisher = FloorPublisher(
        floor_config(OFFLINE), path, table_id="GS-01", game=game, rules={}, mark=lambda seq: None, boot="b"
    )
    reader = Journal(path, readonly=True)
    try:
        return [m for entry in reader.entries(after=mark, upto=upto) for m in publisher._messages(replica, entry)]
    finally:
        reader.close()


def full_replay(path: Path, game: str, mark: int) -> Replica:
    """What the publisher did before: the table's reducer over every entry up to the mark."""
    replica = Replica(game, {})
    reader = Journal(path, readonly=True)
    try:
        for entry in reader.entries(upto=mark):
            replica.follow(entry)
    finally:
        reader.close()
    return replica


def resumed(path: Path, game: str, mark: int) -> Replica:
    reader = Journal(path, readonly=True)
    try:
        return Replica.resume(reader, game, {}, mark)
    finally:
        reader.close()


def deal_with_faults_and_a_restart(state: Path) -> tuple[Table, int]:
    """Rounds with faults between and inside them, the table restarted mid-round, then more
    rounds; returns the table and the last entry before the restart."""
    table = make_table(state)
    deal_rounds(table, 3)
    silent = table.raise_fault("shoe-silent", "The shoe has been silent for 3 s")
    table.clear_fault(silent.seq, "dismiss", by="supervisor", reason="cable reseated")
    deal_rounds(table, 2)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 5}}, {"seat": 4, "wagers": {"first": 25}}]}, by="d")
    table.card(parse_card("2C"), {"via": "shoe"})
    noisy = table.raise_fault("shoe-line-noise", "The shoe's line is damaged")  # mid-round
    restarted_after = table.journal.last_seq
    table.journal.close()
    table = make_table(state)  # the daemon starts again, the round still open, the fault latched
    table.clear_fault(noisy.seq, "dismiss", by="supervisor", reason="reseated")
    while table.awaiting.kind == "card":
        table.card(parse_card(DECK[table.shoe.dealt_count % len(DECK)]), {"via": "shoe"})
    deal_rounds(table, 4)
    return table, restarted_after


def test_resumed_from_a_snapshot_it_publishes_exactly_what_a_full_replay_would(tmp_path: Path) -> None:
    table, restarted_after = deal_with_faults_and_a_restart(tmp_path)
    path, last = table.journal.path, table.journal.last_seq
    kept = [s.seq for s in table.journal.snapshots(3)]
    table.journal.close()

    # Before, at and after each snapshot kept, every mark of the restarted round, and a spread of the rest.
    around = {s + d for s in kept for d in (-2, -1, 0, 1, 2)}
    for mark in sorted({*range(0, last + 1, 9), *around, *range(restarted_after - 4, restarted_after + 8), last}):
        expected = published(path, "grand-slam", full_replay(path, "grand-slam", mark), mark)
        got = published(path, "grand-slam", resumed(path, "grand-slam", mark), mark)
        assert got == expected, f"mark {mark}"
    derived = published(path, "grand-slam", resumed(path, "grand-slam", restarted_after), restarted_after)
    assert {kind for kind, _ in derived} >= {"settlement", "fault", "meters"}  # the comparison compared them


@pytest.mark.parametrize("game", ["grand-slam", "jokers-22", "baseball-poker"])
def test_an_old_journal_resumes_to_what_a_full_replay_publishes(tmp_path: Path, game: str) -> None:
    shutil.copy(FIXTURES / f"{game}.sqlite3", tmp_path / "journal.sqlite3")
    shutil.copy(FIXTURES / f"{game}.head", tmp_path / "journal.head")
    path = tmp_path / "journal.sqlite3"
    reader = Journal(path, readonly=True)
    last, kept = reader.last_seq, [s.seq for s in reader.snapshots(3)]
    reader.close()
    # Each mark's next 40 entries (a round or more: a replica that differs shows it within them).
    marks = sorted({0, last, *range(0, last, 53), *(s + d for s in kept for d in (-1, 0, 1, 5))})
    for mark in marks:
        expected = published(path, game, full_replay(path, game, mark), mark, mark + 40)
        assert published(path, game, resumed(path, game, mark), mark, mark + 40) == expected, f"mark {mark}"


def test_after_retention_archived_the_first_rounds_a_restarted_publisher_still_counts_every_round(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    deal_rounds(table, 6)
    table.journal.set_meta(MARK_KEY, str(table.journal.last_seq))  # the broker had all of it
    done = retain(table.journal, tmp_path / "archive", days=1e-9, floor_required=False, most=None)
    assert done.why == "exported" and table.journal.first_seq() > 1
    deal_rounds(table, 2)
    table.open_round({"seats": [{"seat": 3, "wagers": {"first": 10}}]}, by="dealer")
    table.journal.set_meta(MARK_KEY, str(table.journal.last_seq))  # restarted mid-round
    table.journal.close()

    table = make_table(tmp_path)
    subscriber = Subscriber(mosquitto.broker).start()
    publisher = make_publisher(floor_config(mosquitto.broker), table)
    publisher.start()
    while table.awaiting.kind == "card":
        table.card(parse_card(DECK[table.shoe.dealt_count % len(DECK)]), {"via": "shoe"})
    last = table.journal.last_seq
    assert subscriber.wait_for(lambda s: any(m.seq == last for m in s.parsed("meters")))
    publisher.stop()
    subscriber.stop()

    meters = subscriber.parsed("meters")[-1].payload["meters"]
    assert meters == table.meters.to_json()
    assert meters["rounds"] == 9  # the archived rounds too
    assert [m.payload["round"] for m in subscriber.parsed("settlement")] == [9]
    assert all(m.site == SITE for m in subscriber.parsed())


def test_a_mark_older_than_every_snapshot_kept_after_retention_is_sent_withheld_not_wrong(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    deal_rounds(table, 6)
    retain(table.journal, tmp_path / "archive", days=1e-9, floor_required=False, most=None)
    deal_rounds(table, 4)
    path, first = table.journal.path, table.journal.first_seq()
    oldest = table.journal.snapshots(3)[0].seq
    table.journal.close()

    replica = resumed(path, "grand-slam", first)  # the state after entry `first` is known nowhere
    messages = published(path, "grand-slam", replica, first)
    general = [(kind, m) for kind, m in messages if kind != "surveillance"]
    blind = [m for kind, m in general if m["seq"] <= oldest]
    assert blind and all(m.get("withheld") is True and m["body"] == {} for m in blind)
    assert [kind for kind, m in general if m["seq"] <= oldest] == ["entry"] * len(blind)
    assert any(kind == "meters" for kind, m in general if m["seq"] > oldest)


def test_after_retention_every_mark_from_the_oldest_usable_snapshot_publishes_what_it_would(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    deal_rounds(table, 6)
    retain(table.journal, tmp_path / "archive", days=1e-9, floor_required=False, most=None)
    # The oldest snapshot kept is now older than the entries kept; a round opens after, a card is dealt.
    table.open_round({"seats": [{"seat": 5, "wagers": {"first": 15}}]}, by="dealer")
    table.card(parse_card("9H"), {"via": "shoe"})
    path, first = table.journal.path, table.journal.first_seq()
    kept = [s.seq for s in table.journal.snapshots(3)]
    last = table.journal.last_seq
    table.journal.close()
    assert kept[0] < first - 1 <= kept[1], (kept, first)  # the case: a snapshot whose following entries are gone

    oracle_mark = kept[1]  # the oldest snapshot with every entry after it
    oracle = published(path, "grand-slam", resumed(path, "grand-slam", oracle_mark), oracle_mark)
    for mark in range(oracle_mark, last + 1):
        expected = [(kind, m) for kind, m in oracle if m["seq"] > mark]
        assert published(path, "grand-slam", resumed(path, "grand-slam", mark), mark) == expected, f"mark {mark}"
    assert not any(m.get("withheld") for _, m in oracle)
