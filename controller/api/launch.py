"""Starting the API's own process (`python -m controller.app.api_process`, controller/api/channel.py
says why it has one): from here, which imports nothing of the table's, so `tablectl run` starts it
before it loads the table's code (controller/app/early.py) and the two processes load their
libraries at once."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Launched:
    """The API's process just started, and the table's end of its channel."""

    proc: asyncio.subprocess.Process
    channel: socket.socket


async def launch(sockets: Sequence[socket.socket]) -> Launched:
    """Start the API's process with the listening `sockets` and one end of a socketpair; it loads
    FastAPI and the app, then waits on the channel for what it serves."""
    ours, theirs = socket.socketpair()
    fds = [theirs.fileno(), *(s.fileno() for s in sockets)]
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "controller.app.api_process",
            str(os.getpid()),
            *map(str, fds),
            pass_fds=fds,
            stdin=asyncio.subprocess.DEVNULL,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return Launched(proc, ours)
