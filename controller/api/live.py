"""The live feed: every journaled entry, in order, to every connected screen.

A screen connects to `/api/ws` and says `{"after": N}` (the last sequence number it has). It gets
every entry after N from the journal, then the whole table state, then each new entry as it is
journaled with the state after it. Reading the backlog and joining the live feed happen in one
step on the table's loop, so nothing falls between them: no gaps, no duplicates. A screen that
cannot keep up is disconnected (it reconnects with its last seq and loses nothing).

Each screen gets what its role may see (`controller.visibility`): the dealer's feed has no
face-down card of a live hand, in an entry, its effects or the state; a message is encoded once
for each kind of audience, not once a screen.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from controller.engine.base import Effect, to_json
from controller.journal import Entry
from controller.table import Table
from controller.view import snapshot
from controller.visibility import Sight, sight

log = logging.getLogger(__name__)

QUEUE_LIMIT = 1000  # entries a screen may fall behind before it is told to reconnect
DEVICES_EVERY_S = 1.0  # the most often a change of devices alone sends the screens the state


class Subscriber:
    def __init__(self, role: str | None = None) -> None:
        self.role = role
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        self.overflowed = False


class LiveFeed:
    """A table output that fans each journaled entry out to the subscribed screens."""

    def __init__(self) -> None:
        self.subscribers: set[Subscriber] = set()
        # What a screen is sent as "the state", every card shown: the API sets this to its
        # /api/state view; each screen's role then masks what it may not see.
        self.describe: Callable[[Table], dict[str, Any]] = snapshot
        self._devices_due: asyncio.TimerHandle | None = None
        self._devices_told = float("-inf")

    def redrive(self, table: Table) -> None:
        """Nothing to re-drive: screens ask for the state when they (re)connect."""

    def devices_changed(self, table: Table) -> None:
        """A device came, went or failed (nothing journaled): every screen gets the state again,
        at most once a second (the camera reports every frame), the last change always told."""
        if not self.subscribers or self._devices_due is not None:
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
        state = self.describe(table)
        texts: dict[bool, str] = {}
        for sub in list(self.subscribers):
            seen = sight(table, sub.role)
            if seen.everything not in texts:
                message = {"type": "state", "seq": table.journal.last_seq, "state": seen.snapshot(state)}
                texts[seen.everything] = _encode(message)
            with contextlib.suppress(asyncio.QueueFull):  # one that far behind is told to reconnect by `update`
                sub.queue.put_nowait(texts[seen.everything])

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if not self.subscribers:
            return
        message = {**entry_message(entry), "live": True, "effects": [to_json(e) for e in effects]}
        message["state"] = self.describe(table)
        texts: dict[bool, str] = {}  # encoded once for each kind of audience
        for sub in list(self.subscribers):
            seen = sight(table, sub.role)
            if seen.everything not in texts:
                texts[seen.everything] = _encode(seen.entry(message, entry.round))
            try:
                sub.queue.put_nowait(texts[seen.everything])
            except asyncio.QueueFull:
                sub.overflowed = True
                self.subscribers.discard(sub)
                sub.queue.get_nowait()  # make room for the end-of-feed marker
                sub.queue.put_nowait(None)
                log.warning("a screen fell %d entries behind; asked it to reconnect", QUEUE_LIMIT)

    def subscribe(self, table: Table, after: int, role: str | None = None) -> tuple[list[str], Subscriber]:
        """The backlog after `after` plus the current state, as `role` sees them, and a live
        subscription, atomically (this runs on the table's loop without awaiting, so no entry
        can slip in between)."""
        seen: Sight = sight(table, role)
        entries = table.journal.entries(after=after)
        # An entry still remembered is told with its effects, as it was told live, so the screens
        # describe it the same way; an older one without (a screen then says less, never other).
        told = table.recent_effects
        backlog = [
            _encode(seen.entry({**entry_message(e), "live": False, **_effects(told, e.seq)}, e.round)) for e in entries
        ]
        state = {"type": "state", "seq": table.journal.last_seq, "state": seen.snapshot(self.describe(table))}
        backlog.append(_encode(state))
        sub = Subscriber(role)
        self.subscribers.add(sub)
        return backlog, sub

    def close_all(self) -> None:
        """The daemon is stopping: every screen's feed ends cleanly (they reconnect later)."""
        if self._devices_due is not None:
            self._devices_due.cancel()
            self._devices_due = None
        for sub in list(self.subscribers):
            self.subscribers.discard(sub)
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)


def _effects(told: dict[int, tuple[Effect, ...]], seq: int) -> dict[str, Any]:
    return {"effects": [to_json(e) for e in told[seq]]} if seq in told else {}


def _encode(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def entry_message(entry: Entry) -> dict[str, Any]:
    return {"type": "entry", **entry.to_json()}
