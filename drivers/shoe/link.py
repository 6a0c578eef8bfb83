"""The host's side of the shoe protocol with no I/O: bytes and clock in, events and replies out.

`HostLink` holds everything the serial backend would otherwise tangle with threads: the decoder,
the shoe's HELLO, the duplicate rule, the heartbeat watchdog and the ACK/NAK replies. The backend
only moves bytes and calls it, so tests can drive it with a fake clock.

Delivery is at-least-once to the caller and exactly-once once the caller accepts: a sequenced
message comes out as a `Delivery`; the caller hands the event to the table and then calls
`accept(delivery)`, which records (session, seq) and returns the ACK to send. A frame is
acknowledged only after it was handed over, so a host that dies in between gets it again.
"""

from __future__ import annotations

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
    Hello,
    HelloRequest,
    LinkState,
    MessageType,
    MisreadMessage,
    Nak,
    ProtocolError,
    Verdict,
    classify,
    encode_message,
    next_seq,
    parse_shoe_message,
)

SequencedEvent = CardRead | Misread | ShoeEvent
SEQUENCED_TYPES = frozenset({MessageType.CARD, MessageType.MISREAD, MessageType.EVENT})


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
        heartbeat_timeout: float = 3.0,
        hello_interval: float = 1.0,
    ) -> None:
        if heartbeat_timeout <= 0 or hello_interval <= 0:
            raise ValueError("heartbeat_timeout and hello_interval are seconds greater than 0")
        self.url = url
        self.heartbeat_timeout = heartbeat_timeout
        self.hello_interval = hello_interval
        self._state = resume
        self._decoder = Decoder()
        self._hello: Hello | None = None
        self._ever_connected = False
        self._open = False
        self._disconnected = False
        self._silent = False
        self._last_heard = 0.0
        self._next_hello = 0.0

    @property
    def state(self) -> LinkState | None:
        """The last (session, seq) delivered and accepted: persist it, give it back as `resume`."""
        return self._state

    @property
    def hello(self) -> Hello | None:
        return self._hello

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
        self._decoder = Decoder()
        self._hello = None
        self._open = True
        self._silent = False
        self._last_heard = now
        self._next_hello = now + self.hello_interval
        out.append(encode_message(HelloRequest()))
        return out

    def lost(self, reason: str) -> list[Output]:
        """The port failed or could not be opened; reported once until it opens again."""
        self._open = False
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

    def tick(self, now: float) -> list[Output]:
        """Call often: raises the silence fault and asks again for a HELLO not yet heard."""
        out: list[Output] = []
        if not self._open:
            return out
        if not self._silent and now - self._last_heard > self.heartbeat_timeout:
            self._silent = True
            out.append(
                ShoeFault(
                    FaultKind.SILENT,
                    f"The card-reading shoe on {self.url} has been silent for "
                    f"{self.heartbeat_timeout:.1f} s: check its cable and power.",
                )
            )
        if (self._hello is None or self._silent) and now >= self._next_hello:
            self._next_hello = now + self.hello_interval
            out.append(encode_message(HelloRequest()))
        return out

    def receive(self, data: bytes, now: float) -> Iterator[Output]:
        """Outputs for bytes read from the port, in order, computed as you iterate.

        Accept each Delivery before taking the next output; if handing one over fails, stop
        iterating (its frame stays unacknowledged and the shoe sends it again).
        """
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                yield DamagedFrame(item.message, self.url)
                yield encode_message(Nak(self._state.seq if self._state else 0))
                continue
            self._last_heard = now
            if self._silent:
                self._silent = False
                yield FaultCleared(
                    FaultKind.SILENT, f"The card-reading shoe on {self.url} is talking again."
                )
            verdict = Verdict.NEW
            if item.seq != UNSEQUENCED and item.type in SEQUENCED_TYPES:
                if self._hello is None:
                    continue  # unknown session: no ack, the shoe resends after its HELLO
                verdict = classify(self._state, self._hello.session, item.seq)
                if verdict is Verdict.DUPLICATE:
                    # Our earlier ACK was lost: acknowledge again, never deliver twice.
                    yield RepeatedFrame(item.seq, self.url)
                    yield encode_message(Ack(item.seq))
                    continue
                if verdict is Verdict.STALE:
                    yield ShoeFault(
                        FaultKind.PROTOCOL,
                        f"The card-reading shoe on {self.url} repeated old frame {item.seq} "
                        f"(the last delivered was {self._state.seq if self._state else 0}); "
                        "it was not used again. Check the shoe's firmware.",
                    )
                    yield encode_message(Ack(item.seq))
                    continue
            try:
                message = parse_shoe_message(item)
            except ProtocolError as exc:
                yield ShoeFault(
                    FaultKind.PROTOCOL,
                    f"The card-reading shoe on {self.url} sent a frame tablectl cannot use: "
                    f"{exc}. Check the shoe's firmware.",
                )
                if item.seq and self._hello is not None:
                    # Sending it again cannot fix it: acknowledge so the shoe moves on.
                    self._state = LinkState(self._hello.session, item.seq)
                    yield encode_message(Ack(item.seq))
                continue
            if isinstance(message, Hello):
                self._hello = message
                yield Connected(
                    self.url, message.shoe_id, message.firmware, message.session,
                    self._ever_connected,
                )
                self._ever_connected = True
            elif isinstance(message, CardMessage | MisreadMessage | EventMessage):
                assert self._hello is not None  # sequenced frames wait for HELLO above
                yield from self._sequenced(message, self._hello.session, verdict)

    def _sequenced(
        self,
        message: CardMessage | MisreadMessage | EventMessage,
        session: int,
        verdict: Verdict,
    ) -> Iterator[Output]:
        if verdict is Verdict.GAP and self._state is not None:
            first, last = next_seq(self._state.seq), (message.seq - 2) % 255 + 1
            yield ShoeFault(
                FaultKind.SEQUENCE_GAP,
                f"The card-reading shoe (session {session:08X}) says frames {first} to {last} "
                "were acknowledged, but this table never recorded them: a card may be missing. "
                "Check the cards on the table against the journal.",
            )
        event: SequencedEvent
        if isinstance(message, CardMessage):
            event = CardRead(message.card, session, message.seq)
        elif isinstance(message, MisreadMessage):
            event = Misread(message.reason, message.detail, session, message.seq)
        else:
            event = ShoeEvent(message.kind, session, message.seq)
        yield Delivery(event)

    def accept(self, delivery: Delivery) -> bytes:
        """Record the delivery as done; returns the ACK to write to the shoe."""
        self._state = delivery.event.link_state
        return encode_message(Ack(delivery.event.seq))
