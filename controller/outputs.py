"""What the table shows on its devices: the base lamps and the payout pole display.

Each output turns journaled entries and the engine's effects into device commands, and can
re-drive its device from the table's state alone (at start, after a crash). The lamps follow the
Grand Slam bases; a game with other spots brings its own mapping.
"""

from __future__ import annotations

import logging

from controller.engine.base import Effect, RoundVoided
from controller.engine.grand_slam import GrandSlamScored, NextCard, StackMoved
from controller.journal import Entry
from controller.table import Table
from drivers.display.device import PoleDisplay
from drivers.display.messages import Frame
from drivers.indicators.base_indicators import BaseIndicators, LampSnapshot
from drivers.pins import Base

log = logging.getLogger(__name__)

# The choices in 20 columns: "HIT STD DBL SPL SUR".
_SHORT = {"hit": "HIT", "stand": "STD", "double": "DBL", "split": "SPL", "surrender": "SUR", "decline": "DECL"}
_ORDINAL = {"first": "1ST BASE", "second": "2ND BASE", "third": "3RD BASE"}
_BASES = {"first": Base.FIRST, "second": Base.SECOND, "third": Base.THIRD, "home": Base.HOME}


class LampOutput:
    """The base lamps: steady where a wager stands, blinking where the next card goes,
    a scoring and an out pattern as stacks move, and the status lamp for faults."""

    def __init__(self, lamps: BaseIndicators, seats: frozenset[int]) -> None:
        self.lamps = lamps
        self.seats = seats  # seats the pin map wires; others have no lamps to light

    def redrive(self, table: Table) -> None:
        self.lamps.set_from_state(self._snapshot(table))

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if entry.kind in ("round-open", "button") or table.game_name != "grand-slam":
            # Games without bases show whose turn it is: every step is a whole picture.
            self.redrive(table)
            return
        for fx in effects:
            if isinstance(fx, StackMoved) and fx.seat in self.seats:
                if fx.to == "out":
                    self.lamps.out(fx.seat, _BASES[fx.from_base])
                else:
                    self.lamps.remove_wager(fx.seat, _BASES[fx.from_base])
                    if fx.to == "home":
                        self.lamps.scored(fx.seat)
                    else:
                        self.lamps.show_wager(fx.seat, _BASES[fx.to])
            elif isinstance(fx, GrandSlamScored) and fx.seat in self.seats:
                for base in (Base.FIRST, Base.SECOND, Base.THIRD):
                    self.lamps.remove_wager(fx.seat, base)
                self.lamps.scored(fx.seat)
            elif isinstance(fx, NextCard) and fx.seat in self.seats:
                self.lamps.next_card(fx.seat, _BASES[fx.base])
            elif isinstance(fx, RoundVoided):
                self.lamps.clear()
        self._settle_blink(table)
        if table.blocked:
            self.lamps.fault()
        elif self.lamps.snapshot().fault:
            self.lamps.clear_fault()

    def _settle_blink(self, table: Table) -> None:
        """Only the base the engine awaits a card on may blink (a blind hand's card moves no
        stack, and a settled round awaits none)."""
        shown = self.lamps.snapshot()
        wanted = self._snapshot(table).next_card
        if shown.next_card is None or shown.next_card == wanted:
            return
        seat, base = shown.next_card
        if shown.next_card in shown.wagers:
            self.lamps.show_wager(seat, base)
        else:
            self.lamps.remove_wager(seat, base)

    def _snapshot(self, table: Table) -> LampSnapshot:
        if table.game_name != "grand-slam":
            return self._turn_snapshot(table)
        state = table.state
        wagers: set[tuple[int, Base]] = set()
        record = table.rounds.get(table.round_no) if table.round_no is not None else None
        paid = record is not None and record.paid
        if getattr(state, "phase", None) == "dealing" or (state.phase == "settled" and not paid):
            for seat in state.seats:
                if seat.seat not in self.seats:
                    continue
                for position, stack in seat.stacks.items():
                    if stack and position != "out":
                        wagers.add((seat.seat, _BASES[position]))
        nxt = None
        awaiting = table.awaiting
        if awaiting.kind == "card" and awaiting.target.get("seat") in self.seats:
            nxt = (int(awaiting.target["seat"]), _BASES[str(awaiting.target["base"])])
        return LampSnapshot(frozenset(wagers), nxt, table.blocked)

    def _turn_snapshot(self, table: Table) -> LampSnapshot:
        """Games without bases (Jokers 22 spots, Baseball poker seats): the first lamp of every
        place still in play is steady; the one whose turn it is (a card or a decision) blinks."""
        state = table.state
        places: set[int] = set()
        if getattr(state, "phase", None) == "dealing":
            places |= {spot.spot for spot in getattr(state, "spots", ())}
            places |= {seat.seat for seat in getattr(state, "seats", ()) if not getattr(seat, "folded", False)}
        wagers = {(n, Base.FIRST) for n in places if n in self.seats}
        awaiting = table.awaiting
        where = awaiting.target if awaiting.kind == "card" else awaiting.who
        turn = where.get("spot", where.get("seat"))
        nxt = (int(turn), Base.FIRST) if isinstance(turn, int) and turn in self.seats else None
        return LampSnapshot(frozenset(wagers), nxt, table.blocked)


class DisplayOutput:
    """The payout pole display: faults first, then what to pay, else where the next card goes."""

    def __init__(self, display: PoleDisplay, title: str) -> None:
        self.display = display
        self.title = title

    def redrive(self, table: Table) -> None:
        self._show(table)

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        self._show(table)

    def _show(self, table: Table) -> None:
        if table.faults:
            fault = table.faults[min(table.faults)].to_json()
            # The title first (what and where, in a few words), then the details page by page.
            self.display.show_fault(f"{fault['title']}. {fault['message']}")
            return
        awaiting = table.awaiting
        last = f"LAST {table.last_card}" if table.last_card else ""
        if awaiting.kind == "card":
            target = awaiting.target
            if target.get("banker"):
                self.display.show(Frame("DEAL THE BANKER", last))
            elif "spot" in target:
                self.display.show(Frame(f"DEAL SPOT {target['spot']} HAND {target.get('hand', 1)}", last))
            else:
                where = _ORDINAL.get(str(target.get("base")), "")
                self.display.show(Frame(f"DEAL SEAT {target.get('seat')} {where}".strip(), last))
            return
        if awaiting.kind == "decision" and "for" in awaiting.who:  # poker: pay for a card or not
            who = awaiting.who
            self.display.show(Frame(f"SEAT {who['seat']} PAY {who.get('price', '')}?", f"FOR {who['for']}".upper()))
            return
        if awaiting.kind == "decision" and "seat" in awaiting.who:  # poker: who acts, what to call
            who = awaiting.who
            self.display.show(
                Frame(f"SEAT {who['seat']} TO CALL {who.get('to_call', 0)}", f"POT {who.get('pot', '')}".strip())
            )
            return
        if awaiting.kind == "decision":
            who = awaiting.who
            self.display.show(
                Frame(
                    f"SPOT {who.get('spot')} {str(who.get('player') or '').upper()}".strip(),
                    " ".join(_SHORT.get(a, a.upper()) for a in awaiting.allowed),
                )
            )
            return
        record = table.rounds.get(table.round_no) if table.round_no is not None else None
        if record is not None and record.status == "settled" and not record.paid:
            pays = [p for p in table.payouts() if p["pay"]]
            if len(pays) == 1 and "player" not in pays[0]:
                self.display.show_payout(pays[0]["seat"], pays[0]["pay"])
            elif len(pays) == 1:  # a player at a spot: the name tells the dealer whose chips
                first = pays[0]
                self.display.show(
                    Frame(f"PAY {first['player'].upper()} SPOT {first['spot']}", str(first["pay"]).rjust(20))
                )
            elif pays:
                first, rest = pays[0], pays[1:]
                then = " ".join(f"S{p['seat']} {p['pay']}" for p in rest)
                self.display.show(Frame(f"PAY SEAT {first['seat']}: {first['pay']}", f"THEN {then}"))
            if pays:
                return
            self.display.show(Frame("ROUND OVER", "NO PAYOUTS"))
            return
        if table.notice and awaiting.kind == "round":
            card = table.last_card or ""
            self.display.show(Frame(f"DEAD CARD {card}", "NO SEAT OWED A CARD"))
            return
        if record is not None and record.status == "void":
            self.display.show(Frame(f"ROUND {record.number} VOID", "WAGERS RETURNED"))
            return
        self.display.show_idle(self.title)
