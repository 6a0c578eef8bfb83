"""The payout pole display as a device: a serial one, and a simulated one for the dealer screen.

`PoleDisplay` writes frames to any port pyserial can open by URL: `/dev/serial/by-id/...` on a
table, `socket://127.0.0.1:7001` for a display simulator, `spy:///dev/ttyUSB0` to see the wire.
`SimulatedDisplay` speaks the same bytes into memory and keeps the last frames (text as shown
and raw bytes) so the dealer screen can draw the display; it says SIMULATED when idle and in
every snapshot, so nobody mistakes it for the real one.

    >>> display = PoleDisplay.open("/dev/ttyUSB0", dialect=Dialect.CD5220)
    >>> display.show_payout(3, 40)        # PAY SEAT 3 / 40

Calls are blocking serial writes of a few dozen bytes: call them from a worker thread.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import serial

from drivers.display.commands import Dialect, encode_frame, encode_init
from drivers.display.messages import Frame, fault_pages, idle_frame, payout_frame
from drivers.display.text import CODE_PAGES, WIDTH, CodePage, fit

BAUD_RATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200)
WRITE_TIMEOUT_S = 1.0


class DisplayError(Exception):
    """The display cannot be opened or written, or its settings are wrong. Says what and where."""


class Port(Protocol):
    def write(self, data: bytes) -> int | None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ShownFrame:
    """One frame as the customer sees it (both lines, 20 columns each) and the bytes sent."""

    upper: str
    lower: str
    raw: bytes


class PoleDisplay:
    """A 2x20 customer pole display speaking `dialect` on `port`."""

    simulated = False

    def __init__(
        self,
        port: Port,
        *,
        dialect: Dialect,
        code_page: CodePage = "cp437",
        where: str = "payout display",
    ) -> None:
        self._port = port
        self.dialect = Dialect(dialect)
        self.code_page: CodePage = code_page
        self.where = where
        self._lock = threading.Lock()
        self._pages: list[Frame] = []
        self._page = 0
        self._current: ShownFrame | None = None
        # The bytes of the last frame the port took whole (None: not known, after a failed write or
        # the display's initialisation): what `again=False` compares with.
        self._sent: bytes | None = None
        self.reset()

    @classmethod
    def open(
        cls,
        url: str,
        *,
        dialect: Dialect,
        code_page: CodePage = "cp437",
        baudrate: int = 9600,
    ) -> PoleDisplay:
        """Open the display at a pyserial URL (8N1) and initialise it."""
        try:
            port = serial.serial_for_url(url, baudrate=baudrate, write_timeout=WRITE_TIMEOUT_S)
        except (serial.SerialException, ValueError, OSError) as exc:
            raise DisplayError(
                f"payout display at {url}: cannot open the port ({exc}); check display.url "
                "and that the cable is plugged in"
            ) from exc
        try:
            return cls(port, dialect=dialect, code_page=code_page, where=f"payout display at {url}")
        except DisplayError:
            port.close()
            raise

    # -- messages ----------------------------------------------------------------------------

    # Each `show...` writes its frame; with `again=False` not when the display shows that message
    # already (the same pages, the last write taken whole): an entry that changes nothing on the
    # display (a camera's scene, a login journaled) writes nothing to a wire that takes 20 frames a
    # second at 9600 baud, so a burst of them cannot fill the port's buffer and hold the table's
    # loop in a write. A paged message keeps the page it is on.

    def show_payout(self, seat: int, amount: int, *, again: bool = True) -> None:
        """PAY SEAT n / amount: what the dealer pays next."""
        self.show(payout_frame(seat, amount), again=again)

    def show_fault(self, text: str, *, again: bool = True) -> None:
        """The fault in plain words; longer texts are paged, see `next_page`."""
        self._show_pages(fault_pages(text), again)

    def show_idle(
        self, title: str, min_wager: int | None = None, max_wager: int | None = None, *, again: bool = True
    ) -> None:
        self.show(idle_frame(title, min_wager, max_wager), again=again)

    def show(self, frame: Frame, *, again: bool = True) -> None:
        self._show_pages([frame], again)

    def next_page(self) -> bool:
        """Show the next page of a paged message (the table loop calls this every few
        seconds while a fault shows). Returns False when there is only one page."""
        with self._lock:
            if len(self._pages) < 2:
                return False
            self._page = (self._page + 1) % len(self._pages)
            self._write_frame(self._pages[self._page])
            return True

    @property
    def pages(self) -> int:
        return len(self._pages)

    @property
    def current(self) -> ShownFrame | None:
        """The frame on the display now, as shown."""
        return self._current

    # -- device ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Initialise the display and show the current frame again (after a power cycle)."""
        with self._lock:
            self._sent = None  # the initialisation clears the display
            self._send(encode_init(self.dialect, self.code_page))
            if self._pages:
                self._write_frame(self._pages[self._page])

    def close(self) -> None:
        self._port.close()

    def __enter__(self) -> PoleDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _show_pages(self, pages: list[Frame], again: bool = True) -> None:
        with self._lock:
            if not again and pages == self._pages and self._sent is not None:
                return  # showing it already
            self._pages = pages
            self._page = 0
            self._write_frame(pages[0])

    def _write_frame(self, frame: Frame) -> None:
        raw = encode_frame(self.dialect, frame.upper, frame.lower, self.code_page)
        self._sent = None  # a write that fails leaves the display's bytes unknown
        self._send(raw)
        self._sent = raw
        shown = ShownFrame(fit(frame.upper, self.code_page), fit(frame.lower, self.code_page), raw)
        self._current = shown
        self._record(shown)

    def _record(self, shown: ShownFrame) -> None:
        """Hook for backends that keep history."""

    def _send(self, data: bytes) -> None:
        # Handed to the port (the kernel's serial buffer), not waited for on the wire: pyserial's
        # flush() is tcdrain, which on a UART or a USB serial adapter waits for the last byte to
        # leave, 50 ms for a 48-byte frame at 9600 baud, and the table's loop shows the display
        # after each entry (the card's way first: the next card would wait for the wire). A write
        # still fails as before when the port is gone, and waits at most WRITE_TIMEOUT_S for room.
        try:
            self._port.write(data)
        except (serial.SerialException, OSError) as exc:
            raise DisplayError(
                f"{self.where}: writing failed ({exc}); check its cable and power"
            ) from exc


#: The bytes the simulated display's wire keeps, the latest (a frame is a few dozen bytes).
WIRE_KEPT = 4096


class _MemoryPort:
    """The simulated display's wire: keeps the last `keep` bytes written, or a little more (a day
    of frames would otherwise be megabytes held for nobody: the screen draws `current`)."""

    def __init__(self, keep: int = WIRE_KEPT) -> None:
        self.written = bytearray()
        self.keep = keep
        self.closed = False

    def write(self, data: bytes) -> int:
        if self.closed:
            raise OSError("the simulated display is closed")
        self.written += data
        if len(self.written) > 2 * self.keep:  # let go of the older bytes now and then, not every write
            del self.written[: len(self.written) - self.keep]
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


class SimulatedDisplay(PoleDisplay):
    """A pole display in memory that keeps the last `keep` frames for the dealer screen."""

    simulated = True
    LABEL = "SIMULATED"

    def __init__(
        self, *, dialect: Dialect = Dialect.CD5220, code_page: CodePage = "cp437", keep: int = 20
    ) -> None:
        if keep < 1:
            raise DisplayError(f"simulated display: keep = {keep}; keep at least one frame")
        self._frames: deque[ShownFrame] = deque(maxlen=keep)
        self.wire = _MemoryPort()
        super().__init__(self.wire, dialect=dialect, code_page=code_page, where="simulated display")

    def show_idle(
        self, title: str, min_wager: int | None = None, max_wager: int | None = None, *, again: bool = True
    ) -> None:
        """Idle screen with SIMULATED on the lower line, in place of the limits."""
        checked = idle_frame(title, min_wager, max_wager)  # the same checks as a real display
        self.show(Frame(checked.upper, self.LABEL.center(WIDTH).rstrip()), again=again)

    @property
    def frames(self) -> list[ShownFrame]:
        """The last frames shown, oldest first."""
        return list(self._frames)

    def snapshot(self) -> dict[str, Any]:
        """What the dealer screen draws: both lines, and the SIMULATED label."""
        current = self._current
        return {
            "label": self.LABEL,
            "simulated": True,
            "dialect": self.dialect.value,
            "upper": current.upper if current else "",
            "lower": current.lower if current else "",
        }

    def _record(self, shown: ShownFrame) -> None:
        self._frames.append(shown)


def open_display(settings: Mapping[str, Any], *, simulated: bool) -> PoleDisplay:
    """Build the display from the `[display]` table of table.toml; errors name the key.

    Keys: dialect ("cd5220" or "epson-dmd", required), url (required unless simulated),
    code_page ("cp437" default, or "ascii"), baudrate (9600 default), keep (simulated: frames
    kept for the dealer screen, 20 default).
    """
    allowed = {"dialect", "url", "code_page", "baudrate", "keep"}
    for key in settings:
        if key not in allowed:
            raise DisplayError(f"display.{key}: unknown setting (known: {', '.join(sorted(allowed))})")
    raw_dialect = settings.get("dialect")
    known = [d.value for d in Dialect]
    if raw_dialect not in known:
        raise DisplayError(f"display.dialect = {raw_dialect!r}: use one of {', '.join(known)}")
    dialect = Dialect(str(raw_dialect))
    code_page = settings.get("code_page", "cp437")
    if code_page not in CODE_PAGES:
        raise DisplayError(f"display.code_page = {code_page!r}: use one of {', '.join(CODE_PAGES)}")
    if simulated:
        keep = settings.get("keep", 20)
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise DisplayError(f"display.keep = {keep!r}: a whole number of frames, at least 1")
        return SimulatedDisplay(dialect=dialect, code_page=code_page, keep=keep)
    url = settings.get("url")
    if not isinstance(url, str) or not url.strip():
        raise DisplayError("display.url: missing; name the port, e.g. /dev/serial/by-id/...")
    baudrate = settings.get("baudrate", 9600)
    if baudrate not in BAUD_RATES or isinstance(baudrate, bool):
        raise DisplayError(f"display.baudrate = {baudrate!r}: use one of {BAUD_RATES}")
    return PoleDisplay.open(url, dialect=dialect, code_page=code_page, baudrate=baudrate)
