"""Snapshots: the table state kept in the journal's database at each round's end, and start-up
from them.

`snapshot_state` writes a `TableState` as plain JSON, each part by the module that owns it (the
engine state through the engine's JSON, the round, the fault latch, the meters, the shoe's count,
the camera); `load_state` reads it back. Its form is fixed: old snapshots are checked against the
entries they summarise at start-up, and any difference stops the table.

`restore` is start-up: the last snapshot, checked (the previous snapshot, or the first entry,
plus the entries between must give it exactly), then the entries after it, applied by the one
reducer (`TableState.apply`). `keep` writes a snapshot and the rounds finished since the last one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from controller.engine.base import JSON, Effect, from_json, to_json
from controller.engine.cards import ShoeTracker
from controller.journal.entries import parse_entry
from controller.journal.log import Journal, JournalCorrupt, Snapshot
from controller.journal.rounds import RecentRounds, RoundRecord
from controller.table.camera import SceneWatch
from controller.table.errors import TableError
from controller.table.latch import FaultLatch
from controller.table.meters import Meters
from controller.table.state import TableSetup, TableState

#: While replaying a long tail at start (a journal from before snapshots), keep one every so many rounds.
REPLAY_SNAPSHOT_EVERY = 500


def snapshot_state(state: TableState, engine_json: Callable[[Any], JSON] = to_json) -> dict[str, JSON]:
    """The whole table state as plain JSON, each part from the module that owns it (the engine's
    state by `engine_json`: the table's `SharedJson`, whose JSON of it is `to_json`'s)."""
    current = state.current
    doc: dict[str, Any] = {
        "game": state.game_name,
        "engine": engine_json(state.engine),
        "round_no": state.round_no,
        "round": current.record_json() if current is not None else None,
        "round_ended": state.rounds.ended_at(state.round_no),
        "faults": state.latch.faults_json(),
        "held": state.latch.held_json(),
        "meters": state.meters.to_json(),
        "shoe": state.shoe.to_json(),
        "last_card": state.last_card,
        "shoe_link": state.shoe_link,
        "notice": state.notice,
        "shuffle_due": state.shuffle_due,
        "camera": state.camera.to_json(),
    }
    return _plain(doc)


def load_state(setup: TableSetup, doc: Mapping[str, Any]) -> TableState:
    """The state `snapshot_state` wrote (TableError when it is another game's)."""
    if doc["game"] != setup.game_name:
        raise TableError(
            f"the journal is of a {doc['game']} table, but the configuration says {setup.game_name}"
        )
    current = RoundRecord.from_record(doc["round"]) if doc["round"] is not None else None
    shoe = ShoeTracker(setup.composition)
    shoe.restore(doc["shoe"])
    camera = SceneWatch(setup.adapter.camera())
    camera.restore(doc["camera"])
    return TableState(
        setup,
        from_json(setup.game.state_type, doc["engine"]),
        shoe,
        camera,
        round_no=doc["round_no"],
        rounds=RecentRounds.from_snapshot(current, doc["round_ended"]),
        latch=FaultLatch.from_json(doc["faults"], doc["held"]),
        meters=Meters.from_json(doc["meters"]),
        last_card=doc["last_card"],
        shoe_link=doc["shoe_link"],
        notice=doc["notice"],
        shuffle_due=doc["shuffle_due"],
    )


def keep(journal: Journal, state: TableState, engine_json: Callable[[Any], JSON] = to_json) -> bool:
    """Keep `state` (after the journal's last entry) and the rounds finished since the last
    snapshot in the journal's database (a read-only journal keeps nothing)."""
    if journal.readonly:
        return False
    body = {"state": snapshot_state(state, engine_json), "floor_confirmed": journal.floor_confirmed()}
    if not journal.write_snapshot(body, state.rounds.to_index()):
        return False
    state.rounds.forget_finished(state.round_no)
    return True


def restore(
    journal: Journal, setup: TableSetup, *, applied: Callable[[int, tuple[Effect, ...]], None] | None = None
) -> TableState:
    """The state after the journal's last entry: the last snapshot (checked), then the entries
    after it. `applied(seq, effects)` is told of each entry replayed. Snapshots are kept as
    rounds end on a long tail, and once at the end when any round ended."""
    snapshots = journal.snapshots(2)
    after = journal.first_seq() - 1
    if snapshots:
        last = snapshots[-1]
        check(journal, setup, snapshots[-2] if len(snapshots) > 1 else None, last)
        state = load_state(setup, last.body["state"])
        after = last.seq
    elif after > 0:
        raise JournalCorrupt(
            f"{journal.path}: entries up to {after} were archived but no snapshot of the table after "
            "them is left; run `tablectl journal rebuild` with the archive"
        )
    else:
        state = TableState.initial(setup)
    due = 0
    for entry in journal.entries(after=after):
        state, effects = state.apply(parse_entry(entry))
        if applied is not None:
            applied(entry.seq, effects)
        if state.ended_by(entry.seq):
            due += 1
            if due % REPLAY_SNAPSHOT_EVERY == 0:
                keep(journal, state)
    if due % REPLAY_SNAPSHOT_EVERY:
        keep(journal, state)
    return state


def check(journal: Journal, setup: TableSetup, previous: Snapshot | None, last: Snapshot) -> None:
    """`last` must be exactly what the previous snapshot (or the first entry) and the entries
    between give: a snapshot that disagrees with its entries stops the table."""
    start = journal.first_seq() - 1
    if previous is not None:
        state = load_state(setup, previous.body["state"])
        start = previous.seq
    elif start > 0:
        raise JournalCorrupt(
            f"{journal.path}: the snapshot after entry {last.seq} cannot be checked (no earlier snapshot "
            "and no first entries); run `tablectl journal rebuild`"
        )
    else:
        state = TableState.initial(setup)
    for entry in journal.entries(after=start, upto=last.seq):
        state, _ = state.apply(parse_entry(entry))
    made = snapshot_state(state)
    kept = last.body["state"]
    if made != kept:
        part = next((k for k in sorted(set(made) | set(kept)) if made.get(k) != kept.get(k)), "?")
        raise JournalCorrupt(
            f"{journal.path}: the snapshot after entry {last.seq} disagrees with the entries it summarises "
            f"(its {part!r} differs). The entries are the truth: run `tablectl journal rebuild` to make the "
            "snapshots again from them, then start the table"
        )


def _plain(value: dict[str, Any]) -> dict[str, JSON]:
    # Exactly what a stored snapshot reads back as (tuples become lists), so the two compare.
    plain: dict[str, JSON] = json.loads(json.dumps(value, sort_keys=True))
    return plain
