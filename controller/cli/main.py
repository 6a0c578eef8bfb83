"""`tablectl`: the command line of the table controller.

Subcommands import what they need when they run, so `tablectl replay` and `tablectl hand` start
fast and never import OpenCV, FastAPI or gpiozero, and `recall` and `journal verify` load none of
the API, the camera, the floor or the devices (nor pydantic when no table.toml is read:
tests/cli/test_command_imports.py). Refused input exits 2 with one line on standard error naming
the field, the seat and the rule.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_REFUSED = 2
#: EX_CONFIG: a damaged journal (or missing tokens): a person must act; systemd does not restart into it
#: (RestartPreventExitStatus in systemd/tablectl.service).
EXIT_CONFIG = 78
#: EX_TEMPFAIL: the journal's disk is full even for opening it: systemd starts the table again.
EXIT_TEMPFAIL = 75


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_REFUSED
    try:
        result: int = args.handler(args)
    except BrokenPipeError:  # `tablectl recall | head`: the reader left; nothing went wrong here
        sys.stderr.close()
        return 0
    return result


def _version() -> str:
    """`tablectl --version`: the version of the installed distribution. A checkout that was never
    installed has no metadata, which is said rather than guessed."""
    from importlib import metadata

    try:
        return f"tablectl {metadata.version('tablectl')}"
    except metadata.PackageNotFoundError:
        return "tablectl (version unknown: this copy is not installed; pip install -e . or make run)"


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Runs a casino table: shoe, camera, game engine, LEDs, payout display, dealer screen.",
    )
    # Looked up only when asked: importlib.metadata is not loaded for every command.
    version = _version() if "--version" in argv else ""
    parser.add_argument("--version", action="version", version=version, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    replay = sub.add_parser("replay", help="settle a round file (REPLAY.md) and print the settlement as JSON")
    replay.add_argument("round_file", metavar="ROUND.json", help="the round file, or - for standard input")
    replay.set_defaults(handler=_replay)

    hand = sub.add_parser("hand", help="evaluate a poker hand of five or more cards")
    hand.add_argument("--wild", default="", metavar="RANKS", help="fully wild ranks, comma separated (3,9)")
    hand.add_argument("cards", nargs="+", metavar="CARD")
    hand.set_defaults(handler=_hand)

    sim_shoe = sub.add_parser("sim-shoe", help="a simulated card-reading shoe on a pty, driven from stdin")
    sim_shoe.set_defaults(handler=_sim_shoe)
    if argv[:1] == ["sim-shoe"]:  # its options live with the simulator, imported only when asked for
        _sim_shoe_arguments(sim_shoe)

    shoe_check = sub.add_parser("shoe-check", help="conformance cases against a shoe's firmware, host side")
    shoe_check.set_defaults(handler=_shoe_check)
    if argv[:1] == ["shoe-check"]:
        from drivers.shoe import conformance

        conformance.add_arguments(shoe_check)

    recall = sub.add_parser("recall", help="game recall: the last rounds from the journal, and their round files")
    recall.add_argument("--last", type=int, default=10, metavar="N", help="how many rounds (10)")
    recall.add_argument("--round", type=int, metavar="N", help="one round by number")
    recall.add_argument("--export", metavar="FILE", help="with --round: write its round file to FILE (- for stdout)")
    recall.add_argument("--json", action="store_true", help="print the rounds as JSON")
    recall.add_argument("--archive", type=Path, metavar="DIR", help="read rounds from an archive (retention) instead")
    recall.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    recall.add_argument("--sim", action="store_true", help="the journal of a simulated table")
    recall.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    recall.add_argument("--game", metavar="NAME", help="with --sim: the simulated table of this game")
    recall.add_argument("--software", action="store_true", help="the installs, upgrades and removals of the software")
    recall.set_defaults(handler=_recall)

    report = sub.add_parser("report", help="the shift report: pace, dealers, money, theoretical win, ratings")
    report.add_argument("--from", dest="start", required=True, metavar="WHEN", help="UTC date or date and time")
    report.add_argument("--to", dest="end", required=True, metavar="WHEN", help="UTC date or date and time")
    report.add_argument("--table", metavar="T", help="the table's id (refused when the journal is another table's)")
    form = report.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the whole report as JSON")
    form.add_argument("--csv", action="store_true", help="the report's sections as CSV")
    form.add_argument("--html", action="store_true", help="one A4 page with the pace chart")
    report.add_argument(
        "--close-after", type=int, default=3, metavar="N", help="rounds without a wager that end a rating session (3)"
    )
    report.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    report.add_argument("--sim", action="store_true", help="the journal of a simulated table")
    report.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    report.add_argument("--game", metavar="NAME", help="with --sim: the simulated table of this game")
    report.add_argument(
        "--store",
        metavar="URL",
        help="read the table's entries from the floor store (sqlite:///FILE or postgresql://...)",
    )
    report.add_argument("--site", metavar="S", help="with --store: the table's site (when its id is at several)")
    report.set_defaults(handler=_report)

    software = sub.add_parser("software", help="record an install, upgrade or removal of tablectl in the journal")
    software_sub = software.add_subparsers(dest="software_command", metavar="WHAT", required=True)
    record = software_sub.add_parser("record", help="journal what the install step just did (the table stopped)")
    record.add_argument("--action", required=True, choices=("installed", "upgraded", "downgraded", "removed"))
    record.add_argument("--by", required=True, metavar="NAME", help="who installed or removed it")
    record.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    record.add_argument("--sim", action="store_true", help="the journal of a simulated table")
    record.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    software.set_defaults(handler=_software)

    journal = sub.add_parser("journal", help="the journal: check it, rebuild its snapshots, synthesise, retain")
    journal_sub = journal.add_subparsers(dest="journal_command", metavar="WHAT", required=True)
    for name, text in (
        ("verify", "the full check: every entry, the hash chain, the head file, the snapshots"),
        ("rebuild", "make the snapshots and the round index again from the entries"),
        ("synth", "write N seeded simulated rounds through the real table code (soak tests, capacity)"),
        ("retain", "export rounds older than the retention age to the archive, then remove them"),
        ("accept-loss", "after a loss no copy can undo: journal it (who, why) so the table can start again"),
    ):
        part = journal_sub.add_parser(name, help=text)
        part.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
        part.add_argument("--sim", action="store_true", help="the journal of a simulated table")
        part.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
        if name == "synth":
            part.add_argument("--rounds", type=int, required=True, metavar="N", help="how many rounds to add")
            part.add_argument("--game", metavar="G", help="the game (default: the configuration's)")
            part.add_argument("--seed", type=int, default=1, help="seed of the shoe and the players (1)")
        else:
            part.add_argument("--game", metavar="NAME", help="with --sim: the simulated table of this game")
        if name == "accept-loss":
            part.add_argument("--by", required=True, metavar="NAME", help="who accepts the loss")
            part.add_argument("--reason", required=True, metavar="TEXT", help="why no copy can restore it")
        if name == "retain":
            part.add_argument("--days", type=float, metavar="D", help="keep this many days (config retention.days)")
    journal.set_defaults(handler=_journal)

    analyze = sub.add_parser("analyze", help="house edge, spread and paytables, exact or simulated")
    analyze.set_defaults(handler=_analyze)
    if argv[:1] == ["analyze"]:
        from controller.cli import analyze as analysis_cli

        analysis_cli.add_arguments(analyze)

    floor = sub.add_parser("floor", help="the floor: every table live, the floor store, its export and check")
    floor.set_defaults(handler=_floor)
    if argv[:1] == ["floor"]:  # its options live with the floor; paho is imported only when asked for
        from controller.floor import cli as floor_cli

        floor_cli.add_arguments(floor, argv[1:])

    calibrate = sub.add_parser("calibrate", help="calibrate the overhead camera from the markers in a frame")
    vision = sub.add_parser("vision", help="simulated camera frames, and reading wagers and pucks from a frame")
    vision_sub = vision.add_subparsers(dest="vision_command", metavar="WHAT", required=True)
    render = vision_sub.add_parser("render", help="draw the camera frame of a scene file")
    read = vision_sub.add_parser("read", help="read zones, stacks and pucks from a frame, as JSON")
    learn = vision_sub.add_parser("learn-chips", help="learn the table's chip colours from stacks laid on marked zones")
    if argv[:1] in (["calibrate"], ["vision"]):  # OpenCV is imported only for these
        from vision import cli as vision_cli

        vision_cli.add_calibrate_arguments(calibrate)
        calibrate.set_defaults(handler=vision_cli.run_calibrate)
        vision_cli.add_render_arguments(render)
        render.set_defaults(handler=vision_cli.run_render)
        vision_cli.add_read_arguments(read)
        read.set_defaults(handler=vision_cli.run_read)
        vision_cli.add_learn_chips_arguments(learn)
        learn.set_defaults(handler=vision_cli.run_learn_chips)

    doctor = sub.add_parser("doctor", help="check that this machine can run the table, in plain words")
    doctor.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    doctor.add_argument("--sim", action="store_true", help="check for a simulated table")
    doctor.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    doctor.add_argument("--game", metavar="NAME", help="with --sim: the simulated table of this game")
    doctor.set_defaults(handler=_doctor)

    verify = sub.add_parser("verify", help="authenticate the installed software against its signed manifest")
    verify.set_defaults(handler=_verify)
    if argv[:1] == ["verify"]:
        from controller.cli import verify as authentication_cli

        authentication_cli.add_arguments(verify)

    rollback = sub.add_parser("rollback", help="go back one release (install.sh --rollback of the installed release)")
    rollback.set_defaults(handler=_rollback)
    if argv[:1] == ["rollback"]:
        from controller.cli import rollback as rollback_cli

        rollback_cli.add_arguments(rollback)

    run = sub.add_parser("run", help="run the table daemon")
    run.add_argument("--sim", action="store_true", help="simulated hardware (shoe on a pty, mock pins, display)")
    run.add_argument("--demo", action="store_true", help="with --sim: a simulated dealer plays rounds by itself")
    run.add_argument("--config", type=Path, metavar="FILE", help="table.toml (default /etc/tablectl/table.toml)")
    run.add_argument("--state-dir", type=Path, metavar="DIR", help="where the journal lives (config state.dir)")
    run.add_argument("--http", metavar="HOST:PORT", help="where the API listens (config http.host/port)")
    run.add_argument("--game", metavar="NAME", help="with --sim: the game to play (config table.game)")
    run.add_argument("--seed", type=int, help="with --sim: seed of the simulated shoe and dealer")
    run.add_argument("--demo-interval", type=float, default=1.0, metavar="S", help="seconds between demo steps")
    run.set_defaults(handler=_run)
    return parser


def _sim_shoe_arguments(parser: argparse.ArgumentParser) -> None:
    from drivers.shoe import simcli

    simcli.add_arguments(parser)


def _sim_shoe(args: argparse.Namespace) -> int:
    from drivers.shoe import simcli

    return simcli.run(args)


def _shoe_check(args: argparse.Namespace) -> int:
    from drivers.shoe import conformance

    return conformance.run(args)


def _refuse(message: str) -> NoReturn:
    print(f"tablectl: refused: {message}", file=sys.stderr)
    raise SystemExit(EXIT_REFUSED)


def _damaged(exc: Exception, doing: str = "journal damaged") -> NoReturn:
    """A journal that failed a check: one line saying what, which file and what to do, and exit
    78. Nothing was written to it."""
    words = " ".join(str(exc).split())
    if "What to do" not in words and "tablectl journal" not in words:
        words += (
            ". What to do: the table will not play on it; keep the files for the investigation, run "
            "`tablectl doctor`, and restore the journal from a good copy (hardware/install.md, step 13)"
        )
    print(f"tablectl: {doing}: {words}", file=sys.stderr)
    raise SystemExit(EXIT_CONFIG)


def _replay(args: argparse.Namespace) -> int:
    from controller.engine.base import RuleError
    from controller.games.replay import settle_round_file

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


#: Where a simulated table with no configuration file keeps its journals, one folder a game, in
#: the directory it was started from (`make run` starts it in the checkout).
SIM_STATE_ROOT = Path(".tablectl-sim")


def _state_dir(args: argparse.Namespace, config: Any) -> Path:
    if args.state_dir is not None:
        return Path(args.state_dir)
    if args.sim and config.source.startswith("built-in"):
        return SIM_STATE_ROOT / str(config.game)  # beside the checkout, one journal a game
    return Path(config.state_dir)


def _with_game(args: argparse.Namespace, config: Any) -> Any:
    """The configuration with --game applied (a simulated table only: a live one plays its config's)."""
    import dataclasses

    from controller.engine import game_names

    if args.game is None:
        return config
    if not args.sim:
        _refuse(f"--game {args.game} needs --sim: a live table plays the game its configuration names (table.game)")
    if args.game not in game_names():
        _refuse(f"--game {args.game}: unknown game; the games are {', '.join(game_names())}")
    if config.rules and args.game != config.game:
        _refuse(f"--game {args.game}: {config.source} has [rules] for {config.game}; give {args.game}'s configuration")
    from controller.app.config import ConfigError, check_seats

    try:
        check_seats(config.seats, args.game, config.source)
    except ConfigError as exc:
        _refuse(f"--game {args.game}: {exc}")
    return dataclasses.replace(config, game=args.game)


def _sim_game(args: argparse.Namespace) -> None:
    """`tablectl recall --sim` (`journal`, `doctor`) with no --game: the one game whose simulated
    journal is here; refused in one line when there are several."""
    from controller.engine import game_names

    if args.game is not None or args.state_dir is not None or args.config is not None:
        return
    found = sorted(p.parent.name for p in SIM_STATE_ROOT.glob("*/journal.sqlite3") if p.parent.name in game_names())
    if len(found) == 1:
        args.game = found[0]
    elif len(found) > 1:
        _refuse(f"{SIM_STATE_ROOT} holds several simulated tables' journals ({', '.join(found)}): add --game NAME")


def _recall(args: argparse.Namespace) -> int:
    from controller.app.config import DEFAULT_PATH, ConfigError, load
    from controller.journal.log import Journal, JournalCorrupt, JournalError
    from controller.table import Table, TableError

    journal_needed = args.archive is None  # an archive is read as it is, with no table.toml
    if journal_needed and not args.sim and args.config is None and args.state_dir is None and not DEFAULT_PATH.exists():
        if SIM_STATE_ROOT.is_dir():
            _refuse(f"no {DEFAULT_PATH}: for the simulated table `make run` started here ({SIM_STATE_ROOT}), add --sim")
        _refuse(f"no {DEFAULT_PATH}: add --config FILE, --state-dir DIR, or --sim in the directory `make run` ran in")
    if args.export and args.round is None:
        _refuse("--export needs --round N: which round's file to write")
    if args.round is None and not 1 <= args.last <= 100000:
        _refuse(f"--last {args.last}: a whole number of rounds, 1 or more")
    where = "the journal"
    current: int | None = None  # the journal's last round: its payouts may still be due
    try:
        if args.archive is not None:
            records = _archived(args)
            where = f"the archive {args.archive}"
        else:
            if args.sim:
                _sim_game(args)
            config = _with_game(args, load(args.config, simulated=args.sim))
            journal = Journal(_state_dir(args, config) / "journal.sqlite3", readonly=True)
            if args.software:
                return _software_history(journal, args.json)
            table = Table(journal, game=config.game, rules=config.rules, table_id=config.table_id, simulated=args.sim)
            found = table.rounds.get(args.round) if args.round is not None else None
            records = [found] if found is not None else [] if args.round is not None else table.last_rounds(args.last)
            current = table.round_no
    except JournalCorrupt as exc:
        _damaged(exc)
    except (ConfigError, JournalError, TableError) as exc:
        _refuse(str(exc))
    except ValueError as exc:  # an entry of another game's round: the journal is not this game's table
        _refuse(f"{where}: the journal is not a {config.game} table's ({exc}): add --game or --config")
    if args.round is not None and not records:
        _refuse(f"--round {args.round}: there is no round {args.round} in {where}")
    if args.export:
        record = records[0]
        if record.status == "void":
            _refuse(f"--round {record.number}: the round was void (every wager went back); it has no round file")
        if record.round_file is None:
            _refuse(f"--round {record.number}: the round is still open; its round file exists once it is settled")
        text = json.dumps(record.round_file, indent=2) + "\n"
        if args.export == "-":
            sys.stdout.write(text)
        else:
            Path(args.export).write_text(text, encoding="utf-8")
        return 0
    if args.json:
        print(
            json.dumps(
                [{**r.to_json(with_file=True), "payment": _payment(r, current)} for r in records], indent=2
            )
        )
        return 0
    for record in records:
        print(_recall_text(record, current))
    return 0


def _software_history(journal: Any, as_json: bool) -> int:
    """`tablectl recall --software`: every install, upgrade and removal the journal records."""
    from controller.security import installs

    records = installs.history(journal)
    if as_json:
        print(json.dumps([{"seq": e.seq, "at": e.at, **e.body} for e in records], indent=2))
    else:
        for entry in records:
            print(installs.describe(entry))
        if not records:
            print("no install of a signed release is recorded in this journal")
    return 0


def _software(args: argparse.Namespace) -> int:
    """`tablectl software record`: journal an install step (controller/security/installs.py)."""
    from controller.app.config import ConfigError, load
    from controller.security import installs

    try:
        config = load(args.config, simulated=args.sim)
    except ConfigError as exc:
        _refuse(str(exc))
    release = installs.installed_release()
    if release is None:
        _refuse("this is not a signed release (no manifest beside the code): nothing to record")
    state_dir = _state_dir(args, config)
    from controller.app.startup import StartRefused, lock_state_dir
    from controller.journal.log import Journal, JournalError
    from controller.table import Table, TableError

    try:  # the lock every journal writer takes: never beside a running table
        lock = lock_state_dir(state_dir, "tablectl software record")
    except StartRefused as exc:
        _refuse(f"{exc}: stop the table first (`sudo systemctl stop tablectl`), then record the install")
    try:
        try:
            journal = Journal(state_dir / "journal.sqlite3")
            try:
                table = Table(journal, game=config.game, rules=config.rules, table_id=config.table_id)
                last = installs.history(journal, 1)
                previous = last[-1].body if last else None
                entry = table.software_installed(installs.body(args.action, release, args.by, previous))
            finally:
                journal.close()
        except (JournalError, TableError, ValueError) as exc:
            _refuse(str(exc))
    finally:
        lock.close()
    print(f"journaled as entry {entry.seq}: {installs.describe(entry)}")
    return 0


def _archived(args: argparse.Namespace) -> list[Any]:
    """Rounds from the archive retention wrote (one round, or the last N)."""
    from collections import deque

    from controller.journal.retention import archived_rounds
    from controller.journal.rounds import RoundRecord

    if args.round is not None:
        return [RoundRecord.from_record(r) for r in archived_rounds(args.archive) if r["round"] == args.round][:1]
    last: deque[dict[str, Any]] = deque(archived_rounds(args.archive), maxlen=args.last)
    return [RoundRecord.from_record(r) for r in last]


def _payment(record: Any, current: int | None) -> str | None:
    """How a recalled round stands with its payouts (controller.journal.rounds.payment)."""
    from controller.engine.base import RuleError
    from controller.games import adapter
    from controller.journal.rounds import payment_of

    game = (record.settlement or {}).get("game")
    if record.status != "settled" or not game:
        return None
    try:
        return payment_of(record, adapter(game).rules, current=record.number == current)
    except RuleError:
        return None


def _recall_text(record: Any, current: int | None = None) -> str:
    lines = [
        f"round {record.number}  {record.status:<8} opened {record.opened_at}  cards {' '.join(record.cards) or '-'}"
    ]
    how = _payment(record, current)
    if how is not None:
        from controller.journal.rounds import PAYMENT_WORDS

        o = record.override
        why = f": {o['by']} let the next round open without the confirm ({o['reason']})" if o else ""
        lines.append(f"  payouts: {PAYMENT_WORDS[how]}{why}")
    settlement = record.settlement or {}
    if "void" in settlement:
        lines.append(f"  void by {settlement['void']['by']}: {settlement['void']['reason']}")
    if "game" in settlement:  # the game's own lines (Grand Slam: a line per seat, the blind hand)
        from controller.engine.base import RuleError
        from controller.games import adapter

        try:
            lines.extend(adapter(settlement["game"]).recall_lines(settlement))
        except RuleError as exc:
            lines.append(f"  ({exc}: its settlement is in --json)")
    return "\n".join(lines)


def _journal(args: argparse.Namespace) -> int:
    from controller.app.config import DEFAULT_PATH, ConfigError, load
    from controller.cli import journal as journal_tools
    from controller.journal.log import JournalCorrupt, JournalError
    from controller.table import TableError

    synth = args.journal_command == "synth"
    try:
        if args.sim and not synth:  # as `recall --sim`: the one simulated table here, or --game
            _sim_game(args)
        if synth or args.config is not None or args.sim or args.state_dir is None or DEFAULT_PATH.exists():
            config = load(args.config, simulated=args.sim or synth)
            if not synth:
                config = _with_game(args, config)
        elif args.game is not None:
            _refuse(f"--game {args.game} needs --sim: a journal is read as the game its own rounds are of")
        else:  # `--state-dir D` on a machine with no table.toml: the journal's own game and rules
            config = journal_tools.config_of_journal(Path(args.state_dir))
        state_dir = _state_dir(args, config)
        with _journal_writer(args.journal_command, state_dir):
            return journal_tools.run(args, config, state_dir)
    except JournalCorrupt as exc:
        _damaged(exc)
    except (ConfigError, JournalError, TableError, OSError) as exc:
        _refuse(str(exc))


#: The journal commands that write the journal: never beside a running table (or each other).
JOURNAL_WRITERS = ("rebuild", "retain", "accept-loss", "synth")


@contextlib.contextmanager
def _journal_writer(command: str, state_dir: Path) -> Iterator[None]:
    """Hold the state directory's lock (controller/app/startup.py) while a journal command writes: a
    running table, or another writer, holds it, and the command is refused in one line. Commands
    that only read (verify) take no lock and run beside the table."""
    if command not in JOURNAL_WRITERS or not (state_dir.is_dir() or command == "synth"):
        yield  # a read, or no journal here: journal_tools says so
        return
    from controller.app.startup import StartRefused, StateDirBusy, lock_state_dir

    try:
        lock = lock_state_dir(state_dir, f"tablectl journal {command}")
    except StateDirBusy as exc:
        _refuse(
            f"{exc}: `tablectl journal {command}` writes the journal, which only one process may do; stop the "
            "table first (`sudo systemctl stop tablectl`, or Ctrl+C where it runs) and run it again"
        )
    except StartRefused as exc:
        _refuse(str(exc))
    try:
        yield
    finally:
        lock.close()


def _report(args: argparse.Namespace) -> int:
    import gc

    from controller.analytics import report
    from controller.app.config import ConfigError, load
    from controller.journal.log import Journal, JournalCorrupt, JournalError

    # A report builds hundreds of thousands of small objects it keeps to the end, and makes no
    # cycles worth collecting: the cyclic collector would walk them all again and again (a fifth
    # of a 90-day report's time). This process ends when the report is printed.
    gc.disable()

    try:
        start, end = report.parse_time(args.start, "--from"), report.parse_time(args.end, "--to")
    except ValueError as exc:
        _refuse(str(exc))
    if end <= start:
        _refuse(f"--to {args.end} is not after --from {args.start}")
    if not 1 <= args.close_after <= 100:
        _refuse(f"--close-after {args.close_after}: the rounds without a wager that end a session, 1 to 100")
    try:
        if args.sim:
            _sim_game(args)
        config = _with_game(args, load(args.config, simulated=args.sim))
        if args.store is not None:
            doc = _report_from_store(args, config, start, end)
        else:
            if args.site is not None:
                _refuse("--site names a table's site in the floor store: it goes with --store")
            if args.table is not None and args.table != config.table_id:
                _refuse(f"--table {args.table}: this journal is table {config.table_id}'s ({config.source})")
            state_dir = _state_dir(args, config)
            journal = Journal(state_dir / "journal.sqlite3", readonly=True)
            try:
                doc = report.build(
                    journal, start, end, table=config.table_id, game=config.game, cache_dir=state_dir,
                    close_after=args.close_after,
                )  # fmt: skip
            finally:
                journal.close()
    except JournalCorrupt as exc:
        _damaged(exc)
    except (ConfigError, JournalError, ValueError) as exc:
        _refuse(str(exc))
    form = (
        report.as_json if args.json else report.as_csv if args.csv else report.as_html if args.html else report.as_text
    )
    print(form(doc))
    return 0


def _report_from_store(args: argparse.Namespace, config: Any, start: float, end: float) -> dict[str, Any]:
    """The report of table `--table` (else the configuration's) from its entries in the floor
    store, played under the configuration's game and rules (the table's own)."""
    from controller.analytics import report
    from controller.analytics.store_source import StoredJournal
    from controller.floor.store import FloorStoreError, open_store, redact
    from controller.table.state import TableSetup

    table = args.table or config.table_id
    state_dir = _state_dir(args, config)
    try:
        store = open_store(args.store)
    except FloorStoreError as exc:
        _refuse(str(exc))
    try:
        setup = TableSetup.of(config.game, config.rules, config.seats)
        journal = StoredJournal.load(store, args.site, table, setup, name=redact(args.store), until=end)
    finally:
        store.close()
    return report.build(
        journal, start, end, table=table, game=config.game, cache_dir=state_dir if state_dir.is_dir() else None,
        close_after=args.close_after,
    )  # fmt: skip


def _analyze(args: argparse.Namespace) -> int:
    from controller.cli import analyze as analysis_cli

    return analysis_cli.run(args)


def _floor(args: argparse.Namespace) -> int:
    from controller.floor import cli as floor_cli

    return floor_cli.run(args)


def _doctor(args: argparse.Namespace) -> int:
    from controller.cli.doctor import format_report, has_errors, run_checks

    if args.sim:
        _sim_game(args)
    if args.game is not None:
        _with_game(args, _load_or_refuse(args))  # checks the name and that it needs --sim
    checks = run_checks(args.config, simulated=args.sim, state_dir=args.state_dir, game=args.game)
    print(format_report(checks), end="")
    return 1 if has_errors(checks) else 0


def _load_or_refuse(args: argparse.Namespace) -> Any:
    from controller.app.config import ConfigError, load

    try:
        return load(args.config, simulated=args.sim)
    except ConfigError as exc:
        _refuse(str(exc))


def _verify(args: argparse.Namespace) -> int:
    from controller.app.config import DEFAULT_PATH, ConfigError, load
    from controller.cli import verify as authentication_cli

    try:  # with no table.toml here at all (a regulator's own machine), the defaults
        config = load(args.config, simulated=args.sim or (args.config is None and not DEFAULT_PATH.exists()))
    except ConfigError as exc:
        _refuse(str(exc))
    return authentication_cli.run(args, config, _state_dir(args, config))


def _rollback(args: argparse.Namespace) -> int:
    from controller.cli import rollback

    return rollback.run(args)


def _run(args: argparse.Namespace) -> int:
    import gc

    # Start-up makes many objects and frees few (modules, the API's models, the game's tables): the
    # cyclic collector's passes over them are held off until the daemon has started, where it
    # collects once and sets its own thresholds (controller/app/daemon.py, _settle_garbage_collector).
    # (Measured on a busy machine: the imports alone took 0.07-0.15 s less CPU, of 0.5-0.6 s.)
    held = gc.get_threshold()
    gc.set_threshold(0)
    try:
        return _run_table(args)
    finally:
        if gc.get_threshold()[0] == 0:  # refused before it started: as it was (a test's process goes on)
            gc.set_threshold(*held)


def _run_table(args: argparse.Namespace) -> int:
    import asyncio

    from controller.app.config import ConfigError, load

    if args.demo and not args.sim:
        _refuse("--demo needs --sim: a simulated dealer never deals at a live table")
    from controller.adapters.logs import configure

    configure(label="SIMULATED " if args.sim else "")
    try:
        config = _with_game(args, load(args.config, simulated=args.sim))
    except ConfigError as exc:
        _refuse(str(exc))
    host, port = config.http.host, config.http.port
    if args.http:
        host, _, port_text = args.http.rpartition(":")
        if host.startswith("[") and host.endswith("]"):  # [::]:8000, an IPv6 address as in a URL
            host = host[1:-1]
        if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            _refuse(f"--http {args.http}: give HOST:PORT, such as 127.0.0.1:8000 (0.0.0.0:8000 for every address)")
        port = int(port_text)
    state_dir = _state_dir(args, config)

    async def table() -> int:
        # The port bound and the API's process started first (controller/app/early.py): it loads
        # FastAPI and the app while this process loads the table's code, below, and opens the table.
        from controller.app.early import start_early

        early = await start_early(config, state_dir, host, port)
        try:
            from controller.api.launch import TABLE_ON_FIRST_USE, modules_loaded_on_first_use

            modules_loaded_on_first_use(TABLE_ON_FIRST_USE)  # before the table's drivers import them
            from controller.app.daemon import Daemon

            daemon = Daemon(
                config,
                simulated=args.sim,
                demo=args.demo,
                state_dir=state_dir,
                host=host,
                port=port,
                seed=args.seed,
                demo_interval=args.demo_interval,
                early=early,
            )
            return await daemon.run()
        except BaseException:  # refused, or ended on an error: its API's process does not outlive it
            await early.close()
            raise

    try:
        return asyncio.run(table())
    except Exception as exc:  # the refusals' types are loaded only when one comes: after the API's start
        return _start_refused(exc)


def _start_refused(exc: Exception) -> int:
    """`tablectl run` refused to start: one line saying why, and the exit status that says how."""
    from controller.api.auth import TokenError
    from controller.app.config import ConfigError
    from controller.app.startup import StartRefused, StateDirBusy
    from controller.journal.log import JournalCorrupt, JournalError, JournalUnwritable
    from drivers.pins import PinError

    if isinstance(exc, StateDirBusy):  # one table daemon a state directory: nothing written, no token made
        stop = f"`kill {exc.pid}`" if exc.pid is not None else "Ctrl+C where it runs"
        print(
            f"tablectl: cannot start: {exc}: one table a journal; stop that one first (`sudo systemctl stop "
            f"tablectl`, or {stop}) or give this one another --state-dir",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    if isinstance(exc, StartRefused):  # the port, the state directory: nothing was written, no token made
        print(f"tablectl: cannot start: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    if isinstance(exc, JournalCorrupt):
        _damaged(exc, "cannot start")
    if isinstance(exc, _floor_refusals()):  # the [floor] section; a journal behind the floor's copy, or forked from it
        print(f"tablectl: cannot start: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if isinstance(exc, JournalUnwritable):  # the disk is full even for opening: systemd starts it again
        print(f"tablectl: cannot start: {exc}", file=sys.stderr)
        return EXIT_TEMPFAIL
    if isinstance(exc, (TokenError, JournalError, ConfigError, PinError)):
        print(f"tablectl: cannot start: {exc}", file=sys.stderr)
        return EXIT_CONFIG  # EX_CONFIG: systemd does not restart into the same refusal forever
    if isinstance(exc, OSError):
        print(f"tablectl: cannot start: {exc}", file=sys.stderr)
        return 1
    raise exc


#: The floor's exceptions that refuse a start, by module (see _floor_refusals).
FLOOR_REFUSALS = (
    ("controller.adapters.floor.config", "FloorConfigError"),
    ("controller.adapters.floor.history", "HistoryRefused"),
)


def _floor_refusals() -> tuple[type[Exception], ...]:
    """The floor's refusals to start (its configuration, the journal's history against the floor's
    copy), for an except clause, which Python evaluates only when an exception comes: the floor's
    modules (its MQTT client, paho) are loaded only by a table that has a [floor], and only they
    raise these, so a table without one never imports them."""
    found = []
    for module, name in FLOOR_REFUSALS:
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


if __name__ == "__main__":
    sys.exit(main())
