"""The pole display is written when what it shows changes, and on every card: a burst of entries
that change nothing on it (refused logins journaled from the LAN, a camera's scenes) writes nothing
to a wire that takes about 20 frames a second at 9600 baud, so the port's buffer cannot fill and
hold the table's loop in a write before the next card. A write that failed leaves the display's
bytes unknown: the next entry writes its frame again."""

from __future__ import annotations

from pathlib import Path

import serial

from controller.adapters.outputs import DisplayOutput
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from drivers.display import Dialect, PoleDisplay

ROUND = {"seats": [{"seat": 3, "wagers": {"first": 10}}, {"seat": 5, "wagers": {"first": 10, "second": 10}}]}


class Wire:
    """A serial port that keeps what it was given, and fails its next write when told to."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.fail_next = False

    def write(self, data: bytes) -> int:
        if self.fail_next:
            self.fail_next = False
            raise serial.SerialTimeoutException("Write timeout")
        self.writes.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_entries_that_change_nothing_on_the_display_write_nothing_and_a_card_always_writes(tmp_path: Path) -> None:
    wire = Wire()
    display = PoleDisplay(wire, dialect=Dialect.CD5220)
    table = Table(
        Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True, outputs=[DisplayOutput(display, "SIM")]
    )
    table.open_round(ROUND, by="dealer")
    table.card(parse_card("7H"), {"via": "shoe"})
    shown = display.current
    assert shown is not None and "7H" in shown.lower
    before = len(wire.writes)
    for n in range(120):  # a burst of refused logins from the LAN, one at a time and gathered
        table.access("login", {"client": f"10.0.0.{n % 250}", "ok": False})
    table.accesses([("login", {"client": "10.0.0.9", "ok": False})] * 80)
    assert table.journal.last_seq == 202  # round, card, 200 logins: every one journaled ...
    assert wire.writes[before:] == []  # ... and the display, showing the same, not written again
    assert display.current == shown

    table.card(parse_card("2C"), {"via": "shoe"})  # a card writes its frame
    assert len(wire.writes) == before + 1 and display.current is not None and "2C" in display.current.lower
    after_card = display.current

    wire.fail_next = True  # the card's write fails: what the display shows is not known
    table.card(parse_card("9D"), {"via": "shoe"})
    assert len(wire.writes) == before + 1
    assert table.devices["DisplayOutput"]["ok"] is False
    assert display.current == after_card  # the last frame known whole
    table.access("login", {"client": "10.0.0.7", "ok": False})  # changes nothing, but the bytes are unknown
    assert len(wire.writes) == before + 2
    assert wire.writes[-1] == display.current.raw and "9D" in display.current.lower
    table.access("login", {"client": "10.0.0.7", "ok": False})
    assert len(wire.writes) == before + 2  # known again: not written


def test_a_paged_fault_keeps_its_page_through_entries_that_do_not_change_it(tmp_path: Path) -> None:
    wire = Wire()
    display = PoleDisplay(wire, dialect=Dialect.CD5220)
    output = DisplayOutput(display, "SIM")
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True, outputs=[output])
    table.open_round(ROUND, by="dealer")
    table.card(parse_card("JS"), {"via": "shoe"})
    table.raise_fault("shoe-silent", "The shoe stopped sending cards; check its cable and its power, then press confirm")
    assert table.faults and display.pages > 1
    assert display.next_page()  # the pager turns to the second page
    page = display.current
    writes = len(wire.writes)
    table.access("login", {"client": "10.0.0.7", "ok": False})
    assert len(wire.writes) == writes and display.current == page  # not back to the first page
