"""`tablectl shoe-check URL`: the conformance kit for a shoe's firmware, run from the host's side.

It opens the shoe by device path or pyserial URL, plays the host of hardware/shoe-protocol.md
and runs named cases against the shoe, one line each (pass or FAIL, and why in plain words);
the exit status is 0 only when every case passed, and `--junit FILE` writes JUnit XML for a CI
rig. Each case checks one promise the host relies on; each has a deliberate firmware bug in the
simulated shoe that it catches (`FirmwareBug.catches`), which the test suite proves.

Cards must keep coming while it runs: a person passes cards through the shoe, a card feeder
does, or the simulated shoe's `--auto-deal` rig. Some cases need a misread (a card face down).

    tablectl shoe-check /dev/serial/by-id/usb-Shoe-if00 --junit shoe.xml
    tablectl sim-shoe --link /tmp/shoe --auto-deal --misread-every 4 &
    tablectl shoe-check /tmp/shoe
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import serial

from drivers.shoe.clock import WallClock
from drivers.shoe.protocol import (
    Ack,
    DecodeError,
    Decoder,
    Frame,
    Hello,
    HelloRequest,
    MessageType,
    MisreadReason,
    Nak,
    ProtocolError,
    encode_frame,
    encode_message,
    next_seq,
    parse_card_code,
    parse_shoe_message,
)

SEQUENCED = frozenset({MessageType.CARD, MessageType.MISREAD, MessageType.EVENT})


class CaseFailed(Exception):
    """A case found the shoe breaking the protocol; the text says how, in plain words."""


@dataclass(frozen=True, slots=True)
class Timing:
    """What the firmware was built with (the protocol's defaults) and how long to wait for cards."""

    heartbeat: float = 1.0
    retransmit: float = 0.25
    nak_holdoff: float = 0.05
    wait: float = 30.0

    @property
    def reply(self) -> float:
        """How long the shoe may take to answer a HELLO_REQUEST or a NAK."""
        return max(0.5, 2 * self.retransmit)


@dataclass(frozen=True, slots=True)
class Received:
    at: float
    frame: Frame

    @property
    def sequenced(self) -> bool:
        return self.frame.type in SEQUENCED

    def same(self, other: Received | None) -> bool:
        return other is not None and (self.frame.seq, self.frame.type, self.frame.payload) == (
            other.frame.seq, other.frame.type, other.frame.payload
        )


def _words(frame: Frame) -> str:
    name = MessageType(frame.type).name if frame.type in set(MessageType) else f"0x{frame.type:02X}"
    text = f"{name} SEQ {frame.seq}"
    if frame.type == MessageType.CARD:
        try:
            text += f" ({parse_card_code(frame.payload)})"
        except ValueError:
            text += f" (bytes {frame.payload.hex(' ')})"
    return text


class Host:
    """The kit's side of the line: sends host frames, records every intact frame with its time."""

    def __init__(
        self, url: str, baudrate: int, timing: Timing, say: Callable[[str], None],
        clock: WallClock | None = None,
    ) -> None:
        self.url, self.baudrate, self.timing, self.say = url, baudrate, timing, say
        # Real time for a real shoe; a simulated one may share its clock with the kit (clock.py).
        self.clock = clock or WallClock()
        self.frames: list[Received] = []
        self.damaged = 0
        self.pending: Received | None = None  # the sequenced frame in flight, not acked by us
        self.acked: Received | None = None
        self._port: serial.SerialBase | None = None
        self._decoder = Decoder()

    def open(self) -> None:
        self._port = self.clock.host_open(
            lambda: serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=0.005)
        )
        self._decoder = Decoder()

    def close(self) -> None:
        if self._port is not None:
            self._port.close()
            self._port = None
            self.clock.host_closed()

    def send(self, data: bytes) -> float:
        assert self._port is not None
        self.clock.host_wrote(len(data))
        self._port.write(data)
        self._port.flush()
        return self.clock.now()

    def ack(self, frame: Received) -> float:
        self.acked, self.pending = frame, None
        return self.send(encode_message(Ack(frame.frame.seq)))

    def nak(self) -> float:
        return self.send(encode_message(Nak(self.acked.frame.seq if self.acked else 0)))

    def hello_request(self) -> float:
        return self.send(encode_message(HelloRequest()))

    def pump(self, until: float, *, early: bool = False) -> None:
        """Read what comes until `until` (monotonic), recording intact frames; with `early`,
        return as soon as a frame came."""
        assert self._port is not None
        while True:
            count = len(self.frames)
            data = self._port.read(self._port.in_waiting or 1)
            self.clock.host_read(len(data))
            now = self.clock.now()
            for item in self._decoder.feed(data):
                if isinstance(item, DecodeError):
                    self.damaged += 1
                    continue
                got = Received(now, item)
                self.frames.append(got)
                if got.sequenced and not got.same(self.acked):
                    self.pending = got
            if now >= until or (early and len(self.frames) > count):
                return
            if not data:
                self.clock.let_pass(until)

    def since(self, at: float) -> Iterator[Received]:
        return (r for r in self.frames if r.at >= at)

    def after(self, frame: Received) -> list[Received]:
        """The frames read after `frame`, in the order they came on the line. Not `since(frame.at)`:
        frames read in one chunk share a time, so that would also give those that came before it."""
        i = next(i for i, r in enumerate(self.frames) if r is frame)
        return self.frames[i + 1 :]

    def wait_for(
        self, test: Callable[[Received], bool], timeout: float, after: float | Received
    ) -> Received | None:
        """The first frame passing `test` read at or after time `after` (or, given a frame,
        read after that one), waiting up to `timeout` seconds."""
        deadline = self.clock.now() + timeout
        if isinstance(after, Received):
            seen = next(i for i, r in enumerate(self.frames) if r is after) + 1
            after = float("-inf")
        else:
            seen = next((i for i, r in enumerate(self.frames) if r.at >= after), len(self.frames))
        while True:
            for got in self.frames[seen:]:
                if got.at >= after and test(got):
                    return got
            seen = len(self.frames)
            now = self.clock.now()
            if now >= deadline:
                return None
            self.pump(min(deadline, now + 0.05), early=True)

    def next_new(self, what: str = "a card") -> Received:
        """Acknowledge what is in flight, then wait for the next new sequenced frame."""
        if self.pending is not None:
            self.ack(self.pending)
        start = self.clock.now()
        prompted = False
        while True:
            got = self.wait_for(
                lambda r: r.sequenced and not r.same(self.acked), min(2.0, self.timing.wait), start
            )
            if got is not None:
                self.pending = got
                return got
            if self.clock.now() - start >= self.timing.wait:
                raise CaseFailed(
                    f"no new card, misread or event came in {self.timing.wait:g} s: pass cards "
                    "through the shoe while the check runs"
                )
            if not prompted:
                prompted = True
                self.say(f"  waiting for {what}: pass cards through the shoe")

    def copies(self, of: Received, after: float) -> list[Received]:
        return [r for r in self.since(after) if r.same(of)]


# ---------------------------------------------------------------------------- the cases


def hello_and_session(host: Host) -> str:
    hellos: list[tuple[float, Hello]] = []
    for attempt in (1, 2):
        sent = host.hello_request()
        got = host.wait_for(lambda r: r.frame.type == MessageType.HELLO, host.timing.reply, sent)
        if got is None:
            raise CaseFailed(f"no HELLO came within {host.timing.reply:g} s of HELLO_REQUEST {attempt}")
        if got.frame.seq != 0:
            raise CaseFailed(f"HELLO came with SEQ {got.frame.seq}; a HELLO has SEQ 0")
        try:
            message = parse_shoe_message(got.frame)
        except ProtocolError as exc:
            raise CaseFailed(f"the HELLO is not well formed: {exc}") from None
        assert isinstance(message, Hello)
        hellos.append((got.at - sent, message))
    (first_delay, first), (_, second) = hellos
    if second.session != first.session:
        raise CaseFailed(
            f"SESSION changed from {first.session:08X} to {second.session:08X} on a second "
            "HELLO_REQUEST without a power cycle: a host could not tell a resent card from a new one"
        )
    return (
        f"HELLO in {first_delay * 1000:.0f} ms from {first.shoe_id!r} firmware {first.firmware!r}; "
        f"session {first.session:08X} kept across two requests"
    )


def heartbeat_timing(host: Host) -> str:
    beat = host.timing.heartbeat
    start = host.clock.now()
    host.pump(start + 3.5 * beat)
    beats = [r for r in host.since(start) if r.frame.type == MessageType.HEARTBEAT]
    for r in beats:
        if r.frame.seq != 0 or r.frame.payload:
            raise CaseFailed(f"a HEARTBEAT came with SEQ {r.frame.seq} and {len(r.frame.payload)} "
                             "payload bytes; it has SEQ 0 and none")
    if len(beats) < 2:
        raise CaseFailed(f"{len(beats)} HEARTBEAT in {3.5 * beat:.2f} s; the shoe sends one every "
                         f"{beat:g} s")
    times = [start] + [r.at for r in beats]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    longest = max(gaps)
    if longest > 1.5 * beat:
        raise CaseFailed(f"{longest:.2f} s between heartbeats; at most {beat:g} s (+50%)")
    shortest = min(gaps[1:]) if len(gaps) > 1 else beat
    if shortest < 0.5 * beat:
        raise CaseFailed(f"heartbeats {shortest:.3f} s apart; one every {beat:g} s, not a flood")
    return f"{len(beats)} heartbeats, {shortest:.2f} to {longest:.2f} s apart"


def card_framing(host: Host) -> str:
    cards, previous = 0, None
    for _ in range(24):
        got = host.next_new()
        frame = got.frame
        if previous is not None and frame.seq != next_seq(previous):
            raise CaseFailed(f"SEQ {previous} was followed by SEQ {frame.seq}, not {next_seq(previous)}")
        previous = frame.seq
        if frame.type != MessageType.CARD:
            continue
        if frame.seq == 0:
            raise CaseFailed(f"{_words(frame)}: a CARD has SEQ 1-255")
        if len(frame.payload) != 2:
            raise CaseFailed(f"CARD SEQ {frame.seq} carries {len(frame.payload)} payload bytes "
                             f"({frame.payload.hex(' ')}); a card is 2")
        try:
            parse_card_code(frame.payload)
        except ValueError:
            raise CaseFailed(f"CARD SEQ {frame.seq} names no card in canonical notation: "
                             f"{frame.payload.hex(' ')}") from None
        cards += 1
        if cards == 6:
            return f"6 CARD frames well formed and numbered in order, the last SEQ {frame.seq}"
    raise CaseFailed(f"only {cards} CARD frames among 24 sequenced frames")


def misread_framing(host: Host) -> str:
    for _ in range(40):
        got = host.next_new("a misread (a card face down)")
        frame = got.frame
        if frame.type != MessageType.MISREAD:
            continue
        if frame.seq == 0:
            raise CaseFailed("a MISREAD came with SEQ 0; it has SEQ 1-255")
        if len(frame.payload) != 1:
            raise CaseFailed(f"MISREAD SEQ {frame.seq} carries {len(frame.payload)} payload bytes; "
                             "a reason is 1")
        reasons = {r.value for r in MisreadReason if r.value < 0x80}
        if frame.payload[0] not in reasons:
            raise CaseFailed(f"MISREAD SEQ {frame.seq} gives reason 0x{frame.payload[0]:02X}; the "
                             "reasons are 01 unreadable, 02 two cards, 03 jammed")
        return f"MISREAD SEQ {frame.seq} reason {MisreadReason(frame.payload[0]).name.lower()}"
    raise CaseFailed("no MISREAD among 40 sequenced frames: pass a card the shoe cannot read")


def retransmit_until_acked(host: Host) -> str:
    step = host.timing.retransmit
    frame = host.next_new()
    window = 3.5 * step
    host.pump(frame.at + window)
    # a resend of the frame acknowledged last may come just before this one, in the same read
    others = [r for r in host.after(frame) if r.sequenced and not r.same(frame)]
    if others:
        raise CaseFailed(f"{_words(others[0].frame)} came while {_words(frame.frame)} was not "
                         "acknowledged; one frame is in flight at a time")
    times = [r.at for r in host.copies(frame, frame.at)]
    if len(times) < 2:
        raise CaseFailed(f"{_words(frame.frame)} was not sent again in {window:.2f} s without an "
                         f"ACK; the shoe resends every {step:g} s until acknowledged")
    times.append(host.clock.now())
    longest = max(b - a for a, b in itertools.pairwise(times))
    if longest > 1.6 * step:
        raise CaseFailed(f"{longest:.2f} s between resends of {_words(frame.frame)}; every {step:g} s")
    acked = host.ack(frame)
    host.pump(acked + 2.5 * step)
    late = [r for r in host.copies(frame, acked + 1.5 * step)]
    if late:
        raise CaseFailed(f"{_words(frame.frame)} was still resent {late[-1].at - acked:.2f} s after "
                         "its ACK")
    return f"{len(times) - 2} resends of {_words(frame.frame)}, at most {longest:.2f} s apart; none after the ACK"


def retransmit_after_nak(host: Host) -> str:
    step, hold = host.timing.retransmit, host.timing.nak_holdoff
    frame = host.next_new()
    window, interval = 3 * step, max(1.5 * hold, 0.01)
    start = host.clock.now()
    while host.clock.now() < start + window:
        host.nak()
        host.pump(host.clock.now() + interval)
    answered = len(host.copies(frame, start))
    on_timer = window / step
    if answered < 2 * on_timer + 1:
        raise CaseFailed(f"{answered} resends for {int(window / interval)} NAKs {interval * 1000:.0f} ms "
                         f"apart; its timer alone gives {on_timer:.0f}: the shoe does not resend at once after a NAK")
    # The storm: bursts of NAKs, a holdoff apart. A shoe that keeps its holdoff resends at most
    # twice a burst (at once, or once the holdoff is over), whatever the pace; one that answers
    # every NAK resends for each. Counting by bursts, not by time, keeps the verdict the same on a
    # busy host that cannot send NAKs as fast as it is asked to.
    storm_start, bursts, burst = host.clock.now(), 10, 10
    for _ in range(bursts):
        for _ in range(burst):
            host.nak()
        host.pump(host.clock.now() + hold)
    host.pump(host.clock.now() + hold)
    stormed = len(host.copies(frame, storm_start))
    elapsed = host.clock.now() - storm_start
    allowed = 2 * bursts + elapsed / step + 2  # the holdoff's, and its retransmit timer's
    if stormed > allowed:
        raise CaseFailed(f"{stormed} resends for {bursts} bursts of {burst} NAKs a holdoff "
                         f"({hold * 1000:.0f} ms) apart; at most one per holdoff")
    host.ack(frame)
    return f"{answered} resends for NAKs {interval * 1000:.0f} ms apart; {stormed} in a NAK storm"


def duplicate_after_lost_ack(host: Host) -> str:
    step = host.timing.retransmit
    frame = host.next_new()
    # Our ACK is "lost": the shoe must send the same frame again, byte for byte.
    again = host.wait_for(lambda r: r.sequenced and r.at > frame.at, 1.5 * step, frame.at)
    if again is None:
        host.nak()
        again = host.wait_for(lambda r: r.sequenced and r.at > frame.at, host.timing.reply, frame.at)
    if again is None:
        raise CaseFailed(f"{_words(frame.frame)} was never sent again without its ACK")
    if not again.same(frame):
        raise CaseFailed(f"{_words(frame.frame)} was sent again as {_words(again.frame)}: a resend "
                         "keeps its SEQ and content, or a host counts the card twice")
    # Both ACKs arrive: the resent one's and, late, the lost one's.
    host.ack(frame)
    host.ack(frame)
    following = host.next_new()
    if following.frame.seq != next_seq(frame.frame.seq):
        raise CaseFailed(f"{_words(following.frame)} followed {_words(frame.frame)}")
    host.pump(following.at + step / 2)
    host.nak()
    seen = host.wait_for(lambda r: r.sequenced and r.at > following.at, 1.5 * step, following.at)
    if seen is None:
        raise CaseFailed(f"{_words(following.frame)} was not sent again before its ACK, after a NAK")
    if not seen.same(following):
        raise CaseFailed(f"the repeated ACK {frame.frame.seq} was taken as the ACK of "
                         f"{_words(following.frame)}, which the shoe dropped: it sent "
                         f"{_words(seen.frame)} next, and that card is lost")
    return f"{_words(frame.frame)} resent unchanged; a repeated ACK did not acknowledge SEQ {following.frame.seq}"


def reconnect_with_frame_in_flight(host: Host) -> str:
    step = host.timing.retransmit
    frame = host.next_new()
    host.close()
    host.clock.sleep(2 * step)
    host.open()
    sent = host.hello_request()
    hello = host.wait_for(lambda r: r.frame.type == MessageType.HELLO, host.timing.reply, sent)
    if hello is None:
        raise CaseFailed(f"no HELLO within {host.timing.reply:g} s of HELLO_REQUEST after reopening")
    first = host.wait_for(lambda r: r.sequenced, 3 * step, hello)
    if first is None:
        raise CaseFailed(f"{_words(frame.frame)} was not sent again after reconnecting")
    if not first.same(frame):
        raise CaseFailed(f"after reconnecting the shoe sent {_words(first.frame)}, not "
                         f"{_words(frame.frame)} which was never acknowledged: that card is lost")
    host.pending = first
    return f"{_words(frame.frame)} resent after the port was closed and reopened"


def damaged_host_frames(host: Host) -> str:
    step = host.timing.retransmit
    frame = host.next_new()
    seq = bytes((frame.frame.seq,))
    host.send(encode_frame(0, MessageType.ACK, seq, crc_xor=0x0101))  # an ACK with a bad CRC
    host.send(encode_message(Ack(frame.frame.seq))[:4] + b"\x7e")  # an ACK cut short
    host.send(b"\x7e\x01\x00\x81\x7d\x11\x8a\x78\x7e")  # a bad escape
    host.send(bytes(range(1, 126)) * 2 + b"\x7e")  # noise longer than any frame
    host.send(encode_frame(0, 0x99, b"\x01"))  # intact, of no host type
    sent = host.nak()
    seen = host.wait_for(lambda r: r.sequenced and r.at > frame.at, max(3 * step, host.timing.reply), sent)
    if seen is None:
        raise CaseFailed(f"{_words(frame.frame)} was not sent again after damaged frames and a NAK")
    if not seen.same(frame):
        raise CaseFailed(f"after a damaged ACK {frame.frame.seq} the shoe sent {_words(seen.frame)}: "
                         f"it took the damaged ACK as an ACK, and {_words(frame.frame)} could be lost")
    host.ack(frame)
    sent = host.hello_request()
    if host.wait_for(lambda r: r.frame.type == MessageType.HELLO, host.timing.reply, sent) is None:
        raise CaseFailed("the shoe stopped answering HELLO_REQUEST after damaged host frames")
    return f"{_words(frame.frame)} kept in flight through damaged host frames; still answering"


def sequence_wrap(host: Host) -> str:
    previous = host.next_new().frame.seq
    for _ in range(300):
        got = host.next_new()
        seq = got.frame.seq
        if seq != next_seq(previous):
            raise CaseFailed(f"after SEQ {previous} the shoe sent SEQ {seq}; the next is {next_seq(previous)}")
        if previous == 255:
            return "SEQ 255 was followed by 1"
        previous = seq
    raise CaseFailed("the sequence did not wrap in 300 frames")


CASES: dict[str, Callable[[Host], str]] = {
    "hello-and-session": hello_and_session,
    "heartbeat-timing": heartbeat_timing,
    "card-framing": card_framing,
    "misread-framing": misread_framing,
    "retransmit-until-acked": retransmit_until_acked,
    "retransmit-after-nak": retransmit_after_nak,
    "duplicate-after-lost-ack": duplicate_after_lost_ack,
    "reconnect-with-frame-in-flight": reconnect_with_frame_in_flight,
    "damaged-host-frames": damaged_host_frames,
    "sequence-wrap": sequence_wrap,
}


@dataclass(frozen=True, slots=True)
class Result:
    case: str
    passed: bool
    why: str
    seconds: float

    @property
    def line(self) -> str:
        return f"{'pass' if self.passed else 'FAIL'} {self.case}: {self.why}"


def run_cases(
    url: str,
    *,
    baudrate: int = 115200,
    timing: Timing = Timing(),
    cases: list[str] | None = None,
    say: Callable[[str], None] = lambda line: None,
    clock: WallClock | None = None,
) -> list[Result]:
    """Run the named cases (all, in order, by default); `say` gets each result line as it ends.
    `clock`: real time (a real shoe), or a simulated shoe's SharedClock. OSError or
    SerialException if the port cannot be opened at all."""
    host = Host(url, baudrate, timing, say, clock)
    host.open()
    results: list[Result] = []
    try:
        for name in cases or list(CASES):
            start = time.monotonic()
            try:
                result = Result(name, True, CASES[name](host), time.monotonic() - start)
            except CaseFailed as exc:
                result = Result(name, False, str(exc), time.monotonic() - start)
            except (OSError, serial.SerialException) as exc:
                result = Result(name, False, f"the port failed: {exc}", time.monotonic() - start)
                try:
                    host.close()
                    host.open()
                except (OSError, serial.SerialException):
                    pass
            results.append(result)
            say(result.line)
    finally:
        host.close()
    return results


def junit_xml(results: list[Result], url: str) -> bytes:
    suite = ET.Element(
        "testsuite", name="shoe-check", tests=str(len(results)),
        failures=str(sum(not r.passed for r in results)), errors="0",
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="url", value=url)
    for r in results:
        case = ET.SubElement(suite, "testcase", classname="shoe-check", name=r.case,
                             time=f"{r.seconds:.3f}")
        if r.passed:
            ET.SubElement(case, "system-out").text = r.why
        else:
            ET.SubElement(case, "failure", message=r.why).text = r.why
    xml: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return xml


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Check a card-reading shoe's firmware against hardware/shoe-protocol.md."
    parser.add_argument("url", metavar="URL", help="the shoe's device path or pyserial URL")
    parser.add_argument("--junit", metavar="FILE", help="also write the results as JUnit XML")
    parser.add_argument("--baudrate", type=int, default=115200, help="line speed (115200)")
    parser.add_argument("--case", action="append", choices=list(CASES), metavar="NAME",
                        help="run only this case (repeatable): " + ", ".join(CASES))
    defaults = Timing()
    parser.add_argument("--heartbeat", type=float, default=defaults.heartbeat,
                        help="seconds between the shoe's heartbeats, as built (1.0)")
    parser.add_argument("--retransmit", type=float, default=defaults.retransmit,
                        help="seconds between the shoe's resends, as built (0.25)")
    parser.add_argument("--nak-holdoff", type=float, default=defaults.nak_holdoff,
                        help="the shoe's least seconds between resends after NAKs (0.05)")
    parser.add_argument("--wait", type=float, default=defaults.wait,
                        help="seconds to wait for each card to be passed through the shoe (30)")


def run(args: argparse.Namespace) -> int:
    for name in ("heartbeat", "retransmit", "nak_holdoff", "wait"):
        if not getattr(args, name) > 0:
            print(f"tablectl shoe-check: --{name.replace('_', '-')} is seconds above 0, "
                  f"not {getattr(args, name)}", file=sys.stderr)
            return 2
    timing = Timing(args.heartbeat, args.retransmit, args.nak_holdoff, args.wait)

    def say(line: str) -> None:
        print(line, flush=True)

    try:
        results = run_cases(args.url, baudrate=args.baudrate, timing=timing, cases=args.case, say=say)
    except (OSError, ValueError, serial.SerialException) as exc:
        print(f"tablectl shoe-check: cannot open the shoe at {args.url}: {exc}", file=sys.stderr)
        return 2
    passed = sum(r.passed for r in results)
    print(f"{passed} of {len(results)} cases passed on {args.url}")
    if args.junit:
        with open(args.junit, "wb") as out:
            out.write(junit_xml(results, args.url))
    return 0 if passed == len(results) else 1
