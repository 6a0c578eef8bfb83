"""A simulated Grand Slam dealer: random wagers on one to four seats, sometimes a blind hand."""

from __future__ import annotations

import random
from typing import Any


def opening(rng: random.Random, count: int = 7) -> dict[str, Any]:
    seats = sorted(rng.sample(range(1, count + 1), rng.randint(1, min(4, count))))
    out = []
    for seat in seats:
        first = rng.choice([5, 10, 25, 50])
        bases = rng.randint(1, 3)
        wagers = {"first": first}
        if bases >= 2:
            wagers["second"] = rng.choice([w for w in (5, 10, 25, 50) if w <= first])
        if bases == 3:
            wagers["third"] = rng.choice([w for w in (5, 10, 25, 50) if w <= wagers["second"]])
        entry: dict[str, Any] = {"seat": seat, "wagers": wagers}
        if bases == 3 and rng.random() < 0.3:
            entry["side_bets"] = {"three_outs": 5, "poker_bonus": 5}
        out.append(entry)
    blind = None
    if len(seats) == 1 and rng.random() < 0.5:
        blind = seats[0] + 1 if seats[0] < 7 else seats[0] - 1
    return {"seats": out, "blind_seat": blind}
