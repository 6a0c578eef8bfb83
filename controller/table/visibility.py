"""What each audience sees of the table: the one place face-down cards are kept face down.

The supervisor and surveillance see every card. The dealer, and whatever players can see (the
pole display, the dealer's screen, its prompts and event log), see no rank or suit of a card
the rules keep face down: a live hand's down cards, a card held by a fault that would go face
down, and after the hand what the rules never turn over (Baseball poker: the down cards of
players who folded or won without a showdown, the burn cards).

Which cards those are is game knowledge, asked of the game's adapter (`hidden_cards` for the
hand being dealt, `hidden_after` for a finished one, `next_card_hidden` for a held card). This
module applies it to every document a dealer gets: the state (`GET /api/state`), each entry and
state of the live feed, recall (`GET /api/rounds`), a route's prompt and answer (the cards
`/api/sim/draw` pulled), an error's words and the pole display. A hidden card's text is replaced
by MASK wherever and however it stands: as a value ("card": "AS") or a word in a sentence ("AS
to seat 2": "face-down card to seat 2"), in a suit's symbol ("A♠", "10♥"), and in the shoe's own
bytes: a frame the journal keeps as hex ("source": {"frame": "104153"}: TYPE 0x10, then "AS" in
ASCII; drivers/shoe/protocol.py) is withheld whole, and bytes spelled out in a message ("bytes
41 53") are masked. Masking whole documents, not chosen fields, is what keeps a new field from
leaking. What a game works out from a hand's cards beside them (`derived_keys`: a Jokers 22
hand's total) is masked with a hidden card there.

`last_card` is the card of the round it was dealt in: until the next round deals its first card
it is judged by that round's rules (a folded player's 7th-street card stays face down when the
next hand opens).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from controller.engine.base import CardDealt, RuleError
from controller.engine.cards import CardError, parse_card

if TYPE_CHECKING:
    from controller.table import Table, TableState

T = TypeVar("T")

MASK = "face-down card"
#: The roles that see every card, a live hand's face-down ones included.
SEES_EVERY_CARD = frozenset({"supervisor", "surveillance"})
# A card standing as a word of its own: as the table writes it (GAMES.md notation, the ten also
# as "10"), or with its suit's symbol as the screens write it ("6♥", "10♥").
_SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}
_CARD = re.compile(r"(?<![A-Za-z0-9])(?:(10|[2-9TJQKA])([CDHS" + "".join(_SUIT_SYMBOLS) + r"])|JK)(?![A-Za-z0-9])")
# The shoe's bytes in hex: a whole value of them (a journaled frame's TYPE and PAYLOAD), or two
# or more bytes spelled out with spaces in a message ("damaged frame ...; bytes: 7e 05 01 10 41 53").
_HEX_VALUE = re.compile(r"(?:[0-9A-Fa-f]{2}){2,}")
_HEX_BYTES = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{2}(?: [0-9A-Fa-f]{2})+(?![0-9A-Za-z])")


class Sight:
    """What one audience sees of `table`: everything, or what the dealer may see."""

    def __init__(self, table: Table | TableState, *, everything: bool) -> None:
        self.table = table
        self.everything = everything
        self._hidden: dict[int | None, frozenset[str]] = {}
        self._current: frozenset[str] | None = None

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
        """The hidden cards of the round being dealt (or the last one), and the table's last card
        when the round it was dealt in keeps it face down."""
        if self._current is None:
            self._current = self._current_of()
        return self._current

    def _current_of(self) -> frozenset[str]:
        hidden = self.hidden(self.table.round_no)
        last = self.table.last_card
        if self.everything or last is None or last in hidden:
            return hidden
        dealt_in = self._round_of_last_card()
        if dealt_in is not None and dealt_in != self.table.round_no and last in self.hidden(dealt_in):
            return hidden | {last}
        return hidden

    def _round_of_last_card(self) -> int | None:
        """The round the table's last card was dealt in: the latest round that took a card (the
        round being dealt, once it has one or holds one for a fault)."""
        table = self.table
        number = table.round_no
        if number is None:
            return None
        if table.held or any(f.card for f in table.faults.values()):
            return number
        for back in range(number, max(number - _LOOK_BACK, 0), -1):
            record = table.rounds.get(back)
            if record is None:  # gone from the journal: nothing to judge it by
                return None
            if record.cards:
                return back
        return None

    def mask(self, doc: T, hidden: frozenset[str]) -> T:
        """`doc` (JSON: dicts, lists, text) with every hidden card's text replaced by MASK."""
        if not hidden:
            return doc
        game = self.table.adapter
        return _mask(doc, hidden, game.shown_hand_keys, game.derived_keys)  # type: ignore[no-any-return]

    def snapshot(self, snap: T) -> T:
        """The table's state (GET /api/state, the feed's "state") as this audience sees it."""
        return self.mask(snap, self.current())

    def entry(self, message: T, round_no: int | None) -> T:
        """A journal entry (with its effects and the state after it, live) as this audience sees it."""
        return self.mask(message, self.hidden(round_no) | self.current())

    def text(self, words: str) -> str:
        """A sentence for the dealer or the players (a prompt, a line of the pole display)."""
        return self.mask(words, self.current())

    def drawn(self, cards: Sequence[str], state: Any, stopped: bool) -> list[str]:
        """Cards just pulled from the shoe, in order (the answer to a simulated draw), as this
        audience sees them. `state` and `stopped` are the round and whether play was stopped as
        they stood before the draw (the table may have taken some of the cards since). Each card
        that goes face down where the table deals it is hidden: where they go is worked out from
        `state`, card by card; once that cannot be told (play was stopped, so they are held, or
        the rules refuse a card), every later card is hidden in a hand with face-down cards."""
        if self.everything:
            return list(cards)
        game = self.table.adapter
        hidden = set(self.current())
        unknown = stopped
        for text in cards:
            awaiting = game.rules.awaiting(state)
            if unknown:
                # Held for a fault, or refused: where it goes is not known yet (as `_hidden_of`).
                if hidden or game.hidden_cards(state) or game.next_card_hidden(awaiting):
                    hidden.add(text)
                continue
            if awaiting.kind != "card":
                continue  # owed to nobody: a dead card, shown face up (GAMES.md section 4)
            if game.next_card_hidden(awaiting):
                hidden.add(text)
            try:
                state, _ = game.rules.apply(state, CardDealt(parse_card(text)))
            except (RuleError, CardError):
                unknown = True
                if hidden or game.hidden_cards(state):
                    hidden.add(text)
        return self.mask(list(cards), frozenset(hidden))


# Rounds looked back through for the one the last card was dealt in (a void round may take none).
_LOOK_BACK = 50


def _mask(doc: Any, hidden: frozenset[str], shown: frozenset[str], derived: frozenset[str]) -> Any:
    if isinstance(doc, str):
        return _mask_text(doc, hidden)
    if isinstance(doc, dict):
        out: dict[Any, Any] = {}
        beside = False  # a hidden card stands in this object itself (a value, or in a list of them)
        for key, value in doc.items():
            masked = value if key in shown else _mask(value, hidden, shown, derived)
            if masked != value and (isinstance(value, str) or _texts(value)):
                beside = True
            name = _mask_text(key, hidden) if isinstance(key, str) else key
            while name in out:  # two hidden cards as keys: both kept
                name = f"{name} "
            out[name] = masked
        if beside:
            out.update({key: MASK for key in derived if key in out})
        return out
    if isinstance(doc, list | tuple):
        return [_mask(value, hidden, shown, derived) for value in doc]
    return doc


def _texts(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def _mask_text(text: str, hidden: frozenset[str]) -> str:
    whole = text.strip()
    if whole.upper() in hidden:
        return MASK
    if _HEX_VALUE.fullmatch(whole) and _carries(whole, hidden):
        return MASK  # a shoe frame carrying a hidden card: withheld whole
    text = _HEX_BYTES.sub(lambda m: MASK if _carries(m.group(0), hidden) else m.group(0), text)
    return _CARD.sub(lambda m: MASK if _card_of(m) in hidden else m.group(0), text)


def _card_of(match: re.Match[str]) -> str:
    rank, suit = match.group(1), match.group(2)
    if rank is None:
        return match.group(0)  # the joker
    return ("T" if rank == "10" else rank) + _SUIT_SYMBOLS.get(suit, suit)


def _carries(hex_text: str, hidden: frozenset[str]) -> bool:
    """Whether bytes written in hex hold a hidden card's two ASCII bytes (as a CARD frame does)."""
    data = bytes.fromhex(hex_text.replace(" ", ""))
    return any(card.encode("ascii") in data for card in hidden if card.isascii())


def sight(table: Table | TableState, role: str | None) -> Sight:
    """What `role` sees: "supervisor" and "surveillance" everything; the dealer, the pole
    display and anyone else (None) what the dealer may see. The dealer's sight of a table is
    worked out once an entry, however many ask (the pole display, the live feed, the view beside
    it): a `Table` changes only by a journal entry, or by its journal's own fault."""
    everything = role in SEES_EVERY_CARD
    journal = getattr(table, "journal", None)
    if everything or journal is None:
        return Sight(table, everything=everything)
    key = (journal.last_seq, getattr(table, "journal_fault", None))
    kept = getattr(table, _KEPT, None)
    if kept is None or kept[0] != key:
        kept = (key, Sight(table, everything=False))
        # On the table itself, so it goes with the table (a stand-in table that takes no
        # attribute has its sight made each time).
        with contextlib.suppress(AttributeError):
            setattr(table, _KEPT, kept)
    return kept[1]


#: The table's attribute that keeps its dealer's sight, as of (its journal's last seq, its fault).
_KEPT = "_dealer_sight"


def mask_cards(doc: T, hidden: frozenset[str], game: Any) -> T:
    """`doc` with every card in `hidden` masked, as `Sight.mask` does, for a caller that holds the
    hidden set the table published (controller/api/gate.py) rather than the table."""
    if not hidden:
        return doc
    return _mask(doc, hidden, game.shown_hand_keys, game.derived_keys)  # type: ignore[no-any-return]
