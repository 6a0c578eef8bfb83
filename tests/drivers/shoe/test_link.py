"""The host's protocol logic on a fake clock: hello, ACK/NAK, silence, gaps, restarts."""

from __future__ import annotations

from controller.engine.cards import parse_card
from drivers.shoe.events import (
    CardRead,
    Connected,
    DamagedFrame,
    FaultCleared,
    FaultKind,
    Misread,
    RefusedMessage,
    RepeatedFrame,
    ShoeEvent,
    ShoeFault,
)
from drivers.shoe.link import Delivery, HostLink, Output
from drivers.shoe.protocol import (
    Ack,
    CardMessage,
    EventKind,
    EventMessage,
    Hello,
    HelloRequest,
    LinkState,
    MisreadMessage,
    MisreadReason,
    Nak,
    encode_frame,
    encode_message,
)

SESSION = 0x1ACCF65B
HELLO = encode_message(Hello(SESSION, "SHOE-7", "1.2.0"))


def drive(link: HostLink, data: bytes, now: float = 0.0) -> list[Output]:
    """Everything the link puts out for `data`, accepting deliveries as the reader does."""
    out: list[Output] = []
    for item in link.receive(data, now):
        out.append(item)
        if isinstance(item, Delivery):
            out.append(link.accept(item))
    return out


def card(seq: int, text: str) -> bytes:
    return encode_message(CardMessage(seq, parse_card(text)))


def hello_link(**options: object) -> HostLink:
    link = HostLink("/dev/shoe", **options)  # type: ignore[arg-type]
    link.opened(0.0)
    drive(link, HELLO)
    return link


def test_opening_the_port_asks_the_shoe_for_hello() -> None:
    assert HostLink("/dev/shoe").opened(0.0) == [encode_message(HelloRequest())]


def test_hello_reports_the_shoe_id_firmware_and_session() -> None:
    link = HostLink("/dev/shoe")
    link.opened(0.0)
    (event,) = drive(link, HELLO)
    assert event == Connected("/dev/shoe", "SHOE-7", "1.2.0", SESSION, reconnected=False)
    assert "SHOE-7" in event.message and "1.2.0" in event.message


def test_a_card_is_delivered_then_acknowledged_in_that_order() -> None:
    out = drive(hello_link(resume=LinkState(SESSION, 4)), card(5, "AS"))
    assert out == [
        Delivery(CardRead(parse_card("AS"), SESSION, 5, b"\x10AS")),
        encode_message(Ack(5)),
    ]


def test_a_card_not_accepted_is_not_acknowledged_and_is_offered_again() -> None:
    link = hello_link()
    first = list(link.receive(card(1, "AS"), 0.0))  # handing it over failed: no accept
    assert first == [Delivery(CardRead(parse_card("AS"), SESSION, 1, b"\x10AS"))]
    assert drive(link, card(1, "AS"))[0] == first[0]


def test_a_repeated_card_is_acknowledged_again_but_not_delivered_twice() -> None:
    link = hello_link(resume=LinkState(SESSION, 4))
    drive(link, card(5, "AS"))
    repeated, ack = drive(link, card(5, "AS"))
    assert repeated == RepeatedFrame(5, "/dev/shoe")
    assert "did not use it twice" in repeated.message
    assert ack == encode_message(Ack(5))


def test_cards_before_hello_are_neither_delivered_nor_acknowledged() -> None:
    link = HostLink("/dev/shoe")
    link.opened(0.0)
    assert drive(link, card(1, "AS")) == []
    assert [type(o) for o in drive(link, HELLO + card(1, "AS"))] == [Connected, Delivery, bytes]


def test_a_damaged_frame_is_reported_and_answered_with_a_nak() -> None:
    link = hello_link()
    drive(link, card(1, "KD"))
    damaged, nak = drive(link, bytes.fromhex("7E 02 05 10 41 53 FE C3 7E"))
    assert isinstance(damaged, DamagedFrame)
    assert "bad checksum" in damaged.message and "/dev/shoe" in damaged.message
    assert nak == encode_message(Nak(1))


def test_misread_and_shoe_events_are_delivered_with_plain_words() -> None:
    link = hello_link()
    out = drive(link, encode_message(MisreadMessage(1, MisreadReason.TWO_CARDS)))
    misread = out[0].event  # type: ignore[union-attr]
    assert isinstance(misread, Misread)
    assert "two cards passed the reader together" in misread.message
    assert "Re-scan the card" in misread.message
    out = drive(link, encode_message(EventMessage(2, EventKind.CUT_CARD)))
    event = ShoeEvent(EventKind.CUT_CARD, SESSION, 2, b"\x12\x01")
    assert out[0] == Delivery(event)
    assert event.message == "The cut card has come out of the shoe."


def test_silence_beyond_the_timeout_is_a_fault_in_plain_words_and_clears_when_heard() -> None:
    link = hello_link(heartbeat_timeout=3.0)
    assert link.tick(2.9) == []
    fault = link.tick(3.1)[0]
    assert fault == ShoeFault(
        FaultKind.SILENT,
        "The card-reading shoe on /dev/shoe has been silent for 3.0 s: check its cable and power.",
    )
    assert not [o for o in link.tick(3.5) if isinstance(o, ShoeFault)]  # reported once
    out = drive(link, encode_message(Hello(SESSION, "SHOE-7", "1.2.0")), now=4.0)
    assert isinstance(out[0], FaultCleared) and out[0].kind is FaultKind.SILENT


def test_the_host_keeps_asking_for_hello_until_it_comes() -> None:
    link = HostLink("/dev/shoe", hello_interval=1.0)
    link.opened(0.0)
    assert link.tick(0.5) == []
    assert link.tick(1.0) == [encode_message(HelloRequest())]
    drive(link, HELLO, now=1.2)
    assert link.tick(2.5) == []


def test_the_link_says_when_its_next_deadline_falls_and_each_falls_then() -> None:
    # The reader waits for bytes until `due` and no longer (drivers/shoe/serial_backend.py): each
    # thing the link does on its clock must fall due exactly when `due` says.
    link = HostLink("/dev/shoe", heartbeat_timeout=3.0, hello_interval=1.0, inter_byte_timeout=0.5)
    assert link.due() is None  # closed: nothing to wait for but the port
    link.opened(0.0)
    assert link.due() == 1.0 and link.tick(0.99) == [] and link.tick(1.0) == [encode_message(HelloRequest())]
    drive(link, HELLO, now=1.2)
    assert link.due() == 1.2 + 3.0  # ready: the shoe's silence
    drive(link, card(1, "AS")[:3], now=2.0)  # a frame's bytes stop coming
    assert link.due() == 2.0 + 0.5
    assert link.tick(2.5) == [] and isinstance(link.tick(2.5 + 1e-6)[0], DamagedFrame)
    assert link.due() == 1.2 + 3.0  # no intact frame since the HELLO
    assert link.tick(4.2) == [] and isinstance(link.tick(4.2 + 1e-6)[0], ShoeFault)
    assert link.due() == 4.2 + 1e-6 + 1.0  # silent: it asks for HELLO again, a second after the last


def test_a_lost_port_is_reported_once_and_cleared_when_it_reopens() -> None:
    link = hello_link()
    (fault,) = link.lost("cable pulled")
    assert isinstance(fault, ShoeFault) and fault.kind is FaultKind.DISCONNECTED
    assert "cable pulled" in fault.message and "/dev/shoe" in fault.message
    assert link.lost("still gone") == []
    cleared, request = link.opened(5.0)
    assert isinstance(cleared, FaultCleared) and cleared.kind is FaultKind.DISCONNECTED
    assert request == encode_message(HelloRequest())
    assert drive(link, HELLO, 5.1)[0] == Connected(
        "/dev/shoe", "SHOE-7", "1.2.0", SESSION, reconnected=True
    )


def test_a_host_restarted_with_the_saved_state_skips_the_card_it_already_has() -> None:
    first = hello_link()
    drive(first, card(1, "AS"))
    second = hello_link(resume=first.state)
    assert second.state == LinkState(SESSION, 1, b"\x10AS")
    assert drive(second, card(1, "AS")) == [RepeatedFrame(1, "/dev/shoe"), encode_message(Ack(1))]
    assert [type(o) for o in drive(second, card(2, "KD"))] == [Delivery, bytes]


def test_a_rebooted_shoe_starting_again_at_seq_1_is_not_a_duplicate() -> None:
    link = hello_link(resume=LinkState(SESSION, 1))
    drive(link, encode_message(Hello(SESSION + 1, "SHOE-7", "1.2.0")))
    assert isinstance(drive(link, card(1, "QH"))[0], Delivery)


def test_a_skipped_sequence_number_delivers_the_card_and_raises_a_gap_fault() -> None:
    link = hello_link(resume=LinkState(SESSION, 3))
    gap, delivery, _ack = drive(link, card(6, "9C"))
    assert isinstance(gap, ShoeFault) and gap.kind is FaultKind.SEQUENCE_GAP
    assert "frames 4 to 5" in gap.message and "a card may be missing" in gap.message
    assert delivery == Delivery(CardRead(parse_card("9C"), SESSION, 6, b"\x109C"))


def test_an_unknown_event_code_is_acknowledged_and_raised_as_a_protocol_fault() -> None:
    link = hello_link()
    (delivery, ack) = drive(link, encode_frame(1, 0x12, b"\x44"))
    assert isinstance(delivery, Delivery) and isinstance(delivery.event, RefusedMessage)
    assert "unknown shoe event code 0x44" in delivery.event.message
    assert ack == encode_message(Ack(1))
    assert link.state == LinkState(SESSION, 1, b"\x12\x44")  # journaled like a card
    # Its retransmission is a plain duplicate: acknowledged, not raised again.
    assert drive(link, encode_frame(1, 0x12, b"\x44")) == [
        RepeatedFrame(1, "/dev/shoe"), encode_message(Ack(1))
    ]
