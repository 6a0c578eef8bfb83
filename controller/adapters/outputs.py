"""What the table shows on its devices: the base lamps and the payout pole display.

Each output turns journaled entries and the engine's effects into device commands, and can
re-drive its device from the table's state alone (at start, after a crash). What a game's lamps
and display show is the game's adapter's (`GameAdapter.lamps`, `.lamp_moves`, `.display`); the
outputs map that onto the devices, and show faults above everything.
"""

from __future__ import annotations

import logging

from controller.engine.base import Effect
from controller.games.base import Idle, LampPicture, Lines, PayOne
from controller.journal.log import Entry
from controller.table import Table
from controller.table.visibility import sight
from drivers.display.device import PoleDisplay
from drivers.display.messages import Frame
from drivers.indicators.base_indicators import BaseIndicators, LampSnapshot
from drivers.pins import lamp_name

log = logging.getLogger(__name__)


class LampOutput:
    """The base lamps: the game's picture (steady where a wager stands, blinking where play is),
    its gestures as the round moves (a scoring and an out pattern), and the status lamp for faults."""

    def __init__(self, lamps: BaseIndicators, seats: frozenset[int]) -> None:
        self.lamps = lamps
        self.seats = seats  # seats the pin map wires; others have no lamps to light
        self.wired = frozenset(lamps.lamps)  # the lamps by name ("seat3.first"), as the pin map names them

    def redrive(self, table: Table) -> None:
        self.lamps.set_from_state(self._snapshot(table))

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        moves = None if entry.kind in ("round-open", "button") else table.adapter.lamp_moves(effects)
        if moves is None:  # the whole picture again; outputs already showing it are not written again
            self.lamps.set_from_state(self._snapshot(table), force=False)
            return
        with self.lamps.together():  # the entry's lamp changes in one frame (one latch of the chain)
            for move in moves:
                if move.gesture == "clear":
                    self.lamps.clear()
                    continue
                lamp = self._lamp(move.seat, move.place)
                if lamp is None:
                    continue
                if move.gesture == "out":
                    self.lamps.out(lamp)
                elif move.gesture == "remove":
                    self.lamps.remove_wager(lamp)
                elif move.gesture == "show":
                    self.lamps.show_wager(lamp)
                elif move.gesture == "scored":
                    self.lamps.scored(lamp)
                elif move.gesture == "next":
                    self.lamps.next_card(lamp)
            self._settle_blink(table)
            if table.blocked:
                self.lamps.fault()
            elif self.lamps.faulted:
                self.lamps.clear_fault()

    def _settle_blink(self, table: Table) -> None:
        """Only the place the game says play is at may blink (a blind hand's card moves no
        stack, and a settled round awaits none)."""
        blinking = self.lamps.blinking
        if blinking is None:
            return
        # The picture's blinking place alone: the rest of the game's picture is not asked for.
        picked = table.adapter.lamp_next(table, self.seats)
        if blinking == (self._lamp(*picked) if picked is not None else None):
            return
        if self.lamps.has_wager(blinking):
            self.lamps.show_wager(blinking)
        else:
            self.lamps.remove_wager(blinking)

    def _snapshot(self, table: Table) -> LampSnapshot:
        picture: LampPicture = table.adapter.lamps(table, self.seats)
        wagers = frozenset(filter(None, (self._lamp(seat, place) for seat, place in picture.wagers)))
        nxt = self._lamp(*picture.next) if picture.next is not None else None
        return LampSnapshot(wagers, nxt, table.blocked)

    def _lamp(self, seat: int, place: str) -> str | None:
        """The lamp a game's (seat, place) lands on ("seat3.first"), or None: a seat without lamps."""
        name = lamp_name(seat, place)
        return name if seat in self.seats and name in self.wired else None


class DisplayOutput:
    """The payout pole display: faults first, then what the game says (what to pay, where the
    next card goes, who decides)."""

    def __init__(self, display: PoleDisplay, title: str) -> None:
        self.display = display
        self.title = title

    def redrive(self, table: Table) -> None:
        self._show(table)

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        # A card's frame is written even when it is the one shown (it refreshes a display that was
        # powered off and on); any other entry's only when it changes what the display shows.
        self._show(table, again=entry.kind == "card")

    def _show(self, table: Table, again: bool = True) -> None:
        seen = sight(table, None)  # the players read the pole display: no face-down card on it
        if table.faults:
            fault = table.faults[min(table.faults)]
            # The title first (what and where, in a few words), then the details page by page.
            self.display.show_fault(seen.text(f"{fault.title}. {fault.message}"), again=again)
            return
        shown = table.adapter.display(table)
        if isinstance(shown, PayOne):
            self.display.show_payout(shown.seat, shown.amount, again=again)
        elif isinstance(shown, Lines):
            self.display.show(Frame(seen.text(shown.upper), seen.text(shown.lower)), again=again)
        else:
            assert isinstance(shown, Idle)
            self.display.show_idle(self.title, again=again)
