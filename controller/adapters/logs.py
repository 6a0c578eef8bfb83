"""The daemon's log lines: timestamped on a terminal, journald's own way under systemd.

Under systemd the service's standard error is a stream into the journal (systemd names it in
JOURNAL_STREAM as "device:inode"). journald stamps every line itself, so a line carries no time
of its own there (no duplicate timestamps), and it starts with the syslog priority as `<3>`,
which journald reads as the line's level and removes: `journalctl -p warning -u tablectl` then
shows only warnings and worse. A JOURNAL_STREAM that names another file than standard error
(the output was redirected) keeps the terminal form; with no JOURNAL_STREAM, INVOCATION_ID (set
by systemd for every service run) is taken as the sign.

    configure(label="SIMULATED ")
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

#: syslog priorities (sd-daemon(3)) of Python's levels.
PRIORITIES = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4), (logging.INFO, 6))


def under_journald(env: Mapping[str, str], stream: TextIO) -> bool:
    """Whether `stream` goes to systemd's journal."""
    named = env.get("JOURNAL_STREAM", "")
    if named:
        device, _, inode = named.partition(":")
        try:
            st = os.fstat(stream.fileno())
        except (OSError, ValueError):
            return False
        return f"{st.st_dev}:{st.st_ino}" == f"{device}:{inode}"
    return bool(env.get("INVOCATION_ID"))


class JournalFormatter(logging.Formatter):
    """`<priority>text` on every line (a traceback's lines too), with no timestamp."""

    def format(self, record: logging.LogRecord) -> str:
        priority = next((p for level, p in PRIORITIES if record.levelno >= level), 7)
        return "\n".join(f"<{priority}>{line}" for line in super().format(record).splitlines() or [""])


def configure(label: str = "", *, env: Mapping[str, str] | None = None, stream: TextIO | None = None) -> bool:
    """Set up the root logger for `tablectl run`; True when the lines go to journald."""
    stream = stream or sys.stderr
    journal = under_journald(os.environ if env is None else env, stream)
    handler = logging.StreamHandler(stream)
    if journal:
        handler.setFormatter(JournalFormatter(f"{label}%(levelname)s %(message)s"))
    else:
        handler.setFormatter(logging.Formatter(f"%(asctime)s {label}tablectl %(levelname)s %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return journal
