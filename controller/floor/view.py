"""`tablectl floor --broker URL`: every table publishing to the broker, one line each, live.

    SITE        TABLE   GAME        STATUS   ROUND         SEQ  FAULTS               ROUNDS  WAGERED     PAID  LAST
    main-floor  GS-01   grand-slam  online   12 settled    418  -                        11      845      910  21:04:33
    main-floor  GS-02   jokers-22   OFFLINE  7 open        201  1: Shoe silent            6      300      240  20:58:02

It subscribes to `tablectl/+/+/+` (or one site's topics) at QoS 1. The retained status, fault and
meters messages fill the board as soon as it connects; entries and settlements then move it.
Messages it cannot read are counted and named on the header line, never fatal.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from controller.floor import schema
from controller.floor.config import Broker, FloorConfigError, check_level, parse_broker, read_password

CLEAR = "\x1b[H\x1b[2J"


@dataclass
class TableView:
    """What the floor knows of one table, from its messages."""

    site: str
    table: str
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


COLUMNS = ("SITE", "TABLE", "GAME", "STATUS", "ROUND", "SEQ", "FAULTS", "ROUNDS", "WAGERED", "PAID", "LAST")
_RIGHT = {"SEQ", "ROUNDS", "WAGERED", "PAID"}


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


def render(board: FloorBoard, header: str = "") -> str:
    """The board as text: one line per table, sorted by site and table, columns aligned."""
    rows = [COLUMNS, *(_row(board.tables[key]) for key in sorted(board.tables))]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [header] if header else []
    for r in rows:
        cells = [c.rjust(w) if name in _RIGHT else c.ljust(w) for c, w, name in zip(r, widths, COLUMNS, strict=True)]
        lines.append("  ".join(cells).rstrip())
    if len(rows) == 1:
        lines.append("(no table has published yet)")
    if board.refused:
        lines.append(f"{board.refused} message(s) not understood; the last: {board.last_refusal}")
    return "\n".join(lines) + "\n"


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


def run(args: argparse.Namespace) -> int:
    """The floor view: 0 when stopped with Ctrl+C (or after --once), 1 when --once never reached
    the broker, 2 for a refused argument."""
    try:
        subscription = _subscription(args)
    except FloorConfigError as exc:
        print(f"tablectl floor: refused: {exc}", file=sys.stderr)
        return 2
    subscription.start()
    try:
        if args.once:
            subscription.connected.wait(args.wait)
            time.sleep(max(0.0, min(args.wait, 0.5)))  # the retained messages follow the connection
            with subscription.lock:
                text = render(subscription.board, _header(subscription))
            sys.stdout.write(text)
            return 0 if subscription.connected.is_set() else 1
        tty = sys.stdout.isatty()
        while True:
            subscription.changed.wait()
            subscription.changed.clear()
            with subscription.lock:
                text = render(subscription.board, _header(subscription))
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
