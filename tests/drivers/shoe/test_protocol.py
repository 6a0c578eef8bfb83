"""Golden bytes: the worked examples of hardware/shoe-protocol.md, decoded and encoded.

The CRC is checked against a bitwise implementation written here from the CRC catalogue's
definition of CRC-16/CCITT-FALSE and its published check value, not against the codec itself.
"""

from __future__ import annotations

import pytest

from controller.engine.cards import JOKER, parse_card
from drivers.shoe.protocol import (
    Ack,
    CardMessage,
    DecodeError,
    DecodeErrorKind,
    Decoder,
    EventKind,
    EventMessage,
    Frame,
    Heartbeat,
    Hello,
    HelloRequest,
    LinkState,
    MisreadMessage,
    MisreadReason,
    Nak,
    ProtocolError,
    Verdict,
    classify,
    crc16_ccitt,
    encode_frame,
    encode_message,
    next_seq,
    parse_host_message,
    parse_shoe_message,
)


def reference_crc(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit: poly 0x1021, init 0xFFFF, no reflection, no final XOR."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def wire(text: str) -> bytes:
    return bytes.fromhex(text)


# The examples exactly as hardware/shoe-protocol.md prints them.
GOLDEN = [
    ("7E 02 05 10 41 53 FE C2 7E", CardMessage(5, parse_card("AS"))),
    ("7E 01 00 81 05 8A 78 7E", Ack(5)),
    ("7E 02 7D 5E 10 54 44 3C F8 7E", CardMessage(126, parse_card("TD"))),
    ("7E 02 08 10 4A 4B 88 87 7E", CardMessage(8, JOKER)),
    ("7E 00 00 02 EC DE 7E", Heartbeat()),
    ("7E 00 00 83 6D 77 7E", HelloRequest()),
    ("7E 01 06 11 01 60 B7 7E", MisreadMessage(6, MisreadReason.UNREADABLE)),
    ("7E 01 07 12 01 02 D4 7E", EventMessage(7, EventKind.CUT_CARD)),
    ("7E 01 00 82 04 CF 0A 7E", Nak(4)),
    (
        "7E 12 00 01 01 1A CC F6 5B 06 53 48 4F 45 2D 37 05 31 2E 32 2E 30 5E 53 7E",
        Hello(0x1ACCF65B, "SHOE-7", "1.2.0"),
    ),
]


def test_crc_matches_the_published_check_value_for_123456789() -> None:
    assert reference_crc(b"123456789") == 0x29B1
    assert crc16_ccitt(b"123456789") == 0x29B1


@pytest.mark.parametrize(("hex_", "message"), GOLDEN)
def test_golden_frames_from_the_protocol_document_encode_byte_for_byte(
    hex_: str, message: object
) -> None:
    assert encode_message(message) == wire(hex_)  # type: ignore[arg-type]


@pytest.mark.parametrize(("hex_", "message"), GOLDEN)
def test_golden_frames_decode_to_the_documented_message(hex_: str, message: object) -> None:
    (frame,) = Decoder().feed(wire(hex_))
    assert isinstance(frame, Frame)
    parse = parse_host_message if frame.type >= 0x80 else parse_shoe_message
    assert parse(frame) == message


@pytest.mark.parametrize(("hex_", "message"), GOLDEN)
def test_golden_crcs_agree_with_the_reference_crc(hex_: str, message: object) -> None:
    body = wire(hex_)[1:-1].replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")
    assert int.from_bytes(body[-2:], "big") == reference_crc(body[:-2])


def test_the_worked_card_example_is_ace_of_spades_sequence_5() -> None:
    (frame,) = Decoder().feed(wire("7E 02 05 10 41 53 FE C2 7E"))
    assert frame == Frame(seq=5, type=0x10, payload=b"AS")


def test_a_frame_split_across_many_reads_decodes_once_complete() -> None:
    decoder = Decoder()
    data = wire("7E 02 7D 5E 10 54 44 3C F8 7E")
    results = [decoder.feed(data[i : i + 1]) for i in range(len(data))]
    assert results[:-1] == [[]] * (len(data) - 1)
    assert results[-1] == [Frame(126, 0x10, b"TD")]


def test_bytes_before_the_first_flag_after_opening_are_dropped_without_a_word() -> None:
    out = Decoder().feed(b"\x01\x02\x03" + wire("7E 02 05 10 41 53 FE C2 7E"))
    assert out == [Frame(5, 0x10, b"AS")]


def test_garbage_between_frames_is_one_error_then_the_frame() -> None:
    decoder = Decoder()
    decoder.feed(wire("7E 00 00 02 EC DE 7E"))
    out = decoder.feed(b"\x01\x02\x03" + wire("7E 02 05 10 41 53 FE C2 7E"))
    assert isinstance(out[0], DecodeError)
    assert out[1:] == [Frame(5, 0x10, b"AS")]


@pytest.mark.parametrize(
    ("hex_", "kind"),
    [
        ("7E 02 05 10 41 53 FE C3 7E", DecodeErrorKind.BAD_CRC),
        ("7E 02 05 10 41 FE C2 7E", DecodeErrorKind.LENGTH_MISMATCH),
        ("7E 02 05 7E", DecodeErrorKind.TOO_SHORT),
        ("7E 02 05 10 7D 41 53 FE C2 7E", DecodeErrorKind.BAD_ESCAPE),
    ],
)
def test_a_damaged_frame_is_reported_with_what_is_wrong(hex_: str, kind: DecodeErrorKind) -> None:
    (error,) = Decoder().feed(wire(hex_))
    assert isinstance(error, DecodeError)
    assert error.kind is kind
    assert kind.value in error.message


def test_a_run_without_flags_is_dropped_once_and_the_next_frame_still_decodes() -> None:
    decoder = Decoder(hunting=False)
    out = decoder.feed(b"\x55" * 1000)
    assert [e.kind for e in out if isinstance(e, DecodeError)] == [DecodeErrorKind.OVERLONG]
    assert decoder.feed(b"\x55" * 1000 + wire("7E 02 05 10 41 53 FE C2 7E")) == [
        Frame(5, 0x10, b"AS")
    ]


@pytest.mark.parametrize("code", [b"as", b"10", b"1S", b"AX", b"jk", b"\x00\x00", b"\xff\xfe"])
def test_an_intact_card_frame_naming_no_card_is_a_misread_not_a_card(code: bytes) -> None:
    (frame,) = Decoder().feed(encode_frame(3, 0x10, code))
    assert isinstance(frame, Frame)
    message = parse_shoe_message(frame)
    assert message == MisreadMessage(3, MisreadReason.NOT_A_CARD, f"card code {code.hex(' ')}")


@pytest.mark.parametrize(
    ("seq", "type_", "payload", "words"),
    [
        (0, 0x10, b"AS", "needs a sequence number"),
        (4, 0x02, b"", "has sequence number 0"),
        (4, 0x12, b"\x09", "unknown shoe event code 0x09"),
        (0, 0x44, b"", "unknown type 0x44"),
        (0, 0x01, b"\x02\x00\x00\x00\x01\x00\x00", "protocol version 2"),
        (0, 0x01, b"\x01\x00\x00\x00\x01\x05AB", "ends inside the shoe id"),
    ],
)
def test_an_intact_frame_that_breaks_the_protocol_is_refused_with_the_reason(
    seq: int, type_: int, payload: bytes, words: str
) -> None:
    with pytest.raises(ProtocolError, match=words):
        parse_shoe_message(Frame(seq, type_, payload))


def test_sequence_numbers_run_1_to_255_and_skip_0() -> None:
    assert [next_seq(s) for s in (0, 1, 254, 255)] == [1, 2, 255, 1]


def test_same_session_and_seq_as_last_delivered_is_a_duplicate() -> None:
    last = LinkState(session=7, seq=9)
    assert classify(last, 7, 9) is Verdict.DUPLICATE
    assert classify(last, 7, 10) is Verdict.NEW
    assert classify(last, 8, 1) is Verdict.NEW  # the shoe rebooted: a new session from 1
    assert classify(last, 8, 9) is Verdict.GAP  # ... and 1 to 8 of it went to someone else
    assert classify(last, 7, 12) is Verdict.GAP
    assert classify(last, 7, 8) is Verdict.STALE
    assert classify(last, 7, 9 + 127) is Verdict.GAP
    assert classify(last, 7, 9 + 128) is Verdict.STALE
    assert classify(LinkState(7, 255), 7, 1) is Verdict.NEW
    assert classify(None, 7, 1) is Verdict.NEW
    assert classify(None, 7, 9) is Verdict.GAP


def test_link_state_goes_to_the_journal_and_back_with_its_frame_content() -> None:
    state = LinkState(0x1ACCF65B, 13, b"\x104H")
    assert state.to_record() == {"session": 0x1ACCF65B, "seq": 13, "frame": "103448"}
    assert LinkState.from_record(state.to_record()) == state
    assert LinkState.from_record({"session": 7, "seq": 9}) == LinkState(7, 9, None)


@pytest.mark.parametrize(
    ("record", "words"),
    [
        ({"session": 7, "seq": 0}, "seq is 1-255"),
        ({"session": -1, "seq": 3}, "session is a 32-bit number"),
        ({"session": 7, "seq": 3, "frame": "zz"}, "frame is hex text"),
    ],
)
def test_a_damaged_link_record_is_refused_naming_the_field(record: dict[str, object], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        LinkState.from_record(record)


def test_a_card_frame_names_a_card_exactly_when_its_two_bytes_are_a_cards_canonical_code() -> None:
    """Every two-byte CARD payload: the card whose notation the bytes spell in canonical form (a
    look-up on every card the shoe sends), anything else a misread naming the bytes."""
    from controller.engine.cards import STANDARD_DECK

    codes = {str(card).encode("ascii"): card for card in (*STANDARD_DECK, JOKER)}
    for first in range(256):
        for second in range(256):
            payload = bytes((first, second))
            message = parse_shoe_message(Frame(seq=9, type=0x10, payload=payload))
            if payload in codes:
                assert message == CardMessage(9, codes[payload]), payload
            else:
                assert message == MisreadMessage(
                    9, MisreadReason.NOT_A_CARD, f"card code {payload.hex(' ')}"
                ), payload
