"""Monte Carlo through the engine: seeded, reproducible, on every core, with confidence intervals.

Rounds are simulated in chunks; chunk k always uses the seed (seed, k), so a run gives the same
figures whatever the number of worker processes. What one chunk deals is the game's: its
analysis (`GameAnalysis.chunk`, controller/games/<game>/analysis.py) deals each round from a
freshly shuffled shoe through the game's own rules, exactly as the table would deal it (most
through `apply` itself, by `play_round`); this driver only seeds, spreads and sums.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from controller.analysis.base import GameAnalysis, Progress
from controller.engine.base import CardDealt, Event, ShoeReshuffled
from controller.engine.cards import Card

CHUNK = 2000


@dataclass
class Tally:
    """Sums of a bet's net per round, enough for its mean and confidence interval."""

    wagered: int  # chips on the bet per round
    rounds: int = 0
    total: int = 0
    squares: int = 0
    histogram: dict[int, int] = field(default_factory=dict)

    def add(self, net: int) -> None:
        self.rounds += 1
        self.total += net
        self.squares += net * net
        self.histogram[net] = self.histogram.get(net, 0) + 1

    def merge(self, other: Tally) -> None:
        self.rounds += other.rounds
        self.total += other.total
        self.squares += other.squares
        for net, n in other.histogram.items():
            self.histogram[net] = self.histogram.get(net, 0) + n

    @property
    def mean(self) -> float:
        return self.total / self.rounds if self.rounds else math.nan

    @property
    def sd(self) -> float:
        if self.rounds < 2:
            return math.nan
        return math.sqrt(max(self.squares / self.rounds - self.mean**2, 0.0))

    @property
    def house_edge(self) -> float:
        return -self.mean / self.wagered

    @property
    def ci95(self) -> float:
        """Half-width of the 95% confidence interval of the house edge."""
        return 1.96 * self.sd / math.sqrt(self.rounds) / self.wagered

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "house_edge": round(self.house_edge, 6),
            "ci95": round(self.ci95, 6),
            "sd_per_round": round(self.sd, 6),
            "wagered": self.wagered,
        }


# --- a round through the engine -----------------------------------------------------------------


def play_round(game: Any, state: Any, deck: Callable[[], Iterator[Card]], decide: Callable[[Any, Any], Event]) -> Any:
    """Play a round to its end through `game.apply`: cards from `deck()` (a fresh one whenever
    the game says the deck is reshuffled, as it does dealing each hand from a fresh deck),
    choices from `decide`."""
    shoe = deck()
    while True:
        awaiting = game.awaiting(state)
        if awaiting.kind == "card":
            state, out = game.apply(state, CardDealt(next(shoe)))
            if any(isinstance(fx, ShoeReshuffled) for fx in out):
                shoe = deck()
        elif awaiting.kind == "decision":
            state, _ = game.apply(state, decide(state, awaiting))
        else:
            return state


def simulate(
    game: str,
    analysis: GameAnalysis,
    rounds: int,
    *,
    seed: int = 1,
    workers: int | None = None,
    progress: bool = False,
    **options: Any,
) -> dict[str, Tally]:
    """`rounds` rounds of `game` through the engine, in chunks over `workers` processes, each
    dealt by the game's `analysis` with `options` (`controller.games.simulate` finds it by name)."""
    chunker = analysis.chunk()
    if chunker is None:
        raise ValueError(f"{game}: no Monte Carlo for it yet (its exact figures: leave out --monte-carlo)")
    if rounds < 1:
        raise ValueError(f"rounds must be 1 or more, not {rounds}")
    sizes = [min(CHUNK, rounds - start) for start in range(0, rounds, CHUNK)]
    workers = workers or os.cpu_count() or 1
    totals: dict[str, Tally] = {}
    done = 0
    shown = Progress(rounds, "rounds") if progress else None
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(chunker, (seed, k), size, **options) for k, size in enumerate(sizes)]
        for k, future in enumerate(futures):  # in chunk order: the same sums however they ran
            for name, tally in future.result().items():
                totals.setdefault(name, Tally(tally.wagered)).merge(tally)
            done += sizes[k]
            if shown is not None:
                shown.step(done)
    if shown is not None:
        shown.end()
    return totals
