"""Grand Slam rules (GAMES.md section 1), proved through the engine the table runs."""

from __future__ import annotations

import pytest

from controller.engine.base import CardDead, CardDealt, RuleError, VoidRound, to_json
from controller.engine.cards import JOKER, parse_card
from controller.games.grand_slam.rules import (
    GAME,
    BlindSwitchedOff,
    CardPlaced,
    GrandSlamScored,
    NextCard,
    SeatSettled,
    StackMoved,
)

from .conftest import open_round, play, seat_result

# The card-effect table of GAMES.md, written out row by row: rank -> (at first, at second, at third).
CARD_EFFECTS = {
    "2": ("third", "home", "home"),
    "3": ("home", "home", "home"),
    "4": ("GRAND SLAM", "third", "home"),
    "5": ("second", "third", "home"),
    "6": ("second", "third", "home"),
    "7": ("second", "third", "home"),
    "8": ("second", "third", "home"),
    "9": ("second", "third", "home"),
    "T": ("out", "out", "out"),
    "J": ("out", "out", "out"),
    "Q": ("out", "out", "out"),
    "K": ("out", "out", "out"),
    "A": ("out", "out", "out"),
}
ROWS = [
    (rank, base, moves[i])
    for rank, moves in CARD_EFFECTS.items()
    for i, base in enumerate(("first", "second", "third"))
]


@pytest.mark.parametrize(("rank", "base", "expected"), ROWS, ids=[f"{r}-at-{b}" for r, b, _ in ROWS])
def test_card_effect_table_row(rank: str, base: str, expected: str) -> None:
    # All three bases bet; earlier cards are outs, so the card under test meets the stack on `base`.
    lead = {"first": [], "second": ["TC"], "third": ["TC", "TC"]}[base]
    state, effects = play(open_round({1: {"first": 10, "second": 10, "third": 10}}), [*lead, rank + "H"])
    placed = [e for e in effects if isinstance(e, CardPlaced)]
    assert (placed[-1].base, str(placed[-1].card)) == (base, rank + "H")
    if expected == "GRAND SLAM":
        assert next(e for e in effects if isinstance(e, GrandSlamScored)).wagers == ("first", "second", "third")
        assert seat_result(state, 1)["grand_slam"] is True
    else:
        moved = [e for e in effects if isinstance(e, StackMoved)][-1]
        assert (moved.from_base, moved.to, moved.wagers) == (base, expected, (base,))


def test_replay_md_example_settles_to_its_published_numbers() -> None:
    state, _ = play(
        open_round(
            {1: {"first": 10, "second": 10, "third": 5}, 4: {"first": 20}},
            side_bets={1: {"three_outs": 5, "poker_bonus": 5}},
        ),
        ["5H", "KD", "2C", "9S", "TD"],
    )
    settlement = GAME.settlement(state)
    assert settlement["cards_used"] == 4
    one, four = settlement["seats"]
    assert one["cards"] == ["5H", "2C", "9S"] and one["net"] == 15
    assert {b: w["result"] for b, w in one["wagers"].items()} == {"first": "home", "second": "home", "third": "home"}
    assert one["side_bets"]["three_outs"] == {"amount": 5, "result": "lost", "paid": 0}
    assert one["side_bets"]["poker_bonus"]["result"] == "lost"
    assert four == {
        "seat": 4,
        "cards": ["KD"],
        "grand_slam": False,
        "wagers": {"first": {"amount": 20, "result": "out", "paid": 0}},
        "side_bets": {},
        "net": -20,
    }
    assert settlement["blind"] is None


def test_a_stack_moved_onto_a_base_travels_with_the_wager_there() -> None:
    # 5 at first: first's 10 joins second's 7; a T at second then puts both out together.
    state, effects = play(open_round({2: {"first": 10, "second": 7}}), ["5S", "TS"])
    moved = [e for e in effects if isinstance(e, StackMoved)]
    assert (moved[1].from_base, moved[1].to, moved[1].wagers, moved[1].amount) == (
        "second",
        "out",
        ("second", "first"),
        17,
    )
    assert seat_result(state, 2)["net"] == -17
    assert len(seat_result(state, 2)["cards"]) == 2


def test_a_first_base_only_wager_can_take_three_cards_around_the_bases() -> None:
    state, _ = play(open_round({1: {"first": 10}}), ["6C", "7C", "8C"])
    result = seat_result(state, 1)
    assert result["cards"] == ["6C", "7C", "8C"]
    assert result["wagers"]["first"]["result"] == "home" and result["net"] == 10


def test_grand_slam_scores_every_wager_and_the_seat_takes_no_more_cards() -> None:
    state, effects = play(
        open_round({1: {"first": 10, "second": 5, "third": 5}, 3: {"first": 10}}), ["4D", "KC", "9H", "9H"]
    )
    one = seat_result(state, 1)
    assert one["grand_slam"] is True and one["cards"] == ["4D"] and one["net"] == 20
    assert all(w["result"] == "home" for w in one["wagers"].values())
    # Only seat 3 was owed cards after the slam: its K put it out and the round ended.
    assert GAME.settlement(state)["cards_used"] == 2
    assert not any(isinstance(e, NextCard) and e.seat == 1 and e.base != "first" for e in effects)


def test_side_bets_push_on_a_grand_slam() -> None:
    state, _ = play(
        open_round({1: {"first": 10, "second": 10, "third": 10}}, {1: {"three_outs": 5, "poker_bonus": 5}}), ["4S"]
    )
    side = seat_result(state, 1)["side_bets"]
    assert side["three_outs"] == {"amount": 5, "result": "push", "paid": 0}
    assert side["poker_bonus"] == {"amount": 5, "result": "push", "paid": 0}
    assert seat_result(state, 1)["net"] == 30


def test_three_out_insurance_pays_15_to_1_on_three_out_cards_while_the_bases_lose() -> None:
    state, _ = play(
        open_round({1: {"first": 10, "second": 10, "third": 10}}, {1: {"three_outs": 4}}), ["TC", "JD", "AS"]
    )
    result = seat_result(state, 1)
    assert result["side_bets"]["three_outs"] == {"amount": 4, "result": "won", "paid": 60}
    assert result["net"] == 60 - 30


def test_three_out_insurance_loses_when_only_two_cards_are_out() -> None:
    state, _ = play(
        open_round({1: {"first": 10, "second": 10, "third": 10}}, {1: {"three_outs": 4}}), ["TC", "JD", "9S"]
    )
    assert seat_result(state, 1)["side_bets"]["three_outs"]["result"] == "lost"
    assert seat_result(state, 1)["net"] == -20 + 10 - 4


@pytest.mark.parametrize(
    ("cards", "hand", "odds"),
    [
        (["7S", "7S", "7S"], "suited three of a kind", 75),
        (["5H", "6H", "7H"], "straight flush", 30),
        (["QC", "KC", "AC"], "straight flush", 30),
        (["8D", "8C", "8S"], "three of a kind", 20),
        (["AD", "2C", "3S"], "straight", 4),
        (["QD", "KC", "AS"], "straight", 4),
        (["2D", "9D", "KD"], "flush", 3),
        (["JD", "JC", "5S"], "pair", 1),
        (["KD", "AC", "2S"], "high card", 0),
        (["2D", "7C", "TS"], "high card", 0),
    ],
)
def test_poker_bonus_pays_the_default_paytable(cards: list[str], hand: str, odds: int) -> None:
    state, _ = play(open_round({1: {"first": 10, "second": 10, "third": 10}}, {1: {"poker_bonus": 2}}), cards)
    entry = seat_result(state, 1)["side_bets"]["poker_bonus"]
    assert entry["hand"] == hand
    assert entry["paid"] == 2 * odds
    assert entry["result"] == ("won" if odds else "lost")


def test_poker_bonus_follows_the_operators_paytable() -> None:
    opening = open_round(
        {1: {"first": 10, "second": 10, "third": 10}},
        {1: {"poker_bonus": 2}},
        poker_bonus_paytable={"straight flush": 40, "flush": 5},
    )
    state, _ = play(opening, ["2D", "9D", "KD"])
    assert seat_result(state, 1)["side_bets"]["poker_bonus"]["paid"] == 10
    state, _ = play(opening, ["JD", "JC", "5S"])  # a pair is not on this table: it loses
    assert seat_result(state, 1)["side_bets"]["poker_bonus"] == {
        "amount": 2,
        "result": "lost",
        "paid": 0,
        "hand": "pair",
    }


def _refusal(opening: object) -> str:
    with pytest.raises(RuleError) as info:
        GAME.apply(GAME.initial(), opening)  # type: ignore[arg-type]
    return str(info.value)


@pytest.mark.parametrize(
    ("seats", "side", "message"),
    [
        ({1: {"second": 10}}, {}, "seats[0].wagers.first: seat 1: every seat bets first base"),
        (
            {1: {"first": 10, "third": 5}},
            {},
            "seats[0].wagers.third: seat 1: a wager on third base needs a wager on second base",
        ),
        (
            {1: {"first": 5, "second": 10}},
            {},
            "seats[0].wagers.second: seat 1: the wager on second (10) may not exceed the wager on first (5)",
        ),
        (
            {2: {"first": 10, "second": 5, "third": 6}},
            {},
            "seats[0].wagers.third: seat 2: the wager on third (6) may not exceed the wager on second (5)",
        ),
        ({1: {"first": 0}}, {}, "seats[0].wagers.first: seat 1: the wager on first (0) must be between 1 and 10000"),
        (
            {1: {"first": 10001}},
            {},
            "seats[0].wagers.first: seat 1: the wager on first (10001) must be between 1 and 10000",
        ),
        ({8: {"first": 10}}, {}, "seats[0].seat: seats are numbered 1 to 7, not 8"),
        ({1: {"home": 10}}, {}, "seats[0].wagers: seat 1: 'home' is not a base"),
        (
            {1: {"first": 10, "second": 10}},
            {1: {"three_outs": 5}},
            "seats[0].side_bets.three_outs: seat 1: side bets may be placed only by a seat that bets all three bases",
        ),
        (
            {1: {"first": 10, "second": 10, "third": 10}},
            {1: {"poker_bonus": 1001}},
            "seats[0].side_bets.poker_bonus: seat 1: the side bet (1001) must be between 1 and 1000",
        ),
        (
            {1: {"first": 10, "second": 10, "third": 10}},
            {1: {"insurance": 5}},
            "seats[0].side_bets: seat 1: 'insurance' is not a side bet",
        ),
        ({}, {}, "seats: a round needs at least one seat with a wager"),
    ],
)
def test_wagers_the_table_refuses_name_field_seat_and_rule(seats: dict, side: dict, message: str) -> None:  # type: ignore[type-arg]
    assert _refusal(open_round(seats, side)).startswith(message)


def test_a_fractional_wager_is_refused() -> None:
    assert "must be a whole number of chips" in _refusal(open_round({1: {"first": 2.5}}))  # type: ignore[dict-item]


def test_table_limits_are_configurable() -> None:
    assert "must be between 25 and 500" in _refusal(open_round({1: {"first": 10}}, min_wager=25, max_wager=500))
    state, _ = play(open_round({1: {"first": 25}}, min_wager=25, max_wager=500), ["3C"])
    assert seat_result(state, 1)["net"] == 25


def test_base_major_dealing_passes_first_then_second_then_third() -> None:
    _, effects = play(
        open_round({1: {"first": 1, "second": 1, "third": 1}, 3: {"first": 1, "second": 1, "third": 1}}),
        ["TC", "TC", "TC", "TC", "TC", "TC"],
    )
    order = [(e.seat, e.base) for e in effects if isinstance(e, CardPlaced)]
    assert order == [(1, "first"), (3, "first"), (1, "second"), (3, "second"), (1, "third"), (3, "third")]


def test_seat_major_dealing_resolves_a_seat_before_the_next() -> None:
    _, effects = play(
        open_round(
            {1: {"first": 1, "second": 1, "third": 1}, 3: {"first": 1, "second": 1, "third": 1}}, dealing="seat-major"
        ),
        ["TC", "TC", "TC", "TC", "TC", "TC"],
    )
    order = [(e.seat, e.base) for e in effects if isinstance(e, CardPlaced)]
    assert order == [(1, "first"), (1, "second"), (1, "third"), (3, "first"), (3, "second"), (3, "third")]


def test_a_seat_receives_a_card_in_a_pass_only_if_a_stack_stands_on_that_base() -> None:
    # Seat 1 (first only) sends its wager to third with a 2, so it skips the second-base pass.
    _, effects = play(open_round({1: {"first": 1}, 2: {"first": 1, "second": 1}}), ["2C", "TD", "9H", "5S"])
    order = [(e.seat, e.base) for e in effects if isinstance(e, CardPlaced)]
    assert order == [(1, "first"), (2, "first"), (2, "second"), (1, "third")]


def test_the_dealer_is_told_where_each_next_card_goes() -> None:
    state, effects = play(open_round({5: {"first": 1, "second": 1}}), ["7C"])
    prompts = [(e.seat, e.base) for e in effects if isinstance(e, NextCard)]
    assert prompts == [(5, "first"), (5, "second")]
    assert GAME.awaiting(state).target == {"seat": 5, "base": "second", "blind": False}


@pytest.mark.parametrize(
    ("player", "blind", "order"),
    [
        (
            3,
            4,
            [
                (3, "first", False),
                (4, "first", True),
                (3, "second", False),
                (4, "second", True),
                (3, "third", False),
                (4, "third", True),
            ],
        ),
        (
            3,
            2,
            [
                (2, "first", True),
                (3, "first", False),
                (2, "second", True),
                (3, "second", False),
                (2, "third", True),
                (3, "third", False),
            ],
        ),
    ],
)
def test_the_blind_hand_takes_a_card_each_time_the_solo_player_does_in_seat_order(
    player: int, blind: int, order: list
) -> None:  # type: ignore[type-arg]
    state, effects = play(open_round({player: {"first": 1, "second": 1, "third": 1}}, blind_seat=blind), ["TC"] * 6)
    assert [(e.seat, e.base, e.blind) for e in effects if isinstance(e, CardPlaced)] == order
    settlement = GAME.settlement(state)
    assert settlement["blind"] == {"seat": blind, "cards": ["TC"] * 3}
    assert [s["seat"] for s in settlement["seats"]] == [player]
    assert any(isinstance(e, NextCard) and e.blind for e in effects)


def test_the_blind_hand_follows_the_player_when_a_slam_or_a_skip_cuts_cards_short() -> None:
    state, _ = play(open_round({1: {"first": 1}}, blind_seat=2), ["2C", "KD", "5S", "QH"])
    # Player: 2 at first -> third base (skips the second pass) -> 5 at third -> home: two cards.
    assert GAME.settlement(state)["blind"] == {"seat": 2, "cards": ["KD", "QH"]}
    assert seat_result(state, 1)["cards"] == ["2C", "5S"]
    state, _ = play(open_round({4: {"first": 1, "second": 1, "third": 1}}, blind_seat=3), ["9C", "4D", "KD"])
    assert GAME.settlement(state)["blind"] == {"seat": 3, "cards": ["9C"]}
    assert seat_result(state, 4)["grand_slam"] is True


def test_the_blind_hand_is_switched_off_when_a_second_player_bets() -> None:
    state, effects = play(open_round({1: {"first": 5}, 4: {"first": 5}}, blind_seat=2), ["TC", "TC"])
    assert BlindSwitchedOff(seat=2, players=(1, 4)) in effects
    assert GAME.settlement(state)["blind"] is None
    assert GAME.settlement(state)["cards_used"] == 2


@pytest.mark.parametrize(
    ("blind", "message"),
    [
        (5, "blind_seat: seat 5: the blind puck goes on the seat beside the solo player's (seat 3)"),
        (3, "blind_seat: seat 3: the blind hand goes on an empty seat"),
        (0, "blind_seat: seats are numbered 1 to 7"),
    ],
)
def test_a_misplaced_blind_puck_is_refused(blind: int, message: str) -> None:
    assert _refusal(open_round({3: {"first": 5}}, blind_seat=blind)).startswith(message)


def test_a_card_nobody_is_owed_is_ruled_dead_and_kept() -> None:
    state, _ = play(open_round({1: {"first": 5}}), ["3C"])
    assert state.phase == "settled"
    after, effects = GAME.apply(state, CardDealt(parse_card("KH")))
    assert effects == (CardDead(card=parse_card("KH"), reason="no seat is owed a card: the round is settled"),)
    assert after.dead_cards == (parse_card("KH"),)
    assert GAME.settlement(after) == GAME.settlement(state)
    _, idle_effects = GAME.apply(GAME.initial(), CardDealt(parse_card("2C")))
    assert "no round is being dealt" in idle_effects[0].reason  # type: ignore[attr-defined]


def test_a_joker_is_refused_and_the_round_stands_still() -> None:
    state, _ = play(open_round({1: {"first": 5}}), [])
    with pytest.raises(RuleError, match="JK has no place in Grand Slam"):
        GAME.apply(state, CardDealt(JOKER))
    assert GAME.awaiting(state).target == {"seat": 1, "base": "first", "blind": False}


def test_voiding_returns_every_wager_and_says_who_and_why() -> None:
    state, _ = play(open_round({1: {"first": 10, "second": 5, "third": 5}}, {1: {"three_outs": 2}}), ["7C"])
    void, effects = GAME.apply(state, VoidRound(by="supervisor Kim", reason="shoe misdealt"))
    assert to_json(effects[0]) == {
        "kind": "round-voided",
        "by": "supervisor Kim",
        "reason": "shoe misdealt",
        "returned": {"1": 22},
    }
    settlement = GAME.settlement(void)
    assert settlement["void"] == {"by": "supervisor Kim", "reason": "shoe misdealt"}
    assert settlement["seats"][0]["net"] == 0
    assert {w["result"] for w in settlement["seats"][0]["wagers"].values()} == {"void"}
    with pytest.raises(RuleError, match="who voids it and why"):
        GAME.apply(state, VoidRound(by="", reason="x"))
    with pytest.raises(RuleError, match="only a round being dealt"):
        GAME.apply(void, VoidRound(by="a", reason="b"))


def test_a_second_round_cannot_open_while_one_is_dealt() -> None:
    state, _ = play(open_round({1: {"first": 5}}), [])
    with pytest.raises(RuleError, match="a round is already being dealt"):
        GAME.apply(state, open_round({2: {"first": 5}}))


def test_seat_settlement_tells_the_dealer_what_to_pay_and_take() -> None:
    _, effects = play(
        open_round({1: {"first": 10, "second": 10, "third": 10}}, {1: {"three_outs": 5}}), ["5C", "9D", "KS"]
    )
    settled = [e for e in effects if isinstance(e, SeatSettled)]
    # 5 at first -> second; 9 at second sends both to third; K at third puts all three out.
    assert settled == [SeatSettled(seat=1, pay=0, collect=35, net=-35)]
