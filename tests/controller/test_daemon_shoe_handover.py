"""The daemon's shoe handover: a message the journal already has is not taken twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from controller.app.daemon import Daemon
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from drivers.shoe.events import CardRead, FaultKind, Misread, ShoeEvent, ShoeFault
from drivers.shoe.protocol import EventKind, MisreadReason


def test_a_card_offered_again_after_its_journal_commit_is_not_dealt_twice(tmp_path: Path) -> None:
    # The shoe's thread waits JOURNAL_WAIT_S for the loop; if the commit lands after it gave up,
    # the frame is not acknowledged and the shoe sends it again: the same session, SEQ and frame.
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    daemon = Daemon.__new__(Daemon)
    daemon.table = table
    daemon.metrics = None
    card = CardRead(parse_card("4H"), 0x1ACCF65B, 13, b"\x104H")
    asyncio.run(daemon._shoe_event(card))
    asyncio.run(daemon._shoe_event(card))
    asyncio.run(daemon._shoe_event(CardRead(parse_card("4H"), 0x1ACCF65B, 14, b"\x104H")))
    misread = Misread(MisreadReason.UNREADABLE, "", 0x1ACCF65B, 15, b"\x11\x01")
    asyncio.run(daemon._shoe_event(misread))
    asyncio.run(daemon._shoe_event(misread))
    entries = list(table.journal.entries())
    cards = [e for e in entries if e.kind == "card"]
    faults = [e for e in entries if e.kind == "fault"]
    assert [e.body["source"]["seq"] for e in cards] == [13, 14]
    assert [e.body["source"]["seq"] for e in faults] == [15]
    assert table.shoe_link == {"session": 0x1ACCF65B, "seq": 15, "frame": "1101"}


def test_each_protocol_fault_naming_a_different_card_is_journaled_once(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    daemon = Daemon.__new__(Daemon)
    daemon.table = table
    daemon.metrics = None
    four = ShoeFault(FaultKind.PROTOCOL, "... CARD frame (type 0x10) carrying 4H, SEQ 0 ...")
    five = ShoeFault(FaultKind.PROTOCOL, "... CARD frame (type 0x10) carrying 5S, SEQ 0 ...")
    for event in (four, four, five, four):  # the shoe resends each every 0.25 s
        asyncio.run(daemon._shoe_event(event))
    messages = [f.message for f in table.faults.values()]
    assert messages == [four.message, five.message]


def test_the_shoes_own_confirm_button_is_kept_where_a_restarted_reader_resumes(tmp_path: Path) -> None:
    # A confirm press from the shoe is a sequenced message like a card: after a restart the reader
    # must resume after it, or the shoe's next frame would look like a gap.
    path = tmp_path / "journal.sqlite3"
    table = Table(Journal(path), game="grand-slam", rules={}, simulated=True)
    daemon = Daemon.__new__(Daemon)
    daemon.table = table
    daemon.metrics = None
    asyncio.run(daemon._shoe_event(CardRead(parse_card("4H"), 0x1ACCF65B, 1, b"\x104H")))
    asyncio.run(daemon._shoe_event(ShoeEvent(EventKind.CONFIRM_BUTTON, 0x1ACCF65B, 2, b"\x12\x03")))
    press = [e for e in table.journal.entries() if e.kind == "button"]
    assert len(press) == 1 and press[0].body["by"] == "shoe" and press[0].body["source"]["seq"] == 2
    table.journal.close()
    again = Table(Journal(path), game="grand-slam", rules={}, simulated=True)
    assert again.shoe_link is not None and again.shoe_link["seq"] == 2
