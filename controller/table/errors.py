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
        return cls(message or str(exc), kind="invalid", field=exc.field, seat=exc.seat)


class TableUnavailable(TableError):
    """The journal cannot be written (the disk is full or failing): nothing was taken. The
    table's `journal_fault` says so in plain words until a write succeeds again."""

    quiet = True  # said once by the table, not again by every caller that offers the input again

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unavailable")
