"""The channel between the daemon's table and the API's own process: the table's side of it.

`tablectl run` keeps the table, the shoe, the lamps, the display and the journal in its own
process, and serves HTTP and the screens' WebSockets from a second one (`python -m
controller.app.api_process`, its app served over controller/api/remote.py's `RemoteGate`, started
here, `ApiProcess`, with the listening sockets the daemon bound and
one end of a socketpair). The two share no interpreter lock and no memory: however busy the API is
(a hundred screens, a flood of requests, a long recall), the table's threads never wait for the
API's to let go of the lock, and the kernel schedules the API's process below the table's (nice
+NICE). Whatever happens to the API's process, the table deals on; the daemon starts it again.

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
                 ("feed", tick, message, told)          a live-feed message, before masking (the
                                                        state whole, or what changed since the last),
                                                        and the view beside it (gate.py's `Told`):
                                                        the API's view is made from the feed while
                                                        it flows, not asked for
                 ("feed-lost",)                         messages were dropped: screens reconnect
Each frame is a 4-byte length and a pickle. Pickle is safe here because both ends are this
program's own processes over an inherited socketpair that nothing else can reach; a command is a
name looked up on the table's side (anything else is refused), never code sent over. This module
is the table's side: the daemon's process imports neither FastAPI nor uvicorn.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import marshal
import pickle
import signal
import socket
import struct
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.api.commands import Controls
from controller.api.gate import Published, TableBusy, TableGate
from controller.api.launch import ApiChild, Launched, launch

if TYPE_CHECKING:
    from controller.api.live import FeedSource, Unmasked
    from controller.engine.base import Effect
    from controller.journal.log import Entry
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


#: A frame's length word with this bit set: its message is plain values in marshal's format (`plain_frame`).
PLAIN = 1 << 31


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def plain_frame(message: Any) -> bytes:
    """`frame` for a message of plain values only (dicts, lists, tuples, strings, numbers, None,
    booleans, frozensets: a live-feed message, sent after every entry), in marshal's format (the
    interpreter's own for such values: half pickle's time to write and two thirds of it to read,
    for the same values back; both processes run the same interpreter). A message holding
    anything else is pickled, as `frame` does."""
    try:
        data = marshal.dumps(message)
    except ValueError:  # not plain values only (marshal takes no subclass, no other object)
        return frame(message)
    return HEADER.pack(PLAIN | len(data)) + data


def unframed(word: int, data: bytes | bytearray | memoryview) -> Any:
    """The message of a frame whose length word is `word` and whose bytes are `data`."""
    return marshal.loads(data) if word & PLAIN else pickle.loads(data)


def frame_length(word: int) -> int:
    """The length of a frame's message from its length word (ConnectionError past MAX_FRAME)."""
    size = word & ~PLAIN
    if size > MAX_FRAME:
        raise ConnectionError(f"a frame of {size} bytes on the API's channel")
    return size


async def read_frame(reader: asyncio.StreamReader) -> Any:
    """The next message, or None at the end of the channel."""
    try:
        (word,) = HEADER.unpack(await reader.readexactly(HEADER.size))
        return unframed(word, await reader.readexactly(frame_length(word)))
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
        self._changing = False  # a "changed" is to be told at the end of this turn of the loop
        gate.on_change = self._changed
        source.deliver = self._deliver
        gate.told_after(self)  # `update`: after the feed's table half, in the same telling

    async def serve(self, sock: socket.socket, settings: Mapping[str, Any]) -> None:
        """Serve the API's process on `sock` until it goes away (its end closes)."""
        reader, writer = await asyncio.open_unix_connection(sock=sock)
        self._writer = writer
        self._told = 0
        self._lost = False
        self.source.reset()  # a new API's side: it has no state to apply changes to
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

    def _send(self, message: Any, *, plain: bool = False) -> None:
        if self._changing:  # a change is told before anything sent after it (a reply to a command)
            self._tell_changed()
        writer = self._writer
        if writer is not None and not writer.is_closing():
            writer.write(plain_frame(message) if plain else frame(message))

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

    def _changed(self, version: int, entry: bool = False) -> None:
        # Told once the feed had its say: an entry's change by `update` below, later in the same
        # telling of the entry (no turn of the loop an entry); any other change (a device's) at the
        # end of this turn of the loop. Unless a feed message said it meanwhile (the API makes its
        # view from the feed, and the table writes to the channel once an entry).
        if self._writer is not None and self._told < version and not self._changing:
            self._changing = True
            if not entry:
                asyncio.get_running_loop().call_soon(self._tell_changed)

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        """Told of each entry after the gate and the live feed's table half (`TableGate.told_after`):
        the change the feed's message did not say (nobody listens, or it was dropped) is told now."""
        if self._changing:
            self._tell_changed()

    def redrive(self, table: Table) -> None:
        """Nothing to show again: the API's side asks for the view when it needs it."""

    def _tell_changed(self) -> None:
        if not self._changing:
            return
        self._changing = False
        version = self.gate.version
        if self._writer is not None and self._told < version:
            self._told = version  # told once; the next change after the API's next view is told again
            self._send(("changed", version))

    def _deliver(self, tick: int, message: Unmasked) -> bool:
        """Send a live-feed message to the API's side; False when it was dropped."""
        writer = self._writer
        if writer is None or writer.is_closing():
            return False
        if writer.transport.get_write_buffer_size() > FEED_BACKLOG_LIMIT:
            self._lost = True  # the API's process is not reading: its screens catch up later
            return False
        if self._lost:
            self._lost = False
            self._send(("feed-lost",))
            message = (self.source.whole(message[0]), message[1])  # what was lost is not applied to
        told = self.gate.told()
        self._told = max(self._told, told.version)  # the API knows this much now
        # Plain values only (the Told as its fields, in order): written and read in marshal's format.
        said = (told.version, told.journal_fault, told.hidden, told.meters)
        self._send(("feed", tick, message, said), plain=True)
        return True


# -- the daemon's handle on the API's process (on the table's loop) ---------------------------------

#: How long the API's process may take to listen, and to stop once asked.
START_S = 60.0
STOP_S = 5.0
#: A crashed API process is started again after this long (the table deals on meanwhile).
RESTART_S = 1.0


class ApiProcess:
    """The API's process, started by the daemon with the sockets it bound, watched, and started
    again if it ever ends on its own (the table deals on meanwhile: the screens reconnect).

    `spawn` starts the process as early as the daemon can (it loads FastAPI and the app while the
    table opens its journal and its devices: start-up costs the two at once, not one after the
    other); `serve` hands it the table's side once there is one, and waits until it listens."""

    def __init__(self, sockets: Sequence[socket.socket]) -> None:
        self.sockets = list(sockets)
        self.server: TableServer | None = None
        self.settings: dict[str, Any] = {}
        self.proc: ApiChild | None = None
        self.stopping = False
        self.starts = 0
        self._ours: socket.socket | None = None
        self._serving: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None

    async def spawn(self) -> None:
        """Start the API's process; it waits on the channel for what it serves (`serve`)."""
        self.adopt(await launch(self.sockets))

    def adopt(self, launched: Launched) -> None:
        """The API's process started already (`tablectl run` starts it before it loads the table)."""
        self.proc, self._ours = launched.proc, launched.channel
        self.starts += 1

    async def serve(self, gate: TableGate, settings: Mapping[str, Any]) -> None:
        """Serve the table's side to the API's process and wait until it listens; OSError saying
        why when it cannot. From then on, an API process that ends is started again."""
        assert gate.commands.feed is not None, "the table's side has its feed"
        self.server = TableServer(gate, gate.commands.feed, gate.devices)
        self.settings = dict(settings)
        if self.proc is None:
            await self.spawn()
        await self._served()
        self._watching = asyncio.create_task(self._watch(), name="api-process")

    async def _served(self) -> None:
        assert self.server is not None and self.proc is not None and self._ours is not None
        ours, self._ours = self._ours, None
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
                await self.spawn()
                await self._served()
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
