"""The API's own process: the app served over a `RemoteGate`, the API's side of the channel to
the daemon's table (controller/api/channel.py says what crosses it and why the API has a process of
its own). Started by `tablectl run` only: `python -m controller.api.remote PARENT CHANNEL LISTEN...`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import itertools
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import uvicorn

from controller.api.channel import NICE, frame, read_frame
from controller.api.commands import Recalled
from controller.api.gate import AccessKind, Published, TableView, masked
from controller.heap import give_back_memory, settle_garbage_collector
from controller.journal import Entry
from controller.table import TableError
from controller.visibility import mask_cards

if TYPE_CHECKING:
    from controller.api.live import LiveFeed
    from controller.games.base import GameAdapter

log = logging.getLogger("controller.api")


# -- the API's side (its own process, on its loop) --------------------------------------------------


class RemoteGate:
    """The API's handle on a table in another process (the `Gate` the routes use)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        settings: Mapping[str, Any],
        live: LiveFeed,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.adapter: GameAdapter = settings["adapter"]
        self.game_name: str = settings["game_name"]
        self.table_id: str = settings["table_id"]
        self.simulated: bool = settings["simulated"]
        self.seats: int = settings["seats"]
        self._controls: frozenset[str] = frozenset(settings["controls"])
        self._live = live
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._known = 0  # the newest version of the table the API has been told of
        self._view: TableView | None = None
        self._building: asyncio.Future[Any] | None = None
        self.closed = asyncio.Event()
        live.serve(self.adapter, self._count)

    async def run(self) -> None:
        """Read the table's messages until the channel ends (the daemon went away)."""
        try:
            while (message := await read_frame(self._reader)) is not None:
                kind = message[0]
                if kind == "reply":
                    _, ident, ok, value = message
                    future = self._pending.pop(ident, None)
                    if future is not None and not future.done():
                        if ok:
                            future.set_result(value)
                        else:
                            future.set_exception(value)
                elif kind == "changed":
                    self._known = max(self._known, message[1])
                elif kind == "feed":
                    self._live.fan_out(message[1], message[2])
                elif kind == "feed-lost":
                    self._live.close_all()  # each screen reconnects with its last seq: nothing lost
                else:
                    log.error("the table sent %r: not a message of the channel", kind)
        finally:
            self.closed.set()
            gone = TableError("the table is not answering (the daemon is stopping)", kind="unavailable")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(gone)
            self._pending.clear()

    def send(self, *message: Any) -> None:
        if not self._writer.is_closing():
            self._writer.write(frame(message))

    async def _ask(self, kind: str, *args: Any) -> Any:
        if self.closed.is_set():
            raise TableError("the table is not answering (the daemon is stopping)", kind="unavailable")
        ident = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[ident] = future
        self.send(kind, ident, *args)
        return await future

    async def command(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return await self._ask("call", name, args, kwargs)

    async def view(self) -> TableView:
        if self.closed.is_set():  # what the table said last is not served once it is gone
            raise TableError("the table is not answering (the daemon is stopping)", kind="unavailable")
        view = self._view
        if view is not None and view.version >= self._known:
            return view
        building = self._building
        if building is None or building.done():
            building = self._building = asyncio.ensure_future(self._ask("view"))
        # Shielded: the read is shared, and one caller that goes away must not cancel it for all.
        published: Published = await asyncio.shield(building)
        view = self._view
        if view is None or view.version < published.version:  # the first caller to get it masks it
            view = self._view = masked(published, self.adapter)
        return view

    def access(self, kind: AccessKind, body: Mapping[str, Any]) -> concurrent.futures.Future[Entry]:
        done: concurrent.futures.Future[Entry] = concurrent.futures.Future()
        asked = asyncio.ensure_future(self._ask("access", kind, dict(body)))

        def settle(task: asyncio.Future[Any]) -> None:
            if task.cancelled():
                done.cancel()
            elif (exc := task.exception()) is not None:
                done.set_exception(exc)
            else:
                done.set_result(task.result())

        asked.add_done_callback(settle)
        return done

    @property
    def controls(self) -> frozenset[str]:
        return self._controls

    async def control(self, name: str, *args: Any) -> Any:
        return await self._ask("control", name, args)

    def unmasked(self, recalled: Sequence[Recalled]) -> list[dict[str, Any]]:
        return [mask_cards(doc, hidden, self.adapter) for doc, hidden in recalled]

    def _count(self, count: int) -> None:
        self.send("count", count)

    def close(self) -> None:
        self._writer.close()


# -- the API's process --------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    """The API's process ends when the daemon does, even killed outright (Linux: PR_SET_PDEATHSIG),
    so it never holds the table's port for a daemon started after."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the daemon was gone before the line above
        os._exit(0)


async def serve_api(channel: socket.socket, listening: Sequence[socket.socket]) -> int:
    """The API's process: the app over a RemoteGate, served on the sockets the daemon bound."""
    from controller.api.app import create_app
    from controller.api.auth import Sessions
    from controller.api.live import LiveFeed
    from controller.api.runtime import Runtime
    from controller.logs import configure

    reader, writer = await asyncio.open_unix_connection(sock=channel)
    start = await read_frame(reader)
    if start is None or start[0] != "start":
        return 1
    settings: dict[str, Any] = start[1]
    configure(label=settings.get("label", ""))
    live = LiveFeed()
    gate = RemoteGate(reader, writer, settings, live)
    tokens = settings["tokens"]
    sessions_path = settings.get("sessions_path")
    rt = Runtime(
        tokens=tokens,
        gate=gate,
        config_view=settings.get("config_view"),
        sessions=Sessions(path=sessions_path, tokens=tokens) if sessions_path else None,
        live=live,
        tls=bool(settings.get("tls")),
    )
    http: dict[str, Any] = settings["http"]
    server = _Server(
        uvicorn.Config(
            create_app(rt),
            log_level="warning",
            access_log=False,
            lifespan="off",
            log_config=None,  # uvicorn's lines go through tablectl's (controller/logs.py)
            proxy_headers=bool(http.get("trusted_proxies")),
            forwarded_allow_ips=list(http.get("trusted_proxies") or []),
            ssl_certfile=http.get("tls_cert"),
            ssl_keyfile=http.get("tls_key"),
            # Each screen's messages compressed one by one cost the API more than the rest of the
            # feed: a table's LAN carries them as they are.
            ws_per_message_deflate=False,
        )
    )
    loop = asyncio.get_running_loop()
    reading = asyncio.create_task(gate.run(), name="channel")

    def stop() -> None:
        live.close_all()  # each screen's feed sends its close first, then the server closes
        loop.call_soon(server.exit)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    watching = asyncio.create_task(_stop_when(gate.closed, stop), name="daemon")
    serving = asyncio.create_task(server.serve(sockets=list(listening)), name="http")
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if serving.done() and not server.started:
        exc = serving.exception() if not serving.cancelled() else None
        why = "the HTTP server stopped at once" if exc is None else str(exc) if isinstance(exc, OSError) else repr(exc)
        gate.send("failed", why)
        with contextlib.suppress(Exception):
            await writer.drain()
        return 1
    gate.send("listening")
    settle_garbage_collector()
    trimming = asyncio.create_task(_trim_every(10.0))
    with contextlib.suppress(Exception):
        await serving
    for task in (trimming, reading, watching):
        task.cancel()
    return 0


class _Server(uvicorn.Server):
    """uvicorn's server; SIGTERM and SIGINT are the process's own handlers (they close the feed first).
    Its main loop wakes once a second (the Date header's clock), not ten times, and at once when
    told to stop (`exit`): an idle table's API costs the Pi next to nothing."""

    exiting: asyncio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    def exit(self) -> None:
        self.should_exit = True
        if self.exiting is not None:
            self.exiting.set()

    async def main_loop(self) -> None:
        self.exiting = exiting = asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000  # on_tick refreshes the Date header at multiples of 10
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(exiting.wait(), 1.0)


async def _stop_when(event: asyncio.Event, stop: Callable[[], None]) -> None:
    await event.wait()
    stop()


async def _trim_every(seconds: float) -> None:
    while True:
        await asyncio.sleep(seconds)
        give_back_memory()


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m controller.api.remote PARENT CHANNEL_FD LISTEN_FD...` (started by the daemon only)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print("controller.api.remote is started by `tablectl run`, not by hand", file=sys.stderr)
        return 2
    _die_with_parent(int(args[0]))
    with contextlib.suppress(OSError):  # below the table's process: the card path comes first
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
    channel = socket.socket(fileno=int(args[1]))
    listening = [socket.socket(fileno=int(fd)) for fd in args[2:]]
    return asyncio.run(serve_api(channel, listening))


if __name__ == "__main__":
    sys.exit(main())


