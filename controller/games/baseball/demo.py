"""A simulated Baseball poker dealer and players."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any


def opening(rng: random.Random, count: int = 7) -> dict[str, Any]:
    """Two to six players at random seats, each with a stack of chips."""
    seats = sorted(rng.sample(range(1, count + 1), rng.randint(2, min(6, count))))
    return {"players": [{"seat": seat, "stack": rng.choice([100, 200, 500])} for seat in seats]}


def choice(who: Mapping[str, Any], allowed: tuple[str, ...], rng: random.Random) -> dict[str, Any]:
    """A loose, passive player: pays for its wild cards, checks or calls, raises now and then,
    folds rarely."""
    weights = {"pay": 3, "decline": 1, "check": 6, "call": 6, "bring-in": 4, "complete": 1, "bet": 1, "raise": 1}
    weights["fold"] = 1
    options = list(allowed)
    picked = rng.choices(options, weights=[weights.get(a, 1) for a in options])[0]
    return {"seat": who["seat"], "action": picked}
