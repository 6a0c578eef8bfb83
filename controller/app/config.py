"""The table's configuration: one TOML file, validated at start.

On a Pi the file is `/etc/tablectl/table.toml`; when it is absent and the table is simulated,
the defaults below describe a 7-seat Grand Slam table on simulated hardware. Every error names
the file and the key (`/etc/tablectl/table.toml: shoe.baudrate: must be one of ...`). Secrets
(API tokens) are never read from this file: they come from the environment or from files
readable only by the service (see `controller/api/auth.py`). The models that check a file, key
by key, are in `controller/app/config_schema.py`, loaded only when a file is read.

    [table]
    id = "GS-01"                 # shown on every screen and in every log line
    game = "grand-slam"
    seats = 7                    # seats (spots) at the table: up to 7 (Grand Slam, Jokers 22), 8 (Baseball
                                 # poker); the lamps' pin map and the camera's layout have every one
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
    backend = "opencv"           # "picamera2" (Raspberry Pi Camera Module), or "simulated" (--sim's default)
    device = "/dev/v4l/by-id/usb-Arducam_12MP-video-index0"   # or an index such as 0
    layout = "grand-slam-7"      # a layout in hardware/layouts, or a path to one
    calibration = "/var/lib/tablectl/camera.json"   # from `tablectl calibrate`; a simulated
                                 # camera calibrates itself from its first frame when absent
    fps = 4                      # frames read a second
    stable_frames = 3            # equal readings in a row before a puck counts (a wager's
                                 # value: 2 frames that agree, vision/fusion.py)
    fresh_frames = false         # simulated camera only: true makes every frame a fresh exposure
                                 # (sensor noise, and JPEG when the scene's sensor is set so), as
                                 # a real camera's frames of a still table; false gives the last
                                 # picture again while nothing on the felt changes
    [http]
    host = "127.0.0.1"           # another address (the casino LAN) needs TLS or allow_plain_http
    port = 8000
    tls_cert = "/etc/tablectl/tls/table.crt"   # HTTPS for the screens (hardware/install.md)
    tls_key = "/etc/tablectl/tls/table.key"    # readable by the service only
    allow_plain_http = false     # true: serve plain HTTP off loopback anyway (tokens in clear)
    trusted_proxies = []         # proxies whose X-Forwarded-For is believed ("10.0.0.5"); none by default
    [state]
    dir = "/var/lib/tablectl"
    [security]                   # software authentication and the signed history (hardware/authentication.md)
    release_key = "/etc/tablectl/release-key.pub"   # the release key's public half this table trusts
    verify_every = 24            # hours between the automatic checks of the installed software
    table_key = "/var/lib/tablectl/table.key"       # the table's own signing key (default: in the state dir)
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.adapters.floor.config import FloorConfig
    from controller.app.config_schema import Camera, Http

DEFAULT_PATH = Path("/etc/tablectl/table.toml")


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


@dataclass(frozen=True)
class CameraConfig:
    backend: str = "simulated"
    device: int | str | None = None  # an index or a path (opencv)
    layout: str = "grand-slam-7"
    calibration: str | None = None  # a calibration file written by `tablectl calibrate`
    fps: float = 4.0
    stable_frames: int = 3
    fresh_frames: bool = False  # the simulated camera's frames each a fresh exposure


@dataclass(frozen=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    tls_cert: str | None = None  # both or neither: uvicorn serves HTTPS with them
    tls_key: str | None = None
    allow_plain_http: bool = False  # the operator chose plain HTTP on a non-loopback address
    trusted_proxies: tuple[str, ...] = ()  # addresses or networks whose forwarded headers count

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def check_listen(host: str, http: HttpConfig, source: str) -> None:
    """Refuse to serve plain HTTP beyond this machine unless the operator said so: the tokens and
    the session cookie would cross the casino's network in clear. ConfigError names the key."""
    if http.tls or http.allow_plain_http:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host in LOOPBACK
    if not loopback:
        raise ConfigError(
            f"{source}: http.host: {host} is reachable from other machines, and without TLS the tokens and "
            "session cookies would cross the network in clear; set http.tls_cert and http.tls_key "
            "(hardware/install.md shows how to make them), or allow_plain_http = true if you chose plain HTTP"
        )


@dataclass(frozen=True)
class SecurityConfig:
    release_key: str = "/etc/tablectl/release-key.pub"  # controller/security/authentication.py's DEFAULT_RELEASE_KEY
    verify_every: float = 24.0  # hours between automatic software checks
    table_key: str | None = None  # None: <state dir>/table.key


@dataclass(frozen=True)
class Config:
    source: str  # the file it came from, or "built-in defaults"
    table_id: str = "TABLE-1"
    game: str = "grand-slam"
    seats: int = 7  # the table's seats 1..seats (spots for Jokers 22), at most the game's (GAMES.md)
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
    security: SecurityConfig = field(default_factory=SecurityConfig)


def check_seats(seats: int, game: str, source: str) -> None:
    """Refuse a seat count the game's table does not have (a Grand Slam table seats 7, a stud
    table 8): ConfigError naming the key."""
    from controller.games import adapter

    found = adapter(game)
    if seats > found.seats_max:
        raise ConfigError(
            f"{source}: table.seats: a {found.title} table seats at most {found.seats_max} (GAMES.md), not {seats}"
        )


def load(path: Path | None, *, simulated: bool) -> Config:
    """Read and validate the config at `path` (or the default path; built-in defaults when a
    simulated table has no file). Raise ConfigError naming the file and the key.

    The file's keys are checked by its models (pydantic, controller/app/config_schema.py), unless the
    table's daemon has checked these very bytes with this very code already: it keeps what they
    read as (`CHECKED_FILE`, in the state directory the file names), and a command that only reads
    (recall, journal verify) then loads no pydantic. Everything else (the seats, the serial ports
    a live table needs, the TLS files, the [floor]'s broker) is checked here every time."""
    chosen = path or DEFAULT_PATH
    if not chosen.exists():
        if path is None and simulated:
            return Config(source="built-in defaults (simulated table)")
        raise ConfigError(f"{chosen}: no such configuration file")
    try:
        data = chosen.read_bytes()
        doc = tomllib.loads(_text(data))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{chosen}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{chosen}: cannot be read: {exc}") from None
    form = _checked_before(doc, data)
    if form is not None:
        try:
            return _config(_namespace(form), str(chosen), simulated, floor_form=form["floor"])
        except (AttributeError, KeyError, TypeError):  # a form not as this code writes it: not used
            pass
    return parse(doc, str(chosen), simulated=simulated)


def _text(data: bytes) -> str:
    """The file's bytes as `Path.read_text` reads them (UTF-8, universal newlines)."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def parse(doc: dict[str, Any], source: str, *, simulated: bool) -> Config:
    """The configuration in `doc` (parsed TOML from `source`), checked; ConfigError names the key."""
    # A file whose every key is plainly right is read without pydantic (controller/app/config_plain.py:
    # the models' own reading of it); else its models (pydantic) are loaded here and read it, refusing
    # it in their words. The floor's models are loaded with a [floor] section. What needs only the
    # built-in defaults (a simulated table, recall, verify) loads neither.
    from controller.app import config_plain

    form = config_plain.read(doc)
    if form is not None:
        return _config(_namespace(form), source, simulated)
    from controller.app.config_schema import ConfigStyle, TableToml
    from vision.documents import check

    return _config(check(TableToml, doc, source, ConfigError, ConfigStyle()), source, simulated)


def _config(toml: Any, source: str, simulated: bool, floor_form: Mapping[str, Any] | None = None) -> Config:
    """The Config of a checked table.toml (`toml`: its models, or the same read back from the
    daemon's `CHECKED_FILE` with the [floor] section's checked form in `floor_form`): what the
    models cannot say alone, checked now and in this order whichever way the keys were checked."""

    def fail(key: str, why: str) -> ConfigError:
        return ConfigError(f"{source}: {key}: {why}")

    if not simulated:
        if toml.shoe.url is None:
            raise fail("shoe.url", "a real table needs the shoe's serial port (a /dev/serial/by-id/... path)")
        if toml.display.url is None:
            raise fail("display.url", "a real table needs the pole display's serial port")
    check_seats(toml.table.seats, toml.table.game, source)
    floor: FloorConfig | None = None
    if toml.floor is not None:
        from controller.adapters.floor.config import FloorConfigError, check_level, parse_floor

        try:
            floor = parse_floor(toml.floor, source, checked=floor_form)
            check_level(toml.table.id, f"{source}: table.id")
        except FloorConfigError as exc:
            raise ConfigError(str(exc)) from None
    return Config(
        source=source,
        table_id=toml.table.id,
        game=toml.table.game,
        seats=toml.table.seats,
        rules=dict(toml.rules),
        shoe=ShoeConfig(toml.shoe.url, toml.shoe.baudrate, toml.shoe.heartbeat_timeout),
        display=DisplayConfig(toml.display.url, toml.display.dialect, toml.display.baudrate),
        indicators=IndicatorConfig(toml.indicators.pin_map, toml.indicators.pin_file, toml.indicators.pin_factory),
        http=_http(toml.http, fail),
        state_dir=toml.state.dir,
        retain_days=toml.state.retain_days,
        archive_dir=toml.state.archive_dir,
        floor=floor,
        camera=_camera(toml.camera, simulated, fail) if toml.camera is not None else None,
        security=SecurityConfig(toml.security.release_key, toml.security.verify_every, toml.security.table_key),
    )


# -- what the daemon checked: its form of table.toml, for the commands that only read -------------

#: In the daemon's state directory: what the table.toml it started with reads as, key by key, after
#: its models checked it; keyed by the file's SHA-256 and by the code that checked it.
CHECKED_FILE = "table.toml.checked"
#: The modules whose code decides what a file's keys read as (the models, their checks, the
#: [floor]'s model); with the games' names and pydantic's version, the code a checked form is of.
_CHECKING_MODULES = (
    "controller.app.config", "controller.app.config_plain", "controller.app.config_schema", "vision.documents",
    "controller.adapters.floor.config",
    "controller.adapters.floor.config_schema",
)  # fmt: skip
#: The sections of the form that are the file's own tables as written, not sections of keys.
_AS_WRITTEN = ("rules", "floor")


def remember_checked(path: Path, state_dir: Path) -> bool:
    """Write what the table.toml at `path` reads as to `state_dir`'s `CHECKED_FILE` (the daemon, at
    start, holding the state directory): checked now (by the models, or read as they read it:
    controller/app/config_plain.py), unless the form there is of these very bytes and this very
    code already (what the models say of them is that form: a
    restart's daemon loads no file's models, `load` having read it from that form too). False
    (nothing written) when the file does not check, or holds what JSON cannot keep (a TOML date):
    the commands then check it themselves, as before."""
    try:
        data = path.read_bytes()
        if _kept_for(state_dir / CHECKED_FILE, data):
            return True
        from controller.app import config_plain

        doc = tomllib.loads(_text(data))
        plain = config_plain.read(doc)  # the models' own reading of a file plainly right, without them
        if plain is None:
            from controller.app.config_schema import ConfigStyle, TableToml
            from vision.documents import check

            plain = check(TableToml, doc, str(path), ConfigError, ConfigStyle()).model_dump()
        form: dict[str, Any] = plain
        if form["floor"] is not None:
            from controller.adapters.floor.config import check_floor

            form["floor"] = check_floor(form["floor"], str(path))
        text = json.dumps({"sha256": _digest(data), "code": _code_digest(), "form": form}, sort_keys=True)
    except (OSError, UnicodeDecodeError, ValueError, TypeError):  # ConfigError, FloorConfigError, TOML: no form
        return False
    if json.loads(text)["form"] != form:  # a value JSON reads back otherwise
        return False
    target = state_dir / CHECKED_FILE
    partial = target.with_name(target.name + ".partial")
    try:
        partial.unlink(missing_ok=True)
        partial.touch(mode=0o640)  # read by the table's own users, as the state directory is
        partial.write_text(text + "\n", encoding="utf-8")
        os.replace(partial, target)
    except OSError:
        return False
    return True


def _kept_for(kept_file: Path, data: bytes) -> bool:
    """Whether `kept_file` is a form kept for exactly the bytes `data` by this code."""
    try:
        kept = json.loads(kept_file.read_text(encoding="utf-8"))
        return bool(kept["sha256"] == _digest(data) and kept["code"] == _code_digest() and kept["form"])
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return False


def _checked_before(doc: dict[str, Any], data: bytes) -> dict[str, Any] | None:
    """The form the daemon wrote for exactly these bytes and this code, or None (none written,
    another file, another version of tablectl, unreadable: the models check the file)."""
    state = doc.get("state")
    where = state.get("dir", "/var/lib/tablectl") if isinstance(state, dict) else "/var/lib/tablectl"
    if not isinstance(where, str) or not where:
        return None
    try:
        kept = json.loads((Path(where) / CHECKED_FILE).read_text(encoding="utf-8"))
        if kept["sha256"] != _digest(data) or kept["code"] != _code_digest():
            return None
        form: dict[str, Any] = kept["form"]
        _namespace(form)  # each section as the models give it
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return form


def _namespace(form: Mapping[str, Any]) -> SimpleNamespace:
    """The form as the models' attributes: `toml.shoe.url`."""
    return SimpleNamespace(
        **{
            key: value if key in _AS_WRITTEN or value is None else SimpleNamespace(**value)
            for key, value in form.items()
        }
    )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_digest() -> str:
    """The code that checks a file: the checking modules' source, the games' names (a table.game
    is one of them) and pydantic's version, as one SHA-256. Another release, a change to a model or
    a game installed (its `tablectl.games` entry point) gives another, and a form kept by the code
    before is not used."""
    import importlib.util

    from controller.engine import game_names

    digest = hashlib.sha256(",".join(game_names()).encode())
    for name in (*_CHECKING_MODULES, "pydantic.version"):  # pydantic's VERSION
        top, *inner = name.split(".")
        spec = importlib.util.find_spec(top)  # where the package is, importing none of it
        if spec is None or spec.origin is None:
            raise ConfigError(f"{name}: the code that checks table.toml is not installed")
        digest.update(Path(spec.origin).parent.joinpath(*inner[:-1], inner[-1] + ".py").read_bytes())
    return digest.hexdigest()


def _http(http: Http, fail: Callable[[str, str], ConfigError]) -> HttpConfig:
    cert, key = http.tls_cert, http.tls_key
    if (cert is None) != (key is None):
        missing = "http.tls_key" if key is None else "http.tls_cert"
        raise fail(missing, "TLS needs both the certificate (tls_cert) and its private key (tls_key)")
    for name, path in (("http.tls_cert", cert), ("http.tls_key", key)):
        if path is not None and not Path(path).is_file():
            raise fail(name, f"{path}: no such file (hardware/install.md shows how to make the table's certificate)")
    return HttpConfig(
        host=http.host,
        port=http.port,
        tls_cert=cert,
        tls_key=key,
        allow_plain_http=http.allow_plain_http,
        trusted_proxies=tuple(http.trusted_proxies),
    )


def _camera(camera: Camera, simulated: bool, fail: Callable[[str, str], ConfigError]) -> CameraConfig:
    backend = camera.backend or ("simulated" if simulated else "opencv")
    if backend == "simulated" and not simulated:
        raise fail("camera.backend", 'a live table needs a real camera (backend = "opencv"); "simulated" needs --sim')
    if camera.fresh_frames and backend != "simulated":
        raise fail("camera.fresh_frames", f"only the simulated camera makes its frames, not {backend}; remove the key")
    if backend == "opencv":
        if camera.device is None:
            raise fail("camera.device", "the camera's device: an index such as 0, or a path such as /dev/video0")
        if camera.calibration is None:
            raise fail("camera.calibration", "a real camera needs its calibration file (make one: tablectl calibrate)")
    elif backend == "picamera2":  # the Raspberry Pi camera's number; the first (0) when absent
        device = camera.device
        if device is not None and (not isinstance(device, int) or not 0 <= device <= 7):
            raise fail("camera.device", f"the Raspberry Pi camera's number (0 for the first), not {device!r}")
        if camera.calibration is None:
            raise fail("camera.calibration", "a real camera needs its calibration file (make one: tablectl calibrate)")
    elif camera.device is not None:
        raise fail("camera.device", "the simulated camera has no device; remove the key")
    return CameraConfig(
        backend=backend,
        device=camera.device,
        layout=camera.layout,
        calibration=camera.calibration,
        fps=camera.fps,
        stable_frames=camera.stable_frames,
        fresh_frames=camera.fresh_frames,
    )
