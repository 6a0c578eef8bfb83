"""The simulated dealer loads a new shoe into the simulated shoe (`SimulatedShoe.load`): the cards
the table counts as in the shoe, shuffled, less a card drawn and still on its way to the host
(it is counted from the new shoe when it arrives), under the cards a test stacked on top and has
not drawn yet."""

from __future__ import annotations

import random

from controller.engine.cards import ShoeComposition, parse_card, parse_cards
from drivers.shoe.simulated import SimulatedShoe

DECK = list(ShoeComposition(decks=1).cards())


def test_a_new_shoe_keeps_stacked_cards_on_top_and_leaves_out_a_card_on_its_way() -> None:
    shoe = SimulatedShoe(DECK)  # not started: the calls run here, and drawn cards wait to go out
    try:
        shoe.stack(parse_cards(["QS", "2C"]))
        assert shoe.draw(1) == [parse_card("QS")]  # queued for the host, not acknowledged yet
        shoe.load(random.Random(1), DECK)
        assert shoe.cards_left == 51  # the deck less QS, on its way; 2C still on top
        rest = shoe.draw(51)
        assert rest[0] == parse_card("2C")
        assert parse_card("QS") not in rest and len(set(rest)) == 51
    finally:
        shoe.stop()


def test_a_new_shoe_is_what_the_table_counts_shuffled() -> None:
    shoe = SimulatedShoe(DECK[:5])
    try:
        left = DECK[10:]
        shoe.load(random.Random(2), left)
        drawn = shoe.draw(60)
        assert sorted(map(str, drawn)) == sorted(map(str, left)) and drawn != left
    finally:
        shoe.stop()
