"""What each audience sees of the table: the one place face-down cards are kept face down.

The supervisor and surveillance see every card. The dealer, and whatever players can see (the
pole display, the dealer's screen, its prompts and event log), see no rank or suit of a card
the rules keep face down: a live hand's down cards, a card held by a fault that would go face
down, and after the hand what the rules never turn over (Baseball poker: the down cards of
players who folded or won without a showdown, the burn cards).

Which cards those are is game knowledge, asked of the game's adapter (`hidden_cards` for the
hand being dealt, `hidden_after` for a finished one, `next_card_hidden` for a held card). This
module applies it to every document a dealer gets: the state (`GET /api/state`), each entry and
state of the live feed, recall (`GET /api/rounds`), a route's prompt and the pole display. A
hidden card's text is replaced by MASK wherever it stands: as a value ("card": "AS") or as a
word in a sentence ("A♠ to seat 2" is written "AS to seat 2" by the table: so "face-down card
to seat 2"). Masking whole documents, not chosen fields, is what keeps a new field from leaking.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from controller.table import Table

T = TypeVar("T")

MASK = "face-down card"
#: The roles that see every card, a live hand's face-down ones included.
SEES_EVERY_CARD = frozenset({"supervisor", "surveillance"})
# A card as the table writes it (GAMES.md notation), standing as a word of its own.
_CARD = re.compile(r"(?<![A-Za-z0-9])(?:[2-9TJQKA][CDHS]|JK)(?![A-Za-z0-9])")


class Sight:
    """What one audience sees of `table`: everything, or what the dealer may see."""

    def __init__(self, table: Table, *, everything: bool) -> None:
        self.table = table
        self.everything = everything
        self._hidden: dict[int | None, frozenset[str]] = {}

    def hidden(self, round_no: int | None) -> frozenset[str]:
        """The cards of round `round_no` this audience may not see (none when it sees everything)."""
        if self.everything or round_no is None:
            return frozenset()
        if round_no not in self._hidden:
            self._hidden[round_no] = self._hidden_of(round_no)
        return self._hidden[round_no]

    def _hidden_of(self, round_no: int) -> frozenset[str]:
        table = self.table
        game = table.adapter
        record = table.rounds.get(round_no)
        if record is None:
            return frozenset()
        if record.status != "open":
            return game.hidden_after(record.settlement or {}, record.round_file, record.cards)
        hidden = set(game.hidden_cards(table.state))
        if round_no == table.round_no and game.next_card_hidden(table.awaiting):
            # A card read now would go face down: one a fault holds, or several held, stay hidden.
            hidden |= {str(card) for _, card in table.held}
            hidden |= {f.card for f in table.faults.values() if f.card}
        elif round_no == table.round_no and hidden:
            # Where held cards will go is not known until the fault is cleared (a replacement
            # may come first): in a hand with face-down cards they stay hidden until dealt.
            hidden |= {str(card) for _, card in table.held}
        return frozenset(hidden)

    def current(self) -> frozenset[str]:
        return self.hidden(self.table.round_no)

    def mask(self, doc: T, hidden: frozenset[str]) -> T:
        """`doc` (JSON: dicts, lists, text) with every hidden card's text replaced by MASK."""
        if not hidden:
            return doc
        return _mask(doc, hidden, self.table.adapter.shown_hand_keys)  # type: ignore[no-any-return]

    def snapshot(self, snap: T) -> T:
        """The table's state (GET /api/state, the feed's "state") as this audience sees it."""
        return self.mask(snap, self.current())

    def entry(self, message: T, round_no: int | None) -> T:
        """A journal entry (with its effects and the state after it, live) as this audience sees it."""
        return self.mask(message, self.hidden(round_no) | self.current())

    def text(self, words: str) -> str:
        """A sentence for the dealer or the players (a prompt, a line of the pole display)."""
        return self.mask(words, self.current())


def _mask(doc: Any, hidden: frozenset[str], shown: frozenset[str]) -> Any:
    if isinstance(doc, str):
        if doc.strip().upper() in hidden:
            return MASK
        return _CARD.sub(lambda m: MASK if m.group(0) in hidden else m.group(0), doc)
    if isinstance(doc, dict):
        return {key: value if key in shown else _mask(value, hidden, shown) for key, value in doc.items()}
    if isinstance(doc, list | tuple):
        return [_mask(value, hidden, shown) for value in doc]
    return doc


def sight(table: Table, role: str | None) -> Sight:
    """What `role` sees: "supervisor" and "surveillance" everything; the dealer, the pole
    display and anyone else (None) what the dealer may see."""
    return Sight(table, everything=role in SEES_EVERY_CARD)


def mask_cards(doc: T, hidden: frozenset[str], game: Any) -> T:
    """`doc` with every card in `hidden` masked, as `Sight.mask` does, for a caller that holds the
    hidden set the table published (controller/api/gate.py) rather than the table."""
    if not hidden:
        return doc
    return _mask(doc, hidden, game.shown_hand_keys)  # type: ignore[no-any-return]
