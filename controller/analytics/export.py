"""Rating sessions as a player tracking system imports them: CSV, one row a session, a column a
figure (bet types spread into `handle_<bet>` and `average_<bet>` columns)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

COLUMNS = (
    "table",
    "game",
    "place",
    "player",
    "status",
    "opened",
    "last_round_end",
    "closed",
    "time_s",
    "rounds",
    "side_bet_mix_percent",
    "player_net",
    "actual_win",
    "theoretical_win",
    "theoretical_win_exact",
    "house_take",
    "dealers",
    "opened_by",
)


def sessions_csv(sessions: Sequence[dict[str, Any]], *, table: str | None) -> str:
    bets = sorted({bet for s in sessions for bet in s["handle"]})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*COLUMNS, *(f"handle_{b}" for b in bets), *(f"average_{b}" for b in bets)])
    for s in sessions:
        row = {**s, "table": table or "", "dealers": " ".join(s["dealers"])}
        writer.writerow(
            [
                *("" if row[c] is None else row[c] for c in COLUMNS),
                *(s["handle"].get(b, 0) for b in bets),
                *(s["average_wager"].get(b, 0) for b in bets),
            ]
        )
    return out.getvalue()
