"""What the payout display says: pure functions from table facts to two lines of text.

The display faces the players, so the words are short and plain: who to pay and how much,
how a seat's round ended, a fault in plain words, and the idle screen.

    >>> payout_frame(3, 40)
    Frame(upper='PAY SEAT 3', lower='                  40')
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.display.text import WIDTH, wrap


@dataclass(frozen=True)
class Frame:
    """Two lines of text as meant (the device fits them to its code page and 20 columns)."""

    upper: str
    lower: str = ""


def _whole(name: str, value: object, *, minimum: int) -> int:
    # Money and seats are integers; a bool or a float here is a caller's bug, not a number.
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}")
    return value


def _amount(value: int) -> str:
    text = str(value)
    if len(text) > WIDTH:
        raise ValueError(f"amount {value} does not fit on a {WIDTH}-column line")
    return text


def payout_frame(seat: int, amount: int) -> Frame:
    """PAY SEAT 3 / the amount, right-aligned like a till so the digits line up."""
    _whole("seat", seat, minimum=1)
    _whole("amount", amount, minimum=0)
    return Frame(f"PAY SEAT {seat}", _amount(amount).rjust(WIDTH))


def result_frame(seat: int, net: int, note: str = "") -> Frame:
    """SEAT 3 WINS / LOSES / PUSH, then an optional note (GRAND SLAM) and the amount."""
    _whole("seat", seat, minimum=1)
    if isinstance(net, bool) or not isinstance(net, int):
        raise ValueError(f"net must be a whole number of chips, not {net!r}")
    if net == 0:
        return Frame(f"SEAT {seat} PUSH", note)
    verb = "WINS" if net > 0 else "LOSES"
    amount = _amount(abs(net))
    room = WIDTH - len(amount) - 1
    lower = f"{note[:room]:<{room}} {amount}" if note else amount.rjust(WIDTH)
    return Frame(f"SEAT {seat} {verb}", lower)


def fault_pages(text: str) -> list[Frame]:
    """The fault in plain words, word-wrapped, two lines a page (shown one page at a time)."""
    lines = wrap(text) or ["TABLE FAULT"]
    if len(lines) % 2:
        lines.append("")
    return [Frame(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]


def idle_frame(title: str, min_wager: int | None = None, max_wager: int | None = None) -> Frame:
    """The table's name, and its wager limits when given, centred."""
    lower = ""
    if min_wager is not None and max_wager is not None:
        low = _whole("min_wager", min_wager, minimum=1)
        high = _whole("max_wager", max_wager, minimum=low)
        lower = f"BETS {low} TO {high}"
    return Frame(title[:WIDTH].center(WIDTH).rstrip(), lower.center(WIDTH).rstrip())
