"""The state's JSON made part by part, reusing what did not change since the last entry
(`SharedJson`, as the live feed's snapshot makes it), is byte for byte the JSON made whole
(`to_json`), after every entry of rounds of every game, and so is the snapshot each role is
served (the dealer's masked, the supervisor's and surveillance's whole)."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.engine import game_names
from controller.engine.base import SharedJson, to_json
from controller.journal.log import Journal
from controller.table import Table, TableError
from controller.table.view import snapshot
from controller.table.visibility import sight

OPENINGS: dict[str, list[dict[str, Any]]] = {
    "grand-slam": [
        {"seats": [{"seat": 3, "wagers": {"first": 10, "second": 10, "third": 10}}], "blind_seat": 4},
        {"seats": [{"seat": s, "wagers": {"first": 5, "second": 5, "third": 5}} for s in (1, 2, 5, 7)]},
    ],
    "jokers-22": [
        {"banker": {"stake": 500}, "spots": [{"spot": 3, "wagers": [{"player": "ann", "amount": 50}]}]},
        {
            "banker": {"stake": 900},
            "spots": [
                {"spot": 1, "wagers": [{"player": "bo", "amount": 20}, {"player": "cy", "amount": 10}]},
                {"spot": 4, "wagers": [{"player": "di", "amount": 40}]},
            ],
        },
    ],
    "baseball-poker": [
        {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 3, "stack": 100}]},
    ],
}
ROLES = ("dealer", "supervisor", "surveillance")


def text(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"))


def nodes(doc: Any) -> list[Any]:
    """Every object and list in `doc`, `doc` too (non-empty ones: an empty one may be any)."""
    found = [doc] if isinstance(doc, dict | list) and doc else []
    for value in doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else ():
        found += nodes(value)
    return found


def chooser(who: Any) -> dict[str, Any]:
    """Who decides, as a round file's decision names them (a seat; a spot and its player)."""
    return {k: who[k] for k in ("seat", "spot", "player") if k in who}


def test_every_game_has_openings_here() -> None:
    assert set(game_names()) <= set(OPENINGS), "add the new game's openings to this test"


@pytest.mark.parametrize("game", sorted(OPENINGS))
def test_the_state_json_reused_part_by_part_is_byte_for_byte_the_whole_conversion(tmp_path: Path, game: str) -> None:
    table = Table(Journal(tmp_path / "journal.sqlite3"), game=game, rules={}, simulated=True)
    shared = SharedJson()
    rng = random.Random(f"{game}-20261203")
    entries = reused = 0
    last: Any = None

    def check() -> None:
        nonlocal entries, reused, last
        made = shared(table.state)
        assert text(made) == text(to_json(table.state))
        if last is not None:
            before = {id(node) for node in nodes(last)}
            reused += sum(1 for node in nodes(made) if id(node) in before)
        last = made
        entries += 1
        whole, plain = snapshot(table, shared), snapshot(table)
        for role in ROLES:
            seen = sight(table, None if role == "dealer" else role)
            assert text(seen.snapshot(whole)) == text(seen.snapshot(plain)), role

    check()
    for opening in OPENINGS[game] * 3:
        if table.now.payouts_due():
            table.button("confirm", by="dealer")
            check()
        if table.shuffle_due:
            table.shoe_reshuffled("dealer")
            check()
        table.open_round(opening, by="dealer")
        check()
        deck = list(table.shoe.composition.cards())
        rng.shuffle(deck)
        while table.awaiting.kind in ("card", "decision") and deck:
            awaiting = table.awaiting
            if awaiting.kind == "card":
                table.card(deck.pop(), {"via": "test"})
            else:
                for action in rng.sample(list(awaiting.allowed), len(awaiting.allowed)):
                    try:
                        table.decide({**chooser(awaiting.who), "action": action}, by="dealer")
                        break
                    except TableError:
                        continue
                else:
                    pytest.fail(f"no allowed decision was taken: {awaiting}")
            check()
        assert table.awaiting.kind == "round", f"a {game} round did not end"
    assert entries > 30 and reused > 0  # parts were reused, and found equal all the same


def _immutable_parts(value: Any, found: dict[int, Any]) -> None:
    """Every frozen dataclass and tuple within `value` (what SharedJson keeps; a card is
    converted alone), by id."""
    import dataclasses

    from controller.engine.cards import Card

    if isinstance(value, Card):
        return
    params = getattr(type(value), "__dataclass_params__", None)
    if params is not None and params.frozen:
        found[id(value)] = value
        for f in dataclasses.fields(value):
            _immutable_parts(getattr(value, f.name), found)
    elif isinstance(value, tuple):
        found[id(value)] = value
        for v in value:
            _immutable_parts(v, found)
    elif isinstance(value, Mapping):
        for v in value.values():
            _immutable_parts(v, found)
    elif isinstance(value, list):
        for v in value:
            _immutable_parts(v, found)


def test_what_is_kept_for_the_next_state_is_the_last_states_parts_and_nothing_older(tmp_path: Path) -> None:
    """Kept for the next entry: exactly the parts of the last state (each the same object), so
    the memory held never grows with the entries and no older part's id is taken for a new one."""
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    shared = SharedJson()
    rng = random.Random("kept-20261204")
    for opening in OPENINGS["grand-slam"] * 2:
        if table.now.payouts_due():
            table.button("confirm", by="dealer")
        if table.shuffle_due:
            table.shoe_reshuffled("dealer")
        table.open_round(opening, by="dealer")
        deck = list(table.shoe.composition.cards())
        rng.shuffle(deck)
        while table.awaiting.kind == "card" and deck:
            table.card(deck.pop(), {"via": "test"})
            shared(table.state)
            parts: dict[int, Any] = {}
            _immutable_parts(table.state, parts)
            kept = shared._last  # what it holds is the point
            assert set(kept) == set(parts) and all(kept[i][0] is parts[i] for i in kept)


@pytest.mark.parametrize("game", sorted(OPENINGS))
def test_the_snapshot_kept_as_a_round_ends_with_a_screen_listening_is_the_state_made_whole(
    tmp_path: Path, game: str
) -> None:
    """With a screen listening (the live feed making the state's JSON after each entry, its parts
    reused), the snapshot the table keeps as each round ends is the state made whole, byte for
    byte (what the next start checks it against, controller/table/snapshots.py's `check`), and the
    table comes back from it to the same state."""
    from controller.api.live import FeedSource
    from controller.api.side import table_side
    from controller.table.snapshots import snapshot_state

    table = Table(Journal(tmp_path / "journal.sqlite3"), game=game, rules={}, simulated=True)
    told: list[Any] = []
    table_side(table, None, deliver=lambda tick, message: told.append(message))
    (feed,) = [listener for listener in table.listeners if isinstance(listener, FeedSource)]
    feed.count = 1  # a screen listens
    rng = random.Random(f"{game}-kept-20261204")
    kept = 0
    for opening in OPENINGS[game] * 2:
        if table.now.payouts_due():
            table.button("confirm", by="dealer")
        if table.shuffle_due:
            table.shoe_reshuffled("dealer")
        table.open_round(opening, by="dealer")
        deck = list(table.shoe.composition.cards())
        rng.shuffle(deck)
        while table.awaiting.kind in ("card", "decision") and deck:
            awaiting = table.awaiting
            if awaiting.kind == "card":
                table.card(deck.pop(), {"via": "test"})
            else:
                for action in rng.sample(list(awaiting.allowed), len(awaiting.allowed)):
                    try:
                        table.decide({**chooser(awaiting.who), "action": action}, by="dealer")
                        break
                    except TableError:
                        continue
        (last,) = table.journal.snapshots(1)
        assert last.seq == table.journal.last_seq  # kept as the round ended
        assert text(last.body["state"]) == text(snapshot_state(table.now))
        kept += 1
    assert kept and told  # the feed made the state's JSON all along
    table.journal.close()
    again = Table(Journal(tmp_path / "journal.sqlite3"), game=game, rules={}, simulated=True)
    assert text(snapshot_state(again.now)) == text(snapshot_state(table.now))
