"""`tablectl analyze`: house edge, spread and paytables, exact where it can be and simulated where
it cannot, on the engine the table runs.

    tablectl analyze grand-slam [--decks N] [--units 2,1,1] [--paytable pair=1,flush=3,...] [--json]
    tablectl analyze grand-slam --monte-carlo --rounds 200000 [--seed S] [--workers K]
    tablectl analyze jokers-22 [--decks 6] [--jokers 1] [--depth 3] [--strategy FILE.csv] [--coverage rotation]
    tablectl analyze jokers-22 --monte-carlo --rounds 100000 [--stand-on 17] [--strategy FILE.csv]
    tablectl analyze baseball-poker --monte-carlo --rounds 20000 [--players 6]

This command is shared: what a game offers (its options, its exact figures, its simulated
rounds, its lines of the text report) is its analysis, which its adapter gives
(controller/analysis/base.py, controller/games/<game>/analysis.py). A game without one is
refused in one line naming it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from controller.analysis.base import GameAnalysis, Option
from controller.engine.base import RuleError
from controller.games import analysis_of

EXIT_REFUSED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from controller.engine import game_names
    from controller.games import adapter

    names = game_names()
    parser.add_argument("game", choices=names)
    parser.add_argument("--monte-carlo", action="store_true", help="simulate instead of enumerating exactly")
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds to simulate (100000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation (1)")
    parser.add_argument("--workers", type=int, help="processes (all cores)")
    declared: dict[str, tuple[str, Option]] = {}
    for name in names:
        analysis = adapter(name).analysis()
        for opt in analysis.options if analysis is not None else ():
            if opt.flag in declared:
                first, earlier = declared[opt.flag]
                if dict(earlier.settings, help=None) != dict(opt.settings, help=None):
                    raise RuleError(f"{name} and {first} both declare {opt.flag}, differently", field="game")
                continue
            declared[opt.flag] = (name, opt)
            parser.add_argument(opt.flag, **opt.settings)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--chart", type=Path, metavar="PNG", help="draw the distribution of net results")


def run(args: argparse.Namespace) -> int:
    try:
        analysis = analysis_of(args.game)
        if getattr(args, "config", None):
            args.config_rules = _rules_of(args.config)
        doc = None if args.monte_carlo else _exact(args, analysis)
        if doc is None:
            doc = _monte_carlo(args, analysis)
    except (RuleError, ValueError) as exc:
        print(f"tablectl: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if args.chart:
        from controller.analysis.chart import distribution_chart

        distribution_chart(doc, args.chart)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(_text(doc, analysis))
    return 0


def _rules_of(path: Path) -> dict[str, Any]:
    """The rule options of table.toml at `path` (an analysis's --config), or ValueError naming the key."""
    from controller.app.config import ConfigError, load

    try:
        return dict(load(path, simulated=True).rules)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


def _exact(args: argparse.Namespace, analysis: GameAnalysis) -> dict[str, Any] | None:
    figures = analysis.exact(args)
    return None if figures is None else {"game": args.game, "method": "exact", **figures}


def _monte_carlo(args: argparse.Namespace, analysis: GameAnalysis) -> dict[str, Any]:
    from controller.games import simulate

    options = analysis.simulation(args)
    tallies = simulate(
        args.game, args.rounds, seed=args.seed, workers=args.workers, progress=True, **options
    )
    doc: dict[str, Any] = {"game": args.game, "method": "monte-carlo", "seed": args.seed, "rounds": args.rounds}
    doc |= analysis.simulated(args, options, tallies)
    if analysis.distribution:
        doc["distribution"] = {
            name: {str(net): n / t.rounds for net, n in sorted(t.histogram.items())} for name, t in tallies.items()
        }
    return doc


def _text(doc: dict[str, Any], analysis: GameAnalysis) -> str:
    return "\n".join([f"{doc['game']} ({doc['method']}, {analysis.shoe(doc)})", *analysis.text(doc)])
