"""What the API serves: the table (through its gate), the tokens, the sessions. One `Runtime` per
app, kept in `app.state.rt` for the routers' dependencies.

The Runtime never keeps the `Table`. In one process with the table (a test's app, a tool),
`Runtime(table=...)` hands it to the table's side (controller/api/side.py: the gate, the commands, the device
controls, the live feed's table half) and keeps only the gate. In the API's own process
(controller/api/remote.py) the gate is the channel to the daemon's table. Either way a route
reaches the table only through `rt.gate`: a named command run on the table's loop, a device
control, or the view the table published. Nothing a client does can write the journal another way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from controller.api.auth import LoginLimiter, Sessions, Tokens
from controller.api.gate import Gate
from controller.api.live import LiveFeed

if TYPE_CHECKING:
    from controller.adapters.metrics import TableMetrics
    from controller.api.side import SimControls, SimSceneControls
    from controller.security.authentication import Report
    from controller.table import Table


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
        # The software authentication (controller/security/authentication.py), given a verifier's seed;
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
            # The table's side, loaded only where the table is: the API's own process never loads
            # it (nor the metrics' and the software check's libraries it brings).
            from controller.api.side import table_side

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
        # GET /api/rounds's answers, by (last, sees every card): the table's view version each
        # was made at, and the answer (routes/reads.py).
        self.recalls: dict[tuple[int, bool], tuple[int, dict[str, Any]]] = {}

    async def snapshot(self, role: str | None) -> dict[str, Any]:
        """The table's state with each device's own view of itself (GET /api/state), as `role`
        sees it (the dealer: no face-down card of a live hand; controller/table/visibility.py)."""
        from controller.table.visibility import SEES_EVERY_CARD

        view = await self.gate.view()
        return view.state(role in SEES_EVERY_CARD)

    async def snapshot_json(self, role: str | None) -> bytes:
        """`snapshot(role)` as a JSON body, encoded once per change of the table and audience."""
        from controller.table.visibility import SEES_EVERY_CARD

        view = await self.gate.view()
        return view.state_json(role in SEES_EVERY_CARD)
