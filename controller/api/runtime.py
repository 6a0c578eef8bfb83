"""What the API serves: the table, the tokens, the sessions, and in simulation the simulated
devices. One `Runtime` per app, kept in `app.state.rt` for the routers' dependencies."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from controller.api.auth import LoginLimiter, Sessions, Tokens
from controller.api.live import LiveFeed
from controller.engine.cards import Card
from controller.metrics import TableMetrics
from controller.table import Table


class SimControls(Protocol):
    """What the simulated dealer can do with the simulated shoe (simulation only)."""

    def stack(self, cards: list[Card]) -> None: ...

    def draw(self, count: int) -> list[Card]: ...

    def fault(self, name: str, on: bool) -> str: ...

    def reshuffle(self) -> None: ...


class SimSceneControls(Protocol):
    """What a simulation can do to what the simulated camera sees (simulation only)."""

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]: ...


@dataclass
class Runtime:
    """What the API serves: the table, the tokens, and in simulation the simulated shoe."""

    table: Table
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

    def snapshot(self, role: str | None) -> dict[str, Any]:
        """The table's state with each device's own view of itself (GET /api/state), as `role`
        sees it (the dealer: no face-down card of a live hand; controller/visibility.py)."""
        from controller.visibility import sight

        return sight(self.table, role).snapshot(self.whole_state())

    def whole_state(self) -> dict[str, Any]:
        """The table's state with every card shown: only ever sent through a role's sight."""
        from controller.view import snapshot

        snap = snapshot(self.table)
        devices = dict(snap.get("devices") or {})
        for name, view in self.device_views.items():
            devices[name] = view()
        snap["devices"] = devices
        return snap
