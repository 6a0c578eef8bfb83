"""`tablectl floor ...`: the live view, the floor store's consumer, and the store's export and check.

    tablectl floor --broker URL                         every table, live in the terminal (view.py)
    tablectl floor --broker URL --store URL             keep every table's entries in the store
    tablectl floor --broker URL --store postgresql://... --group G   one of several consumers sharing the work
    tablectl floor export --store URL --table T [--site S] [--json] [--check [--broker URL]]
    tablectl floor enroll --store URL --site S --table T --key FILE|FINGERPRINT [--replace] [--by NAME]
    tablectl floor enroll --store URL --list [--site S] [--table T]

`export` prints a table's stored entries in journal order (with --json one object a line: site,
table, boot, seq, kind, entry). `--check` compares the store with what the table reports (asked
over the broker with --broker, else the last the table told the store) and exits 1 when the store
lacks an entry or holds one that differs from what was first stored; 0 when it is whole.

`enroll` enrols a table's signing key in the store (controller/security/chainhead.py): its fingerprint as
`tablectl verify` prints it on the table (`sha256:...`), or the table's `table.pub` file. The
store accepts the table's signed chain heads under that key only; a table already enrolled with
another key keeps it unless `--replace` is given (a re-enrolment, kept with the ones before it).
`--list` prints every enrolment.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

EXIT_GAP = 1
EXIT_REFUSED = 2


def add_arguments(parser: argparse.ArgumentParser, rest: Sequence[str]) -> None:
    """The options of `tablectl floor`, given the words after it (`export` has its own)."""
    from controller.floor import view

    parser.epilog = (
        "tablectl floor export --store URL --table T [--json] [--check]: a table's stored entries; "
        "tablectl floor enroll --store URL --site S --table T --key FILE|FINGERPRINT: enrol a table's key"
    )
    if list(rest[:1]) in (["export"], ["enroll"]):
        sub = parser.add_subparsers(dest="floor_command", metavar="export|enroll", required=True)
        export = sub.add_parser("export", help="a table's entries from the floor store, in order")
        export.add_argument("--store", required=True, metavar="URL", help="sqlite:///path or postgresql://...")
        export.add_argument("--table", required=True, metavar="T", help="the table id")
        export.add_argument("--site", help="the site (needed when the table id is on two sites)")
        export.add_argument("--json", action="store_true", help="one JSON object a line")
        export.add_argument("--check", action="store_true", help="exit 1 when the store lacks an entry the table has")
        export.add_argument("--broker", metavar="URL", help="with --check: ask the table itself how far it is")
        _credentials(export)
        export.add_argument("--wait", type=float, default=5.0, metavar="S", help="with --broker: seconds (5)")
        enroll = sub.add_parser("enroll", help="enrol a table's signing key in the floor store, or --list them")
        enroll.add_argument("--store", required=True, metavar="URL", help="sqlite:///path or postgresql://...")
        enroll.add_argument("--site", help="the table's site ([floor] site on the table)")
        enroll.add_argument("--table", metavar="T", help="the table id")
        enroll.add_argument(
            "--key",
            metavar="FILE|FINGERPRINT",
            help="the table's table.pub, or its fingerprint sha256:... (tablectl verify prints it)",
        )
        enroll.add_argument("--replace", action="store_true", help="the table is enrolled with another key: replace it")
        enroll.add_argument("--by", help="who enrols (default: this user)")
        enroll.add_argument("--list", action="store_true", help="print every enrolment instead")
        return
    view.add_arguments(parser)
    parser.add_argument("--store", metavar="URL", help="keep every entry in this store: sqlite:///path or postgresql://")
    parser.add_argument("--consumer-id", metavar="ID", help="with --store: this consumer's name (a random one)")
    parser.add_argument(
        "--group", metavar="NAME", help="with --store postgresql://: share the work with the group's other consumers"
    )
    parser.add_argument("--probe", type=float, default=10.0, metavar="S", help="with --store: ask every table each S s")


def _credentials(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--username", help="broker user (the password comes from --password-file)")
    parser.add_argument("--password-file", metavar="FILE", help="a file holding the broker password")
    parser.add_argument("--ca-file", metavar="FILE", help="with mqtts://: the CA of the broker's certificate")
    parser.add_argument("--cert-file", metavar="FILE", help="with mqtts://: a client certificate (with --key-file)")
    parser.add_argument("--key-file", metavar="FILE", help="the client certificate's key")


def run(args: argparse.Namespace) -> int:
    if getattr(args, "floor_command", None) == "export":
        return export(args)
    if getattr(args, "floor_command", None) == "enroll":
        return enroll(args)
    if getattr(args, "store", None):
        return consume(args)
    from controller.floor import view

    return view.run(args)


def _refuse(words: str) -> int:
    print(f"tablectl floor: refused: {words}", file=sys.stderr)
    return EXIT_REFUSED


def _login(args: argparse.Namespace) -> dict[str, Any]:
    """The broker and credentials from the options, checked as the view checks them."""
    from controller.adapters.floor.config import FloorConfigError, parse_broker, read_password

    broker = parse_broker(args.broker, "--broker")
    if (args.cert_file is None) != (args.key_file is None):
        raise FloorConfigError("--cert-file: a client certificate needs both --cert-file and --key-file")
    if not broker.tls and (args.ca_file or args.cert_file or args.password_file):
        raise FloorConfigError("--broker: certificates and passwords are only used over TLS; use mqtts://")
    if args.password_file and not args.username:
        raise FloorConfigError("--password-file: a password needs --username")
    password = read_password(args.password_file, "--password-file") if args.password_file else None
    return {
        "broker": broker,
        "username": args.username,
        "password": password,
        "ca_file": args.ca_file,
        "cert_file": args.cert_file,
        "key_file": args.key_file,
    }


def consume(args: argparse.Namespace) -> int:
    """Run the floor store's consumer until SIGTERM or Ctrl+C."""
    from controller.adapters.floor.config import FloorConfigError
    from controller.floor.consumer import FloorConsumer
    from controller.floor.store import FloorStoreError

    logging.basicConfig(level=logging.INFO, format="%(asctime)s tablectl floor %(levelname)s %(message)s")
    if args.probe <= 0:
        return _refuse(f"--probe {args.probe}: seconds, more than 0")
    try:
        login = _login(args)
        broker = login.pop("broker")
        consumer = FloorConsumer(
            broker,
            args.store,
            consumer_id=args.consumer_id or f"store-{secrets.token_hex(4)}",
            group=args.group,
            site=args.site,
            probe_s=args.probe,
            **login,
        )
    except (FloorConfigError, ValueError) as exc:
        return _refuse(str(exc))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        consumer.start()
    except FloorStoreError as exc:
        print(f"tablectl floor: cannot start: {exc}", file=sys.stderr)
        return 78  # EX_CONFIG, as the daemon
    try:
        stop.wait()
    finally:
        consumer.stop()
    return 0


def export(args: argparse.Namespace) -> int:
    from controller.adapters.floor.config import FloorConfigError, check_level
    from controller.floor.store import FloorStoreError, open_store

    try:
        check_level(args.table, "--table")
        if args.site is not None:
            check_level(args.site, "--site")
        login = _login(args) if args.broker else None
    except FloorConfigError as exc:
        return _refuse(str(exc))
    if args.broker and not args.check:
        return _refuse("--broker is for --check: the export itself reads only the store")
    try:
        store = open_store(args.store)
    except FloorStoreError as exc:
        print(f"tablectl floor export: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        sites = sorted({s for s, t in store.tables() if t == args.table and args.site in (None, s)})
        if not sites:
            where = f" on site {args.site}" if args.site else ""
            print(f"tablectl floor export: the store has nothing of table {args.table}{where}", file=sys.stderr)
            return EXIT_GAP if args.check else EXIT_REFUSED
        if len(sites) > 1:
            return _refuse(f"--table {args.table} is on sites {', '.join(sites)}; say which with --site")
        site = sites[0]
        if args.json or not args.check:
            for entry in store.entries(site, args.table):
                if args.json:
                    sys.stdout.write(json.dumps(entry.to_json(), separators=(",", ":")) + "\n")
                else:
                    round_text = "-" if entry.round is None else str(entry.round)
                    body = json.dumps(entry.body, separators=(",", ":"))
                    sys.stdout.write(f"{entry.seq:>8}  {entry.at}  round {round_text:>5}  {entry.kind:<18} {body}\n")
        if not args.check:
            return 0
        return _check(store, site, args.table, login, args.wait)
    finally:
        store.close()


def enroll(args: argparse.Namespace) -> int:
    import getpass
    from pathlib import Path

    from controller.adapters.floor.config import FloorConfigError, check_level
    from controller.floor.store import EnrolmentRefused, FloorStoreError, open_store
    from controller.security.chainhead import KeyTextError, read_fingerprint

    try:
        for value, option in ((args.site, "--site"), (args.table, "--table")):
            if value is not None:
                check_level(value, option)
    except FloorConfigError as exc:
        return _refuse(str(exc))
    if not args.list:
        missing = [o for o, v in (("--site", args.site), ("--table", args.table), ("--key", args.key)) if not v]
        if missing:
            return _refuse(f"enroll needs {', '.join(missing)} (or --list)")
        given = Path(args.key)
        try:
            text = given.read_text(encoding="utf-8") if given.is_file() else args.key
            fingerprint = read_fingerprint(text)
        except (OSError, UnicodeDecodeError) as exc:
            return _refuse(f"--key {args.key}: cannot be read: {exc}")
        except KeyTextError as exc:
            return _refuse(f"--key {args.key}: {exc}")
    try:
        store = open_store(args.store)
    except FloorStoreError as exc:
        print(f"tablectl floor enroll: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        if args.list:
            for e in store.enrolments(args.site, args.table):
                replaced = f", replacing {e.replaces}" if e.replaces else ""
                print(f"{e.at}  {e.site}/{e.table}  enrolment {e.number}: {e.fingerprint} by {e.by}{replaced}")
            return 0
        by = args.by or getpass.getuser()
        try:
            done = store.enroll(args.site, args.table, fingerprint, by, replace=args.replace)
        except EnrolmentRefused as exc:
            return _refuse(str(exc))
        history = store.history(args.site, args.table)
        if done is None:
            print(f"{args.site}/{args.table}: key {fingerprint} is enrolled already; nothing changed")
        else:
            replaced = f", replacing {done.replaces}" if done.replaces else ""
            print(f"{args.site}/{args.table}: key {fingerprint} enrolled (enrolment {done.number}, by {by}{replaced})")
        alerts = f"; floor alerts at entries {', '.join(map(str, history['alerts']))}" if history["alerts"] else ""
        checked = f"the store has checked the table's history through entry {history['seq']}"
        print(f"{args.site}/{args.table}: {checked}{alerts}")
        return 0
    finally:
        store.close()


def _check(store: Any, site: str, table: str, login: dict[str, Any] | None, wait: float) -> int:
    from controller.adapters.floor import schema

    out = sys.stdout
    if login is not None:
        last = ask_last(site, table, wait=wait, **login)
        if last is None:
            print(f"{site}/{table}: the table did not answer within {wait:g} s; cannot tell", file=sys.stderr)
            return EXIT_GAP
        source = "the table says"
    else:
        last = store.progress(site, table).reported_last
        source = "the table last told the store"
    highest = store.progress(site, table).highest
    through = max(last, highest)
    gaps = store.missing(site, table, through)
    conflicts = store.conflicts(site, table)
    held = through - _count(gaps)
    words = f"{site}/{table}: {source} its journal ends at {last}; the store holds {held} of {through}"
    if not gaps and not conflicts:
        print(f"{words}: complete", file=out)
        return 0
    if gaps:
        ranges = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in gaps[:20])
        print(f"{words}: MISSING {ranges}{' ...' if len(gaps) > 20 else ''}", file=out)
    if conflicts:
        print(f"{site}/{table}: {schema.entries(len(conflicts))} came again different (floor_conflicts): "
              f"{', '.join(map(str, conflicts[:20]))}", file=out)  # fmt: skip
    return EXIT_GAP


def _count(gaps: list[tuple[int, int]]) -> int:
    return sum(b - a + 1 for a, b in gaps)


def ask_last(site: str, table: str, *, broker: Any, wait: float, **login: Any) -> int | None:
    """Ask the table over the broker how far its journal goes (a catch-up request for nothing)."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    from controller.adapters.floor import schema

    me = f"check-{secrets.token_hex(4)}"
    answer: list[int] = []
    done = threading.Event()
    correlation = secrets.token_bytes(8)
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"tablectl-floor-{me}", protocol=mqtt.MQTTv5)
    if broker.tls:
        client.tls_set(ca_certs=login.get("ca_file"), certfile=login.get("cert_file"), keyfile=login.get("key_file"))
    if login.get("username") is not None:
        client.username_pw_set(login["username"], login.get("password"))

    def on_subscribe(c: mqtt.Client, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.ResponseTopic = schema.reply_topic(site, table, me)
        props.CorrelationData = correlation
        request = {"v": schema.VERSION, "after": 0, "limit": 0}
        c.publish(schema.request_topic(site, table), schema.encode(request), 1, properties=props)

    def on_message(c: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        try:
            reply = schema.parse_reply(message.topic, message.payload)
        except schema.FloorMessageError:
            return
        if reply.kind == "end" and getattr(message.properties, "CorrelationData", None) == correlation:
            answer.append(int(reply.payload["last"]))
            done.set()

    client.on_connect = lambda c, u, f, reason, p: c.subscribe(schema.reply_topic(site, table, me), qos=1)
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect(broker.host, broker.port, keepalive=30, clean_start=True)
    except OSError as exc:
        print(f"tablectl floor export: cannot reach {broker}: {exc.strerror or exc}", file=sys.stderr)
        return None
    client.loop_start()
    try:
        done.wait(wait)
    finally:
        client.disconnect()
        client.loop_stop()
    return answer[0] if answer else None
