"""The shoe read on the table's own asyncio loop: no reader thread, no hand-over per card.

`LoopShoeReader` speaks the same link (drivers/shoe/link.py's `HostLink`) as the threaded
`ShoeReader` and reports the same events through `on_event`, but called on the loop: the port's
file descriptor is watched by the loop (`add_reader`), the link's deadlines (its HELLO, the
shoe's silence, a frame's inter-byte time) are the loop's timers, and a card is delivered by a
plain call that journals it before it returns; its acknowledgement is written after that (if
`on_event` raises, none is: the shoe sends the card again). Nothing waits for another thread: a
card costs no wake-up of a reader thread, no wake-up of the loop from it, and no passing of the
interpreter's lock between them.

The port is read and written without blocking (pyserial opens a device or a pty non-blocking,
and `socket://` alike): a shoe that stops reading its line never stalls the loop; an ACK the
line cannot take now is not sent (the shoe repeats its frame, which is acknowledged again). A
port the loop cannot watch (no file descriptor: `loop://`, `rfc2217://`) is read by the threaded
`ShoeReader` instead (the daemon asks `watchable`). A port that fails or closes is opened again after the
reconnect delay, doubling up to its longest while it cannot be opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from typing import Any

import serial
import serial.serialposix
import serial.urlhandler.protocol_socket

from drivers.shoe.events import DriverEvent
from drivers.shoe.serial_backend import DUE_LATE_S, ShoeReader, _fileno, _reason

log = logging.getLogger(__name__)

READ_SIZE = 4096  # bytes a read takes at most (a frame is 9 to a few dozen)
#: The ports read and written on their descriptor: a device or a pty, and `socket://`.
_RAW: tuple[type, ...] = (serial.serialposix.Serial, serial.urlhandler.protocol_socket.Serial)


class LoopShoeReader(ShoeReader):
    """Reads the shoe at `url` on `loop` (started and stopped on it); see the module docstring."""

    def __init__(
        self, url: str, on_event: Callable[[DriverEvent], None], *, loop: asyncio.AbstractEventLoop, **kwargs: Any
    ) -> None:
        super().__init__(url, on_event, **kwargs)
        self._loop = loop
        self._port: serial.Serial | None = None
        self._fd: int | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._opening: asyncio.TimerHandle | asyncio.Handle | None = None
        self._delay = self._reconnect_delay[0]
        self._started = False
        self._raw = True

    def start(self) -> None:
        """Open the port at the loop's next turn (from any thread)."""
        if self._started:
            raise RuntimeError("this shoe reader is already started")
        self._started = True
        self._loop.call_soon_threadsafe(self._first_open)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop reading and close the port: at once on the loop (or once it has stopped); from
        another thread while the loop runs, done on the loop and waited for."""
        self._stop.set()
        if self._loop.is_running() and not _on(self._loop):
            async def stopping() -> None:
                self._stopped()

            asyncio.run_coroutine_threadsafe(stopping(), self._loop).result(timeout)
            return
        self._stopped()

    def _stopped(self) -> None:
        for handle in (self._opening, self._timer):
            if handle is not None:
                handle.cancel()
        self._opening = self._timer = None
        self._close()

    def _first_open(self) -> None:
        if self._opening is None:
            self._open()

    def _open(self) -> None:
        self._opening = None
        if self._stop.is_set():
            return
        try:
            port = serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=0)
        except (serial.SerialException, OSError, ValueError) as exc:
            self._emit(self._link.lost(f"cannot open it: {_reason(exc)}"), None)
            self._again(self._delay)
            self._delay = min(self._delay * 2, self._reconnect_delay[1])
            return
        self._delay = self._reconnect_delay[0]
        fd = _fileno(port)
        if fd is None:  # the daemon gives such a port to the threaded reader (`watchable`): said, not read
            port.close()
            self._emit(self._link.lost("it has no file descriptor for the table's loop to watch"), None)
            return
        self._port, self._fd = port, fd
        # A device, a pty or a socket is read and written on its descriptor itself (one system call
        # each); a port that wraps one (`spy://`, which logs the wire) through pyserial.
        self._raw = type(port) in _RAW
        try:
            self._emit(self._link.opened(time.monotonic()), port)
            self._loop.add_reader(fd, self._readable)
        except (serial.SerialException, OSError) as exc:
            self._lost(_reason(exc))
            return
        self._arm()

    def _readable(self) -> None:
        port, fd = self._port, self._fd
        if port is None or fd is None:
            return
        try:
            data = os.read(fd, READ_SIZE) if self._raw else port.read(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except (serial.SerialException, OSError) as exc:
            self._lost(_reason(exc))
            return
        if not data:
            if not self._raw:
                return  # pyserial's read found nothing yet
            self._lost("the port closed (the device was disconnected)")
            return
        now = time.monotonic()
        try:
            self._emit(self._link.receive(data, now), port)
            self._emit(self._link.tick(now), port)
        except (serial.SerialException, OSError) as exc:
            self._lost(_reason(exc))
            return
        self._arm()

    def _due(self) -> None:
        self._timer = None
        port = self._port
        if port is None:
            return
        try:
            self._emit(self._link.tick(time.monotonic()), port)
        except (serial.SerialException, OSError) as exc:
            self._lost(_reason(exc))
            return
        self._arm()

    def _arm(self) -> None:
        """The loop's timer at the link's next deadline, exactly: a frame that moves the deadline
        later (every frame the shoe sends moves its silence's) moves the timer with it (cancelled
        and set again, about 2 us), so while the shoe talks the timer never fires and the loop
        wakes only for the shoe's bytes. A timer kept at an earlier deadline instead would wake
        an idle table every few seconds to find nothing due. A shoe that falls silent is found at
        the same instant as before: its deadline, the last frame's time and the heartbeat timeout."""
        if self._port is None:
            return
        due = self._link.due()
        timer = self._timer
        if due is None:
            if timer is not None:
                timer.cancel()
                self._timer = None
            return
        at = due + DUE_LATE_S
        if timer is not None and not timer.cancelled():
            if timer.when() == at:
                return
            timer.cancel()
        self._timer = self._loop.call_at(at, self._due)

    def _write(self, port: serial.Serial, data: bytes) -> None:
        fd = self._fd
        if fd is None:
            return
        if not self._raw:
            port.write(data)
            return
        try:
            written = os.write(fd, data)
        except (BlockingIOError, InterruptedError):
            written = 0
        if written < len(data):
            # The line takes no more now (the shoe is not reading): what is not sent is the
            # protocol's to repair (the shoe repeats an unacknowledged frame).
            log.warning("shoe: the line took %d of %d bytes; the shoe will repeat its frame", written, len(data))

    def _lost(self, reason: str) -> None:
        self._close()
        self._emit(self._link.lost(reason), None)
        self._again(self._reconnect_delay[0])

    def _again(self, delay: float) -> None:
        if not self._stop.is_set():
            self._opening = self._loop.call_later(delay, self._open)

    def _close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        port, fd = self._port, self._fd
        self._port = self._fd = None
        if fd is not None and not self._loop.is_closed():
            self._loop.remove_reader(fd)
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def watchable(url: str) -> bool:
    """Whether the loop can watch the port at `url` (it has a file descriptor): a device path, a
    pty, `socket://`; not `loop://` or `rfc2217://`."""
    return not url.startswith(("loop://", "rfc2217://", "spy://", "alt://", "hwgrep://"))
