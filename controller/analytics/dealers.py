"""Dealers: the list the supervisor keeps, who is signed in, and each dealer's and each down's
figures.

The list and the sign-ins are journal entries (written by the table, on its loop):

- `dealer-list` {"dealers": [{"id": "A17", "name": "Ann Lee"}, ...], "by", "reason"}: the
  supervisor's whole list as it stands from then on (an edit journals the list again);
- `dealer-in` {"dealer": "A17", "by"}: a dealer of the list signs in on the dealer screen at the
  start of a down (between rounds); their down lasts until the next sign-in or `dealer-out`;
- `dealer-out` {"dealer": "A17", "by"}: the dealer signs out at the end of a down.

Each round opened while a dealer is signed in records who dealt it: its `round-open` entry
carries `"dealer": "A17"` (the round file, REPLAY.md's contract, is unchanged). So who dealt
what is read back from the journal alone, after any restart.

A dealer's figures (`per_dealer`) and a down's (`per_down`) are those of the rounds they
opened: rounds settled, the dealer's own seconds and rounds an hour (pace.py: shuffles, faults
and breaks apart), voids, dead cards, payout corrections (the camera's `payout-mismatch`: a
payout the dealer had to correct), the faults raised in their rounds (by kind) and the faults
cleared in them. A fault between rounds counts to the down it happened in.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.analytics.pace import PaceReader
    from controller.journal import Journal

#: A dealer's id: their own short code (letters, digits, '-' or '_'; 1 to 16).
DEALER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,15}")
MAX_DEALERS = 500
NAME_MAX = 80
KINDS = ("dealer-list", "dealer-in", "dealer-out")
#: Faults that say a payout had to be corrected.
CORRECTIONS = frozenset({"payout-mismatch"})


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


# -- figures ----------------------------------------------------------------------------------------


@dataclass
class Down:
    """A dealer's stint at the table: from their sign-in to the next sign-in or their sign-out."""

    dealer: str
    start: float
    end: float | None = None


def _blank() -> dict[str, Any]:
    return {
        "rounds": 0,
        "dealer_s": 0.0,
        "rounds_per_hour": None,
        "voids": 0,
        "dead_cards": 0,
        "payout_corrections": 0,
        "faults": Counter(),
        "faults_cleared": 0,
    }


def _done(d: dict[str, Any]) -> dict[str, Any]:
    from controller.analytics.pace import _per_hour

    d["dealer_s"] = round(d["dealer_s"], 3)
    d["rounds_per_hour"] = _per_hour(d["rounds"], d["dealer_s"])
    d["faults"] = dict(sorted(d["faults"].items()))
    return d


def figures(reader: PaceReader, start: float, end: float) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Each dealer's figures and each down's over [start, end], from a reader whose `pace(start,
    end)` has been worked out (it keeps each round's dealer seconds)."""
    from controller.analytics.pace import iso

    seconds = reader.round_seconds
    dealers: dict[str, dict[str, Any]] = {}
    downs = [d for d in reader.downs if d.start <= end and (d.end is None or d.end >= start)]
    per_down = [_blank() for _ in downs]
    starts = [d.start for d in downs]

    def down_of(t: float) -> int | None:
        import bisect

        i = bisect.bisect_right(starts, t) - 1
        until = downs[i].end if i >= 0 else None
        if i >= 0 and (until is None or t < until):
            return i
        return None

    def both(name: str, t: float) -> Iterable[dict[str, Any]]:
        yield dealers.setdefault(name, _blank())
        i = down_of(t)
        if i is not None:
            yield per_down[i]

    for r in reader.rounds.values():
        name = r.dealer or "unknown"
        in_window = (r.settled is not None and start <= r.settled <= end) or (
            r.voided is not None and start <= r.voided <= end
        )
        if not in_window and not seconds.get(r.round):
            continue
        for into in both(name, r.opened):
            into["dealer_s"] += seconds.get(r.round, 0.0)
            if in_window:
                into["dead_cards"] += r.dead_cards
            if r.voided is not None and start <= r.voided <= end:
                into["voids"] += 1
            elif r.settled is not None and start <= r.settled <= end:
                into["rounds"] += 1
    for f in reader.faults:
        if not start <= f.start <= end:
            continue
        during = reader.rounds.get(f.round) if f.round is not None else None
        name = (during.dealer or "unknown") if during is not None else "between rounds"
        for into in both(name, f.start):
            into["faults"][f.code] += 1
            if f.code in CORRECTIONS:
                into["payout_corrections"] += 1
    for t, round_no in reader.clears:
        if not start <= t <= end:
            continue
        during = reader.rounds.get(round_no) if round_no is not None else None
        name = (during.dealer or "unknown") if during is not None else "between rounds"
        for into in both(name, t):
            into["faults_cleared"] += 1
    names = {d.dealer: reader.dealer_names.get(d.dealer, "") for d in downs}
    out_downs = [
        {"dealer": d.dealer, "name": names.get(d.dealer, ""), "from": iso(d.start),
         "to": None if d.end is None else iso(d.end), **_done(fig)}
        for d, fig in zip(downs, per_down, strict=True)
    ]  # fmt: skip
    return {k: _done(v) for k, v in sorted(dealers.items())}, out_downs
