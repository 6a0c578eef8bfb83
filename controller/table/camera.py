"""SceneWatch: what the overhead camera has seen, as the table holds it.

It is part of the table's state (`TableState.camera`), rebuilt from the journal: the camera's
settled view (kept from `scene` entries, each one a change of the view) and whether the camera
can be trusted (ok, bumped, unverified, offline, uncalibrated). What the view means for the
round (the proposal of wagers, past posting, the payout check) is the game's
(`GameAdapter.camera()`); a game without one only keeps the view. Zones are named by the layout
(`seatN.first`, `seatN.first.payout`, `seatN.puck`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.engine.base import Effect
from controller.games.base import CameraMeaning, TableView

if TYPE_CHECKING:
    from controller.journal.entries import SceneChanged, TableEntry

VIEW_STATES = ("ok", "blocked", "unsure")
CAMERA_STATES = ("ok", "bumped", "unverified", "offline", "uncalibrated")


@dataclass(frozen=True)
class ZoneView:
    """A zone as the table last knew it: "ok" with its value (0 when empty), or "blocked" /
    "unsure" with no value and the reader's reason."""

    state: str
    value: int | None
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state, "value": self.value}
        if self.why:
            out["why"] = self.why
        return out


class SceneWatch:
    """The camera's settled view as the table holds it, and the game's meaning of it."""

    def __init__(self, meaning: CameraMeaning | None) -> None:
        self.meaning = meaning
        self.status: str | None = None  # None: no camera has ever reported to this table
        self.why = ""
        self.seq: int | None = None  # the journal entry of the last change of the view
        self.zones: dict[str, Any] = {}  # zone -> ZoneView
        self.pucks: dict[str, str | None] = {}
        self.last_ok: dict[str, int] = {}  # each zone's last value read (it survives a hand over it)
        self.last_check: dict[str, Any] | None = None  # the last payout check (the game's words)

    @property
    def active(self) -> bool:
        return self.status is not None

    def to_json(self) -> dict[str, Any]:
        """What the table holds of the camera, for a snapshot (the game's meaning included)."""
        return {
            "status": self.status,
            "why": self.why,
            "seq": self.seq,
            "zones": {n: z.to_json() for n, z in sorted(self.zones.items())},
            "pucks": dict(self.pucks),
            "last_ok": dict(self.last_ok),
            "last_check": self.last_check,
            "meaning": self.meaning.to_json() if self.meaning is not None else None,
        }

    def restore(self, data: Mapping[str, Any]) -> None:
        """Take back what `to_json` wrote."""
        self.status, self.why, self.seq = data["status"], data["why"], data["seq"]
        self.zones = {n: ZoneView(z["state"], z["value"], z.get("why", "")) for n, z in data["zones"].items()}
        self.pucks = dict(data["pucks"])
        self.last_ok = dict(data["last_ok"])
        self.last_check = data["last_check"]
        if self.meaning is not None and data["meaning"] is not None:
            self.meaning.restore(data["meaning"])

    # -- the camera's view in -------------------------------------------------------------------

    def changes(self, view: Mapping[str, Any]) -> dict[str, Any] | None:
        """The body of a `scene` entry for what `view` changes, or None when it changes nothing.
        A zone counts as changed when its state or value does (not its reason's words)."""
        status = view.get("camera")
        if status not in CAMERA_STATES:
            raise ValueError(f"camera view: camera must be one of {', '.join(CAMERA_STATES)}, not {status!r}")
        body: dict[str, Any] = {}
        if status != self.status:
            body["camera"] = status
            body["why"] = str(view.get("why", ""))
        if status == "ok":
            zones: dict[str, Any] = {}
            for name, seen in dict(view.get("zones", {})).items():
                state, value = seen.get("state"), seen.get("value")
                if state not in VIEW_STATES or (state == "ok") != isinstance(value, int) or isinstance(value, bool):
                    raise ValueError(f"camera view: zone {name}: {state!r} with value {value!r}")
                old = self.zones.get(name)
                if old is None or (old.state, old.value) != (state, value):
                    zones[str(name)] = ZoneView(state, value, str(seen.get("why", ""))).to_json()
            if zones:
                body["zones"] = zones
            pucks = {str(n): w for n, w in dict(view.get("pucks", {})).items() if self.pucks.get(n) != w}
            if pucks:
                body["pucks"] = pucks
        return body or None

    # -- following the journal ------------------------------------------------------------------

    def follow(self, table: TableView, entry: TableEntry, effects: tuple[Effect, ...]) -> tuple[str, str] | None:
        """Follow one journaled entry other than a scene (the game's meaning of the round);
        returns the fault (code, message) it raises, if any."""
        if self.meaning is None:
            return None
        return self.meaning.follow(table, self, entry, effects)

    def seen(self, table: TableView, entry: SceneChanged) -> tuple[str, str] | None:
        """Apply a `scene` entry (a change of the view); returns the fault it raises, if any."""
        self.seq = entry.seq
        newly_bumped = False
        if entry.camera is not None:
            newly_bumped = entry.camera == "bumped" and self.status != "bumped"
            self.status = entry.camera
            self.why = entry.why
        changed: list[tuple[str, int | None, int]] = []
        for name, seen in entry.zones.items():
            zone = ZoneView(seen["state"], seen.get("value"), seen.get("why", ""))
            self.zones[name] = zone
            if zone.state == "ok" and zone.value is not None:
                before = self.last_ok.get(name)
                self.last_ok[name] = zone.value
                if before != zone.value:
                    changed.append((name, before, zone.value))
        self.pucks.update(entry.pucks)
        if newly_bumped:
            return (
                "camera-bumped",
                f"The overhead camera has moved ({self.why}). Wagers and payouts are not watched until a "
                "supervisor recalibrates the camera, then dismisses this.",
            )
        if self.meaning is not None and self.status == "ok" and changed:
            return self.meaning.changed(table, self, changed)
        return None

    # -- what the dealer sees -------------------------------------------------------------------

    def proposal(self, table: TableView) -> dict[str, Any] | None:
        """The wagers the camera sees, as the opening of the next round (None while one is open,
        or for a game whose camera proposes nothing). `ready` says whether it can open as it is;
        `why_not` says what stops it, in plain words."""
        if not self.active or self.meaning is None or table.awaiting.kind != "round":
            return None
        return self.meaning.proposal(table, self)

    def prompt(self, table: TableView) -> str | None:
        """The dealer's next step between rounds when the camera proposes the wagers."""
        proposal = self.proposal(table)
        if proposal is None or not proposal["ready"] or self.meaning is None:
            return None
        return self.meaning.prompt(proposal)

    def snapshot(self, table: TableView) -> dict[str, Any]:
        """The camera's part of the table state, for the dealer screen."""
        record = table.current
        payouts = None
        if self.meaning is not None and record is not None and record.status == "settled" and not record.paid:
            payouts = self.meaning.payout_view(record.settlement or {}, self)
        return {
            "status": self.status,
            "why": self.why,
            "scene_seq": self.seq,
            # Only zones holding chips or that cannot be read: the empty felt says nothing.
            "zones": {n: z.to_json() for n, z in sorted(self.zones.items()) if z.state != "ok" or z.value},
            "pucks": dict(self.pucks),
            "proposal": self.proposal(table),
            "payouts": payouts,
            "last_check": self.last_check,
        }
