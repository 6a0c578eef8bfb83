"""The simulator's camera: draws the frame a real camera would see of a scene.

Real 3D geometry goes through a pinhole camera with lens distortion (cv2.projectPoints): the
felt and its printed circles, the calibration markers, chip stacks as cylinders of 39 x 3.3 mm
chips with edge spots, pucks carrying their marker on top, and hands hovering with the arm
reaching in from the players' side. Surfaces are shaded by one light; stacks cast
shadows from the scene's further lights; chips may lean, sit sloppily on one another, and be
worn (each chip's colour a little off its denomination's); then come the lighting gain, tint,
gradient, vignetting and glare, lens blur, the camera's motion blur and tone curve, sensor
noise and JPEG compression (as an MJPEG camera sends), and a small shift or turn of the frame.
Drawing is done at twice the resolution and shrunk, so edges are anti-aliased as a sensor would
average them.

    frame = render(Scene.load("scene.json"))      # BGR uint8, the scene's resolution
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.chips import CHIP_DIAMETER_MM, CHIP_THICKNESS_MM, Chip, ChipSet, from_lab, to_lab
from vision.geometry import CameraModel, Pose, project
from vision.layout import Layout, Marker
from vision.scene import Hand, Scene, SceneError, Sensor, Stack

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
    return expose(draw(scene, layout), scene)


@dataclass(frozen=True)
class Drawn:
    """What the lens forms of a scene, before the light's gain, the camera and its sensor:
    `expose` turns it into the frame. Scenes that differ only in `lighting` brightness, tint,
    gradient, vignette and glare, `blur`, `noise` and `sensor` share one drawing (exposing it
    gives exactly what `render` gives each of them)."""

    image: Image  # supersampled
    rng_state: Mapping[str, Any]  # the noise stream, as drawing left it


def draw(scene: Scene, layout: Layout | None = None) -> Drawn:
    """Draw the scene's geometry (the costly part of `render`)."""
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
    chips = ChipSet(scene.chips) if scene.chips is not None else layout.chips
    # the new ways a scene varies draw from their own streams: scenes without them render as before
    chip_rng = np.random.default_rng([scene.seed, 1])
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
    places = {id(what): _chip_places(what, chip_rng) for _, kind, what in things if kind == "stack"}
    if scene.lighting.shadows:
        _shadows(canvas, scene, layout, things, places)
    for _, kind, what in sorted(things, key=lambda t: -t[0]):  # painter's order: far first
        if kind == "stack":
            x, y, stack = what  # type: ignore[misc]
            _stack(canvas, chips, places[id(what)], stack, rng, scene.wear, chip_rng)
        else:
            x, y, name = what  # type: ignore[misc]
            _puck(canvas, layout, x, y, name, rng)
    for hand in scene.hands:
        _hand(canvas, layout, hand)
    return Drawn(canvas.image, rng.bit_generator.state)


def expose(drawn: Drawn, scene: Scene, rng: np.random.Generator | None = None) -> Image:
    """The frame the camera makes of a drawing of `scene` (or of a scene differing from it only
    in the light's gain, the lens blur and the sensor, see `Drawn`). `rng`: a noise stream of the
    caller's, for fresh sensor noise on each frame of a sequence (a still table filmed); without
    it the noise is the scene's own, as `render` gives it."""
    if rng is None:
        rng = np.random.default_rng()
        rng.bit_generator.state = drawn.rng_state
    return _expose(drawn.image, scene, scene.camera.model(), scene.camera.pose(), rng)


def exposures(drawn: Drawn, scene: Scene, rng: np.random.Generator) -> Iterator[Image]:
    """Endless frames of a still table: `expose(drawn, scene, rng)` frame after frame (fresh
    sensor noise and a fresh JPEG on each), the light and the lens worked out once."""
    camera, pose = scene.camera.model(), scene.camera.pose()
    lit = _light_and_lens(drawn.image, scene, camera, pose)
    while True:
        yield _sensor_out(lit.copy(), scene, rng)


def _chip_places(what: object, rng: np.random.Generator) -> list[tuple[float, float]]:
    """Where each chip of a stack stands (mm): leaning and sloppy stacks move each chip."""
    assert isinstance(what, tuple)
    x, y, stack = what
    assert isinstance(stack, Stack)
    out = []
    for level in range(len(stack.chips)):
        dx, dy = stack.lean[0] * level, stack.lean[1] * level
        if stack.sloppy:
            dx += float(rng.uniform(-stack.sloppy, stack.sloppy))
            dy += float(rng.uniform(-stack.sloppy, stack.sloppy))
        out.append((x + dx, y + dy))
    return out


def _shadows(
    canvas: _Canvas,
    scene: Scene,
    layout: Layout,
    things: list[tuple[float, str, object]],
    places: dict[int, list[tuple[float, float]]],
) -> None:
    """Darken the felt where the further lights' shadows of stacks and pucks fall (soft-edged)."""
    r = CHIP_DIAMETER_MM / 2
    for light in scene.lighting.shadows:
        az, el = math.radians(light.azimuth_deg), math.radians(light.elevation_deg)
        away = -np.array([math.cos(az), math.sin(az)]) / math.tan(el)  # shadow shift per mm of height
        mask = np.zeros(canvas.image.shape[:2], dtype=np.uint8)
        for _, kind, what in things:
            if kind == "stack":
                spots = places[id(what)]
                x, y = spots[-1]
                h = len(spots) * CHIP_THICKNESS_MM
                base_x, base_y, radius = spots[0][0], spots[0][1], r
            else:
                base_x, base_y, _ = what  # type: ignore[misc]
                x, y, h, radius = base_x, base_y, layout.pucks.height_mm, layout.pucks.diameter_mm / 2
            base = _circle(base_x, base_y, radius, 0.0)[:, :2]
            top = _circle(x + away[0] * h, y + away[1] * h, radius, 0.0)[:, :2]
            hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32)).reshape(-1, 2)
            pts = canvas.project(np.hstack([hull.astype(np.float64), np.zeros((len(hull), 1))]))
            cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32).reshape(-1, 1, 2)], 255, cv2.LINE_8, 4)
        soft = cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (0, 0), 2.0 * SUPERSAMPLE)
        canvas.image[:] = np.clip(canvas.image * (1.0 - light.strength * soft)[..., None], 0, 255).astype(np.uint8)


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


def _worn(colour: tuple[int, int, int], wear: float, rng: np.random.Generator) -> tuple[int, int, int]:
    """`colour` moved `wear` Lab units in a random direction (a worn or dirty chip)."""
    direction = rng.normal(size=3)
    lab = to_lab(colour) + wear * direction / max(float(np.linalg.norm(direction)), 1e-9)
    r, g, b = (round(float(v)) for v in from_lab(lab))
    return (r, g, b)


def _stack(
    canvas: _Canvas,
    chips: ChipSet,
    places: list[tuple[float, float]],
    stack: Stack,
    rng: np.random.Generator,
    wear: float,
    chip_rng: np.random.Generator,
) -> None:
    r = CHIP_DIAMETER_MM / 2
    top_shade = canvas.shade(np.array([0.0, 0.0, 1.0]))
    chip: Chip | None = None
    spin = 0.0
    edge = (0, 0, 0)
    staggered = any(p != places[0] for p in places)
    for level, value in enumerate(stack.chips):
        x, y = places[level]
        try:
            chip = chips.by_value(value)
        except KeyError as exc:
            raise SceneError(f"scene: a stack at ({x:.0f}, {y:.0f}) mm: {exc.args[0]}") from None
        spin = float(rng.uniform(0, 360))
        edge = stack.edges[level] if stack.edges else (_worn(chip.colour, wear, chip_rng) if wear else chip.colour)
        colours = []
        for i in range(FACETS):
            angle = (i + 0.5) * 360 / FACETS
            on_spot = False
            if chip.spots.count:
                pitch = 360 / chip.spots.count
                on_spot = abs(((angle - spin) % pitch) - pitch / 2) > (pitch - chip.spots.degrees) / 2
            colours.append(bgr(chip.spots.colour if on_spot else edge))
        z0, z1 = level * CHIP_THICKNESS_MM, (level + 1) * CHIP_THICKNESS_MM
        _side(canvas, x, y, r, z0, z1, colours)
        if staggered and level + 1 < len(stack.chips):  # a chip off its neighbour shows a sliver of its top
            face = tuple(int(c * top_shade) for c in bgr(edge))
            canvas.fill([canvas.project(_circle(x, y, r, z1))], face)  # type: ignore[arg-type]
    if chip is None:
        return
    x, y = places[-1]
    z = len(stack.chips) * CHIP_THICKNESS_MM
    face = tuple(int(c * top_shade) for c in bgr(edge))
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
    inlay = tuple(int((0.45 * c + 0.55 * 235) * top_shade) for c in bgr(edge))
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


def _expose(image: Image, scene: Scene, camera: CameraModel, pose: Pose, rng: np.random.Generator) -> Image:
    """Shrink to the sensor's size, then the frame's shift, lighting gain, tint, gradient,
    vignetting and glare, lens and motion blur, the tone curve, noise and JPEG."""
    return _sensor_out(_light_and_lens(image, scene, camera, pose), scene, rng)


def _light_and_lens(image: Image, scene: Scene, camera: CameraModel, pose: Pose) -> npt.NDArray[np.float32]:
    """`_expose` up to the sensor's noise: the frame as light, lens and tone curve make it."""
    frame = cv2.resize(image, (camera.width, camera.height), interpolation=cv2.INTER_AREA).astype(np.float32)
    sensor = scene.sensor
    if sensor.shift_px != (0.0, 0.0) or sensor.turn_deg:
        centre = ((camera.width - 1) / 2, (camera.height - 1) / 2)
        m = cv2.getRotationMatrix2D(centre, sensor.turn_deg, 1.0)
        m[:, 2] += np.array(sensor.shift_px)
        size = (camera.width, camera.height)
        frame = np.asarray(
            cv2.warpAffine(frame, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE), dtype=np.float32
        )
    light = scene.lighting
    gain = np.array([light.tint[2], light.tint[1], light.tint[0]], dtype=np.float32) * light.brightness
    frame *= gain
    if light.gradient:
        yy, xx = np.mgrid[0 : camera.height, 0 : camera.width].astype(np.float32)
        t = math.radians(light.gradient_deg)
        ramp = ((xx / camera.width - 0.5) * math.cos(t) + (yy / camera.height - 0.5) * math.sin(t)) * light.gradient
        frame *= (1.0 + ramp)[..., None]
    if light.vignette:
        yy, xx = np.mgrid[0 : camera.height, 0 : camera.width].astype(np.float32)
        corner2 = (camera.width / 2) ** 2 + (camera.height / 2) ** 2
        r2 = ((xx - camera.width / 2) ** 2 + (yy - camera.height / 2) ** 2) / corner2
        frame *= (1.0 - light.vignette * r2)[..., None]
    for glare in light.glare:
        at = np.array([[glare.at[0], glare.at[1], 0.0], [glare.at[0] + glare.radius, glare.at[1], 0.0]])
        (cx, cy), edge = project(camera, pose, at)
        radius = max(float(np.hypot(edge[0] - cx, edge[1] - cy)), 1.0)
        yy, xx = np.mgrid[0 : camera.height, 0 : camera.width].astype(np.float32)
        spot = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * (radius / 2) ** 2))
        frame += (200.0 * glare.strength * spot)[..., None]
    if scene.blur > 0:
        frame = np.asarray(cv2.GaussianBlur(frame, (0, 0), scene.blur), dtype=np.float32)
    if sensor.motion_px > 0:
        frame = np.asarray(cv2.filter2D(frame, -1, _motion_kernel(sensor)), dtype=np.float32)
    if sensor.contrast != 1.0:
        frame = 128.0 + sensor.contrast * (frame - 128.0)
    if sensor.gamma != 1.0:
        frame = 255.0 * np.power(np.clip(frame, 0, 255) / 255.0, sensor.gamma, dtype=np.float32)
    return frame


def _sensor_out(frame: npt.NDArray[np.float32], scene: Scene, rng: np.random.Generator) -> Image:
    """The sensor's noise on the frame, then its 8 bits and the camera's JPEG."""
    sensor = scene.sensor
    if scene.noise > 0:
        frame += np.asarray(rng.normal(0.0, scene.noise, frame.shape), dtype=np.float32)
    out = np.asarray(np.clip(frame + 0.5, 0, 255), dtype=np.uint8)
    if sensor.jpeg:
        params = [cv2.IMWRITE_JPEG_QUALITY, sensor.jpeg]
        if sensor.jpeg_chroma != "4:2:0":  # OpenCV's default
            sampling = {"4:2:2": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_422, "4:4:4": cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444}
            params += [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, sampling[sensor.jpeg_chroma]]
        ok, data = cv2.imencode(".jpg", out, params)
        assert ok
        out = np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), dtype=np.uint8)
    return out


def _motion_kernel(sensor: Sensor) -> npt.NDArray[np.float32]:
    """A straight motion blur of `motion_px` pixels in direction `motion_deg`, anti-aliased."""
    size = math.ceil(sensor.motion_px) | 1
    size += 2
    kernel = np.zeros((size * 4, size * 4), dtype=np.float32)
    c = (size * 4 - 1) / 2
    t = math.radians(sensor.motion_deg)
    half = sensor.motion_px * 4 / 2
    p0 = (c - half * math.cos(t), c - half * math.sin(t))
    p1 = (c + half * math.cos(t), c + half * math.sin(t))
    start, end = (round(p0[0] * 16), round(p0[1] * 16)), (round(p1[0] * 16), round(p1[1] * 16))
    cv2.line(kernel, start, end, 1.0, 4, cv2.LINE_AA, 4)
    small = cv2.resize(kernel, (size, size), interpolation=cv2.INTER_AREA)
    return np.asarray(small / small.sum(), dtype=np.float32)
