"""Baseball poker rules (GAMES.md section 3, REPLAY.md "Baseball poker"), proved through the engine the table runs.

Most cases are hand-written round files settled by `controller.games.replay.settle_round_file`, the code
`tablectl replay` runs. Cards are listed in dealing order: 3rd street is three passes (down, down,
up) in seat order, then one pass a street, the extra card for a face-up 4 right after the 4, a
rainout re-deal following in the same list. Unless a test says otherwise the rules are the
defaults: ante 1, small bet 2 (bring-in 1), big bet 4 (bring-in 2), threes and nines wild.
Expected numbers come from the rules text, worked out in the comments.
"""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine import get_game
from controller.engine.base import (
    CardDealt,
    Effect,
    RuleError,
    ShoeReshuffled,
    VoidRound,
    event_from_json,
    from_json,
    to_json,
)
from controller.engine.cards import STANDARD_DECK, Rank, parse_card
from controller.games.baseball.rules import (
    GAME,
    Action,
    ActionTaken,
    BaseballRules,
    BaseballState,
    OpenerChosen,
    Rainout,
    next_step,
    showing_hand,
)
from controller.games.replay import settle_round_file

WILD = frozenset({Rank.THREE, Rank.NINE})


def round_doc(
    stacks: dict[int, int], cards: str, actions: list[tuple[int, str]] | None = None, **rules: Any
) -> dict[str, Any]:
    return {
        "game": "baseball-poker",
        "rules": rules,
        "players": [{"seat": seat, "stack": stack} for seat, stack in stacks.items()],
        "cards": cards.split(),
        "actions": [{"seat": seat, "action": action} for seat, action in actions or []],
    }


def run(doc: dict[str, Any], call_down: bool = False) -> tuple[BaseballState, list[Effect]]:
    """Feed a round file to the engine as the table does and stop where it runs out of input.
    With `call_down`, a missing action is taken as the table's simplest player would: bring it
    in, check, call, and pay for an extra card."""
    round_in = GAME.parse_round_file(doc)
    state, first = GAME.apply(GAME.initial(), round_in.open)
    effects = list(first)
    cards, actions = list(round_in.cards), list(round_in.decisions)
    while True:
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card" and cards:
            state, out = GAME.apply(state, CardDealt(cards.pop(0)))
        elif awaiting.kind == "decision" and actions:
            state, out = GAME.apply(state, actions.pop(0))
        elif awaiting.kind == "decision" and call_down:
            pick = next(a for a in ("bring-in", "check", "call", "pay") if a in awaiting.allowed)
            state, out = GAME.apply(state, Action(int(awaiting.who["seat"]), pick))
        else:
            return state, effects
        effects.extend(out)


def nets(settlement: dict[str, Any]) -> dict[int, int]:
    return {p["seat"]: p["net"] for p in settlement["players"]}


def player(settlement: dict[str, Any], seat: int) -> dict[str, Any]:
    return next(p for p in settlement["players"] if p["seat"] == seat)


def openers(effects: list[Effect]) -> dict[int, int]:
    """Street -> the seat that opened its betting (the last deal's, after a rainout)."""
    return {fx.street: fx.seat for fx in effects if isinstance(fx, OpenerChosen)}


def refusal(doc: dict[str, Any]) -> str:
    with pytest.raises(RuleError) as info:
        settle_round_file(doc)
    return str(info.value)


# Two players who call every bring-in (REPLAY.md's example shape). Seat 1: AH KD down, 2C up, then
# 8D TC KS up, AC down: aces and kings. Seat 2: 5S 6S, 7H, then 8H JC 2D, 5D: a pair of fives.
# Openers: 3rd street the lowest up card (2C, seat 1); 4th and 5th the best showing hand is seat
# 2's (J-8-7 beats T-8-2); 6th and 7th seat 1's (K high beats J high).
TWO_PLAYERS = round_doc(
    {1: 100, 2: 100},
    "AH 5S KD 6S 2C 7H 8D 8H TC JC KS 2D AC 5D",
    [
        (1, "bring-in"), (2, "call"),  # 3rd: 1 each
        (2, "bring-in"), (1, "call"),  # 4th: 1 each
        (2, "bring-in"), (1, "call"),  # 5th: half the big bet, 2 each
        (1, "bring-in"), (2, "call"),
        (1, "bring-in"), (2, "call"),
    ],
)  # fmt: skip


# --- a whole hand --------------------------------------------------------------------------


def test_two_players_calling_every_bring_in_reach_the_showdown_and_the_best_hand_takes_the_pot() -> None:
    s = settle_round_file(TWO_PLAYERS)
    # each puts in ante 1 + 1 + 1 + 2 + 2 + 2 = 9; seat 1's two pair takes the 18
    assert [(p["amount"], p["winners"]) for p in s["pots"]] == [(18, [1])]
    assert nets(s) == {1: 9, 2: -9}
    assert player(s, 1)["hand"] == {
        "category": "two pair",
        "best": ["AH", "AC", "KS", "KD", "TC"],
        "strength": [3, 14, 13, 10],
    }
    assert player(s, 2)["hand"]["category"] == "pair"
    assert player(s, 2)["hand"]["strength"] == [2, 5, 11, 8, 7]
    assert s["rainouts"] == 0
    assert get_game("baseball-poker") is GAME


def test_the_round_file_of_a_played_hand_replays_to_the_same_settlement() -> None:
    state, _ = run(TWO_PLAYERS)
    exported = GAME.round_file(state)
    assert exported == {**TWO_PLAYERS, "rules": {}}
    assert settle_round_file(exported) == GAME.settlement(state)


def test_the_state_and_every_action_survive_json() -> None:
    state, _ = run(TWO_PLAYERS)
    assert from_json(BaseballState, to_json(state)) == state
    action = Action(seat=2, action="raise")
    assert event_from_json(to_json(action)) == action


# --- who opens -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("up1", "up2", "opener"),
    [
        ("2H", "2D", 2),  # equal ranks: diamonds are lower than hearts
        ("5C", "5S", 1),  # clubs lowest
        ("3C", "2S", 2),  # a wild three counts as its own rank: the two is lower
        ("AS", "KC", 2),  # the ace is high
    ],
)
def test_third_street_opens_with_the_lowest_up_card_ties_by_suit(up1: str, up2: str, opener: int) -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, f"6C 7D 8H TS {up1} {up2}"))
    awaiting = GAME.awaiting(state)
    assert awaiting.who["seat"] == opener
    assert awaiting.allowed == ("bring-in", "complete")


@pytest.mark.parametrize(
    ("cards", "street", "opener"),
    [
        # 4th street, seat 1 shows KD 9H (the wild nine joins the king: a pair of kings), seat 2 QC QD
        ("2C 5D 6H 7S KD QC 9H QD", 4, 1),
        # wild cards alone make aces: 3C 9D is a pair of aces, above KC KD
        ("2C 5D 6H 7S 3C KC 9D KD", 4, 1),
        # equal pairs of kings (KC + wild 9H against KD KS): the highest up card decides, KS;
        # the nine counts as a natural nine there
        ("2C 5D 6H 7S KC KD 9H KS", 4, 2),
        # kickers count: K-8 beats K-7, although seat 2 holds the higher king
        ("2C 5D 6H 6S KC KD 8D 7S", 4, 1),
        # 6th street: 5C 5D 8C + wild 9S is three fives (the wild joins the pair), above KK QQ
        ("2C 6D 6H 7S 5C KC 5D KD 8C QC 9S QD", 6, 1),
    ],
)
def test_later_streets_open_with_the_best_showing_hand(cards: str, street: int, opener: int) -> None:
    _, effects = run(round_doc({1: 100, 2: 100}, cards), call_down=True)
    assert openers(effects)[street] == opener


def test_showing_hands_rank_quads_trips_two_pair_pair_high_card() -> None:
    def show(cards: str) -> tuple[int, ...]:
        return showing_hand([parse_card(c) for c in cards.split()], WILD)

    assert show("KC KD KH 9S") > show("AC AD KS KH") > show("AC AD 7C 2D") > show("AC KD QH JS")
    assert show("5C 5D 8C 9S") > show("KC KD QC QD")  # the wild makes three fives, not two pair
    assert show("3C 9D") == show("AC AD")  # wild cards alone are aces
    assert show("7C 7D 3H") == show("7C 7D 7H")  # the wild joins the largest group


# --- the betting state machine -------------------------------------------------------------

THREE = "5C 6C 7C 8C TC JC 2C KD AH"  # seat 1 shows 2C (opens), seat 2 KD, seat 3 AH


def test_every_player_calling_the_bring_in_ends_the_round() -> None:
    state, _ = run(round_doc({1: 100, 2: 100, 3: 100}, THREE, [(1, "bring-in"), (2, "call"), (3, "call")]))
    # the bring-in player does not act again: 4th street is dealt, seat 1 first
    assert GAME.awaiting(state).kind == "card"
    assert GAME.awaiting(state).target == {"seat": 1, "face": "up", "street": 4}
    assert state.pot == 3 + 3


def test_after_a_bring_in_the_next_player_may_call_complete_or_fold() -> None:
    state, _ = run(round_doc({1: 100, 2: 100, 3: 100}, THREE, [(1, "bring-in")]))
    awaiting = GAME.awaiting(state)
    assert (awaiting.who["seat"], awaiting.allowed) == (2, ("call", "complete", "fold"))
    assert awaiting.who["amounts"] == {"call": 1, "complete": 2, "fold": 0}


def test_raises_stop_at_four_bets_then_only_calls_and_folds() -> None:
    # bring-in, then complete (1st bet), raise, raise, raise (4th bet): 8 chips a player
    actions = [(1, "bring-in"), (2, "complete"), (3, "raise"), (1, "raise"), (2, "raise")]
    doc = round_doc({1: 100, 2: 100, 3: 100}, THREE, actions)
    state, _ = run(doc)
    awaiting = GAME.awaiting(state)
    assert (awaiting.who["seat"], awaiting.allowed) == (3, ("call", "fold"))
    assert awaiting.who["to_call"] == 8 - 4
    said = refusal({**doc, "actions": [*doc["actions"], {"seat": 3, "action": "raise"}]})
    assert "actions[5]: seat 3: may not raise: the round has its 4 bets" in said
    assert said.endswith("allowed: call, fold")
    state, _ = run({**doc, "actions": [*doc["actions"], {"seat": 3, "action": "call"}, {"seat": 1, "action": "call"}]})
    assert state.pot == 3 + 3 * 8
    assert GAME.awaiting(state).kind == "card"


def test_a_hand_ends_when_all_but_one_fold_and_the_uncalled_bet_comes_back() -> None:
    doc = round_doc({1: 100, 2: 100}, "6C 7D 8H TS 2C KD", [(1, "bring-in"), (2, "complete"), (1, "fold")])
    s = settle_round_file(doc)
    # the pot: antes 2 + bring-in 1 + completion 2 = 5, all to seat 2, which put in 3
    assert nets(s) == {1: -2, 2: 2}
    assert [(p["amount"], p["winners"]) for p in s["pots"]] == [(5, [2])]
    assert s["showdown"] is False
    assert player(s, 1)["folded"] is True
    assert [player(s, seat)["hand"] for seat in (1, 2)] == [None, None]


def test_the_bring_in_is_half_the_streets_bet_rounded_down() -> None:
    # small bet 3: bring-in 1; big bet 5: bring-in 2 (from 5th street)
    cards = "6C 7D 8H TS 2C KD 5H 6D 7H 8S"
    state, _ = run(round_doc({1: 100, 2: 100}, cards, [(1, "bring-in"), (2, "call")], small_bet=3, big_bet=5))
    assert GAME.awaiting(state).who["amounts"] == {"bring-in": 1, "complete": 3}
    state, _ = run(
        round_doc(
            {1: 100, 2: 100},
            cards,
            [(1, "bring-in"), (2, "call"), (2, "bring-in"), (1, "call")],
            small_bet=3,
            big_bet=5,
        )
    )
    assert GAME.awaiting(state).who["street"] == 5
    assert GAME.awaiting(state).who["amounts"] == {"bring-in": 2, "complete": 5}


def test_with_the_check_option_the_fourth_street_opener_may_check_and_all_checks_end_the_round() -> None:
    cards = "6C 7D 8H TS 2C KD 5H 6D"  # 4th street: seat 2 shows K-6 against 2-5 and opens
    doc = round_doc({1: 100, 2: 100}, cards, [(1, "bring-in"), (2, "call")], check_option=True)
    state, _ = run(doc)
    assert GAME.awaiting(state).who["seat"] == 2
    assert GAME.awaiting(state).allowed == ("check", "bet")
    state, _ = run(
        {**doc, "actions": [*doc["actions"], {"seat": 2, "action": "check"}, {"seat": 1, "action": "check"}]}
    )
    assert GAME.awaiting(state).target == {"seat": 1, "face": "up", "street": 5}
    assert state.pot == 4
    # 3rd street keeps its forced opening even with the option on
    state, _ = run(round_doc({1: 100, 2: 100}, cards, check_option=True))
    assert GAME.awaiting(state).allowed == ("bring-in", "complete")


# --- the extra card for a face-up 4 --------------------------------------------------------

FOUR = "5C 6C 7D 8D 4H KS 2D"  # seat 1's up card is 4H; KS is the card dealt after it


def test_a_face_up_four_gets_an_extra_face_down_card_before_the_next_players_card() -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, "5C 6C 7D 8D 4H"))
    assert GAME.awaiting(state).target == {"seat": 1, "face": "down", "street": 3, "extra": True}
    state, _ = run(round_doc({1: 100, 2: 100}, FOUR))
    assert [str(h.card) for h in state.seat(1).cards] == ["5C", "7D", "4H", "KS"]
    assert [h.face for h in state.seat(1).cards] == ["down", "down", "up", "down"]
    assert GAME.awaiting(state).who["seat"] == 2  # 2D is the lowest up card: the extra card is down


def test_a_paid_extra_card_costs_one_bet_of_the_street_and_a_declined_one_is_not_dealt() -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, "5C 6C 7D 8D 4H", extra_card="pay"))
    awaiting = GAME.awaiting(state)
    assert (awaiting.kind, awaiting.who["seat"], awaiting.allowed) == ("decision", 1, ("pay", "decline"))
    assert awaiting.who["price"] == 2
    state, _ = run(round_doc({1: 100, 2: 100}, FOUR, [(1, "pay")], extra_card="pay"))
    assert [str(c) for c in state.seat(1).own_cards()] == ["5C", "7D", "4H", "KS"]
    assert (state.seat(1).stack, state.pot) == (100 - 1 - 2, 2 + 2)
    state, _ = run(round_doc({1: 100, 2: 100}, FOUR, [(1, "decline")], extra_card="pay"))
    assert [str(c) for c in state.seat(1).own_cards()] == ["5C", "7D", "4H"]
    assert [str(c) for c in state.seat(2).own_cards()] == ["6C", "8D", "KS"]  # KS went on to seat 2
    state, _ = run(round_doc({1: 100, 2: 100}, FOUR, extra_card="none"))
    assert [str(c) for c in state.seat(2).own_cards()] == ["6C", "8D", "KS"]


# --- the community card --------------------------------------------------------------------


def community_hand() -> dict[str, Any]:
    """Seven players, no wild cards. The four 4s come face up on 3rd street and each earns an
    extra card: 14 + 7 + 4 = 25 cards, then 7 a street on 4th to 6th: 46. Six cards are left for
    seven players, so 7th street is one card face up in the middle: the AS, which gives seat 7's
    three aces a fourth."""
    ups = {1: "4C", 2: "4D", 3: "4H", 4: "4S", 5: "KC", 6: "KD", 7: "KH"}
    seat7 = ["AH", "AD", "AC"]  # seat 7's 4th, 5th and 6th street cards
    named = {*ups.values(), *seat7, "AS", "QS"}
    filler = iter(["QS"] + [str(c) for c in sorted(STANDARD_DECK) if str(c) not in named])  # QS goes face down
    cards: list[str] = []
    for _ in range(2):
        cards += [next(filler) for _ in range(7)]
    for seat in range(1, 8):
        cards.append(ups[seat])
        if seat <= 4:
            cards.append(next(filler))
    for street in range(3):
        cards += [next(filler) for _ in range(6)] + [seat7[street]]
    return round_doc({seat: 100 for seat in range(1, 8)}, " ".join(cards) + " AS", wild=[])


def test_when_the_deck_is_short_a_pass_is_one_community_card_that_plays_in_every_hand() -> None:
    doc = community_hand()
    state, _ = run({**doc, "cards": doc["cards"][:-1]}, call_down=True)
    assert GAME.awaiting(state).target == {"community": True, "face": "up", "street": 7}
    assert state.in_deck == 6
    state, _ = run(doc, call_down=True)
    s = GAME.settlement(state)
    assert s["community"] == ["AS"]
    assert all(len(p["cards"]) == (7 if p["seat"] <= 4 else 6) for p in s["players"])
    assert player(s, 7)["hand"]["category"] == "four of a kind"
    assert "AS" in player(s, 7)["hand"]["best"]


# --- the rainout ---------------------------------------------------------------------------

# 3rd street: seat 1 brings in (2H lowest), seat 2 completes, seat 1 calls: pot 2 + 4 = 6.
# 4th street: seat 1 gets TC, seat 2 the QS face up: rainout. Both ante again (pot 8) and the
# re-deal follows: seat 1 AH AD / KS, seat 2 2C 5D / 6S (seat 2 opens with 6S), then KD 7C,
# 2D 8S, JC TS, AC JD: seat 1 opens 4th to 7th with its kings. Each puts in 1 more on 3rd and
# 4th street and 2 on 5th to 7th: 9 after the rainout, 12 in all: pot 24.
RAIN_FIRST = "5C 6C 7D 8D 2H KH TC QS"
RAIN_ACTIONS = [
    (1, "bring-in"), (2, "complete"), (1, "call"),
    (2, "bring-in"), (1, "call"),
    (1, "bring-in"), (2, "call"), (1, "bring-in"), (2, "call"), (1, "bring-in"), (2, "call"), (1, "bring-in"), (2, "call"),
]  # fmt: skip


def test_a_queen_of_spades_face_up_rains_out_the_deal_and_the_players_ante_again_for_a_new_deal() -> None:
    redeal = "AH 2C AD 5D KS 6S KD 7C 2D 8S JC TS AC JD"
    s = settle_round_file(round_doc({1: 100, 2: 100}, f"{RAIN_FIRST} {redeal}", RAIN_ACTIONS))
    assert s["rainouts"] == 1
    assert [(p["amount"], p["winners"]) for p in s["pots"]] == [(24, [1])]
    assert nets(s) == {1: 12, 2: -12}
    assert player(s, 1)["cards"] == ["AH", "AD", "KS", "KD", "2D", "JC", "AC"]  # the new deal only
    assert player(s, 1)["hand"]["category"] == "full house"


def test_the_rainout_re_deal_may_deal_the_same_cards_again_from_the_reshuffled_deck() -> None:
    # Needs the replay driver to restart its count of the deck on the engine's shoe-reshuffled
    # effect: the QS (face down now) and the KH come out a second time.
    redeal = "AH 2C AD QS KS 6S KD KH 2D 8S JC TS AC JD"
    s = settle_round_file(round_doc({1: 100, 2: 100}, f"{RAIN_FIRST} {redeal}", RAIN_ACTIONS))
    assert s["rainouts"] == 1
    assert nets(s) == {1: 12, 2: -12}
    assert player(s, 2)["cards"] == ["2C", "QS", "6S", "KH", "8S", "TS", "JD"]


def test_the_engine_announces_a_fresh_deck_for_each_hand_and_each_rainout() -> None:
    _, effects = run(round_doc({1: 100, 2: 100}, RAIN_FIRST, RAIN_ACTIONS[:3]))
    assert [type(fx) for fx in effects if isinstance(fx, ShoeReshuffled | Rainout)] == [
        ShoeReshuffled,
        Rainout,
        ShoeReshuffled,
    ]
    rainout = next(fx for fx in effects if isinstance(fx, Rainout))
    assert (rainout.seat, rainout.seats) == (2, (1, 2))
    assert rainout.notice() is not None and "QS" in rainout.notice()  # type: ignore[operator]


def test_a_player_who_folded_before_the_rainout_is_not_re_dealt_and_does_not_ante_again() -> None:
    cards = "5C 6C 7C 8D TD JD 2H KH AH TC QS"
    doc = round_doc({1: 100, 2: 100, 3: 100}, cards, [(1, "bring-in"), (2, "call"), (3, "fold")])
    state, _ = run(doc)
    assert state.pot == 3 + 2 + 2  # antes, two bring-in calls, two re-antes
    assert state.seat(3).stack == 99
    targets = []
    for card in ["AS", "KS"]:
        targets.append(GAME.awaiting(state).target["seat"])
        state, _ = GAME.apply(state, CardDealt(parse_card(card)))
    targets.append(GAME.awaiting(state).target["seat"])
    assert targets == [1, 2, 1]


def test_without_the_rainout_rule_a_queen_of_spades_is_just_a_card() -> None:
    doc = round_doc({1: 100, 2: 100}, "5C 6C 7D 8D 2H KH TC QS", RAIN_ACTIONS[:3], rainout=False)
    state, _ = run(doc)
    assert state.rainouts == 0
    assert GAME.awaiting(state).kind == "decision"
    assert GAME.awaiting(state).who["street"] == 4


# --- side pots and odd chips ---------------------------------------------------------------


def test_a_player_all_in_wins_only_the_main_pot_and_the_side_pot_goes_to_the_best_of_the_others() -> None:
    # Seat 1 (5 chips) raises all in on 3rd street: 5 each in the main pot (15). Seats 2 and 3
    # go on with bring-ins and calls: 1 + 2 + 2 + 2 = 7 more each, a side pot of 14.
    # Seat 1 makes aces full of kings, seat 2 three jacks, seat 3 king high.
    doc = round_doc(
        {1: 5, 2: 100, 3: 100},
        "AH JH 5C AD JD 6C KH 2C TD AC JC 8H KC 7H 2S 8S 6D 7S 2D TC KS",
        [
            (2, "bring-in"), (3, "complete"), (1, "raise"), (2, "call"), (3, "call"),
            (2, "bring-in"), (3, "call"), (2, "bring-in"), (3, "call"),
            (2, "bring-in"), (3, "call"), (2, "bring-in"), (3, "call"),
        ],
    )  # fmt: skip
    s = settle_round_file(doc)
    assert [(p["amount"], p["eligible"], p["winners"]) for p in s["pots"]] == [(15, [1, 2, 3], [1]), (14, [2, 3], [2])]
    assert nets(s) == {1: 10, 2: 2, 3: -12}


def test_an_odd_chip_goes_to_the_winner_with_the_highest_card_by_rank_then_suit() -> None:
    # Seats 1 and 2 both make an ace-high straight; the pot is 3 x 9 = 27: 13 each and one odd
    # chip, to seat 2 whose ace of spades outranks seat 1's ace of diamonds. The openers also
    # prove the showing-hand ties: on 4th street K-Q against K-Q goes to the KH over the KC, on
    # 5th A-K-Q against A-K-Q to the AS, on 6th the kicker 6 beats 2.
    doc = round_doc(
        {1: 100, 2: 100, 3: 100},
        "TD TS 2C JD JH 2D QC QH 5H KH KC 6H AD AS 7D 2S 6D 8C 5C 7C KD",
        [
            (3, "bring-in"), (1, "call"), (2, "call"),
            (1, "bring-in"), (2, "call"), (3, "call"),
            (2, "bring-in"), (3, "call"), (1, "call"),
            (2, "bring-in"), (3, "call"), (1, "call"),
            (2, "bring-in"), (3, "call"), (1, "call"),
        ],
    )  # fmt: skip
    s = settle_round_file(doc)
    (pot,) = s["pots"]
    assert (pot["amount"], pot["winners"]) == (27, [1, 2])
    assert pot["shares"] == [{"seat": 1, "chips": 13}, {"seat": 2, "chips": 14}]
    assert nets(s) == {1: 4, 2: 5, 3: -9}


# --- paying for wild cards -----------------------------------------------------------------

# Seat 1: AH AD down, 3H up (wild), then 5C 6H JS up, 2S down. Seat 2: KS KD down, 7C up, then
# 7D TC QD up, 2C down: kings and sevens, queen kicker. With the 3H wild seat 1 has three aces,
# which beat two pair; with the 3H a plain three, a pair of aces, which does not.
WILD_DEAL = "AH KS AD KD 3H 7C 5C 7D 6H TC JS QD 2S 2C"
# Openers, every one bringing it in and the other calling: 3rd street the 3H (lowest up card by
# its own rank); 4th and 5th seat 2 (7-7 against 5 and a wild card, a pair of fives; then 7-7-T
# against 6-5 and a wild card, a pair of sixes); 6th and 7th seat 1 when its 3H is wild (J-6-5
# and a wild card is a pair of jacks, above 7-7-Q-T), seat 2 when it is not (J-6-5-3 is no pair).
PAID_ACTIONS = [
    (1, "pay"),
    (1, "bring-in"), (2, "call"), (2, "bring-in"), (1, "call"), (2, "bring-in"), (1, "call"),
    (1, "bring-in"), (2, "call"), (1, "bring-in"), (2, "call"),
]  # fmt: skip
DECLINED_ACTIONS = [
    (1, "decline"),
    (1, "bring-in"), (2, "call"), (2, "bring-in"), (1, "call"), (2, "bring-in"), (1, "call"),
    (2, "bring-in"), (1, "call"), (2, "bring-in"), (1, "call"),
]  # fmt: skip


def test_a_face_up_wild_card_asks_its_player_to_pay_one_bet_before_the_next_card() -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, WILD_DEAL, pay_for_wild=True))
    awaiting = GAME.awaiting(state)
    assert (awaiting.kind, awaiting.who["seat"], awaiting.allowed) == ("decision", 1, ("pay", "decline"))
    assert awaiting.who["for"] == "wild card 3H"
    assert awaiting.who["price"] == 2  # the small bet: it is 3rd street
    assert [str(c) for c in state.seat(2).own_cards()] == ["KS", "KD"]  # the 7C waits for the answer


def test_a_paid_wild_card_makes_three_aces_and_its_price_goes_into_the_pot() -> None:
    s = settle_round_file(round_doc({1: 100, 2: 100}, WILD_DEAL, PAID_ACTIONS, pay_for_wild=True))
    # each puts in ante 1 + 1 + 1 + 2 + 2 + 2 = 9, seat 1 also the 2 for its wild card: pot 20
    assert [(p["amount"], p["winners"]) for p in s["pots"]] == [(20, [1])]
    assert nets(s) == {1: 9, 2: -9}
    assert player(s, 1)["hand"] == {
        "category": "three of a kind",
        "best": ["AS", "AH", "AD", "JS", "6H"],  # the wild card is the ace of spades
        "strength": [4, 14, 11, 6],
    }
    assert player(s, 1)["played_natural"] == []


def test_a_declined_wild_card_plays_as_itself_and_the_pair_of_aces_loses_to_two_pair() -> None:
    s = settle_round_file(round_doc({1: 100, 2: 100}, WILD_DEAL, DECLINED_ACTIONS, pay_for_wild=True))
    assert [(p["amount"], p["winners"]) for p in s["pots"]] == [(18, [2])]
    assert nets(s) == {1: -9, 2: 9}
    assert player(s, 1)["hand"] == {
        "category": "pair",
        "best": ["AH", "AD", "JS", "6H", "5C"],
        "strength": [2, 14, 11, 6, 5],
    }
    assert player(s, 1)["played_natural"] == ["3H"]
    assert player(s, 2)["hand"]["strength"] == [3, 13, 7, 12]


def test_with_the_option_off_the_wild_card_is_wild_unpaid_and_pay_is_refused() -> None:
    free = [a for a in PAID_ACTIONS if a[1] != "pay"]
    s = settle_round_file(round_doc({1: 100, 2: 100}, WILD_DEAL, free))
    assert nets(s) == {1: 9, 2: -9}
    assert player(s, 1)["hand"]["category"] == "three of a kind"
    assert "played_natural" not in player(s, 1)
    said = refusal(round_doc({1: 100, 2: 100}, WILD_DEAL, PAID_ACTIONS))
    assert said.startswith("actions[0]: seat 1: may not pay: nothing is asked to be paid for now")
    assert said.endswith("allowed: bring-in, complete")


def test_while_a_wild_card_question_is_open_no_bet_and_no_other_seat_may_answer() -> None:
    for action in [(1, "bring-in"), (2, "pay")]:
        said = refusal(round_doc({1: 100, 2: 100}, WILD_DEAL, [action], pay_for_wild=True))
        assert f"actions[0]: seat {action[0]}: seat 1 must first pay 2 to play its 3H as wild" in said
        assert said.endswith("allowed: pay, decline")


def test_face_down_wild_cards_are_paid_for_only_with_the_face_down_option() -> None:
    # Seat 1's first card, the 9D, is dealt face down.
    cards = "9D KS AD KD AC 7C"
    state, _ = run(round_doc({1: 100, 2: 100}, cards, pay_for_wild=True))
    assert GAME.awaiting(state).kind == "decision"  # no question about the 9D: it plays wild
    assert GAME.awaiting(state).allowed == ("bring-in", "complete")
    assert state.pot == 2
    state, _ = run(round_doc({1: 100, 2: 100}, cards, pay_for_wild=True, pay_for_wild_down=True))
    awaiting = GAME.awaiting(state)
    assert (awaiting.who["seat"], awaiting.who["for"], awaiting.allowed) == (1, "wild card 9D", ("pay", "decline"))
    assert [str(c) for c in state.seat(2).own_cards()] == []  # asked before seat 2's first card


@pytest.mark.parametrize(("answer", "category"), [("pay", "three of a kind"), ("decline", "pair")])
def test_a_face_down_wild_card_paid_for_plays_wild_and_one_declined_plays_as_itself(answer: str, category: str) -> None:
    # Seat 1: 9D AD down, AC up, then 5C 6H JS, 2S: three aces with the nine wild, else a pair.
    cards = "9D KS AD KD AC 7C 5C 7D 6H TC JS QD 2S 2C"
    doc = round_doc({1: 100, 2: 100}, cards, [(1, answer)], pay_for_wild=True, pay_for_wild_down=True)
    state, _ = run(doc, call_down=True)
    s = GAME.settlement(state)
    assert player(s, 1)["hand"]["category"] == category
    assert player(s, 1)["put"] == 9 + (2 if answer == "pay" else 0)
    assert sum(nets(s).values()) == 0
    exported = GAME.round_file(state)
    assert exported["rules"] == {"pay_for_wild": True, "pay_for_wild_down": True}
    assert exported["actions"][0] == {"seat": 1, "action": answer}
    assert settle_round_file(exported) == s


@pytest.mark.parametrize(("answer", "opener"), [("pay", 1), ("decline", 2)])
def test_the_showing_hand_counts_only_a_paid_wild_card_as_wild(answer: str, opener: int) -> None:
    # Up cards: seat 1 9H then KC, seat 2 7C then 7D. 3rd street: the 7C is lowest, seat 2 opens.
    # 4th street: a paid 9H joins the king, a pair of kings above the sevens; an unpaid one is a
    # plain nine, K-9 high, below them.
    doc = round_doc(
        {1: 100, 2: 100},
        "2C 5D 6H 8S 9H 7C KC 7D",
        [(1, answer), (2, "bring-in"), (1, "call")],
        pay_for_wild=True,
    )
    state, effects = run(doc)
    assert openers(effects) == {3: 2, 4: opener}
    assert GAME.awaiting(state).who["seat"] == opener


def test_a_showing_hand_names_its_wild_cards_by_position_when_some_are_not_paid_for() -> None:
    up = [parse_card(c) for c in ("3C", "9D", "KS")]
    assert showing_hand(up, WILD, wild_cards={0}) == (2, 13, 9)  # the 3C pairs the king (category 2), the 9D a nine
    assert showing_hand(up, WILD, wild_cards={0, 1}) == (4, 13)  # both wild: three kings (category 4)
    assert showing_hand(up, WILD, wild_cards=set()) == (1, 13, 9, 3)  # neither: king high


def test_a_player_who_cannot_pay_for_a_wild_card_plays_it_as_itself_unasked() -> None:
    # Seat 1 sits down with 2 chips: after the ante 1 is left, short of the 2 the card costs.
    doc = round_doc({1: 2, 2: 100}, WILD_DEAL, pay_for_wild=True)
    state, effects = run(doc, call_down=True)
    declined = [fx for fx in effects if isinstance(fx, ActionTaken) and fx.action == "decline"]
    assert [(fx.seat, fx.forced, str(fx.card)) for fx in declined] == [(1, True, "3H")]
    s = GAME.settlement(state)
    assert player(s, 1)["played_natural"] == ["3H"]
    assert player(s, 1)["hand"]["category"] == "pair"
    assert all(a["action"] not in ("pay", "decline") for a in GAME.round_file(state)["actions"])
    assert settle_round_file(GAME.round_file(state)) == s
    # with 3 chips, 2 are left after the ante: enough, so the player is asked
    state, _ = run(round_doc({1: 3, 2: 100}, WILD_DEAL, pay_for_wild=True))
    assert GAME.awaiting(state).allowed == ("pay", "decline")


def test_a_face_up_wild_four_asks_about_the_wild_card_first_then_about_the_extra_card() -> None:
    rules = {"wild": ["4"], "pay_for_wild": True, "extra_card": "pay"}
    asked = []
    for actions in ([], [(1, "pay")], [(1, "pay"), (1, "decline")]):
        state, _ = run(round_doc({1: 100, 2: 100}, "5C 6C 7D 8D 4H", actions, **rules))
        awaiting = GAME.awaiting(state)
        asked.append(awaiting.who.get("for") if awaiting.kind == "decision" else awaiting.target)
    assert asked == ["wild card 4H", "extra card for 4H", {"seat": 2, "face": "up", "street": 3}]
    assert state.pot == 2 + 2  # the antes and the wild card; the extra card was declined


def test_after_a_rainout_the_wild_card_payments_stay_in_the_pot_and_the_new_deal_asks_again() -> None:
    # Seat 1 pays 2 for its 3H; 3rd street: seat 1 brings in (the 3H is lowest), seat 2 calls;
    # 4th street: seat 2's QS face up rains out. Pot: antes 2 + payment 2 + 1 + 1 + re-antes 2.
    doc = round_doc(
        {1: 100, 2: 100},
        "5C 6C 7D 8D 3H KH TC QS AH 2C AD 5D 3H 6S KD 7C 2D 8S JC TS AC JD",
        [(1, "pay"), (1, "bring-in"), (2, "call")],
        pay_for_wild=True,
    )
    state, _ = run(doc)
    assert (state.rainouts, state.pot, state.seat(1).stack) == (1, 8, 100 - 1 - 2 - 1 - 1)
    awaiting = GAME.awaiting(state)
    assert (awaiting.who["seat"], awaiting.who["for"]) == (1, "wild card 3H")  # the re-dealt 3H
    state, _ = run({**doc, "actions": [*doc["actions"], {"seat": 1, "action": "decline"}]}, call_down=True)
    s = GAME.settlement(state)
    assert player(s, 1)["played_natural"] == ["3H"]
    assert player(s, 1)["put"] == player(s, 2)["put"] + 2
    assert sum(nets(s).values()) == 0


# --- refusals ------------------------------------------------------------------------------


def with_actions(actions: list[tuple[int, str]]) -> dict[str, Any]:
    return {**TWO_PLAYERS, "actions": [{"seat": s, "action": a} for s, a in actions]}


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        (with_actions([(2, "call")]), "actions[0]: seat 2: out of turn: seat 1 acts now; allowed: bring-in, complete"),
        (with_actions([(1, "call")]), "actions[0]: seat 1: may not call"),
        (with_actions([(1, "check")]), "actions[0]: seat 1: may not check: the opener must bring it in or complete; allowed: bring-in, complete"),
        (with_actions([(1, "bring-in"), (2, "check")]), "actions[1]: seat 2: may not check: there is a bet to call; allowed: call, complete, fold"),
        (with_actions([(1, "all-in")]), "actions[0]: seat 1: the action must be one of"),
        (with_actions([]), "decisions: seat 1: the round needs a decision by seat 1, street 3"),
        ({**TWO_PLAYERS, "cards": ["AH", "5S", "KD"]}, "cards: seat 2: the round needs another card, for seat 2, face down, street 3"),
        ({**TWO_PLAYERS, "cards": ["AH", "AH"]}, "cards[1]: AH cannot come from the 1-deck shoe"),
        ({**TWO_PLAYERS, "decisions": []}, "round file: unknown key 'decisions'"),
        ({**TWO_PLAYERS, "rules": {"pay_for_wilds": True}}, "rules: unknown key 'pay_for_wilds'"),
        ({**TWO_PLAYERS, "rules": {"pay_for_wild": "yes"}}, "rules.pay_for_wild: must be true or false, not 'yes'"),
        ({**TWO_PLAYERS, "rules": {"pay_for_wild_down": True}}, "rules.pay_for_wild_down: face-down wild cards are paid for only when wild cards are: set pay_for_wild to true as well"),
        ({**TWO_PLAYERS, "rules": {"big_bet": 1}}, "rules.big_bet: must be a whole number of 2 or more, not 1"),
        ({**TWO_PLAYERS, "rules": {"small_bet": 6, "big_bet": 4}}, "rules.big_bet: the big bet (4) is below the small bet (6)"),
        ({**TWO_PLAYERS, "rules": {"wild": ["3", "Z"]}}, "rules.wild[1]: 'Z' is not a rank"),
        ({**TWO_PLAYERS, "rules": {"extra_card": "maybe"}}, "rules.extra_card: must be one of ['free', 'pay', 'none']"),
        ({**TWO_PLAYERS, "players": [{"seat": 1, "stack": 100}]}, "players: a hand needs at least two players"),
        ({**TWO_PLAYERS, "players": [{"seat": 1, "stack": 100}, {"seat": 1, "stack": 5}]}, "players[1].seat: seat 1: the seat is listed twice"),
        ({**TWO_PLAYERS, "players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 0}]}, "players[1].stack: seat 2: the stack must be a whole number of 1 or more chips, not 0"),
        ({**TWO_PLAYERS, "players": [{"seat": 1, "stack": 100}, {"seat": 9, "stack": 5}]}, "players[1].seat: seats are numbered 1 to 8, not 9 (a Baseball poker table seats at most 8)"),
    ],
)  # fmt: skip
def test_refused_round_files_name_the_field_the_seat_and_the_rule(doc: dict[str, Any], says: str) -> None:
    assert says in refusal(doc)


def test_a_card_nobody_is_owed_is_ruled_dead_and_changes_nothing() -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, "6C 7D 8H TS 2C KD"))  # seat 1 must act
    after, effects = GAME.apply(state, CardDealt(parse_card("AS")))
    assert [fx.kind for fx in effects] == ["card-dead"]
    assert after.dead_cards == (parse_card("AS"),)
    assert GAME.awaiting(after) == GAME.awaiting(state)


def test_a_voided_hand_returns_every_chip() -> None:
    state, _ = run(round_doc({1: 100, 2: 100}, "6C 7D 8H TS 2C KD", [(1, "bring-in"), (2, "complete")]))
    state, effects = GAME.apply(state, VoidRound(by="supervisor", reason="misdeal"))
    assert dict(effects[0].returned) == {1: 2, 2: 3}  # type: ignore[attr-defined]
    s = GAME.settlement(state)
    assert nets(s) == {1: 0, 2: 0}
    assert s["void"] == {"by": "supervisor", "reason": "misdeal"}


def test_the_dealing_schedule_says_what_each_street_deals() -> None:
    """The one dealing schedule (`next_step`, which `apply` and `tablectl analyze` both deal by):
    3rd street down, down, up; a burn card before each later street when the rules burn; a pass
    the deck cannot cover is one community card face up; an empty deck deals nothing."""
    def street(rules: BaseballRules, number: int, in_deck: int, players: int) -> list[str]:
        said: list[str] = []
        begun, burned = 0, False
        while (step := next_step(rules, number, begun, burned, in_deck, players)) is not None:
            begun, burned = step.passes_begun, step.burned
            said.append(f"pass {step.face}" if step.to_seats else step.target.to if step.target else "nothing")
        return said

    plain, burning = BaseballRules(), BaseballRules(burn_cards=True)
    assert street(plain, 3, 52, 7) == ["pass down", "pass down", "pass up"]
    assert street(burning, 3, 52, 7) == ["pass down", "pass down", "pass up"]  # no burn before 3rd street
    assert [street(plain, n, 30, 7) for n in (4, 5, 6, 7)] == [["pass up"]] * 3 + [["pass down"]]
    assert street(burning, 5, 30, 7) == ["burn", "pass up"]
    assert street(plain, 7, 6, 7) == ["community"]
    assert street(plain, 7, 7, 7) == ["pass down"]
    assert street(burning, 7, 0, 2) == ["nothing", "nothing"]
