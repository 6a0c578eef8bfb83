"""The `[floor]` section of table.toml as written: the pydantic model that checks each key
(vision/documents.py's way), loaded by controller/adapters/floor/config.py's `check_floor` only
when a [floor] section is read, so that what reads a table.toml the daemon checked already (recall,
journal verify: controller/app/config.py) never loads pydantic."""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any

from vision.documents import Document, Style, number, problem, rule


def _secret_text(value: Any) -> Any:
    if not isinstance(value, str) or not value.strip():
        # Never echo the value: a misplaced secret must not reach a log through this message.
        raise problem(": must be non-empty text")
    return value


_FloorText = Annotated[str, rule(_secret_text)]


class FloorDoc(Document):
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


class FloorStyle(Style):
    def __init__(self, keys: Collection[str]) -> None:
        self.keys = keys

    def where(self, loc: Any) -> str:
        return ".".join(["floor", *map(str, loc)])

    def unknown(self, loc: Any, allowed: Any) -> str:
        return f"{self.where(loc)}: unknown key; the keys are {sorted(self.keys)}"

    def missing(self, loc: Any) -> str:
        return f"{self.where(loc)}: is required when there is a [floor] section"
