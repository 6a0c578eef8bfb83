"""A simulated Jokers 22 dealer and players."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any


def opening(rng: random.Random, count: int = 7) -> dict[str, Any]:
    """A banker's stake and one to four spots, some shared by two players."""
    spots = sorted(rng.sample(range(1, count + 1), rng.randint(1, min(4, count))))
    out = []
    for spot in spots:
        wagers = [{"player": f"p{spot}", "amount": rng.choice([10, 25, 50])}]
        if rng.random() < 0.3:
            wagers.append({"player": f"q{spot}", "amount": rng.choice([5, 10])})
        out.append({"spot": spot, "wagers": wagers})
    return {"banker": {"stake": rng.choice([200, 500, 1000])}, "spots": out}


def choice(who: Mapping[str, Any], allowed: tuple[str, ...]) -> dict[str, Any]:
    """A simple player: hit below 17, otherwise stand; match nothing, surrender nothing."""
    total = str(who.get("total", ""))
    digits = "".join(ch for ch in total if ch.isdigit())
    value = int(digits) if digits else 21
    for action in ("hit" if value < 17 else "stand", "stand", "decline", *allowed):
        if action in allowed:
            picked: dict[str, Any] = {"spot": who["spot"], "action": action}
            if action in ("match", "decline", "surrender"):
                picked["player"] = who.get("player")
            return picked
    return {"spot": who["spot"], "action": allowed[0]}
