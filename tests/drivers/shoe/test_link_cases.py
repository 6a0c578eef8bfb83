"""Golden bytes for every case of issue 15, played at the host's link on a fake clock.

Each frame is written out as it is on the wire; its CRC is checked against the bit-by-bit
reference CRC, so the bytes do not depend on the codec under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.engine.cards import parse_card
from controller.table import FAULTS
from drivers.shoe.events import (
    CardRead,
    Connected,
    DamagedFrame,
    FaultKind,
    Misread,
    RefusedMessage,
    RepeatedFrame,
    ShoeFault,
)
from drivers.shoe.link import Delivery, HostLink, Output, Phase, handling_table, transitions_table
from drivers.shoe.protocol import (
    Ack,
    DecodeErrorKind,
    LinkState,
    MisreadReason,
    Nak,
    encode_message,
)
from tests.drivers.shoe.test_protocol import reference_crc

SESSION = 0x1ACCF65B
URL = "/dev/shoe"
HELLO = "7E 12 00 01 01 1A CC F6 5B 06 53 48 4F 45 2D 37 05 31 2E 32 2E 30 5E 53 7E"
CARD_4H_13 = "7E 02 0D 10 34 48 2F F7 7E"
TYPE_13_SEQ_12 = "7E 00 0C 13 AB A3 7E"
HEARTBEAT_SEQ_14 = "7E 00 0E 02 CF D1 7E"
ACK_5_ECHOED = "7E 01 00 81 05 8A 78 7E"
ACK_TYPE_SEQ_9 = "7E 01 09 81 05 14 E9 7E"
CARD_2S_1 = "7E 02 01 10 32 53 69 39 7E"
CARD_3S_1 = "7E 02 01 10 33 53 5A 08 7E"
EVENT_09_SEQ_21 = "7E 01 15 12 09 AE DF 7E"
CARD_ONE_BYTE_5 = "7E 01 05 10 34 6C 20 7E"
CARD_THREE_BYTES_5 = "7E 03 05 10 34 48 58 BE FD 7E"
CARD_4H_SEQ_0 = "7E 02 00 10 34 48 16 71 7E"
MISREAD_EMPTY_5 = "7E 00 05 11 31 79 7E"
CARD_4H_10 = "7E 02 0A 10 34 48 7D 5E DA 7E"
ALL = [HELLO, CARD_4H_13, TYPE_13_SEQ_12, HEARTBEAT_SEQ_14, ACK_5_ECHOED, ACK_TYPE_SEQ_9,
       CARD_2S_1, CARD_3S_1, EVENT_09_SEQ_21, CARD_ONE_BYTE_5, CARD_THREE_BYTES_5,
       CARD_4H_SEQ_0, MISREAD_EMPTY_5, CARD_4H_10]


def wire(text: str) -> bytes:
    return bytes.fromhex(text)


def drive(link: HostLink, text: str | bytes, now: float = 0.0) -> list[Output]:
    out: list[Output] = []
    for item in link.receive(wire(text) if isinstance(text, str) else text, now):
        out.append(item)
        if isinstance(item, Delivery):
            out.append(link.accept(item))
    return out


def ready(resume: LinkState | None = None) -> HostLink:
    link = HostLink(URL, resume=resume)
    link.opened(0.0)
    assert isinstance(drive(link, HELLO)[0], Connected)
    return link


def acks(out: list[Output]) -> list[bytes]:
    return [o for o in out if isinstance(o, bytes)]


def faults(out: list[Output], kind: FaultKind | None = None) -> list[ShoeFault]:
    return [o for o in out if isinstance(o, ShoeFault) and (kind is None or o.kind is kind)]


def delivered(out: list[Output]) -> list[object]:
    return [o.event for o in out if isinstance(o, Delivery)]


@pytest.mark.parametrize("text", ALL)
def test_every_golden_frame_here_has_the_reference_crc(text: str) -> None:
    body = wire(text)[1:-1].replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")
    assert int.from_bytes(body[-2:], "big") == reference_crc(body[:-2])


@pytest.mark.parametrize("intruder", [TYPE_13_SEQ_12, HEARTBEAT_SEQ_14, ACK_TYPE_SEQ_9])
def test_a_frame_that_is_no_sequenced_message_never_moves_the_sequence(intruder: str) -> None:
    link = ready(resume=LinkState(SESSION, 12, b"\x10KD"))
    first = drive(link, CARD_4H_13)
    assert delivered(first) == [CardRead(parse_card("4H"), SESSION, 13, b"\x104H")]
    out = drive(link, intruder)
    (fault,) = faults(out, FaultKind.PROTOCOL)
    assert "cannot use" in fault.message and "not acknowledged" in fault.message
    assert acks(out) == [] and delivered(out) == []
    assert link.state == LinkState(SESSION, 13, b"\x104H")
    # The plain retransmission of 4H is still a retransmission: acknowledged, not dealt twice.
    again = drive(link, CARD_4H_13)
    assert again == [RepeatedFrame(13, URL), encode_message(Ack(13))]


def test_an_echoed_host_ack_is_named_as_a_host_frame_not_an_unknown_ack() -> None:
    (fault,) = faults(drive(ready(), ACK_5_ECHOED))
    assert "host-to-shoe ACK frame (type 0x81)" in fault.message
    assert "echoing" in fault.message and "unknown ACK" not in fault.message


def test_a_different_card_with_the_same_seq_is_a_misread_naming_both_cards() -> None:
    link = ready()
    assert delivered(drive(link, CARD_2S_1)) == [CardRead(parse_card("2S"), SESSION, 1, b"\x102S")]
    out = drive(link, CARD_3S_1)
    (misread,) = delivered(out)
    assert isinstance(misread, Misread) and misread.reason is MisreadReason.SEQ_REUSED
    assert "carrying 2S" in misread.message and "carrying 3S" in misread.message
    assert "enter it by hand" in misread.message
    assert not [e for e in delivered(out) if isinstance(e, CardRead)]
    assert acks(out) == [encode_message(Ack(1))]
    # Across a host restart the journaled content still tells the two apart.
    restarted = ready(resume=link.state)
    assert drive(restarted, CARD_3S_1) == [RepeatedFrame(1, URL), encode_message(Ack(1))]
    assert isinstance(delivered(drive(restarted, CARD_2S_1))[0], Misread)


def test_a_gap_is_reported_even_when_a_refused_event_reveals_it() -> None:
    link = ready(resume=LinkState(SESSION, 16, b"\x10KD"))
    out = drive(link, EVENT_09_SEQ_21)
    (gap,) = faults(out, FaultKind.SEQUENCE_GAP)
    assert "frames 17 to 20" in gap.message
    (refused,) = delivered(out)
    assert isinstance(refused, RefusedMessage) and "unknown shoe event code 0x09" in refused.message
    assert acks(out) == [encode_message(Ack(21))]
    assert link.state == LinkState(SESSION, 21, b"\x12\x09")


@pytest.mark.parametrize("length", [65, 100, 133])
def test_a_frame_longer_than_the_limit_is_damaged_even_with_a_good_crc(length: int) -> None:
    head = bytes((length, 0, 0x02)) + b"A" * length
    body = head + reference_crc(head).to_bytes(2, "big")
    stuffed = body.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")
    out = drive(ready(), b"\x7e" + stuffed + b"\x7e")
    (damaged,) = [o for o in out if isinstance(o, DamagedFrame)]
    assert DecodeErrorKind.LEN_OVER_LIMIT.value in damaged.message or "too long" in damaged.message
    assert acks(out) == [encode_message(Nak(0))]


def test_a_hello_with_a_shoe_id_over_24_characters_is_refused() -> None:
    link = HostLink(URL)
    link.opened(0.0)
    long_id = "S" * 40
    payload = b"\x01" + SESSION.to_bytes(4, "big") + bytes((40,)) + long_id.encode() + b"\x00"
    head = bytes((len(payload), 0, 0x01)) + payload
    out = drive(link, b"\x7e" + head + reference_crc(head).to_bytes(2, "big") + b"\x7e")
    (fault,) = faults(out, FaultKind.PROTOCOL)
    assert "40 characters; the limit is 24" in fault.message
    assert link.phase is Phase.AWAITING_HELLO
    assert drive(link, CARD_2S_1) == []  # no session: not taken, not acknowledged


@pytest.mark.parametrize("text", [CARD_ONE_BYTE_5, CARD_THREE_BYTES_5, MISREAD_EMPTY_5])
def test_a_card_in_a_wrong_length_frame_is_a_misread_the_dealer_can_enter_by_hand(text: str) -> None:
    out = drive(ready(resume=LinkState(SESSION, 4)), text)
    (misread,) = delivered(out)
    assert isinstance(misread, Misread) and misread.seq == 5
    assert "Re-scan the card or enter it by hand" in misread.message
    assert acks(out) == [encode_message(Ack(5))]
    assert "replace" in FAULTS["misread"][1]  # the supervisor's "enter the card by hand"


def test_a_card_without_a_seq_is_refused_by_name_and_not_acknowledged() -> None:
    out = drive(ready(), CARD_4H_SEQ_0)
    (fault,) = faults(out, FaultKind.PROTOCOL)
    assert "carrying 4H, SEQ 0" in fault.message and "enter it by hand" in fault.message
    assert acks(out) == [] and delivered(out) == []


def test_an_old_card_replayed_is_acknowledged_and_named_but_not_dealt() -> None:
    link = ready(resume=LinkState(SESSION, 12, b"\x10KD"))
    out = drive(link, CARD_4H_10)
    (fault,) = faults(out, FaultKind.PROTOCOL)
    assert "old frame" in fault.message and "carrying 4H, SEQ 10" in fault.message
    assert acks(out) == [encode_message(Ack(10))] and delivered(out) == []
    assert link.state == LinkState(SESSION, 12, b"\x10KD")


def test_the_first_seq_of_a_session_the_host_does_not_know_is_1_or_a_gap() -> None:
    out = drive(ready(), CARD_4H_13)
    (gap,) = faults(out, FaultKind.SEQUENCE_GAP)
    assert "frames 1 to 12" in gap.message
    assert delivered(out) == [CardRead(parse_card("4H"), SESSION, 13, b"\x104H")]


def test_bytes_before_the_first_flag_after_opening_are_dropped_without_a_nak() -> None:
    link = HostLink(URL)
    link.opened(0.0)
    out = drive(link, "10 34 48 2F F7 " + HELLO)
    assert [type(o) for o in out] == [Connected]


def test_a_frame_whose_bytes_stop_is_closed_by_the_inter_byte_timeout_and_nakked() -> None:
    link = ready()
    partial, rest = wire(CARD_2S_1)[:5], wire(CARD_2S_1)[5:]
    assert drive(link, partial, now=1.0) == []
    assert link.tick(1.4) == []
    damaged, nak = link.tick(1.6)
    assert isinstance(damaged, DamagedFrame) and "incomplete" in damaged.message
    assert nak == encode_message(Nak(0))
    assert drive(link, rest, now=1.7) == []  # the tail of that frame, up to its flag
    assert delivered(drive(link, CARD_2S_1, now=1.8))


def test_the_host_naks_at_most_once_per_50_ms() -> None:
    link = ready()
    bad = "7E 02 05 10 41 53 FE C3 7E"
    first, second, third = drive(link, bad, 1.0), drive(link, bad, 1.03), drive(link, bad, 1.06)
    assert [len(acks(o)) for o in (first, second, third)] == [1, 0, 1]
    assert all(any(isinstance(o, DamagedFrame) for o in out) for out in (first, second, third))


def test_silence_is_counted_from_the_last_intact_frame_not_the_last_byte() -> None:
    link = ready()
    drive(link, "7E 00 00 02 EC DE 7E", now=1.0)
    drive(link, "7E 02 05 10 41 53 FE C3 7E", now=3.5)  # damaged: not the shoe talking
    (silent,) = faults(link.tick(4.1), FaultKind.SILENT)
    assert "silent for 3.0 s" in silent.message


def test_the_protocol_document_prints_the_links_own_tables() -> None:
    document = (Path(__file__).resolve().parents[3] / "hardware" / "shoe-protocol.md").read_text()
    assert handling_table() in document
    assert transitions_table() in document
