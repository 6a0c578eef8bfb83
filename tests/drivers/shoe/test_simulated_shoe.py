"""Hardware-in-the-loop without hardware: the real reader on a real pty against the simulated shoe.

Each fault on the simulated shoe's menu must give the table a clear message and never a wrong
card; pulling the line and plugging it back must lose and duplicate nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from controller.engine.cards import ShoeComposition, parse_cards
from drivers.shoe.events import (
    CardRead,
    Connected,
    DamagedFrame,
    DriverEvent,
    FaultCleared,
    FaultKind,
    Misread,
    RepeatedFrame,
    ShoeEvent,
    ShoeFault,
)
from drivers.shoe.protocol import EventKind
from drivers.shoe.serial_backend import ShoeConfigError, ShoeReader
from drivers.shoe.simulated import SIM_FIRMWARE, SimulatedShoe

from .conftest import WAIT

MakeShoe = Callable[..., SimulatedShoe]
MakeReader = Callable[..., ShoeReader]


def faults(log: Any, kind: FaultKind) -> list[ShoeFault]:
    return [f for f in log.of(ShoeFault) if f.kind is kind]


def connected(log: Any, n: int = 1) -> None:
    log.wait_for(lambda ev: sum(isinstance(e, Connected) for e in ev) >= n)


def test_stacked_cards_arrive_in_order_exactly_once_from_a_shoe_that_says_simulated(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["AS", "KD", "JK", "TH"]))
    make_reader()
    connected(log)
    assert shoe.draw(4) == parse_cards(["AS", "KD", "JK", "TH"])
    assert log.wait_cards(4) == ["AS", "KD", "JK", "TH"]
    assert shoe.wait_acknowledged(WAIT)
    (hello,) = log.of(Connected)
    assert hello.firmware.startswith("SIMULATED") and "SIMULATED" in hello.message
    assert log.cards() == ["AS", "KD", "JK", "TH"]


def test_a_seeded_shoe_deals_the_same_full_shuffle_every_time() -> None:
    composition = ShoeComposition(decks=2, jokers_per_deck=1)
    first = SimulatedShoe(seed=11, composition=composition)
    second = SimulatedShoe(seed=11, composition=composition)
    other = SimulatedShoe(seed=12, composition=composition)
    try:
        dealt = first.draw(200)
        assert dealt == second.draw(200)
        assert dealt != other.draw(200)
        assert sorted(dealt) == sorted(composition.cards())  # every card of the shoe, once
    finally:
        for shoe in (first, second, other):
            shoe.stop()


def test_cut_card_shoe_empty_and_confirm_button_reach_the_table_as_events(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["2C", "3D", "4H"]), cut_card=2)
    make_reader()
    shoe.draw(3)
    shoe.press_confirm()
    log.wait_for(lambda ev: sum(isinstance(e, ShoeEvent) for e in ev) >= 3)
    sequenced = [e for e in log.events if isinstance(e, CardRead | ShoeEvent)]
    assert [str(e.card) if isinstance(e, CardRead) else e.kind for e in sequenced] == [
        "2C", "3D", EventKind.CUT_CARD, "4H", EventKind.SHOE_EMPTY, EventKind.CONFIRM_BUTTON,
    ]


def test_fault_silent_raises_a_silence_fault_and_the_held_card_arrives_after(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["9S", "8S"]))
    make_reader(heartbeat_timeout=0.3)
    connected(log)
    shoe.fault("silent")
    shoe.draw(1)
    log.wait_for(lambda ev: any(isinstance(e, ShoeFault) for e in ev))
    (fault,) = faults(log, FaultKind.SILENT)
    assert "has been silent for 0.3 s: check its cable and power" in fault.message
    assert log.cards() == []
    shoe.clear()
    assert log.wait_cards(1) == ["9S"]
    assert any(isinstance(e, FaultCleared) and e.kind is FaultKind.SILENT for e in log.events)


def test_fault_garbage_is_reported_as_damaged_frames_and_gives_no_card(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["5C", "6C"]))
    make_reader()
    connected(log)
    for _ in range(5):
        shoe.fault("garbage")
    log.wait_for(lambda ev: len([e for e in ev if isinstance(e, DamagedFrame)]) >= 5)
    assert "damaged frame" in log.of(DamagedFrame)[0].message
    shoe.draw(2)
    assert log.wait_cards(2) == ["5C", "6C"]
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["5C", "6C"]


def test_fault_bad_crc_is_refused_with_a_nak_and_the_card_arrives_once_the_line_is_clean(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["QC"]))
    make_reader()
    connected(log)
    shoe.fault("bad-crc")
    shoe.draw(1)
    log.wait_for(lambda ev: any(isinstance(e, DamagedFrame) for e in ev))
    assert "bad checksum" in log.of(DamagedFrame)[0].message
    assert shoe.heard("got NAK", WAIT)
    assert log.cards() == []
    shoe.clear()
    assert log.wait_cards(1) == ["QC"]
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["QC"]


def test_fault_duplicate_is_acknowledged_again_and_never_becomes_a_second_card(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["7H", "7D"]))
    make_reader()
    shoe.draw(1)
    log.wait_cards(1)
    assert shoe.wait_acknowledged(WAIT)
    shoe.fault("duplicate")
    log.wait_for(lambda ev: any(isinstance(e, RepeatedFrame) for e in ev))
    assert "did not use it twice" in log.of(RepeatedFrame)[0].message
    shoe.draw(1)
    assert log.wait_cards(2) == ["7H", "7D"]
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["7H", "7D"]
    assert len([r for r in shoe.history if r.what.startswith("got ACK 1")]) >= 2


def test_fault_slow_raises_silence_but_the_trickled_card_is_read_right(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["AD"]), slow_seconds=0.8)
    make_reader(heartbeat_timeout=0.3)
    connected(log)
    shoe.fault("slow")
    shoe.draw(1)
    assert log.wait_cards(1) == ["AD"]
    assert faults(log, FaultKind.SILENT), "a frame slower than the timeout must raise silence"
    shoe.clear()
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["AD"]


def test_fault_misread_asks_the_dealer_to_rescan_and_gives_no_card(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["KS", "KH"]))
    make_reader()
    shoe.fault("misread")
    shoe.draw(2)
    assert log.wait_cards(1) == ["KH"]
    (misread,) = log.of(Misread)
    assert "could not read the card" in misread.message and "Re-scan" in misread.message
    order = [type(e) for e in log.events if isinstance(e, Misread | CardRead)]
    assert order == [Misread, CardRead]


def test_fault_drop_then_restore_reconnects_with_no_card_lost_or_duplicated(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["2S", "3S", "4S"]))
    make_reader()
    shoe.draw(1)
    log.wait_cards(1)
    assert shoe.wait_acknowledged(WAIT)
    shoe.fault("drop")  # pty closed, symlink removed, under the reader
    log.wait_for(lambda ev: any(isinstance(e, ShoeFault) for e in ev))
    (fault,) = faults(log, FaultKind.DISCONNECTED)
    assert "is disconnected" in fault.message and "keeps trying to reconnect" in fault.message
    shoe.draw(1)  # read by the shoe while the line is down
    shoe.fault("restore")  # a new pty, the symlink re-pointed to it
    connected(log, 2)
    shoe.draw(1)
    assert log.wait_cards(3) == ["2S", "3S", "4S"]
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["2S", "3S", "4S"]
    assert log.of(Connected)[-1].reconnected
    assert any(isinstance(e, FaultCleared) and e.kind is FaultKind.DISCONNECTED for e in log.events)


def test_a_reader_started_before_the_shoe_exists_connects_when_it_appears(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    make_reader()
    log.wait_for(lambda ev: any(isinstance(e, ShoeFault) for e in ev))
    assert "cannot open it" in faults(log, FaultKind.DISCONNECTED)[0].message
    shoe = make_shoe(parse_cards(["TC"]))
    shoe.draw(1)
    assert log.wait_cards(1) == ["TC"]


def test_a_card_read_while_the_host_is_down_arrives_once_at_the_next_host(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["JC", "JD", "JH"]))
    first = make_reader()
    shoe.draw(1)
    log.wait_cards(1)
    assert shoe.wait_acknowledged(WAIT)
    saved = first.link_state  # what the journal holds
    first.stop()
    heard = len(shoe.history)
    shoe.draw(1)  # nobody is listening
    # The shoe sends it and, unanswered, sends it again into the void.
    deadline = time.monotonic() + WAIT
    while not any("on timeout" in r.what for r in shoe.history[heard:]):
        assert time.monotonic() < deadline, "the shoe never resent the unacknowledged card"
        time.sleep(0.01)
    assert shoe.unacknowledged == 1
    make_reader(resume=saved)
    shoe.fault("duplicate")  # an old ACKed frame again, now to the new host
    shoe.draw(1)
    assert log.wait_cards(3) == ["JC", "JD", "JH"]
    assert shoe.wait_acknowledged(WAIT)
    assert log.cards() == ["JC", "JD", "JH"]


def test_a_card_whose_handover_fails_is_not_acknowledged_and_comes_again(
    make_shoe: MakeShoe, make_reader: MakeReader, log: Any
) -> None:
    shoe = make_shoe(parse_cards(["4D"]))
    attempts: list[DriverEvent] = []

    def journal_down_once(event: DriverEvent) -> None:
        if isinstance(event, CardRead):
            attempts.append(event)
            if len(attempts) == 1:
                raise OSError("journal disk busy")  # the table could not record it
        log(event)

    make_reader(on_event=journal_down_once)
    shoe.draw(1)
    assert log.wait_cards(1) == ["4D"]
    assert shoe.wait_acknowledged(WAIT)
    assert len(attempts) == 2 and log.cards() == ["4D"]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"url": "nosuch://x"}, "is not a usable pyserial URL"),
        ({"url": ""}, "give a device path or pyserial URL"),
        ({"url": "/dev/null", "baudrate": 0}, "baudrate is a positive whole number"),
        ({"url": "/dev/null", "reconnect_delay": (2.0, 1.0)}, "reconnect delay"),
    ],
)
def test_bad_shoe_settings_are_refused_with_a_message_naming_them(
    options: dict[str, Any], words: str
) -> None:
    with pytest.raises(ShoeConfigError, match=words):
        ShoeReader(on_event=print, **options)


def test_simulated_firmware_says_simulated() -> None:
    assert SIM_FIRMWARE.startswith("SIMULATED")
