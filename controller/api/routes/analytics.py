"""Table analytics: pace (`GET /api/pace`) and seat ratings (`GET /api/ratings`), read from the
journal (controller/analytics/). The table's loop is asked only for where its journal is and
which rounds it ended since its last snapshot (one small command, `journal_facts`); the entries
are read here, in the API's process, on a read-only connection of their own, so a long window
never holds the table nor takes the card path's processor time."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from fastapi import APIRouter, Response

from controller.analytics.facts import Facts
from controller.api.deps import Caller, Rt
from controller.api.errors import ApiError
from controller.api.routes import table_call

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


async def _window(rt: Any, window: str) -> tuple[Facts, float, float]:
    try:
        length = parse_window(window)
    except ValueError as exc:
        raise ApiError("invalid", str(exc), field="window") from None
    facts: Facts = await table_call(rt, "journal_facts")
    if str(facts.path) == ":memory:":
        raise ApiError("unavailable", "this table's journal is in memory: there is nothing to read it from")
    end = time.time()
    return facts, end - length, end


def _pace(facts: Facts, start: float, end: float) -> dict[str, Any]:
    from controller.analytics.source import read_window
    from controller.journal.log import Journal

    journal = Journal(facts.path, readonly=True)
    try:
        return read_window(journal, start, end, recent_ends=facts.ends).pace(start, end)
    finally:
        journal.close()


def _ratings(facts: Facts, start: float, end: float, close_after: int) -> list[dict[str, Any]]:
    from controller.analytics.source import ratings_window
    from controller.journal.log import Journal

    journal = Journal(facts.path, readonly=True)
    try:
        _, ratings = ratings_window(
            journal,
            start,
            end,
            cache_dir=facts.path.parent,
            recent_ends=facts.ends,
            recent_records=facts.records,
            close_after=close_after,
        )
        return ratings.sessions()
    finally:
        journal.close()


@router.get("/pace")
async def pace(rt: Rt, _: Caller, window: str = "8h") -> dict[str, Any]:
    """Rounds, rounds an hour (the dealer's time only: shuffles, faults and breaks apart), the
    phases' split and each round's times over the last `window` (such as 8h)."""
    facts, start, end = await _window(rt, window)
    out = await asyncio.to_thread(_pace, facts, start, end)
    return {"game": rt.gate.game_name, "table": rt.gate.table_id, "window": window, **out}


@router.get("/ratings", response_model=None)
async def ratings(
    rt: Rt, _: Caller, window: str = "24h", close_after: int = 3, format: str = "json"
) -> dict[str, Any] | Response:
    """Seat rating sessions of the rounds settled in the last `window`: time, rounds, average
    wager per bet type, side-bet mix, result and exact theoretical win; `format=csv` for a
    player tracking system (one row a session)."""
    if not 1 <= close_after <= 100:
        raise ApiError(
            "invalid", "close_after: the rounds without a wager that close a session, 1 to 100", field="close_after"
        )
    if format not in ("json", "csv"):
        raise ApiError("invalid", f"format {format!r}: json or csv", field="format")
    facts, start, end = await _window(rt, window)
    try:
        sessions = await asyncio.to_thread(_ratings, facts, start, end, close_after)
    except ValueError as exc:  # a round the journal holds that cannot be rated: said, not guessed
        raise ApiError("conflict", str(exc)) from None
    if format == "csv":
        from controller.analytics.export import sessions_csv

        return Response(sessions_csv(sessions, table=rt.gate.table_id), media_type="text/csv")
    return {"game": rt.gate.game_name, "table": rt.gate.table_id, "window": window, "sessions": sessions}
