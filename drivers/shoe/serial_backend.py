"""The shoe on a serial port: a worker thread that reads frames, acknowledges them and reconnects.

The port is named by a pyserial URL from config: a device path (`/dev/ttyUSB0`, better
`/dev/serial/by-id/...` which survives re-plugging), `socket://host:port`, or `spy://PORT` to
hex-dump the traffic. Reads block in the worker thread; events go out through `on_event`, called
in that thread (an asyncio table posts them on with `loop.call_soon_threadsafe`).

A card is acknowledged to the shoe only after `on_event` returned, so if the callback waits for
the journal commit, nothing the shoe sent is lost when the daemon dies: the shoe repeats it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable, Iterable

import serial

from drivers.shoe.events import DriverEvent
from drivers.shoe.link import Delivery, HostLink, Output
from drivers.shoe.protocol import LinkState

log = logging.getLogger(__name__)

DEFAULT_BAUDRATE = 115200
#: How long a read waits for bytes before the link's clocks are looked at, on a port the reader
#: cannot wait on (no file descriptor: `loop://`, `rfc2217://`). A quarter second keeps every
#: deadline the link keeps (inter-byte 0.5 s, HELLO every 1 s, silence 3 s). On a port with a file
#: descriptor (a device, a pty, `socket://`) the reader waits for bytes until the link's next
#: deadline (`HostLink.due`) or `stop`, and no longer: an idle table's reader wakes when the shoe
#: says something (its heartbeat, once a second), and its silence is noticed as it falls due.
POLL_INTERVAL_S = 0.25
#: A deadline is met this long after it falls due (the link's timeouts are "more than").
DUE_LATE_S = 0.001


class ShoeConfigError(ValueError):
    """A shoe setting that cannot work, named with the value that was given."""


class ShoeReader:
    """Reads the card-reading shoe at `url` in a worker thread and reports `DriverEvent`s.

        reader = ShoeReader("/dev/serial/by-id/usb-Shoe-if00", on_event=print)
        reader.start()        # Connected(...), CardRead(card=Card('AS'), ...), ...
        reader.stop()

    `resume` is the last (session, seq) the table recorded (`CardRead.link_state`); with it, a
    card the shoe repeats after a restart is recognised and not delivered twice.
    """

    def __init__(
        self,
        url: str,
        on_event: Callable[[DriverEvent], None],
        *,
        baudrate: int = DEFAULT_BAUDRATE,
        resume: LinkState | None = None,
        heartbeat_timeout: float = 3.0,
        hello_interval: float = 1.0,
        reconnect_delay: tuple[float, float] = (0.1, 2.0),
        poll_interval: float = POLL_INTERVAL_S,
    ) -> None:
        if not isinstance(url, str) or not url:
            raise ShoeConfigError(f"shoe port: give a device path or pyserial URL, not {url!r}")
        try:
            serial.serial_for_url(url, do_not_open=True)
        except (ValueError, serial.SerialException) as exc:
            raise ShoeConfigError(f"shoe port {url!r} is not a usable pyserial URL: {exc}") from exc
        if not isinstance(baudrate, int) or baudrate <= 0:
            raise ShoeConfigError(f"shoe baudrate is a positive whole number, not {baudrate!r}")
        low, high = reconnect_delay
        if not 0 < low <= high:
            raise ShoeConfigError(
                f"shoe reconnect delay needs 0 < first <= longest, not {reconnect_delay}"
            )
        if not 0 < poll_interval <= heartbeat_timeout:
            raise ShoeConfigError(
                "shoe poll interval must be above 0 and below the heartbeat timeout"
            )
        self.url = url
        self.baudrate = baudrate
        self._on_event = on_event
        self._link = HostLink(
            url, resume=resume, heartbeat_timeout=heartbeat_timeout, hello_interval=hello_interval
        )
        self._reconnect_delay = reconnect_delay
        self._poll_interval = poll_interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._woken: tuple[int, int] | None = None  # a pipe: `stop` ends a wait for bytes at once

    @property
    def link_state(self) -> LinkState | None:
        """The last (session, seq) delivered: persist it, give it back as `resume`."""
        with self._lock:
            return self._link.state

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("this shoe reader is already started")
        self._woken = os.pipe()
        self._thread = threading.Thread(
            target=self._run, name=f"shoe-reader {self.url}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._woken is not None:
            with contextlib.suppress(OSError):
                os.write(self._woken[1], b"x")
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise RuntimeError(f"the shoe reader on {self.url} did not stop within {timeout} s")
            self._thread = None

    def __enter__(self) -> ShoeReader:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            self._open_and_converse()
        finally:
            woken, self._woken = self._woken, None
            for fd in woken or ():
                os.close(fd)

    def _open_and_converse(self) -> None:
        delay = self._reconnect_delay[0]
        while not self._stop.is_set():
            try:
                port = serial.serial_for_url(
                    self.url, baudrate=self.baudrate, timeout=self._poll_interval
                )
            except (serial.SerialException, OSError, ValueError) as exc:
                self._emit(self._link.lost(f"cannot open it: {_reason(exc)}"), None)
                self._stop.wait(delay)
                delay = min(delay * 2, self._reconnect_delay[1])
                continue
            delay = self._reconnect_delay[0]
            try:
                self._converse(port)
            except (serial.SerialException, OSError) as exc:
                self._emit(self._link.lost(_reason(exc)), None)
            finally:
                port.close()

    def _converse(self, port: serial.Serial) -> None:
        self._emit(self._link.opened(time.monotonic()), port)
        fd = _fileno(port)
        while not self._stop.is_set():
            if fd is not None and self._woken is not None and not port.in_waiting:
                due = self._link.due()
                wait = None if due is None else max(due - time.monotonic(), 0.0) + DUE_LATE_S
                ready, _, _ = select.select([fd, self._woken[0]], [], [], wait)
                data = port.read(port.in_waiting or 1) if fd in ready else b""
            else:
                data = port.read(port.in_waiting or 1)
            now = time.monotonic()
            if data:
                self._emit(self._link.receive(data, now), port)
            self._emit(self._link.tick(now), port)

    def _emit(self, outputs: Iterable[Output], port: serial.Serial | None) -> None:
        for out in outputs:
            if isinstance(out, bytes):
                if port is not None:
                    self._write(port, out)
            elif isinstance(out, Delivery):
                try:
                    self._on_event(out.event)
                except Exception as exc:
                    # Not acknowledged: the shoe repeats the frame and we offer it again. A handler
                    # that has said why itself (a `quiet` error: the journal's disk is full) is not
                    # logged again on every repeat.
                    if not getattr(exc, "quiet", False):
                        log.exception("shoe event handler failed on %s; the shoe resends it", out.event)
                    return
                with self._lock:
                    ack = self._link.accept(out)
                if port is not None:
                    self._write(port, ack)
            else:
                try:
                    self._on_event(out)
                except Exception:
                    log.exception("shoe event handler failed on %s", out)


    def _write(self, port: serial.Serial, data: bytes) -> None:
        port.write(data)


def _fileno(port: serial.Serial) -> int | None:
    """The port's file descriptor to wait on, or None (a port pyserial gives none for)."""
    try:
        fd = port.fileno()
    except (AttributeError, OSError, NotImplementedError, serial.SerialException):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return text or type(exc).__name__
