"""Rounds as the table keeps them for recall: each one's number, status, cards, settlement and
round file, and the book of them that recall reads by number.

The table's state holds in memory only the rounds not yet in the journal's round index (those
finished since the last snapshot) and the current one (`RecentRounds`); the book (`RoundBook`)
reads every older round from the index when asked for, so memory does not grow with history and
recall never replays the journal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from controller.engine.base import JSON

if TYPE_CHECKING:
    from controller.engine.base import Game
    from controller.journal.log import Journal


@dataclass
class RoundRecord:
    number: int
    opened_at: str
    status: Literal["open", "settled", "void"] = "open"
    settlement: dict[str, JSON] | None = None
    round_file: dict[str, JSON] | None = None
    cards: list[str] = field(default_factory=list)
    paid: bool = False  # the dealer confirmed the payouts (the confirm button)
    # A supervisor let the next round open with this round's payouts not confirmed: who, why, when.
    override: dict[str, JSON] | None = None

    @property
    def pay_due(self) -> bool:
        """Settled, and its payouts are neither confirmed nor waived by a supervisor's override."""
        return self.status == "settled" and not self.paid and self.override is None

    def to_json(self, *, with_file: bool = False) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "round": self.number,
            "status": self.status,
            "opened_at": self.opened_at,
            "cards": list(self.cards),
            "settlement": self.settlement,
            "paid": self.paid,
        }
        if self.override is not None:
            out["override"] = dict(self.override)
        if with_file:
            out["round_file"] = self.round_file
        return out

    def record_json(self) -> dict[str, JSON]:
        """Everything the table knows of the round (for the round index and snapshots; `override`
        only when there was one, so a round without one is kept as before it existed)."""
        return self.to_json(with_file=True)

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> RoundRecord:
        return cls(
            int(data["round"]),
            str(data["opened_at"]),
            data["status"],
            data["settlement"],
            data["round_file"],
            list(data["cards"]),
            bool(data["paid"]),
            data.get("override"),
        )


#: How a round stands with its payouts (recall, the supervisor's screen, `tablectl recall`).
PAYMENT_WORDS = {
    "paid": "paid",
    "due": "due (not confirmed yet)",
    "nothing-owed": "nothing owed",
    "unpaid": "NOT PAID",
}


def payment(record: RoundRecord, owed: bool, *, current: bool) -> str | None:
    """How `record` stands with its payouts ("paid" once the dealer confirmed them, "due" while
    the table waits for that confirm, "nothing-owed" for a round that owed nobody anything and
    was not confirmed, "unpaid" for one the next round was opened over without the confirm),
    or None for a round that is open or void. `owed`: whether its settlement pays any seat."""
    if record.status != "settled":
        return None
    if record.paid:
        return "paid"
    if not owed:
        return "nothing-owed"
    if current and record.override is None:
        return "due"
    return "unpaid"


def payment_of(record: RoundRecord, game: Game[Any], *, current: bool) -> str | None:
    """`payment` for `record`, with what its settlement owes asked of `game`."""
    if record.status != "settled" or record.settlement is None:
        return payment(record, False, current=current)
    owed = any(p["pay"] for p in game.payouts(record.settlement))
    return payment(record, owed, current=current)


def table_payment(table: Any, record: RoundRecord) -> str | None:
    """`payment` for a round of `table` (a `Table`: its game, and which round is the current)."""
    return payment_of(record, table.game, current=record.number == table.round_no)


class RecentRounds:
    """The rounds the table holds in memory: the current one and those finished since the last
    snapshot (with the seq of the entry that ended each). Part of the table's state: no I/O."""

    def __init__(self, recent: dict[int, RoundRecord] | None = None, ended: dict[int, int] | None = None) -> None:
        self._recent: dict[int, RoundRecord] = recent or {}
        self._ended: dict[int, int] = ended or {}  # round -> the seq of the entry that ended it

    @classmethod
    def from_snapshot(cls, current: RoundRecord | None, ended_at: int | None) -> RecentRounds:
        """Start from a snapshot: only its current round is held in memory."""
        recent = {current.number: current} if current is not None else {}
        ended = {current.number: ended_at} if current is not None and ended_at is not None else {}
        return cls(recent, ended)

    def get(self, number: int | None) -> RoundRecord | None:
        return self._recent.get(number) if number is not None else None

    def __getitem__(self, number: int) -> RoundRecord:
        return self._recent[number]

    def numbers(self) -> set[int]:
        return set(self._recent)

    def add(self, record: RoundRecord) -> None:
        self._recent[record.number] = record

    def ended(self, number: int, seq: int) -> None:
        self._ended[number] = seq

    def ended_at(self, number: int | None) -> int | None:
        """The seq of the entry that ended round `number` (None while it is open)."""
        return self._ended.get(number) if number is not None else None

    def to_index(self) -> list[tuple[int, int, dict[str, Any]]]:
        """Rounds for the round index: every finished one held in memory (and the current one
        again when it has ended: its `paid` may have changed since)."""
        out = []
        for number, record in sorted(self._recent.items()):
            if record.status != "open" and number in self._ended:
                out.append((number, self._ended[number], record.record_json()))
        return out

    def forget_finished(self, current: int | None) -> None:
        """The rounds `to_index` gave are kept elsewhere now (the round index, or nowhere for a
        replica): keep only the current one in memory."""
        self._recent = {n: r for n, r in self._recent.items() if n == current}
        self._ended = {n: s for n, s in self._ended.items() if n == current}


class RoundBook(Mapping[int, RoundRecord]):
    """Round number -> RoundRecord: the recent ones from the table's state, the rest from the
    journal's round index (a view for recall: it holds nothing of its own)."""

    def __init__(self, journal: Journal, recent: RecentRounds) -> None:
        self._journal = journal
        self._recent = recent

    def __getitem__(self, number: int) -> RoundRecord:
        record = self._recent.get(number)
        if record is not None:
            return record
        data = self._journal.round_record(number)
        if data is None:
            raise KeyError(number)
        return RoundRecord.from_record(data)

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int):
            return False
        return self._recent.get(number) is not None or self._journal.round_record(number) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(sorted({*self._journal.indexed_rounds(), *self._recent.numbers()}))

    def __len__(self) -> int:
        return len({*self._journal.indexed_rounds(), *self._recent.numbers()})

    def last(self, count: int) -> list[RoundRecord]:
        """The last `count` rounds, oldest first, read by number (never by replaying)."""
        return [self[n] for n in self.last_numbers(count)]

    def last_numbers(self, count: int) -> list[int]:
        """The numbers of the last `count` rounds, oldest first."""
        if count <= 0:
            return []
        return sorted({*self._journal.indexed_rounds(count), *self._recent.numbers()})[-count:]
