"""Vision: the camera's view of the table in zones, chips, values and pucks (never rules).

    layout.py       Layout, Zone, Marker: the printed felt, from hardware/layouts/*.toml
    chips.py        ChipSet: denominations, their colours, how a seen colour is named
    geometry.py     CameraModel, Pose: pinhole projection with lens distortion
    calibration.py  Calibration: markers -> homography and camera pose; bumped-camera check
    reader.py       Reader.read(frame) -> FrameReading (ZoneReading, StackReading, pucks)
    stable.py       StableScene: a zone counts once it has been the same for N frames
    fusion.py       WagerFusion: a wager's value from the frames since it last changed, never one
    health.py       CameraHealth: lens blur, shake and JPEG quality, and the faults they make
    scene.py        Scene: a simulated table, as JSON
    render.py       render(scene): the frame a camera would see of it
    cli.py          `tablectl calibrate`, `tablectl vision render|read`

See vision/README.md for the camera geometry the reading needs and what it cannot see.
OpenCV (and numpy) come with the names below, loaded when one is first used (`from vision import
Reader`): `vision.documents`, the validator of operators' documents, is imported without them
(tablectl recall and the daemon's pin map read documents, never frames).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vision.calibration import Calibration, CalibrationError, CameraCheck
    from vision.chips import Chip, ChipSet, ChipSetError
    from vision.geometry import CameraModel, Pose
    from vision.layout import Layout, LayoutError, Zone
    from vision.reader import FrameReading, Reader, StackReading, ZoneReading
    from vision.render import render
    from vision.scene import Scene, SceneError
    from vision.stable import StableReading, StableScene

#: Each name this package gives, and the module it comes from (imported at the first use).
_FROM = {
    "Calibration": "vision.calibration",
    "CalibrationError": "vision.calibration",
    "CameraCheck": "vision.calibration",
    "Chip": "vision.chips",
    "ChipSet": "vision.chips",
    "ChipSetError": "vision.chips",
    "CameraModel": "vision.geometry",
    "Pose": "vision.geometry",
    "Layout": "vision.layout",
    "LayoutError": "vision.layout",
    "Zone": "vision.layout",
    "FrameReading": "vision.reader",
    "Reader": "vision.reader",
    "StackReading": "vision.reader",
    "ZoneReading": "vision.reader",
    "render": "vision.render",
    "Scene": "vision.scene",
    "SceneError": "vision.scene",
    "StableReading": "vision.stable",
    "StableScene": "vision.stable",
}


def __getattr__(name: str) -> Any:
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'vision' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Calibration",
    "CalibrationError",
    "CameraCheck",
    "CameraModel",
    "Chip",
    "ChipSet",
    "ChipSetError",
    "FrameReading",
    "Layout",
    "LayoutError",
    "Pose",
    "Reader",
    "Scene",
    "SceneError",
    "StableReading",
    "StableScene",
    "StackReading",
    "Zone",
    "ZoneReading",
    "render",
]
