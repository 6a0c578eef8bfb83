"""The analysis interface: what `tablectl analyze <game>` asks a game (controller/games/README.md).

The command (`cli.py`) and the Monte Carlo driver (`montecarlo.py`: seeding, chunks, processes,
confidence intervals) are shared; everything that knows one game's rules, options and figures
lives in its folder (`controller/games/<game>/analysis.py`), as a `GameAnalysis` its adapter
gives (`GameAdapter.analysis()`). Nothing here names a game: a game whose adapter gives no
analysis is refused in one line naming it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.analysis.montecarlo import Tally

#: One chunk of a simulation: `chunk((seed, k), rounds, **options)` -> the chunk's tallies. A
#: module-level function: the worker processes import it by name.
Chunk = Callable[..., "dict[str, Tally]"]


class Progress:
    """How far a long analysis has got, on standard error (standard output keeps the figures): a
    bar redrawn in place on a terminal, else a line at each tenth of the way (a log, a pipe).

        progress = Progress(7, "parts")
        progress.step(3, "first+second"); progress.end()
    """

    def __init__(self, total: int, unit: str, width: int = 40) -> None:
        self.total = max(total, 1)
        self.unit = unit
        self.width = width
        self.tty = sys.stderr.isatty()
        self._tenth = -1

    def step(self, done: int, what: str = "") -> None:
        about = f" ({what})" if what else ""
        if self.tty:
            filled = self.width * done // self.total
            bar = f"[{'#' * filled}{' ' * (self.width - filled)}]"
            print(f"\r{bar} {done}/{self.total} {self.unit}{about}", end="", file=sys.stderr, flush=True)
            return
        tenth = 10 * done // self.total
        if tenth != self._tenth:
            self._tenth = tenth
            print(f"{done}/{self.total} {self.unit} ({100 * done // self.total}%){about}", file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.tty:
            print(file=sys.stderr)


@dataclass(frozen=True)
class Option:
    """A command-line option a game's analysis reads (`argparse.add_argument(flag, **settings)`).
    Two games may declare the same option only alike (say, --decks)."""

    flag: str
    settings: Mapping[str, Any] = field(default_factory=dict)


def option(flag: str, **settings: Any) -> Option:
    return Option(flag, settings)


class GameAnalysis:
    """One game's `tablectl analyze`. Subclasses set `options` and override what they offer.

    options        the game's own command-line options (the shared ones: the game, --monte-carlo,
                   --rounds, --seed, --workers, --json, --chart)
    exact(args)    the exact figures, or None: the game is only simulated (--monte-carlo implied)
    chunk()        the Monte Carlo's chunk function, or None: no simulation
    simulation(args)  the chunk's keyword options from the command line
    simulated(args, options, tallies)  the report's figures from the simulation's tallies
    shoe(doc), text(doc)  the text report: the shoe in words, the lines under the heading
    """

    options: tuple[Option, ...] = ()
    #: Whether a simulated report ends with each tally's distribution of nets ("distribution",
    #: what --chart draws).
    distribution = True

    def exact(self, args: argparse.Namespace) -> dict[str, Any] | None:
        """The exact report's figures (after "game" and "method"), or None when the game has no
        exact calculation. ValueError (or RuleError): refused, in one line."""
        return None

    def chunk(self) -> Chunk | None:
        """The function simulating one chunk of rounds, or None when the game has no Monte Carlo."""
        return None

    def simulation(self, args: argparse.Namespace) -> dict[str, Any]:
        """The chunk's keyword options from the command line (ValueError: refused)."""
        return {}

    def simulated(
        self, args: argparse.Namespace, options: Mapping[str, Any], tallies: dict[str, Tally]
    ) -> dict[str, Any]:
        """The simulated report's figures (after "game", "method", "seed" and "rounds")."""
        return {name: tally.to_json() for name, tally in tallies.items()}

    def shoe(self, doc: Mapping[str, Any]) -> str:
        """The shoe of a report, in words (its heading)."""
        if doc.get("decks") == 0:
            return "infinite deck"
        return f"{doc['decks']} decks" if "decks" in doc else "one deck a hand"

    def text(self, doc: Mapping[str, Any]) -> list[str]:
        """The text report's lines under its heading: by default a line per wager and side bet."""
        return edge_lines([*doc.get("wagers", {}).items(), *doc.get("side_bets", {}).items()])


def edge_lines(rows: list[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """A line per bet: its house edge (exact, as a fraction, or simulated, with its 95% interval)
    and its standard deviation per round."""
    lines = []
    for name, w in rows:
        edge = w["house_edge"]
        if isinstance(edge, str):  # exact
            edge_text = f"{edge} = {float(Fraction(edge)) * 100:.4f}%"
        else:
            edge_text = f"{edge * 100:.3f}% +- {w['ci95'] * 100:.3f}% (95%, {w['rounds']} rounds)"
        lines.append(f"  {name:<20} house edge {edge_text}   sd per round {w['sd_per_round']:.4f}")
    return lines
