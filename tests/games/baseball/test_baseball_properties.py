"""Properties of every Baseball poker hand, whatever the cards, stacks, rules and choices (paying for
extra cards and wild cards among them): no chip appears or vanishes, the pots hold exactly what was
put in, nobody loses more than their stack, and a hand exported as a round file replays to the same
settlement."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.base import CardDealt, RoundInput, from_json, to_json
from controller.engine.cards import Card, ShoeComposition
from controller.games.baseball.rules import GAME, Action, BaseballRules, BaseballState, OpenRound, Player
from controller.games.replay import settle_round_file


@st.composite
def openings(draw: st.DrawFn) -> OpenRound:
    seats = sorted(draw(st.sets(st.integers(1, 7), min_size=2, max_size=7)))
    small = draw(st.integers(2, 6))
    pay_for_wild = draw(st.booleans())
    rules = BaseballRules(
        ante=draw(st.integers(0, 3)),
        small_bet=small,
        big_bet=small * draw(st.integers(1, 2)),
        extra_card=draw(st.sampled_from(["free", "pay", "none"])),
        rainout=draw(st.booleans()),
        burn_cards=draw(st.booleans()),
        check_option=draw(st.booleans()),
        natural_wins=draw(st.booleans()),
        double_ace_flush=draw(st.booleans()),
        pay_for_wild=pay_for_wild,
        pay_for_wild_down=pay_for_wild and draw(st.booleans()),
    )
    # short stacks too, so that players go all in and side pots form
    return OpenRound(rules, tuple(Player(seat, draw(st.integers(1, 80))) for seat in seats))


def fresh_deck(rng: random.Random) -> list[Card]:
    deck = list(ShoeComposition(1).cards())
    rng.shuffle(deck)
    return deck


def play(opening: OpenRound, seed: int) -> BaseballState:
    """Play a hand as a table would: cards from a shuffled deck (a new one whenever the engine
    says the deck is reshuffled), a random allowed action at every question. Chips are counted
    after every step."""
    rng = random.Random(seed)
    deck = fresh_deck(rng)
    state, _ = GAME.apply(GAME.initial(), opening)
    start = sum(p.stack for p in opening.players)
    while True:
        assert sum(s.stack for s in state.seats) + state.pot == start
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card":
            state, out = GAME.apply(state, CardDealt(deck.pop()))
            if any(fx.kind == "shoe-reshuffled" for fx in out):
                deck = fresh_deck(rng)
        elif awaiting.kind == "decision":
            # lean towards calling so that hands often reach the showdown
            allowed = list(awaiting.allowed)
            weights = [6 if a in ("call", "check", "bring-in", "pay") else 1 for a in allowed]
            pick = rng.choices(allowed, weights)[0]
            state, _ = GAME.apply(state, Action(int(awaiting.who["seat"]), pick))
        else:
            return state


def replay_in_engine(doc: dict[str, Any]) -> dict[str, Any]:
    """The round file through the engine alone (cards and actions in order, no shoe count)."""
    round_in: RoundInput = GAME.parse_round_file(doc)
    state, _ = GAME.apply(GAME.initial(), round_in.open)
    cards, actions = list(round_in.cards), list(round_in.decisions)
    while (kind := GAME.awaiting(state).kind) != "round":
        state, _ = GAME.apply(state, CardDealt(cards.pop(0)) if kind == "card" else actions.pop(0))
    assert not cards and not actions
    return GAME.settlement(state)


@settings(max_examples=250, deadline=None)
@given(openings(), st.integers(0, 2**32))
def test_every_hand_balances_and_the_pots_hold_everything_put_in(opening: OpenRound, seed: int) -> None:
    s = GAME.settlement(play(opening, seed))
    assert sum(p["net"] for p in s["players"]) == 0
    assert sum(pot["amount"] for pot in s["pots"]) == sum(p["put"] for p in s["players"])
    for p in s["players"]:
        assert -p["stack"] <= p["net"]  # table stakes: nobody loses more than they sat down with
        assert p["won"] >= 0
        assert (p["hand"] is not None) == (s["showdown"] and not p["folded"])
    for pot in s["pots"]:
        assert pot["winners"] and set(pot["winners"]) <= set(pot["eligible"])
        assert sum(share["chips"] for share in pot["shares"]) == pot["amount"]
        shares = [share["chips"] for share in pot["shares"]]
        assert max(shares) - min(shares) <= 1  # a split pot is even but for the odd chips


@settings(max_examples=120, deadline=None)
@given(openings(), st.integers(0, 2**32))
def test_a_hand_exported_as_a_round_file_replays_to_the_same_settlement(opening: OpenRound, seed: int) -> None:
    state = play(opening, seed)
    doc = GAME.round_file(state)
    assert replay_in_engine(doc) == GAME.settlement(state)
    if state.rainouts == 0:  # with a rainout the same card may come twice: see test_baseball.py
        assert settle_round_file(doc) == GAME.settlement(state)
    assert from_json(BaseballState, to_json(state)) == state
