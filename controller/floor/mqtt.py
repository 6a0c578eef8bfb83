"""The floor store's own MQTT 5 client: only what a store consumer needs, read in bulk.

paho reads one packet at a time (several small reads and a message object with its properties a
packet); a live entry cost the consumer 56-102 us of CPU, most of it there (floor_profile). This
client reads what the socket holds at once (up to READ_BYTES), cuts every whole packet out of it,
and hands the PUBLISHes over as a list. It speaks only what the consumer uses:

- CONNECT with clean start off and a session expiry (`session_expiry_s`): the broker keeps the
  session while the consumer is away, so a consumer killed mid-batch is sent its unacknowledged
  messages again when it comes back (within the expiry; past it the store asks the tables);
- SUBSCRIBE (the SUBACK is checked: a refused filter is an error, never a silent consumer);
- PUBLISH in, QoS 0 and 1: a QoS 1 message is acknowledged (PUBACK) only when the caller says so
  (`ack`), which the consumer does only once the batch holding it has been committed;
- PUBLISH out, QoS 0 and 1, with a response topic and correlation data (the catch-up asks and
  the history answers), at most the broker's Receive Maximum in flight, the rest sent as PUBACKs
  come back (at most PENDING_MOST waiting: beyond that `publish` says no);
- PINGREQ every keepalive/2 seconds of silence on our side; a broker silent for 1.5 keepalives is
  a dead connection;
- a packet that does not parse (or one this client never asked for) ends the connection with a
  `MalformedPacket` naming what was wrong.

One thread (`run`) does all the socket's input and output, TLS or not (an SSL object is not for
two threads at once): `ack` and `publish`, from any thread, queue their bytes and wake it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import select
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable
from typing import NamedTuple

#: At most this many bytes are read from the socket at once.
READ_BYTES = 256 * 1024
#: Outgoing QoS 1 messages waiting for room in the broker's Receive Maximum: at most this many.
PENDING_MOST = 1000
#: The biggest packet accepted from the broker (a catch-up page is a few hundred kB).
MAX_PACKET = 16 * 1024 * 1024

CONNECT, CONNACK, PUBLISH, PUBACK = 1, 2, 3, 4
SUBSCRIBE, SUBACK, PINGREQ, PINGRESP, DISCONNECT = 8, 9, 12, 13, 14

_PINGREQ = b"\xc0\x00"
_DISCONNECT = b"\xe0\x00"
#: DISCONNECT, normal, with Session Expiry Interval 0: the session ends now.
_END_SESSION = b"\xe0\x07\x00\x05\x11\x00\x00\x00\x00"
_ACK = struct.Struct("!BBH")

# Property identifiers (MQTT 5, 2.2.2.2) and how each is encoded.
_BYTE, _U16, _U32, _VAR, _STR, _BIN, _PAIR = range(7)
_PROPERTY = {
    0x01: _BYTE, 0x02: _U32, 0x03: _STR, 0x08: _STR, 0x09: _BIN, 0x0B: _VAR, 0x11: _U32, 0x12: _STR,
    0x13: _U16, 0x15: _STR, 0x16: _BIN, 0x17: _BYTE, 0x18: _U32, 0x19: _BYTE, 0x1A: _STR, 0x1C: _STR,
    0x1F: _STR, 0x21: _U16, 0x22: _U16, 0x23: _U16, 0x24: _BYTE, 0x25: _BYTE, 0x26: _PAIR, 0x27: _U32,
    0x28: _BYTE, 0x29: _BYTE, 0x2A: _BYTE,
}  # fmt: skip
RESPONSE_TOPIC, CORRELATION_DATA, SESSION_EXPIRY, RECEIVE_MAXIMUM = 0x08, 0x09, 0x11, 0x21
SERVER_KEEP_ALIVE, REASON_STRING, MAXIMUM_PACKET_SIZE = 0x13, 0x1F, 0x27


class MqttError(Exception):
    """The connection cannot go on (refused, closed, or silent)."""


class MalformedPacket(MqttError):
    """The broker sent bytes that are not the MQTT 5 this client speaks."""


class Received(NamedTuple):
    topic: str
    payload: bytes
    mid: int  # 0 at QoS 0
    qos: int
    retain: bool
    response_topic: str | None
    correlation: bytes | None


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("!H", len(raw)) + raw


def _binary(raw: bytes) -> bytes:
    return struct.pack("!H", len(raw)) + raw


def _packet(first: int, body: bytes) -> bytes:
    return bytes([first]) + _varint(len(body)) + body


def _header(data: bytes, pos: int) -> tuple[int, int] | None:
    """The remaining length of the packet at `pos` and where its body starts; None if the bytes
    so far end inside the fixed header."""
    end = len(data)
    value = shift = 0
    at = pos + 1
    for _ in range(4):
        if at >= end:
            return None
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
    raise MalformedPacket("fixed header: a remaining length longer than 4 bytes")


def _read_varint(data: bytes, pos: int, end: int, what: str) -> tuple[int, int]:
    value = shift = 0
    for _ in range(4):
        if pos >= end:
            raise MalformedPacket(f"{what}: a variable byte integer runs past the packet")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise MalformedPacket(f"{what}: a variable byte integer longer than 4 bytes")


def parse_properties(data: bytes, pos: int, end: int, what: str) -> tuple[dict[int, object], int]:
    """The properties at `pos` (their length first): {identifier: value} and where they end."""
    length, pos = _read_varint(data, pos, end, what)
    stop = pos + length
    if stop > end:
        raise MalformedPacket(f"{what}: properties of {length} bytes run past the packet")
    found: dict[int, object] = {}
    while pos < stop:
        ident = data[pos]
        kind = _PROPERTY.get(ident)
        pos += 1
        if kind is None:
            raise MalformedPacket(f"{what}: unknown property 0x{ident:02x}")
        value: object
        if kind == _BYTE:
            need = 1
        elif kind == _U16:
            need = 2
        elif kind == _U32:
            need = 4
        elif kind == _VAR:
            value, pos = _read_varint(data, pos, stop, what)
            found[ident] = value
            continue
        else:
            if pos + 2 > stop:
                raise MalformedPacket(f"{what}: property 0x{ident:02x} runs past the properties")
            need = 2 + int.from_bytes(data[pos : pos + 2], "big")
            if kind == _PAIR:
                if pos + need + 2 > stop:
                    raise MalformedPacket(f"{what}: property 0x{ident:02x} runs past the properties")
                need += 2 + int.from_bytes(data[pos + need : pos + need + 2], "big")
        if pos + need > stop:
            raise MalformedPacket(f"{what}: property 0x{ident:02x} runs past the properties")
        raw = data[pos : pos + need]
        pos += need
        if kind in (_BYTE, _U16, _U32):
            value = int.from_bytes(raw, "big")
        elif kind == _STR:
            try:
                value = raw[2:].decode()
            except UnicodeDecodeError as exc:
                raise MalformedPacket(f"{what}: property 0x{ident:02x} is not UTF-8") from exc
        elif kind == _BIN:
            value = bytes(raw[2:])
        else:
            continue  # a user property: not used here
        found[ident] = value
    return found, stop


class Connection:
    """One connection to the broker (a new one for each reconnection).

    conn = Connection("127.0.0.1", 1883, "tablectl-floor-store-1", session_expiry_s=120, receive_maximum=4000)
    session_present = conn.open(10.0)
    conn.subscribe([("$share/g/tablectl/+/+/surveillance/entry", 1)])
    conn.run(deliver, wait_room)   # on its own thread, until the connection ends (an MqttError, OSError)
    conn.ack(mids) / conn.publish(...) from any thread; conn.close()
    """

    def __init__(
        self,
        host: str,
        port: int,
        client_id: str,
        *,
        keepalive: int = 30,
        session_expiry_s: int = 0,
        receive_maximum: int = 65535,
        username: str | None = None,
        password: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.host, self.port, self.client_id = host, port, client_id
        self.keepalive = keepalive
        self.session_expiry_s = session_expiry_s
        self.receive_maximum = receive_maximum
        self.username, self.password = username, password
        self.ssl_context = ssl_context
        self.sock: socket.socket | None = None
        self.session_present = False
        self.closed = threading.Event()
        self._lock = threading.Lock()  # the outbox, the ids and what is in flight
        self._outbox: list[bytes] = []
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._woken = False
        self._dead = False  # the wake pipe is closed: nothing more to wake
        self._next_id = 0
        self._inflight: set[int] = set()  # our QoS 1 publishes the broker has not acknowledged
        self._pending: collections.deque[tuple[int, bytes, bytes]] = collections.deque()  # (first, head, rest)
        self._broker_receive_maximum = 65535
        self._subscribing: dict[int, list[str]] = {}
        self._buffer = b""
        self._topics: dict[bytes, str] = {}
        self._last_out = self._last_in = time.monotonic()
        self._ping_due = False

    # -- opening ----------------------------------------------------------------------------------

    def open(self, timeout: float) -> bool:
        """Connect, send CONNECT and read the CONNACK. True if the broker kept our session."""
        try:
            raw = socket.create_connection((self.host, self.port), timeout=timeout)
        except BaseException:
            self._close_socket()  # the wake pipe too: a broker down for days is retried every few seconds
            raise
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock: socket.socket = raw
        try:
            if self.ssl_context is not None:
                sock = self.ssl_context.wrap_socket(raw, server_hostname=self.host)
            self.sock = sock
            flags = 0x00  # clean start off: the broker keeps the session for session_expiry_s
            body = bytearray(b"\x00\x04MQTT\x05")
            if self.username is not None:
                flags |= 0x80
                if self.password is not None:
                    flags |= 0x40
            body.append(flags)
            body += struct.pack("!H", self.keepalive)
            props = bytes([SESSION_EXPIRY]) + struct.pack("!I", self.session_expiry_s)
            props += bytes([RECEIVE_MAXIMUM]) + struct.pack("!H", self.receive_maximum)
            props += bytes([MAXIMUM_PACKET_SIZE]) + struct.pack("!I", MAX_PACKET)
            body += _varint(len(props)) + props
            body += _string(self.client_id)
            if self.username is not None:
                body += _string(self.username)
                if self.password is not None:
                    body += _binary(self.password.encode())
            sock.sendall(_packet(CONNECT << 4, bytes(body)))
            deadline = time.monotonic() + timeout
            while True:
                packet = self._one_packet(deadline)
                if packet is not None:
                    break
            first, data = packet
            if first >> 4 != CONNACK or len(data) < 2:
                raise MalformedPacket(f"the broker answered CONNECT with packet type {first >> 4}, not a CONNACK")
            reason = data[1]
            props_found, _ = parse_properties(data, 2, len(data), "CONNACK") if len(data) > 2 else ({}, 2)
            if reason >= 0x80:
                why = props_found.get(REASON_STRING)
                raise MqttError(f"the broker refused the connection: reason 0x{reason:02x}{f' ({why})' if why else ''}")
            self.session_present = bool(data[0] & 0x01)
            self._broker_receive_maximum = int(props_found.get(RECEIVE_MAXIMUM, 65535))  # type: ignore[call-overload]
            if SERVER_KEEP_ALIVE in props_found:
                self.keepalive = int(props_found[SERVER_KEEP_ALIVE])  # type: ignore[call-overload]
            sock.settimeout(None)
            sock.setblocking(False)
            self._last_out = self._last_in = time.monotonic()
            return self.session_present
        except BaseException:
            sock.close()
            self.sock = None
            self._close_socket()
            raise

    def _one_packet(self, deadline: float) -> tuple[int, bytes] | None:
        """Blocking, while opening only: one packet, or None if more bytes are needed."""
        assert self.sock is not None
        packet = self._cut()
        if packet is not None:
            return packet
        left = deadline - time.monotonic()
        if left <= 0:
            raise MqttError("the broker did not answer CONNECT in time")
        self.sock.settimeout(left)
        chunk = self.sock.recv(READ_BYTES)
        if not chunk:
            raise MqttError("the broker closed the connection before its CONNACK")
        self._buffer += chunk
        return self._cut()

    def _cut(self) -> tuple[int, bytes] | None:
        data = self._buffer
        header = _header(data, 0) if data else None
        if header is None:
            return None
        length, pos = header
        if pos + length > len(data):
            return None
        self._buffer = data[pos + length :]
        return data[0], data[pos : pos + length]

    # -- from any thread ----------------------------------------------------------------------------

    def subscribe(self, filters: Iterable[tuple[str, int]]) -> None:
        """Send one SUBSCRIBE; its SUBACK is checked by `run` (a refused filter ends the connection)."""
        listed = list(filters)
        with self._lock:
            mid = self._new_id()
            self._subscribing[mid] = [f for f, _ in listed]
        body = struct.pack("!H", mid) + b"\x00"
        for topic_filter, qos in listed:
            body += _string(topic_filter) + bytes([qos & 0x03])
        self._send(_packet((SUBSCRIBE << 4) | 0x02, body))

    def ack(self, mids: Iterable[int]) -> None:
        """PUBACK each of `mids` (QoS 1 messages received on this connection), in one write."""
        data = b"".join([_ACK.pack(0x40, 2, mid) for mid in mids])
        if data:
            self._send(data)

    def publish(
        self, topic: str, payload: bytes, qos: int = 0, *, retain: bool = False,
        response_topic: str | None = None, correlation: bytes | None = None,
    ) -> bool:  # fmt: skip
        """Queue one PUBLISH. False if the connection has ended, or too many QoS 1 wait for room."""
        if self.closed.is_set() or self.sock is None:
            return False
        props = b""
        if response_topic is not None:
            props += bytes([RESPONSE_TOPIC]) + _string(response_topic)
        if correlation is not None:
            props += bytes([CORRELATION_DATA]) + _binary(correlation)
        first = (PUBLISH << 4) | (qos << 1) | (1 if retain else 0)
        head = _string(topic)
        rest = _varint(len(props)) + props + payload
        if not qos:
            self._send(_packet(first, head + rest))
            return True
        with self._lock:
            if len(self._inflight) >= self._broker_receive_maximum:
                if len(self._pending) >= PENDING_MOST:
                    return False
                self._pending.append((first, head, rest))
                return True
            mid = self._new_id()
            self._inflight.add(mid)
        self._send(_packet(first, head + struct.pack("!H", mid) + rest))
        return True

    def close(self, end_session: bool = False) -> None:
        """Send DISCONNECT and end `run`. The session is kept for its expiry, unless `end_session`
        (the DISCONNECT sets its expiry to 0: the broker drops it, its subscriptions with it)."""
        if not self.closed.is_set():
            self._send(_END_SESSION if end_session else _DISCONNECT)
            self.closed.set()
            self._wake()

    def abort(self) -> None:
        """End the connection at once, without DISCONNECT (as a lost connection)."""
        self.closed.set()
        self._wake()

    def _new_id(self) -> int:  # under self._lock
        for _ in range(65535):
            self._next_id = self._next_id % 65535 + 1
            if self._next_id not in self._inflight and self._next_id not in self._subscribing:
                return self._next_id
        raise MqttError("no packet id free")

    def _send(self, data: bytes) -> None:
        with self._lock:
            self._outbox.append(data)
            if not self._woken and not self._dead:
                self._woken = True
                self._write_wake()

    def _wake(self) -> None:
        with self._lock:
            if not self._dead:
                self._write_wake()

    def _write_wake(self) -> None:  # under self._lock
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    # -- the connection's thread -------------------------------------------------------------------

    def run(self, deliver: Callable[[list[Received]], None]) -> None:
        """Read and write until the connection ends: an MqttError (or OSError) says why; a `close`
        returns. `deliver` gets each read's PUBLISHes, in order; it may wait (calling `flush` while
        it does, so that acknowledgements still go out)."""
        sock = self.sock
        assert sock is not None
        try:
            if self._buffer:  # what came behind the CONNACK
                messages = self._parse(self._buffer)
                if messages:
                    deliver(messages)
            while not self.closed.is_set():
                self.flush()
                wait = self._tick()
                if isinstance(sock, ssl.SSLSocket) and sock.pending():
                    wait = 0.0  # TLS holds bytes already read from the socket
                readable, _, _ = select.select([sock.fileno(), self._wake_r], [], [], wait)
                if self._wake_r in readable:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self._wake_r, 4096)
                if sock.fileno() in readable or (isinstance(sock, ssl.SSLSocket) and sock.pending()):
                    messages = self._read()
                    if messages:
                        deliver(messages)
            self.flush()
        finally:
            self.closed.set()
            self._close_socket()

    def _tick(self) -> float:
        """Keepalive: a PINGREQ after keepalive/2 of our silence; the broker's silence for 1.5
        keepalives ends the connection. How long `select` may wait."""
        if not self.keepalive:
            return 1.0
        now = time.monotonic()
        if now - self._last_in > 1.5 * self.keepalive:
            raise MqttError(f"the broker said nothing for {now - self._last_in:.0f} s (keepalive {self.keepalive} s)")
        half = self.keepalive / 2
        if now - self._last_out >= half:
            self._send_now(_PINGREQ)
        return max(0.05, min(half - (time.monotonic() - self._last_out), 1.0))

    def flush(self) -> None:
        """Write what is queued (the connection's thread only)."""
        with self._lock:
            out, self._outbox = self._outbox, []
            self._woken = False
        if out:
            self._send_now(b"".join(out))
        elif self.keepalive and time.monotonic() - self._last_out >= self.keepalive / 2:
            self._send_now(_PINGREQ)

    def _send_now(self, data: bytes) -> None:
        sock = self.sock
        if sock is None:
            raise MqttError("not connected")
        view = memoryview(data)
        while view:
            try:
                sent = sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                select.select([], [sock], [], 1.0)
                continue
            view = view[sent:]
        self._last_out = time.monotonic()

    def _read(self) -> list[Received]:
        sock = self.sock
        assert sock is not None
        try:
            chunk = sock.recv(READ_BYTES)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return []
        if not chunk:
            raise MqttError("the broker closed the connection")
        self._last_in = time.monotonic()
        return self._parse(self._buffer + chunk if self._buffer else chunk)

    def _parse(self, data: bytes) -> list[Received]:
        """Every whole packet in `data`: the PUBLISHes returned, the rest handled; the tail kept."""
        out: list[Received] = []
        pos, end = 0, len(data)
        topics = self._topics
        while end - pos >= 2:
            # The fixed header: the type and flags, then the remaining length (1-4 bytes).
            first = data[pos]
            length = data[pos + 1]
            at = pos + 2
            if length & 0x80:
                header = _header(data, pos)
                if header is None:
                    break
                length, at = header
            stop = at + length
            if length > MAX_PACKET:
                raise MalformedPacket(f"a packet of {length} bytes, over the {MAX_PACKET} this client allows")
            if stop > end:
                break
            if first >> 4 == PUBLISH:
                qos = (first >> 1) & 0x03
                if qos > 1:
                    raise MalformedPacket(f"a PUBLISH at QoS {qos}: subscribed at QoS 1 at most")
                if at + 2 > stop:
                    raise MalformedPacket("a PUBLISH shorter than its topic's length")
                size = (data[at] << 8) | data[at + 1]
                at += 2
                raw = data[at : at + size]
                at += size
                topic = topics.get(raw)
                if topic is None:
                    if at > stop or not size:
                        raise MalformedPacket("a PUBLISH whose topic runs past the packet (or is empty)")
                    try:
                        topic = raw.decode()
                    except UnicodeDecodeError as exc:
                        raise MalformedPacket("a PUBLISH whose topic is not UTF-8") from exc
                    if len(topics) < 8192:
                        topics[raw] = topic
                mid = 0
                if qos:
                    if at + 2 > stop:
                        raise MalformedPacket("a QoS 1 PUBLISH without its packet id")
                    mid = (data[at] << 8) | data[at + 1]
                    at += 2
                response: str | None = None
                correlation: bytes | None = None
                if at < stop and data[at] == 0:  # no properties (the usual case)
                    at += 1
                else:
                    found, at = parse_properties(data, at, stop, f"PUBLISH on {topic}")
                    value = found.get(RESPONSE_TOPIC)
                    response = value if isinstance(value, str) else None
                    value = found.get(CORRELATION_DATA)
                    correlation = value if isinstance(value, bytes) else None
                out.append(Received(topic, data[at:stop], mid, qos, bool(first & 0x01), response, correlation))
            else:
                self._control(first, data[at:stop])
            pos = stop
        self._buffer = data[pos:] if pos < end else b""
        return out

    def _control(self, first: int, body: bytes) -> None:
        kind = first >> 4
        if kind == PUBACK:
            if len(body) < 2:
                raise MalformedPacket("a PUBACK without its packet id")
            mid = (body[0] << 8) | body[1]
            with self._lock:
                self._inflight.discard(mid)
                pending = self._pending.popleft() if self._pending else None
                if pending is not None:
                    mid = self._new_id()
                    self._inflight.add(mid)
            if pending is not None:
                head_first, head, rest = pending
                self._send_now(_packet(head_first, head + struct.pack("!H", mid) + rest))
        elif kind == SUBACK:
            if len(body) < 3:
                raise MalformedPacket("a SUBACK shorter than its header")
            mid = (body[0] << 8) | body[1]
            _props, at = parse_properties(body, 2, len(body), "SUBACK")
            with self._lock:
                filters = self._subscribing.pop(mid, None)
            if filters is None:
                raise MalformedPacket(f"a SUBACK for packet id {mid}, which this client did not send")
            refused = [f"{f} (0x{code:02x})" for f, code in zip(filters, body[at:], strict=False) if code >= 0x80]
            if refused or len(body) - at != len(filters):
                raise MqttError(f"the broker refused the subscription to {', '.join(refused) or 'some filters'}")
        elif kind == PINGRESP:
            pass
        elif kind == DISCONNECT:
            reason = body[0] if body else 0
            found, _ = parse_properties(body, 1, len(body), "DISCONNECT") if len(body) > 1 else ({}, 0)
            why = found.get(REASON_STRING)
            raise MqttError(f"the broker disconnected: reason 0x{reason:02x}{f' ({why})' if why else ''}")
        else:
            raise MalformedPacket(f"packet type {kind} from the broker, which this client never asks for")

    def _close_socket(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()
        with self._lock:
            self._dead = True
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
