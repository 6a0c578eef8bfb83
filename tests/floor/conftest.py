"""A real Mosquitto broker per test on a free 127.0.0.1 port, a subscriber that records what it gets,
and a Grand Slam table whose journal the publisher sends.

The broker runs from a config file in tmp_path, with persistence on, so a persistent subscriber's
queue survives the broker's restart as it does on a floor server. It is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, FloorConfig
from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher
from controller.engine.cards import parse_card
from controller.floor.consumer import FloorConsumer
from controller.floor.store import open_store
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import free_port

WAIT_S = 15.0  # generous: an outcome that has not come by then is not coming
SITE = "test-floor"
#: Every card of a deck, dealt in this order from each table's fresh 6-deck shoe.
DECK = [f"{r}{s}" for s in "CDHS" for r in "23456789TJQKA"]


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        message = "the mosquitto broker is missing: install Debian's package `mosquitto` (apt-get install mosquitto)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


class Mosquitto:
    """One broker process, stoppable and restartable on the same port."""

    def __init__(self, binary: str, home: Path, extra: str = "") -> None:
        self.binary = binary
        self.home = home
        self.port = free_port()
        self.conf = home / "mosquitto.conf"
        self.log = home / "mosquitto.log"
        home.mkdir(parents=True, exist_ok=True)
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            f"user {getpass.getuser()}\n"  # as root it would otherwise switch to user mosquitto
            f"persistence true\npersistence_location {home}/\n"
            "max_queued_messages 0\n"
            f"log_dest file {self.log}\nlog_type all\n" + (extra or "allow_anonymous true\n")
        )
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def broker(self) -> Broker:
        return Broker("127.0.0.1", self.port, False)

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                log = self.log.read_text() if self.log.exists() else ""
                raise RuntimeError(f"mosquitto exited at start: {err}{log[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return
            time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on 127.0.0.1:{self.port}")

    def kill(self) -> None:
        """SIGKILL: the broker loses whatever it had not autosaved (sessions, queues)."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.send_signal(signal.SIGTERM)  # it writes its persistence file as it leaves
        try:
            self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@pytest.fixture(scope="session")
def mosquitto_bin() -> str:
    return mosquitto_binary()


@pytest.fixture
def mosquitto(mosquitto_bin: str, tmp_path: Path) -> Iterator[Mosquitto]:
    broker = Mosquitto(mosquitto_bin, tmp_path / "broker")
    broker.start()
    yield broker
    broker.stop()


class Subscriber:
    """A consumer of every table's messages (tablectl/+/+/+) at QoS 1 that records every message it gets, repeats included.

    With `persistent` it keeps its session (clean_session off, a fixed client id): the broker
    queues for it while it is away, which is how a floor system that must not miss an event reads."""

    def __init__(self, broker: Broker, client_id: str = "", *, persistent: bool = False) -> None:
        self.broker = broker
        self.messages: list[tuple[str, bytes]] = []
        self.changed = threading.Condition()
        self.subscribed = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311, clean_session=not persistent
        )
        self.client.reconnect_delay_set(1, 1)
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe(schema.EVENTS_FILTER, qos=1)
        self.client.on_subscribe = lambda c, u, mid, rcs, p: self.subscribed.set()
        self.client.on_message = self._on_message

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        with self.changed:
            self.messages.append((message.topic, bytes(message.payload)))
            self.changed.notify_all()

    def start(self) -> Subscriber:
        self.client.connect(self.broker.host, self.broker.port, keepalive=10)
        self.client.loop_start()
        assert self.subscribed.wait(WAIT_S), "the subscriber's subscription was never acknowledged"
        return self

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def parsed(self, kind: str | None = None) -> list[schema.FloorMessage]:
        with self.changed:
            got = list(self.messages)
        out = [schema.parse(t, p) for t, p in got]
        return [m for m in out if kind is None or m.kind == kind]

    def wait_for(self, done: Callable[[Subscriber], bool], timeout: float = WAIT_S) -> bool:
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                self.changed.release()
                try:
                    if done(self):
                        return True
                finally:
                    self.changed.acquire()
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.2))


def entries_taken(subscriber: Subscriber) -> list[int]:
    """The entry seqs a consumer keeps after dropping repeats with the Ledger, in arrival order."""
    ledger = schema.Ledger()
    return [m.seq for m in subscriber.parsed("entry") if ledger.take(m) and m.seq is not None]


def make_table(state: Path, table_id: str = "GS-01") -> Table:
    return Table(Journal(state / "journal.sqlite3"), game="grand-slam", rules={}, table_id=table_id, simulated=True)


def deal_rounds(table: Table, count: int) -> None:
    """`count` Grand Slam rounds, each one seat on first base, dealt to settlement."""
    for _ in range(count):
        if table.payouts_due():  # the dealer pays the last round before the next opens
            table.button("confirm", by="dealer")
        table.open_round({"seats": [{"seat": 2, "wagers": {"first": 10}}]}, by="dealer")
        while table.awaiting.kind == "card":
            table.card(parse_card(DECK[table.shoe.dealt_count % len(DECK)]), {"via": "shoe"})


def make_consumer(broker: Broker, store_url: str, consumer_id: str = "store-1", probe_s: float = 0.5) -> FloorConsumer:
    """An in-process floor store consumer that asks every table often (tests wait on it)."""
    consumer = FloorConsumer(broker, store_url, consumer_id=consumer_id, probe_s=probe_s, ask_timeout_s=2.0)
    consumer.start()
    return consumer


def store_matches_journal(store_url: str, table: Table) -> bool:
    """The store holds exactly the table's journal: every entry once, in order, as committed."""
    store = open_store(store_url)
    try:
        got = [r.to_json()["entry"] for r in store.entries(SITE, table.table_id)]
    finally:
        store.close()
    journal = Journal(table.journal.path, readonly=True)
    try:
        return got == [e.to_json() for e in journal.entries()]
    finally:
        journal.close()


def floor_config(broker: Broker, **extra: object) -> FloorConfig:
    return FloorConfig(broker=broker, site=SITE, **extra)  # type: ignore[arg-type]


def make_publisher(config: FloorConfig, table: Table, boot: str | None = None) -> FloorPublisher:
    """Built as the daemon builds it (the mark written here straight to the table's journal:
    sqlite3 connections may be shared between threads, and a test has no table loop)."""
    journal = table.journal
    publisher = FloorPublisher(
        config,
        journal.path,
        table_id=table.table_id,
        game=table.game_name,
        rules=table.rules_doc,
        mark=lambda seq: journal.set_meta(MARK_KEY, str(seq)),
        meta=journal.set_meta,
        boot=boot,
        reconnect_max_s=1,
    )
    table.listeners.append(publisher)
    return publisher


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A floor CA, the broker's certificate for 127.0.0.1 and a table's client certificate."""
    d = tmp_path_factory.mktemp("pki")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=floor test CA",
            "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    for name, extension in (("broker", "subjectAltName=IP:127.0.0.1"), ("table", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", f"{name}.key",
                "-out", f"{name}.csr")  # fmt: skip
        (d / f"{name}.ext").write_text(extension + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")  # fmt: skip
    return {p.stem + p.suffix.replace(".", "_"): p for p in d.iterdir()}


def wait_until(done: Callable[[], bool], timeout: float = WAIT_S, every: float = 0.05) -> bool:
    """Poll `done` until it holds or `timeout` seconds pass (for outcomes seen in a store)."""
    deadline = time.monotonic() + timeout
    while True:
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(every)


def postgres_bin() -> Path:
    """Debian's PostgreSQL server binaries (initdb, pg_ctl, postgres)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        message = "PostgreSQL is missing: install Debian's package `postgresql` (apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found[-1].parent


class Postgres:
    """A PostgreSQL server of our own: initdb in a temp directory, a Unix socket in it, no TCP.

    initdb refuses to run as root, so as root it runs as the `postgres` user (runuser)."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.home = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
        self.data = self.home / "data"
        self.port = free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            shutil.chown(self.home, "postgres", "postgres")

    def _run(self, *argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync",
                  "-E", "UTF8")  # fmt: skip
        self.resume()

    def resume(self) -> None:
        """Start the server on its existing data directory."""
        options = f"-k {self.home} -c listen_addresses='' -p {self.port} -c fsync=off -c max_connections=50"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.home / "log"), "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip

    def halt(self) -> None:
        """Stop the server (fast: its clients are cut off), keeping its data."""
        # pg_ctl stops the server whose PID is in this data directory's postmaster.pid: ours.
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.halt()
        shutil.rmtree(self.home, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.home}&port={self.port}"

    def new_database(self) -> str:
        import psycopg

        name = f"floor_{secrets.token_hex(4)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    server = Postgres(postgres_bin())
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty floor store of each kind."""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/floor.db"
    server: Postgres = request.getfixturevalue("postgres")
    return server.new_database()


SHIPPED = Path(__file__).resolve().parents[2] / "hardware" / "floor"
#: The broker's users: two tables (their ids), the floor store, surveillance and the live view.
PASSWORDS = {
    "GS-01": "pw-gs-01-aaaa",
    "GS-02": "pw-gs-02-bbbb",
    "BP-01": "pw-bp-01-dddd",
    "floor-store": "pw-store-cccc",
    "surveillance": "pw-surv-eeee",
    "floor-view": "pw-view-ffff",
}


@pytest.fixture
def shipped_broker(mosquitto_bin: str, certificates: dict[str, Path], tmp_path: Path) -> Iterator[Mosquitto]:
    """Mosquitto with the shipped conf.d file and ACL, paths moved into tmp_path, on 127.0.0.1."""
    broker = start_shipped_broker(mosquitto_bin, certificates, tmp_path)
    yield broker
    broker.stop()


def start_shipped_broker(
    mosquitto_bin: str, certificates: dict[str, Path], tmp_path: Path, acl: str | None = None
) -> Mosquitto:
    """The shipped broker, started (its ACL `acl` when given: the shipped one as an operator changed it)."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "acl").write_text((SHIPPED / "acl").read_text() if acl is None else acl)
    for name in ("ca_pem", "broker_pem", "broker_key"):
        shutil.copy(certificates[name], etc / name.replace("_", "."))
    for user, password in PASSWORDS.items():
        subprocess.run(["mosquitto_passwd", "-b", *([] if (etc / "passwd").exists() else ["-c"]), str(etc / "passwd"),
                        user, password], check=True, capture_output=True)  # fmt: skip
    broker = Mosquitto(mosquitto_bin, tmp_path / "broker")
    text = (SHIPPED / "mosquitto.conf").read_text().replace("/etc/mosquitto/floor/", f"{etc}/")
    assert "listener 8883\n" in text
    text = text.replace("listener 8883\n", f"listener {broker.port} 127.0.0.1\n")
    broker.conf.write_text(
        f"{text}\nuser {getpass.getuser()}\npersistence_location {broker.home}/\nlog_dest file {broker.log}\n"
    )
    broker.start()
    return broker


def shipped_config(broker: Mosquitto, user: str, tmp_path: Path, certificates: dict[str, Path]) -> FloorConfig:
    """A table's [floor] section for the shipped broker, logged in as `user`."""
    secret = tmp_path / f"{user}.pw"
    secret.write_text(PASSWORDS[user] + "\n")
    return FloorConfig(
        Broker("127.0.0.1", broker.port, True), SITE, user, str(secret), ca_file=str(certificates["ca_pem"])
    )


def shipped_store_consumer(broker: Mosquitto, store_url: str, certificates: dict[str, Path]) -> FloorConsumer:
    """The floor store's consumer as the shipped broker knows it (TLS, logged in as floor-store),
    started, into the store at `store_url`."""
    consumer = FloorConsumer(
        Broker("127.0.0.1", broker.port, True),
        store_url,
        consumer_id="store-1",
        username="floor-store",
        password=PASSWORDS["floor-store"],
        ca_file=str(certificates["ca_pem"]),
        probe_s=0.5,
    )
    consumer.start()
    return consumer
