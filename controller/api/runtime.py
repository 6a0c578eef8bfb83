"""What the API serves: the table (through its gate), the tokens, the sessions, and in simulation
the simulated devices. One `Runtime` per app, kept in `app.state.rt` for the routers' dependencies.

The Runtime never keeps the `Table`: it is handed over once, to the gate (controller/api/gate.py),
and from then on a route reaches the table only through `rt.gate` (a job on the table's loop, or
the view the table published). Nothing a client does can write the journal another way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any, Protocol

from controller.api.auth import LoginLimiter, Sessions, Tokens
from controller.api.gate import TableGate
from controller.api.live import LiveFeed
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


@dataclass
class Runtime:
    """What the API serves: the table's gate, the tokens, and in simulation the simulated shoe.

    `table` is given to the gate and not kept; `table_loop` is the loop that owns the table (the
    daemon's; without one the gate runs the table's jobs on a thread of its own)."""

    table: InitVar[Table]
    tokens: Tokens
    sim: SimControls | None = None
    sim_pins: Callable[[], dict[str, Any]] | None = None  # mock pin histories (simulation only)
    device_views: dict[str, Callable[[], Any]] = field(default_factory=dict)
    config_view: dict[str, Any] = field(default_factory=dict)
    sim_scene: SimSceneControls | None = None  # the simulated camera's scene (simulation only)
    recalibrate: Callable[[], None] | None = None  # asks the camera to calibrate from its next frame
    sessions: Sessions = field(default_factory=Sessions)
    limiter: LoginLimiter = field(default_factory=LoginLimiter)
    live: LiveFeed = field(default_factory=LiveFeed)
    metrics: TableMetrics | None = None  # GET /metrics; made from the table when the daemon gives none
    tls: bool = False  # served over HTTPS: the session cookie is Secure
    # The software authentication (controller/authentication.py), given a verifier's seed; blocking
    # (it hashes every file): run off the loops. None: POST /api/verify says it is not available.
    authenticate: Callable[[bytes | None], Report] | None = None
    # A supervisor accepts the configuration file as it is (run on the table's loop, with the table,
    # who and why): journaled with its digest. None: POST /api/config/accept is not available.
    accept_config: Callable[[Table, str, str], dict[str, Any]] | None = None
    table_loop: InitVar[asyncio.AbstractEventLoop | None] = None
    gate: TableGate = field(init=False)

    def __post_init__(self, table: Table, table_loop: asyncio.AbstractEventLoop | None) -> None:
        self.gate = TableGate(table, table_loop, describe=self._whole_state)
        if self.sessions.tokens is None:  # a session holds while its role's token is the same
            self.sessions.tokens = self.tokens
        if self.metrics is None:
            self.metrics = TableMetrics(table)
        self.live.attach(table, self._whole_state)

    def _whole_state(self, table: Table) -> dict[str, Any]:
        """The table's state with every card shown (on the table's loop): only ever sent
        through a role's sight."""
        from controller.view import snapshot

        snap = snapshot(table)
        devices = dict(snap.get("devices") or {})
        for name, view in self.device_views.items():
            devices[name] = view()
        snap["devices"] = devices
        return snap

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
