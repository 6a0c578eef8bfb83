"""The simulator's camera: draws the frame a real camera would see of a scene.

Real 3D geometry goes through a pinhole camera with lens distortion (cv2.projectPoints): the
felt and its printed circles, the calibration markers, chip stacks as cylinders of 39 x 3.3 mm
chips with edge spots, pucks carrying their marker on top, and hands hovering with the arm
reaching in from the players' side. Surfaces are shaded by one light; then come the lighting
gain, tint and gradient, lens blur and sensor noise. Drawing is done at twice the resolution
and shrunk, so edges are anti-aliased as a sensor would average them.

    frame = render(Scene.load("scene.json"))      # BGR uint8, the scene's resolution
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from vision.chips import CHIP_DIAMETER_MM, CHIP_THICKNESS_MM, Chip
from vision.geometry import CameraModel, Pose, project
from vision.layout import Layout, Marker
from vision.scene import Hand, Scene, SceneError, Stack

SUPERSAMPLE = 2
FACETS = 72  # around a chip
WOOD = (38, 52, 74)  # BGR: the table's rail, outside the felt
PUCK_BODY = (40, 40, 44)
QUIET_ZONE_MM = 10.0
AMBIENT = 0.45

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]


def bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (rgb[2], rgb[1], rgb[0])


class _Canvas:
    """A supersampled image and the camera that draws on it."""

    def __init__(self, camera: CameraModel, pose: Pose, light: FloatArray) -> None:
        s = SUPERSAMPLE
        m = camera.matrix.copy()
        m[0, 0] *= s
        m[1, 1] *= s
        m[0, 2] = (m[0, 2] + 0.5) * s - 0.5
        m[1, 2] = (m[1, 2] + 0.5) * s - 0.5
        self.camera = CameraModel(camera.width * s, camera.height * s, m, camera.dist)
        self.pose = pose
        self.eye = pose.position
        self.light = light
        self.image = np.zeros((camera.height * s, camera.width * s, 3), dtype=np.uint8)

    def project(self, points: FloatArray) -> FloatArray:
        return project(self.camera, self.pose, points)

    def fill(self, polygons: list[FloatArray], colour: tuple[int, int, int]) -> None:
        """Fill one shape (several outlines: even-odd, so a ring is outer + inner)."""
        pts = [np.round(p * 16).astype(np.int32).reshape(-1, 1, 2) for p in polygons]
        cv2.fillPoly(self.image, pts, colour, lineType=cv2.LINE_8, shift=4)

    def shade(self, normal: FloatArray) -> float:
        """Brightness of a surface relative to the felt (a horizontal surface is 1)."""
        lit = AMBIENT + (1 - AMBIENT) * max(0.0, float(normal @ self.light))
        return lit / (AMBIENT + (1 - AMBIENT) * max(0.0, float(self.light[2])))


def render(scene: Scene, layout: Layout | None = None) -> Image:
    """The camera frame of `scene` (BGR, uint8)."""
    layout = layout or Layout.load(scene.layout)
    camera = scene.camera.model()
    pose = scene.camera.pose()
    rng = np.random.default_rng(scene.seed)
    az, el = math.radians(scene.lighting.azimuth_deg), math.radians(scene.lighting.elevation_deg)
    light = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    canvas = _Canvas(camera, pose, light)
    canvas.image[:] = WOOD
    _felt(canvas, layout)
    for marker in layout.markers.values():
        _marker(canvas, layout.marker_dictionary, marker, 0.0, QUIET_ZONE_MM)
    things: list[tuple[float, str, object]] = []
    for name, stacks in scene.zones.items():
        zone = layout.zones.get(name)
        if zone is None:
            raise SceneError(f"scene: zones.{name}: no such zone in layout {layout.name}")
        for stack in stacks:
            x, y = zone.x + stack.offset[0], zone.y + stack.offset[1]
            things.append((_distance(canvas, x, y), "stack", (x, y, stack)))
    for name, where in scene.pucks.items():
        if name not in layout.pucks.ids:
            raise SceneError(
                f"scene: pucks.{name}: layout {layout.name} has no such puck ({', '.join(layout.pucks.ids)})"
            )
        x, y = _point(layout, where, f"pucks.{name}")
        things.append((_distance(canvas, x, y), "puck", (x, y, name)))
    for _, kind, what in sorted(things, key=lambda t: -t[0]):  # painter's order: far first
        if kind == "stack":
            x, y, stack = what  # type: ignore[misc]
            _stack(canvas, layout, x, y, stack, rng)
        else:
            x, y, name = what  # type: ignore[misc]
            _puck(canvas, layout, x, y, name, rng)
    for hand in scene.hands:
        _hand(canvas, layout, hand)
    return _expose(canvas.image, scene, camera, rng)


def _distance(canvas: _Canvas, x: float, y: float) -> float:
    return math.hypot(x - canvas.eye[0], y - canvas.eye[1])


def _point(layout: Layout, where: str | tuple[float, float], key: str) -> tuple[float, float]:
    if isinstance(where, str):
        zone = layout.zones.get(where)
        if zone is None:
            raise SceneError(f"scene: {key}: no such zone {where!r} in layout {layout.name}")
        return zone.centre
    return where


def _circle(x: float, y: float, r: float, z: float, n: int = 72) -> FloatArray:
    a = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([x + r * np.cos(a), y + r * np.sin(a), np.full(n, z)], axis=1)


def _felt(canvas: _Canvas, layout: Layout) -> None:
    w, d = layout.width_mm, layout.depth_mm
    t = np.linspace(0, 1, 40)
    edge = np.concatenate(
        [
            np.stack([t * w, 0 * t], 1),
            np.stack([w + 0 * t, t * d], 1),
            np.stack([(1 - t) * w, d + 0 * t], 1),
            np.stack([0 * t, (1 - t) * d], 1),
        ]
    )
    canvas.fill([canvas.project(np.hstack([edge, np.zeros((len(edge), 1))]))], bgr(layout.felt))
    for zone in layout.zones.values():
        outer = canvas.project(_circle(zone.x, zone.y, zone.r + 1.0, 0.0))
        inner = canvas.project(_circle(zone.x, zone.y, zone.r - 1.0, 0.0))
        canvas.fill([outer, inner], bgr(layout.ink))


def _marker(canvas: _Canvas, dictionary: str, marker: Marker, z: float, quiet_mm: float) -> None:
    """A marker printed flat at height z: white quiet zone, then its black cells."""
    aruco = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    cells = aruco.markerSize + 2
    bits = cv2.aruco.generateImageMarker(aruco, marker.id, cells, borderBits=1)
    tl, tr, br, bl = marker.corners
    centre = marker.corners.mean(axis=0)

    def table(u: float, v: float) -> FloatArray:
        top = tl + (tr - tl) * u
        bottom = bl + (br - bl) * u
        return np.asarray(top + (bottom - top) * v, dtype=np.float64)

    def flat(points: list[FloatArray]) -> FloatArray:
        return canvas.project(np.hstack([np.array(points), np.full((len(points), 1), z)]))

    grow = 1 + quiet_mm / (marker.side_mm / 2)
    canvas.fill([flat([centre + (c - centre) * grow for c in marker.corners])], (236, 238, 238))
    for i in range(cells):
        for j in range(cells):
            if bits[i, j] < 128:
                u0, u1, v0, v1 = j / cells, (j + 1) / cells, i / cells, (i + 1) / cells
                canvas.fill([flat([table(u0, v0), table(u1, v0), table(u1, v1), table(u0, v1)])], (22, 22, 22))


def _side(
    canvas: _Canvas, x: float, y: float, r: float, z0: float, z1: float, colours: list[tuple[int, int, int]]
) -> None:
    """The visible facets of a vertical cylinder between heights z0 and z1, one colour a facet."""
    n = len(colours)
    a = np.linspace(0, 2 * math.pi, n + 1)
    ring = np.stack([x + r * np.cos(a), y + r * np.sin(a)], axis=1)
    pts = canvas.project(
        np.vstack([np.hstack([ring, np.full((n + 1, 1), z0)]), np.hstack([ring, np.full((n + 1, 1), z1)])])
    )
    low, high = pts[: n + 1], pts[n + 1 :]
    to_eye = canvas.eye[:2] - np.array([x, y])
    for i in range(n):
        mid = (a[i] + a[i + 1]) / 2
        normal = np.array([math.cos(mid), math.sin(mid), 0.0])
        if normal[:2] @ to_eye <= r:  # facing away from the camera
            continue
        s = canvas.shade(normal)
        colour = tuple(min(255, int(c * s)) for c in colours[i])
        canvas.fill([np.array([low[i], low[i + 1], high[i + 1], high[i]])], colour)  # type: ignore[arg-type]


def _stack(canvas: _Canvas, layout: Layout, x: float, y: float, stack: Stack, rng: np.random.Generator) -> None:
    r = CHIP_DIAMETER_MM / 2
    top_shade = canvas.shade(np.array([0.0, 0.0, 1.0]))
    chip: Chip | None = None
    spin = 0.0
    for level, value in enumerate(stack.chips):
        try:
            chip = layout.chips.by_value(value)
        except KeyError as exc:
            raise SceneError(f"scene: a stack at ({x:.0f}, {y:.0f}) mm: {exc.args[0]}") from None
        spin = float(rng.uniform(0, 360))
        colours = []
        for i in range(FACETS):
            angle = (i + 0.5) * 360 / FACETS
            on_spot = False
            if chip.spots.count:
                pitch = 360 / chip.spots.count
                on_spot = abs(((angle - spin) % pitch) - pitch / 2) > (pitch - chip.spots.degrees) / 2
            colours.append(bgr(chip.spots.colour if on_spot else chip.colour))
        _side(canvas, x, y, r, level * CHIP_THICKNESS_MM, (level + 1) * CHIP_THICKNESS_MM, colours)
    if chip is None:
        return
    z = len(stack.chips) * CHIP_THICKNESS_MM
    face = tuple(int(c * top_shade) for c in bgr(chip.colour))
    canvas.fill([canvas.project(_circle(x, y, r, z))], face)  # type: ignore[arg-type]
    if chip.spots.count:
        spot = tuple(int(c * top_shade) for c in bgr(chip.spots.colour))
        for j in range(chip.spots.count):
            centre = math.radians(spin + (j + 0.5) * 360 / chip.spots.count)
            half = math.radians(chip.spots.degrees / 2)
            a = np.array([centre - half, centre + half])
            outer = [(x + r * math.cos(t), y + r * math.sin(t), z) for t in a]
            inner = [(x + 0.8 * r * math.cos(t), y + 0.8 * r * math.sin(t), z) for t in a[::-1]]
            canvas.fill([canvas.project(np.array(outer + inner))], spot)  # type: ignore[arg-type]
    inlay = tuple(int((0.45 * c + 0.55 * 235) * top_shade) for c in bgr(chip.colour))
    canvas.fill([canvas.project(_circle(x, y, 0.55 * r, z))], inlay)  # type: ignore[arg-type]


def _puck(canvas: _Canvas, layout: Layout, x: float, y: float, name: str, rng: np.random.Generator) -> None:
    spec = layout.pucks
    r, h = spec.diameter_mm / 2, spec.height_mm
    _side(canvas, x, y, r, 0.0, h, [PUCK_BODY] * FACETS)
    canvas.fill([canvas.project(_circle(x, y, r, h))], (232, 234, 234))
    turn = math.radians(float(rng.uniform(-30, 30)))
    half = spec.marker_mm / 2
    # ArUco order TL, TR, BR, BL with the marker's top toward the players (+y), then turned.
    square = np.array([[-half, half], [half, half], [half, -half], [-half, -half]])
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    corners = square @ rot.T + np.array([x, y])
    _marker(canvas, spec.dictionary, Marker(spec.ids[name], corners), h, 0.0)


def _hand(canvas: _Canvas, layout: Layout, hand: Hand) -> None:
    """A palm over the point and the forearm rising toward the players' edge."""
    x, y = _point(layout, hand.over, "hands")
    h = hand.height
    skin = bgr(hand.skin)
    dark = tuple(int(c * 0.8) for c in skin)
    arm = np.array(
        [[x - 40, y + 30, h + 10], [x + 40, y + 30, h + 10], [x + 45, y + 520, h + 260], [x - 45, y + 520, h + 260]]
    )
    canvas.fill([canvas.project(arm)], dark)  # type: ignore[arg-type]
    a = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    palm = np.stack([x + 48 * np.cos(a), y + 62 * np.sin(a), np.full(48, h)], axis=1)
    canvas.fill([canvas.project(palm)], skin)
    for k in range(4):  # fingers reaching toward the dealer
        fx = x - 33 + 22 * k
        finger = np.array(
            [[fx - 8, y - 40, h], [fx + 8, y - 40, h], [fx + 7, y - 120, h - 25], [fx - 7, y - 120, h - 25]]
        )
        canvas.fill([canvas.project(finger)], skin)


def _expose(image: Image, scene: Scene, camera: CameraModel, rng: np.random.Generator) -> Image:
    """Shrink to the sensor's size, then lighting gain, tint, gradient, blur and noise."""
    frame = cv2.resize(image, (camera.width, camera.height), interpolation=cv2.INTER_AREA).astype(np.float32)
    light = scene.lighting
    gain = np.array([light.tint[2], light.tint[1], light.tint[0]], dtype=np.float32) * light.brightness
    frame *= gain
    if light.gradient:
        yy, xx = np.mgrid[0 : camera.height, 0 : camera.width].astype(np.float32)
        t = math.radians(light.gradient_deg)
        ramp = ((xx / camera.width - 0.5) * math.cos(t) + (yy / camera.height - 0.5) * math.sin(t)) * light.gradient
        frame *= (1.0 + ramp)[..., None]
    if scene.blur > 0:
        frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), scene.blur), dtype=np.float32)
    if scene.noise > 0:
        frame += np.asarray(rng.normal(0.0, scene.noise, frame.shape), dtype=np.float32)
    return np.asarray(np.clip(frame + 0.5, 0, 255), dtype=np.uint8)
