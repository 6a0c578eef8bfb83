"""Property and fuzz tests: garbage, truncation, bit flips and duplicates never make a card.

The host side is driven through `HostLink`, the same object the serial reader uses, so these
properties hold for the real driver, not for a copy of its logic.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.cards import JOKER, STANDARD_DECK, Card
from drivers.shoe.events import CardRead
from drivers.shoe.link import Delivery, HostLink
from drivers.shoe.protocol import (
    CardMessage,
    DecodeError,
    Decoder,
    Frame,
    Hello,
    encode_message,
    parse_shoe_message,
)

ALL_CARDS = [*STANDARD_DECK, JOKER]
cards = st.sampled_from(ALL_CARDS)
seqs = st.integers(min_value=1, max_value=255)


def card_frame(seq: int, card: Card) -> bytes:
    return encode_message(CardMessage(seq, card))


def delivered_cards(link: HostLink, data: bytes, now: float = 0.0) -> list[CardRead]:
    """Feed bytes to a host link as the reader does; the cards it hands to the table."""
    out = []
    for item in link.receive(data, now):
        if isinstance(item, Delivery):
            link.accept(item)
            if isinstance(item.event, CardRead):
                out.append(item.event)
    return out


def connected_link(session: int = 0xC0FFEE) -> HostLink:
    link = HostLink("test")
    link.opened(0.0)
    list(link.receive(encode_message(Hello(session, "T", "t")), 0.0))
    return link


@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash_the_decoder_and_give_only_frames_or_errors(
    data: bytes,
) -> None:
    for item in Decoder().feed(data):
        assert isinstance(item, Frame | DecodeError)


@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_crash_the_host_link(data: bytes) -> None:
    link = connected_link()
    for item in link.receive(data, 0.0):
        if isinstance(item, Delivery):
            link.accept(item)


@given(st.lists(st.tuples(seqs, cards), max_size=8), st.data())
def test_how_bytes_are_split_across_reads_never_changes_what_is_decoded(
    frames: list[tuple[int, Card]], data: st.DataObject
) -> None:
    stream = b"".join(card_frame(s, c) for s, c in frames)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = Decoder()
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert [f for p in pieces for f in decoder.feed(p)] == Decoder().feed(stream)


@given(st.binary(max_size=200), seqs, cards, st.binary(max_size=200))
def test_a_good_frame_survives_any_garbage_around_it(
    before: bytes, seq: int, card: Card, after: bytes
) -> None:
    decoded = Decoder().feed(before + card_frame(seq, card) + after)
    frames = [i for i in decoded if isinstance(i, Frame)]
    assert parse_shoe_message(Frame(seq, 0x10, str(card).encode())) in [
        parse_shoe_message(f) for f in frames
    ]


@given(seqs, cards, st.data())
def test_a_truncated_frame_never_becomes_a_card(seq: int, card: Card, data: st.DataObject) -> None:
    link = connected_link()
    frame = card_frame(seq, card)
    # Keep the opening flag, lose at least one body byte, then the line carries on.
    kept = data.draw(st.integers(min_value=1, max_value=len(frame) - 2))
    assert delivered_cards(link, frame[:kept] + b"\x7e") == []


def test_no_single_bit_flip_in_any_card_frame_yields_a_card_other_than_the_one_sent() -> None:
    # Exhaustive over every card, a spread of sequence numbers (0x7D and 0x7E are stuffed), and
    # every bit of the frame including the flags.
    for card in ALL_CARDS:
        for seq in (1, 0x5D, 0x5E, 0x7D, 0x7E, 0xFF):
            frame = card_frame(seq, card)
            for bit in range(len(frame) * 8):
                flipped = bytearray(frame)
                flipped[bit // 8] ^= 1 << (bit % 8)
                for item in Decoder().feed(bytes(flipped) + b"\x7e"):
                    if isinstance(item, Frame):
                        assert item == Frame(seq, 0x10, str(card).encode()), (card, seq, bit)


@settings(max_examples=200)
@given(
    st.lists(cards, min_size=1, max_size=12),
    st.lists(st.sampled_from(["dup", "noise", "cut", "stale"]), max_size=30),
    st.data(),
)
def test_retransmissions_and_noise_deliver_each_card_exactly_once_in_order(
    dealt: list[Card], mishaps: list[str], data: st.DataObject
) -> None:
    """A shoe sends each card until acked; the line repeats, damages and mixes in old frames."""
    link = connected_link()
    got: list[Card] = []
    sent: list[bytes] = []
    for i, card in enumerate(dealt):
        frame = card_frame(i % 255 + 1, card)
        sent.append(frame)
        for mishap in data.draw(st.lists(st.sampled_from(mishaps or ["dup"]), max_size=4)):
            if mishap == "dup":
                got += [e.card for e in delivered_cards(link, frame)]
            elif mishap == "noise":
                got += [e.card for e in delivered_cards(link, data.draw(st.binary(max_size=20)))]
            elif mishap == "cut":
                got += [e.card for e in delivered_cards(link, frame[: len(frame) // 2])]
            elif mishap == "stale" and len(sent) > 2:
                # An old frame replayed: neither the last delivered nor the next.
                got += [e.card for e in delivered_cards(link, sent[-3])]
        got += [e.card for e in delivered_cards(link, b"\x7e" + frame)]  # finally gets through
        got += [e.card for e in delivered_cards(link, frame)]  # and the ACK is lost once more
    assert got == dealt


@given(st.lists(cards, min_size=1, max_size=6), st.integers(0, 5))
def test_a_restarted_host_given_the_saved_state_does_not_deliver_a_resent_card_again(
    dealt: list[Card], crash_after: int
) -> None:
    session = 0xABCD
    first = connected_link(session)
    crash_after = min(crash_after, len(dealt) - 1)
    got = []
    for i, card in enumerate(dealt[: crash_after + 1]):
        got += [e.card for e in delivered_cards(first, card_frame(i + 1, card))]
    # The first host dies before its last ACK reaches the shoe; the shoe resends that card.
    second = HostLink("test", resume=first.state)
    second.opened(1.0)
    list(second.receive(encode_message(Hello(session, "T", "t")), 1.0))
    for i, card in enumerate(dealt[crash_after:], start=crash_after):
        got += [e.card for e in delivered_cards(second, card_frame(i + 1, card), 1.0)]
    assert got == dealt
