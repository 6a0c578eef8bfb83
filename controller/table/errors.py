"""What the table refuses: `TableError` (and `TableUnavailable` while the journal cannot be written)."""

from __future__ import annotations

from controller.engine.base import RuleError


class TableError(ValueError):
    """An input the table refuses now. `kind` says why, for the API's status code: "conflict"
    (not now: the wrong phase, blocked by a fault), "invalid" (the input itself is wrong),
    "not-found" (no such fault or round). `field` and `seat` name where, when the rules do."""

    def __init__(
        self, message: str, *, kind: str = "invalid", field: str = "", seat: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.seat = seat

    @classmethod
    def of_rule(cls, exc: RuleError, message: str | None = None) -> TableError:
        """The rules' refusal as the dealer reads it: the seat first, then the rule, then where in
        the body ("Seat 2: every seat bets first base (seats[0].wagers.first)"); `field` and
        `seat` are kept apart for the screens. `message` words it otherwise."""
        return cls(message or dealer_words(exc), kind="invalid", field=exc.field, seat=exc.seat)


def dealer_words(exc: RuleError) -> str:
    """A rule's refusal in a dealer's order: the seat (or spot) it is about, the rule, and in
    brackets where in the body; without a seat, the field then the rule, as the rules say it."""
    field = "" if exc.field == "round file" else exc.field
    if exc.seat is None:
        return f"{field}: {exc.rule}" if field else exc.rule
    said = f"{exc.place.capitalize()} {exc.seat}: {exc.rule}"
    return f"{said} ({field})" if field else said


class TableUnavailable(TableError):
    """The journal cannot be written (the disk is full or failing): nothing was taken. The
    table's `journal_fault` says so in plain words until a write succeeds again."""

    quiet = True  # said once by the table, not again by every caller that offers the input again

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unavailable")
