"""What the reader reports: a frame's zones (`ZoneReading`, each stack a `StackReading`), its
pucks and the camera's check (`FrameReading`). `vision.reader` exports them too."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vision.calibration import CameraCheck


@dataclass(frozen=True)
class StackReading:
    """One stack: its chips bottom to top."""

    chips: tuple[int, ...]

    @property
    def value(self) -> int:
        return sum(self.chips)

    @property
    def count(self) -> int:
        return len(self.chips)

    def denominations(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for chip in self.chips:
            out[chip] = out.get(chip, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"chips": list(self.chips), "count": self.count, "value": self.value}


@dataclass(frozen=True)
class ZoneReading:
    """A zone's wager as seen: state "ok" (value in chip units, 0 when empty), "blocked" or
    "unsure" (value None, with the reason)."""

    state: str
    value: int | None = None
    stacks: tuple[StackReading, ...] = ()
    why: str = ""

    @classmethod
    def ok(cls, stacks: tuple[StackReading, ...]) -> ZoneReading:
        return cls("ok", sum(s.value for s in stacks), stacks)

    @classmethod
    def blocked(cls, why: str) -> ZoneReading:
        return cls("blocked", why=why)

    @classmethod
    def unsure(cls, why: str) -> ZoneReading:
        return cls("unsure", why=why)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state, "value": self.value, "stacks": [s.to_dict() for s in self.stacks]}
        if self.why:
            out["why"] = self.why
        return out


@dataclass(frozen=True)
class FrameReading:
    """Everything read from one frame."""

    zones: dict[str, ZoneReading]
    pucks: dict[str, str | None]  # puck name -> zone it stands in (None: on the felt, in no zone)
    camera: CameraCheck
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def bumped(self) -> bool:
        return self.camera.bumped

    @property
    def blocked(self) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z.state == "blocked")

    @property
    def unsure(self) -> list[str]:
        return sorted(name for name, z in self.zones.items() if z.state == "unsure")

    def to_dict(self) -> dict[str, Any]:
        return {
            "zones": {name: z.to_dict() for name, z in sorted(self.zones.items())},
            "pucks": dict(sorted(self.pucks.items())),
            "blocked": self.blocked,
            "unsure": self.unsure,
            "camera": {
                "bumped": self.camera.bumped,
                "verified": self.camera.verified,
                "moved_px": round(self.camera.moved_px, 2),
                "markers_seen": self.camera.markers_seen,
                "status": self.camera.why,
            },
        }
