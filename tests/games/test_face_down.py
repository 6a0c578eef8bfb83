"""Which cards each game deals face down, as its adapter tells the rest of the table, against
GAMES.md: Grand Slam's blind hand ("it receives a card each time the solo player receives one,
in seat order within the same pass, face down"), and Jokers 22's double down ("one card, face
down") until the hands are shown; Baseball poker's are tested with the table (tests/controller/
test_roles.py). Each test deals a round through the engine and says which cards the rules put
face down from the card order alone."""

from __future__ import annotations

from typing import Any

from controller.engine.base import CardDealt, RoundVoided, VoidRound
from controller.engine.cards import parse_card
from controller.games import adapter
from controller.games.base import GameAdapter

GS = adapter("grand-slam")
J22 = adapter("jokers-22")


def deal(
    game: GameAdapter, opening: dict[str, Any], cards: list[str], decisions: list[dict[str, Any]] | None = None
) -> list[tuple[Any, bool]]:
    """Open a round and deal `cards` (taking `decisions` when the engine asks); for each card,
    the state after it and whether the adapter said beforehand that it goes face down."""
    return dealt(game, opening, cards, decisions)[0]


def dealt(
    game: GameAdapter, opening: dict[str, Any], cards: list[str], decisions: list[dict[str, Any]] | None = None
) -> tuple[list[tuple[Any, bool]], Any]:
    """`deal`'s steps, and the state at the end (after the last decision too)."""
    doc = {"game": game.name, "rules": {}, **opening, "cards": [], **({"decisions": []} if game is J22 else {})}
    state, _ = game.rules.apply(game.rules.initial(), game.rules.parse_round_file(doc).open)
    pending, choices = list(cards), list(decisions or [])
    steps = []
    while pending or (choices and game.rules.awaiting(state).kind == "decision"):
        awaiting = game.rules.awaiting(state)
        if awaiting.kind == "decision":
            state, _ = game.rules.apply(state, game.rules.parse_decision(choices.pop(0), "decision"))
            continue
        if awaiting.kind != "card":
            break
        down = game.next_card_hidden(awaiting)
        state, _ = game.rules.apply(state, CardDealt(parse_card(pending.pop(0))))
        steps.append((state, down))
    return steps, state


# -- Grand Slam: the blind hand -------------------------------------------------------------------

# A solo player on seat 3 (all three bases), the blind puck on seat 4: the blind hand takes a card
# right after each of the player's, in each pass. 5C at first base: the stack to second; 8D blind;
# 9S at second: to third; 2H blind; 7C at third: home; KD blind.
SOLO = {"seats": [{"seat": 3, "wagers": {"first": 10, "second": 10, "third": 10}}], "blind_seat": 4}
SOLO_CARDS = ["5C", "8D", "9S", "2H", "7C", "KD"]
BLIND = ["8D", "2H", "KD"]  # every second card, from GAMES.md's order (blind seat after the player's)


def test_grand_slam_says_the_blind_hand_s_cards_go_face_down_and_no_other() -> None:
    steps = deal(GS, SOLO, SOLO_CARDS)
    assert [down for _, down in steps] == [False, True, False, True, False, True]
    # While dealing: the blind cards dealt so far, none of the player's.
    seen = [set(GS.hidden_cards(state)) for state, _ in steps[:-1]]
    assert seen == [set(), {"8D"}, {"8D"}, {"8D", "2H"}, {"8D", "2H"}]
    # A second player switches the blind hand off (GAMES.md): every card lies face up.
    opening = {
        "seats": [{"seat": 3, "wagers": {"first": 10}}, {"seat": 5, "wagers": {"first": 10}}],
        "blind_seat": 4,
    }
    # 5C: seat 3 to second; TD: seat 5 out; 9S: seat 3 to third; 7C: home.
    cards = ["5C", "TD", "9S", "7C"]
    steps = deal(GS, opening, cards)
    assert [down for _, down in steps] == [False] * 4
    assert all(not GS.hidden_cards(state) for state, _ in steps)
    state = steps[-1][0]
    assert state.phase == "settled"
    assert GS.hidden_after(GS.rules.settlement(state), GS.rules.round_file(state), cards) == frozenset()


def test_grand_slam_s_blind_hand_stays_face_down_after_the_round() -> None:
    state = deal(GS, SOLO, SOLO_CARDS)[-1][0]
    assert state.phase == "settled"
    settlement = GS.rules.settlement(state)
    assert GS.hidden_after(settlement, GS.rules.round_file(state), SOLO_CARDS) == frozenset(BLIND)


def test_grand_slam_s_blind_hand_before_the_player_and_a_void_round() -> None:
    # The blind puck on seat 2, left of the solo player on seat 3: its card comes first in each pass.
    opening = {"seats": [{"seat": 3, "wagers": {"first": 10, "second": 10}}], "blind_seat": 2}
    steps = deal(GS, opening, ["QH", "6S"])
    assert [down for _, down in steps] == [True, False]
    state = steps[-1][0]
    assert GS.hidden_cards(state) == {"QH"}
    assert GS.rules.awaiting(state).target == {"seat": 2, "base": "second", "blind": True}
    assert "face down" in GS.card_prompt(GS.rules.awaiting(state).target)
    void, effects = GS.rules.apply(state, VoidRound(by="supervisor:Kim", reason="misdeal"))
    assert any(isinstance(e, RoundVoided) for e in effects)
    assert GS.hidden_after(GS.rules.settlement(void), None, ["QH", "6S"]) == {"QH"}


# -- Jokers 22: the double down ---------------------------------------------------------------

# Spot 1 (ann): 5C, banker 9H, 6D: 11, ann doubles and takes 2S face down; spot 2 (bob): TC, 7S.
DOUBLE = {
    "banker": {"stake": 1000},
    "spots": [
        {"spot": 1, "wagers": [{"player": "ann", "amount": 10}]},
        {"spot": 2, "wagers": [{"player": "bob", "amount": 10}]},
    ],
}
DEAL = ["5C", "TC", "9H", "6D", "7S"]


def test_jokers22_says_the_double_down_card_goes_face_down_and_no_other() -> None:
    steps = deal(J22, DOUBLE, [*DEAL, "2S"], [{"spot": 1, "action": "double"}])
    assert [down for _, down in steps] == [False] * 5 + [True]
    state = steps[-1][0]
    assert state.phase == "dealing"  # bob and the banker still to play
    assert J22.hidden_cards(state) == {"2S"}
    assert all(not J22.hidden_cards(s) for s, _ in steps[:-1])
    # The dealer is told to deal it face down.
    before = dealt(J22, DOUBLE, DEAL, [{"spot": 1, "action": "double"}])[1]
    assert "face down" in J22.card_prompt(J22.rules.awaiting(before).target)
    # A hit is dealt face up.
    steps = deal(J22, DOUBLE, [*DEAL, "2S"], [{"spot": 1, "action": "hit"}])
    assert [down for _, down in steps] == [False] * 6
    assert not J22.hidden_cards(steps[-1][0])


def test_jokers22_s_double_down_card_stays_down_while_the_banker_plays_and_is_shown_after() -> None:
    # bob stands on 17; the banker's second card 8C (17) stands: the hands are shown, settled.
    cards = [*DEAL, "2S", "8C"]
    steps = deal(J22, DOUBLE, cards, [{"spot": 1, "action": "double"}, {"spot": 2, "action": "stand"}])
    assert J22.hidden_cards(steps[-2][0]) == {"2S"}  # bob has stood; the banker's card not yet
    assert [down for _, down in steps][-1] is False  # the banker's card lies face up
    state = steps[-1][0]
    assert state.phase == "settled"
    assert J22.hidden_after(J22.rules.settlement(state), J22.rules.round_file(state), cards) == frozenset()


def test_jokers22_s_double_down_card_stays_down_in_a_void_round() -> None:
    state = deal(J22, DOUBLE, [*DEAL, "2S"], [{"spot": 1, "action": "double"}])[-1][0]
    void, _ = J22.rules.apply(state, VoidRound(by="supervisor:Kim", reason="misdeal"))
    assert "2S" in J22.hidden_after(J22.rules.settlement(void), None, [*DEAL, "2S"])
    # The hands that did not double (bob's two cards, the banker's) are shown.
    assert not {"5C", "6D", "TC", "7S", "9H"} & J22.hidden_after(J22.rules.settlement(void), None, [*DEAL, "2S"])
