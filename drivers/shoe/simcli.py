"""`tablectl sim-shoe`: a simulated shoe on a pty, driven by line commands on stdin.

    tablectl sim-shoe --link /tmp/shoe --seed 7 --decks 6
    tablectl sim-shoe --link /tmp/shoe --cards AS,KD,JK </dev/null &   # no commands, just serve

Point a table (or any program) at the link path as its shoe port. Commands, one a line; each
is answered with one line on stdout, `ok ...` or `error ...`, so another program can drive it:

    draw [N]            the dealer pulls N cards (default 1); answers with the cards drawn
    stack CARD ...      put cards on top of the shoe (AS KD JK ...)
    confirm             press the shoe's confirm button
    fault NAME          silent | bad-crc | slow | deaf | garbage | duplicate | misread | drop | restore
                        (silent, bad-crc, slow and deaf stay on until clear; restore says which remain)
    clear               switch off silent, bad-crc, slow and deaf
    status              port, session, unacknowledged messages, cards left, firmware bugs
    quit                stop (so do end of input with --exit-on-eof, SIGTERM and Ctrl-C)

`--bug NAME` (repeatable) gives the shoe a deliberate firmware bug, for `tablectl shoe-check`;
`--auto-deal` feeds it cards by itself (with `--misread-every N`, every Nth is unreadable).

The first line printed is `ok SIMULATED shoe on PATH ...` once the port is ready. The process
outlives any host: cards not yet acknowledged go to whichever host opens the link next.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from types import FrameType
from typing import TextIO

from controller.engine.cards import CardError, ShoeComposition, parse_card, parse_cards
from drivers.shoe.simulated import Fault, FirmwareBug, SimulatedShoe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # --help shows the stdin commands, laid out as in this module's docstring.
    parser.description = __doc__.split("\n")[0].strip("`")
    parser.epilog = "stdin commands, one a line (each answered with one line, ok ... or error ...):\n" + (
        __doc__.split("so another program can drive it:\n\n")[1].split("\n\nThe first line")[0]
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--link", metavar="PATH", help="make PATH a symlink to the shoe's pty")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--cards", metavar="AS,KD,...", help="deal exactly these cards, in order")
    source.add_argument("--seed", type=int, help="seed of the shuffle (random if not given)")
    parser.add_argument("--decks", type=int, default=6, help="decks in a shuffled shoe (6)")
    parser.add_argument("--jokers", type=int, default=0, help="jokers per deck (0)")
    parser.add_argument("--cut", type=int, metavar="N", help="the cut card comes out after N cards")
    parser.add_argument("--shoe-id", default="SIM-SHOE-1", help="the id the shoe says in HELLO")
    parser.add_argument("--heartbeat", type=float, default=1.0, help="seconds between heartbeats")
    parser.add_argument("--retransmit", type=float, default=0.25, help="seconds between resends")
    parser.add_argument("--slow", type=float, default=0.5, help="seconds a frame takes when slow")
    parser.add_argument(
        "--nak-holdoff", type=float, default=0.05, help="least seconds between resends after NAKs"
    )
    parser.add_argument(
        "--bug", action="append", default=[], metavar="NAME",
        choices=[b.value for b in FirmwareBug],
        help="a deliberate firmware bug (repeatable): " + ", ".join(b.value for b in FirmwareBug),
    )
    parser.add_argument(
        "--auto-deal", action="store_true",
        help="a card-feeding rig: the next card comes out as soon as the last is acknowledged",
    )
    parser.add_argument(
        "--misread-every", type=int, metavar="N", help="with --auto-deal: every Nth card misreads"
    )
    parser.add_argument("--exit-on-eof", action="store_true", help="stop when stdin ends")


def build_shoe(args: argparse.Namespace) -> SimulatedShoe:
    """The simulated shoe the arguments describe; ValueError (CardError) saying what is wrong."""
    for name in ("heartbeat", "retransmit", "slow"):
        if not getattr(args, name) > 0:
            raise ValueError(f"--{name} is a number of seconds above 0, not {getattr(args, name)}")
    if not args.nak_holdoff >= 0:
        raise ValueError(f"--nak-holdoff is a number of seconds, 0 or more, not {args.nak_holdoff}")
    if args.misread_every is not None and args.misread_every < 1:
        raise ValueError(f"--misread-every is a number of cards of 1 or more, not {args.misread_every}")
    if args.link and os.path.lexists(args.link) and not os.path.islink(args.link):
        raise ValueError(f"--link {args.link} exists and is not a symlink; not replacing it")
    common = {
        "cut_card": args.cut,
        "link": args.link,
        "shoe_id": args.shoe_id,
        "heartbeat_interval": args.heartbeat,
        "retransmit_interval": args.retransmit,
        "slow_seconds": args.slow,
        "nak_holdoff": args.nak_holdoff,
        "bugs": [FirmwareBug(b) for b in args.bug],
        "auto_deal": args.auto_deal,
        "misread_every": args.misread_every,
    }
    if args.cards:
        cards = parse_cards(t for t in args.cards.split(",") if t.strip())
        return SimulatedShoe(cards, **common)
    composition = ShoeComposition(decks=args.decks, jokers_per_deck=args.jokers)
    return SimulatedShoe(seed=args.seed, composition=composition, **common)


COMMANDS = "draw, stack, confirm, fault, clear, status, quit"


def execute(shoe: SimulatedShoe, line: str) -> str:
    """Run one command line; the answer line (never raises on bad input)."""
    words = line.split()
    if not words:
        return f"error empty command; try: {COMMANDS}"
    command, rest = words[0].lower(), words[1:]
    try:
        if command == "draw":
            if rest and not rest[0].isdigit():
                return f"error draw takes a number of cards, such as: draw 3 (not {rest[0]!r})"
            n = int(rest[0]) if rest else 1
            if n < 1:
                return f"error draw takes a number of cards of 1 or more, not {n}"
            cards = shoe.draw(n)
            return "ok drew " + (" ".join(map(str, cards)) or "nothing: the shoe is empty")
        if command == "stack":
            if not rest:
                return "error stack needs cards, such as: stack AS KD JK"
            cards = [parse_card(t) for t in rest]
            shoe.stack(cards)
            return f"ok stacked {' '.join(map(str, cards))}"
        if command == "confirm":
            shoe.press_confirm()
            return "ok confirm button pressed"
        if command == "fault":
            names = ", ".join(f.value for f in Fault)
            if len(rest) != 1:
                return f"error fault takes one name: {names}"
            try:
                fault = Fault(rest[0].lower())
            except ValueError:
                return f"error no fault called {rest[0]!r}; the menu is: {names}"
            return "ok " + shoe.fault(fault)
        if command == "clear":
            return "ok " + shoe.clear()
        if command == "status":
            bugs = ",".join(sorted(b.value for b in shoe.bugs)) or "none"
            return (
                f"ok port {shoe.port} session {shoe.session:08X} "
                f"unacknowledged {shoe.unacknowledged} left {shoe.cards_left} bugs {bugs}"
            )
    except (ValueError, CardError) as exc:
        return f"error {exc}"
    return f"error unknown command {command!r}; try: {COMMANDS}"


def serve(shoe: SimulatedShoe, commands: TextIO, out: TextIO, exit_on_eof: bool) -> None:
    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    bugs = f" with firmware bugs {', '.join(sorted(b.value for b in shoe.bugs))}" if shoe.bugs else ""
    say(
        f"ok SIMULATED shoe on {shoe.port} (pty {shoe.pty_path}) session {shoe.session:08X}{bugs}"
    )
    for line in commands:
        if line.strip().lower() in ("quit", "exit"):
            say("ok bye")
            return
        say(execute(shoe, line))
    if not exit_on_eof:
        threading.Event().wait()  # no more commands: keep dealing to hosts until a signal


def run(args: argparse.Namespace) -> int:
    try:
        shoe = build_shoe(args)
    except (ValueError, CardError) as exc:
        print(f"tablectl sim-shoe: {exc}", file=sys.stderr)
        return 2

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        with shoe:
            serve(shoe, sys.stdin, sys.stdout, args.exit_on_eof)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m drivers.shoe.simcli`) until the CLI wires `sim-shoe`."""
    parser = argparse.ArgumentParser(prog="tablectl sim-shoe", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
