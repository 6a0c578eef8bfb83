"""Journals written by an earlier table load unchanged: the fixtures (tests/controller/fixtures,
made once by make_journals.py with the code of their day) open to exactly the state that code
gave, their kept snapshots pass the check against their entries, and a full replay from the
first entry (what `tablectl journal rebuild` does) gives the same state again."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from controller.engine.base import to_json
from controller.journal.entries import OtherEntry
from controller.journal.log import Journal
from controller.table import Table, TableSetup, TableState, parse_entry
from controller.table.snapshots import snapshot_state

FIXTURES = Path(__file__).parent / "fixtures"
GAMES = ("grand-slam", "jokers-22", "baseball-poker")


def _copy(game: str, into: Path) -> Path:
    shutil.copy(FIXTURES / f"{game}.sqlite3", into / "journal.sqlite3")
    shutil.copy(FIXTURES / f"{game}.head", into / "journal.head")
    return into / "journal.sqlite3"


def _recorded(game: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((FIXTURES / f"{game}.state.json").read_text())
    return recorded


@pytest.mark.parametrize("game", GAMES)
def test_an_old_journal_opens_to_the_state_its_own_code_gave(tmp_path: Path, game: str) -> None:
    path = _copy(game, tmp_path)
    table = Table(Journal(path), game=game, rules={})
    try:
        assert table.snapshot_state() == _recorded(game)
        assert table.blocked and table.held  # it was left stopped, with a card held
    finally:
        table.journal.close()


@pytest.mark.parametrize("game", GAMES)
def test_an_old_journal_replayed_from_its_first_entry_gives_the_same_state(tmp_path: Path, game: str) -> None:
    path = _copy(game, tmp_path)
    reader = Journal(path, readonly=True, derived=False)
    try:
        state = TableState.initial(TableSetup.of(game, {}))
        for entry in reader.entries():
            state, _ = state.apply(parse_entry(entry))
        assert snapshot_state(state) == _recorded(game)
    finally:
        reader.close()


@pytest.mark.parametrize("game", GAMES)
def test_every_entry_of_an_old_journal_reads_as_its_own_record_and_replays_the_same_twice(
    tmp_path: Path, game: str
) -> None:
    path = _copy(game, tmp_path)
    reader = Journal(path, readonly=True, derived=False)
    try:
        records = [parse_entry(entry) for entry in reader.entries()]
        kept = [(s.seq, s.body["state"]) for s in reader.snapshots(3)]
    finally:
        reader.close()
    # One type per kind the table writes: none is left to a catch-all.
    assert not [r for r in records if isinstance(r, OtherEntry)]
    assert all(type(r).kind == e for r, e in zip(records, _kinds(game), strict=True))

    def replay() -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
        state = TableState.initial(TableSetup.of(game, {}))
        after: dict[int, dict[str, Any]] = {}
        effects = []
        for record in records:
            state, fx = state.apply(record)
            effects.append({"seq": record.seq, "effects": to_json(fx)})
            after[record.seq] = snapshot_state(state)
        return effects, after

    first, states = replay()
    assert replay() == (first, states)  # same entries in, same state and effects out
    # The snapshots the old table kept are what the reducer makes after the same entries.
    assert kept and all(states[seq] == state for seq, state in kept)


def _kinds(game: str) -> list[str]:
    db = sqlite3.connect(FIXTURES / f"{game}.sqlite3")
    try:
        return [kind for (kind,) in db.execute("SELECT kind FROM entries ORDER BY seq")]
    finally:
        db.close()
