"""Table analytics: pace (`GET /api/pace`) and seat ratings (`GET /api/ratings`), read from the
journal (controller/analytics/). The table's loop is asked only for where its journal is and
which rounds it ended since its last snapshot (one small `table_call`); the entries are read
off the loop, on a read-only connection of their own, so a long window never holds the table."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter

from controller.api.deps import Caller, Rt
from controller.api.errors import ApiError
from controller.api.routes import table_call
from controller.table import Table

router = APIRouter(prefix="/api")

#: The longest window the API reads (a longer look back is `tablectl report`'s).
MAX_WINDOW_S = 7 * 86400
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_window(text: str) -> float:
    """'90m', '8h', '2d' -> seconds (ValueError naming what is allowed)."""
    found = re.fullmatch(r"\s*(\d{1,6})\s*([smhd])\s*", text)
    secs = int(found[1]) * _UNITS[found[2]] if found else 0
    if not found or not 0 < secs <= MAX_WINDOW_S:
        raise ValueError(f"window {text!r}: a number and a unit (s, m, h or d), such as 8h, from 1s to 7d")
    return float(secs)


def journal_facts(table: Table) -> tuple[Path, dict[int, int]]:
    """On the table's loop, cheap: the journal's file and the rounds ended since the last snapshot
    (round -> the seq that ended it: not in the round index yet)."""
    recent = table.now.rounds
    ends = {n: seq for n in recent.numbers() if (seq := recent.ended_at(n)) is not None}
    return table.journal.path, ends


async def _window(rt: Any, window: str) -> tuple[Path, dict[int, int], float, float]:
    try:
        length = parse_window(window)
    except ValueError as exc:
        raise ApiError("invalid", str(exc), field="window") from None
    path, ends = await table_call(rt, journal_facts)
    if str(path) == ":memory:":
        raise ApiError("unavailable", "this table's journal is in memory: there is nothing to read it from")
    end = time.time()
    return path, ends, end - length, end


def _pace(path: Path, ends: dict[int, int], start: float, end: float) -> dict[str, Any]:
    from controller.analytics.source import read_window
    from controller.journal import Journal

    journal = Journal(path, readonly=True)
    try:
        return read_window(journal, start, end, recent_ends=ends).pace(start, end)
    finally:
        journal.close()


@router.get("/pace")
async def pace(rt: Rt, _: Caller, window: str = "8h") -> dict[str, Any]:
    """Rounds, rounds an hour (the dealer's time only: shuffles, faults and breaks apart), the
    phases' split and each round's times over the last `window` (such as 8h)."""
    path, ends, start, end = await _window(rt, window)
    out = await asyncio.to_thread(_pace, path, ends, start, end)
    return {"game": rt.gate.game_name, "table": rt.gate.table_id, "window": window, **out}
