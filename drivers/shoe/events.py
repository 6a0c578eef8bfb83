"""What the shoe driver tells the table: small frozen records, each with a plain-words message.

The reader hands these to its `on_event` callback in the order they happened. `CardRead`,
`Misread`, `ShoeEvent` and `RefusedMessage` are the shoe's sequenced messages (each delivered
exactly once, with the frame's content so a reused SEQ is told apart); the rest describe the
link.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from controller.engine.cards import Card
from drivers.shoe.protocol import EventKind, LinkState, MisreadReason


@dataclass(frozen=True, slots=True)
class CardRead:
    """A card came out of the shoe and was read. (session, seq) is what to persist with it."""

    card: Card
    session: int
    seq: int
    #: TYPE and PAYLOAD of the frame it came in: persisted, so a reused SEQ is told apart.
    frame: bytes = b""

    @property
    def link_state(self) -> LinkState:
        return LinkState(self.session, self.seq, self.frame or None)

    @property
    def message(self) -> str:
        return f"The shoe read {self.card}."


@dataclass(frozen=True, slots=True)
class Misread:
    """A card left the shoe without a reading: it never becomes a card; the dealer re-scans it."""

    reason: MisreadReason
    detail: str
    session: int
    seq: int
    frame: bytes = b""

    @property
    def link_state(self) -> LinkState:
        return LinkState(self.session, self.seq, self.frame or None)

    @property
    def message(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return (
            f"Misread at the card-reading shoe: {self.reason.words}{detail}. "
            "Re-scan the card or enter it by hand."
        )


@dataclass(frozen=True, slots=True)
class ShoeEvent:
    """Cut card reached, shoe empty, or the shoe's confirm button."""

    kind: EventKind
    session: int
    seq: int
    frame: bytes = b""

    @property
    def link_state(self) -> LinkState:
        return LinkState(self.session, self.seq, self.frame or None)

    @property
    def message(self) -> str:
        words = self.kind.words
        return words[0].upper() + words[1:] + "."


@dataclass(frozen=True, slots=True)
class RefusedMessage:
    """A sequenced frame that arrived intact but says nothing tablectl can use (an EVENT with an
    unknown code): acknowledged, since resending cannot fix it, and raised as a protocol fault.
    Delivered like a card so the table journals its (session, seq) and never takes it twice."""

    message: str
    session: int
    seq: int
    frame: bytes = b""

    @property
    def link_state(self) -> LinkState:
        return LinkState(self.session, self.seq, self.frame or None)


@dataclass(frozen=True, slots=True)
class Connected:
    """The shoe said HELLO on a freshly opened port. Sim shoes say SIMULATED in `firmware`."""

    url: str
    shoe_id: str
    firmware: str
    session: int
    reconnected: bool

    @property
    def message(self) -> str:
        verb = "reconnected" if self.reconnected else "connected"
        return (
            f"The card-reading shoe {self.shoe_id} (firmware {self.firmware}) is {verb} "
            f"on {self.url}, session {self.session:08X}."
        )


class FaultKind(enum.Enum):
    DISCONNECTED = "disconnected"
    SILENT = "silent"
    PROTOCOL = "protocol"
    SEQUENCE_GAP = "sequence gap"


@dataclass(frozen=True, slots=True)
class ShoeFault:
    """Something is wrong with the shoe or its link; cards may not be flowing."""

    kind: FaultKind
    message: str


@dataclass(frozen=True, slots=True)
class FaultCleared:
    """A DISCONNECTED or SILENT fault is over: the shoe is talking again."""

    kind: FaultKind
    message: str


@dataclass(frozen=True, slots=True)
class DamagedFrame:
    """Noise on the line: a frame arrived damaged and the shoe was asked to send it again.

    Not a card and not a misread: the shoe still holds the frame and will retransmit it.
    """

    detail: str
    url: str

    @property
    def message(self) -> str:
        return f"The card-reading shoe on {self.url} sent a {self.detail}; asked it to send again."


@dataclass(frozen=True, slots=True)
class RepeatedFrame:
    """The shoe sent again a frame the table already has (its ACK was lost): not used twice."""

    seq: int
    url: str

    @property
    def message(self) -> str:
        return (
            f"The card-reading shoe on {self.url} repeated frame {self.seq}, which the table "
            "already has; acknowledged it again and did not use it twice."
        )


DriverEvent = (
    CardRead
    | Misread
    | ShoeEvent
    | RefusedMessage
    | Connected
    | ShoeFault
    | FaultCleared
    | DamagedFrame
    | RepeatedFrame
)
