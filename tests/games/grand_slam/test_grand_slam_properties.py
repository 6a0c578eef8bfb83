"""Properties of every Grand Slam round: wagers end home or out, no chip appears or vanishes,
and a round replayed from its round file (or rebuilt from JSON at every step) settles the same."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.base import CardDealt, effect_from_json, event_from_json, from_json, to_json
from controller.engine.cards import ShoeComposition, parse_card
from controller.games.grand_slam.rules import GAME, GrandSlamScored, GrandSlamState, OpenRound, SeatBet, StackMoved
from controller.games.replay import settle_round_file

from .conftest import open_round


@st.composite
def seat_bets(draw: st.DrawFn, seat: int) -> SeatBet:
    first = draw(st.integers(1, 10000))
    wagers = {"first": first}
    side = {}
    n = draw(st.integers(1, 3))
    if n >= 2:
        wagers["second"] = draw(st.integers(1, first))
    if n == 3:
        wagers["third"] = draw(st.integers(1, wagers["second"]))
        for name in draw(st.sets(st.sampled_from(["three_outs", "poker_bonus"]))):
            side[name] = draw(st.integers(1, 1000))
    return SeatBet(seat, wagers, side)  # type: ignore[arg-type]


@st.composite
def rounds(draw: st.DrawFn) -> tuple[OpenRound, list[str]]:
    seats = sorted(draw(st.sets(st.integers(1, 7), min_size=1, max_size=7)))
    bets = tuple(draw(seat_bets(s)) for s in seats)
    blind = None
    if len(seats) == 1 and draw(st.booleans()):
        blind = draw(st.sampled_from([s for s in (seats[0] - 1, seats[0] + 1) if 1 <= s <= 7]))
    dealing = draw(st.sampled_from(["base-major", "seat-major"]))
    opening = open_round({}, dealing=dealing)
    opening = OpenRound(rules=opening.rules, seats=bets, blind_seat=blind)
    shoe = [str(c) for c in ShoeComposition(6).cards()]
    random.Random(draw(st.integers(0, 2**32))).shuffle(shoe)
    return opening, shoe[:60]


def _live(opening: OpenRound, shoe: list[str], *, through_json: bool) -> tuple[GrandSlamState, list[object], int]:
    """Play like the daemon; with through_json, every event, effect and state crosses JSON."""
    state = GAME.initial()
    events: list[object] = [opening]
    effects: list[object] = []
    used = 0
    while True:
        ev = events.pop(0) if events else CardDealt(parse_card(shoe[used]))
        if through_json:
            ev = event_from_json(json.loads(json.dumps(to_json(ev))))
        state, out = GAME.apply(state, ev)  # type: ignore[arg-type]
        if isinstance(ev, CardDealt):
            used += 1
        if through_json:
            state = from_json(GrandSlamState, json.loads(json.dumps(to_json(state))))
            out = tuple(effect_from_json(json.loads(json.dumps(to_json(e)))) for e in out)
        effects.extend(out)
        if GAME.awaiting(state).kind != "card":
            return state, effects, used


@settings(max_examples=200, deadline=None)
@given(rounds())
def test_every_wager_ends_home_or_out(case: tuple[OpenRound, list[str]]) -> None:
    state, _, _ = _live(*case, through_json=False)
    settlement = GAME.settlement(state)
    for seat in settlement["seats"]:
        assert {w["result"] for w in seat["wagers"].values()} <= {"home", "out"}
    for seat in state.seats:
        assert set(seat.stacks) <= {"home", "out"}
        assert sorted(w for ws in seat.stacks.values() for w in ws) == sorted(seat.bet.wagers)


@settings(max_examples=200, deadline=None)
@given(rounds())
def test_money_is_conserved(case: tuple[OpenRound, list[str]]) -> None:
    opening, shoe = case
    state, effects, _ = _live(opening, shoe, through_json=False)
    settlement = GAME.settlement(state)
    bets = {b.seat: b for b in opening.seats}
    for seat in settlement["seats"]:
        bet = bets[seat["seat"]]
        # Every chip that left a base arrived home or out: nothing created, nothing lost.
        arrived = sum(
            e.amount
            for e in effects
            if (isinstance(e, StackMoved) and e.seat == bet.seat and e.to in ("home", "out"))
            or (isinstance(e, GrandSlamScored) and e.seat == bet.seat)
        )
        assert arrived == sum(bet.wagers.values())
        home = sum(w["amount"] for w in seat["wagers"].values() if w["result"] == "home")
        out = sum(w["amount"] for w in seat["wagers"].values() if w["result"] == "out")
        side = sum(
            s["paid"] if s["result"] == "won" else -s["amount"] if s["result"] == "lost" else 0
            for s in seat["side_bets"].values()
        )
        assert seat["net"] == home - out + side
        assert home + out == sum(bet.wagers.values())
    # The dealer's pays and takes add up to the table's win.
    settled = [e for e in effects if type(e).__name__ == "SeatSettled"]
    assert sum(e.net for e in settled) == sum(s["net"] for s in settlement["seats"])  # type: ignore[attr-defined]


@settings(max_examples=150, deadline=None)
@given(rounds())
def test_a_replayed_round_settles_as_the_live_engine_did(case: tuple[OpenRound, list[str]]) -> None:
    opening, shoe = case
    live, _, used = _live(opening, shoe, through_json=False)
    rebuilt, _, used_json = _live(opening, shoe, through_json=True)
    assert used_json == used
    assert GAME.settlement(rebuilt) == GAME.settlement(live)
    # The exported round file, settled by the replay command's code, gives what the table paid.
    round_file = json.loads(json.dumps(GAME.round_file(live)))
    assert settle_round_file(round_file) == GAME.settlement(live)
    # And the whole shoe slice with undealt cards after it settles the same, with cards_used saying so.
    round_file["cards"] = shoe
    assert settle_round_file(round_file) == GAME.settlement(live)


@settings(max_examples=150, deadline=None)
@given(rounds())
def test_every_card_goes_where_it_went_when_the_state_is_a_fresh_copy_at_each_step(
    case: tuple[OpenRound, list[str]],
) -> None:
    # The engine keeps where the next card goes for the last state it was asked of (the state is
    # immutable); a state rebuilt from JSON at every step is never the one kept: both deal alike.
    opening, shoe = case
    _, live, used = _live(opening, shoe, through_json=False)
    _, rebuilt, used_json = _live(opening, shoe, through_json=True)
    assert used_json == used
    assert [to_json(e) for e in rebuilt] == [to_json(e) for e in live]
