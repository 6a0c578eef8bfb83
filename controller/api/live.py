"""The live feed: every journaled entry, in order, to every connected screen.

A screen connects to `/api/ws` and says `{"after": N}` (the last sequence number it has). It gets
every entry after N from the journal, then the whole table state, then each new entry as it is
journaled with the state after it. Reading the backlog and joining the live feed happen in one
step on the table's loop, so nothing falls between them: no gaps, no duplicates. A screen that
cannot keep up is disconnected (it reconnects with its last seq and loses nothing).
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

log = logging.getLogger(__name__)

QUEUE_LIMIT = 1000  # entries a screen may fall behind before it is told to reconnect


class Subscriber:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        self.overflowed = False


class LiveFeed:
    """A table output that fans each journaled entry out to the subscribed screens."""

    def __init__(self) -> None:
        self.subscribers: set[Subscriber] = set()
        # What a screen is sent as "the state": the API sets this to its /api/state view.
        self.describe: Callable[[Table], dict[str, Any]] = snapshot

    def redrive(self, table: Table) -> None:
        """Nothing to re-drive: screens ask for the state when they (re)connect."""

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if not self.subscribers:
            return
        message = {**entry_message(entry), "live": True, "effects": [to_json(e) for e in effects]}
        message["state"] = self.describe(table)
        text = _encode(message)  # encoded once, sent to every screen
        for sub in list(self.subscribers):
            try:
                sub.queue.put_nowait(text)
            except asyncio.QueueFull:
                sub.overflowed = True
                self.subscribers.discard(sub)
                sub.queue.get_nowait()  # make room for the end-of-feed marker
                sub.queue.put_nowait(None)
                log.warning("a screen fell %d entries behind; asked it to reconnect", QUEUE_LIMIT)

    def subscribe(self, table: Table, after: int) -> tuple[list[str], Subscriber]:
        """The backlog after `after` plus the current state, and a live subscription, atomically
        (this runs on the table's loop without awaiting, so no entry can slip in between)."""
        backlog = [_encode({**entry_message(e), "live": False}) for e in table.journal.entries(after=after)]
        backlog.append(_encode({"type": "state", "seq": table.journal.last_seq, "state": self.describe(table)}))
        sub = Subscriber()
        self.subscribers.add(sub)
        return backlog, sub

    def close_all(self) -> None:
        """The daemon is stopping: every screen's feed ends cleanly (they reconnect later)."""
        for sub in list(self.subscribers):
            self.subscribers.discard(sub)
            with contextlib.suppress(asyncio.QueueFull):
                sub.queue.put_nowait(None)

    def unsubscribe(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)


def _encode(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def entry_message(entry: Entry) -> dict[str, Any]:
    return {"type": "entry", **entry.to_json()}
