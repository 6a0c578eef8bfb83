"""The API's own process: the app served over a `RemoteGate`, the API's side of the channel to
the daemon's table (controller/api/channel.py says what crosses it and why the API has a process of
its own). The process itself is started and wired by controller/app/api_process.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.api.channel import HEADER, frame, frame_length, read_frame, unframed
from controller.api.commands import Recalled
from controller.api.gate import AccessKind, Published, TableView, Told, masked
from controller.journal.log import Entry
from controller.table import TableError
from controller.table.visibility import mask_cards

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
        self._fed: tuple[Told, dict[str, Any]] | None = None  # the feed's last view part and state
        self._building: asyncio.Future[Any] | None = None
        self.closed = asyncio.Event()
        live.serve(self.adapter, self._count)

    async def run(self) -> None:
        """Read the table's messages until the channel ends (the daemon went away). Each is taken
        as its bytes arrive, in the transport's own callback (`_Frames`): a feed message reaches
        the screens with no task woken, and no turn of the loop, between the two."""
        try:
            transport = self._writer.transport
            if isinstance(transport, asyncio.ReadTransport) and not self._reader.at_eof():
                frames = _Frames(self._take, asyncio.get_running_loop().create_future())
                # What the stream read already and nobody took (the reader's buffer: asyncio has no
                # call for it that does not wait), then the transport's bytes straight to `frames`.
                buffered: bytearray = self._reader._buffer  # type: ignore[attr-defined]
                early, buffered[:] = bytes(buffered), b""
                transport.set_protocol(frames)
                if not transport.is_reading():
                    transport.resume_reading()  # the stream had paused it (its buffer full)
                frames.data_received(early)
                await frames.ended
            else:  # a stream that ended already, or not a socket's: read through the stream
                while (message := await read_frame(self._reader)) is not None:
                    self._take(message)
        finally:
            self.closed.set()
            gone = TableError("the table is not answering (the daemon is stopping)", kind="unavailable")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(gone)
            self._pending.clear()

    def _take(self, message: Any) -> None:
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
            _, tick, unmasked, said = message
            told = Told(*said)  # sent as its fields (channel.py's plain_frame)
            self._live.fan_out(tick, unmasked)
            whole = self._live.whole
            self._fed = (told, whole) if whole is not None else None
            self._known = max(self._known, told.version)
        elif kind == "feed-lost":
            self._fed = None
            self._live.reset()  # the next message carries the whole state
            self._live.close_all()  # each screen reconnects with its last seq: nothing lost
        else:
            log.error("the table sent %r: not a message of the channel", kind)

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

    def view_now(self) -> TableView | None:
        """The view of the table as it stands, if it can be had without asking the table (the
        live feed's last message, or a view made since, is the newest the API has been told of);
        None otherwise, and once the table is gone: `view` then asks, or says it is gone."""
        if self.closed.is_set():
            return None
        view = self._view
        if view is not None and view.version >= self._known:
            return view
        fed = self._fed
        if fed is not None and fed[0].version >= self._known:
            # The live feed's last message is the table as it stands: the view, without asking.
            view = self._view = masked(fed[0].published(fed[1]), self.adapter)
            return view
        return None

    async def view(self) -> TableView:
        if self.closed.is_set():  # what the table said last is not served once it is gone
            raise TableError("the table is not answering (the daemon is stopping)", kind="unavailable")
        view = self.view_now()
        if view is not None:
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


class _Frames(asyncio.Protocol):
    """The channel's bytes as they arrive, cut into frames (channel.py's `frame` and `plain_frame`:
    a 4-byte length and a pickle, or marshal's format), each handed to `take` at once; `ended` is
    done when the channel ends (or breaks: a frame too long, or one that does not unpickle)."""

    def __init__(self, take: Callable[[Any], None], ended: asyncio.Future[None]) -> None:
        self._take = take
        self.ended = ended
        self._buffer = bytearray()
        self._transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        if self.ended.done():
            return
        buffer = self._buffer
        buffer += data
        at, size = 0, len(buffer)
        try:
            while size - at >= HEADER.size:
                (word,) = HEADER.unpack_from(buffer, at)
                end = at + HEADER.size + frame_length(word)
                if end > size:
                    break
                message = unframed(word, buffer[at + HEADER.size : end])
                at = end
                self._take(message)
        except Exception as exc:  # a broken channel: as the end of it (the stream read said None)
            log.error("the table's channel broke: %s", exc)
            del buffer[:]
            self._end()
            return
        finally:
            if at:
                del buffer[:at]

    def eof_received(self) -> bool | None:
        self._end()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if not self.ended.done():
            self.ended.set_result(None)
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()
