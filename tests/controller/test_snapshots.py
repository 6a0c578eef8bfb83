"""Snapshots at round boundaries: start-up restores the last one (checked against the entries it
summarises) and replays only what follows; recall reads rounds by number; a snapshot that
disagrees with its entries stops the table until `tablectl journal rebuild` makes it again."""

from __future__ import annotations

import json
import random
import sqlite3
import zlib
from pathlib import Path

import pytest

from controller.cli.main import main
from controller.cli.synth import synthesize
from controller.journal.log import Journal, JournalCorrupt
from controller.table import Table, TableSetup, TableState, parse_entry
from controller.table.faults import Fault
from controller.table.latch import FaultLatch
from controller.table.snapshots import snapshot_state

GAMES = ("grand-slam", "jokers-22", "baseball-poker")


def _full_replay(journal: Journal, game: str) -> TableState:
    """The table's state as the reducer gives it from every entry from the first (no snapshot read)."""
    state = TableState.initial(TableSetup.of(game, {}))
    for entry in journal.entries():
        state, _ = state.apply(parse_entry(entry))
    return state


@pytest.mark.parametrize("game", GAMES)
def test_a_restart_from_the_last_snapshot_is_the_table_a_full_replay_gives(tmp_path: Path, game: str) -> None:
    journal = synthesize(tmp_path, 12, game=game, seed=5)
    table = Table(journal, game=game, rules={})
    # Mid-round when the daemon stops: the next round is open.
    table.open_round(table.adapter.demo_opening(random.Random(1), seats=table.seats), by="dealer")
    live = table.snapshot_state()
    journal.close()

    journal = Journal(tmp_path / "journal.sqlite3")
    last = journal.snapshots(1)[0]
    # Only what follows the last round's end is replayed: the dealer's confirm and the new round.
    assert [e.kind for e in journal.entries(after=last.seq)] == ["button", "round-open"]
    restarted = Table(journal, game=game, rules={})
    assert restarted.snapshot_state() == live == snapshot_state(_full_replay(journal, game))
    assert restarted.meters.rounds + restarted.meters.voids == 12


def test_recall_reads_the_last_rounds_by_number_as_the_table_settled_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthesize(tmp_path, 30, seed=2).close()
    journal = Journal(tmp_path / "journal.sqlite3")
    replayed = _full_replay(journal, "grand-slam")
    # The synthetic dealer confirms every round's payouts: recall says each is paid.
    expected = [{**replayed.rounds[n].to_json(with_file=True), "payment": "paid"} for n in range(26, 31)]
    journal.close()
    assert main(["recall", "--sim", "--state-dir", str(tmp_path), "--last", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == expected
    assert main(["recall", "--sim", "--state-dir", str(tmp_path), "--round", "3", "--export", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == replayed.rounds[3].round_file


def _tamper_last_snapshot(path: Path) -> None:
    db = sqlite3.connect(path)
    seq, chain, text = db.execute("SELECT seq, hash, body FROM snapshots ORDER BY seq DESC LIMIT 1").fetchone()
    body = json.loads(text)
    body["state"]["meters"]["rounds"] += 1  # one more round counted than the entries settle
    text = json.dumps(body, separators=(",", ":"), sort_keys=True)
    crc = zlib.crc32(f"{seq}\x1f{chain}\x1f{text}".encode())
    db.execute("UPDATE snapshots SET body = ?, crc = ? WHERE seq = ?", (text, crc, seq))
    db.commit()
    db.close()


def test_a_snapshot_that_disagrees_with_its_entries_stops_the_table_until_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synthesize(tmp_path, 6, seed=3).close()
    path = tmp_path / "journal.sqlite3"
    _tamper_last_snapshot(path)
    with pytest.raises(JournalCorrupt, match=r"disagrees with the entries it summarises \(its 'meters' differs\)"):
        Table(Journal(path), game="grand-slam", rules={})
    assert main(["journal", "rebuild", "--sim", "--state-dir", str(tmp_path)]) == 0
    assert "rebuilt snapshots and the round index" in capsys.readouterr().out
    table = Table(Journal(path), game="grand-slam", rules={})
    assert table.meters.rounds + table.meters.voids == 6


def test_a_damaged_snapshot_is_refused_not_used(tmp_path: Path) -> None:
    synthesize(tmp_path, 3, seed=4).close()
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    db.execute("UPDATE snapshots SET body = replace(body, '\"rounds\":', '\"rounds\": ')")
    db.commit()
    db.close()
    with pytest.raises(JournalCorrupt, match=r"snapshot after entry \d+ does not match its checksum"):
        Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={})


def test_journal_synth_and_verify_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    assert main(["journal", "synth", "--rounds", "20", "--state-dir", str(state), "--game", "jokers-22"]) == 0
    assert "20 jokers-22 rounds written through the table" in capsys.readouterr().out
    with pytest.raises(SystemExit) as refused:  # the configuration's game is not the journal's
        main(["journal", "verify", "--sim", "--state-dir", str(state)])
    assert refused.value.code == 2
    assert "jokers-22 table, but the configuration says grand-slam" in capsys.readouterr().err
    config = tmp_path / "table.toml"
    config.write_text('[table]\ngame = "jokers-22"\n')
    assert main(["journal", "verify", "--sim", "--config", str(config), "--state-dir", str(state)]) == 0
    assert "hash chain, head file and snapshots all pass" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["verify", "rebuild", "retain"])
def test_a_baseball_poker_journal_without_its_configuration_is_refused_in_one_line_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """With one snapshot (one round) the table replays from the first entry, and Grand Slam's rules
    met a Baseball poker opening: a traceback (ValueError: unknown event kind, or a RuleError); rebuild had
    already cleared the snapshots by then."""
    state = tmp_path / "state"
    synthesize(state, 1, game="baseball-poker", seed=3).close()
    before = (state / "journal.sqlite3").read_bytes()
    with pytest.raises(SystemExit) as refused:
        main(["journal", command, "--sim", "--state-dir", str(state)])
    assert refused.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert (
        len(said) == 1 and "the journal is of a baseball-poker table, but the configuration says grand-slam" in said[0]
    )
    assert '--config FILE (its [table] says game = "baseball-poker")' in said[0]
    if command == "rebuild":
        assert (state / "journal.sqlite3").read_bytes() == before  # its snapshots are still there
    config = tmp_path / "table.toml"
    config.write_text('[table]\ngame = "baseball-poker"\n')
    assert main(["journal", "verify", "--sim", "--config", str(config), "--state-dir", str(state)]) == 0
    assert "hash chain, head file and snapshots all pass" in capsys.readouterr().out


def test_a_journal_from_before_snapshots_is_upgraded_and_starts_at_the_same_state(tmp_path: Path) -> None:
    journal = synthesize(tmp_path, 8, seed=6)
    state = Table(journal, game="grand-slam", rules={}).snapshot_state()
    journal.close()
    db = sqlite3.connect(tmp_path / "journal.sqlite3")  # as the tablectl before snapshots left it
    db.executescript(
        "DROP TABLE snapshots; DROP TABLE rounds; UPDATE meta SET value = '1' WHERE key = 'schema';"
        "DELETE FROM meta WHERE key = 'head';"
    )
    db.close()
    (tmp_path / "journal.head").unlink()
    upgraded = Journal(tmp_path / "journal.sqlite3")
    assert Table(upgraded, game="grand-slam", rules={}).snapshot_state() == state
    assert upgraded.snapshots(1) and upgraded.head is not None and upgraded.head.read() is not None


def test_synth_takes_over_a_journal_left_mid_round(tmp_path: Path) -> None:
    journal = synthesize(tmp_path, 3, seed=1)
    table = Table(journal, game="grand-slam", rules={})
    table.open_round({"seats": [{"seat": 2, "wagers": {"first": 5}}]}, by="dealer")
    journal.close()
    journal = synthesize(tmp_path, 2, seed=2)
    table = Table(journal, game="grand-slam", rules={})
    assert table.round_no == 6 and table.meters.voids == 1 and table.meters.rounds + table.meters.voids == 6


def test_a_fault_read_back_from_a_snapshot_offers_the_supervisor_the_same_actions() -> None:
    # A joker in a shoe without jokers cannot be confirmed (dealing it would stop play again); an
    # ordinary impossible card can. Each must read back from the snapshot's JSON as it was written.
    joker = Fault(7, "impossible-card", "JK cannot come from this shoe", "t", 3, "JK", unconfirmable=True)
    eight = Fault(9, "impossible-card", "8C cannot come from this shoe", "t", 3, "8C")
    latch = FaultLatch({7: joker, 9: eight}, [])
    back = FaultLatch.from_json(latch.faults_json(), latch.held_json())
    assert [f.actions for _, f in sorted(back.faults.items())] == [joker.actions, eight.actions]
    assert "confirm" not in back.faults[7].actions and "confirm" in back.faults[9].actions
    assert back.faults_json() == latch.faults_json()
