"""The live feed's two audiences on the API's side (controller/api/live.py's `LiveFeed`): whatever
the table hands over, a screen that sees every card ends each message with the table's state, and
the dealer's with that state as the dealer may see it (the hidden cards masked), through cards
going face down and coming face up again; and a screen joining then gets those same states."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from controller.api.delta import changes, patched
from controller.api.gate import Published, json_bytes, masked
from controller.api.live import LiveFeed, Subscriber
from controller.table.visibility import MASK, mask_cards

GAME = SimpleNamespace(shown_hand_keys=frozenset(), derived_keys=frozenset())


def _state(seq: int, cards: list[str], prompt: str) -> dict[str, Any]:
    return {
        "journal_seq": seq,
        "prompt": prompt,
        "state": {"seats": [{"seat": 1, "cards": cards[:2]}, {"seat": 2, "cards": cards[2:]}], "rules": {"decks": 6}},
        "devices": {"display": {"upper": prompt, "lower": f"LAST {cards[-1] if cards else ''}"}},
    }


#: (the state after each entry, the cards the dealer may not see then): nothing hidden for a while,
#: a card dealt face down, more cards with it still down, turned up, then nothing hidden again.
STEPS = [
    (_state(1, [], "Deal"), frozenset()),
    (_state(2, ["KD"], "Deal to seat 1"), frozenset()),
    (_state(3, ["KD", "7H"], "Deal to seat 2"), frozenset()),
    (_state(4, ["KD", "7H", "AS"], "Deal to seat 2"), frozenset({"AS"})),
    (_state(5, ["KD", "7H", "AS", "2C"], "Deal to seat 2"), frozenset({"AS"})),
    (_state(6, ["KD", "7H", "AS", "2C"], "Pay seat 2"), frozenset()),
    (_state(7, ["KD", "7H", "AS", "2C"], "Open the next round"), frozenset()),
    (_state(8, ["9S"], "Deal to seat 1"), frozenset()),
]


def test_each_audience_ends_every_message_with_the_state_it_may_see_and_a_joiner_gets_it_too() -> None:
    feed = LiveFeed()
    feed.serve(GAME, lambda count: None)  # type: ignore[arg-type]
    everything, dealer = Subscriber("supervisor"), Subscriber("dealer")
    feed.subscribers |= {everything, dealer}
    screens: dict[bool, Any] = {True: None, False: None}
    base: dict[str, Any] | None = None
    for tick, (state, hidden) in enumerate(STEPS, start=1):
        doc: dict[str, Any] = {"type": "entry", "seq": state["journal_seq"], "live": True, "effects": []}
        doc.update({"state": state} if base is None else {"changes": changes(base, state)})
        base = state
        feed.fan_out(tick, (doc, hidden))
        seen = mask_cards(state, hidden, GAME)
        texts = {}
        for sub in (everything, dealer):
            got_tick, text = texts[sub.everything] = sub.queue.get_nowait()
            message = json.loads(text)
            assert got_tick == tick and message["seq"] == tick
            screen = message["state"] if "state" in message else patched(screens[sub.everything], message["changes"])
            screens[sub.everything] = screen
            assert screen == (state if sub.everything else seen), (tick, sub.role)
        assert (MASK in json.dumps(screens[False])) == bool(hidden)
        # Nothing hidden, now or in the message before: one message for both audiences, encoded once.
        before = STEPS[tick - 2][1] if tick > 1 else frozenset()
        assert (texts[True][1] is texts[False][1]) == (not hidden and not before)
        # What a screen joining now is given: the same states.
        assert feed._states[tick] == (tick, state, seen)
        if not hidden:
            # Nothing hidden: the dealer's state is the whole one, one document (the message's
            # changes applied once, not a second time to a copy of the same).
            assert feed._states[tick][2] is feed._states[tick][1]


def test_the_state_read_is_each_audiences_state_encoded_once_for_both_when_nothing_is_hidden() -> None:
    for state, hidden in STEPS:
        published = Published(
            version=state["journal_seq"],
            seq=state["journal_seq"],
            blocked=False,
            journal_fault=None,
            whole=state,
            words=state["prompt"],
            hidden=hidden,
            meters={},
        )
        for first in (True, False):  # whichever audience asks first
            view = masked(published, GAME)  # type: ignore[arg-type]
            bodies = {everything: view.state_json(everything) for everything in (first, not first)}
            assert bodies[True] == json_bytes(state)
            assert bodies[False] == json_bytes(mask_cards(state, hidden, GAME))
            assert (bodies[True] is bodies[False]) == (not hidden)
