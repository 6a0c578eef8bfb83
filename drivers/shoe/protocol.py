"""The shoe wire protocol as a pure codec: frames, messages, sequence rules. No I/O, no clock.

Every byte is documented in hardware/shoe-protocol.md; this module is that document in code.

A frame on the wire is ``7E <stuffed body> 7E`` where the body is
``LEN SEQ TYPE PAYLOAD[LEN] CRC_HI CRC_LO`` and the CRC is CRC-16/CCITT-FALSE
(poly 0x1021, init 0xFFFF, no reflection, no final XOR) over ``LEN SEQ TYPE PAYLOAD``.
Inside the flags, 0x7E and 0x7D are sent as ``7D 5E`` and ``7D 5D``, so a 0x7E on the line is
always a frame boundary and the decoder finds the next frame after any garbage.

    >>> frame = encode_message(CardMessage(seq=5, card=parse_card("AS")))
    >>> Decoder().feed(frame)
    [Frame(seq=5, type=16, payload=b'AS')]
"""

from __future__ import annotations

import binascii
import enum
from collections.abc import Mapping
from dataclasses import dataclass

from controller.engine.cards import JOKER, STANDARD_DECK, Card, CardError, parse_card

FLAG = 0x7E
ESCAPE = 0x7D
ESCAPE_XOR = 0x20
PROTOCOL_VERSION = 1
MAX_PAYLOAD = 64
#: LEN + SEQ + TYPE + CRC: the smallest body is an empty-payload frame.
MIN_BODY = 5
#: A body in which every byte had to be escaped; anything longer between flags is noise.
MAX_STUFFED_BODY = 2 * (MIN_BODY + MAX_PAYLOAD)
#: Sequence number of frames that are never acknowledged (HELLO, HEARTBEAT and host frames).
UNSEQUENCED = 0
#: SHOE_ID and FIRMWARE in HELLO are at most this many printable ASCII characters.
MAX_TEXT = 24


def crc16_ccitt(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of `data` (check value for b"123456789" is 0x29B1)."""
    # binascii.crc_hqx is exactly this CRC (poly 0x1021, MSB first) with the init passed in.
    return binascii.crc_hqx(data, 0xFFFF)


class MessageType(enum.IntEnum):
    """The TYPE byte. Shoe-to-host types are below 0x80, host-to-shoe types from 0x80."""

    HELLO = 0x01
    HEARTBEAT = 0x02
    CARD = 0x10
    MISREAD = 0x11
    EVENT = 0x12
    ACK = 0x81
    NAK = 0x82
    HELLO_REQUEST = 0x83


class MisreadReason(enum.IntEnum):
    """Why a card left the shoe without a reading (the MISREAD payload byte)."""

    UNREADABLE = 0x01
    TWO_CARDS = 0x02
    JAMMED = 0x03
    #: Not sent by a shoe: the host's name for two different frames with one sequence number.
    SEQ_REUSED = 0xFE
    #: Not sent by a shoe: the host's name for an intact CARD frame whose bytes name no card.
    NOT_A_CARD = 0xFF

    @property
    def words(self) -> str:
        return _MISREAD_WORDS[self]


_MISREAD_WORDS = {
    MisreadReason.UNREADABLE: "the shoe could not read the card",
    MisreadReason.TWO_CARDS: "two cards passed the reader together",
    MisreadReason.JAMMED: "the card jammed in the reader",
    MisreadReason.SEQ_REUSED: "the shoe gave one sequence number to two different frames",
    MisreadReason.NOT_A_CARD: "the shoe sent a card code that is not a card",
}


class EventKind(enum.IntEnum):
    """Things that happen at the shoe other than a card (the EVENT payload byte)."""

    CUT_CARD = 0x01
    SHOE_EMPTY = 0x02
    CONFIRM_BUTTON = 0x03

    @property
    def words(self) -> str:
        return _EVENT_WORDS[self]


_EVENT_WORDS = {
    EventKind.CUT_CARD: "the cut card has come out of the shoe",
    EventKind.SHOE_EMPTY: "the shoe is empty",
    EventKind.CONFIRM_BUTTON: "the dealer pressed the shoe's confirm button",
}


@dataclass(frozen=True, slots=True)
class Frame:
    """A frame that arrived intact: its length and CRC were right. The payload is not yet read."""

    seq: int
    type: int
    payload: bytes


class DecodeErrorKind(enum.Enum):
    TOO_SHORT = "too short"
    LENGTH_MISMATCH = "length does not match"
    BAD_CRC = "bad checksum"
    BAD_ESCAPE = "bad escape sequence"
    OVERLONG = "too long"
    #: LEN above MAX_PAYLOAD: no frame is that long, whatever its CRC says.
    LEN_OVER_LIMIT = "length over the limit"
    #: A frame that began but whose bytes stopped coming (the host's inter-byte timeout).
    INCOMPLETE = "incomplete"


@dataclass(frozen=True, slots=True)
class DecodeError:
    """Bytes between two flags that are not a frame. A value, not an exception: noise is normal."""

    kind: DecodeErrorKind
    detail: str
    raw: bytes

    @property
    def message(self) -> str:
        shown = self.raw[:16].hex(" ")
        more = " ..." if len(self.raw) > 16 else ""
        return f"damaged frame ({self.kind.value}: {self.detail}); bytes: {shown}{more}"


class ProtocolError(ValueError):
    """An intact frame whose content breaks the protocol (unknown type, bad payload)."""


# ---------------------------------------------------------------------------- frames


def _stuff(body: bytes) -> bytes:
    return body.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")


def encode_frame(seq: int, type_: int, payload: bytes = b"", *, crc_xor: int = 0) -> bytes:
    """The bytes of one frame, flags included.

    `crc_xor` spoils the CRC on purpose: only the simulated shoe's bad-CRC fault sets it.
    """
    if not 0 <= seq <= 0xFF or not 0 <= type_ <= 0xFF:
        raise ValueError(f"seq and type are single bytes, not {seq!r} and {type_!r}")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"a payload holds at most {MAX_PAYLOAD} bytes, not {len(payload)}")
    head = bytes((len(payload), seq, type_)) + payload
    crc = crc16_ccitt(head) ^ crc_xor
    return b"\x7e" + _stuff(head + crc.to_bytes(2, "big")) + b"\x7e"


def _unstuff(stuffed: bytes) -> bytes | None:
    """The body with escapes undone, or None if an escape is not 7D 5E or 7D 5D."""
    if ESCAPE not in stuffed:
        return stuffed
    first, *rest = stuffed.split(b"\x7d")
    out = bytearray(first)
    for part in rest:
        if not part or part[0] not in (0x5E, 0x5D):
            return None
        out.append(part[0] ^ ESCAPE_XOR)
        out += part[1:]
    return bytes(out)


def _read_body(stuffed: bytes) -> Frame | DecodeError:
    body = _unstuff(stuffed)
    if body is None:
        return DecodeError(DecodeErrorKind.BAD_ESCAPE, "7D must be followed by 5E or 5D", stuffed)
    if len(body) < MIN_BODY:
        return DecodeError(
            DecodeErrorKind.TOO_SHORT,
            f"{len(body)} bytes, a frame has at least {MIN_BODY}",
            stuffed,
        )
    length = body[0]
    if length > MAX_PAYLOAD:
        return DecodeError(
            DecodeErrorKind.LEN_OVER_LIMIT,
            f"LEN says {length} payload bytes, a frame carries at most {MAX_PAYLOAD}",
            stuffed,
        )
    if len(body) != MIN_BODY + length:
        return DecodeError(
            DecodeErrorKind.LENGTH_MISMATCH,
            f"LEN says {length} payload bytes, {len(body) - MIN_BODY} arrived",
            stuffed,
        )
    sent = int.from_bytes(body[-2:], "big")
    computed = crc16_ccitt(body[:-2])
    if sent != computed:
        return DecodeError(
            DecodeErrorKind.BAD_CRC, f"CRC {sent:04X} sent, {computed:04X} computed", stuffed
        )
    return Frame(seq=body[1], type=body[2], payload=body[3:-2])


class Decoder:
    """Streaming frame decoder: feed it bytes as they come, get frames and errors back.

    It never raises on input and never holds more than one frame's worth of bytes: a run longer
    than any frame is reported once as OVERLONG and dropped up to the next flag. A new decoder
    is *hunting*: the bytes before the first flag it sees are the tail of a frame whose start it
    never saw (or power-up noise) and are dropped without a word. Pass `hunting=False` for a
    stream known to start at a frame boundary.

        >>> d = Decoder()
        >>> d.feed(b"\\x7e\\x00\\x00\\x02")
        []
        >>> d.feed(b"\\xec\\xde\\x7e")  # the rest of a HEARTBEAT
        [Frame(seq=0, type=2, payload=b'')]
    """

    def __init__(self, *, hunting: bool = True) -> None:
        self._pending = bytearray()
        self._discarding = hunting

    @property
    def inside_frame(self) -> bool:
        """Bytes of a frame not yet closed are held (what the inter-byte timeout watches)."""
        return bool(self._pending)

    def expire(self) -> DecodeError | None:
        """Give up on the frame being received (its bytes stopped coming): the error, if any."""
        if not self._pending:
            return None
        raw = bytes(self._pending)
        self._pending.clear()
        # What follows is the rest of that frame, if it ever comes: drop it up to the next flag.
        self._discarding = True
        return DecodeError(
            DecodeErrorKind.INCOMPLETE, f"{len(raw)} bytes, then the line went quiet", raw
        )

    def feed(self, data: bytes) -> list[Frame | DecodeError]:
        out: list[Frame | DecodeError] = []
        start = 0
        while True:
            end = data.find(FLAG, start)
            if end < 0:
                break
            if self._discarding:
                self._discarding = False
            elif self._pending:
                self._pending += data[start:end]
                out.append(self._close(bytes(self._pending)))
                self._pending.clear()
            elif end > start:
                out.append(self._close(data[start:end]))
            start = end + 1
        if not self._discarding:
            self._pending += data[start:]
            if len(self._pending) > MAX_STUFFED_BODY:
                out.append(
                    DecodeError(
                        DecodeErrorKind.OVERLONG,
                        f"more than {MAX_STUFFED_BODY} bytes without a frame boundary",
                        bytes(self._pending),
                    )
                )
                self._pending.clear()
                self._discarding = True
        return out

    @staticmethod
    def _close(stuffed: bytes) -> Frame | DecodeError:
        if len(stuffed) > MAX_STUFFED_BODY:
            return DecodeError(
                DecodeErrorKind.OVERLONG, f"{len(stuffed)} bytes between flags", stuffed
            )
        return _read_body(stuffed)


# ---------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Hello:
    """Shoe to host, unsequenced: who the shoe is. `session` is new at every power-up."""

    session: int
    shoe_id: str
    firmware: str
    version: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Shoe to host, unsequenced, once a second: the shoe is alive."""


@dataclass(frozen=True, slots=True)
class CardMessage:
    seq: int
    card: Card


@dataclass(frozen=True, slots=True)
class MisreadMessage:
    seq: int
    reason: MisreadReason
    detail: str = ""


@dataclass(frozen=True, slots=True)
class EventMessage:
    seq: int
    kind: EventKind


@dataclass(frozen=True, slots=True)
class Ack:
    """Host to shoe: the frame with this sequence number is delivered; do not send it again."""

    seq: int


@dataclass(frozen=True, slots=True)
class Nak:
    """Host to shoe: a damaged frame arrived; send your unacknowledged frame again now.

    `last_seq` is the last sequence number the host delivered (0 if none), for the shoe's log.
    """

    last_seq: int


@dataclass(frozen=True, slots=True)
class HelloRequest:
    """Host to shoe: say HELLO (sent whenever the host opens the port)."""


ShoeMessage = Hello | Heartbeat | CardMessage | MisreadMessage | EventMessage
SequencedMessage = CardMessage | MisreadMessage | EventMessage
HostMessage = Ack | Nak | HelloRequest


def card_code(card: Card) -> bytes:
    """The two ASCII bytes a CARD frame carries: the card's notation (b"AS", b"TD", b"JK")."""
    return str(card).encode("ascii")


def _text(value: str, what: str) -> bytes:
    if not value.isascii() or not value.isprintable() or len(value) > MAX_TEXT:
        raise ValueError(f"{what} is 0 to {MAX_TEXT} printable ASCII characters, not {value!r}")
    return bytes((len(value),)) + value.encode("ascii")


def encode_message(message: ShoeMessage | HostMessage) -> bytes:
    """The frame bytes for one message."""
    match message:
        case Hello(session, shoe_id, firmware, version):
            payload = (
                bytes((version,))
                + session.to_bytes(4, "big")
                + _text(shoe_id, "the shoe id")
                + _text(firmware, "the firmware")
            )
            return encode_frame(UNSEQUENCED, MessageType.HELLO, payload)
        case Heartbeat():
            return encode_frame(UNSEQUENCED, MessageType.HEARTBEAT)
        case CardMessage(seq, card):
            return encode_frame(_sequenced(seq), MessageType.CARD, card_code(card))
        case MisreadMessage(seq, reason, _):
            return encode_frame(_sequenced(seq), MessageType.MISREAD, bytes((reason,)))
        case EventMessage(seq, kind):
            return encode_frame(_sequenced(seq), MessageType.EVENT, bytes((kind,)))
        case Ack(seq):
            return encode_frame(UNSEQUENCED, MessageType.ACK, bytes((seq,)))
        case Nak(last_seq):
            return encode_frame(UNSEQUENCED, MessageType.NAK, bytes((last_seq,)))
        case HelloRequest():
            return encode_frame(UNSEQUENCED, MessageType.HELLO_REQUEST)
    raise TypeError(f"not a shoe protocol message: {message!r}")


def _sequenced(seq: int) -> int:
    if not 1 <= seq <= 0xFF:
        raise ValueError(f"a card, misread or event frame has a sequence number 1-255, not {seq}")
    return seq


def _expect(frame: Frame, length: int, sequenced: bool) -> None:
    if len(frame.payload) != length:
        raise ProtocolError(
            f"a {_type_name(frame.type)} frame carries {length} payload bytes, this one {len(frame.payload)}"
        )
    if sequenced and frame.seq == UNSEQUENCED:
        raise ProtocolError(f"a {_type_name(frame.type)} frame needs a sequence number 1-255, this one has 0")
    if not sequenced and frame.seq != UNSEQUENCED:
        raise ProtocolError(f"a {_type_name(frame.type)} frame has sequence number 0, this one {frame.seq}")


def _type_name(type_: int) -> str:
    try:
        return MessageType(type_).name
    except ValueError:
        return f"type 0x{type_:02X}"


def describe_type(type_: int) -> str:
    """A TYPE byte in words, saying which way it should travel: for faults and logs."""
    try:
        known = MessageType(type_)
    except ValueError:
        return f"a frame of unknown type 0x{type_:02X}"
    way = "host-to-shoe" if known >= 0x80 else "shoe-to-host"
    return f"a {way} {known.name} frame (type 0x{type_:02X})"


def _read_hello(payload: bytes) -> Hello:
    def text(at: int, what: str) -> tuple[str, int]:
        if at >= len(payload) or at + 1 + payload[at] > len(payload):
            raise ProtocolError(f"the HELLO frame ends inside the {what}")
        raw = payload[at + 1 : at + 1 + payload[at]]
        if len(raw) > MAX_TEXT:
            raise ProtocolError(
                f"the {what} in HELLO is {len(raw)} characters; the limit is {MAX_TEXT}"
            )
        if not all(0x20 <= b < 0x7F for b in raw):
            raise ProtocolError(f"the {what} in HELLO is not printable ASCII: {raw.hex(' ')}")
        return raw.decode("ascii"), at + 1 + payload[at]

    if len(payload) < 5:
        raise ProtocolError(
            f"a HELLO frame carries at least 7 payload bytes, this one {len(payload)}"
        )
    if payload[0] != PROTOCOL_VERSION:
        raise ProtocolError(
            f"the shoe speaks protocol version {payload[0]}; tablectl speaks {PROTOCOL_VERSION}"
        )
    shoe_id, at = text(5, "shoe id")
    firmware, at = text(at, "firmware")
    if at != len(payload):
        raise ProtocolError(f"the HELLO frame has {len(payload) - at} bytes after the firmware")
    return Hello(int.from_bytes(payload[1:5], "big"), shoe_id, firmware, payload[0])


#: Each card's CARD payload, and the card it names (JOKER and the 52: what a shoe can send).
_CARD_BY_CODE: dict[bytes, Card] = {card_code(card): card for card in (*STANDARD_DECK, JOKER)}


def parse_card_code(code: bytes) -> Card:
    """The card two ASCII bytes name, in canonical notation only; CardError otherwise."""
    card = _CARD_BY_CODE.get(bytes(code))
    if card is not None:  # every canonical code: a look-up, on every card the shoe sends
        return card
    text = code.decode("latin-1")
    card = parse_card(text)
    if card_code(card) != code:  # "as", "10" and friends are not on the wire
        raise CardError(f"{text!r} is not a card in canonical notation")
    return card


def _shown(payload: bytes) -> str:
    """A payload's first bytes in hex, for a misread's words."""
    return payload[:8].hex(" ") + (" ..." if len(payload) > 8 else "")


def parse_shoe_message(frame: Frame) -> ShoeMessage:
    """Read a frame from the shoe; ProtocolError says why an intact frame is unusable.

    A CARD frame that names no card (wrong length, not a canonical code) and a MISREAD frame of
    the wrong length are misreads: the card has left the shoe, the dealer re-scans or enters it.
    """
    match frame.type:
        case MessageType.HELLO:
            _expect(frame, len(frame.payload), sequenced=False)
            return _read_hello(frame.payload)
        case MessageType.HEARTBEAT:
            _expect(frame, 0, sequenced=False)
            return Heartbeat()
        case MessageType.CARD:
            _expect(frame, len(frame.payload), sequenced=True)
            if len(frame.payload) != 2:
                return MisreadMessage(
                    frame.seq,
                    MisreadReason.NOT_A_CARD,
                    f"a CARD frame of {len(frame.payload)} bytes, a card is 2: {_shown(frame.payload)}".rstrip(": "),
                )
            try:
                return CardMessage(frame.seq, parse_card_code(frame.payload))
            except CardError:
                # The card has left the shoe but its name is lost: the dealer must re-scan it.
                return MisreadMessage(frame.seq, MisreadReason.NOT_A_CARD, f"card code {_shown(frame.payload)}")
        case MessageType.MISREAD:
            _expect(frame, len(frame.payload), sequenced=True)
            if len(frame.payload) != 1:
                return MisreadMessage(
                    frame.seq,
                    MisreadReason.UNREADABLE,
                    f"a MISREAD frame of {len(frame.payload)} bytes, a reason is 1",
                )
            code = frame.payload[0]
            try:
                return MisreadMessage(frame.seq, MisreadReason(code))
            except ValueError:
                return MisreadMessage(
                    frame.seq, MisreadReason.UNREADABLE, f"unknown misread reason 0x{code:02X}"
                )
        case MessageType.EVENT:
            _expect(frame, 1, sequenced=True)
            try:
                return EventMessage(frame.seq, EventKind(frame.payload[0]))
            except ValueError:
                raise ProtocolError(f"unknown shoe event code 0x{frame.payload[0]:02X}") from None
    if frame.type >= 0x80 and frame.type in set(MessageType):
        raise ProtocolError(
            f"the shoe sent {describe_type(frame.type)}, which only a host sends: is the line "
            "echoing the host's own frames back?"
        )
    raise ProtocolError(f"the shoe sent {describe_type(frame.type)}")


def parse_host_message(frame: Frame) -> HostMessage:
    """Read a frame from the host (the shoe's side of the protocol)."""
    match frame.type:
        case MessageType.ACK:
            _expect(frame, 1, sequenced=False)
            return Ack(frame.payload[0])
        case MessageType.NAK:
            _expect(frame, 1, sequenced=False)
            return Nak(frame.payload[0])
        case MessageType.HELLO_REQUEST:
            _expect(frame, 0, sequenced=False)
            return HelloRequest()
    raise ProtocolError(f"the host sent {describe_type(frame.type)}")


# ---------------------------------------------------------------------------- sequence numbers


def next_seq(seq: int) -> int:
    """The sequence number after `seq`: 1, 2, ... 255, 1, ... (0 is for unsequenced frames)."""
    return seq % 255 + 1


@dataclass(frozen=True, slots=True)
class LinkState:
    """The last sequenced frame the host delivered: the shoe's session, its SEQ and its content.

    `content` is the frame's TYPE byte and PAYLOAD, so a frame with the same SEQ but other content
    is told from a retransmission; None when it is not known (a journal older than this field).
    The caller persists it (the journal stores it with each card) and gives it back to the next
    reader, so a retransmission of a frame delivered before a host restart is not delivered twice.
    """

    session: int
    seq: int
    content: bytes | None = None

    def to_record(self) -> dict[str, int | str]:
        """JSON-ready form for the journal: {"session", "seq"} and "frame" as hex when known."""
        record: dict[str, int | str] = {"session": self.session, "seq": self.seq}
        if self.content is not None:
            record["frame"] = self.content.hex()
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, object]) -> LinkState:
        """The state a journal record holds; ValueError naming the field that is wrong."""
        session, seq, frame = record.get("session"), record.get("seq"), record.get("frame")
        if not isinstance(session, int) or not 0 <= session < 2**32:
            raise ValueError(f"shoe link record: session is a 32-bit number, not {session!r}")
        if not isinstance(seq, int) or not 1 <= seq <= 0xFF:
            raise ValueError(f"shoe link record: seq is 1-255, not {seq!r}")
        if frame is not None and not isinstance(frame, str):
            raise ValueError(f"shoe link record: frame is hex text, not {frame!r}")
        try:
            content = bytes.fromhex(frame) if frame is not None else None
        except ValueError:
            raise ValueError(f"shoe link record: frame is hex text, not {frame!r}") from None
        return cls(session, seq, content)


class Verdict(enum.Enum):
    NEW = "new"
    #: The same SEQ and content as the last delivered frame: its ACK was lost.
    DUPLICATE = "duplicate"
    #: The same SEQ as the last delivered frame but other content: two frames, one number.
    CONFLICT = "conflict"
    #: New, but frames between the last delivered one and this one went to nobody we know of.
    GAP = "gap"
    #: Behind the last delivered frame: an old frame replayed, never delivered again.
    STALE = "stale"


#: Of the 253 SEQs that are neither the last delivered one nor the next, this many ahead are a
#: gap (1 to 126 frames missing); the other 127, behind, are stale.
GAP_WINDOW = 126


def classify(
    state: LinkState | None, session: int, seq: int, content: bytes | None = None
) -> Verdict:
    """Is a sequenced frame new, a retransmission, a reused number, new after a gap, or old?

    The shoe sends one sequenced frame at a time and only moves on once it is acknowledged, so in
    one session the next new frame is always `next_seq(last)`; the same seq again with the same
    content is a duplicate. Of the other 253 numbers, the 126 ahead of the last are a gap and the
    127 behind it are stale. A session the host has no record of starts at SEQ 1; any other first
    SEQ is a gap from 1. A content of None (not known) compares equal to anything.
    """
    if state is None or state.session != session:
        return Verdict.NEW if seq == 1 else Verdict.GAP
    ahead = (seq - state.seq) % 255  # distance on the ring 0..254
    if ahead == 0:
        same = content is None or state.content is None or content == state.content
        return Verdict.DUPLICATE if same else Verdict.CONFLICT
    if ahead == 1:
        return Verdict.NEW
    return Verdict.GAP if ahead <= GAP_WINDOW + 1 else Verdict.STALE


def missing(state: LinkState | None, session: int, seq: int) -> tuple[int, int]:
    """The first and last SEQ a GAP verdict says never reached this host."""
    first = next_seq(state.seq) if state is not None and state.session == session else 1
    return first, (seq - 2) % 255 + 1
