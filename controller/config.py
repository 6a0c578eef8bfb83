"""The table's configuration: one TOML file, validated at start.

On a Pi the file is `/etc/tablectl/table.toml`; when it is absent and the table is simulated,
the defaults below describe a 7-seat Grand Slam table on simulated hardware. Every error names
the file and the key (`/etc/tablectl/table.toml: shoe.baudrate: must be one of ...`). Secrets
(API tokens) are never read from this file: they come from the environment or from files
readable only by the service (see `controller/api/auth.py`).

    [table]
    id = "GS-01"                 # shown on every screen and in every log line
    game = "grand-slam"
    [rules]                      # the game's rule options (GAMES.md defaults when absent)
    decks = 6
    [shoe]
    url = "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10KXYZ-if00-port0"   # any pyserial URL
    baudrate = 115200
    heartbeat_timeout = 3.0
    [display]
    url = "/dev/serial/by-id/usb-Prolific_PL2303-if00-port0"
    dialect = "cd5220"           # or "dmd" (Epson ESC/POS display)
    baudrate = 9600
    [indicators]
    pin_map = "seven-seat-595"   # a map named in the pin file (hardware/pins.toml)
    pin_file = "/etc/tablectl/pins.toml"
    pin_factory = "lgpio"        # gpiozero pin factory on a real table (lgpio works on every Pi)
    [camera]                     # optional: without it the table runs without vision
    backend = "opencv"           # or "simulated" (the default with --sim)
    device = "/dev/v4l/by-id/usb-Arducam_12MP-video-index0"   # or an index such as 0
    layout = "grand-slam-7"      # a layout in hardware/layouts, or a path to one
    calibration = "/var/lib/tablectl/camera.json"   # from `tablectl calibrate`; a simulated
                                 # camera calibrates itself from its first frame when absent
    fps = 4                      # frames read a second
    stable_frames = 3            # equal readings in a row before a zone counts
    [http]
    host = "127.0.0.1"
    port = 8000
    [state]
    dir = "/var/lib/tablectl"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.engine import game_names
from controller.floor.config import FloorConfig, FloorConfigError, check_level, parse_floor

DEFAULT_PATH = Path("/etc/tablectl/table.toml")
BAUD_RATES = (1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400)
DIALECTS = ("cd5220", "dmd")


class ConfigError(ValueError):
    """A configuration the table cannot run with; the text names the file and the key."""


@dataclass(frozen=True)
class ShoeConfig:
    url: str | None = None  # None on a simulated table: the daemon starts its own simulated shoe
    baudrate: int = 115200
    heartbeat_timeout: float = 3.0


@dataclass(frozen=True)
class DisplayConfig:
    url: str | None = None
    dialect: str = "cd5220"
    baudrate: int = 9600


@dataclass(frozen=True)
class IndicatorConfig:
    pin_map: str = "seven-seat-595"
    pin_file: str | None = None  # None: the pin file shipped in hardware/pins.toml
    pin_factory: str | None = None  # None: GPIOZERO_PIN_FACTORY, else lgpio


CAMERA_BACKENDS = ("opencv", "simulated")


@dataclass(frozen=True)
class CameraConfig:
    backend: str = "simulated"
    device: int | str | None = None  # an index or a path (opencv)
    layout: str = "grand-slam-7"
    calibration: str | None = None  # a calibration file written by `tablectl calibrate`
    fps: float = 4.0
    stable_frames: int = 3


@dataclass(frozen=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8000


@dataclass(frozen=True)
class Config:
    source: str  # the file it came from, or "built-in defaults"
    table_id: str = "TABLE-1"
    game: str = "grand-slam"
    rules: dict[str, Any] = field(default_factory=dict)
    shoe: ShoeConfig = field(default_factory=ShoeConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    indicators: IndicatorConfig = field(default_factory=IndicatorConfig)
    http: HttpConfig = field(default_factory=HttpConfig)
    state_dir: str = "/var/lib/tablectl"
    retain_days: float = 90.0  # rounds older than this are exported to the archive (0: keep all)
    archive_dir: str | None = None  # where retention exports to (default: <state dir>/archive)
    floor: FloorConfig | None = None  # None: the table reports to no floor (see hardware/floor.md)
    camera: CameraConfig | None = None  # None: no overhead camera (the table runs without vision)


_SECTIONS: dict[str, set[str]] = {
    "table": {"id", "game"},
    "rules": set(),  # checked by the game's own rule parser
    "shoe": {"url", "baudrate", "heartbeat_timeout"},
    "display": {"url", "dialect", "baudrate"},
    "indicators": {"pin_map", "pin_file", "pin_factory"},
    "http": {"host", "port"},
    "state": {"dir", "retain_days", "archive_dir"},
    "floor": set(),  # checked by controller.floor.config.parse_floor
    "camera": {"backend", "device", "layout", "calibration", "fps", "stable_frames"},
}


def load(path: Path | None, *, simulated: bool) -> Config:
    """Read and validate the config at `path` (or the default path; built-in defaults when a
    simulated table has no file). Raise ConfigError naming the file and the key."""
    chosen = path or DEFAULT_PATH
    if not chosen.exists():
        if path is None and simulated:
            return Config(source="built-in defaults (simulated table)")
        raise ConfigError(f"{chosen}: no such configuration file")
    try:
        doc = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{chosen}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{chosen}: cannot be read: {exc}") from None
    return parse(doc, str(chosen), simulated=simulated)


def parse(doc: dict[str, Any], source: str, *, simulated: bool) -> Config:
    reader = _Reader(doc, source)
    for section in doc:
        if section not in _SECTIONS:
            reader.fail(section, f"unknown section; the sections are {sorted(_SECTIONS)}")
        if not isinstance(doc[section], dict):
            reader.fail(section, "must be a table ([section])")
        if _SECTIONS[section]:
            for key in doc[section]:
                if key not in _SECTIONS[section]:
                    reader.fail(f"{section}.{key}", f"unknown key; the keys are {sorted(_SECTIONS[section])}")
    game = reader.choice("table.game", game_names(), "grand-slam")
    shoe_url = reader.text("shoe.url", None)
    display_url = reader.text("display.url", None)
    if not simulated:
        if shoe_url is None:
            reader.fail("shoe.url", "a real table needs the shoe's serial port (a /dev/serial/by-id/... path)")
        if display_url is None:
            reader.fail("display.url", "a real table needs the pole display's serial port")
    try:
        floor = parse_floor(doc.get("floor"), source)
        if floor is not None:
            check_level(reader.text("table.id", "TABLE-1") or "TABLE-1", f"{source}: table.id")
    except FloorConfigError as exc:
        raise ConfigError(str(exc)) from None
    config = Config(
        source=source,
        table_id=reader.text("table.id", "TABLE-1") or "TABLE-1",
        game=game,
        rules=dict(doc.get("rules", {})),
        shoe=ShoeConfig(
            url=shoe_url,
            baudrate=reader.choice("shoe.baudrate", BAUD_RATES, 115200),
            heartbeat_timeout=reader.number("shoe.heartbeat_timeout", 3.0, low=0.2, high=60.0),
        ),
        display=DisplayConfig(
            url=display_url,
            dialect=reader.choice("display.dialect", DIALECTS, "cd5220"),
            baudrate=reader.choice("display.baudrate", BAUD_RATES, 9600),
        ),
        indicators=IndicatorConfig(
            pin_map=reader.text("indicators.pin_map", "seven-seat-595") or "seven-seat-595",
            pin_file=reader.text("indicators.pin_file", None),
            pin_factory=reader.text("indicators.pin_factory", None),
        ),
        http=HttpConfig(
            host=reader.text("http.host", "127.0.0.1") or "127.0.0.1",
            port=int(reader.number("http.port", 8000, low=1, high=65535, whole=True)),
        ),
        state_dir=reader.text("state.dir", "/var/lib/tablectl") or "/var/lib/tablectl",
        retain_days=reader.number("state.retain_days", 90.0, low=0, high=36500),
        archive_dir=reader.text("state.archive_dir", None),
        floor=floor,
        camera=_camera(reader, simulated) if "camera" in doc else None,
    )
    return config


def _camera(reader: _Reader, simulated: bool) -> CameraConfig:
    backend = reader.choice("camera.backend", CAMERA_BACKENDS, "simulated" if simulated else "opencv")
    device = reader.get("camera.device")
    calibration = reader.text("camera.calibration", None)
    if backend == "simulated" and not simulated:
        reader.fail("camera.backend", 'a live table needs a real camera (backend = "opencv"); "simulated" needs --sim')
    if backend == "opencv":
        if device is None:
            reader.fail("camera.device", "the camera's device: an index such as 0, or a path such as /dev/video0")
        if isinstance(device, bool) or not isinstance(device, int | str) or device == "":
            reader.fail("camera.device", f"must be a device index (0) or a path (/dev/video0), not {device!r}")
        if isinstance(device, int) and not 0 <= device <= 63:
            reader.fail("camera.device", f"a device index is from 0 to 63, not {device}")
        if calibration is None:
            reader.fail("camera.calibration", "a real camera needs its calibration file (make one: tablectl calibrate)")
    elif device is not None:
        reader.fail("camera.device", "the simulated camera has no device; remove the key")
    return CameraConfig(
        backend=backend,
        device=device,
        layout=reader.text("camera.layout", "grand-slam-7") or "grand-slam-7",
        calibration=calibration,
        fps=reader.number("camera.fps", 4.0, low=0.2, high=30.0),
        stable_frames=int(reader.number("camera.stable_frames", 3, low=1, high=100, whole=True)),
    )


class _Reader:
    def __init__(self, doc: dict[str, Any], source: str) -> None:
        self.doc = doc
        self.source = source

    def fail(self, key: str, why: str) -> None:
        raise ConfigError(f"{self.source}: {key}: {why}")

    def get(self, key: str) -> Any:
        section, _, name = key.partition(".")
        return self.doc.get(section, {}).get(name)

    def text(self, key: str, default: str | None) -> str | None:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.fail(key, f"must be non-empty text, not {value!r}")
        return str(value)

    def choice(self, key: str, allowed: tuple[Any, ...], default: Any) -> Any:
        value = self.get(key)
        if value is None:
            return default
        if value not in allowed or isinstance(value, bool):
            self.fail(key, f"must be one of {', '.join(map(str, allowed))}, not {value!r}")
        return value

    def number(self, key: str, default: float, *, low: float, high: float, whole: bool = False) -> float:
        value = self.get(key)
        if value is None:
            return default
        kinds = (int,) if whole else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds) or not low <= value <= high:
            kind = "a whole number" if whole else "a number"
            self.fail(key, f"must be {kind} from {low:g} to {high:g}, not {value!r}")
        return float(value) if not whole else int(value)
