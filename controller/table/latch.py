"""The fault latch: the faults that stop play and the cards held while they stand.

Part of the table's state (`TableState.latch`), changed only by the reducer as it applies
entries: a fault is latched by the entry that raised it (its id is that entry's seq), the cards
that come out while any fault stands are held in the order they came, and a supervisor's clearing
entry takes the fault off (and, once none is left, lets the held cards be dealt). The journal's
own fault (the disk cannot be written) is never journaled while it lasts, so it is not here: the
`Table` shows it beside these. Fault codes and their words are controller/table/faults.py's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.engine.base import JSON
from controller.engine.cards import Card, ShoeComposition, parse_card
from controller.table.faults import CARD_FAULTS, JOURNAL_FAULT_ID, Fault


@dataclass
class FaultLatch:
    faults: dict[int, Fault] = field(default_factory=dict)  # fault id (the seq that raised it) -> fault
    held: list[tuple[int, Card]] = field(default_factory=list)  # (journal seq, card) waiting for a fault to clear

    @property
    def blocked(self) -> bool:
        return bool(self.faults)

    def latch(
        self, seq: int, at: str, round_no: int | None, code: str, message: str, card: str | None, shoe: ShoeComposition
    ) -> Fault:
        """Latch fault `code` raised by entry `seq`. A card fault about a card the shoe cannot
        hold at all cannot be confirmed (dealing it would only stop play again)."""
        held = parse_card(card) if card is not None and code in CARD_FAULTS else None
        unconfirmable = held is not None and shoe.count(held) == 0
        fault = Fault(seq, code, message, at, round_no, card, unconfirmable=unconfirmable)
        self.faults[seq] = fault
        return fault

    def acknowledge(self, fault_id: int, by: str) -> None:
        self.faults[fault_id].acknowledged_by = by

    def take(self, fault_id: int) -> Fault:
        """The fault a supervisor clears, off the latch (KeyError when it is not latched)."""
        return self.faults.pop(fault_id)

    def take_code(self, code: str) -> list[Fault]:
        """Every fault of kind `code` off the latch (a fault that ends by itself, such as a software
        check that passes after one that failed)."""
        taken = [f for f in self.faults.values() if f.code == code]
        for fault in taken:
            del self.faults[fault.id]
        return taken

    def hold(self, seq: int, card: Card) -> None:
        self.held.append((seq, card))

    def release(self) -> Iterator[tuple[int, Card]]:
        """The held cards, oldest first, as long as no fault stands (dealing one may latch another)."""
        while self.held and not self.faults:
            yield self.held.pop(0)

    def drop_all(self) -> None:
        """The round is voided: every fault and every held card goes with it."""
        self.held.clear()
        self.faults.clear()

    # -- the snapshot's parts ---------------------------------------------------------------------

    def faults_json(self) -> list[dict[str, JSON]]:
        return [f.to_json() for n, f in sorted(self.faults.items()) if n != JOURNAL_FAULT_ID]

    def held_json(self) -> list[list[Any]]:
        return [[seq, str(card)] for seq, card in self.held]

    @classmethod
    def from_json(cls, faults: list[Mapping[str, Any]], held: list[list[Any]]) -> FaultLatch:
        return cls(
            {int(f["id"]): Fault.from_json(dict(f)) for f in faults},
            [(int(seq), parse_card(card)) for seq, card in held],
        )
