"""A round file's refusals, word for word (REPLAY.md: one line naming the field, the seat and the
rule), as the hand-written readers said them before the round files were read by the games'
pydantic models (issue 29 point 3): each case was run on the code before that change to pin its
words. Every case is a change to a round file that settles, and the refusal `tablectl replay`
(or the table, for one decision) says for it; "ok" where the file is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine import get_game
from controller.engine.base import RuleError
from controller.games.replay import settle_round_file

BASES = {
    "grand-slam": {
        "game": "grand-slam",
        "seats": [
            {
                "seat": 1,
                "wagers": {"first": 10, "second": 10, "third": 5},
                "side_bets": {"three_outs": 5, "poker_bonus": 5},
            },
            {"seat": 4, "wagers": {"first": 20}},
        ],
        "blind_seat": None,
        "cards": ["5H", "KD", "2C", "9S", "TD"],
    },
    "jokers-22": {
        "game": "jokers-22",
        "banker": {"stake": 500},
        "spots": [{"spot": 1, "wagers": [{"player": "ann", "amount": 50}, {"player": "bob", "amount": 20}]}],
        "cards": ["5H", "9D", "KC", "7S", "8D", "2C", "3C"],
        "decisions": [{"spot": 1, "action": "hit"}, {"spot": 1, "action": "stand"}],
    },
    "baseball-poker": {
        "game": "baseball-poker",
        "players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        "cards": ["2H"],
        "actions": [],
    },
}

GRAND_SLAM = [
    ({"seats": [{"seat": "x", "wagers": {"first": 1}}]}, "seats[0].seat: must be a seat number 1 to 7, not 'x'"),
    ({"seats": [{"seat": None, "wagers": {"first": 1}}]}, "seats[0].seat: must be a seat number 1 to 7, not None"),
    ({"seats": [{"wagers": {"first": 1}}]}, "seats[0].seat: must be a seat number 1 to 7, not None"),
    ({"seats": [{"seat": 1}]}, "seats[0].wagers: seat 1: must be an object of base: amount"),
    ({"seats": [{"seat": 1, "wagers": []}]}, "seats[0].wagers: seat 1: must be an object of base: amount"),
    ({"seats": [{"seat": 1, "wagers": None}]}, "seats[0].wagers: seat 1: must be an object of base: amount"),
    (
        {"seats": [{"seat": 1, "wagers": {"first": "10"}}]},
        "seats[0].wagers.first: seat 1: the wager on first must be a whole number of chips, not '10'",
    ),
    (
        {"seats": [{"seat": 1, "wagers": {"first": 2.5}}]},
        "seats[0].wagers.first: seat 1: the wager on first must be a whole number of chips, not 2.5",
    ),
    (
        {"seats": [{"seat": 1, "wagers": {"first": 1, "second": 1, "third": 1}, "side_bets": {"three_outs": True}}]},
        "seats[0].side_bets.three_outs: seat 1: the side bet must be a whole number of chips, not True",
    ),
    (
        {"seats": [{"seat": 1, "wagers": {"first": 1}, "side_bets": [1]}]},
        "seats[0].side_bets: seat 1: must be an object of side bet: amount",
    ),
    (
        {"seats": [{"seat": "x", "wagers": {"first": 1}, "hat": 1}]},
        "seats[0]: unknown key 'hat'; allowed keys are ['seat', 'side_bets', 'wagers']",
    ),
    ({"seats": [5]}, "seats[0]: must be an object with seat, wagers and side_bets"),
    ({"seats": {}}, "seats: must be a list of seats"),
    ({"seats": None}, "seats: must be a list of seats"),
    ({"blind_seat": "2"}, "blind_seat: must be a seat number or null, not '2'"),
    ({"blind_seat": True}, "blind_seat: must be a seat number or null, not True"),
    ({"cards": "5H"}, "cards: must be a list of cards"),
    ({"cards": ["5H", 7]}, "cards[1]: a card is written as text such as 'AS' or 'JK', not 7"),
    ({"cards": ["ZZ"]}, "cards[0]: 'ZZ' is not a card: rank 'Z' is not one of 2-9, T (or 10), J, Q, K, A"),
    (
        {"colour": 1, "seats": 5},
        "round file: unknown key 'colour'; allowed keys are ['blind_seat', 'cards', 'game', 'rules', 'seats']",
    ),
    ({"rules": [1]}, "rules: must be an object of rule options"),
    ({"rules": {"decks": "6"}}, "rules.decks: must be a whole number of 1 or more, not '6'"),
    ({"seats": []}, "seats: a round needs at least one seat with a wager"),
    ({"seats": [{"seat": 1, "wagers": {"first": 1}, "side_bets": None}]}, "ok"),
    (
        {"seats": [{"seat": 1, "wagers": {"fourth": 1}}]},
        "seats[0].wagers: seat 1: 'fourth' is not a base; bet first, second or third",
    ),
    (
        {"seats": [{"seat": 1, "wagers": {"first": 1}}, {"seat": "y", "wagers": {"first": 1}}]},
        "seats[1].seat: must be a seat number 1 to 7, not 'y'",
    ),
    (
        {"seats": [{"seat": 9, "wagers": {"first": 1}}]},
        "seats[0].seat: seats are numbered 1 to 7, not 9 (a Grand Slam table seats at most 7)",
    ),
    ({"seats": [{"seat": True, "wagers": {"first": 1}}]}, "seats[0].seat: must be a seat number 1 to 7, not True"),
    (
        {"zeta": 1, "alpha": 2},
        "round file: unknown key 'alpha'; allowed keys are ['blind_seat', 'cards', 'game', 'rules', 'seats']",
    ),
    (
        {"seats": [{"seat": 1, "wagers": {"first": "1"}, "zz": 1, "aa": 2}]},
        "seats[0]: unknown key 'aa'; allowed keys are ['seat', 'side_bets', 'wagers']",
    ),
    (
        {"zz": 1, "seats": [{"seat": 1, "wagers": {"first": 1}, "aa": 1}]},
        "round file: unknown key 'zz'; allowed keys are ['blind_seat', 'cards', 'game', 'rules', 'seats']",
    ),
]

JOKERS_22 = [
    ({"banker": 5}, "banker: must be an object with the banker's stake"),
    ({"banker": {}}, "banker.stake: is required"),
    ({"banker": {"stake": "5"}}, "banker.stake: the banker's stake must be a whole number of 1 or more chips, not '5'"),
    ({"banker": {"stake": 0}}, "banker.stake: the banker's stake must be a whole number of 1 or more chips, not 0"),
    ({"banker": {"stake": 5, "player": 3}}, "banker.player: the banker's name must be text"),
    ({"banker": {"stake": 5, "player": " "}}, "banker.player: the banker's name must be text"),
    ({"banker": {"stake": 5, "x": 1}}, "banker: unknown key 'x'; allowed keys are ['player', 'stake']"),
    ({"spots": 5}, "spots: must be a list of spots"),
    ({"spots": []}, "spots: a round needs at least one spot with a wager"),
    ({"spots": [5]}, "spots[0]: must be an object with spot and wagers"),
    (
        {"spots": [{"spot": 1, "wagers": 5}]},
        "spots[0].wagers: spot 1: must be a list of {player, amount} in the order placed",
    ),
    ({"spots": [{"spot": 1}]}, "spots[0].wagers: spot 1: must be a list of {player, amount} in the order placed"),
    ({"spots": [{"wagers": []}]}, "spots[0].spot: must be a spot number 1 to 7, not None"),
    ({"spots": [{"spot": "2", "wagers": []}]}, "spots[0].spot: must be a spot number 1 to 7, not '2'"),
    ({"spots": [{"spot": 1, "wagers": []}]}, "spots[0].wagers: spot 1: a spot in the round has at least one wager"),
    ({"spots": [{"spot": 1, "wagers": [5]}]}, "spots[0].wagers[0]: spot 1: must be an object with player and amount"),
    ({"spots": [{"spot": 1, "wagers": [{"player": "a"}]}]}, "spots[0].wagers[0].amount: spot 1: is required"),
    ({"spots": [{"spot": 1, "wagers": [{"amount": 5}]}]}, "spots[0].wagers[0].player: spot 1: is required"),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": "a", "amount": "5"}]}]},
        "spots[0].wagers[0].amount: spot 1: the wager must be a whole number of chips, not '5'",
    ),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": "", "amount": 5}]}]},
        "spots[0].wagers[0].player: spot 1: the player must be named, not ''",
    ),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": 5, "amount": 5}]}]},
        "spots[0].wagers[0].player: spot 1: the player must be named, not 5",
    ),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": "a", "amount": 5, "z": 1}]}]},
        "spots[0].wagers[0]: unknown key 'z'; allowed keys are ['amount', 'player']",
    ),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": "a", "amount": 5}], "q": 1}]},
        "spots[0]: unknown key 'q'; allowed keys are ['spot', 'wagers']",
    ),
    ({"decisions": 5}, "decisions: must be a list of decisions"),
    ({"decisions": [5]}, "decisions[0]: must be an object with spot, action and player"),
    ({"decisions": [{"spot": "1", "action": "hit"}]}, "decisions[0].spot: must be a spot number, not '1'"),
    ({"decisions": [{"action": "hit"}]}, "decisions[0].spot: must be a spot number, not None"),
    (
        {"decisions": [{"spot": 1}]},
        "decisions[0]: spot 1: the action must be one of hit, stand, double, split, surrender, match, decline, not None",
    ),
    (
        {"decisions": [{"spot": 1, "action": 5}]},
        "decisions[0]: spot 1: the action must be one of hit, stand, double, split, surrender, match, decline, not 5",
    ),
    (
        {"decisions": [{"spot": 1, "action": "fold"}]},
        "decisions[0]: spot 1: the action must be one of hit, stand, double, split, surrender, match, decline, not 'fold'",
    ),
    (
        {"decisions": [{"spot": 1, "action": "surrender"}]},
        "decisions[0]: spot 1: a surrender names the player who takes it",
    ),
    (
        {"decisions": [{"spot": 1, "action": "match", "player": ""}]},
        "decisions[0]: spot 1: the player must be named, not ''",
    ),
    (
        {"decisions": [{"spot": 1, "action": "hit", "player": 7}]},
        "decisions[0]: spot 1: the player must be named, not 7",
    ),
    (
        {"decisions": [{"spot": 1, "action": "hit", "x": 7}]},
        "decisions[0]: unknown key 'x'; allowed keys are ['action', 'player', 'spot']",
    ),
    ({"cards": ["5H", None]}, "cards[1]: a card is written as text such as 'AS' or 'JK', not None"),
    ({"rules": 5}, "rules: must be an object of rule options"),
    (
        {"colour": 2},
        "round file: unknown key 'colour'; allowed keys are ['banker', 'cards', 'decisions', 'game', 'rules', 'spots']",
    ),
    (
        {"spots": [{"spot": 9, "wagers": [{"player": "a", "amount": 5}]}]},
        "spots[0].spot: spots are numbered 1 to 7, not 9 (a Jokers 22 table seats at most 7)",
    ),
    (
        {"spots": [{"spot": 1, "wagers": [{"player": "a", "amount": "5", "z": 1}]}]},
        "spots[0].wagers[0]: unknown key 'z'; allowed keys are ['amount', 'player']",
    ),
]

BASEBALL = [
    ({"players": 5}, "players: must be a list of {seat, stack}"),
    ({"players": []}, "players: a hand needs at least two players"),
    ({"players": [{"seat": 1, "stack": 100}]}, "players: a hand needs at least two players"),
    ({"players": [{"seat": 1, "stack": 100}, 5]}, "players[1]: must be an object with seat and stack"),
    ({"players": [{"seat": 1, "stack": 100}, {"seat": 2}]}, "players[1].stack: is required"),
    ({"players": [{"seat": 1, "stack": 100}, {"stack": 2}]}, "players[1].seat: is required"),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": "2", "stack": 5}]},
        "players[1].seat: seats are numbered 1 to 8, not '2' (a Baseball poker table seats at most 8)",
    ),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": "5"}]},
        "players[1].stack: seat 2: the stack must be a whole number of 1 or more chips, not '5'",
    ),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 0}]},
        "players[1].stack: seat 2: the stack must be a whole number of 1 or more chips, not 0",
    ),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 5, "x": 1}]},
        "players[1]: unknown key 'x'; allowed keys are ['seat', 'stack']",
    ),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": True, "stack": 5}]},
        "players[1].seat: seats are numbered 1 to 8, not True (a Baseball poker table seats at most 8)",
    ),
    (
        {"players": [{"seat": 1, "stack": 100}, {"seat": 9, "stack": 5}]},
        "players[1].seat: seats are numbered 1 to 8, not 9 (a Baseball poker table seats at most 8)",
    ),
    ({"actions": 5}, "actions: must be a list of actions"),
    ({"actions": [5]}, "actions[0]: must be an object with seat and action"),
    ({"actions": [{"seat": "1", "action": "call"}]}, "actions[0].seat: must be a seat number, not '1'"),
    ({"actions": [{"action": "call"}]}, "actions[0].seat: must be a seat number, not None"),
    (
        {"actions": [{"seat": 1}]},
        "actions[0]: seat 1: the action must be one of bring-in, complete, check, bet, call, raise, fold, pay, decline, not None",
    ),
    (
        {"actions": [{"seat": 1, "action": 3}]},
        "actions[0]: seat 1: the action must be one of bring-in, complete, check, bet, call, raise, fold, pay, decline, not 3",
    ),
    (
        {"actions": [{"seat": 1, "action": "all-in"}]},
        "actions[0]: seat 1: the action must be one of bring-in, complete, check, bet, call, raise, fold, pay, decline, not 'all-in'",
    ),
    (
        {"actions": [{"seat": 1, "action": "call", "y": 1}]},
        "actions[0]: unknown key 'y'; allowed keys are ['action', 'seat']",
    ),
    (
        {"colour": 1},
        "round file: unknown key 'colour'; allowed keys are ['actions', 'cards', 'game', 'players', 'rules']",
    ),
    ({"rules": {"wild": "3"}}, 'rules.wild: must be a list of ranks, such as ["3", "9"] (or [] for none)'),
]

DECISIONS = [
    (
        "jokers-22",
        {"spot": 1, "action": "fold"},
        "decision: spot 1: the action must be one of hit, stand, double, split, surrender, match, decline, not 'fold'",
    ),
    ("jokers-22", {"spot": "1", "action": "hit"}, "decision.spot: must be a spot number, not '1'"),
    ("jokers-22", {"action": "hit"}, "decision.spot: must be a spot number, not None"),
    (
        "jokers-22",
        {"spot": 1, "action": "hit", "q": 1},
        "decision: unknown key 'q'; allowed keys are ['action', 'player', 'spot']",
    ),
    ("jokers-22", 5, "decision: must be an object with spot, action and player"),
    (
        "baseball-poker",
        {"seat": 1, "action": "x"},
        "decision: seat 1: the action must be one of bring-in, complete, check, bet, call, raise, fold, pay, decline, not 'x'",
    ),
    ("baseball-poker", {"seat": None, "action": "call"}, "decision.seat: must be a seat number, not None"),
    ("baseball-poker", [1], "decision: must be an object with seat and action"),
]


def _said(doc: Any) -> str:
    try:
        settle_round_file(doc)
    except RuleError as exc:
        return str(exc)
    return "ok"


@pytest.mark.parametrize(
    ("game", "change", "says"),
    [
        *(("grand-slam", change, says) for change, says in GRAND_SLAM),
        *(("jokers-22", change, says) for change, says in JOKERS_22),
        *(("baseball-poker", change, says) for change, says in BASEBALL),
    ],
)
def test_a_round_file_is_refused_in_the_words_it_always_was(game: str, change: dict[str, Any], says: str) -> None:
    assert _said({**BASES[game], **change}) == says


@pytest.mark.parametrize(("game", "doc", "says"), DECISIONS)
def test_a_decision_the_table_reads_is_refused_in_the_words_it_always_was(game: str, doc: Any, says: str) -> None:
    with pytest.raises(RuleError) as refused:
        get_game(game).parse_decision(doc, "decision")
    assert str(refused.value) == says
