"""The `[floor]` section of table.toml: which MQTT broker the table reports to, and how.

    [floor]
    broker = "mqtts://floor.casino.lan:8883"   # mqtts:// (TLS, port 8883) or mqtt:// (plain, 1883)
    site = "main-floor"                        # the topic level between tablectl/ and the table id
    pit = "pit-3"                              # optional: the pit the table stands in (the live view's filter)
    username = "gs-01"                         # optional; the password is read from a file
    password_file = "/etc/tablectl/floor-password"
    ca_file = "/etc/tablectl/floor-ca.pem"     # optional with mqtts://: the system CAs otherwise
    cert_file = "/etc/tablectl/gs-01.pem"      # optional client certificate (with key_file)
    key_file = "/etc/tablectl/gs-01.key"
    client_id = "tablectl-main-floor-GS-01"    # optional; this default
    keepalive = 30                             # seconds; the broker sends the last will after 1.5x
    inflight = 100                             # messages sent but not yet acknowledged, at most

Secrets never live in this file or in the broker URL: the password is read from `password_file`
(readable only by the service) when the publisher starts, and no log line carries it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from vision.documents import Document, Style, check, number, problem, rule

KEYS = frozenset(
    {
        "broker",
        "site",
        "pit",
        "username",
        "password_file",
        "ca_file",
        "cert_file",
        "key_file",
        "client_id",
        "keepalive",
        "inflight",
    }
)
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
#: A topic level: no MQTT wildcard, no separator, nothing a shell or a screen would mangle.
_LEVEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class FloorConfigError(ValueError):
    """A floor setting the table cannot use; the text names the file and the key."""


@dataclass(frozen=True)
class Broker:
    """Where the broker listens. `tls` is true for mqtts://."""

    host: str
    port: int
    tls: bool

    def __str__(self) -> str:  # the form logs show: never any credential
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"


@dataclass(frozen=True)
class FloorConfig:
    broker: Broker
    site: str
    username: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    client_id: str | None = None  # None: tablectl-<site>-<table>
    keepalive: int = 30
    inflight: int = 100
    pit: str | None = None  # the live view groups and filters tables by it (last: fields are also given in order)

    def password(self) -> str | None:
        """The broker password, read now from `password_file`."""
        return None if self.password_file is None else read_password(self.password_file, "floor.password_file")


def read_password(path: str, where: str) -> str:
    """The first line of the file at `path`, without its line end. Errors name the file, never the
    content."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise FloorConfigError(f"{where}={path}: cannot read the password: {why}") from None
    lines = text.splitlines()
    if not lines or not lines[0]:
        raise FloorConfigError(f"{where}={path}: the file is empty")
    return lines[0]


def parse_broker(url: str, where: str = "broker") -> Broker:
    """`mqtt://host[:port]` or `mqtts://host[:port]`; credentials in the URL are refused (without
    repeating them: the error message may be logged)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise FloorConfigError(f"{where}: not a broker URL; write mqtts://host:8883 or mqtt://host:1883") from None
    if parts.scheme not in DEFAULT_PORTS:
        raise FloorConfigError(f"{where}: the scheme must be mqtts:// (TLS) or mqtt://, not {parts.scheme!r}")
    if parts.username is not None or parts.password is not None:
        raise FloorConfigError(
            f"{where}: the URL carries a user or password; put the user in floor.username "
            "and the password in the file floor.password_file"
        )
    if not parts.hostname:
        raise FloorConfigError(f"{where}: the URL names no host; write {parts.scheme}://host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise FloorConfigError(f"{where}: a broker URL is scheme://host:port, with no path or query")
    return Broker(parts.hostname, port or DEFAULT_PORTS[parts.scheme], parts.scheme == "mqtts")


def check_level(value: str, where: str) -> str:
    """`value` as one MQTT topic level (a site or a table id)."""
    if not _LEVEL.match(value):
        raise FloorConfigError(
            f"{where}: {value!r} cannot be a topic level; use 1 to 64 letters, digits, '-', '_' or '.'"
        )
    return value


def _secret_text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        # Never echo the value: a misplaced secret must not reach a log through this message.
        raise problem(": must be non-empty text")
    return value


_FloorText = Annotated[str, rule(_secret_text)]


class _FloorDoc(Document):
    """The [floor] section as written."""

    broker: _FloorText
    site: _FloorText
    pit: _FloorText | None = None
    username: _FloorText | None = None
    password_file: _FloorText | None = None
    ca_file: _FloorText | None = None
    cert_file: _FloorText | None = None
    key_file: _FloorText | None = None
    client_id: _FloorText | None = None
    keepalive: Annotated[int, number(5, 3600, whole=True)] = 30
    inflight: Annotated[int, number(1, 10000, whole=True)] = 100


class _FloorStyle(Style):
    def where(self, loc: Any) -> str:
        return ".".join(["floor", *map(str, loc)])

    def unknown(self, loc: Any, allowed: Any) -> str:
        return f"{self.where(loc)}: unknown key; the keys are {sorted(KEYS)}"

    def missing(self, loc: Any) -> str:
        return f"{self.where(loc)}: is required when there is a [floor] section"


def parse_floor(section: Mapping[str, Any] | None, source: str) -> FloorConfig | None:
    """The `[floor]` section of `source` (None when there is none: the table reports to no floor)."""
    if section is None:
        return None
    doc = check(_FloorDoc, section, source, FloorConfigError, _FloorStyle())

    def fail(key: str, why: str) -> FloorConfigError:
        return FloorConfigError(f"{source}: floor.{key}: {why}")

    broker = parse_broker(doc.broker, f"{source}: floor.broker")
    check_level(doc.site, f"{source}: floor.site")
    if doc.pit is not None:
        check_level(doc.pit, f"{source}: floor.pit")
    files = {key: getattr(doc, key) for key in ("password_file", "ca_file", "cert_file", "key_file")}
    if (files["cert_file"] is None) != (files["key_file"] is None):
        raise fail("cert_file", "a client certificate needs both cert_file and key_file")
    if not broker.tls and any(files[k] for k in ("ca_file", "cert_file")):
        raise fail("broker", "ca_file and cert_file are for TLS; use an mqtts:// broker URL")
    if files["password_file"] is not None and doc.username is None:
        raise fail("password_file", "a password needs floor.username")
    if files["password_file"] is not None and not broker.tls:
        # A password over plain TCP can be read by anyone on the floor network.
        raise fail("password_file", "a password is only sent over TLS; use an mqtts:// broker URL")
    return FloorConfig(
        broker=broker,
        site=doc.site,
        pit=doc.pit,
        username=doc.username,
        client_id=doc.client_id,
        keepalive=doc.keepalive,
        inflight=doc.inflight,
        **files,
    )
