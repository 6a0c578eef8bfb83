"""The live feed: every journaled entry, in order, to every connected screen.

A screen connects to `/api/ws` and says `{"after": N}` (the last sequence number it has). It gets
every entry after N from the journal, then the whole table state, then each new entry as it is
journaled with what it changed of the state (`"changes"`: `[[path, value], ...]`,
controller/api/delta.py; the screen applies them to the state it has). No gaps, no duplicates: the
screen's subscription starts before the table reads the backlog, and the backlog says where it
ends, so each live message is either in the backlog or after it.

Two halves share the work. On the table's loop (`FeedSource`) each message is only put together
(the entry, its effects, what it changed of the state: worked out once, for every screen) with the
cards the dealer may not see in it, and handed over in one call (to the API's loop, or down the
channel to the API's own process: controller/api/remote.py); on the API's loop (`LiveFeed`) the
changes are applied to the state the feed keeps, masked and encoded once for each kind of audience
(every card, or the dealer's sight: controller/visibility; what changed of the dealer's sight is
worked out again once the dealer's hidden cards are involved), not once a screen; in the API's own
process each message is then one WebSocket frame made once per audience and written as it is to
every screen of that audience that has nothing queued (controller/api/http.py's `send_frame`),
with no task woken a screen. A screen that
joins gets the state as the last message left it, the state every connected screen has. The
table's loop does no masking or encoding for the screens. On the API's loop each screen has a
bounded queue; a screen that falls `QUEUE_LIMIT` messages behind is told to reconnect (it
reconnects with its last seq and loses nothing), so a slow client costs memory only up to that
bound and never slows the table. The backlog is read in slices, each a separate job on the
table's loop, so a screen asking for a long history never holds up a card. Messages the API's
side missed (its process was too slow to read them, or is new) are made good with the whole
state in the next message.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.api.delta import changes, patched
from controller.api.gate import TableBusy, json_text
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
#: States of the last messages kept while screens join (a screen further behind reconnects); with
#: nobody joining, the last one only.
KEPT_STATES = 2 * QUEUE_LIMIT
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
        # Once the screen's backlog is sent (routes/live.py): the frame writer its connection offers
        # (controller/api/http.py's `send_frame`), the last tick the backlog covered, and whether
        # the screen's task holds a message it has not written yet. While its queue is empty and it
        # holds none, a message is written straight to it, the frame made once for its audience.
        self.write: Callable[[bytes], bool] | None = None
        self.since = 0
        self.busy = False


@dataclass(frozen=True)
class Joined:
    """Where a screen's backlog ends: the table's last seq and the last message handed over."""

    seq: int
    tick: int


class FeedSource:
    """The table's half of the live feed (on the table's loop): each journaled entry put together
    (the entry, its effects, the state after it) with the cards the dealer may not see in it, and
    handed over with its tick by `deliver` (to the API's loop in this process, or down the channel
    to the API's process), only while some screen listens (`count`)."""

    def __init__(
        self,
        describe: Callable[[Table], dict[str, Any]] = snapshot,
        deliver: Callable[[int, Unmasked], bool | None] | None = None,
    ) -> None:
        # What a screen is sent as "the state", every card shown; each role then masks it.
        self.describe = describe
        self.deliver = deliver
        self.count = 0  # screens listening (told by the API's half)
        self._ticks = itertools.count(1)
        self._tick = 0  # the last tick handed over
        self._devices_due: asyncio.TimerHandle | None = None
        self._devices_told = float("-inf")
        self._base: dict[str, Any] | None = None  # the state as the last message left it
        self._told_hidden: frozenset[str] = frozenset()  # the cards the dealer could not see in it
        self._delivered = False  # the last message reached the API's side

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
        self._tell_state(table)

    def _tell_state(self, table: Table) -> None:
        """What changed of the table without an entry (a device, a screen joining), as a state message."""
        hidden = sight(table, None).current()
        state = self.describe(table)
        message = {"type": "state", "seq": table.journal.last_seq, **self._state_part(state)}
        self._hand_over((message, hidden))

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if not self.count:
            self._base = None  # nobody has the state: the next screen's message carries it whole
            return
        message = {**entry_message(entry), "live": True, "effects": [to_json(e) for e in effects]}
        message.update(self._state_part(self.describe(table)))
        dealer = sight(table, None)
        self._hand_over((message, dealer.hidden(entry.round) | dealer.current()))

    def _state_part(self, state: dict[str, Any]) -> dict[str, Any]:
        """The state after a message: what changed since the last message (once, for every screen),
        or the whole of it when the API's side has nothing to apply changes to."""
        base, self._base = self._base, state
        return {"state": state} if base is None else {"changes": changes(base, state)}

    def whole(self, message: dict[str, Any]) -> dict[str, Any]:
        """The message just handed over with the whole state instead of its changes (for an API's
        side that missed messages)."""
        if "changes" not in message or self._base is None:
            return message
        return {**{k: v for k, v in message.items() if k != "changes"}, "state": self._base}

    def reset(self) -> None:
        """A new API's side: the next message carries the whole state."""
        self._base = None

    def _hand_over(self, message: Unmasked) -> None:
        if self.deliver is None:
            return
        self._tick = tick = next(self._ticks)
        self._told_hidden = message[1]
        self._delivered = self.deliver(tick, message) is not False

    def join(self, table: Table, whole: bool = False) -> Joined:
        """Where a new screen's backlog ends (a job on the table's loop, after it subscribed): the
        last message handed over, whose state (as the API's side has it, as every screen connected
        has it) the screen gets; what changed since without a message comes with the next one. The
        state is handed over first when that message did not reach the API's side, or the dealer's
        sight changed since it, or the API's side asks for it `whole` (it has none yet)."""
        if whole:
            self._base = None
        if self._base is None or not self._delivered or self._told_hidden != sight(table, None).current():
            self._tell_state(table)
        return Joined(table.journal.last_seq, self._tick)

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
        # The state as the table's last message left it, whole (every card) and as the dealer sees
        # it, and the cards hidden in the latter; by tick, those since a screen started joining
        # (where its live messages take over).
        self._whole: dict[str, Any] | None = None
        self._seen: dict[str, Any] | None = None
        self._seen_hidden: frozenset[str] = frozenset()
        self._states: dict[int, tuple[int, dict[str, Any], dict[str, Any]]] = {}
        self._joining = 0  # screens waiting for the table to say where their backlog ends

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

    def _deliver(self, tick: int, message: Unmasked) -> bool:
        # On the table's loop, in one process with the API: to the API's loop in one call.
        loop = self._api_loop
        if loop is None or loop.is_closed():
            return False
        try:
            loop.call_soon_threadsafe(self.fan_out, tick, message)
        except RuntimeError:  # the API's loop has just closed: nobody listens
            return False
        return True

    # -- on the API's loop ----------------------------------------------------------------------

    def text(self, message: Unmasked, everything: bool) -> str:
        """A message as an audience sees it, encoded (on the API's loop)."""
        doc, hidden = message
        if not everything and hidden:
            assert self._adapter is not None, "attach the feed to its table first"
            doc = mask_cards(doc, hidden, self._adapter)
        return _encode(doc)

    def fan_out(self, tick: int, message: Unmasked) -> None:
        texts = self._texts(tick, message)
        frames: dict[bool, bytes] = {}
        for sub in list(self.subscribers):
            text = texts.get(sub.everything)
            if text is None:  # nothing this audience does not have already
                continue
            if sub.write is not None and not sub.busy and tick > sub.since and sub.queue.empty():
                frame = frames.get(sub.everything)
                if frame is None:
                    other = frames.get(not sub.everything)  # the same text for both audiences: one frame
                    frame = other if other is not None and texts.get(not sub.everything) is text else _text_frame(text)
                    frames[sub.everything] = frame
                if sub.write(frame):  # in order: nothing of this screen's is queued or being sent
                    continue
            try:
                sub.queue.put_nowait((tick, text))
            except asyncio.QueueFull:
                self._drop(sub)
            else:
                if sub.queue.qsize() > QUEUE_LIMIT:
                    self._drop(sub)

    def _texts(self, tick: int, message: Unmasked) -> dict[bool, str]:
        """A message from the table as each audience gets it, encoded once per audience: the state
        it carries (whole, or what changed) applied to the feed's own, and sent as what changed of
        it for that audience (whole only while the feed had none); a state message that changes
        nothing an audience sees is not sent to it."""
        doc, hidden = message
        if "state" in doc:
            whole = doc["state"]
            said = None if self._whole is None else changes(self._whole, whole)
        elif "changes" in doc and self._whole is not None:
            said = doc["changes"]
            whole = patched(self._whole, said)
        else:  # changes to a state the feed never had: a bug; every screen starts again, whole
            log.error("the table sent changes to a state the live feed does not have; screens reconnect")
            self.reset()
            self.close_all()
            return {}
        rest = {k: v for k, v in doc.items() if k not in ("state", "changes")}
        parts: dict[bool, dict[str, Any]]
        if said is None or self._seen is None:
            seen = self._masked(whole, hidden)
            parts = {True: {"state": whole}, False: {"state": seen}}
        else:
            if hidden:  # what the dealer sees, as masked now, whatever changed
                shown = changes(self._seen, self._masked(whole, hidden))
                seen = patched(self._seen, shown)
            else:
                # Nothing hidden now: the dealer sees the whole state, kept as the same document
                # (the changes applied once, not again to a copy); the same changes when nothing
                # was hidden before either (the dealer's state was the whole one then too).
                shown = said if not self._seen_hidden else changes(self._seen, whole)
                seen = whole
            parts = {True: {"changes": said}, False: {"changes": shown}}
        self._whole, self._seen, self._seen_hidden = whole, seen, hidden
        if not self._joining:  # the last state only, unless a screen is joining
            self._states.clear()
        self._states[tick] = (doc["seq"], whole, seen)
        while len(self._states) > KEPT_STATES:
            del self._states[next(iter(self._states))]
        texts: dict[bool, str] = {}
        # Encoded for the audiences someone is in (a screen's audience never changes; one that
        # subscribes later gets the state this message left, from `_states`, then what follows).
        listening = {sub.everything for sub in self.subscribers}
        for everything, part in parts.items():
            if everything not in listening:
                continue
            if doc.get("type") == "state" and part.get("changes") == []:
                continue
            if not everything and not hidden and _same_parts(part, parts[True]) and True in texts:
                texts[False] = texts[True]  # nothing hidden: the same message, encoded once
                continue
            said_rest = rest if everything else self._masked(rest, hidden)
            texts[everything] = _encode({**said_rest, **part})
        return texts

    @property
    def whole(self) -> dict[str, Any] | None:
        """The table's state as the last message left it, every card shown (None: none yet)."""
        return self._whole

    def _masked(self, doc: dict[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
        if not hidden:
            return doc
        assert self._adapter is not None, "attach the feed to its table first"
        return mask_cards(doc, hidden, self._adapter)

    def reset(self) -> None:
        """The table's messages were lost: the feed's state is none until one comes whole."""
        self._whole = self._seen = None
        self._seen_hidden = frozenset()
        self._states.clear()

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
            self._joining += 1
            try:
                joined: Joined = await _patiently(gate, "feed_join", self._whole is None)
                kept = self._states.get(joined.tick)
            finally:
                self._joining -= 1
            if kept is None:  # the feed moved on too far meanwhile (or lost messages): come again
                raise TableBusy("the live feed moved on while this screen joined")
            seq, whole, seen = kept
            state = _encode({"type": "state", "seq": seq, "state": whole if sub.everything else seen})
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


def _same_parts(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The same keys holding the same objects (not only equal ones: `1` and `true` are equal)."""
    return a.keys() == b.keys() and all(value is b[key] for key, value in a.items())


def _text_frame(text: str) -> bytes:
    from controller.api.http import text_frame  # the API's process only: uvicorn's, websockets'

    return text_frame(text)


def _encode(message: dict[str, Any]) -> str:
    return json_text(message)


def entry_message(entry: Entry) -> dict[str, Any]:
    return {"type": "entry", **entry.to_json()}
