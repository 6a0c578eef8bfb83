"""Jokers 22 rules (GAMES.md section 2, REPLAY.md "Jokers 22"), proved through the engine the table runs.

Most cases are hand-written round files settled by `controller.games.replay.settle_round_file`, the code
`tablectl replay` runs. Cards are listed in the dealing order of REPLAY.md: one card to each spot,
the banker's first card, a second card to each spot, the spots' draws, the banker's second card
and the banker's draws. Expected numbers come from the rules text, worked out in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.engine import get_game
from controller.engine.base import (
    CardDead,
    CardDealt,
    Effect,
    RuleError,
    VoidRound,
    event_from_json,
    from_json,
    to_json,
)
from controller.engine.cards import parse_card
from controller.games.jokers22.rules import (
    GAME,
    ActionSpot,
    Decision,
    ForcedAction,
    Jokers22State,
    compare,
    hand_total,
)
from controller.games.replay import settle_round_file
from controller.testing import replay, tablectl


def round_doc(
    spots: dict[int, list[tuple[str, int]]],
    cards: str,
    decisions: list[dict[str, Any]] | None = None,
    stake: int = 10_000,
    **rules: Any,
) -> dict[str, Any]:
    return {
        "game": "jokers-22",
        "rules": rules,
        "banker": {"stake": stake},
        "spots": [
            {"spot": s, "wagers": [{"player": p, "amount": a} for p, a in wagers]} for s, wagers in spots.items()
        ],
        "cards": cards.split(),
        "decisions": decisions or [],
    }


def d(spot: int, action: str, player: str | None = None) -> dict[str, Any]:
    return {"spot": spot, "action": action, **({"player": player} if player else {})}


def run(doc: dict[str, Any], upto: int | None = None) -> Jokers22State:
    """Feed a round file to the engine as the table does; stop when it needs what is not given
    (or after `upto` inputs), returning the state reached."""
    round_in = GAME.parse_round_file(doc)
    state, _ = GAME.apply(GAME.initial(), round_in.open)
    cards, decisions = list(round_in.cards), list(round_in.decisions)
    steps = 0
    while upto is None or steps < upto:
        awaiting = GAME.awaiting(state)
        if awaiting.kind == "card" and cards:
            state, _ = GAME.apply(state, CardDealt(cards.pop(0)))
        elif awaiting.kind == "decision" and decisions:
            state, _ = GAME.apply(state, decisions.pop(0))
        else:
            break
        steps += 1
    return state


def nets(settlement: dict[str, Any]) -> dict[str, int]:
    return {f"{p['player']}@{p['spot']}": p["net"] for p in settlement["players"]} | {
        "banker": settlement["banker"]["net"]
    }


def refusal(doc: dict[str, Any]) -> str:
    with pytest.raises(RuleError) as info:
        settle_round_file(doc)
    return str(info.value)


# --- values and the comparison table ---------------------------------------------------------


@pytest.mark.parametrize(
    ("cards", "value", "soft", "natural"),
    [
        ("AS 6D", 17, True, False),
        ("AS 6D KC", 17, False, False),
        ("AS AD", 12, True, True),
        ("AS KD", 21, True, False),  # ace + ten is an ordinary 21
        ("JK 5D", 21, False, False),
        ("5D 6C JK", 21, False, False),  # a joker with any cards is a hard 21
        ("JK AD", 21, False, True),
        ("JK JK", 21, False, True),
        ("9C 8D 7H", 24, False, False),
    ],
)
def test_hand_totals_count_aces_soft_and_jokers_as_hard_21(cards: str, value: int, soft: bool, natural: bool) -> None:
    total = hand_total([parse_card(c) for c in cards.split()])
    assert (total.value, total.soft, total.natural) == (value, soft, natural)


# Every line of GAMES.md's comparison, player hand P against banker hand B.
COMPARISON = [
    ("both naturals push: A+A v A+A", "AS AD", "AC AH", "push"),
    ("both naturals push: JK+A v A+A", "JK AD", "AC AH", "push"),
    ("both naturals push: A+A v JK+JK", "AS AD", "JK JK", "push"),
    ("both naturals push: JK+JK v JK+JK", "JK JK", "JK JK", "push"),
    ("player JK+JK v banker A+A pays 1 to 1", "JK JK", "AC AH", "win"),
    ("player JK+JK v banker JK+A pays 1 to 1", "JK JK", "JK AH", "win"),
    ("player JK+JK v no natural pays 2 to 1", "JK JK", "KC AH", "win 2 to 1"),
    ("player A+A v no natural pays 1 to 1", "AS AD", "KC AH", "win"),
    ("player JK+A v banker 20 pays 1 to 1", "JK AD", "KC QH", "win"),
    ("banker natural beats a player's ace-ten 21", "AS KD", "AC AH", "lose"),
    ("banker natural beats a player's joker 21", "5S JK", "JK AH", "lose"),
    ("both under 22: higher player wins", "TS 9D", "TC 8H", "win"),
    ("both under 22: higher banker wins", "TS 8D", "TC 9H", "lose"),
    ("both under 22: equal totals push", "TS KD", "QC JH", "push"),
    ("ace-ten 21 pushes a three-card 21", "AS KD", "7C 7H 7D", "push"),
    ("joker 21 pushes an ordinary 21", "5S JK", "AC TH", "push"),
    ("player 21 or less v banker 22 or more: player wins", "TS 2D", "TC 5H KD", "win"),
    ("player 22 or more v banker 21 or less: banker wins", "TS 5D 8H", "TC 7H", "lose"),
    ("both 22 or more, player closer to 22: push", "TS 5D 8H", "TC 7H 8D", "push"),
    ("both 22 or more, banker closer to 22: banker wins", "TS 7D 8H", "TC 5H 8D", "lose"),
    ("both 22 or more, equal totals: banker wins", "TS 6D 8H", "TC 6H 8D", "lose"),
]


@pytest.mark.parametrize(("player", "banker", "expected"), [c[1:] for c in COMPARISON], ids=[c[0] for c in COMPARISON])
def test_comparison_table_line(player: str, banker: str, expected: str) -> None:
    assert compare([parse_card(c) for c in player.split()], [parse_card(c) for c in banker.split()]) == expected


def test_a_natural_settles_through_replay_at_its_odds() -> None:
    # ann JK+JK (2 to 1), bob A+A (1 to 1); the banker's 9C then 8D stands on hard 17.
    # JK and A+A naturals are still asked (stand or surrender): the banker's first card is no joker.
    doc = round_doc({1: [("ann", 10)], 2: [("bob", 10)]}, "JK AS 9C JK AD 8D", [d(1, "stand"), d(2, "stand")])
    assert nets(settle_round_file(doc)) == {"ann@1": 20, "bob@2": 10, "banker": -30}


# --- drawing rules ---------------------------------------------------------------------------


def test_the_engine_hits_eleven_or_less_itself_and_stands_on_twenty() -> None:
    # 2+3 asked (double allowed): hit 4 -> 9 forced hit, 5 -> 14 asked again: hit, T -> 24 takes nothing.
    doc = round_doc({1: [("ann", 10)]}, "2C 9H 3D 4S 5S TD 8C", [d(1, "hit"), d(1, "hit")])
    state = run(doc)
    assert [str(c) for c in state.spot(1).hands[0].cards] == ["2C", "3D", "4S", "5S", "TD"]
    s = settle_round_file(doc)
    # player 24, banker 9+8 = 17 stands: the banker wins
    assert s["spots"][0]["hands"][0]["total"] == 24 and s["banker"]["total"] == 17 and nets(s)["ann@1"] == -10


def test_forced_actions_are_reported_as_effects_not_asked() -> None:
    doc = round_doc({1: [("ann", 10)]}, "2C 9H 3D 4S TC", [d(1, "hit")])
    round_in = GAME.parse_round_file(doc)
    state, _ = GAME.apply(GAME.initial(), round_in.open)
    effects: list[Effect] = []
    for card in round_in.cards[:3]:
        state, out = GAME.apply(state, CardDealt(card))
        effects.extend(out)
    state, out = GAME.apply(state, round_in.decisions[0])
    state, out2 = GAME.apply(state, CardDealt(parse_card("4S")))  # 9: hit by the engine
    state, out3 = GAME.apply(state, CardDealt(parse_card("TC")))  # 19: a choice again
    forced = [e for e in (*out, *out2, *out3) if isinstance(e, ForcedAction)]
    assert [(f.action, f.total) for f in forced] == [("hit", "9")]
    assert GAME.awaiting(state).kind == "decision" and GAME.awaiting(state).allowed == ("hit", "stand")


@pytest.mark.parametrize(
    ("cards", "banker_first", "allowed"),
    [
        ("9C 7D", "5H", ("hit", "stand", "double", "surrender")),  # 16, no ace: every option
        ("5C 6D", "5H", ("hit", "double", "surrender")),  # 11 must hit, but double is allowed: asked
        ("KC QD", "5H", ("stand", "double", "surrender")),  # 20 must stand; double still allowed
        ("KC KD", "5H", ("stand", "double", "split", "surrender")),  # a pair of tens may be split
        ("AC 9D", "5H", ("stand", "surrender")),  # soft 20, an ace: no double
        ("AC 5D", "JK", ("hit", "stand")),  # against a banker joker: no surrender; ace: no double
        ("8C 8D", "JK", ("hit", "stand", "double", "split")),
    ],
)
def test_first_two_cards_ask_what_the_rules_allow(cards: str, banker_first: str, allowed: tuple[str, ...]) -> None:
    first, second = cards.split()
    state = run(round_doc({1: [("ann", 10)]}, f"{first} {banker_first} {second}"))
    awaiting = GAME.awaiting(state)
    assert awaiting.kind == "decision" and awaiting.allowed == allowed
    assert awaiting.who == {
        "spot": 1,
        "hand": 1,
        "player": "ann",
        "total": str(hand_total(state.spot(1).hands[0].cards)),
    }


def test_no_question_when_the_rules_leave_no_choice() -> None:
    # A+A against a banker joker: a natural (stands), no surrender against a joker: never asked.
    doc = round_doc({1: [("ann", 10)]}, "AC JK AD 5H")
    s = settle_round_file(doc)  # no decisions at all
    # banker JK+5 is a hard 21 and takes no more; the natural wins 1 to 1
    assert s["banker"]["cards"] == ["JK", "5H"] and nets(s)["ann@1"] == 10


def test_banker_hits_soft_17_and_stands_on_hard_17() -> None:
    doc = round_doc({1: [("ann", 10)]}, "TC AH TD 6S 4C", [d(1, "stand")])
    s = settle_round_file(doc)
    # A+6 is soft 17: the banker hits, 4 makes hard 21 and the banker stands
    assert s["banker"]["cards"] == ["AH", "6S", "4C"] and s["banker"]["total"] == 21 and nets(s)["ann@1"] == -10
    doc = round_doc({1: [("ann", 10)]}, "TC TH TD 7S 4C", [d(1, "stand")])
    s = settle_round_file(doc)
    assert s["banker"]["cards"] == ["TH", "7S"] and nets(s)["ann@1"] == 10 and s["cards_used"] == 4


# --- refusals --------------------------------------------------------------------------------

REFUSALS = [
    (
        "double with an ace",
        "AC 5H 6D",
        [d(1, "double")],
        "no double down on a hand holding an ace or a joker; allowed: hit, stand, surrender",
    ),
    (
        "double with a joker",
        "JK 5H 6D",
        [d(1, "double")],
        "no double down on a hand holding an ace or a joker; allowed: stand, surrender",
    ),
    ("split aces", "AC 5H AD", [d(1, "split")], "aces may not be split; allowed: stand, surrender"),
    ("split jokers", "JK 5H JK", [d(1, "split")], "jokers may not be split; allowed: stand, surrender"),
    (
        "split a non-pair",
        "KC 5H QD",
        [d(1, "split")],
        "only a pair of equal rank may be split; allowed: stand, double, surrender",
    ),
    (
        "surrender against a banker joker",
        "9C JK 7D",
        [d(1, "surrender", "ann")],
        "no surrender when the banker's first card is a joker; allowed: hit, stand, double",
    ),
    ("hit a soft 20", "AC 5H 9D", [d(1, "hit")], "the player must stand on soft 20; allowed: stand, surrender"),
    ("stand on 11", "5C 5H 6D", [d(1, "stand")], "the player must hit 11; allowed: hit, double, surrender"),
    (
        "double after a hit",
        "2C 5H 3D 9S",
        [d(1, "hit"), d(1, "double")],
        "double down only on the first two cards; allowed: hit, stand",
    ),
    (
        "surrender after a hit",
        "2C 5H 3D 9S",
        [d(1, "hit"), d(1, "surrender", "ann")],
        "surrender only on the first two cards, before the spot's first other decision; allowed: hit, stand",
    ),
    (
        "match with nothing to match",
        "9C 5H 7D",
        [d(1, "match", "ann")],
        "there is no double or split to match; allowed: hit, stand, double, surrender",
    ),
    (
        "an unknown player surrenders",
        "9C 5H 7D",
        [d(1, "surrender", "zed")],
        "zed has no wager on this hand; allowed: hit, stand, double, surrender",
    ),
]


@pytest.mark.parametrize(("cards", "decisions", "says"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_a_decision_the_rules_forbid_is_refused_naming_spot_and_allowed(
    cards: str, decisions: list[dict[str, Any]], says: str
) -> None:
    doc = round_doc({1: [("ann", 10)]}, cards, decisions)
    message = refusal(doc)
    assert message == f"decisions[{len(decisions) - 1}]: spot 1: {says}"


def test_a_decision_out_of_turn_is_refused_naming_who_decides() -> None:
    doc = round_doc({1: [("ann", 10)], 2: [("bob", 10)]}, "9C 9D 5H 7C 7D", [d(2, "stand")])
    with pytest.raises(RuleError) as info:
        settle_round_file(doc)
    assert info.value.seat == 2
    assert str(info.value) == (
        "decisions[0]: spot 2: out of turn: spot 1, hand 1 (ann) decides now; allowed: hit, stand, double, surrender"
    )


def test_a_resplit_is_refused() -> None:
    # 8-8 split; hand 1 draws another 8: a spot splits only once (and no double after split).
    doc = round_doc({1: [("ann", 10)]}, "8C 5H 8D 8S 3C", [d(1, "split"), d(1, "split")])
    assert refusal(doc) == "decisions[1]: spot 1: a spot splits only once; allowed: hit, stand"


def test_only_the_deciding_player_plays_the_hand() -> None:
    doc = round_doc({1: [("ann", 50), ("bob", 60)]}, "9C 5H 7D", [d(1, "hit", "ann")])
    assert (
        refusal(doc)
        == "decisions[0]: spot 1: bob has the most money in action on the hand and decides; ann may not hit"
    )


# --- double, split, surrender ----------------------------------------------------------------


def test_double_takes_one_card_for_an_equal_wager_and_stands() -> None:
    # 5+6 doubles, draws a 2 (13, not hit again); banker 9+8 = 17: ann loses twice her wager
    doc = round_doc({1: [("ann", 10)]}, "5C 9H 6D 2S 8C", [d(1, "double")])
    s = settle_round_file(doc)
    hand = s["spots"][0]["hands"][0]
    assert hand["cards"] == ["5C", "6D", "2S"] and hand["wagers"][0]["amount"] == 20 and nets(s)["ann@1"] == -20


def test_split_plays_the_first_hand_out_then_the_second() -> None:
    # 8-8 split; hand 1: 8+3 = 11 (forced hit) +9 = 20 stands; hand 2: 8+T = 18 asked: stand.
    # Banker 7+K = 17 stands: hand 1 wins 10, hand 2 wins 10.
    doc = round_doc({1: [("ann", 10)]}, "8C 7H 8D 3S 9S TC KD", [d(1, "split"), d(1, "stand")])
    s = settle_round_file(doc)
    hands = s["spots"][0]["hands"]
    assert [h["cards"] for h in hands] == [["8C", "3S", "9S"], ["8D", "TC"]]
    assert nets(s) == {"ann@1": 20, "banker": -20}


def test_double_after_split_is_an_option() -> None:
    cards, decisions = "8C 7H 8D 3S 9S TC KD", [d(1, "split"), d(1, "double"), d(1, "stand")]
    assert "no double down after a split" in refusal(round_doc({1: [("ann", 10)]}, cards, decisions))
    s = settle_round_file(round_doc({1: [("ann", 10)]}, cards, decisions, double_after_split=True))
    # hand 1: 8+3 = 11 is asked (double allowed) and doubles, 9 -> 20 for 20 chips;
    # hand 2: 8+T = 18 is asked (hit, stand, double): stand. Banker 7+K = 17: both hands win.
    assert s["spots"][0]["hands"][0]["wagers"][0]["amount"] == 20 and nets(s)["ann@1"] == 30


@pytest.mark.parametrize(("wager", "lost"), [(10, 5), (15, 8), (1, 1)])
def test_surrender_returns_half_an_odd_half_rounded_for_the_banker(wager: int, lost: int) -> None:
    doc = round_doc({1: [("ann", wager)]}, "9C 9H 7D TC", [d(1, "surrender", "ann")])
    s = settle_round_file(doc)
    assert nets(s) == {"ann@1": -lost, "banker": lost}
    assert s["spots"][0]["hands"][0]["cards"] == ["9C", "7D"]  # a surrendered hand takes no more cards


# --- several players on a spot ---------------------------------------------------------------


def test_other_players_match_or_decline_a_double_in_wager_order() -> None:
    # ann 30 (original) decides; bob matches, carl declines. 5+6 +T = 21 against banker 9+8 = 17.
    spots = {1: [("ann", 30), ("bob", 20), ("carl", 10)]}
    doc = round_doc(spots, "5C 9H 6D TS 8C", [d(1, "double"), d(1, "match", "bob"), d(1, "decline", "carl")])
    assert nets(settle_round_file(doc)) == {"ann@1": 60, "bob@1": 40, "carl@1": 10, "banker": -110}
    out_of_order = round_doc(spots, "5C 9H 6D TS 8C", [d(1, "double"), d(1, "match", "carl")])
    assert refusal(out_of_order) == "decisions[1]: spot 1: bob answers the double next (wager order), not carl"


def test_an_unmatched_wager_on_a_split_stays_with_the_first_hand() -> None:
    # ann 20 splits 9-9, bob 10 declines. Hand 1: 9+K = 19 stands; hand 2: 9+2 = 11 (forced hit) 5 -> 16 stands.
    # Banker T+8 = 18: hand 1 (ann 20, bob 10) wins, hand 2 (ann 20 only) loses.
    doc = round_doc(
        {1: [("ann", 20), ("bob", 10)]},
        "9C TH 9D KS 2C 5D 8H",
        [d(1, "split"), d(1, "decline", "bob"), d(1, "stand"), d(1, "stand")],
    )
    s = settle_round_file(doc)
    one, two = s["spots"][0]["hands"]
    assert [w["player"] for w in one["wagers"]] == ["ann", "bob"] and [w["player"] for w in two["wagers"]] == ["ann"]
    assert nets(s) == {"ann@1": 0, "bob@1": 10, "banker": -10}


def test_the_most_money_decides_and_ties_go_to_the_original_bettor() -> None:
    state = run(round_doc({1: [("ann", 50), ("bob", 60)]}, "9C 5H 7D"))
    assert GAME.awaiting(state).who["player"] == "bob"
    state = run(round_doc({1: [("ann", 50), ("bob", 50)]}, "9C 5H 7D"))
    assert GAME.awaiting(state).who["player"] == "ann"


def test_when_the_deciding_player_surrenders_the_decision_passes_on() -> None:
    spots = {1: [("ann", 50), ("bob", 20), ("carl", 30)]}
    state = run(round_doc(spots, "9C 5H 7D", [d(1, "surrender", "ann")]))
    assert GAME.awaiting(state).who["player"] == "carl"  # the most money still in action
    # carl hits 16 -> 20 (forced stand); banker 5+T = 15 hits 9 -> 24: carl and bob win, ann lost 25
    doc = round_doc(spots, "9C 5H 7D 4S TC 9D", [d(1, "surrender", "ann"), d(1, "hit", "carl")])
    assert nets(settle_round_file(doc)) == {"ann@1": -25, "bob@1": 20, "carl@1": 30, "banker": -25}


def test_every_player_surrendering_ends_the_spot() -> None:
    doc = round_doc(
        {1: [("ann", 10), ("bob", 10)]}, "9C 9H 7D TC", [d(1, "surrender", "bob"), d(1, "surrender", "ann")]
    )
    s = settle_round_file(doc)
    assert nets(s) == {"ann@1": -5, "bob@1": -5, "banker": 10} and s["cards_used"] == 4


# --- ACTION spot and coverage ----------------------------------------------------------------


@pytest.mark.parametrize(("second", "action"), [("AC", 2), ("2C", 4), ("3C", 6), ("4C", 2), ("KD", 2), ("JK", 4)])
def test_the_banker_second_card_names_the_action_spot(second: str, action: int) -> None:
    # spots 2, 4, 6 have wagers (n = 3): v=1 -> 1st, 2 -> 2nd, 3 -> 3rd, 4 -> 1st, K=13 -> 1st, JK=14 -> 2nd
    spots = {2: [("a", 10)], 4: [("b", 10)], 6: [("c", 10)]}
    doc = round_doc(spots, f"TC TD TH 9S KC KD KH {second} 8S 8C", [d(2, "stand"), d(4, "stand"), d(6, "stand")])
    assert settle_round_file(doc)["action_spot"] == action


def test_rotation_covers_clockwise_from_the_action_spot_the_last_in_part() -> None:
    # stake 100; banker 9 then 3 (ACTION = spot ((3-1) mod 3)+1 = 3rd spot = 3), 12 hits T -> 22.
    # Coverage: spot 3 carl 40, then spot 1: ann 50 then bob 30 -> ann covered 50, bob 10 (20 returned);
    # spot 2 dan 30 not covered. Every player (20) beats a banker 22.
    spots = {1: [("ann", 50), ("bob", 30)], 2: [("dan", 30)], 3: [("carl", 40)]}
    # (20 must stand, but double is allowed, so each spot is asked and stands.)
    doc = round_doc(spots, "TC TD TH 9S KC KD KH 3S TS", [d(1, "stand"), d(2, "stand"), d(3, "stand")], stake=100)
    s = settle_round_file(doc)
    assert s["action_spot"] == 3
    assert nets(s) == {"ann@1": 50, "bob@1": 10, "dan@2": 0, "carl@3": 40, "banker": -100}
    covered = {w["player"]: w["covered"] for sp in s["spots"] for h in sp["hands"] for w in h["wagers"]}
    assert covered == {"ann": 50, "bob": 10, "dan": 0, "carl": 40}


def test_rotation_banker_wins_at_most_the_stake() -> None:
    # Both players stand on 12, banker T+9 = 19 wins. ACTION spot from a 9: ((9-1) mod 2)+1 = spot 1,
    # so the stake of 60 covers ann's 50 and 10 of bob's 50 (40 returned).
    spots = {1: [("ann", 50)], 2: [("bob", 50)]}
    doc = round_doc(spots, "TC TD TH 2S 2C 9S", [d(1, "stand"), d(2, "stand")], stake=60)
    assert nets(settle_round_file(doc)) == {"ann@1": -50, "bob@2": -10, "banker": 60}


def test_rotation_two_to_one_natural_pays_twice_the_covered_amount() -> None:
    # stake 30, ann 50 on JK+JK: covered 30, paid 60 (the banker loses more than the stake).
    doc = round_doc({1: [("ann", 50)]}, "JK 9S JK 8C", [d(1, "stand")], stake=30)
    assert nets(settle_round_file(doc)) == {"ann@1": 60, "banker": -60}


def test_rotation_surrender_loses_half_the_covered_amount_rounded_for_the_banker() -> None:
    # stake 15, ann 40 surrenders: covered 15, loses 8, 25 + 7 returned. Banker 9+T stands.
    doc = round_doc({1: [("ann", 40)]}, "9C 9H 7D TC", [d(1, "surrender", "ann")], stake=15)
    assert nets(settle_round_file(doc)) == {"ann@1": -8, "banker": 8}


def test_collect_first_collects_losers_then_pays_winners_from_the_action_spot() -> None:
    # stake 20. Spot 1 ann 50 on 20 wins, spot 2 bob 30 on 12 loses, spot 3 carl 40 on 20 wins.
    # Banker 9 then 9 = 18 (ACTION: ((9-1) mod 3)+1 = 3rd spot = 3). Bank = 20 + bob's 30 = 50:
    # carl paid 40 first, then ann 10 of 50 (40 returned).
    spots = {1: [("ann", 50)], 2: [("bob", 30)], 3: [("carl", 40)]}
    decisions = [d(1, "stand"), d(2, "stand"), d(3, "stand")]
    doc = round_doc(spots, "TC TD TH 9S KC 2D KH 9C", decisions, stake=20, coverage="collect-first")
    s = settle_round_file(doc)
    assert s["action_spot"] == 3
    assert nets(s) == {"ann@1": 10, "bob@2": -30, "carl@3": 40, "banker": -20}


def test_collect_first_surrender_and_two_to_one() -> None:
    # stake 5. ann 15 surrenders (8 into the bank), bob 10 JK+JK is owed 20: the bank's 13 pays 13.
    # Banker 5+T = 15 hits 4 -> 19; ACTION from a T: ((10-1) mod 2)+1 = spot 2.
    spots = {1: [("ann", 15)], 2: [("bob", 10)]}
    doc = round_doc(
        spots, "9C JK 5H 7D JK TC 4C", [d(1, "surrender", "ann"), d(2, "stand")], stake=5, coverage="collect-first"
    )
    assert nets(settle_round_file(doc)) == {"ann@1": -8, "bob@2": 13, "banker": -5}


def test_time_collection_is_recorded_apart_from_the_nets() -> None:
    spots = {1: [("ann", 10), ("bob", 10)], 3: [("carl", 10)]}
    doc = round_doc(spots, "TC TD 9S KC KD 8C", [d(1, "stand"), d(3, "stand")], time_fee=2)
    s = settle_round_file(doc)
    assert s["time_collection"] == [
        {"spot": 1, "player": "ann", "amount": 2},
        {"spot": 3, "player": "carl", "amount": 2},
    ]
    assert nets(s) == {"ann@1": 10, "bob@1": 10, "carl@3": 10, "banker": -30}


# --- the round as a whole --------------------------------------------------------------------


def test_a_card_while_a_decision_is_due_is_ruled_dead() -> None:
    state = run(round_doc({1: [("ann", 10)]}, "9C 5H 7D"))
    after, effects = GAME.apply(state, CardDealt(parse_card("TC")))
    assert isinstance(effects[0], CardDead) and "spot 1, hand 1 must decide first" in effects[0].reason
    assert GAME.awaiting(after) == GAME.awaiting(state) and after.dead_cards == (parse_card("TC"),)


def test_the_action_spot_is_announced_when_the_banker_gets_the_second_card() -> None:
    state = run(round_doc({1: [("ann", 10)], 2: [("bob", 10)]}, "TC TD 9S KC KD", [d(1, "stand"), d(2, "stand")]))
    _, effects = GAME.apply(state, CardDealt(parse_card("2H")))
    (action,) = [e for e in effects if isinstance(e, ActionSpot)]
    assert (action.value, action.spot) == (2, 2) and action.notice() == "ACTION spot: 2 (banker's second card 2H)"


def test_void_returns_every_wager() -> None:
    state = run(round_doc({1: [("ann", 10), ("bob", 5)], 2: [("carl", 7)]}, "9C 5H"))
    state, _ = GAME.apply(state, VoidRound(by="floor", reason="misdeal"))
    s = GAME.settlement(state)
    assert nets(s) == {"ann@1": 0, "bob@1": 0, "carl@2": 0, "banker": 0} and s["void"]["reason"] == "misdeal"


def test_a_finished_round_exports_a_round_file_that_settles_the_same() -> None:
    spots = {1: [("ann", 20), ("bob", 10)], 4: [("carl", 15)]}
    doc = round_doc(
        spots,
        "9C 8C TH 9D 8D KS 2C 5D 4C 9H 3S",
        [d(1, "split"), d(1, "match", "bob"), d(1, "stand"), d(1, "hit"), d(4, "surrender", "carl")],
        stake=40,
        time_fee=1,
    )
    state = run(doc)
    exported = GAME.round_file(state)
    assert exported["decisions"] == doc["decisions"] and exported["rules"] == {"time_fee": 1}
    assert settle_round_file(exported) == GAME.settlement(state) == settle_round_file(doc)
    assert from_json(Jokers22State, json.loads(json.dumps(to_json(state)))) == state


def test_the_registry_gives_the_jokers_22_engine() -> None:
    assert get_game("jokers-22") is GAME


# --- round file refusals ---------------------------------------------------------------------

FILE_REFUSALS = [
    ("unknown top key", {"extra": 1}, "round file: unknown key 'extra'"),
    ("unknown rule", {"rules": {"decks": 6, "bust": True}}, "rules: unknown key 'bust'"),
    ("bad coverage", {"rules": {"coverage": "all"}}, "rules.coverage: must be one of ['rotation', 'collect-first']"),
    (
        "unknown wager key",
        {"spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 5, "hand": 1}]}]},
        "spots[0].wagers[0]: unknown key 'hand'",
    ),
    (
        "wager above the limit",
        {"spots": [{"spot": 2, "wagers": [{"player": "ann", "amount": 20000}]}]},
        "spots[0].wagers[0].amount: spot 2: the wager (20000) must be between 1 and 10000",
    ),
    (
        "spot out of range",
        {"spots": [{"spot": 8, "wagers": [{"player": "ann", "amount": 5}]}]},
        "spots[0].spot: spots are numbered 1 to 7, not 8",
    ),
    (
        "a player twice on a spot",
        {"spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 5}, {"player": "ann", "amount": 5}]}]},
        "spots[0].wagers[1].player: spot 1: ann has two wagers on the spot",
    ),
    ("no stake", {"banker": {}}, "banker.stake: is required"),
    (
        "zero stake",
        {"banker": {"stake": 0}},
        "banker.stake: the banker's stake must be a whole number of 1 or more chips, not 0",
    ),
    (
        "unknown decision",
        {
            "decisions": [
                {"spot": 1, "action": "hit"},
                {"spot": 1, "action": "stand"},
                {"spot": 1, "action": "hit"},
                {"spot": 2, "action": "fold"},
            ]
        },
        "decisions[3]: spot 2: the action must be one of hit, stand, double, split, surrender, match, decline, not 'fold'",
    ),
    (
        "surrender without a player",
        {"decisions": [{"spot": 1, "action": "surrender"}]},
        "decisions[0]: spot 1: a surrender names the player who takes it",
    ),
    (
        "unknown decision key",
        {"decisions": [{"spot": 1, "action": "hit", "hand": 1}]},
        "decisions[0]: unknown key 'hand'",
    ),
    ("bad card", {"cards": ["9C", "ZZ"]}, "cards[1]: 'ZZ' is not a card"),
]


@pytest.mark.parametrize(("change", "says"), [r[1:] for r in FILE_REFUSALS], ids=[r[0] for r in FILE_REFUSALS])
def test_a_bad_round_file_is_refused_naming_the_field(change: dict[str, Any], says: str) -> None:
    doc = round_doc({1: [("ann", 10)]}, "9C 5H 7D TC") | change
    assert refusal(doc).startswith(says)


def test_too_few_cards_is_refused_naming_the_target() -> None:
    message = refusal(round_doc({1: [("ann", 10)]}, "9C 5H 7D", [d(1, "stand")]))
    assert message.startswith("cards: the round needs another card, for the banker,") and message.endswith("gives only 3")


def test_tablectl_replay_names_spot_hand_and_total_when_decisions_run_out(tmp_path: Path) -> None:
    # 8-8 split, hand 1 8+3 forced to 11 -> hit 5 = 16: the file stops there.
    path = tmp_path / "round.json"
    path.write_text(json.dumps(round_doc({1: [("ann", 10)]}, "8C 7H 8D 3S 5S TC KD", [d(1, "split")])))
    done = tablectl("replay", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "tablectl: refused: decisions: spot 1: the round needs a decision by spot 1, hand 1, player ann, total 16 "
        "but the round file has no more"
    ]


def test_tablectl_replay_settles_a_jokers_22_round(tmp_path: Path) -> None:
    # The REPLAY.md shape: ann 50 and bob 20 on spot 1; 9+4 hit 2 = 15 stand; banker 5+K = 15 hits 3 = 18.
    doc = round_doc({1: [("ann", 50), ("bob", 20)]}, "9H 5C 4D 2S KD 3C", [d(1, "hit"), d(1, "stand")], stake=500)
    del doc["rules"]
    path = tmp_path / "round.json"
    path.write_text(json.dumps(doc))
    out = replay(path)
    assert out["game"] == "jokers-22" and out["action_spot"] == 1
    assert out["players"] == [{"player": "ann", "spot": 1, "net": -50}, {"player": "bob", "spot": 1, "net": -20}]
    assert out["banker"]["net"] == 70


def test_decision_events_round_trip_through_json() -> None:
    ev = Decision(spot=3, action="match", player="bob")
    assert event_from_json(json.loads(json.dumps(to_json(ev)))) == ev
