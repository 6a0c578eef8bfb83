"""Command-line faces of the vision: `tablectl calibrate`, `tablectl vision render|read`.

The table's CLI (controller/cli/main.py) builds the subparsers and calls these; each pair is
`add_*_arguments(parser)` and `run_*(args) -> exit status`. Refused input exits 2 with one line
on standard error saying what and where; nothing raises to the caller.

    tablectl calibrate frame.png --layout grand-slam-7 --out cal.json --annotated zones.png
    tablectl vision render scene.json frame.png
    tablectl vision read frame.png [--layout grand-slam-7] [--calibration cal.json]
    tablectl vision learn-chips frame.png --stack seat1.first=1 --stack seat2.first=5 ... --out table.toml
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_REFUSED = 2


def add_calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", metavar="IMAGE", help="a camera frame of the table with its markers in view")
    parser.add_argument(
        "--layout", default="grand-slam-7", metavar="L", help="layout name or .toml path (grand-slam-7)"
    )
    parser.add_argument("--out", required=True, metavar="CAL.json", help="where to write the calibration")
    parser.add_argument("--annotated", metavar="OUT.png", help="also write the frame with the zones drawn over it")
    parser.add_argument(
        "--camera", metavar="CAMERA.json", help="the camera's matrix and distortion (estimated if absent)"
    )


def run_calibrate(args: argparse.Namespace) -> int:
    from vision.calibration import Calibration, CalibrationError
    from vision.layout import Layout, LayoutError

    try:
        layout = Layout.load(args.layout)
        frame = _image(args.image)
        calibration = Calibration.from_frame(frame, layout, camera=_camera(args.camera))
        calibration.save(args.out)
        if args.annotated:
            _write_image(args.annotated, calibration.annotate(frame, layout))
    except (LayoutError, CalibrationError, _Refused) as exc:
        return _refuse("calibrate", exc)
    x, y, z = calibration.pose.position
    print(
        json.dumps(
            {
                "calibration": str(args.out),
                "markers_used": sorted(calibration.marker_pixels),
                "reprojection_error_mm": round(calibration.error_mm, 3),
                "reprojection_error_px": round(calibration.error_px, 3),
                "camera_position_mm": [round(float(v), 1) for v in (x, y, z)],
                "notes": calibration.notes,
            },
            indent=1,
        )
    )
    return 0


def add_render_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scene", metavar="SCENE.json", help="the scene (vision/README.md)")
    parser.add_argument("out", metavar="OUT.png", help="where to write the camera frame")
    parser.add_argument("--camera-out", metavar="CAMERA.json", help="also write the simulated camera's matrix")


def run_render(args: argparse.Namespace) -> int:
    from vision.layout import Layout, LayoutError
    from vision.render import render
    from vision.scene import Scene, SceneError

    try:
        scene = Scene.load(args.scene)
        layout = Layout.load(scene.layout)
        _write_image(args.out, render(scene, layout))
        if args.camera_out:
            Path(args.camera_out).write_text(json.dumps(scene.camera.model().to_dict(), indent=1) + "\n")
    except (SceneError, LayoutError, _Refused) as exc:
        return _refuse("vision render", exc)
    return 0


def add_read_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", metavar="IMAGE.png", help="a camera frame")
    parser.add_argument(
        "--layout", metavar="L", help="layout name or .toml path (the calibration's, else grand-slam-7)"
    )
    parser.add_argument(
        "--calibration", metavar="C", help="calibration file; without it the markers in this frame calibrate"
    )
    parser.add_argument("--camera", metavar="CAMERA.json", help="with no calibration: the camera's matrix")


def run_read(args: argparse.Namespace) -> int:
    from vision.calibration import Calibration, CalibrationError
    from vision.layout import Layout, LayoutError
    from vision.reader import Reader

    try:
        frame = _image(args.image)
        calibration = Calibration.load(args.calibration) if args.calibration else None
        layout = Layout.load(args.layout or (calibration.layout_name if calibration else "grand-slam-7"))
        if calibration is None:
            calibration = Calibration.from_frame(frame, layout, camera=_camera(args.camera))
        elif calibration.layout_name != layout.name:
            raise _Refused(f"the calibration is for layout {calibration.layout_name}, not {layout.name}")
        reading = Reader(layout, calibration).read(frame)
    except (LayoutError, CalibrationError, _Refused) as exc:
        return _refuse("vision read", exc)
    except ValueError as exc:  # a frame of another size than the calibration's
        return _refuse("vision read", exc)
    print(json.dumps(reading.to_dict(), indent=1))
    return 0


def add_learn_chips_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "frames", metavar="FRAME", nargs="+", help="frames of the marked stacks, under the table's light"
    )
    parser.add_argument(
        "--stack",
        metavar="ZONE=VALUE",
        action="append",
        required=True,
        help="a zone holding one stack (3 chips or more) of one denomination; once per denomination",
    )
    parser.add_argument("--layout", metavar="L", help="layout name or .toml path (the calibration's)")
    parser.add_argument("--calibration", metavar="C", help="calibration file; without it the first frame calibrates")
    parser.add_argument("--camera", metavar="CAMERA.json", help="with no calibration: the camera's matrix")
    parser.add_argument("--out", required=True, metavar="LAYOUT.toml", help="the layout with the learned [[chips]]")


def run_learn_chips(args: argparse.Namespace) -> int:
    from vision.calibration import Calibration, CalibrationError
    from vision.layout import Layout, LayoutError
    from vision.learn import LearnError, learn_chips, write_chips

    try:
        stacks: dict[str, int] = {}
        for item in args.stack:
            zone, _, value = item.partition("=")
            if not zone or not value.isdigit():
                raise _Refused(f"--stack {item!r}: give ZONE=VALUE, e.g. seat1.first=25")
            stacks[zone] = int(value)
        frames = [_image(path) for path in args.frames]
        calibration = Calibration.load(args.calibration) if args.calibration else None
        layout = Layout.load(args.layout or (calibration.layout_name if calibration else "grand-slam-7"))
        if calibration is None:
            calibration = Calibration.from_frame(frames[0], layout, camera=_camera(args.camera))
        learned = learn_chips(frames, layout, calibration, stacks)
        write_chips(layout.source, learned.chips, args.out)
        Layout.load(args.out)  # what was written loads, chips and all
    except (LayoutError, CalibrationError, LearnError, _Refused) as exc:
        return _refuse("vision learn-chips", exc)
    except ValueError as exc:  # a frame of another size than the calibration's
        return _refuse("vision learn-chips", exc)
    a, b, d = learned.closest
    print(
        json.dumps(
            {
                "layout": str(args.out),
                "chips": [
                    {**chip_config, "spread_lab": round(learned.spread[chip.value], 1)}
                    for chip, chip_config in ((c, _chip_config(c)) for c in learned.chips)
                ],
                "closest": {"values": [a, b], "lab_distance": round(d, 1)},
            },
            indent=1,
        )
    )
    return 0


def _chip_config(chip: Any) -> dict[str, Any]:
    from vision.chips import chip_to_config

    return chip_to_config(chip)


class _Refused(ValueError):
    pass


def _refuse(command: str, exc: Exception) -> int:
    print(f"tablectl {command}: {exc}", file=sys.stderr)
    return EXIT_REFUSED


def _image(path: str) -> Any:
    import cv2

    if not Path(path).is_file():
        raise _Refused(f"{path}: no such image file")
    frame = cv2.imread(path, cv2.IMREAD_COLOR)
    if frame is None:
        raise _Refused(f"{path}: not an image OpenCV can read (PNG or JPEG)")
    return frame


def _write_image(path: str, image: Any) -> None:
    import cv2

    try:
        ok = cv2.imwrite(path, image)
    except cv2.error as exc:
        raise _Refused(f"{path}: cannot write the image: {exc}") from None
    if not ok:
        raise _Refused(f"{path}: cannot write the image (a .png or .jpg name in a writable folder?)")


def _camera(path: str | None) -> Any:
    from vision.geometry import CameraModel

    if path is None:
        return None
    try:
        return CameraModel.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise _Refused(f"{path}: no such camera file") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _Refused(f"{path}: not a camera file (width, height, matrix, dist): {exc}") from None
