"""Dealers: each dealer's and each down's figures (the list the supervisor keeps and who is
signed in are the table's: controller/table/roster.py).

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

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.analytics.pace import PaceReader

#: Faults that say a payout had to be corrected.
CORRECTIONS = frozenset({"payout-mismatch"})

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
