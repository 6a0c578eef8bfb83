"""The table's side of the API, where the table is: its gate with the commands the API may name and
the device controls it may use, and the live feed's table half. The daemon makes it on the table's
loop and serves it to the API's own process (controller/api/channel.py); a test's app makes it
in one process with the table (`Runtime(table=...)`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from controller.adapters.metrics import TableMetrics
from controller.api.commands import Commands, sim_controls
from controller.api.gate import TableGate
from controller.api.live import FeedSource, LiveFeed, Unmasked
from controller.engine.cards import Card
from controller.security.authentication import Report
from controller.table import Table


class SimControls(Protocol):
    """What the simulated dealer can do with the simulated shoe (simulation only)."""

    def stack(self, cards: list[Card]) -> None: ...

    def draw(self, count: int) -> list[Card]: ...

    def fault(self, name: str, on: bool) -> str: ...


class SimSceneControls(Protocol):
    """What a simulation can do to what the simulated camera sees (simulation only)."""

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]: ...



def table_side(
    table: Table,
    loop: asyncio.AbstractEventLoop | None,
    *,
    live: LiveFeed | None = None,
    deliver: Callable[[int, Unmasked], bool | None] | None = None,
    device_views: Mapping[str, Callable[[], Any]] | None = None,
    metrics: TableMetrics | None = None,
    sim: SimControls | None = None,
    sim_pins: Callable[[], dict[str, Any]] | None = None,
    sim_scene: SimSceneControls | None = None,
    recalibrate: Callable[[], None] | None = None,
    authenticate: Callable[[bytes | None], Report] | None = None,
    accept_config: Callable[[Table, str, str], dict[str, Any]] | None = None,
) -> TableGate:
    """The table's side of the API, on `loop`: the gate with its commands and device controls, and
    the live feed's table half (handing over to `live` in this process, or to `deliver`)."""
    views = dict(device_views or {})
    last = _LastSnapshot()

    def whole_state(table: Table) -> dict[str, Any]:
        """The table's state with every card shown (on the table's loop): only ever sent through
        a role's sight. The table's part is made once per change of the table (the live feed's
        message and the view the API asks for after the same entry share it); the devices' own
        views are read every time."""
        snap = dict(last.of(table))
        devices = dict(snap.get("devices") or {})
        for name, view in views.items():
            devices[name] = view()
        snap["devices"] = devices
        return snap

    source = live.attach(table, whole_state) if live is not None else FeedSource(whole_state, deliver)
    kept = metrics if metrics is not None else TableMetrics(table)

    def metrics_text() -> tuple[str, bytes]:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest  # at the first scrape only

        return CONTENT_TYPE_LATEST, generate_latest(kept.registry)

    gate = TableGate(
        table,
        loop,
        describe=whole_state,
        commands=Commands(source, metrics_text=metrics_text, accept_config=accept_config),
        controls=sim_controls(sim, sim_pins, sim_scene, recalibrate, authenticate),
    )
    # Told after the gate: a feed message handed to another process's API says the gate's version
    # after its entry (controller/api/channel.py: the API's view is then made from the feed).
    source.attach(table)
    return gate


class _LastSnapshot:
    """The table's snapshot (controller/view.py) as of its last change. The table's state changes
    only by an applied entry (a new `journal.last_seq`), by the journal's own fault, and by a
    device's status (`table.devices`): while none of them has changed, the snapshot is the same
    document, so it is not made again. Documents handed out are never changed afterwards (each
    caller copies what it adds to)."""

    def __init__(self) -> None:
        self._key: tuple[int, object] | None = None
        self._devices: dict[str, Any] = {}
        self._snap: dict[str, Any] = {}

    def of(self, table: Table) -> dict[str, Any]:
        from controller.table.view import snapshot

        key = (table.shown_seq, table.journal_fault)
        if key != self._key or table.devices != self._devices:
            self._snap = snapshot(table, table.state_json)  # its unchanged parts reused
            self._key, self._devices = key, {name: dict(status) for name, status in table.devices.items()}
        elif self._snap.get("journal_seq") != table.journal.last_seq:
            # Only quiet entries since (Table.QUIET_KINDS: a signed chain head): the same picture, the
            # journal's new head added; a new document, as the one handed out is never changed.
            self._snap = {**self._snap, "journal_seq": table.journal.last_seq}
        return self._snap
