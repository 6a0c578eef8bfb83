"""The dealers the table knows: the list the supervisor keeps and who is signed in, as the
journal last said them (`dealer-list`, `dealer-in`, `dealer-out` entries, written by the table on
its loop: controller/table/table.py). Each round opened while a dealer is signed in names them
in its `round-open` entry; what the analytics make of it is controller/analytics/dealers.py."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.journal.log import Journal

#: A dealer's id: their own short code (letters, digits, '-' or '_'; 1 to 16).
DEALER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,15}")
MAX_DEALERS = 500
NAME_MAX = 80
KINDS = ("dealer-list", "dealer-in", "dealer-out")


def parse_list(dealers: Any) -> list[dict[str, str]]:
    """The supervisor's list as given (a list of {"id", "name"}), checked: ValueError naming the
    entry and what is wrong with it."""
    if not isinstance(dealers, list):
        raise ValueError("dealers: a list of {id, name}")
    if len(dealers) > MAX_DEALERS:
        raise ValueError(f"dealers: at most {MAX_DEALERS} dealers on a table's list, not {len(dealers)}")
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for i, d in enumerate(dealers):
        where = f"dealers[{i}]"
        if not isinstance(d, Mapping) or set(d) - {"id", "name"}:
            raise ValueError(f"{where}: an id and a name, nothing else")
        code, name = d.get("id"), d.get("name", "")
        if not isinstance(code, str) or not DEALER_ID.fullmatch(code.strip()):
            raise ValueError(
                f"{where}.id {code!r}: a dealer's own short code, 1 to 16 letters, digits, '-' or '_' (such as A17)"
            )
        code = code.strip()
        if not isinstance(name, str) or len(name.strip()) > NAME_MAX or not name.isprintable():
            raise ValueError(f"{where}.name: the dealer's name, printable, at most {NAME_MAX} characters")
        if code.upper() in seen:
            raise ValueError(f"{where}.id {code!r}: already on the list (ids are told apart without case)")
        seen.add(code.upper())
        out.append({"id": code, "name": name.strip()})
    return out


@dataclass
class Roster:
    """The dealer list as the journal last said it, and who is signed in (since when)."""

    dealers: dict[str, str] = field(default_factory=dict)  # id -> name
    listed_at: str | None = None
    on: str | None = None
    since: str | None = None

    @classmethod
    def read(cls, journal: Journal) -> Roster:
        roster = cls()
        for entry in journal.last_of_kinds(("dealer-list",), 1):
            roster.follow(entry.kind, entry.body, entry.at)
        for entry in journal.last_of_kinds(("dealer-in", "dealer-out"), 1):
            roster.follow(entry.kind, entry.body, entry.at)
        return roster

    def follow(self, kind: str, body: Mapping[str, Any], at: str) -> None:
        if kind == "dealer-list":
            self.dealers = {d["id"]: d.get("name", "") for d in body.get("dealers", [])}
            self.listed_at = at
        elif kind == "dealer-in":
            self.on, self.since = str(body["dealer"]), at
        elif kind == "dealer-out":
            self.on, self.since = None, None

    def find(self, code: str) -> str | None:
        """The listed id `code` names (told apart without case), or None."""
        wanted = code.strip().upper()
        return next((d for d in self.dealers if d.upper() == wanted), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "dealers": [{"id": k, "name": v} for k, v in self.dealers.items()],
            "listed_at": self.listed_at,
            "on": None
            if self.on is None
            else {"id": self.on, "name": self.dealers.get(self.on, ""), "since": self.since},
        }
