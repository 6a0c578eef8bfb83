"""table.toml as an operator writes it: the pydantic models that check each section and key
(vision/documents.py's way: unknown keys refused, nothing coerced, one line naming the
file and the key). `controller.app.config.parse` reads a file through them, unless every key in it
is plainly right (controller/app/config_plain.py reads it then as they would, without pydantic).

They live apart from controller/app/config.py so that what only needs the configuration's values
never loads pydantic: a simulated table's built-in defaults, `tablectl recall --sim` and
`tablectl journal verify --state-dir D` on a copy of a journal (which reads its game from the
journal) check no file.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any

from pydantic import Field

from controller.app.config_plain import BAUD_RATES, CAMERA_BACKENDS, DIALECTS
from controller.engine import game_names
from vision.documents import Document, Style, Text, number, one_of, problem, rule


def _game(value: Any) -> Any:
    names = game_names()
    if value not in names:
        raise problem(f": must be one of {', '.join(names)}, not {value!r}")
    return value


class Table(Document):
    id: Text = "TABLE-1"
    game: Annotated[str, rule(_game)] = "grand-slam"
    seats: Annotated[int, number(1, 99, whole=True)] = 7  # the game says how many more: check_seats


class Shoe(Document):
    url: Text | None = None
    baudrate: Annotated[int, one_of(BAUD_RATES)] = 115200
    heartbeat_timeout: Annotated[float, number(0.2, 60.0)] = 3.0


class Display(Document):
    url: Text | None = None
    dialect: Annotated[str, one_of(DIALECTS)] = "cd5220"
    baudrate: Annotated[int, one_of(BAUD_RATES)] = 9600


class Indicators(Document):
    pin_map: Text = "seven-seat-595"
    pin_file: Text | None = None
    pin_factory: Text | None = None


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise problem(f": must be true or false, not {value!r}")
    return value


def _proxies(value: Any) -> Any:
    if not isinstance(value, list):
        raise problem(f': must be a list of addresses, such as ["10.0.0.5"], not {value!r}')
    for i, proxy in enumerate(value):
        try:
            ipaddress.ip_network(proxy, strict=False)
        except (TypeError, ValueError):
            raise problem(f"[{i}]: must be an IP address or network (10.0.0.5, 10.0.0.0/24), not {proxy!r}") from None
    return [str(p) for p in value]


class Http(Document):
    host: Text = "127.0.0.1"
    port: Annotated[int, number(1, 65535, whole=True)] = 8000
    tls_cert: Text | None = None
    tls_key: Text | None = None
    allow_plain_http: Annotated[bool, rule(_flag)] = False
    trusted_proxies: Annotated[list[str], rule(_proxies)] = Field(default_factory=list)


class State(Document):
    dir: Text = "/var/lib/tablectl"
    retain_days: Annotated[float, number(0, 36500)] = 90.0
    archive_dir: Text | None = None


def _device(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | str) or value == "":
        raise problem(f": must be a device index (0) or a path (/dev/video0), not {value!r}")
    if isinstance(value, int) and not 0 <= value <= 63:
        raise problem(f": a device index is from 0 to 63, not {value}")
    return value


class Camera(Document):
    backend: Annotated[str, one_of(CAMERA_BACKENDS)] | None = None
    device: Annotated[int | str, rule(_device)] | None = None
    layout: Text = "grand-slam-7"
    calibration: Text | None = None
    fps: Annotated[float, number(0.2, 30.0)] = 4.0
    stable_frames: Annotated[int, number(1, 100, whole=True)] = 3
    fresh_frames: Annotated[bool, rule(_flag)] = False


class Security(Document):
    release_key: Text = "/etc/tablectl/release-key.pub"
    verify_every: Annotated[float, number(0.01, 720.0)] = 24.0
    table_key: Text | None = None


class TableToml(Document):
    """table.toml as written: each section a table of known keys."""

    table: Table = Table()
    rules: dict[str, Any] = Field(default_factory=dict)  # checked by the game's own rule parser
    shoe: Shoe = Shoe()
    display: Display = Display()
    indicators: Indicators = Indicators()
    http: Http = Http()
    state: State = State()
    floor: dict[str, Any] | None = None  # checked by controller.adapters.floor.config.parse_floor
    camera: Camera | None = None
    security: Security = Security()


class ConfigStyle(Style):
    def other(self, loc: Any, message: str, value: Any) -> str:
        if len(loc) == 1:
            return f"{self.where(loc)}: must be a table ([section])"
        return super().other(loc, message, value)
