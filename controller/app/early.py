"""What `tablectl run` does before it loads the table's code: the start-up checks that write
nothing (controller/app/startup.py), the port bound, and the API's process started on it
(controller/api/launch.py), so the API's process loads FastAPI and the app while the table's
process loads the table and opens its journal. It imports nothing of the table's."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.api.launch import Launched
    from controller.app.config import Config


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
    """Before anything is written or printed (controller/app/startup.py): the address may be served
    (plain HTTP off loopback only when allowed), the state directory can be one, the port is ours
    (bound here, served by the API's process); then, with `api`, the API's process started (forked
    from this one: what both use is loaded once, controller/api/launch.py), so it loads FastAPI and
    the app while the table's process loads the table and opens its journal."""
    from controller.api import launch
    from controller.app.config import check_listen
    from controller.app.startup import bind_http, check_state_path

    check_listen(host, config.http, config.source)
    check_state_path(state_dir)
    early = EarlyStart(bind_http(host, port), None)
    if api:
        try:
            early.api = await launch.launch(early.sockets, fork=_serve_forked, game=config.game)
        except BaseException:
            await early.close()
            raise
    return early


def _serve_forked(parent: int, channel: socket.socket, listening: list[socket.socket]) -> int:
    """The API's process forked from `tablectl run`'s (controller/api/launch.py): its app, loaded now."""
    from controller.api.launch import NAME
    from controller.app import api_process

    return api_process.run(parent, channel, listening, name=NAME)
