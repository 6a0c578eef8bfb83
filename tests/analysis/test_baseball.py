"""Baseball poker dealt to the showdown (controller/games/baseball/analysis.py): the same hands as the
engine's `apply` deals them, and a Monte Carlo that is the same on any number of workers."""

from __future__ import annotations

import random

import pytest

from controller.engine.cards import STANDARD_DECK, Card
from controller.games import simulate
from controller.games.baseball.analysis import RecordingDecks, replay_through_engine, showdown
from controller.games.baseball.rules import BaseballRules


@pytest.mark.parametrize(
    "rules",
    [
        BaseballRules(),
        BaseballRules(rainout=False, extra_card="none"),
        BaseballRules(burn_cards=True, extra_card="pay", check_option=True),
        BaseballRules(pay_for_wild=True, pay_for_wild_down=True, natural_wins=True, double_ace_flush=True),
        BaseballRules(wild=("2",)),
    ],
)
def test_every_hand_dealt_to_the_showdown_is_the_one_the_engine_deals(rules: BaseballRules) -> None:
    rng = random.Random(str(rules))

    def shuffled() -> list[Card]:
        deck = list(STANDARD_DECK)
        rng.shuffle(deck)
        return deck

    rainouts = extra = community = 0
    for players in (2, 5, 7):
        for _ in range(12):
            decks = RecordingDecks(shuffled)
            hand = showdown(rules, players, decks)
            assert hand == replay_through_engine(rules, players, decks.dealt)
            rainouts += hand.rainouts
            extra += any(len(cards) > 7 for cards in hand.cards)
            community += len({cards[-1] for cards in hand.cards}) == 1  # everyone's last card: one card
    # The rules that change the deal did come up among these hands: with burn cards, seven
    # players run the deck short before 7th street, which is then one community card.
    assert rainouts > 0 or not rules.rainout
    assert extra > 0 or rules.extra_card == "none"
    assert community > 0 or not rules.burn_cards


def test_the_showdown_categories_are_the_same_on_one_worker_or_two() -> None:
    one = simulate("baseball-poker", 2500, seed=8, workers=1, decks=1, players=6)
    two = simulate("baseball-poker", 2500, seed=8, workers=2, decks=1, players=6)
    assert {k: (t.rounds, t.total) for k, t in one.items()} == {k: (t.rounds, t.total) for k, t in two.items()}
    assert one["pair"].rounds == 6 * 2500  # every player shows down every hand
    assert 0.5 < one["rainouts"].mean < 1.2
