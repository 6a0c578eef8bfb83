"""The live feed: every journaled entry, in order, to every connected screen.

A screen connects to `/api/ws` and says `{"after": N}` (the last sequence number it has). It gets
every entry after N from the journal, then the whole table state, then each new entry as it is
journaled with the state after it. No gaps, no duplicates: the screen's subscription starts before
the table reads the backlog, and the backlog says where it ends, so each live message is either
in the backlog or after it.

Two halves share the work. On the table's loop (`FeedSource`) each message is only put together
(the entry, its effects, the state after it) with the cards the dealer may not see in it, and
handed over in one call (to the API's loop, or down the channel to the API's own process:
controller/api/remote.py); on the API's loop (`LiveFeed`) it is masked and encoded once for each kind
of audience (every card, or the dealer's sight: controller/visibility), not once a screen. The
table's loop does no masking or encoding for the screens. On the API's loop each screen has a
bounded queue; a screen that falls `QUEUE_LIMIT` messages behind is told to reconnect (it
reconnects with its last seq and loses nothing), so a slow client costs memory only up to that
bound and never slows the table. The backlog is read in slices, each a separate job on the
table's loop, so a screen asking for a long history never holds up a card.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.api.gate import TableBusy
from controller.engine.base import Effect, to_json
from controller.journal.log import Entry
from controller.table.view import snapshot
from controller.table.visibility import SEES_EVERY_CARD, mask_cards, sight

if TYPE_CHECKING:
    from controller.api.gate import Gate
    from controller.games.base import GameAdapter
    from controller.table import Table

log = logging.getLogger(__name__)

QUEUE_LIMIT = 100  # messages a screen may fall behind before it is told to reconnect
DEVICES_EVERY_S = 1.0  # the most often a change of devices alone sends the screens the state
BACKLOG_SLICE = 100  # entries of a backlog read in one job on the table's loop (masked on the API's)
PATIENCE_S = 15.0  # how long a connecting screen waits for room in the table's queue
CATCHING_UP = 4  # screens whose backlog slices are read and encoded at once (the others wait their turn)

#: (tick, text): tick orders every message the table hands over; None ends the feed.
Message = tuple[int, str] | None
#: A message as the table's loop puts it together, with the cards the dealer may not see in it.
Unmasked = tuple[dict[str, Any], frozenset[str]]


class Subscriber:
    """One screen's feed (on the API's loop)."""

    def __init__(self, role: str | None = None) -> None:
        self.role = role
        self.everything = role in SEES_EVERY_CARD
        self.queue: asyncio.Queue[Message] = asyncio.Queue(maxsize=QUEUE_LIMIT + 1)
        self.overflowed = False


@dataclass(frozen=True)
class Joined:
    """Where a screen's backlog ends: the table's last seq and the last message handed over."""

    seq: int
    tick: int
    state: Unmasked  # the state message


class FeedSource:
    """The table's half of the live feed (on the table's loop): each journaled entry put together
    (the entry, its effects, the state after it) with the cards the dealer may not see in it, and
    handed over with its tick by `deliver` (to the API's loop in this process, or down the channel
    to the API's process), only while some screen listens (`count`)."""

    def __init__(
        self,
        describe: Callable[[Table], dict[str, Any]] = snapshot,
        deliver: Callable[[int, Unmasked], None] | None = None,
    ) -> None:
        # What a screen is sent as "the state", every card shown; each role then masks it.
        self.describe = describe
        self.deliver = deliver
        self.count = 0  # screens listening (told by the API's half)
        self._ticks = itertools.count(1)
        self._tick = 0  # the last tick handed over
        self._devices_due: asyncio.TimerHandle | None = None
        self._devices_told = float("-inf")

    def attach(self, table: Table) -> None:
        """Follow `table` (called once, before the table's loop runs the API's jobs)."""
        if self not in table.listeners:
            table.listeners.append(self)
            table.device_watchers.append(self.devices_changed)

    def redrive(self, table: Table) -> None:
        """Nothing to re-drive: screens ask for the state when they (re)connect."""

    def devices_changed(self, table: Table) -> None:
        """A device came, went or failed (nothing journaled): every screen gets the state again,
        at most once a second (the camera reports every frame), the last change always told."""
        if not self.count or self._devices_due is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the table's loop (start-up): the screens get the state on connect
            return
        wait = self._devices_told + DEVICES_EVERY_S - loop.time()
        if wait > 0:
            self._devices_due = loop.call_later(wait, self._tell_devices, table)
        else:
            self._tell_devices(table)

    def _tell_devices(self, table: Table) -> None:
        self._devices_due = None
        self._devices_told = asyncio.get_running_loop().time()
        state = {"type": "state", "seq": table.journal.last_seq, "state": self.describe(table)}
        self._hand_over((state, sight(table, None).current()))

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if not self.count:
            return
        message = {**entry_message(entry), "live": True, "effects": [to_json(e) for e in effects]}
        message["state"] = self.describe(table)
        dealer = sight(table, None)
        self._hand_over((message, dealer.hidden(entry.round) | dealer.current()))

    def _hand_over(self, message: Unmasked) -> None:
        if self.deliver is None:
            return
        self._tick = tick = next(self._ticks)
        self.deliver(tick, message)

    def join(self, table: Table) -> Joined:
        """Where a new screen's backlog ends (a job on the table's loop, after it subscribed)."""
        state = {"type": "state", "seq": table.journal.last_seq, "state": self.describe(table)}
        return Joined(table.journal.last_seq, self._tick, (state, sight(table, None).current()))

    def backlog(self, table: Table, after: int, upto: int) -> tuple[list[Unmasked], int]:
        """Up to BACKLOG_SLICE entries after `after` (through `upto`), each with the cards the
        dealer may not see in it, and the last seq read (a job on the table's loop)."""
        dealer = sight(table, None)
        now = dealer.current()
        told = table.recent_effects
        out: list[Unmasked] = []
        last = after
        for e in table.journal.entries(after=after, upto=upto):
            # An entry still remembered is told with its effects, as it was told live, so the screens
            # describe it the same way; an older one without (a screen then says less, never other).
            out.append(({**entry_message(e), "live": False, **_effects(told, e.seq)}, dealer.hidden(e.round) | now))
            last = e.seq
            if len(out) >= BACKLOG_SLICE:
                break
        else:
            last = upto
        return out, last

    def cancel_timers(self) -> None:
        """On the table's loop, as it stops: no device update is pending."""
        if self._devices_due is not None:
            self._devices_due.cancel()
            self._devices_due = None


class LiveFeed:
    """The API's half of the live feed: fans each message the table hands over out to the
    subscribed screens (on the API's loop). In one process with the table, `attach` makes the
    table's half (`source`) and hands its messages over between the loops; in the API's own
    process, `serve` takes them from the channel and `on_count` tells the table how many listen."""

    def __init__(self) -> None:
        self.subscribers: set[Subscriber] = set()  # the API's loop's
        self._api_loop: asyncio.AbstractEventLoop | None = None
        self._adapter: GameAdapter | None = None  # the table's game: what masking asks of it
        self._catching_up: asyncio.Semaphore | None = None  # made on the API's loop, when first needed
        self.source: FeedSource | None = None  # the table's half, when the table is in this process
        self.on_count: Callable[[int], None] | None = None  # told the number of screens (another process)

    def attach(self, table: Table, describe: Callable[[Table], dict[str, Any]]) -> FeedSource:
        """Follow `table` in this process (called once, before the table's loop runs the API's jobs)."""
        self._adapter = table.adapter
        if self.source is None:
            self.source = FeedSource(describe, self._deliver)
        self.source.describe = describe
        self.source.attach(table)
        return self.source

    def serve(self, adapter: GameAdapter, on_count: Callable[[int], None]) -> None:
        """Fan out what another process's table hands over (`fan_out`, called on the API's loop)."""
        self._adapter = adapter
        self.on_count = on_count

    def _deliver(self, tick: int, message: Unmasked) -> None:
        # On the table's loop, in one process with the API: to the API's loop in one call.
        loop = self._api_loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the API's loop has just closed: nobody listens
            loop.call_soon_threadsafe(self.fan_out, tick, message)

    # -- on the API's loop ----------------------------------------------------------------------

    def text(self, message: Unmasked, everything: bool) -> str:
        """A message as an audience sees it, encoded (on the API's loop)."""
        doc, hidden = message
        if not everything and hidden:
            assert self._adapter is not None, "attach the feed to its table first"
            doc = mask_cards(doc, hidden, self._adapter)
        return _encode(doc)

    def fan_out(self, tick: int, message: Unmasked) -> None:
        texts: dict[bool, str] = {}
        for sub in list(self.subscribers):
            text = texts.get(sub.everything)
            if text is None:
                text = texts[sub.everything] = self.text(message, sub.everything)
            try:
                sub.queue.put_nowait((tick, text))
            except asyncio.QueueFull:
                self._drop(sub)
            else:
                if sub.queue.qsize() > QUEUE_LIMIT:
                    self._drop(sub)

    def _drop(self, sub: Subscriber) -> None:
        sub.overflowed = True
        self.unsubscribe(sub)
        while not sub.queue.empty():  # what it had not taken is freed now, not when it goes
            sub.queue.get_nowait()
        sub.queue.put_nowait(None)
        log.warning("a screen fell %d messages behind; asked it to reconnect", QUEUE_LIMIT)

    def _counted(self) -> None:
        count = len(self.subscribers)
        if self.source is not None:
            self.source.count = count
        if self.on_count is not None:
            self.on_count(count)

    def subscribe(self, role: str | None) -> Subscriber:
        """A new screen's feed: every message handed over from now on (the API's loop)."""
        self._api_loop = asyncio.get_running_loop()
        sub = Subscriber(role)
        self.subscribers.add(sub)
        self._counted()
        return sub

    async def history(self, gate: Gate, sub: Subscriber, after: int) -> AsyncIterator[list[str] | int]:
        """The backlog after `after` and the state, as `sub`'s role sees them, read slice by slice
        on the table's loop and yielded a slice at a time (so a long history is never held whole
        in memory), then the tick after which `sub`'s queue holds what is new."""
        if self._catching_up is None:
            self._catching_up = asyncio.Semaphore(CATCHING_UP)
        async with self._catching_up:
            joined: Joined = await _patiently(gate, "feed_join")
            state = self.text(joined.state, sub.everything)  # held as text, not as the table's documents
        at = after
        while at < joined.seq:
            # A few screens' slices are read and encoded at a time: a crowd reconnecting at once is
            # served in turn, and the API's memory holds a few slices being made, not one a screen.
            async with self._catching_up:
                part, at = await _patiently(gate, "feed_backlog", at, joined.seq)
                texts = [self.text(message, sub.everything) for message in part]
                del part
            yield texts
        yield [state]
        yield joined.tick

    def unsubscribe(self, sub: Subscriber) -> None:
        if sub in self.subscribers:
            self.subscribers.discard(sub)
            self._counted()

    def close_all(self) -> None:
        """The daemon is stopping: every screen's feed ends cleanly (they reconnect later).
        Called on the API's loop (or from anywhere once it has stopped)."""
        for sub in list(self.subscribers):
            self.unsubscribe(sub)
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)

    def cancel_timers(self) -> None:
        """On the table's loop, as it stops: no device update is pending."""
        if self.source is not None:
            self.source.cancel_timers()


async def _patiently(gate: Gate, name: str, *args: Any) -> Any:
    """Command `name` on the table's loop, waiting (on the API's loop, which costs the table nothing) while
    the gate's queue is full rather than refusing at once: a crowd of screens connecting together
    is served in turn instead of told to come back and so connecting again and again. Refused
    (TableBusy) only after PATIENCE_S."""
    waited, pause = 0.0, 0.02
    while True:
        try:
            return await gate.command(name, *args)
        except TableBusy:
            if waited >= PATIENCE_S:
                raise
            await asyncio.sleep(pause)
            waited += pause
            pause = min(pause * 2, 0.5)


def _effects(told: dict[int, tuple[Effect, ...]], seq: int) -> dict[str, Any]:
    return {"effects": [to_json(e) for e in told[seq]]} if seq in told else {}


def _encode(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def entry_message(entry: Entry) -> dict[str, Any]:
    return {"type": "entry", **entry.to_json()}
