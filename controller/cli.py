"""`tablectl`: the command line of the table controller.

Subcommands import what they need when they run, so `tablectl replay` and `tablectl hand` start
fast and never import OpenCV, FastAPI or gpiozero. Refused input exits 2 with one line on
standard error naming the field, the seat and the rule.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

EXIT_REFUSED = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_REFUSED
    result: int = args.handler(args)
    return result


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Runs a casino table: shoe, camera, game engine, LEDs, payout display, dealer screen.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    replay = sub.add_parser("replay", help="settle a round file (REPLAY.md) and print the settlement as JSON")
    replay.add_argument("round_file", metavar="ROUND.json", help="the round file, or - for standard input")
    replay.set_defaults(handler=_replay)

    hand = sub.add_parser("hand", help="evaluate a poker hand of five or more cards")
    hand.add_argument("--wild", default="", metavar="RANKS", help="fully wild ranks, comma separated (3,9)")
    hand.add_argument("cards", nargs="+", metavar="CARD")
    hand.set_defaults(handler=_hand)

    run = sub.add_parser("run", help="run the table daemon")
    run.add_argument("--sim", action="store_true", help="simulated hardware")
    run.add_argument("--demo", action="store_true", help="a simulated dealer plays rounds by itself")
    run.set_defaults(handler=_run)
    return parser


def _refuse(message: str) -> NoReturn:
    print(f"tablectl: refused: {message}", file=sys.stderr)
    raise SystemExit(EXIT_REFUSED)


def _replay(args: argparse.Namespace) -> int:
    from controller.engine.base import RuleError
    from controller.replay import settle_round_file

    name = "standard input" if args.round_file == "-" else args.round_file
    try:
        text = sys.stdin.read() if args.round_file == "-" else Path(args.round_file).read_text(encoding="utf-8")
    except OSError as exc:
        _refuse(f"{name}: cannot read the round file: {exc.strerror or exc}")
    except UnicodeDecodeError:
        _refuse(f"{name}: the round file is not UTF-8 text")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        _refuse(f"{name}: line {exc.lineno} column {exc.colno}: not valid JSON: {exc.msg}")
    try:
        settlement = settle_round_file(doc)
    except RuleError as exc:
        _refuse(str(exc))
    print(json.dumps(settlement))
    return 0


def _hand(args: argparse.Namespace) -> int:
    from controller.engine.cards import CardError, parse_card
    from controller.engine.hands import evaluate

    wild = set()
    for i, text in enumerate(t for t in args.wild.split(",") if t.strip()):
        try:
            rank = parse_card(text.strip() + "S").rank
        except CardError:
            _refuse(f"--wild[{i}]: {text.strip()!r} is not a rank; write ranks such as 3,9 or T,A")
        assert rank is not None
        wild.add(rank)
    cards = []
    for i, text in enumerate(args.cards):
        try:
            cards.append(parse_card(text))
        except CardError as exc:
            _refuse(f"cards[{i}]: {exc}")
    try:
        value = evaluate(cards, frozenset(wild))
    except (CardError, ValueError) as exc:
        _refuse(f"cards: {exc}")
    print(json.dumps(value.to_json()))
    return 0


def _run(args: argparse.Namespace) -> int:
    print(
        "tablectl run: the table daemon (shoe, LEDs, display, API, dealer screen) is not built yet; "
        "it comes with the daemon issue. Today: `tablectl replay ROUND.json` and `tablectl hand CARDS`.",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
