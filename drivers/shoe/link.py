"""The host's side of the shoe protocol with no I/O: bytes and clock in, events and replies out.

`HostLink` holds everything the serial backend would otherwise tangle with threads: the decoder,
the shoe's HELLO, the sequence rule, the heartbeat watchdog and the ACK/NAK replies. The backend
only moves bytes and calls it, so tests drive it with a fake clock.

It is a small state machine, written so that it can be read in one place, and printed in
hardware/shoe-protocol.md from the same data (`handling_table()`, `transitions_table()`):

- the connection is in one `Phase` (CLOSED, AWAITING_HELLO, READY), with the silence watchdog
  beside it; `TRANSITIONS` lists every way from one phase to another;
- every intact or damaged frame falls in exactly one `Case` (`case_of`), and `HANDLING` says for
  each case whether it is acknowledged, whether it moves the sequence state and what the table
  is told. Only the cases marked `moves_sequence` produce a `Delivery`, and only `accept` of a
  Delivery changes the sequence state: a frame that is not a sequenced message never moves it.

Delivery is at-least-once to the caller and exactly-once once the caller accepts: a sequenced
message comes out as a `Delivery`; the caller hands the event to the table and then calls
`accept(delivery)`, which records (session, seq, content) and returns the ACK to send. A frame
is acknowledged only after it was handed over, so a host that dies in between gets it again.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from drivers.shoe.events import (
    CardRead,
    Connected,
    DamagedFrame,
    DriverEvent,
    FaultCleared,
    FaultKind,
    Misread,
    RefusedMessage,
    RepeatedFrame,
    ShoeEvent,
    ShoeFault,
)
from drivers.shoe.protocol import (
    UNSEQUENCED,
    Ack,
    CardMessage,
    DecodeError,
    Decoder,
    EventMessage,
    Frame,
    Hello,
    HelloRequest,
    LinkState,
    MessageType,
    MisreadMessage,
    MisreadReason,
    Nak,
    ProtocolError,
    Verdict,
    classify,
    describe_type,
    encode_message,
    missing,
    parse_card_code,
    parse_shoe_message,
)

SequencedEvent = CardRead | Misread | ShoeEvent | RefusedMessage
SEQUENCED_TYPES = frozenset({MessageType.CARD, MessageType.MISREAD, MessageType.EVENT})

#: Protocol defaults (hardware/shoe-protocol.md, "Timing").
HEARTBEAT_TIMEOUT = 3.0
HELLO_INTERVAL = 1.0
INTER_BYTE_TIMEOUT = 0.5
NAK_HOLDOFF = 0.05


class Phase(enum.Enum):
    """Where the connection is. Silence is watched beside it, in every open phase."""

    CLOSED = "closed"  # no port open (never opened, failed, or pulled)
    AWAITING_HELLO = "awaiting hello"  # port open; no intact HELLO in this connection yet
    READY = "ready"  # HELLO heard: the session is known and sequenced frames are taken


@dataclass(frozen=True, slots=True)
class Transition:
    phase: str
    on: str
    to: str
    does: str


TRANSITIONS = (
    Transition("any", "the port opens", "AWAITING_HELLO",
               "decoder reset (hunting for a flag); HELLO_REQUEST; a disconnected fault clears"),
    Transition("any", "the port fails or cannot be opened", "CLOSED",
               "disconnected fault, once; reopen with backoff 0.1 s doubling to 2 s"),
    Transition("AWAITING_HELLO", "an intact HELLO", "READY", "Connected (shoe id, firmware, session)"),
    Transition("AWAITING_HELLO", "1 s since the last HELLO_REQUEST", "AWAITING_HELLO",
               "HELLO_REQUEST again"),
    Transition("READY", "an intact HELLO", "READY",
               "Connected; a new SESSION starts a new sequence"),
    Transition("AWAITING_HELLO or READY", "no intact frame for 3 s (heartbeat timeout)",
               "same, silent", "silent fault, once; HELLO_REQUEST every 1 s while silent"),
    Transition("silent", "any intact frame", "same", "silent fault cleared"),
    Transition("AWAITING_HELLO or READY", "a frame begun, no byte for 0.5 s (inter-byte timeout)",
               "same", "the partial frame is a damaged frame (case damaged)"),
)


class Case(enum.Enum):
    """Every frame the host reads is exactly one of these."""

    DAMAGED = "not an intact body: bad CRC, LEN over 64 or not matching, bad escape, too short, "\
        "too long, or incomplete (inter-byte timeout)"
    HELLO = "HELLO, SEQ 0, well formed"
    HEARTBEAT = "HEARTBEAT, SEQ 0, no payload"
    NOT_A_MESSAGE = "intact but no shoe message: an unknown TYPE, a host TYPE (0x80-0xFF), HELLO "\
        "or HEARTBEAT with SEQ 1-255 or a bad payload, CARD/MISREAD/EVENT with SEQ 0"
    BEFORE_HELLO = "CARD, MISREAD or EVENT with SEQ 1-255, no HELLO yet in this connection"
    NEW = "CARD, MISREAD or EVENT; SEQ is the next one"
    GAP = "CARD, MISREAD or EVENT; SEQ 2 to 127 ahead of the last delivered (1 to 126 missing), "\
        "or not 1 in a session the host has no record of"
    DUPLICATE = "CARD, MISREAD or EVENT; same SESSION, SEQ and content as the last delivered"
    CONFLICT = "CARD, MISREAD or EVENT; same SESSION and SEQ as the last delivered, other content"
    STALE = "CARD, MISREAD or EVENT; SEQ 1 to 127 behind the last delivered"


class Reply(enum.Enum):
    NONE = "none"
    NAK = "NAK (at most one per 50 ms)"
    ACK_NOW = "ACK at once"
    ACK_AFTER = "ACK after the table has it"


@dataclass(frozen=True, slots=True)
class Handling:
    reply: Reply
    moves_sequence: bool
    reports: str


HANDLING: dict[Case, Handling] = {
    Case.DAMAGED: Handling(Reply.NAK, False, "damaged frame (line noise); the shoe resends"),
    Case.HELLO: Handling(Reply.NONE, False, "connected: shoe id, firmware, session"),
    Case.HEARTBEAT: Handling(Reply.NONE, False, "nothing (the shoe is alive)"),
    Case.NOT_A_MESSAGE: Handling(
        Reply.NONE, False, "protocol fault naming the frame (and its card, if it carries one)"
    ),
    Case.BEFORE_HELLO: Handling(Reply.NONE, False, "nothing: the shoe resends it after its HELLO"),
    Case.NEW: Handling(
        Reply.ACK_AFTER, True,
        "the card; a misread (re-scan or enter by hand) for a MISREAD, or a CARD whose payload is "
        "not one canonical 2-byte card; a shoe event; a protocol fault for an EVENT it cannot use",
    ),
    Case.GAP: Handling(
        Reply.ACK_AFTER, True, "sequence-gap fault naming the missing SEQs, then as new"
    ),
    Case.DUPLICATE: Handling(
        Reply.ACK_NOW, False,
        "repeated frame (logged; not used twice); the 8th repeat of one frame one by one: "
        "the shoe does not hear the table (`shoe-duplicate`)",
    ),
    Case.CONFLICT: Handling(
        Reply.ACK_AFTER, True,
        "a misread naming both frames (the new card is not used; enter it by hand)",
    ),
    Case.STALE: Handling(
        Reply.ACK_NOW, False, "protocol fault naming the frame and its card; not used"
    ),
}

_VERDICT_CASE = {
    Verdict.NEW: Case.NEW,
    Verdict.GAP: Case.GAP,
    Verdict.DUPLICATE: Case.DUPLICATE,
    Verdict.CONFLICT: Case.CONFLICT,
    Verdict.STALE: Case.STALE,
}


def case_of(
    item: Frame | DecodeError, hello: Hello | None, state: LinkState | None
) -> Case:
    """Which case a frame is, given the HELLO of this connection and the last delivered frame."""
    if isinstance(item, DecodeError):
        return Case.DAMAGED
    if item.type in SEQUENCED_TYPES:
        if item.seq == UNSEQUENCED:
            return Case.NOT_A_MESSAGE
        if hello is None:
            return Case.BEFORE_HELLO
        return _VERDICT_CASE[classify(state, hello.session, item.seq, content(item))]
    if item.seq != UNSEQUENCED:
        return Case.NOT_A_MESSAGE
    try:
        message = parse_shoe_message(item)
    except ProtocolError:
        return Case.NOT_A_MESSAGE
    return Case.HELLO if isinstance(message, Hello) else Case.HEARTBEAT


def content(frame: Frame) -> bytes:
    """What makes two frames with one SEQ the same frame: their TYPE and PAYLOAD."""
    return bytes((frame.type,)) + frame.payload


def frame_words(data: bytes) -> str:
    """A frame's content (TYPE then PAYLOAD) in words: its type and, for a CARD, its card."""
    if not data:
        return "a frame whose content was not recorded"
    type_, payload = data[0], data[1:]
    words = describe_type(type_)
    if type_ == MessageType.CARD:
        try:
            return f"{words} carrying {parse_card_code(payload)}"
        except ValueError:
            return f"{words} carrying bytes {payload[:8].hex(' ') or '(none)'}"
    return f"{words}, payload {payload[:8].hex(' ')}" if payload else words


def describe_frame(frame: Frame) -> str:
    """A frame in words for a fault: its type, SEQ and, for a CARD, the card it names."""
    return f"{frame_words(content(frame))}, SEQ {frame.seq}"


@dataclass(frozen=True, slots=True)
class Delivery:
    """A new sequenced message: hand `event` over, then call `HostLink.accept(delivery)`."""

    event: SequencedEvent


Output = DriverEvent | Delivery | bytes


class HostLink:
    """Host protocol state for one shoe, across any number of port openings.

        >>> link = HostLink("/dev/ttyUSB0")
        >>> link.opened(now=0.0)[-1] == encode_message(HelloRequest())
        True
    """

    def __init__(
        self,
        url: str,
        *,
        resume: LinkState | None = None,
        heartbeat_timeout: float = HEARTBEAT_TIMEOUT,
        hello_interval: float = HELLO_INTERVAL,
        inter_byte_timeout: float = INTER_BYTE_TIMEOUT,
        nak_holdoff: float = NAK_HOLDOFF,
    ) -> None:
        if min(heartbeat_timeout, hello_interval, inter_byte_timeout) <= 0 or nak_holdoff < 0:
            raise ValueError(
                "heartbeat_timeout, hello_interval and inter_byte_timeout are seconds greater "
                "than 0; nak_holdoff is 0 or more"
            )
        self.url = url
        self.heartbeat_timeout = heartbeat_timeout
        self.hello_interval = hello_interval
        self.inter_byte_timeout = inter_byte_timeout
        self.nak_holdoff = nak_holdoff
        self._state = resume
        self._decoder = Decoder()
        self._hello: Hello | None = None
        self._phase = Phase.CLOSED
        self._ever_connected = False
        self._disconnected = False
        self._silent = False
        self._last_heard = 0.0
        self._last_byte = 0.0
        self._last_nak = float("-inf")
        self._next_hello = 0.0
        # The last sequenced frame offered to the table and not yet accepted: if the shoe moves on
        # without sending it again, the table is told (nothing else on the line would reveal it).
        self._offered: Frame | None = None

    @property
    def state(self) -> LinkState | None:
        """The last (session, seq, content) delivered and accepted: persist it, give it back."""
        return self._state

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def silent(self) -> bool:
        return self._silent

    @property
    def hello(self) -> Hello | None:
        return self._hello

    # -------------------------------------------------------------- phase transitions

    def opened(self, now: float) -> list[Output]:
        """The port is open: start a fresh conversation by asking the shoe to say HELLO."""
        out: list[Output] = []
        if self._disconnected:
            self._disconnected = False
            out.append(
                FaultCleared(
                    FaultKind.DISCONNECTED,
                    f"The card-reading shoe's port {self.url} is open again.",
                )
            )
        self._decoder = Decoder()  # hunting: bytes before the first flag are dropped unseen
        self._hello = None
        self._phase = Phase.AWAITING_HELLO
        self._silent = False
        self._last_heard = self._last_byte = now
        self._next_hello = now + self.hello_interval
        out.append(encode_message(HelloRequest()))
        return out

    def lost(self, reason: str) -> list[Output]:
        """The port failed or could not be opened; reported once until it opens again."""
        self._phase = Phase.CLOSED
        self._hello = None
        if self._disconnected:
            return []
        self._disconnected = True
        return [
            ShoeFault(
                FaultKind.DISCONNECTED,
                f"The card-reading shoe on {self.url} is disconnected ({reason}): check its "
                "cable and power; tablectl keeps trying to reconnect.",
            )
        ]

    def due(self) -> float | None:
        """When `tick` next has something to do (the clock `tick` is given): a frame's bytes stopped
        coming, the shoe fell silent, a HELLO_REQUEST to send; None while the port is closed. Bytes
        read before then are handed to `receive` at once whatever this says."""
        if self._phase is Phase.CLOSED:
            return None
        times = []
        if self._decoder.inside_frame:
            times.append(self._last_byte + self.inter_byte_timeout)
        if not self._silent:
            times.append(self._last_heard + self.heartbeat_timeout)
        if self._phase is Phase.AWAITING_HELLO or self._silent:
            times.append(self._next_hello)
        return min(times) if times else None

    def tick(self, now: float) -> list[Output]:
        """Call often: silence, the inter-byte timeout, and HELLO_REQUEST while none is heard."""
        out: list[Output] = []
        if self._phase is Phase.CLOSED:
            return out
        if self._decoder.inside_frame and now - self._last_byte > self.inter_byte_timeout:
            error = self._decoder.expire()
            if error is not None:
                out.extend(self._handle(error, now))
        if not self._silent and now - self._last_heard > self.heartbeat_timeout:
            self._silent = True
            out.append(
                ShoeFault(
                    FaultKind.SILENT,
                    f"The card-reading shoe on {self.url} has been silent for "
                    f"{self.heartbeat_timeout:.1f} s: check its cable and power.",
                )
            )
        if (self._phase is Phase.AWAITING_HELLO or self._silent) and now >= self._next_hello:
            self._next_hello = now + self.hello_interval
            out.append(encode_message(HelloRequest()))
        return out

    # -------------------------------------------------------------- frames

    def receive(self, data: bytes, now: float) -> Iterator[Output]:
        """Outputs for bytes read from the port, in order, computed as you iterate.

        Accept each Delivery before taking the next output; if handing one over fails, stop
        iterating (its frame stays unacknowledged and the shoe sends it again).
        """
        if data:
            self._last_byte = now
        for item in self._decoder.feed(data):
            yield from self._handle(item, now)

    def _handle(self, item: Frame | DecodeError, now: float) -> Iterator[Output]:
        case = case_of(item, self._hello, self._state)
        handling = HANDLING[case]
        if isinstance(item, DecodeError):
            yield DamagedFrame(item.message, self.url)
            if now - self._last_nak >= self.nak_holdoff:
                self._last_nak = now
                yield encode_message(Nak(self._state.seq if self._state else 0))
            return
        self._last_heard = now
        offered = self._offered
        if offered is not None and item.seq and (item.seq, content(item)) != (offered.seq, content(offered)):
            self._offered = None
            yield ShoeFault(
                FaultKind.PROTOCOL,
                f"The card-reading shoe on {self.url} sent {describe_frame(offered)}, which the table "
                "could not take, and moved on without sending it again: it was never recorded. "
                "If that card is on the table, enter it by hand. Check the shoe's firmware.",
            )
        if self._silent:
            self._silent = False
            yield FaultCleared(
                FaultKind.SILENT, f"The card-reading shoe on {self.url} is talking again."
            )
        if case is Case.HELLO:
            hello = parse_shoe_message(item)
            assert isinstance(hello, Hello)
            self._hello = hello
            self._phase = Phase.READY
            yield Connected(
                self.url, hello.shoe_id, hello.firmware, hello.session, self._ever_connected
            )
            self._ever_connected = True
        elif case is Case.NOT_A_MESSAGE:
            yield self._protocol_fault(item)
        elif case is Case.DUPLICATE:
            # Our earlier ACK was lost: acknowledge again, never deliver twice.
            yield RepeatedFrame(item.seq, self.url)
        elif case is Case.STALE:
            last = self._state.seq if self._state else 0
            yield ShoeFault(
                FaultKind.PROTOCOL,
                f"The card-reading shoe on {self.url} repeated an old frame, "
                f"{describe_frame(item)} (the last delivered was SEQ {last}); it was not used. "
                "If that card is on the table and not in the journal, enter it by hand. "
                "Check the shoe's firmware.",
            )
        elif handling.moves_sequence:
            assert self._hello is not None  # sequenced cases need the session
            yield from self._deliver(item, case, self._hello.session)
        if handling.reply is Reply.ACK_NOW:
            yield encode_message(Ack(item.seq))

    def _protocol_fault(self, frame: Frame) -> ShoeFault:
        try:
            parse_shoe_message(frame)
            reason = "a sequence number on a frame that carries none"
        except ProtocolError as exc:
            reason = str(exc)
        if frame.type in {t.value for t in MessageType if t < 0x80}:
            reason = f"{describe_frame(frame)}: {reason}"
        else:
            reason = f"{reason} (SEQ {frame.seq})"
        lost = " It was not used and not acknowledged."
        if frame.type == MessageType.CARD:
            lost += " If that card is on the table, enter it by hand."
        return ShoeFault(
            FaultKind.PROTOCOL,
            f"The card-reading shoe on {self.url} sent a frame tablectl cannot use: {reason}."
            f"{lost} Check the shoe's firmware.",
        )

    def _deliver(self, frame: Frame, case: Case, session: int) -> Iterator[Output]:
        seq, data = frame.seq, content(frame)
        if case is Case.GAP:
            first, last = missing(self._state, session, seq)
            span = f"frame {first}" if first == last else f"frames {first} to {last}"
            yield ShoeFault(
                FaultKind.SEQUENCE_GAP,
                f"The card-reading shoe (session {session:08X}) sent SEQ {seq}, so {span} "
                "were acknowledged, but this table never recorded them: a card may be missing. "
                "Check the cards on the table against the journal.",
            )
        event: SequencedEvent
        if case is Case.CONFLICT:
            before = frame_words(self._state.content or b"" if self._state else b"")
            event = Misread(
                MisreadReason.SEQ_REUSED,
                f"SEQ {seq} was {before}, and now {frame_words(data)}, which was not used",
                session, seq, data,
            )
            self._offered = frame
            yield Delivery(event)
            return
        try:
            message = parse_shoe_message(frame)
        except ProtocolError as exc:
            event = RefusedMessage(
                f"The card-reading shoe on {self.url} sent {describe_frame(frame)}, which "
                f"tablectl cannot use: {exc}. It was acknowledged and not used. "
                "Check the shoe's firmware.",
                session, seq, data,
            )
        else:
            if isinstance(message, CardMessage):
                event = CardRead(message.card, session, seq, data)
            elif isinstance(message, MisreadMessage):
                event = Misread(message.reason, message.detail, session, seq, data)
            elif isinstance(message, EventMessage):
                event = ShoeEvent(message.kind, session, seq, data)
            else:  # pragma: no cover - sequenced types parse to sequenced messages
                raise AssertionError(f"a sequenced frame parsed as {message!r}")
        self._offered = frame
        yield Delivery(event)

    def accept(self, delivery: Delivery) -> bytes:
        """Record the delivery as done; returns the ACK to write to the shoe."""
        self._offered = None
        self._state = delivery.event.link_state
        return encode_message(Ack(delivery.event.seq))


def handling_table() -> str:
    """HANDLING as the Markdown table printed in hardware/shoe-protocol.md."""
    rows = ["| case | reply | moves the sequence | the table is told |", "|---|---|---|---|"]
    for case, h in HANDLING.items():
        moves = "yes, to this frame" if h.moves_sequence else "no"
        rows.append(f"| **{case.name.lower().replace('_', ' ')}**: {case.value} | "
                    f"{h.reply.value} | {moves} | {h.reports} |")
    return "\n".join(rows)


def transitions_table() -> str:
    """TRANSITIONS as the Markdown table printed in hardware/shoe-protocol.md."""
    rows = ["| from | on | to | does |", "|---|---|---|---|"]
    rows += [f"| {t.phase} | {t.on} | {t.to} | {t.does} |" for t in TRANSITIONS]
    return "\n".join(rows)
