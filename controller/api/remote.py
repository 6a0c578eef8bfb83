"""The API in a process of its own: the channel between the daemon's table and the API's process.

`tablectl run` keeps the table, the shoe, the lamps, the display and the journal in its own
process, and serves HTTP and the screens' WebSockets from a second one (`python -m
controller.api.remote`, started by the daemon with the listening sockets it bound and one end of a
socketpair). The two share no interpreter lock and no memory: however busy the API is (a hundred
screens, a flood of requests, a long recall), the table's threads never wait for the API's to let
go of the lock, and the kernel schedules the API's process below the table's (nice +NICE).
Whatever happens to the API's process, the table deals on; the daemon starts it again.

What crosses the channel is the gate's work and nothing else (controller/api/gate.py's `Gate`):
  API -> table   ("call", id, command, args, kwargs)  a named command (controller/api/commands.py)
                 ("view", id)                           the table as it stands (masked by the API)
                 ("access", id, kind, body)             an access journaled (in bursts)
                 ("control", id, name, args)            a device control (off the table's loop)
                 ("count", n)                           screens listening to the live feed
                 ("listening",) / ("failed", why)       the API's server is up, or cannot be
  table -> API   ("start", settings)                    what the API serves (first, once)
                 ("reply", id, ok, value)               a result, or the refusal raised
                 ("changed", version)                   the table changed since the last view
                 ("feed", tick, message)                a live-feed message, before masking
                 ("feed-lost",)                         messages were dropped: screens reconnect
Each frame is a 4-byte length and a pickle. Pickle is safe here because both ends are this
program's own processes over an inherited socketpair that nothing else can reach; a command is a
name looked up on the table's side (anything else is refused), never code sent over.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import functools
import itertools
import logging
import os
import pickle
import signal
import socket
import struct
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import uvicorn

from controller.api.commands import Controls, Recalled
from controller.api.gate import AccessKind, Published, TableBusy, TableGate, TableView, masked
from controller.heap import give_back_memory, settle_garbage_collector
from controller.journal import Entry
from controller.table import TableError
from controller.visibility import mask_cards

if TYPE_CHECKING:
    from controller.api.live import FeedSource, LiveFeed, Unmasked
    from controller.games.base import GameAdapter
    from controller.table import Table

log = logging.getLogger("controller.api")

HEADER = struct.Struct("!I")
MAX_FRAME = 256 * 1024 * 1024  # a frame longer than this is a broken channel, not a message
#: Bytes the table lets wait for the API's process before it drops live-feed messages (the screens
#: are then told to reconnect, and catch up from the journal: nothing is lost).
FEED_BACKLOG_LIMIT = 16 * 1024 * 1024
#: The API's process runs this much nicer than the daemon's (the table's) process (added to the
#: daemon's own nice value): when the Pi's cores are short, the kernel gives them to the card path
#: first (a process may always lower its own priority; raising the table's would need privileges
#: the service does not have).
NICE = 5


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """The next message, or None at the end of the channel."""
    try:
        (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
        if size > MAX_FRAME:
            raise ConnectionError(f"a frame of {size} bytes on the API's channel")
        return pickle.loads(await reader.readexactly(size))
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


def _picklable(exc: BaseException) -> BaseException:
    """`exc` as it can cross the channel (a refusal keeps its type and its words)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


# -- the table's side (the daemon's process, on the table's loop) -----------------------------------


class TableServer:
    """Serves one API process at a time over the channel, on the table's loop: its commands through
    the gate (one at a time, between cards), the view, accesses, the device controls in a thread,
    and the live feed's messages as the table hands them over."""

    def __init__(self, gate: TableGate, source: FeedSource, controls: Controls) -> None:
        self.gate = gate
        self.source = source
        self.controls = controls
        self.listening = asyncio.Event()
        self.failed: str | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._told = 0  # the last version the API was told of
        self._lost = False  # live-feed messages were dropped since the API last caught up
        gate.on_change = self._changed
        source.deliver = self._deliver

    async def serve(self, sock: socket.socket, settings: Mapping[str, Any]) -> None:
        """Serve the API's process on `sock` until it goes away (its end closes)."""
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        self._writer = writer
        self._told = 0
        self._lost = False
        self.listening.clear()
        self.failed = None
        try:
            self._send(("start", dict(settings)))
            while (message := await read_frame(reader)) is not None:
                self._dispatch(message)
        finally:
            self._writer = None
            self.source.count = 0  # nobody listens to the feed until an API process says so
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _send(self, message: Any) -> None:
        writer = self._writer
        if writer is not None and not writer.is_closing():
            writer.write(frame(message))

    def _dispatch(self, message: Any) -> None:
        kind = message[0]
        if kind == "call":
            _, ident, name, args, kwargs = message
            try:
                fn = self.gate.commands.find(name)
                future = self.gate.submit(lambda table: fn(table, *args, **kwargs))
            except (LookupError, TableBusy) as exc:
                self._send(("reply", ident, False, exc))
                return
            future.add_done_callback(functools.partial(self._reply, ident))
        elif kind == "view":
            _, ident = message
            self.gate.submit(self._publish, urgent=True).add_done_callback(functools.partial(self._reply, ident))
        elif kind == "access":
            _, ident, access, body = message
            self.gate.access(access, body).add_done_callback(functools.partial(self._reply, ident))
        elif kind == "control":
            _, ident, name, args = message
            try:
                fn = self.controls.find(name)
            except LookupError as exc:
                self._send(("reply", ident, False, exc))
                return
            running = asyncio.get_running_loop().run_in_executor(None, fn, *args)
            running.add_done_callback(functools.partial(self._reply, ident))
        elif kind == "count":
            self.source.count = int(message[1])
        elif kind == "listening":
            self.listening.set()
        elif kind == "failed":
            self.failed = str(message[1])
            self.listening.set()
        else:
            log.error("the API's process sent %r: not a message of the channel", kind)

    def _reply(self, ident: int, done: concurrent.futures.Future[Any] | asyncio.Future[Any]) -> None:
        # On the table's loop (the gate's jobs and accesses complete there; executor futures wrapped
        # by run_in_executor complete there too).
        if done.cancelled():
            self._send(("reply", ident, False, RuntimeError("cancelled")))
            return
        exc = done.exception()
        if exc is not None:
            self._send(("reply", ident, False, _picklable(exc)))
            return
        try:
            self._send(("reply", ident, True, done.result()))
        except Exception as unpicklable:  # a command's result that cannot cross: a bug, said
            log.exception("the table's answer to the API could not be sent")
            self._send(("reply", ident, False, _picklable(unpicklable)))

    def _publish(self, table: Table) -> Published:
        published = self.gate.publish(table)
        self._told = published.version  # the API knows this much now
        return published

    def _changed(self, version: int) -> None:
        if self._writer is not None and self._told < version:
            self._told = version  # told once; the next change after the API's next view is told again
            self._send(("changed", version))

    def _deliver(self, tick: int, message: Unmasked) -> None:
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        if writer.transport.get_write_buffer_size() > FEED_BACKLOG_LIMIT:
            self._lost = True  # the API's process is not reading: its screens catch up later
            return
        if self._lost:
            self._lost = False
            self._send(("feed-lost",))
        self._send(("feed", tick, message))


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
        self._known = 1  # the table's version the API knows of (any view is older at first)
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
        loop.call_soon(setattr, server, "should_exit", True)

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
    """uvicorn's server; SIGTERM and SIGINT are the process's own handlers (they close the feed first)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


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


# -- the daemon's handle on the API's process (on the table's loop) ---------------------------------

#: How long the API's process may take to listen, and to stop once asked.
START_S = 60.0
STOP_S = 5.0
#: A crashed API process is started again after this long (the table deals on meanwhile).
RESTART_S = 1.0


class ApiProcess:
    """The API's process, started by the daemon with the sockets it bound, watched, and started
    again if it ever ends on its own (the table deals on meanwhile: the screens reconnect)."""

    def __init__(
        self, gate: TableGate, sockets: Sequence[socket.socket], settings: Mapping[str, Any]
    ) -> None:
        assert gate.commands.feed is not None, "the table's side has its feed"
        self.server = TableServer(gate, gate.commands.feed, gate.devices)
        self.sockets = list(sockets)
        self.settings = dict(settings)
        self.proc: asyncio.subprocess.Process | None = None
        self.stopping = False
        self.starts = 0
        self._serving: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the API's process and wait until it listens; OSError saying why when it cannot."""
        await self._spawn()
        self._watching = asyncio.create_task(self._watch(), name="api-process")

    async def _spawn(self) -> None:
        ours, theirs = socket.socketpair()
        fds = [theirs.fileno(), *(s.fileno() for s in self.sockets)]
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "controller.api.remote",
                str(os.getpid()),
                *map(str, fds),
                pass_fds=fds,
                stdin=asyncio.subprocess.DEVNULL,
            )
        finally:
            theirs.close()
        self.starts += 1
        self._serving = asyncio.create_task(self.server.serve(ours, self.settings), name="api-channel")
        listening = asyncio.create_task(self.server.listening.wait())
        ended = asyncio.create_task(self.proc.wait())
        done, _ = await asyncio.wait({listening, ended}, timeout=START_S, return_when=asyncio.FIRST_COMPLETED)
        listening.cancel()
        ended.cancel()
        if self.server.failed is not None:
            raise OSError(self.server.failed)
        if listening not in done:
            if self.proc.returncode is None:
                self.proc.kill()
            raise OSError(
                f"the API's process did not start (exit {self.proc.returncode})"
                if ended in done
                else f"the API's process did not listen within {START_S:g} s"
            )

    async def _watch(self) -> None:
        while True:
            assert self.proc is not None
            code = await self.proc.wait()
            if self.stopping:
                return
            log.error("the API's process ended (exit %s); starting it again: the table deals on", code)
            await asyncio.sleep(RESTART_S)
            if self.stopping:
                return
            try:
                await self._spawn()
            except OSError as exc:
                log.error("the API's process could not start again: %s", exc)

    def kill(self) -> None:
        """The daemon is ending on an error: the API's process goes with it at once."""
        self.stopping = True
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    async def stop(self) -> None:
        """Every screen's feed ends cleanly (they reconnect later), then the API's process ends."""
        self.stopping = True
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), STOP_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for task in (self._watching, self._serving):
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
