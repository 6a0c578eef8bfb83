"""`tablectl analyze`: house edge, spread and paytables, exact where it can be and simulated where
it cannot, on the engine the table runs.

    tablectl analyze grand-slam [--decks N] [--units 2,1,1] [--paytable pair=1,flush=3,...] [--json]
    tablectl analyze grand-slam --monte-carlo --rounds 200000 [--seed S] [--workers K]
    tablectl analyze jokers-22 [--decks 6] [--jokers 1] [--depth 3] [--strategy FILE.csv] [--coverage rotation]
    tablectl analyze jokers-22 --monte-carlo --rounds 100000 [--stand-on 17] [--strategy FILE.csv]
    tablectl analyze baseball-poker --monte-carlo --rounds 20000 [--players 6]
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.engine.base import RuleError

EXIT_REFUSED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=["grand-slam", "jokers-22", "baseball-poker"])
    parser.add_argument("--decks", type=int, default=6, help="decks in the shoe; 0 for an infinite deck (6)")
    parser.add_argument("--units", default="1,1,1", help="chips on first,second,third for the wager shapes (1,1,1)")
    parser.add_argument("--paytable", help="POKER BONUS paytable, e.g. pair=1,flush=3,straight=4 (hand names with -)")
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="take the rule options (the paytable) from table.toml"
    )
    parser.add_argument("--monte-carlo", action="store_true", help="simulate instead of enumerating exactly")
    parser.add_argument("--rounds", type=int, default=100_000, help="rounds to simulate (100000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the simulation (1)")
    parser.add_argument("--workers", type=int, help="processes (all cores)")
    parser.add_argument("--stand-on", type=int, default=17, help="Jokers 22 player stands from this total (17)")
    parser.add_argument(
        "--strategy", type=Path, metavar="CSV", help="Jokers 22 player strategy table: hand by banker's first card"
    )
    parser.add_argument("--jokers", type=int, default=1, help="Jokers 22 jokers per deck (1)")
    parser.add_argument(
        "--depth", type=int, default=3, help="Jokers 22 exact: cards of a round drawn without replacement (3)"
    )
    parser.add_argument("--wager", type=int, default=2, help="Jokers 22 chips on the spot (2: a surrender returns 1)")
    parser.add_argument("--stake", type=int, help="Jokers 22 banker's stake (enough to cover everything)")
    parser.add_argument(
        "--coverage", choices=["rotation", "collect-first"], default="rotation", help="Jokers 22 coverage (rotation)"
    )
    parser.add_argument("--players", type=int, default=6, help="Baseball poker players at the table (6)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--chart", type=Path, metavar="PNG", help="draw the distribution of net results")


def run(args: argparse.Namespace) -> int:
    try:
        if args.monte_carlo or args.game == "baseball-poker":
            doc = _monte_carlo(args)
        else:
            doc = _exact(args) if args.game == "grand-slam" else _jokers22_exact(args)
    except (RuleError, ValueError) as exc:
        print(f"tablectl: refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if args.chart:
        from controller.analysis.chart import distribution_chart

        distribution_chart(doc, args.chart)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(_text(doc))
    return 0


def _exact(args: argparse.Namespace) -> dict[str, Any]:
    from controller.analysis.grand_slam import analyze, p_grand_slam_at_table
    from controller.games.grand_slam.rules import parse_rules

    units = _units(args.units)
    rules_doc: dict[str, Any] = {}
    if args.config:
        from controller.config import ConfigError, load

        try:
            rules_doc = dict(load(args.config, simulated=True).rules)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
    rules_doc["decks"] = max(args.decks, 1)
    if args.paytable:
        rules_doc["poker_bonus_paytable"] = _paytable(args.paytable)
    rules = parse_rules(rules_doc)
    figures = analyze(decks=args.decks, units=units, rules=rules)
    return {
        "game": "grand-slam",
        "method": "exact",
        "decks": args.decks,
        "units": list(units),
        "poker_bonus_paytable": dict(rules.poker_bonus_paytable),
        "wagers": {k: figures[k].to_json() for k in ("first", "first+second", "first+second+third")},
        "side_bets": {k: figures[k].to_json() for k in ("three_outs", "poker_bonus")},
        "grand_slam_at_table": {
            str(seats): {"p": str(p), "percent": round(float(p) * 100, 4)}
            for seats in range(1, 8)
            for p in [p_grand_slam_at_table(seats, args.decks)]
        },
    }


def _monte_carlo(args: argparse.Namespace) -> dict[str, Any]:
    from controller.analysis.montecarlo import CATEGORIES, simulate

    options: dict[str, Any] = {"decks": args.decks}
    if args.game == "grand-slam":
        options["units"] = _units(args.units)
    elif args.game == "jokers-22":
        options |= _jokers22_options(args)
    else:
        if not 2 <= args.players <= 8:
            raise ValueError(f"--players {args.players}: a Baseball poker table seats 2 to 8")
        options["players"] = args.players
    tallies = simulate(
        args.game, args.rounds, seed=args.seed, workers=args.workers, progress=sys.stderr.isatty(), **options
    )
    doc: dict[str, Any] = {"game": args.game, "method": "monte-carlo", "seed": args.seed, "rounds": args.rounds}
    if args.game != "baseball-poker":  # a Baseball poker hand is dealt from one 52-card deck
        doc["decks"] = args.decks
    if args.game == "grand-slam":
        doc["wagers"] = {k: tallies[k].to_json() for k in ("first", "first+second", "first+second+third")}
        doc["side_bets"] = {k: tallies[k].to_json() for k in ("three_outs", "poker_bonus")}
    elif args.game == "jokers-22":
        doc["banker"] = tallies["banker_edge"].to_json()
        doc |= _jokers22_terms(args, options)
    else:
        doc["players"] = args.players
        doc["player_strategy"] = "everyone calls to the showdown; the opener brings it in or checks"
        doc["showdown_categories"] = {
            c: {
                "frequency": round(tallies[c].mean, 6),
                "ci95": round(1.96 * tallies[c].sd / tallies[c].rounds ** 0.5, 6),
            }
            for c in CATEGORIES
        }
        doc["rainouts_per_hand"] = {"mean": round(tallies["rainouts"].mean, 6), "hands": tallies["rainouts"].rounds}
        return doc
    doc["distribution"] = {
        name: {str(net): n / t.rounds for net, n in sorted(t.histogram.items())} for name, t in tallies.items()
    }
    return doc


def _jokers22_options(args: argparse.Namespace) -> dict[str, Any]:
    from controller.analysis.jokers22 import Strategy, read_strategy

    if args.jokers < 0:
        raise ValueError(f"--jokers {args.jokers}: jokers per deck is 0 or more")
    if args.wager < 1 or (args.stake is not None and args.stake < 1):
        raise ValueError("--wager and --stake are whole numbers of chips, 1 or more")
    strategy = read_strategy(args.strategy, args.stand_on) if args.strategy else Strategy(stand_on=args.stand_on)
    return {
        "strategy": strategy,
        "jokers_per_deck": args.jokers,
        "wager": args.wager,
        "stake": args.stake,
        "coverage": args.coverage,
    }


def _jokers22_terms(args: argparse.Namespace, options: dict[str, Any]) -> dict[str, Any]:
    """What a Jokers 22 figure is a figure of: the shoe, the money, the strategy."""
    return {
        "jokers_per_deck": args.jokers,
        "wager": args.wager,
        "stake": args.stake if args.stake is not None else "covers every wager",
        "coverage": args.coverage,
        "player_strategy": options["strategy"].describe(),
    }


def _jokers22_exact(args: argparse.Namespace) -> dict[str, Any]:
    from controller.analysis.jokers22 import analyze

    options = _jokers22_options(args)
    figures = analyze(decks=args.decks, depth=args.depth, **options)
    doc: dict[str, Any] = {"game": "jokers-22", "method": "exact", "decks": args.decks}
    if args.decks:
        doc["depth"] = args.depth
    doc |= _jokers22_terms(args, options)
    doc["banker"] = figures.to_json()
    doc["distribution"] = {"player net": {net: p for net, p in doc["banker"]["distribution"].items()}}
    return doc


def _units(text: str) -> tuple[int, int, int]:
    try:
        parts = [int(p) for p in text.split(",")]
    except ValueError:
        raise ValueError(f"--units {text}: three whole numbers such as 2,1,1") from None
    if len(parts) != 3 or min(parts) < 1:
        raise ValueError(f"--units {text}: three whole numbers of 1 or more, for first, second and third")
    first, second, third = parts
    if not third <= second <= first:
        raise ValueError(f"--units {text}: third <= second <= first, as the table's rule says")
    return first, second, third


def _paytable(text: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for item in text.split(","):
        name, _, odds = item.partition("=")
        if not odds.strip().isdigit():
            raise ValueError(f"--paytable {item!r}: write hand=odds, such as pair=1 or straight-flush=30")
        table[name.strip().replace("-", " ").replace("_", " ")] = int(odds)
    return table


def _text(doc: dict[str, Any]) -> str:
    shoe = (
        "infinite deck" if doc.get("decks") == 0 else f"{doc['decks']} decks" if "decks" in doc else "one deck a hand"
    )
    if doc.get("decks") and "jokers_per_deck" in doc:
        shoe += f" + {doc['jokers_per_deck']} joker(s) a deck"
    if "depth" in doc:
        shoe += f", the first {doc['depth']} cards exact"
    lines = [f"{doc['game']} ({doc['method']}, {shoe})"]
    rows = [*doc.get("wagers", {}).items(), *doc.get("side_bets", {}).items()]
    if "banker" in doc and doc["method"] == "exact":
        b = doc["banker"]
        lines.append(
            f"  banker's advantage {b['banker_advantage_per_chip'] * 100:.4f}% per chip wagered; "
            f"player's return {b['player_return_per_chip'] * 100:+.4f}% per chip; sd per round {b['sd_per_round']:.4f}"
        )
    elif "banker" in doc:
        rows.append(("banker position", doc["banker"]))
    for name, w in rows:
        edge = w["house_edge"]
        if isinstance(edge, str):  # exact
            edge_text = f"{edge} = {float(Fraction(edge)) * 100:.4f}%"
        else:
            edge_text = f"{edge * 100:.3f}% +- {w['ci95'] * 100:.3f}% (95%, {w['rounds']} rounds)"
        lines.append(f"  {name:<20} house edge {edge_text}   sd per round {w['sd_per_round']:.4f}")
    for category, f in doc.get("showdown_categories", {}).items():
        lines.append(f"  {category:<16} {f['frequency'] * 100:7.3f}% +- {f['ci95'] * 100:.3f}% of showdown hands")
    if "rainouts_per_hand" in doc:
        lines.append(f"  rainouts per hand {doc['rainouts_per_hand']['mean']:.4f}")
    for seats, p in doc.get("grand_slam_at_table", {}).items():
        lines.append(f"  P(a Grand Slam at a table of {seats}) = {p['percent']:.4f}%")
    if "player_strategy" in doc:
        lines.append(f"  player: {doc['player_strategy']}")
    if "coverage" in doc:
        lines.append(f"  {doc['wager']} chips on one spot, banker's stake: {doc['stake']}, coverage {doc['coverage']}")
    return "\n".join(lines)
