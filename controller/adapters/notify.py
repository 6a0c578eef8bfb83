"""Tell systemd how the table is doing: the sd_notify protocol, without any dependency.

Under `Type=notify` systemd names a Unix datagram socket in NOTIFY_SOCKET (a path, or an
abstract socket written with a leading '@'). The daemon sends `READY=1` once the journal is
checked and replayed, `WATCHDOG=1` from its table loop (so a hung loop is noticed, not only a
dead process), `STATUS=...` for `systemctl status`, and `STOPPING=1` on the way out. Started
by hand, NOTIFY_SOCKET is unset and every call does nothing (`notifier.enabled` is False).

A failed send is logged and otherwise ignored: the table must never stop because systemd
could not be told about it.

    notifier = Notifier()
    notifier.ready("table GS-01: open, shoe connected")
    interval = notifier.watchdog_interval()      # seconds between WATCHDOG=1, or None
    notifier.watchdog()
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


class Notifier:
    """The sd_notify channel named by the environment (`os.environ` unless given).

    `pid` is this process's id (for WATCHDOG_PID); tests pass it to stand in for another one.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, *, pid: int | None = None) -> None:
        env = os.environ if environ is None else environ
        self._env = dict(env)
        self._pid = os.getpid() if pid is None else pid
        self._address = _socket_address(self._env.get("NOTIFY_SOCKET", ""))
        self._socket: socket.socket | None = None
        self._failing = False

    @property
    def enabled(self) -> bool:
        """True when systemd gave us a socket; False when started by hand (every call is a no-op)."""
        return self._address is not None

    @property
    def address(self) -> str | None:
        """NOTIFY_SOCKET as given (abstract sockets keep their '@'), or None."""
        if self._address is None:
            return None
        return "@" + self._address[1:] if self._address.startswith("\0") else self._address

    def ready(self, status: str | None = None) -> bool:
        """Startup is complete: the journal is checked and replayed, the devices are driven."""
        return self._send("READY=1", *([] if status is None else [_status_line(status)]))

    def watchdog(self) -> bool:
        """The table loop is alive."""
        return self._send("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """One line for `systemctl status tablectl`."""
        return self._send(_status_line(text))

    def stopping(self, status: str | None = None) -> bool:
        """Shutdown has begun."""
        return self._send("STOPPING=1", *([] if status is None else [_status_line(status)]))

    def extend_timeout(self, seconds: float) -> bool:
        """Ask for `seconds` more before the start (or stop) timeout fires, e.g. during a long replay."""
        return self._send(f"EXTEND_TIMEOUT_USEC={max(0, round(seconds * 1_000_000))}")

    def watchdog_interval(self) -> float | None:
        """Seconds between watchdog pings (half systemd's deadline), or None if no watchdog is set.

        WATCHDOG_PID, when present, names the process the watchdog is meant for: any other
        process (a child that inherited the environment) must not ping.
        """
        usec_text = self._env.get("WATCHDOG_USEC")
        if not usec_text:
            return None
        pid_text = self._env.get("WATCHDOG_PID")
        if pid_text:
            try:
                if int(pid_text) != self._pid:
                    return None
            except ValueError:
                log.warning("WATCHDOG_PID=%r is not a process id; ignoring the watchdog", pid_text)
                return None
        try:
            usec = int(usec_text)
        except ValueError:
            log.warning("WATCHDOG_USEC=%r is not a whole number of microseconds; ignoring the watchdog", usec_text)
            return None
        if usec <= 0:
            return None
        return usec / 2 / 1_000_000

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _send(self, *fields: str) -> bool:
        """Send one datagram; True if it left, False if disabled or the send failed (logged)."""
        if self._address is None:
            return False
        message = "\n".join(fields).encode()
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                # A full systemd queue must not stall the table loop: drop the ping instead.
                self._socket.setblocking(False)
            self._socket.sendto(message, self._address)
        except OSError as exc:
            # Logged once per run of failures: a ping every few seconds would flood the log.
            if not self._failing:
                log.warning("could not notify systemd at %s (%s): %s", self.address, fields[0], exc)
            self._failing = True
            return False
        if self._failing:
            log.info("notifying systemd at %s works again", self.address)
            self._failing = False
        return True


def _socket_address(value: str) -> str | None:
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    # systemd also allows vsock:CID:PORT (for VMs); a table never runs that way.
    log.warning("NOTIFY_SOCKET=%r is neither a path nor an abstract socket; not notifying systemd", value)
    return None


def _status_line(text: str) -> str:
    # A newline would start a new field, so one status is one line.
    return "STATUS=" + " ".join(text.splitlines())
