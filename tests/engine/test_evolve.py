"""`evolve`, the games' `dataclasses.replace` on a card's way to the lamps: the same new state."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest

from controller.engine.base import CardDealt, evolve, run_events, to_json
from controller.engine.cards import parse_card
from controller.games.grand_slam.rules import GAME, GrandSlamRules, GrandSlamState, OpenRound, SeatBet


def _dealing() -> GrandSlamState:
    """A Grand Slam round two cards in, as the table deals it."""
    bets = (SeatBet(1, {"first": 10, "second": 5}, {}), SeatBet(3, {"first": 5}, {}))
    state, _ = run_events(GAME, [OpenRound(rules=GrandSlamRules(), seats=bets, blind_seat=None)])
    for card in ("7C", "KD"):
        state, _ = GAME.apply(state, CardDealt(parse_card(card)))
    assert len(state.dealt) == 2
    return state


def test_evolve_makes_the_state_replace_makes_and_leaves_the_old_one_as_it_was() -> None:
    state = _dealing()
    before = to_json(state)
    seat = state.seats[0]
    changes: dict[str, Any] = {"cursor": state.cursor + 1, "dealt": (*state.dealt, parse_card("AS"))}
    made = evolve(state, **changes)
    assert made == dataclasses.replace(state, **changes)
    assert to_json(made) == to_json(dataclasses.replace(state, **changes))
    assert type(made) is GrandSlamState and made is not state
    assert to_json(state) == before and state.cursor == changes["cursor"] - 1
    assert made.seats is state.seats  # the fields not changed are the very objects the old state holds
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.cursor = 0  # type: ignore[misc]
    moved = evolve(seat, cards=(*seat.cards, parse_card("2H")), grand_slam=True)
    assert moved == dataclasses.replace(seat, cards=(*seat.cards, parse_card("2H")), grand_slam=True)
    assert moved.bet is seat.bet and seat.cards == state.seats[0].cards and not seat.grand_slam


def test_evolve_refuses_a_name_that_is_no_field_as_replace_does() -> None:
    with pytest.raises(TypeError, match="no field curser"):
        evolve(_dealing(), curser=3)


def test_evolve_refuses_a_dataclass_whose_init_checks_or_sets_what_a_copy_would_skip() -> None:
    @dataclass(frozen=True)
    class Checked:
        value: int

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("negative")

    @dataclass(frozen=True)
    class Derived:
        value: int
        double: int = dataclasses.field(init=False, default=0)

    @dataclass
    class Mutable:
        value: int

    for made in (Checked(1), Derived(1), Mutable(1)):
        with pytest.raises(TypeError, match="evolve takes a frozen dataclass"):
            evolve(made, value=2)


def test_evolve_never_carries_a_value_cached_on_the_old_state_to_the_new_one() -> None:
    @dataclass(frozen=True)
    class Hand:
        cards: tuple[str, ...]

        def best(self) -> str:
            found: str | None = self.__dict__.get("_best")
            if found is None:
                found = self.__dict__["_best"] = max(self.cards)
            return found

    hand = Hand(("2H", "9S"))
    assert hand.best() == "9S"
    grown = evolve(hand, cards=("2H", "9S", "QD"))
    assert grown.best() == "QD"  # its own best, not the old hand's 9S
    assert grown == Hand(("2H", "9S", "QD")) and hand.best() == "9S"
