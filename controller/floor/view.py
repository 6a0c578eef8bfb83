"""`tablectl floor --broker URL`: every table publishing to the broker, one line each, live.

    tablectl floor: mqtts://floor.casino.lan:8883 (connected), 2 table(s)
    2 table(s): 1 with faults, 1 OFFLINE
    SITE        PIT    TABLE  GAME        STATUS   ROUND         SEQ  FAULTS           ROUNDS  WAGERED  PAID  LAST
    main-floor  pit-1  GS-02  jokers-22   OFFLINE  7 open        201  1: Shoe silent        6      300   240  20:58:02
    main-floor  pit-1  GS-01  grand-slam  online   12 settled    418  -                    11      845   910  21:04:33

It subscribes to `tablectl/+/+/+` (or one site's topics) at QoS 1. The retained status, fault and
meters messages fill the board as soon as it connects; entries and settlements then move it.
Messages it cannot read are counted and named on the last line, never fatal.

Readable at a thousand tables: tables with open faults come first, then those offline, then the
rest by site, pit and table (`--sort table|pit|last` orders them otherwise, faults still first);
`--pit P` shows one pit (the pit is the table's `floor.pit`, carried in its status); on a
terminal the board is cut to the screen's height with a line saying how many are not shown.
`--http HOST:PORT` serves the same board as a web page instead (controller/floor/web.py).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, FloorConfigError, check_level, parse_broker, read_password

CLEAR = "\x1b[H\x1b[2J"


@dataclass
class TableView:
    """What the floor knows of one table, from its messages."""

    site: str
    table: str
    pit: str = ""
    status: str = "?"
    game: str = "?"
    boot: str = ""
    seq: int = 0
    round: int | None = None
    round_status: str = ""
    last_at: str = ""
    faults: list[dict[str, Any]] = field(default_factory=list)
    meters: dict[str, Any] = field(default_factory=dict)


class FloorBoard:
    """Every table seen on the broker. `take` one message at a time, `render` it whenever."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, str], TableView] = {}
        self.ledger = schema.Ledger()
        self.refused = 0
        self.last_refusal = ""

    def take(self, topic: str, data: bytes | bytearray) -> bool:
        """Apply one message; False when it is a repeat or cannot be read (then it is counted)."""
        try:
            message = schema.parse(topic, data)
        except schema.FloorMessageError as exc:
            self.refused += 1
            self.last_refusal = str(exc)
            return False
        if not self.ledger.take(message):
            return False
        view = self.tables.setdefault((message.site, message.table), TableView(message.site, message.table))
        p = message.payload
        view.boot = message.boot
        if message.kind == "status":
            view.status = str(p.get("status", "?"))
            view.game = str(p.get("game", view.game))
            view.pit = str(p["pit"]) if isinstance(p.get("pit"), str) else ""
        elif message.kind == "entry":
            view.seq = max(view.seq, int(p["seq"]))
            view.last_at = str(p.get("at", ""))
            if isinstance(p.get("round"), int) and p["round"] != view.round:
                view.round, view.round_status = p["round"], "open"
        elif message.kind == "settlement":
            if isinstance(p.get("round"), int) and (view.round is None or p["round"] >= view.round):
                view.round, view.round_status = p["round"], str(p.get("status", ""))
        elif message.kind == "fault":
            view.faults = [f for f in p.get("open", []) if isinstance(f, dict)]
        elif message.kind == "meters":
            view.game = str(p.get("game", view.game))
            meters = p.get("meters")
            view.meters = meters if isinstance(meters, dict) else {}
        return True


COLUMNS = ("SITE", "PIT", "TABLE", "GAME", "STATUS", "ROUND", "SEQ", "FAULTS", "ROUNDS", "WAGERED", "PAID", "LAST")
_RIGHT = {"SEQ", "ROUNDS", "WAGERED", "PAID"}
#: How the board may be ordered; faulted tables come first in every order, then offline ones.
SORTS = ("pit", "table", "last")


def _sort_key(sort: str) -> Callable[[TableView], tuple[Any, ...]]:
    def key(view: TableView) -> tuple[Any, ...]:
        urgent = (not view.faults, view.status == "online")
        if sort == "table":
            return (*urgent, view.table, view.site)
        if sort == "last":  # the longest silent first: a table that stopped sending stands out
            return (*urgent, view.last_at, view.site, view.table)
        return (*urgent, view.site, view.pit, view.table)

    return key


def select(board: FloorBoard, *, pit: str | None = None, sort: str = "pit") -> list[TableView]:
    """The tables to show, in order: those with open faults first, then offline ones, then the rest."""
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}, not {sort!r}")
    views = [v for v in board.tables.values() if pit is None or v.pit == pit]
    views.sort(key=_sort_key(sort))
    return views


def summary(views: list[TableView]) -> str:
    """One line: how many tables, how many with faults, how many offline."""
    faulted = sum(1 for v in views if v.faults)
    offline = sum(1 for v in views if v.status != "online")
    return f"{len(views)} table(s): {faulted} with faults, {offline} OFFLINE"


def _row(view: TableView) -> tuple[str, ...]:
    if view.faults:
        first = view.faults[0]
        faults = f"{len(view.faults)}: {first.get('title') or first.get('code', '?')}"
    else:
        faults = "-"
    meters = view.meters
    last = view.last_at[11:19] if len(view.last_at) >= 19 else view.last_at  # HH:MM:SS of the entry, UTC
    return (
        view.site,
        view.pit or "-",
        view.table,
        view.game,
        "online" if view.status == "online" else view.status.upper(),
        f"{view.round} {view.round_status}" if view.round is not None else "-",
        str(view.seq) if view.seq else "-",
        faults[:30],
        str(meters.get("rounds", "-")),
        str(meters.get("total_wagered", "-")),
        str(meters.get("total_paid", "-")),
        last or "-",
    )


def render(
    board: FloorBoard, header: str = "", *, pit: str | None = None, sort: str = "pit", rows: int | None = None
) -> str:
    """The board as text: a summary line, then one line per table (faulted first, see `select`),
    columns aligned; at most `rows` lines in all (a terminal's height), the rest counted."""
    views = select(board, pit=pit, sort=sort)
    lines = [header] if header else []
    lines.append(summary(views) + (f" in pit {pit}" if pit is not None else ""))
    tail = [f"{board.refused} message(s) not understood; the last: {board.last_refusal}"] if board.refused else []
    shown = views
    if rows is not None:
        room = max(1, rows - len(lines) - len(tail) - 2)  # the column heads and the "not shown" line
        if len(views) > room:
            shown = views[:room]
    table = [COLUMNS, *(_row(v) for v in shown)]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    for r in table:
        cells = [c.rjust(w) if name in _RIGHT else c.ljust(w) for c, w, name in zip(r, widths, COLUMNS, strict=True)]
        lines.append("  ".join(cells).rstrip())
    if len(shown) < len(views):
        more = len(views) - len(shown)
        lines.append(f"... {more} more table(s) not shown: choose one pit with --pit or a site with --site")
    if not board.tables:
        lines.append("(no table has published yet)")
    elif not views:
        lines.append(f"(no table in pit {pit})")
    lines.extend(tail)
    return "\n".join(lines) + "\n"


def board_json(board: FloorBoard, header: str, *, pit: str | None = None, sort: str = "pit") -> dict[str, Any]:
    """The board for the web page (controller/floor/web.py): the same rows as the terminal's, in
    the same order, each with its pit, status and faults as data."""
    views = select(board, pit=pit, sort=sort)
    return {
        "header": header,
        "summary": summary(views),
        "columns": list(COLUMNS),
        "tables": [
            {"row": list(_row(v)), "pit": v.pit, "online": v.status == "online", "faults": len(v.faults)} for v in views
        ],
        "pits": sorted({v.pit for v in views if v.pit}),
        "refused": board.refused,
        "last_refusal": board.last_refusal,
    }


class FloorSubscription:
    """A subscription to the floor topics that feeds a FloorBoard from paho's network thread."""

    def __init__(
        self,
        broker: Broker,
        board: FloorBoard,
        *,
        site: str | None = None,
        username: str | None = None,
        password: str | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> None:
        self.broker = broker
        self.board = board
        # Exactly four levels: the tables' messages, not the catch-up requests and replies below them.
        self.filter = f"{schema.ROOT}/{site}/+/+" if site else schema.EVENTS_FILTER
        self.lock = threading.Lock()  # held while the board changes and while it is rendered
        self.changed = threading.Event()
        self.connected = threading.Event()
        self.trouble = ""
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311, clean_session=True)
        if broker.tls:
            self._client.tls_set(ca_certs=ca_file, certfile=cert_file, keyfile=key_file)
        if username is not None:
            self._client.username_pw_set(username, password)
        self._client.reconnect_delay_set(1, 10)
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message

    def start(self) -> None:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=30)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            self.trouble = f"{self.broker} refused the connection: {reason}"
        else:
            self.trouble = ""
            client.subscribe(self.filter, qos=1)  # again at every connection: the session is clean
            self.connected.set()
        self.changed.set()

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        self.trouble = f"cannot reach {self.broker}; retrying"
        self.changed.set()

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self.connected.clear()
        self.trouble = f"lost {self.broker} ({reason}); reconnecting"
        self.changed.set()

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self.lock:
            if self.board.take(message.topic, message.payload):
                self.changed.set()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--broker", required=True, metavar="URL", help="mqtts://host:8883 or mqtt://host:1883")
    parser.add_argument("--site", help="only this site's tables")
    parser.add_argument("--username", help="broker user (the password comes from --password-file)")
    parser.add_argument("--password-file", metavar="FILE", help="a file holding the broker password")
    parser.add_argument("--ca-file", metavar="FILE", help="with mqtts://: the CA that signed the broker's certificate")
    parser.add_argument("--cert-file", metavar="FILE", help="with mqtts://: a client certificate (with --key-file)")
    parser.add_argument("--key-file", metavar="FILE", help="the client certificate's key")
    parser.add_argument("--once", action="store_true", help="print the board once after --wait seconds and exit")
    parser.add_argument("--wait", type=float, default=2.0, metavar="S", help="with --once: seconds to listen (2)")
    parser.add_argument("--pit", help="only the tables of this pit (a table's floor.pit)")
    parser.add_argument("--sort", choices=SORTS, default="pit", help="faulted, then offline tables first; then (pit)")
    parser.add_argument(
        "--http", metavar="[HOST:]PORT", help="serve the board as a read-only web page (host 127.0.0.1 by default)"
    )
    parser.add_argument(
        "--http-password-file", metavar="FILE", help="with --http: the page's password (required off 127.0.0.1)"
    )


def run(args: argparse.Namespace) -> int:
    """The floor view: 0 when stopped with Ctrl+C (or after --once), 1 when --once never reached
    the broker, 2 for a refused argument."""
    try:
        subscription = _subscription(args)
    except FloorConfigError as exc:
        print(f"tablectl floor: refused: {exc}", file=sys.stderr)
        return 2
    if args.http is not None:
        from controller.floor import web

        try:
            page = web.FloorPage.from_args(
                subscription, args.http, args.http_password_file, pit=args.pit, sort=args.sort
            )
        except FloorConfigError as exc:
            print(f"tablectl floor: refused: {exc}", file=sys.stderr)
            return 2
        subscription.start()
        try:
            return page.serve_forever()
        finally:
            subscription.stop()
    subscription.start()
    try:
        if args.once:
            subscription.connected.wait(args.wait)
            time.sleep(max(0.0, min(args.wait, 0.5)))  # the retained messages follow the connection
            with subscription.lock:
                text = render(subscription.board, _header(subscription), pit=args.pit, sort=args.sort)
            sys.stdout.write(text)
            return 0 if subscription.connected.is_set() else 1
        tty = sys.stdout.isatty()
        while True:
            subscription.changed.wait()
            subscription.changed.clear()
            rows = shutil.get_terminal_size().lines if tty else None
            with subscription.lock:
                text = render(subscription.board, _header(subscription), pit=args.pit, sort=args.sort, rows=rows)
            sys.stdout.write((CLEAR if tty else "\n") + text)
            sys.stdout.flush()
            time.sleep(0.2)  # a burst of entries redraws once, not once per message
    except KeyboardInterrupt:
        return 0
    finally:
        subscription.stop()


def _header(subscription: FloorSubscription) -> str:
    state = subscription.trouble or "connected"
    return f"tablectl floor: {subscription.broker} ({state}), {len(subscription.board.tables)} table(s)"


def _subscription(args: argparse.Namespace) -> FloorSubscription:
    broker = parse_broker(args.broker, "--broker")
    if args.site is not None:
        check_level(args.site, "--site")
    if (args.cert_file is None) != (args.key_file is None):
        raise FloorConfigError("--cert-file: a client certificate needs both --cert-file and --key-file")
    if not broker.tls and (args.ca_file or args.cert_file or args.password_file):
        raise FloorConfigError("--broker: certificates and passwords are only used over TLS; use mqtts://")
    if args.password_file and not args.username:
        raise FloorConfigError("--password-file: a password needs --username")
    if args.pit is not None:
        check_level(args.pit, "--pit")
    if args.http_password_file and args.http is None:
        raise FloorConfigError("--http-password-file is the web page's password; it needs --http")
    if args.wait < 0:
        raise FloorConfigError(f"--wait {args.wait}: seconds, 0 or more")
    password = read_password(args.password_file, "--password-file") if args.password_file else None
    return FloorSubscription(
        broker,
        FloorBoard(),
        site=args.site,
        username=args.username,
        password=password,
        ca_file=args.ca_file,
        cert_file=args.cert_file,
        key_file=args.key_file,
    )
