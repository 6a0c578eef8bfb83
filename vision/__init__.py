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
OpenCV (and numpy) are imported here: import this package only where frames are handled.
"""

from vision.calibration import Calibration, CalibrationError, CameraCheck
from vision.chips import Chip, ChipSet, ChipSetError
from vision.geometry import CameraModel, Pose
from vision.layout import Layout, LayoutError, Zone
from vision.reader import FrameReading, Reader, StackReading, ZoneReading
from vision.render import render
from vision.scene import Scene, SceneError
from vision.stable import StableReading, StableScene

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
