"""Starting the API's own process (`python -m controller.api.remote`, controller/api/channel.py says
why it has one): from here, which imports nothing of the table's, so `tablectl run` starts it before
it loads the table's code (controller/cli.py) and the two processes load their libraries at once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.config import Config


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
            "controller.api.remote",
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


@dataclass
class EarlyStart:
    """What `tablectl run` has done before it loads the table's code: the listening sockets bound,
    and (`api`) the API's process started on them."""

    sockets: list[socket.socket]
    api: Launched | None

    async def close(self) -> None:
        """The start went no further: the API's process ends (and is waited for), the sockets close."""
        if self.api is not None:
            if self.api.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self.api.proc.kill()
            await self.api.proc.wait()
            self.api.channel.close()
        for sock in self.sockets:
            sock.close()


async def start_early(config: Config, state_dir: Path, host: str, port: int, *, api: bool = True) -> EarlyStart:
    """Before anything is written or printed (controller/startup.py): the address may be served
    (plain HTTP off loopback only when allowed), the state directory can be one, the port is ours
    (bound here, served by the API's process); then, with `api`, the API's process started, so it
    loads FastAPI and the app while the table's process loads the table and opens its journal."""
    from controller.config import check_listen
    from controller.startup import bind_http, check_state_path

    check_listen(host, config.http, config.source)
    check_state_path(state_dir)
    early = EarlyStart(bind_http(host, port), None)
    if api:
        try:
            early.api = await launch(early.sockets)
        except BaseException:
            await early.close()
            raise
    return early
