"""What the API serves: the table (through its gate), the tokens, the sessions. One `Runtime` per
app, kept in `app.state.rt` for the routers' dependencies.

The Runtime never keeps the `Table`. In one process with the table (a test's app, a tool),
`Runtime(table=...)` hands it to the table's side (`table_side`: the gate, the commands, the device
controls, the live feed's table half) and keeps only the gate. In the API's own process
(controller/api/remote.py) the gate is the channel to the daemon's table. Either way a route
reaches the table only through `rt.gate`: a named command run on the table's loop, a device
control, or the view the table published. Nothing a client does can write the journal another way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from controller.api.auth import LoginLimiter, Sessions, Tokens
from controller.api.commands import Commands, sim_controls
from controller.api.gate import Gate, TableGate
from controller.api.live import FeedSource, LiveFeed, Unmasked
from controller.authentication import Report
from controller.engine.cards import Card
from controller.metrics import TableMetrics
from controller.table import Table


class SimControls(Protocol):
    """What the simulated dealer can do with the simulated shoe (simulation only)."""

    def stack(self, cards: list[Card]) -> None: ...

    def draw(self, count: int) -> list[Card]: ...

    def fault(self, name: str, on: bool) -> str: ...


class SimSceneControls(Protocol):
    """What a simulation can do to what the simulated camera sees (simulation only)."""

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


class Runtime:
    """What the API serves: the table's gate, the tokens, the sessions, the live feed's screens.

    Given `table` (and what the table's side offers: the simulated shoe, the mock pins, device
    views, the camera's controls, metrics, the software check), the table's side is made here, on
    `table_loop` (the daemon's; without one the gate runs the table's jobs on a thread of its own).
    Given `gate`, the table is elsewhere (another process) and only the API's side is here."""

    def __init__(
        self,
        table: Table | None = None,
        *,
        tokens: Tokens,
        gate: Gate | None = None,
        config_view: dict[str, Any] | None = None,
        sessions: Sessions | None = None,
        limiter: LoginLimiter | None = None,
        live: LiveFeed | None = None,
        tls: bool = False,
        # The table's side, when the table is in this process:
        sim: SimControls | None = None,
        sim_pins: Callable[[], dict[str, Any]] | None = None,
        device_views: dict[str, Callable[[], Any]] | None = None,
        sim_scene: SimSceneControls | None = None,
        recalibrate: Callable[[], None] | None = None,
        metrics: TableMetrics | None = None,
        # The software authentication (controller/authentication.py), given a verifier's seed;
        # blocking (it hashes every file): run off the loops.
        authenticate: Callable[[bytes | None], Report] | None = None,
        # A supervisor accepts the configuration file as it is (run on the table's loop, with the
        # table, who and why): journaled with its digest.
        accept_config: Callable[[Table, str, str], dict[str, Any]] | None = None,
        table_loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.tokens = tokens
        self.config_view = dict(config_view or {})
        self.sessions = sessions if sessions is not None else Sessions()
        if self.sessions.tokens is None:  # a session holds while its role's token is the same
            self.sessions.tokens = tokens
        self.limiter = limiter if limiter is not None else LoginLimiter()
        self.live = live if live is not None else LiveFeed()
        self.tls = tls
        if gate is None:
            if table is None:
                raise TypeError("Runtime needs the table or a gate to it")
            gate = table_side(
                table,
                table_loop,
                live=self.live,
                device_views=device_views,
                metrics=metrics,
                sim=sim,
                sim_pins=sim_pins,
                sim_scene=sim_scene,
                recalibrate=recalibrate,
                authenticate=authenticate,
                accept_config=accept_config,
            )
        self.gate: Gate = gate

    async def snapshot(self, role: str | None) -> dict[str, Any]:
        """The table's state with each device's own view of itself (GET /api/state), as `role`
        sees it (the dealer: no face-down card of a live hand; controller/visibility.py)."""
        from controller.visibility import SEES_EVERY_CARD

        view = await self.gate.view()
        return view.state(role in SEES_EVERY_CARD)

    async def snapshot_json(self, role: str | None) -> bytes:
        """`snapshot(role)` as a JSON body, encoded once per change of the table and audience."""
        from controller.visibility import SEES_EVERY_CARD

        view = await self.gate.view()
        return view.state_json(role in SEES_EVERY_CARD)


def table_side(
    table: Table,
    loop: asyncio.AbstractEventLoop | None,
    *,
    live: LiveFeed | None = None,
    deliver: Callable[[int, Unmasked], None] | None = None,
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

    def whole_state(table: Table) -> dict[str, Any]:
        """The table's state with every card shown (on the table's loop): only ever sent through
        a role's sight."""
        from controller.view import snapshot

        snap = snapshot(table)
        devices = dict(snap.get("devices") or {})
        for name, view in views.items():
            devices[name] = view()
        snap["devices"] = devices
        return snap

    if live is not None:
        source = live.attach(table, whole_state)
    else:
        source = FeedSource(whole_state, deliver)
        source.attach(table)
    kept = metrics if metrics is not None else TableMetrics(table)

    def metrics_text() -> bytes:
        from prometheus_client import generate_latest

        return generate_latest(kept.registry)

    return TableGate(
        table,
        loop,
        describe=whole_state,
        commands=Commands(source, metrics_text=metrics_text, accept_config=accept_config),
        controls=sim_controls(sim, sim_pins, sim_scene, recalibrate, authenticate),
    )
