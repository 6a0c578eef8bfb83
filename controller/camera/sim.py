"""The simulated camera's hands (simulation only): the dealer's and the players'.

`SimulatedDealer` is a table listener that keeps the simulated camera's scene following the
table: the game's camera meaning says how the chips move for each entry (a Grand Slam dealer
moves each stack as its card says, takes what lost, pays what won), so the whole loop runs in
tests. `SimScene` is the API's handle for a test playing a player, a careless dealer or a knock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from controller.engine.base import Effect
from controller.games.base import CameraMeaning, TableView
from controller.journal.log import Entry

if TYPE_CHECKING:
    from controller.camera.feed import CameraFeed
    from drivers.camera import SimulatedCamera


class SimulatedDealer:
    """A table listener (simulation only) that moves the simulated chips as the table says: the
    wagers of a round opened by hand are placed, and each entry's effects move the chips as the
    game's camera meaning says; once the dealer confirms the payouts the players pick up theirs."""

    def __init__(self, camera: SimulatedCamera, meaning: CameraMeaning | None) -> None:
        self.camera = camera
        self.meaning = meaning
        self._picked_up: int | None = None  # the round whose winnings the players took

    def redrive(self, table: TableView) -> None:
        """Nothing to show: the scene is the table's, not a picture of the state."""

    def update(self, table: TableView, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if self.meaning is None:
            return
        place = entry.kind == "round-open" and entry.body.get("via") != "camera"
        record = table.current
        pick_up = entry.kind == "button" and record is not None and record.paid and self._picked_up != record.number
        if pick_up and record is not None:
            self._picked_up = record.number
        moves = self.meaning.scene_change(table, effects, place=place, pick_up=pick_up)
        if moves is None:
            return

        def change(scene: Any) -> Any:
            from vision.scene import Stack

            zones = {name: [chip for stack in stacks for chip in stack.chips] for name, stacks in scene.zones.items()}
            pucks = dict(scene.pucks)
            moves(zones, pucks)
            return dataclasses.replace(
                scene, zones={n: (Stack(tuple(chips)),) for n, chips in zones.items() if chips}, pucks=pucks
            )

        self.camera.edit(change)


class SimScene:
    """The API's handle on the simulated camera: players' and dealers' hands, and knocks."""

    def __init__(self, camera: SimulatedCamera, feed: CameraFeed | None = None) -> None:
        self.camera = camera
        self.feed = feed

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Apply {"zones": {zone: [chips] | []}, "pucks": {name: zone | null}, "hands": [...],
        "bump": bool}; raises ValueError naming the field when the body is wrong."""
        from vision.scene import Scene, SceneError

        known = {"zones", "pucks", "hands", "bump", "unplug"}
        for key in body:
            if key not in known:
                raise ValueError(f"body: unknown key {key!r}; the keys are {', '.join(sorted(known))}")
        layout_zones = self.camera.layout.zones
        zones_in = body.get("zones", {})
        pucks_in = body.get("pucks", {})
        if not isinstance(zones_in, dict) or not isinstance(pucks_in, dict):
            raise ValueError("body.zones and body.pucks are objects: zone -> chips, puck -> zone")
        for name in zones_in:
            if name not in layout_zones or layout_zones[name].kind == "puck":
                raise ValueError(f"body.zones.{name}: not a chip zone of the layout {self.camera.layout.name}")
        for name, where in pucks_in.items():
            if where is not None and (where not in layout_zones or layout_zones[where].kind != "puck"):
                raise ValueError(f"body.pucks.{name}: {where!r} is not a puck spot of the layout")
        bump = body.get("bump")
        if bump is not None and not isinstance(bump, bool):
            raise ValueError("body.bump: true (knock the camera) or false (put it back)")
        unplug = body.get("unplug")
        if unplug is not None and not isinstance(unplug, bool):
            raise ValueError("body.unplug: true or false")

        def edit(scene: Scene) -> Scene:
            doc = scene.to_dict()
            doc["zones"] = {n: z for n, z in doc["zones"].items() if n not in zones_in}
            doc["zones"].update({n: chips for n, chips in zones_in.items() if chips})
            pucks = {**doc["pucks"], **pucks_in}
            doc["pucks"] = {n: w for n, w in pucks.items() if w is not None}
            if "hands" in body:
                doc["hands"] = body["hands"]
            try:
                return Scene.from_dict(doc, "body")
            except SceneError as exc:
                raise ValueError(str(exc)) from None

        scene = self.camera.edit(edit)
        if bump is not None:
            self.camera.bump(bump)
        if unplug is not None:
            self.camera.unplugged = unplug
        return {
            "zones": {n: [c for s in stacks for c in s.chips] for n, stacks in sorted(scene.zones.items())},
            "pucks": dict(scene.pucks),
            "hands": len(scene.hands),
            "bumped": self.camera.bumped,
        }


def mirrored_camera(layout: Any, send: Any) -> SimulatedCamera:
    """The simulated camera as the table's process holds it when the camera is read in a process of
    its own (controller/camera/process.py): the scene the simulated dealer and players make, never
    started (no frame is rendered here); each change, and unplugging it, is handed to `send`
    (`CameraProcess.send_scene`), in the order made, under the scene's lock."""
    from drivers.camera import SimulatedCamera
    from vision.scene import Scene

    class MirroredCamera(SimulatedCamera):
        def __init__(self) -> None:
            self._unplugged = False
            super().__init__(Scene(layout=layout.name), fps=1.0, layout=layout)

        def edit(self, change: Any) -> Any:
            with self._lock:
                self._scene = change(self._scene)
                send(self._scene.to_dict(), self._unplugged)
                return self._scene

        @property
        def unplugged(self) -> bool:
            return self._unplugged

        @unplugged.setter
        def unplugged(self, on: bool) -> None:
            with self._lock:
                self._unplugged = on
                send(self._scene.to_dict(), on)

    return MirroredCamera()
