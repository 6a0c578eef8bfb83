"""Properties of every Jokers 22 round, whatever the cards and choices: no chip appears or vanishes,
the banker's stake bounds what the banker wins (rotation) or loses (collect-first), and a round
exported as a round file replays to the same settlement."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.base import CardDealt, from_json, to_json
from controller.engine.cards import ShoeComposition
from controller.games.jokers22.rules import (
    GAME,
    Banker,
    Decision,
    Jokers22Rules,
    Jokers22State,
    OpenRound,
    SpotBet,
    Wager,
    surrender_allowed,
)
from controller.games.replay import settle_round_file

NAMES = ["ann", "bob", "carl", "dan", "eve"]


@st.composite
def openings(draw: st.DrawFn) -> OpenRound:
    spots = sorted(draw(st.sets(st.integers(1, 7), min_size=1, max_size=4)))
    bets = []
    for spot in spots:
        players = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
        bets.append(SpotBet(spot, tuple(Wager(p, draw(st.integers(1, 200))) for p in players)))
    rules = Jokers22Rules(
        coverage=draw(st.sampled_from(["rotation", "collect-first"])),
        double_after_split=draw(st.booleans()),
        surrender_after_split=draw(st.booleans()),
        time_fee=draw(st.integers(0, 3)),
    )
    return OpenRound(rules=rules, banker=Banker(stake=draw(st.integers(1, 600))), spots=tuple(bets))


def play(opening: OpenRound, shoe_seed: int, choices: random.Random) -> Jokers22State:
    """Play a round as a table would: cards from a shuffled shoe, a random allowed choice at every
    question, and now and then a surrender by a player who may surrender."""
    shoe = list(ShoeComposition(6, 1).cards())
    random.Random(shoe_seed).shuffle(shoe)
    state, _ = GAME.apply(GAME.initial(), opening)
    while True:
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card":
            state, _ = GAME.apply(state, CardDealt(shoe.pop()))
            continue
        if awaiting.kind != "decision":
            return state
        spot = int(awaiting.who["spot"])
        may = surrender_allowed(state, spot)
        if may and choices.random() < 0.2:
            ev = Decision(spot, "surrender", choices.choice(may))
        else:
            action = choices.choice([a for a in awaiting.allowed if a != "surrender"])
            player = str(awaiting.who["player"]) if action in ("match", "decline") else None
            ev = Decision(spot, action, player)
        state, _ = GAME.apply(state, ev)


def wager_results(settlement: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for sp in settlement["spots"] for h in sp["hands"] for w in h["wagers"]]


@settings(max_examples=150, deadline=None)
@given(openings(), st.integers(0, 2**32), st.integers(0, 2**32))
def test_every_round_balances_and_the_stake_bounds_the_banker(opening: OpenRound, shoe_seed: int, seed: int) -> None:
    state = play(opening, shoe_seed, random.Random(seed))
    s = GAME.settlement(state)
    assert sum(p["net"] for p in s["players"]) + s["banker"]["net"] == 0
    wagers = wager_results(s)
    stake = opening.banker.stake
    for w in wagers:
        assert -w["amount"] <= w["net"] <= 2 * w["amount"]
    if opening.rules.coverage == "rotation":
        assert s["banker"]["net"] <= stake
        assert sum(w["covered"] for w in wagers) <= stake
        if not any(w["result"] == "win 2 to 1" for w in wagers):
            assert s["banker"]["net"] >= -stake  # only a 2 to 1 natural costs the banker more than the stake
    else:
        assert s["banker"]["net"] >= -stake
    assert sum(t["amount"] for t in s["time_collection"]) == opening.rules.time_fee * len(opening.spots)


@settings(max_examples=60, deadline=None)
@given(openings(), st.integers(0, 2**32), st.integers(0, 2**32))
def test_an_exported_round_file_replays_to_the_same_settlement(opening: OpenRound, shoe_seed: int, seed: int) -> None:
    state = play(opening, shoe_seed, random.Random(seed))
    exported = json.loads(json.dumps(GAME.round_file(state)))
    assert settle_round_file(exported) == GAME.settlement(state)
    assert from_json(Jokers22State, json.loads(json.dumps(to_json(state)))) == state
