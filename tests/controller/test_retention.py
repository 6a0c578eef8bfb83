"""Retention: old rounds leave the live journal only once exported, read back and checked, and
only as far as the floor has confirmed; `tablectl recall --archive` and `tablectl replay` read
them from the archive; the table still starts and verifies on what is left."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from controller.cli.main import main
from controller.cli.synth import synthesize
from controller.games.replay import settle_round_file
from controller.journal.log import FLOOR_CONFIRMED_KEY, Journal
from controller.journal.retention import retain
from controller.table import Table

NOW = 1e-9  # days: every round that has ended is old enough


def _journal(tmp_path: Path, rounds: int = 12) -> Journal:
    journal = synthesize(tmp_path, rounds, seed=11)
    time.sleep(0.01)
    return journal


def test_old_rounds_are_exported_checked_and_only_then_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = _journal(tmp_path)
    before = Table(journal, game="grand-slam", rules={})
    settled = {n: before.rounds[n] for n in range(1, 13)}
    state = before.snapshot_state()
    last = journal.last_seq

    done = retain(journal, tmp_path / "archive", days=NOW, floor_required=False)
    assert done.directory is not None and done.rounds is not None and done.rounds[0] == 1
    assert journal.disk_usage()["archive"] > 0  # what doctor and /metrics report
    kept_from = journal.first_seq()
    assert 1 < kept_from <= journal.snapshots(2)[0].seq + 1 and journal.last_seq == last
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):  # what was not exported stays
        journal._db.execute("DELETE FROM entries WHERE seq = ?", (kept_from,))
    journal.close()

    again = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={})
    assert again.snapshot_state() == state  # the table starts on what is left, exactly as it was
    assert main(["journal", "verify", "--sim", "--state-dir", str(tmp_path)]) == 0
    capsys.readouterr()

    first = done.rounds[0]
    assert main(["recall", "--archive", str(tmp_path / "archive"), "--round", str(first), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{**settled[first].to_json(with_file=True), "payment": "paid"}]
    out = tmp_path / "round.json"
    assert main(["recall", "--archive", str(tmp_path / "archive"), "--round", str(first), "--export", str(out)]) == 0
    assert settle_round_file(json.loads(out.read_text())) == settled[first].settlement
    assert main(["replay", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == settled[first].settlement


def test_retention_never_removes_what_the_floor_has_not_confirmed(tmp_path: Path) -> None:
    journal = _journal(tmp_path)
    nothing = retain(journal, tmp_path / "archive", days=NOW, floor_required=True)
    assert nothing.directory is None and "the floor has confirmed" in nothing.why
    assert journal.first_seq() == 1

    journal.set_meta(FLOOR_CONFIRMED_KEY, '{"store-a": 40, "store-b": 55}')  # both stores hold entries 1 to 40
    done = retain(journal, tmp_path / "archive", days=NOW, floor_required=True)
    assert done.directory is not None and 1 < journal.first_seq() <= 41


def test_rounds_younger_than_the_retention_age_stay(tmp_path: Path) -> None:
    journal = _journal(tmp_path, rounds=4)
    done = retain(journal, tmp_path / "archive", days=90, floor_required=False)
    assert done.directory is None and journal.first_seq() == 1
    assert not (tmp_path / "archive").exists()
