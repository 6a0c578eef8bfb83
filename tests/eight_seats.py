"""An eight-player Baseball poker hand (GAMES.md section 3): 8 x 7 = 56 cards is more than the
deck's 52, so 7th street is one community card. Shared by the engine, `tablectl replay`, the
simulated table over the pty and the dealer screen's tests.

3rd street deals 24 cards (down, down, up to seats 1 to 8), 4th to 6th street 8 each: 48 dealt,
4 left for 8 players, so 7th street is one card face up in the middle, the AS. No 4 and no
queen of spades comes face up (no extra card, no rainout) and no card is wild: seat 8 shows AH
AD AC on 4th to 6th street, and the community AS makes its fourth ace: four of a kind, which
no other hand here reaches.
"""

from __future__ import annotations

from typing import Any

from controller.engine.cards import STANDARD_DECK

SEAT8_UP = ["AH", "AD", "AC"]  # seat 8's 4th, 5th and 6th street cards
COMMUNITY = "AS"
# Dealt face down on 3rd street or never dealt: a face-up 4 would give an extra card, a face-up
# QS would rain the deal out.
DOWN_ONLY = ["4C", "4D", "4H", "4S", "QS"]


def eight_seat_cards() -> list[str]:
    """The 49 cards of the hand in dealing order."""
    named = {*SEAT8_UP, COMMUNITY, *DOWN_ONLY}
    rest = iter([str(c) for c in sorted(STANDARD_DECK) if str(c) not in named])
    downs = iter(DOWN_ONLY)
    cards = [next(downs, None) or next(rest) for _ in range(16)]  # two passes face down
    cards += [next(rest) for _ in range(8)]  # the up card of 3rd street
    for street in range(3):  # 4th to 6th street, face up
        cards += [next(rest) for _ in range(7)] + [SEAT8_UP[street]]
    return [*cards, COMMUNITY]


def eight_seat_actions() -> list[dict[str, Any]]:
    """The table's simplest play: on 3rd street seat 1 (the lowest up card, 2C) brings it in; from
    4th street seat 8's aces open with the bring-in amount; every other player calls each time."""
    third = [1, *range(2, 9)]
    later = [8, *range(1, 8)]
    order = [third, later, later, later, later]  # 3rd to 7th street
    return [
        {"seat": seat, "action": "bring-in" if i == 0 else "call"} for street in order for i, seat in enumerate(street)
    ]


def eight_seat_hand() -> dict[str, Any]:
    """The hand as a REPLAY.md round file (eight players, 100 chips each, no wild cards)."""
    return {
        "game": "baseball-poker",
        "rules": {"wild": []},
        "players": [{"seat": seat, "stack": 100} for seat in range(1, 9)],
        "cards": eight_seat_cards(),
        "actions": eight_seat_actions(),
    }


#: What the hand settles to: each player puts in 9 (ante 1, 1 on 3rd and 4th street, 2 on 5th
#: to 7th), a pot of 72 that seat 8's four aces take: +63, the seven others -9 each.
NETS = {**{seat: -9 for seat in range(1, 8)}, 8: 63}
