"""A simulated card-reading shoe on a real pty, speaking the real bytes, with a fault menu.

It owns the device side of a pseudo-terminal: a driver opens `shoe.port` with pyserial exactly
as it would open `/dev/serial/by-id/...`. Its firmware string says SIMULATED so no screen can
take it for a live shoe. Like a real shoe it sends HELLO and a heartbeat every second, and repeats
each card, misread or event until the host acknowledges it, one at a time, so a card read while
the host was away arrives when a host comes back.

    with SimulatedShoe(parse_cards(["AS", "KD"]), link="/tmp/shoe") as shoe:
        shoe.draw(2)   # a reader on /tmp/shoe now gets AS then KD
        shoe.fault("garbage")

Fault menu (OctoPrint's misbehaving virtual printer, for a shoe): `silent`, `bad-crc`, `slow`
and `deaf` stay on until `clear`; `garbage`, `duplicate`, `misread`, `drop` and `restore` act once.

Firmware bugs (`bugs=`, `tablectl sim-shoe --bug NAME`) are different: deliberate mistakes a
shoe's firmware could make, each one breaking one rule of hardware/shoe-protocol.md, so that
`tablectl shoe-check` can be shown to catch each (`FirmwareBug` lists them and the case that
catches each). `auto_deal=True` is a card-feeding rig: whenever nothing is waiting for an ACK the
dealer pulls the next card (the shoe reloads itself when it runs out), and with `misread_every=N`
every Nth card comes out unreadable.
"""

from __future__ import annotations

import contextlib
import enum
import os
import random
import select
import threading
import tty
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TypeVar

from controller.engine.cards import Card, ShoeComposition
from drivers.shoe.clock import PATIENCE_S, WallClock
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
    MessageType,
    MisreadMessage,
    MisreadReason,
    Nak,
    ProtocolError,
    SequencedMessage,
    card_code,
    encode_frame,
    encode_message,
    next_seq,
    parse_host_message,
)

T = TypeVar("T")
BAD_CRC = DecodeErrorKind.BAD_CRC

SIM_FIRMWARE = "SIMULATED tablectl-sim 1"


class Fault(enum.Enum):
    """The fault menu. The first three are states (on until cleared); the rest act once."""

    SILENT = "silent"  # sends nothing, not even heartbeats
    BAD_CRC = "bad-crc"  # every frame goes out with a spoiled checksum
    SLOW = "slow"  # frames trickle out a byte at a time over `slow_seconds`
    DEAF = "deaf"  # the shoe no longer hears the host: every ACK is lost on the way, so it resends
    GARBAGE = "garbage"  # a burst of line noise now
    DUPLICATE = "duplicate"  # send the last acknowledged frame again
    MISREAD = "misread"  # the next card drawn cannot be read
    DROP = "drop"  # the line vanishes: pty closed, link removed
    RESTORE = "restore"  # a new pty comes back at the same link


STATE_FAULTS = frozenset({Fault.SILENT, Fault.BAD_CRC, Fault.SLOW, Fault.DEAF})


class FirmwareBug(enum.Enum):
    """Deliberate firmware mistakes; `catches` is the shoe-check case that must fail on each."""

    NEW_SESSION_ON_HELLO = "new-session-on-hello"  # a new SESSION at every HELLO, not power-up
    NO_HEARTBEAT = "no-heartbeat"  # never sends HEARTBEAT
    CARD_TRAILING_BYTE = "card-trailing-byte"  # CARD frames carry a third payload byte, 00
    MISREAD_REASON_0 = "misread-reason-0"  # MISREAD frames carry reason 00
    NO_RETRANSMIT = "no-retransmit"  # never resends on its 0.25 s timer
    IGNORE_NAK = "ignore-nak"  # does not resend after a NAK
    NAK_STORM = "nak-storm"  # resends at every NAK, with no 50 ms holdoff
    ACK_ANY = "ack-any"  # takes any ACK as the ACK of the frame in flight
    FORGET_ON_HELLO = "forget-on-hello"  # drops the frame in flight on HELLO_REQUEST
    ACCEPT_BAD_CRC = "accept-bad-crc"  # acts on host frames whose CRC is wrong
    WRAP_TO_ZERO = "wrap-to-zero"  # after SEQ 255 comes 0, not 1

    @property
    def catches(self) -> str:
        return _BUG_CASE[self]


_BUG_CASE = {
    FirmwareBug.NEW_SESSION_ON_HELLO: "hello-and-session",
    FirmwareBug.NO_HEARTBEAT: "heartbeat-timing",
    FirmwareBug.CARD_TRAILING_BYTE: "card-framing",
    FirmwareBug.MISREAD_REASON_0: "misread-framing",
    FirmwareBug.NO_RETRANSMIT: "retransmit-until-acked",
    FirmwareBug.IGNORE_NAK: "retransmit-after-nak",
    FirmwareBug.NAK_STORM: "retransmit-after-nak",
    FirmwareBug.ACK_ANY: "duplicate-after-lost-ack",
    FirmwareBug.FORGET_ON_HELLO: "reconnect-with-frame-in-flight",
    FirmwareBug.ACCEPT_BAD_CRC: "damaged-host-frames",
    FirmwareBug.WRAP_TO_ZERO: "sequence-wrap",
}


@dataclass(frozen=True, slots=True)
class Record:
    """One line of the simulated shoe's history (monotonic time, what happened)."""

    at: float
    what: str


class SimulatedShoe:
    """A shoe dealing from a stacked list of cards, or from a seeded shuffle of `composition`.

    `cut_card` is how many cards are dealt before the cut card comes out (None: no cut card).
    Timing settings are seconds; tests pass short ones.
    """

    def __init__(
        self,
        cards: Iterable[Card] | None = None,
        *,
        seed: int | None = None,
        composition: ShoeComposition | None = None,
        cut_card: int | None = None,
        link: str | None = None,
        shoe_id: str = "SIM-SHOE-1",
        session: int | None = None,
        heartbeat_interval: float = 1.0,
        retransmit_interval: float = 0.25,
        slow_seconds: float = 0.5,
        nak_holdoff: float = 0.05,
        bugs: Iterable[FirmwareBug] = (),
        auto_deal: bool = False,
        misread_every: int | None = None,
        clock: WallClock | None = None,
    ) -> None:
        if cards is not None:
            self._cards: deque[Card] = deque(cards)
        else:
            shoe = list((composition or ShoeComposition(decks=6)).cards())
            random.Random(seed).shuffle(shoe)
            self._cards = deque(shoe)
        if misread_every is not None and misread_every < 1:
            raise ValueError(f"misread_every is a number of cards of 1 or more, not {misread_every}")
        self.bugs = frozenset(bugs)
        self.auto_deal = auto_deal
        self.misread_every = misread_every
        self._full_shoe = list(self._cards)
        self._auto_drawn = 0
        if cut_card is not None and cut_card < 0:
            raise ValueError(f"the cut card comes after 0 or more cards, not {cut_card}")
        self._cut_card = cut_card
        self._link = link
        self.shoe_id = shoe_id
        self.session = session if session is not None else int.from_bytes(os.urandom(4), "big")
        self.heartbeat_interval = heartbeat_interval
        self.retransmit_interval = retransmit_interval
        self.slow_seconds = slow_seconds
        self.nak_holdoff = nak_holdoff
        self._noise = random.Random(seed)
        self.history: list[Record] = []
        self.dealt: list[Card] = []
        self._stacked = 0  # how many of the cards on top were stacked (`stack`) and not drawn yet
        # Everything below is touched only by the I/O thread.
        self._faults: set[Fault] = set()
        self._misread_next = False
        self._outbox: deque[SequencedMessage] = deque()
        self._in_flight: SequencedMessage | None = None
        self._last_acked: SequencedMessage | None = None
        self._in_flight_sent = 0.0
        self._resend_at: float | None = None  # a NAK that came within the holdoff
        self._seq = 0
        self._empty_sent = False
        self._line: deque[tuple[float, bytes]] = deque()
        self._decoder = Decoder()
        self._master = -1
        self._slave = -1
        self._slave_path = ""
        self._calls: deque[tuple[Callable[[], object], Future[object]]] = deque()
        self._calls_lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        # Real time, or the time it shares with the conformance kit checking it (clock.py).
        self._clock = clock or WallClock()
        self._clock.attach(self._poke)
        self._idle = threading.Condition()
        self._running = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ public, any thread

    @property
    def port(self) -> str:
        """The path a driver opens: the link when there is one, else the pty's slave path."""
        return self._link or self._slave_path

    @property
    def pty_path(self) -> str:
        """The pty's slave path now (a new one after each restore); empty while dropped."""
        return self._slave_path

    @property
    def cards_left(self) -> int:
        return self._call(lambda: len(self._cards))

    def start(self) -> None:
        self._open_line()
        self._running = True
        self._thread = threading.Thread(target=self._run, name="simulated-shoe", daemon=True)
        self._thread.start()
        self._call(lambda: self._send(self._hello()))

    def stop(self) -> None:
        if self._thread is not None:
            self._running = False
            os.write(self._wake_w, b"x")
            self._thread.join(PATIENCE_S)
            self._thread = None
        self._close_line()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> SimulatedShoe:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def draw(self, n: int = 1) -> list[Card]:
        """The dealer pulls `n` cards (fewer if the shoe runs out); returns what came out."""
        return self._call(lambda: self._draw(n))

    def stack(self, cards: Iterable[Card]) -> None:
        """Put `cards` on top of the shoe, first card out first (they stay on top of a new shoe
        loaded before they are drawn: `load`)."""
        top = list(cards)

        def stack() -> None:
            self._cards.extendleft(reversed(top))
            self._stacked += len(top)

        self._call(stack)

    def reload(self, cards: Iterable[Card]) -> None:
        """The dealer loads a freshly shuffled shoe: `cards` replace whatever was left, and the
        cut card counts again from the first card of the new shoe."""
        fresh = list(cards)

        def load() -> None:
            self._cards = deque(fresh)
            self._stacked = 0
            self.dealt.clear()
            self._empty_sent = False

        self._call(load)

    def load(self, rng: random.Random, cards: Iterable[Card]) -> None:
        """The dealer loads a new shoe of `cards` (what the table counts as in the shoe), shuffled
        with `rng`. A card drawn before and still queued to go out reaches the host after the new
        shoe is loaded and is counted from it, so one copy of each is left out of the new shoe."""
        fresh = Counter(cards)

        def load() -> None:
            # Cards stacked on top and not drawn yet stay on top (a test's or a demo's stacked
            # hand); the rest of the new shoe is what the table counts, less those.
            top = list(self._cards)[: self._stacked]
            fresh.subtract(m.card for m in self._outbox if isinstance(m, CardMessage))
            fresh.subtract(top)
            shoe = sorted((+fresh).elements(), key=str)
            rng.shuffle(shoe)
            self._cards = deque(top + shoe)
            self.dealt.clear()
            self._empty_sent = False
            self._note(f"dealer loaded a new shoe of {len(shoe)} cards under {len(top)} stacked")

        self._call(load)

    def press_confirm(self) -> None:
        self._call(lambda: self._queue(EventKind.CONFIRM_BUTTON))

    def fault(self, name: str | Fault, on: bool = True) -> str:
        """Apply a fault from the menu by name; returns what happened, in words."""
        fault = name if isinstance(name, Fault) else Fault(name)
        return self._call(lambda: self._fault(fault, on))

    def clear(self) -> str:
        """Switch off every state fault (silent, bad-crc, slow)."""
        return self._call(self._clear)

    @property
    def unacknowledged(self) -> int:
        """Messages waiting for the host's ACK: the one in flight and those queued behind it."""
        return self._call(lambda: len(self._outbox) + (self._in_flight is not None))

    def wait_acknowledged(self, timeout: float) -> bool:
        """Wait until the host has acknowledged everything; False if `timeout` ran out first."""
        with self._idle:
            return self._idle.wait_for(
                lambda: not self._outbox and self._in_flight is None, timeout
            )

    def heard(self, text: str, timeout: float) -> bool:
        """Wait until a history record contains `text` (e.g. "got NAK"); False on timeout."""
        with self._idle:
            return self._idle.wait_for(
                lambda: any(text in r.what for r in self.history), timeout
            )

    # ------------------------------------------------------------------ I/O thread

    def _call(self, fn: Callable[[], T]) -> T:
        if self._thread is None or threading.current_thread() is self._thread:
            return fn()
        future: Future[T] = Future()
        with self._calls_lock:
            self._calls.append((fn, future))  # type: ignore[arg-type]
        os.write(self._wake_w, b"x")
        return future.result(timeout=PATIENCE_S)  # a backstop: a busy machine may take seconds

    def _poke(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _note(self, what: str) -> None:
        with self._idle:
            self.history.append(Record(self._clock.now(), what))
            self._idle.notify_all()

    def _run(self) -> None:
        now = self._clock.now()
        next_beat = now + self.heartbeat_interval
        next_resend = now + self.retransmit_interval
        while self._running:
            now = self._clock.now()
            deadlines = [next_beat, next_resend] + ([self._line[0][0]] if self._line else [])
            if self._resend_at is not None:
                deadlines.append(self._resend_at)
            waits = [self._wake_r] + ([self._master] if self._master >= 0 else [])
            readable, _, _ = select.select(waits, [], [], self._clock.shoe_wait(now, min(deadlines)))
            self._clock.shoe_woke()
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
                self._run_calls()
            if self._master >= 0 and self._master in readable:
                self._read_host()
            now = self._clock.now()
            self._flush_line(now)
            if self.auto_deal and self._in_flight is None and not self._outbox:
                self._auto_draw()
            if self._in_flight is None and self._outbox:
                self._transmit_next()
                next_resend = now + self.retransmit_interval
            if self._resend_at is not None and now >= self._resend_at:
                self._resend_at = None
                if not self._line:
                    self._resend("after NAK")
                    next_resend = now + self.retransmit_interval
            if now >= next_resend:
                # Resend only on a quiet line, so a slow frame is never cut by its own copy.
                if not self._line and FirmwareBug.NO_RETRANSMIT not in self.bugs:
                    self._resend("on timeout")
                next_resend = now + self.retransmit_interval
            if now >= next_beat:
                if not self._line and FirmwareBug.NO_HEARTBEAT not in self.bugs:
                    self._send(Heartbeat())
                next_beat = now + self.heartbeat_interval
        self._run_calls()

    def _run_calls(self) -> None:
        while True:
            with self._calls_lock:
                if not self._calls:
                    return
                fn, future = self._calls.popleft()
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed back to the caller's thread
                future.set_exception(exc)

    def _read_host(self) -> None:
        try:
            data = os.read(self._master, 4096)
        except OSError:
            return
        self._clock.shoe_read(len(data))
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._note(f"got damaged frame: {item.message}")
                if FirmwareBug.ACCEPT_BAD_CRC not in self.bugs or item.kind is not BAD_CRC:
                    continue
                forged = _ignore_crc(item.raw)
                if forged is None:
                    continue
                item = forged
            try:
                message = parse_host_message(item)
            except ProtocolError as exc:
                self._note(f"got bad host frame: {exc}")
                continue
            if isinstance(message, Ack):
                self._acked(message.seq)
            elif isinstance(message, Nak):
                self._note(f"got NAK (host last delivered {message.last_seq})")
                self._nak()
            elif isinstance(message, HelloRequest):
                self._note("got HELLO request")
                if FirmwareBug.NEW_SESSION_ON_HELLO in self.bugs:
                    self.session = int.from_bytes(os.urandom(4), "big")
                if FirmwareBug.FORGET_ON_HELLO in self.bugs and self._in_flight is not None:
                    self._note(f"forgot seq {self._in_flight.seq} in flight")
                    self._in_flight = None
                if not self._line:  # a slow line still busy with the last answer: let it finish
                    self._send(self._hello())
                    self._resend("after HELLO")

    def _nak(self) -> None:
        """Resend at once, or, if the frame went out less than the holdoff ago, at the end of
        the holdoff: a noisy line must not turn NAKs into a retransmission storm."""
        if self._in_flight is None or FirmwareBug.IGNORE_NAK in self.bugs:
            return
        due = self._in_flight_sent + self.nak_holdoff
        if FirmwareBug.NAK_STORM in self.bugs or self._clock.now() >= due:
            if not self._line:
                self._resend("after NAK")
        elif self._resend_at is None:
            self._resend_at = due

    def _resend(self, why: str) -> None:
        if self._in_flight is not None:
            message = self._in_flight
            self._in_flight_sent = self._clock.now()
            self._send_raw(self._frame(message), f"resent seq {message.seq} {why}")

    def _acked(self, seq: int) -> None:
        if Fault.DEAF in self._faults:
            self._note(f"lost ACK {seq} (deaf)")
            return
        if self._in_flight is None or (
            self._in_flight.seq != seq and FirmwareBug.ACK_ANY not in self.bugs
        ):
            self._note(f"got ACK {seq} (nothing of that number in flight)")
            return
        self._note(f"got ACK {seq}")
        self._last_acked = self._in_flight
        self._in_flight = None
        self._resend_at = None
        if self.auto_deal and not self._outbox:
            self._auto_draw()
        if self._outbox:
            self._transmit_next()
        with self._idle:
            self._idle.notify_all()

    def _transmit_next(self) -> None:
        message = self._outbox.popleft()
        wrap_to_zero = FirmwareBug.WRAP_TO_ZERO in self.bugs and self._seq == 255
        self._seq = 0 if wrap_to_zero else next_seq(self._seq)
        sequenced: SequencedMessage
        if isinstance(message, CardMessage):
            sequenced = CardMessage(self._seq, message.card)
        elif isinstance(message, MisreadMessage):
            sequenced = MisreadMessage(self._seq, message.reason)
        else:
            sequenced = EventMessage(self._seq, message.kind)
        self._in_flight = sequenced
        self._in_flight_sent = self._clock.now()
        self._send_raw(self._frame(sequenced), f"sent {_describe(sequenced)}")

    def _frame(self, message: Hello | Heartbeat | SequencedMessage) -> bytes:
        if isinstance(message, CardMessage):
            extra = b"\x00" if FirmwareBug.CARD_TRAILING_BYTE in self.bugs else b""
            wire = encode_frame(message.seq, MessageType.CARD, card_code(message.card) + extra)
        elif isinstance(message, MisreadMessage):
            reason = 0 if FirmwareBug.MISREAD_REASON_0 in self.bugs else message.reason
            wire = encode_frame(message.seq, MessageType.MISREAD, bytes((reason,)))
        elif isinstance(message, EventMessage):
            wire = encode_frame(message.seq, MessageType.EVENT, bytes((message.kind,)))
        else:
            wire = encode_message(message)
        if Fault.BAD_CRC in self._faults:
            frame = Decoder().feed(wire)[0]
            assert not isinstance(frame, DecodeError)
            wire = encode_frame(frame.seq, frame.type, frame.payload, crc_xor=0x5A5A)
        return wire

    def _send(self, message: Hello | Heartbeat) -> None:
        self._send_raw(self._frame(message), f"sent {type(message).__name__.upper()}")

    def _send_raw(self, wire: bytes, what: str) -> None:
        if Fault.SILENT in self._faults:
            self._note(f"silent: kept back ({what})")
            return
        self._note(what + (" with a bad CRC" if Fault.BAD_CRC in self._faults else ""))
        now = self._clock.now()
        if Fault.SLOW in self._faults:
            step = self.slow_seconds / len(wire)
            start = max(now, self._line[-1][0]) if self._line else now
            self._line.extend((start + step * (i + 1), wire[i : i + 1]) for i in range(len(wire)))
        else:
            self._line.append((now, wire))
        self._flush_line(now)

    def _flush_line(self, now: float) -> None:
        while self._line and self._line[0][0] <= now:
            _, chunk = self._line.popleft()
            if self._master < 0:
                continue  # the line is down: bytes go nowhere, as on a pulled cable
            try:
                written = self._clock.shoe_write(self._master, chunk)
            except OSError:
                written = 0
            if written < len(chunk):
                self._note(f"line full: {len(chunk) - written} bytes lost")

    def _hello(self) -> Hello:
        return Hello(self.session, self.shoe_id, SIM_FIRMWARE)

    def _queue(self, kind: EventKind) -> None:
        self._outbox.append(EventMessage(1, kind))  # seq is given when it is transmitted

    def _auto_draw(self) -> None:
        """The card-feeding rig pulls the next card; an empty shoe is reloaded and reshuffled."""
        if not self._cards:
            fresh = list(self._full_shoe)
            self._noise.shuffle(fresh)
            self._cards = deque(fresh)
            self._stacked = 0
            self.dealt.clear()
            self._empty_sent = False
        self._auto_drawn += 1
        if self.misread_every and self._auto_drawn % self.misread_every == 0:
            self._misread_next = True
        self._draw(1)

    def _draw(self, n: int) -> list[Card]:
        out: list[Card] = []
        for _ in range(n):
            if not self._cards:
                if not self._empty_sent:
                    self._empty_sent = True
                    self._queue(EventKind.SHOE_EMPTY)
                break
            card = self._cards.popleft()
            self._stacked = max(0, self._stacked - 1)
            out.append(card)
            self.dealt.append(card)
            if self._misread_next:
                self._misread_next = False
                self._outbox.append(MisreadMessage(1, MisreadReason.UNREADABLE))
            else:
                self._outbox.append(CardMessage(1, card))
            if self._cut_card is not None and len(self.dealt) == self._cut_card:
                self._queue(EventKind.CUT_CARD)
        if not self._cards and not self._empty_sent:
            self._empty_sent = True
            self._queue(EventKind.SHOE_EMPTY)
        self._note(f"dealer drew {' '.join(map(str, out)) or 'nothing'}")
        return out

    def _fault(self, fault: Fault, on: bool) -> str:
        if fault in STATE_FAULTS:
            (self._faults.add if on else self._faults.discard)(fault)
            if fault is Fault.SLOW and not on:
                self._hurry_line()
            words = f"fault {fault.value} {'on' if on else 'off'}"
        elif fault is Fault.GARBAGE:
            noise = self._noise.randbytes(12) + b"\x7e" + self._noise.randbytes(12)
            self._send_raw(noise, f"sent {len(noise)} bytes of garbage")
            words = "sent garbage"
        elif fault is Fault.DUPLICATE:
            if self._last_acked is None:
                words = "nothing acknowledged yet to duplicate"
            else:
                again = self._last_acked
                self._send_raw(self._frame(again), f"sent seq {again.seq} again (already acked)")
                words = "sent a duplicate frame"
        elif fault is Fault.MISREAD:
            self._misread_next = True
            words = "the next card drawn will be a misread"
        elif fault is Fault.DROP:
            self._close_line()
            words = "line dropped"
        else:
            if self._master < 0:
                self._open_line()
            remain = sorted(f.value for f in self._faults)
            if self._misread_next:
                remain.append("misread (the next card)")
            still = f"faults still on: {', '.join(remain)}" if remain else "no faults remain on"
            words = f"line restored on {self.port}; {still}"
        self._note(words)
        return words

    def _hurry_line(self) -> None:
        """Bytes still trickling out go at once: the line is fast again."""
        now = self._clock.now()
        self._line = deque((now, chunk) for _, chunk in self._line)

    def _clear(self) -> str:
        self._faults.clear()
        self._hurry_line()
        self._note("faults cleared")
        return "faults cleared"

    def _open_line(self) -> None:
        self._master, self._slave = os.openpty()
        # Raw from the start: a cooked tty would echo frames back and turn 0D into 0A.
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self._slave_path = os.ttyname(self._slave)
        self._decoder = Decoder()
        self._line.clear()
        if self._link:
            temp = f"{self._link}.{os.getpid()}.tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            os.symlink(self._slave_path, temp)
            os.replace(temp, self._link)  # atomic: a reader never sees a half-made link

    def _close_line(self) -> None:
        link = self._link
        if link and os.path.islink(link) and os.readlink(link) == self._slave_path:
            os.unlink(link)
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1
        self._slave_path = ""
        self._line.clear()


def _ignore_crc(stuffed: bytes) -> Frame | None:
    """A damaged host frame read as if its CRC were right (the accept-bad-crc bug only)."""
    body = stuffed.replace(b"\x7d\x5e", b"\x7e").replace(b"\x7d\x5d", b"\x7d")
    if len(body) < 5:
        return None
    return Frame(body[1], body[2], body[3:-2])


def _describe(message: SequencedMessage) -> str:
    if isinstance(message, CardMessage):
        return f"CARD seq {message.seq} {message.card}"
    if isinstance(message, MisreadMessage):
        return f"MISREAD seq {message.seq} {message.reason.name}"
    return f"EVENT seq {message.seq} {message.kind.name}"
