"""Game pace from the journal: each round's times and rounds an hour over a window.

    reader = PaceReader(ended=lambda n: index_last_seq.get(n))
    for entry in journal.entries(after=start_seq):
        reader.feed(entry)
    figures = reader.pace(start, end)      # rounds, rounds an hour, phases, shuffles, faults

A round's times are read off its entries: **opened** (`round-open`: the wagers are in), **first
card** and **last card** (`card`), **settled** (the entry that ended it: the round index's
`last_seq`, which the caller passes as `ended`), **paid** (the dealer's confirm after the
settlement) or **voided**. Nothing else is guessed.

What counts as the dealer's time, so that neither a shuffle nor a fault looks like a slow dealer:

- **stopped**: from a `fault` to the supervisor's `fault-cleared` (or the void that ended it);
  overlapping faults count once. Stopped time is taken out of every phase it falls in.
- **shuffle**: the gap between a round's end and the next round's opening in which a new shoe
  was loaded (`shoe-reshuffled`).
- **idle**: such a gap (with no shuffle) longer than `idle_s` (10 minutes by default): a break,
  a closed table.
- **void**: the time of a round a supervisor voided, counted apart with the round.
- the rest is the dealer's, split in phases: **betting** (the gap before the round opened, from
  the previous round's end), **dealing** (opened to settled, less decisions), **decisions** (each
  wait from the round's previous entry to a player's `decision`) and **paying** (settled to the
  confirm that paid it).

Rounds an hour = rounds settled in the window x 3600 / the dealer's seconds in the window.
Pure: it reads entries and does no I/O of its own.
"""

from __future__ import annotations

import bisect
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from controller.journal.log import Entry

#: A gap between rounds longer than this (and without a shuffle) is idle, not the dealer's.
IDLE_S = 600.0
PHASES = ("betting", "dealing", "decisions", "paying")
#: The entry kinds whose body the pace reads (every other kind: only its time, round and kind).
BODY_KINDS = frozenset({"round-open", "fault", "fault-cleared", "button"})


def seconds(at: str) -> float:
    """A journal time (ISO 8601, UTC, "Z") as seconds since the epoch."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def iso(t: float) -> str:
    """Seconds since the epoch as a journal time (milliseconds, "Z")."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class RoundPace:
    """One round's times (seconds since the epoch; None: not reached) and who opened it."""

    round: int
    opened: float
    dealer: str | None = None
    first_card: float | None = None
    last_card: float | None = None
    settled: float | None = None
    paid: float | None = None
    voided: float | None = None
    decisions: list[tuple[float, float]] = field(default_factory=list)  # each wait for a choice
    last_step: float = 0.0  # the round's previous entry (where a decision's wait starts)

    @property
    def end(self) -> float | None:
        """When the table was done with it: paid, voided, or settled (never confirmed)."""
        return self.voided if self.voided is not None else self.paid if self.paid is not None else self.settled

    def to_json(self) -> dict[str, Any]:
        def at(t: float | None) -> str | None:
            return None if t is None else iso(t)

        return {
            "round": self.round,
            "dealer": self.dealer,
            "opened": at(self.opened),
            "first_card": at(self.first_card),
            "last_card": at(self.last_card),
            "settled": at(self.settled),
            "paid": at(self.paid),
            "voided": at(self.voided),
            "decisions_s": round(sum(b - a for a, b in self.decisions), 3),
        }


@dataclass
class FaultSpan:
    seq: int
    code: str
    start: float
    end: float | None = None
    round: int | None = None


class Spans:
    """Merged, sorted intervals: how much of [a, b] they cover."""

    def __init__(self, spans: Iterable[tuple[float, float]]) -> None:
        merged: list[list[float]] = []
        for a, b in sorted(s for s in spans if s[1] > s[0]):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.starts = [m[0] for m in merged]
        self.spans = [(m[0], m[1]) for m in merged]

    def covered(self, a: float, b: float) -> float:
        if b <= a or not self.spans:
            return 0.0
        i = max(bisect.bisect_right(self.starts, a) - 1, 0)
        total = 0.0
        while i < len(self.spans) and self.spans[i][0] < b:
            lo, hi = max(a, self.spans[i][0]), min(b, self.spans[i][1])
            if hi > lo:
                total += hi - lo
            i += 1
        return total

    def free(self, a: float, b: float) -> float:
        """The seconds of [a, b] not covered."""
        return max(b - a, 0.0) - self.covered(a, b)


class PaceReader:
    """Reads entries in journal order; `pace(start, end)` then gives the figures of a window.
    `ended(n)`: the seq of the entry that settled (or voided) round n, from the round index."""

    def __init__(self, ended: Callable[[int], int | None], idle_s: float = IDLE_S) -> None:
        self.ended = ended
        self.idle_s = idle_s
        self.rounds: dict[int, RoundPace] = {}
        self.faults: list[FaultSpan] = []
        self._open_faults: dict[int, FaultSpan] = {}
        self.shuffles: list[float] = []
        self.last_at: float | None = None

    def feed(self, entry: Entry) -> None:
        self._apply(entry.seq, entry.at, entry.round, entry.kind, entry.body)

    def feed_row(self, seq: int, at: str, round_no: int | None, kind: str, text: str) -> None:
        """An entry as the journal stores it (`Journal.rows`): its body is read only for the
        kinds whose body is needed (a card's time says all a card says here)."""
        if kind == "round-open" or kind == "button":
            body = _head(kind, text)
            self._apply(seq, at, round_no, kind, body if body is not None else json.loads(text))
        else:
            self._apply(seq, at, round_no, kind, json.loads(text) if kind in BODY_KINDS else {})

    def _apply(self, seq: int, at: str, round_no: int | None, kind: str, body: Mapping[str, Any]) -> None:
        t = seconds(at)
        self.last_at = t
        r = self.rounds.get(round_no) if round_no is not None else None
        if kind == "round-open" and round_no is not None:
            by = body.get("by")
            self.rounds[round_no] = RoundPace(round_no, t, dealer=by if isinstance(by, str) else None, last_step=t)
            return
        if kind == "fault":
            span = FaultSpan(seq, str(body.get("code", "")), t, round=round_no)
            self.faults.append(span)
            self._open_faults[seq] = span
            return
        if kind == "fault-cleared":
            cleared = self._open_faults.pop(int(body.get("fault", 0)), None)
            if cleared is not None:
                cleared.end = t
            if r is not None:
                r.last_step = t
            return
        if kind == "shoe-reshuffled":
            self.shuffles.append(t)
            return
        if r is None:
            return
        if kind == "card":
            if r.first_card is None:
                r.first_card = t
            r.last_card = t
            r.last_step = t
        elif kind == "decision":
            r.decisions.append((r.last_step, t))
            r.last_step = t
        elif kind == "void":
            r.voided = t
            for span in self._open_faults.values():  # a void clears every fault
                span.end = t
            self._open_faults.clear()
        elif kind == "button" and body.get("button") == "confirm" and r.settled is not None and r.paid is None:
            r.paid = t
        if kind in ("card", "decision") and self.ended(round_no or 0) == seq:
            r.settled = t

    # -- the figures of a window ----------------------------------------------------------------

    def stops(self, until: float) -> Spans:
        return Spans((f.start, f.end if f.end is not None else until) for f in self.faults)

    def pace(
        self, start: float, end: float, *, bucket_s: float | None = None, round_times: bool = True
    ) -> dict[str, Any]:
        """Rounds, rounds an hour and the phases of the window [start, end] (seconds); with
        `round_times`, each round's times too."""
        stops = self.stops(end)
        shuffles = sorted(self.shuffles)
        ordered = sorted(self.rounds.values(), key=lambda r: r.round)
        phase = dict.fromkeys(PHASES, 0.0)
        apart = {"shuffle": 0.0, "idle": 0.0, "void": 0.0}
        dealer_spans: list[tuple[float, float]] = []  # the dealer's own time, for the chart
        settled_at: list[float] = []
        dealers: dict[str, dict[str, Any]] = {}
        rounds_json = []
        voids = 0

        def clip(a: float, b: float) -> tuple[float, float]:
            return max(a, start), min(b, end)

        def add(name: str, a: float, b: float) -> float:
            a, b = clip(a, b)
            free = stops.free(a, b)
            if name in phase:
                phase[name] += free
                if b > a:
                    dealer_spans.append((a, b))
            else:
                apart[name] += free
            return free

        previous_end: float | None = None
        for r in ordered:
            mine = 0.0
            if previous_end is not None and previous_end < r.opened:
                gap_a, gap_b = previous_end, r.opened
                i = bisect.bisect_left(shuffles, gap_a)
                if i < len(shuffles) and shuffles[i] <= gap_b:
                    add("shuffle", gap_a, gap_b)
                elif gap_b - gap_a - stops.covered(gap_a, gap_b) > self.idle_s:
                    add("idle", gap_a, gap_b)
                else:
                    mine += add("betting", gap_a, gap_b)
            r_end = r.end if r.end is not None else end
            if r.voided is not None:
                add("void", r.opened, r.voided)
                if start <= r.voided <= end:
                    voids += 1
            else:
                dealt_to = r.settled if r.settled is not None else min(r_end, end)
                waits = sum(stops.free(*clip(a, b)) for a, b in r.decisions)
                mine += add("dealing", r.opened, dealt_to) - waits
                phase["dealing"] -= waits
                phase["decisions"] += waits
                mine += waits
                if r.settled is not None and r.paid is not None:
                    mine += add("paying", r.settled, r.paid)
                if r.settled is not None and start <= r.settled <= end:
                    settled_at.append(r.settled)
                    dealers.setdefault(r.dealer or "unknown", {"rounds": 0, "seconds": 0.0})["rounds"] += 1
            dealers.setdefault(r.dealer or "unknown", {"rounds": 0, "seconds": 0.0})["seconds"] += mine
            if round_times and r_end >= start and r.opened <= end:
                rounds_json.append(r.to_json())
            previous_end = r.end if r.end is not None else None
        dealer_s = sum(phase.values())
        faults = [f for f in self.faults if f.start <= end and (f.end is None or f.end >= start)]
        spans = Spans(dealer_spans)
        chart = []
        step = bucket_s or _bucket(end - start)
        t = start - start % step  # whole hours (days, quarters): the same bars whenever asked
        settled_at.sort()
        while t < end:
            a, b = max(t, start), min(t + step, end)
            played = spans.covered(a, b) - _covered_both(spans, stops, a, b)
            first = bisect.bisect_left(settled_at, a) if a == start else bisect.bisect_right(settled_at, a)
            n = bisect.bisect_right(settled_at, b) - first
            chart.append({"from": iso(t), "to": iso(t + step), "rounds": n, "rounds_per_hour": _per_hour(n, played)})
            t += step
        return {
            "from": iso(start),
            "to": iso(end),
            "rounds": len(settled_at),
            "voids": voids,
            "rounds_per_hour": _per_hour(len(settled_at), dealer_s),
            "dealer_s": round(dealer_s, 3),
            "phases": {k: round(v, 3) for k, v in phase.items()},
            "shuffles": {
                "count": sum(1 for s in shuffles if start <= s <= end),
                "seconds": round(apart["shuffle"], 3),
            },
            "faults": {
                "count": len(faults),
                "seconds": round(stops.covered(start, end), 3),
                "by_kind": dict(sorted(Counter(f.code for f in faults).items())),
            },
            "idle_s": round(apart["idle"], 3),
            "void_s": round(apart["void"], 3),
            "dealers": {
                name: {
                    "rounds": d["rounds"],
                    "seconds": round(d["seconds"], 3),
                    "rounds_per_hour": _per_hour(d["rounds"], d["seconds"]),
                }
                for name, d in sorted(dealers.items())
            },
            "chart": chart,
            "round_times": rounds_json,
        }


def _covered_both(a: Spans, b: Spans, lo: float, hi: float) -> float:
    """The seconds of [lo, hi] that both cover."""
    i = max(bisect.bisect_right(a.starts, lo) - 1, 0)
    total = 0.0
    while i < len(a.spans) and a.spans[i][0] < hi:
        x, y = a.spans[i]
        if y > lo:
            total += b.covered(max(x, lo), min(y, hi))
        i += 1
    return total


_DECODER = json.JSONDecoder()


def _head(kind: str, text: str) -> dict[str, Any] | None:
    """What the pace reads of a round-open (who opened it) or a button (which one), from the
    body as the journal writes it (keys sorted, no spaces: `by` and `button` come first), without
    decoding the whole body; None: not written that way, decode it all."""
    key = '{"by":' if kind == "round-open" else '{"button":'
    if not text.startswith(key):
        return {} if kind == "round-open" and '"by":' not in text else None
    try:
        value, _ = _DECODER.raw_decode(text, len(key))
    except ValueError:
        return None
    return {"by" if kind == "round-open" else "button": value}


def _bucket(length: float) -> float:
    """A point of the chart: a quarter of an hour under 3 hours, an hour up to 3 days, else a day."""
    return 900.0 if length < 3 * 3600 else 3600.0 if length <= 3 * 86400 else 86400.0


def _per_hour(rounds: int, secs: float) -> float | None:
    """Rounds an hour, to two decimals (None: no dealer time to divide by)."""
    return round(rounds * 3600 / secs, 2) if secs > 0 else None
