"""A camera layout's name and the seats it prints chip zones for, read without vision.

The table's process checks at start that the layout has every seat's zones (a ConfigError naming
camera.layout), and names the layout on the Devices panel; the camera's own process reads and
checks the whole layout (controller/camera/process.py). Reading it with `vision.layout` would load
numpy, pydantic and the vision package into the table's process for these two facts, about 20 MB
it never uses again. So a layout whose name and zones are plainly right is read here with the
standard library; any other (not TOML, a zone name vision would refuse, no name) gives None, and
the caller reads it with `vision.layout.Layout.load`, whose error is the one said. Held to
`Layout.load` on every shipped layout by tests/controller/test_camera_plain.py.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from hardware import shipped

#: vision.layout's ZONE_NAME: seat<1-9>.<spot> or seat<1-9>.<spot>.payout.
ZONE_NAME = re.compile(r"^seat([1-9])\.([a-z][a-z_]*)(\.payout)?$")


@dataclass(frozen=True)
class PlainLayout:
    name: str
    source: str  # the file read
    zoned: frozenset[int]  # the seats it prints a chip zone (a wager or its payout) for

    def seats_without_zones(self, seats: int) -> list[int]:
        """As `vision.layout.Layout.seats_without_zones`."""
        return [seat for seat in range(1, seats + 1) if seat not in self.zoned]


def path_of(layout: str | Path) -> Path:
    """As `vision.layout.resolve_layout_path`: a bare name is a shipped layout."""
    text = str(layout)
    if "/" not in text and not text.endswith(".toml"):
        return shipped("layouts") / f"{text}.toml"
    return Path(layout)


def read_plainly(layout: str | Path) -> PlainLayout | None:
    """The layout's name and zoned seats, or None when it is not plainly right (read it with
    `vision.layout.Layout.load` then)."""
    chosen = path_of(layout)
    try:
        doc = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    head, zones = doc.get("layout"), doc.get("zones")
    if not isinstance(head, dict) or not isinstance(zones, dict) or not zones:
        return None
    name = head.get("name")
    if not isinstance(name, str) or not name:
        return None
    zoned: set[int] = set()
    for zone in zones:
        match = ZONE_NAME.match(zone)
        if match is None:
            return None
        if not zone.endswith(".puck"):
            zoned.add(int(match.group(1)))
    return PlainLayout(name, str(chosen), frozenset(zoned))
