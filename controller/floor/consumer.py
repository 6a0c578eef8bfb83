"""`tablectl floor --broker URL --store URL`: every table's entries into the floor store, none lost.

The consumer trusts neither the broker nor its own session. It connects with a clean start,
reads every table's whole entries off the surveillance topics (`tablectl/+/+/surveillance/entry`:
the general `entry` topic carries them as the dealer sees them, face-down cards masked, which is
not the journal) and the tables' status, and stores each entry (store.py, idempotent on table and
seq), and it asks the tables themselves (catchup.py) for whatever the store does not hold:

- when a table's seqs jump (a gap: the broker lost what was in between, or the consumer was away);
- when a table says, in its retained status or in a catch-up reply, that it has entries the store
  does not hold;
- at every connection, for every table the store knows, and every `probe_s` seconds: a table
  whose last entries were lost shows no gap until it deals again, so it is asked anyway. Each ask
  also tells the table how far this store holds everything (its floor-confirmed mark).

A reply comes in journal order and says how far the table's journal goes; a long backlog comes in
chunks, each asked for when the one before has been stored, a chunk's entries in pages (hundreds
to a message; a table from before pages sends them one a message, read alike). An ask that gets no reply (the table
is offline, or the broker lost the request) is asked again after `ask_timeout_s`.

**Several consumers, one store** (`group`, PostgreSQL): every consumer of a group subscribes to
the surveillance topics, the catch-up replies (`catchup/reply/<group>`) and the history requests
through MQTT 5 shared subscriptions (`$share/<group>/...`), so the broker hands each message to
one of them; each stores what it got, and the store's key (table, seq) makes any repeat a no-op.
A table's entries are spread over the group, so a consumer sees gaps that another consumer is
filling: a table counts as behind only when the store, whoever wrote it, still lacks an entry
`grace_s` seconds later, unless it lacks more than `FAR_BEHIND` entries (its status or its next
entries say so), more than other consumers could hold uncommitted: that table is asked at once.
An ask takes the table's claim row in the store first (`floor_claims`, lapsing after
`ask_timeout_s`), so no two consumers ask a table for the same gap at once; the
reply goes to the group, and whichever consumer reads its `end` releases the claim and asks for
the next chunk. The table's `end` names any hole in its own journal (`gaps`), so the floor alert
does not depend on which consumer stored which entry.

**Acknowledged after the commit**: the consumer's own MQTT 5 client (mqtt.py) acknowledges a
message (PUBACK) only once the transaction that stored it has committed, and only on the
connection it came on (one from before a reconnection is stored, never acknowledged on the new
connection: the broker sends it again there). The session is kept for `SESSION_EXPIRY_S` (clean
start off): Mosquitto 2 does not hand a gone member's unacknowledged messages to the rest of the
group, it keeps them in that client's session, so a consumer SIGKILLed mid-batch and started
again under its id is sent them again; one that stays away longer loses its session, and the
store fills the gap from the tables, as after any loss. Until then the broker deals the gone
member its share of the group's messages (kept in its session): the others find those entries
missing and ask the tables for them after the grace. A consumer stopped cleanly ends its session
(`stop`), so only a killed one costs that, for at most `SESSION_EXPIRY_S`. The store never trusts the broker: every
acknowledgement follows a commit, and the tables are asked for whatever is still missing.

Threads: the client's connection thread reads the socket in bulk and only queues what arrives;
one worker thread owns the store, so a slow disk never stalls the network and every write is one
transaction per batch. The queue holds at most `INBOX` messages and about `INBOX_BYTES` bytes: a
worker that falls behind makes the connection thread wait for room (still sending the
acknowledgements and pings), and the backlog stays unacknowledged on the broker (at most the
Receive Maximum in flight) and in the socket, not in this process's memory.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import queue
import secrets
import ssl
import threading
import time
from typing import Any, NamedTuple

from controller.adapters.floor import schema
from controller.adapters.floor.config import Broker, check_level
from controller.floor.mqtt import Connection, MalformedPacket, MqttError, Received
from controller.floor.store import FloorStore, StoredEntry, open_store, redact

log = logging.getLogger("tablectl.floor.consumer")

#: At most this many queued messages are stored in one transaction,
BATCH = 1000
#: and at most about this many bytes of them (a catch-up page holds hundreds of entries): about
#: 3,000 entries, so a batch of pages holds no more in memory than a few batches of live entries.
BATCH_BYTES = 1_000_000
#: How many unacknowledged messages the broker may have out to one consumer (MQTT 5 Receive
#: Maximum): a batch is acknowledged after its commit, so this bounds what a batch can hold.
RECEIVE_MAXIMUM = 4 * BATCH
#: At most this many tables are asked for what the store lacks by one consumer at once (its claims
#: not lapsed); the next is asked as one ends. Each answers up to schema.PAGED_LIMIT entries: with
#: 1,000 tables an hour behind asked at once the broker queued gigabytes of catch-up pages for the
#: group (Mosquitto grew to 23 GB and was OOM-killed). A table whose answer says `more` keeps its
#: claim and is asked for its next chunk at once, as before.
ASKS_MOST = 16
#: The consumer remembers at most this many kinds of trouble it has logged (each logged once).
SAID_MOST = 1_000
#: How long the broker keeps a consumer's session (and its unacknowledged messages) while it is away.
SESSION_EXPIRY_S = 60
#: The keepalive asked of the broker (a PINGREQ after half of it without sending).
KEEPALIVE_S = 30
#: At most this many messages wait for the worker: when it falls behind, the connection thread
#: waits for room (and the broker keeps the rest, unacknowledged), so a consumer that cannot keep
#: up holds a bounded backlog in memory, never the whole floor's. Nothing is dropped on the way.
INBOX = BATCH
#: The inbox holds at most about this many bytes too (pages are large).
INBOX_BYTES = BATCH_BYTES
#: With a group, how long a table may look behind before it is asked (another consumer of the
#: group may hold the entries in between, not yet committed).
GROUP_GRACE_S = 2.0
#: A table that says it has more than this many entries the store lacks is asked at once, grace or
#: not: the grace is for live entries another consumer of the group holds uncommitted, and those are
#: at most its Receive Maximum of all tables together (a table deals 1-5 entries a second), so an
#: early ask sends again at most a small share of the answer, which the store keeps once anyway. A
#: table a day behind (86,400 entries) waited the whole grace before its first chunk was asked for.
FAR_BEHIND = RECEIVE_MAXIMUM

Key = tuple[str, str]  # (site, table)


class _Message(NamedTuple):
    topic: str
    payload: bytes
    response_topic: str | None  # a history request's
    correlation: bytes | None  # a catch-up reply's, a history request's
    mid: int
    qos: int
    connection: int  # which connection it came on: its mid means nothing on another


class FloorConsumer:
    """Keeps a floor store complete from every table on the broker.

    consumer = FloorConsumer(broker, "sqlite:///var/lib/tablectl-floor/floor.db", consumer_id="store-1")
    consumer.start() ... consumer.stop()
    """

    def __init__(
        self,
        broker: Broker,
        store_url: str,
        *,
        consumer_id: str,
        group: str | None = None,
        site: str | None = None,
        username: str | None = None,
        password: str | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        probe_s: float = 10.0,
        ask_timeout_s: float = 5.0,
        grace_s: float | None = None,
    ) -> None:
        self.broker = broker
        self.store_url = store_url
        self.consumer_id = check_level(consumer_id, "--consumer-id")
        self.group = check_level(group, "--group") if group is not None else None
        if self.group is not None and not store_url.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                f"--group {group}: several consumers share one PostgreSQL store; SQLite is the one-consumer "
                "store of a small room (leave out --group, or use --store postgresql://...)"
            )
        self.grace_s = (GROUP_GRACE_S if self.group else 0.0) if grace_s is None else grace_s
        self.site = check_level(site, "--site") if site is not None else None
        self.probe_s = probe_s
        self.ask_timeout_s = ask_timeout_s
        self.refused = 0  # messages that could not be read (each logged once per kind of fault)
        self.asks = 0
        self.stored = 0  # messages stored and acknowledged
        self.connected = threading.Event()
        self._inbox = _Inbox(INBOX, INBOX_BYTES)
        self._connection = 0  # counts connections (and their ends): see _new_connection
        self._acking = threading.Lock()
        self._dropping = threading.Event()  # the session is being dropped: what waits is never acknowledged
        self._behind: dict[Key, float] = {}  # table -> when it was last seen behind (or asked)
        self._in_grace: set[Key] = set()  # tables of _behind found a little behind, not asked yet
        self._known: set[Key] = set()
        self._ask_all = threading.Event()
        self._stopping = threading.Event()
        self._said: set[str] = set()
        self._store: FloorStore | None = None
        self._worker: threading.Thread | None = None
        self._ssl: ssl.SSLContext | None = None
        if broker.tls:
            self._ssl = ssl.create_default_context(cafile=ca_file)
            if cert_file is not None:
                self._ssl.load_cert_chain(cert_file, key_file)
        self._username, self._password = username, password
        self._conn: Connection | None = None  # the current connection, if any
        self._network: threading.Thread | None = None

    # -- start and stop ---------------------------------------------------------------------------

    def start(self) -> None:
        """Open (create, migrate) the store, then connect in the background. A store that cannot
        be opened is an error here (FloorStoreError); a missing broker is retried."""
        self._store = open_store(self.store_url)
        self._known.update(self._store.tables())
        now = time.monotonic()
        for key, lacking in self._store.lagging().items():  # asked a few at a time, not probed all at once
            self._found_behind(key, lacking, now)
        log.info(
            "floor store %s (id %s, %d table(s) known): reading %s as %s",
            redact(self._store.url),
            self._store.store_id,
            len(self._known),
            self.broker,
            self.consumer_id,
        )
        self._worker = threading.Thread(target=self._work, name="floor-store", daemon=True)
        self._worker.start()
        self._network = threading.Thread(target=self._connect_loop, name="floor-mqtt", daemon=True)
        self._network.start()

    def _reconnect(self) -> None:
        """Drop the connection: what this consumer has not acknowledged (a batch that could not be
        stored) the broker sends again on the next one, and the tables are asked for it too."""
        conn = self._conn
        if conn is not None:
            self._dropping.set()  # the connection thread may wait for room in the inbox: it stops waiting
            conn.abort()

    def stop(self, timeout: float = 10.0) -> None:
        """Disconnect, ending the session, then store what has arrived. The session ends: a
        stopped consumer's shared subscription would otherwise stay in the group for the
        session's expiry and the broker go on dealing it a share of every table's entries (a
        third of the live feed, with two consumers left, went the long way round, through the
        tables' catch-up). What it had not acknowledged the broker sends to the others."""
        self._stopping.set()
        conn = self._conn
        if conn is not None:
            conn.close(end_session=True)
        if self._network is not None:
            self._network.join(timeout)
        self._put(None)
        if self._worker is not None:
            self._worker.join(timeout)
        if self._store is not None:
            self._store.close()
            self._store = None

    # -- the connection's thread ---------------------------------------------------------------------

    def _connect_loop(self) -> None:
        """Connect, subscribe, read until the connection ends; again, waiting 1 to 10 s between tries."""
        delay = 1.0
        while not self._stopping.is_set():
            conn = Connection(
                self.broker.host, self.broker.port, f"tablectl-floor-{self.consumer_id}", keepalive=KEEPALIVE_S,
                session_expiry_s=SESSION_EXPIRY_S, receive_maximum=RECEIVE_MAXIMUM, username=self._username,
                password=self._password, ssl_context=self._ssl,
            )  # fmt: skip
            try:
                conn.open(10.0)
            except (OSError, MqttError) as exc:
                self._say(f"cannot reach {self.broker} ({exc}); retrying", logging.WARNING)
                self._stopping.wait(delay)
                delay = min(delay * 2, 10.0)
                continue
            delay = 1.0
            with self._acking:
                self._connection += 1
                self._conn = conn
            number = self._connection
            try:
                self._subscribe(conn)
                conn.run(functools.partial(self._deliver, conn, number))
            except MalformedPacket as exc:
                self._say(f"{self.broker} sent a malformed packet ({exc}); reconnecting", logging.ERROR)
            except (OSError, MqttError) as exc:
                if not self._stopping.is_set() and not self._dropping.is_set():
                    self._say(f"lost {self.broker} ({exc}); reconnecting; the tables will be asked again",
                              logging.WARNING)  # fmt: skip
            finally:
                conn.abort()
                self._new_connection()
                self.connected.clear()
                self._dropping.clear()
            if not self._stopping.is_set():
                self._stopping.wait(0.2)

    def _subscribe(self, conn: Connection) -> None:
        if self.site:
            entries = schema.surveillance_topic(self.site, "+")
            status = schema.topic(self.site, "+", "status")
            history = schema.history_request_topic(self.site, "+")
        else:
            entries, status = schema.SURVEILLANCE_FILTER, schema.STATUS_FILTER
            history = schema.HISTORY_REQUEST_FILTER
        replies = schema.reply_filter(self.reply_name)
        if self.site:
            replies = schema.reply_topic(self.site, "+", self.reply_name)
        if self.group:  # one consumer of the group gets each; status (retained) goes to every one
            entries, replies, history = (f"$share/{self.group}/{t}" for t in (entries, replies, history))
        # The whole entries, never the general `entry` topic's masked ones: the store is the record.
        conn.subscribe([(entries, 1), (status, 1), (replies, 1), (history, 1)])
        self._said.clear()
        log.info("floor store: connected to %s; asking every known table for what the store lacks", self.broker)
        self.connected.set()
        self._ask_all.set()

    def _new_connection(self) -> None:
        """A connection ended: what came on it is never acknowledged on another (the broker sends
        it again on the next, under a new id if it kept the session)."""
        with self._acking:
            self._connection += 1
            self._conn = None

    def _deliver(self, conn: Connection, number: int, messages: list[Received]) -> None:
        """One read's messages to the worker, waiting for room (acknowledgements still go out)."""
        items = [_Message(m.topic, m.payload, m.response_topic, m.correlation, m.mid, m.qos, number) for m in messages]
        while items:
            items = self._inbox.put_many(items, 0.1)
            if items:
                conn.flush()
                if self._dropping.is_set() or self._stopping.is_set() or conn.closed.is_set():
                    return  # never acknowledged: the broker sends them again, the tables are asked

    def _put(self, item: _Message | None, wait: float | None = None) -> bool:
        """Hand `item` to the worker, waiting for room (at most `wait` seconds: False if none came)."""
        return self._inbox.put(item, wait)

    @property
    def reply_name(self) -> str:
        """The last level of this consumer's catch-up reply topic: its group's, or its own."""
        return self.group or self.consumer_id

    def _say(self, words: str, level: int) -> None:
        if words not in self._said:  # once per kind of trouble, not once per message
            if len(self._said) >= SAID_MOST:  # many kinds (a word per table): bounded, each said again later
                self._said.clear()
            self._said.add(words)
            log.log(level, "floor store: %s", words)

    # -- the worker ---------------------------------------------------------------------------------

    def _work(self) -> None:
        store = self._store
        assert store is not None
        next_probe = time.monotonic() + self.probe_s
        while True:
            batch, stop = self._take()
            try:
                self._handle(store, batch)
            except Exception:
                # A store that fails (disk full, server gone) loses nothing: the tables keep every
                # entry until a store confirms it, and this consumer asks again once it is back.
                # The batch is never acknowledged: the session is dropped, and the broker with it.
                log.exception("floor store: could not store a batch of %d message(s); the tables keep them", len(batch))
                store = self._reopen(store)
                self._behind.clear()
                self._in_grace.clear()
                if batch:
                    self._reconnect()
                self._ask_all.set()
                if stop:
                    return
                continue
            with self._acking:  # committed: now, and only now, the broker may forget them
                conn = self._conn
                if conn is not None:
                    conn.ack([m.mid for m in batch if m.qos and m.connection == self._connection])
            self.stored += len(batch)
            try:
                now = time.monotonic()
                if self._ask_all.is_set() or now >= next_probe:
                    self._ask_all.clear()
                    next_probe = now + self.probe_s
                    self._probe(store)
                else:
                    self._ask_behind(store, now)
            except Exception:
                log.exception("floor store: could not ask the tables for what the store lacks; asking again")
                store = self._reopen(store)
                self._ask_all.set()
            if stop:
                return

    def _found_behind(self, key: Key, lacking: int, now: float) -> None:
        """The store holds `key` only in part (`lacking` entries past its mark): it is asked after
        the grace, or at once if it lacks more than FAR_BEHIND (only when newly found behind: a
        table whose answer is arriving is not looked at again at every batch)."""
        far = lacking > FAR_BEHIND
        if key not in self._behind:
            self._behind[key] = now - self.grace_s if far else now
            if not far:
                self._in_grace.add(key)
        elif far and key in self._in_grace:
            # First found a little behind (its status came before its entries, say), waiting out the
            # grace; now far behind: asked at once, as if it had been far behind when first found.
            self._in_grace.discard(key)
            self._behind[key] = now - self.grace_s

    def _ask_behind(self, store: FloorStore, now: float) -> None:
        """Ask each table the store has held only in part for `grace_s` (at most once an interval:
        the claim keeps a second ask from going out while one is answered). An ask the broker lost,
        or sent before the table's responder had subscribed, is sent again once its claim lapses
        (`ask_timeout_s`), however long the grace: the grace is for the first ask only."""
        interval = min(self.grace_s, self.ask_timeout_s) if self.grace_s > 0 else 0.2
        due = [key for key, since in sorted(self._behind.items(), key=lambda kv: kv[1]) if now - since >= self.grace_s]
        if not due:
            return
        room = ASKS_MOST - store.claims_held(self.consumer_id)  # the longest waiting first, a few at a time
        for key in due:
            if room <= 0:
                break
            self._in_grace.discard(key)
            if not store.progress(*key).behind:
                del self._behind[key]
                continue
            self._behind[key] = now + interval - self.grace_s  # looked at again in `interval`
            if self._ask(store, key):
                room -= 1

    def _reopen(self, store: FloorStore) -> FloorStore:
        time.sleep(1.0)
        try:
            fresh = open_store(self.store_url)
        except Exception as exc:
            self._say(f"cannot reopen the store: {exc}; retrying", logging.ERROR)
            return store
        with contextlib.suppress(Exception):
            store.close()
        self._store = fresh
        return fresh

    def _take(self) -> tuple[list[_Message], bool]:
        batch: list[_Message] = []
        size = 0
        try:
            item = self._inbox.get(timeout=0.2)
        except queue.Empty:
            return batch, False
        while item is not None:
            batch.append(item)
            size += len(item.payload)
            if len(batch) >= BATCH or size >= BATCH_BYTES:
                return batch, False
            try:
                item = self._inbox.get(timeout=None)
            except queue.Empty:
                return batch, False
        return batch, True

    def _handle(self, store: FloorStore, batch: list[_Message]) -> None:
        entries: list[StoredEntry] = []
        replied: list[StoredEntry] = []
        ends: list[tuple[schema.FloorMessage, bytes | None]] = []
        answering: set[tuple[str, str, str]] = set()  # (site, table, correlation) of the pages stored
        statuses: dict[Key, int] = {}
        for topic, payload, response_topic, correlation, _mid, _qos, _connection in batch:
            if topic.endswith("/history/request"):
                self._answer_history(store, topic, response_topic, correlation)
                continue
            try:
                if "/catchup/" in topic:
                    message = schema.parse_reply(topic, payload)
                elif f"/{schema.SURVEILLANCE}/" in topic:
                    message = schema.parse_surveillance(topic, payload)
                else:
                    message = schema.parse(topic, payload)
                    if message.kind == "entry":
                        continue  # masked for the general feed: never stored (not subscribed either)
            except schema.FloorMessageError as exc:
                self.refused += 1
                self._say(f"a message not stored: {exc}", logging.ERROR)
                continue
            key = (message.site, message.table)
            self._known.add(key)
            p = message.payload
            if message.kind == "page":  # a catch-up reply's entries, many to a message
                site, table, boot = message.site, message.table, message.boot
                replied.extend(StoredEntry(site, table, r["seq"], boot, r["at"], r.get("round"), r["kind"], r["body"])
                               for r in p["entries"])  # fmt: skip
                if correlation is not None:
                    answering.add((site, table, correlation.hex()))
            elif message.kind == "entry":
                (replied if "/catchup/" in topic else entries).append(
                    StoredEntry(message.site, message.table, p["seq"], message.boot, p["at"], p.get("round"),
                                p["kind"], p["body"])
                )  # fmt: skip
            elif message.kind == "end":
                ends.append((message, correlation))
            elif message.kind == "status" and isinstance(p.get("last"), int):
                statuses[key] = max(statuses.get(key, 0), int(p["last"]))
        if statuses:  # the tables' own word on how far their journals go, for the batch at once
            now = time.monotonic()
            for key, count in store.reported_many(statuses).items():
                self._found_behind(key, count, now)
        behind: set[Key] = set()
        lacking: dict[Key, int] = {}
        for group in (entries, replied):
            if not group:
                continue
            result = store.add(group)
            behind.update(result.behind)
            lacking.update(result.lacking)
            if result.conflicts:
                differ = "entry differs" if result.conflicts == 1 else "entries differ"
                self._say(f"{result.conflicts} {differ} from the ones stored; see floor_conflicts", 40)
            if group is replied and result.added:
                tables = sorted({f"{e.site}/{e.table}" for e in group})
                log.info(
                    "floor store: %s sent %s the store lacked (lost by the broker, or sent while the store "
                    "was away)", ", ".join(tables), schema.entries(result.added),
                )  # fmt: skip
        if not (entries or replied):  # idle: the tables another consumer held at the last batch
            lacking.update(store.settle())
            behind.update(lacking)
        now = time.monotonic()
        for key in behind - {(e.site, e.table) for e in entries + replied}:
            self._found_behind(key, lacking.get(key, 0), now)
        for key in {(e.site, e.table) for e in entries + replied}:  # the store's word after the batch
            if key in behind:
                self._found_behind(key, lacking.get(key, 0), now)
            else:
                self._behind.pop(key, None)
                self._in_grace.discard(key)
        if answering:
            # An answer still coming holds its claim: a table-day's answer outlasts `ask_timeout_s`
            # on a busy floor server, and a claim that lapsed mid-answer let a second ask go out
            # for what was on its way (and broke the chain of chunks).
            store.extend_many(sorted(answering), self.ask_timeout_s)
        self._ended_many(store, ends)

    def _ended_many(self, store: FloorStore, ends: list[tuple[schema.FloorMessage, bytes | None]]) -> None:
        """The batch's `end`s. Most only close an ask (a probe's answer: nothing more, no hole): those
        are recorded and their claims released for the batch at once, two statements however many
        tables answered, not two transactions each (a probe of 1,000 tables is answered by 1,000
        `end`s, and each commit waits for the disk). The rest, one by one (`_ended`)."""
        lasts: dict[Key, int] = {}
        releases: list[tuple[str, str, str]] = []
        for message, correlation in ends:
            p = message.payload
            gaps = p.get("gaps")
            if "error" in p or p.get("more") or not isinstance(gaps, list) or gaps:
                self._ended(store, message, correlation)
                continue
            key = (message.site, message.table)
            lasts[key] = max(lasts.get(key, 0), int(p["last"]))
            if correlation is not None:
                releases.append((key[0], key[1], correlation.hex()))
        if lasts:
            store.reported_many(lasts)
        if releases:
            store.release_many(releases)

    def _ended(self, store: FloorStore, message: schema.FloorMessage, correlation: bytes | None) -> None:
        """A reply's `end`, whichever consumer of the group asked: the claim ends, a hole in the
        table's journal is a floor alert, and the next chunk is asked for."""
        key = (message.site, message.table)
        p = message.payload
        store.reported(message.site, message.table, int(p["last"]))
        asked = correlation.hex() if correlation is not None else None
        if "error" in p:
            if asked:
                store.release(key[0], key[1], asked)
            self._say(f"{key[0]}/{key[1]} answered: {p['error']}", logging.ERROR)
            last = int(p["last"])
            store.alert(message.site, message.table, last + 1, f"the table's journal ends at {last}, before "
                        "entries the floor holds: restored from an earlier copy, or replaced")  # fmt: skip
            return
        gaps = p.get("gaps")
        if isinstance(gaps, list):
            # The table says which seqs its journal lacks: a gap if the store lacks them too.
            for gap in gaps:
                if not (isinstance(gap, list) and len(gap) == 2 and all(type(n) is int for n in gap)):
                    continue
                first, last = gap
                if any(a <= last and b >= first for a, b in store.missing(key[0], key[1], last)):
                    store.alert(key[0], key[1], first, f"a gap: entries {first} to {last} are not in the table's "
                                "journal")  # fmt: skip
                    break
        if asked and p.get("more"):
            if store.claims_held(self.consumer_id) >= ASKS_MOST:
                # Too many asks out already (a probe's, whose answers say more): this table waits
                # its turn among the tables behind, asked as soon as one of them ends.
                store.release(key[0], key[1], asked)
                self._found_behind(key, FAR_BEHIND + 1, time.monotonic())
                return
            then = secrets.token_bytes(8)  # the next chunk's ask takes the claim over at once
            if store.pass_on(key[0], key[1], asked, self.consumer_id, then.hex(), self.ask_timeout_s):
                self._ask(store, key, start=int(p["through"]), claimed=then)
            return
        held = asked is not None and store.release(key[0], key[1], asked)
        if held and not isinstance(gaps, list) and self.group is None:
            # A table from before `gaps`, one consumer: it sent all it has through `through`, so
            # what the store still lacks before it is not in the table's journal (a gap).
            store.gap_reported(message.site, message.table, int(p.get("through", 0)))

    def _request(
        self, store: FloorStore, key: Key, correlation: bytes, after: int, start: int | None, qos: int = 1,
        most: int | None = None,
    ) -> bool:
        """Publish one catch-up request under a claim taken; False (the claim released) if it
        could not go out. A probe's requests go at QoS 0: QoS 1 messages in flight are bounded by
        the broker's Receive Maximum, and 1,000 tables probed at QoS 1 held back (behind the
        PUBACKs of a backlog) the ask for a table found behind. A probe's request the broker
        loses is asked again by the next probe (its claim lapses), as the table's own silence
        would be. `most`: how many entries the answer may hold (a probe's: one page)."""
        # Pages: a table of today answers PAGE entries a message, up to PAGED_LIMIT an ask; one
        # from before pages ignores both and sends REPLY_LIMIT, an entry a message (read alike).
        most = schema.PAGED_LIMIT if most is None else most  # (read now: tests make it smaller)
        payload: dict[str, Any] = {"v": schema.VERSION, "after": after, "limit": min(most, schema.REPLY_LIMIT),
                                   "page": schema.PAGE, "page_limit": most,
                                   "store": store.store_id}  # fmt: skip
        if start is not None and start > after:
            payload["from"] = start
        conn = self._conn
        sent = conn is not None and conn.publish(
            schema.request_topic(*key), schema.encode(payload), qos,
            response_topic=schema.reply_topic(key[0], key[1], self.reply_name), correlation=correlation,
        )  # fmt: skip
        if not sent:
            store.release(key[0], key[1], correlation.hex())
            return False  # not connected: every table is asked again at the next connection
        self.asks += 1
        return True

    def _answer_history(self, store: FloorStore, topic: str, response: str | None, correlation: bytes | None) -> None:
        """A starting table asks how far the store holds its history (controller/adapters/floor/history.py)."""
        parts = topic.split("/")
        if len(parts) != 5 or not response:
            return
        site, table = parts[1], parts[2]
        answer = {"v": schema.VERSION, **store.history(site, table)}
        conn = self._conn
        if conn is not None:  # else the starting table asks again
            conn.publish(response, schema.encode(answer), 1, correlation=correlation or b"")

    def _probe(self, store: FloorStore) -> None:
        """Ask every known table, even one the store seems to hold whole (a table's lost tail
        shows no gap, and the ask confirms): its mark and its claim read and taken for all the
        tables at once, so a probe of 1,000 tables is a few statements, not thousands."""
        marks = store.marks()
        asks = {key: secrets.token_bytes(8) for key in sorted(self._known - self._behind.keys())}
        claimed = store.claim_many([(k[0], k[1], c.hex()) for k, c in asks.items()], self.consumer_id,
                                   self.ask_timeout_s)  # fmt: skip
        for key in sorted(claimed):
            self._request(store, key, asks[key], marks.get(key, 0), None, qos=0, most=schema.PAGE)

    def _ask(
        self, store: FloorStore, key: Key, *, force: bool = False, start: int | None = None,
        claimed: bytes | None = None,
    ) -> bool:
        """Ask the table for what the store lacks, unless an ask is already out, from this consumer
        or another (the store's claim; `force`: ask even when the store seems whole: a table's
        lost tail shows no gap, and the ask confirms). `start`: send from there (the next chunk),
        while `after` still confirms only what the store holds."""
        progress = store.progress(*key)
        if not force and not progress.behind and start is None:
            return False
        correlation = claimed or secrets.token_bytes(8)
        if claimed is None and not store.claim(key[0], key[1], self.consumer_id, correlation.hex(), self.ask_timeout_s):
            return False  # another ask is out; its answer comes to the group, or its claim lapses
        if not self._request(store, key, correlation, progress.contiguous, start):
            return False
        if progress.behind and start is None:
            log.info(
                "floor store: %s/%s: stored through %d, the table has %d; asking it for the rest",
                key[0], key[1], progress.contiguous, max(progress.highest, progress.reported_last),
            )  # fmt: skip
        return True


class _Inbox:
    """The worker's queue, bounded by messages and by bytes (a page is hundreds of entries):
    `put` waits for room, `get(timeout=None)` never waits (queue.Empty when there is nothing)."""

    def __init__(self, most: int, most_bytes: int) -> None:
        self._items: collections.deque[_Message | None] = collections.deque()
        self._bytes = 0
        self._most, self._most_bytes = most, most_bytes
        self._changed = threading.Condition()

    def put(self, item: _Message | None, wait: float | None = None) -> bool:
        size = len(item.payload) if item is not None else 0
        with self._changed:
            # One message is always let in, however large: a page bigger than the bound still passes.
            room = lambda: not self._items or (len(self._items) < self._most and self._bytes + size <= self._most_bytes)  # noqa: E731
            if item is not None and not self._changed.wait_for(room, wait):
                return False
            self._items.append(item)
            self._bytes += size
            self._changed.notify_all()
        return True

    def put_many(self, items: list[_Message], wait: float) -> list[_Message]:
        """Put as many of `items` as there is room for, waiting at most `wait` seconds for some
        room: what did not fit is returned (a slice of `items`, in order)."""
        done = 0
        with self._changed:
            while done < len(items):
                item = items[done]
                size = len(item.payload)
                if self._items and (len(self._items) >= self._most or self._bytes + size > self._most_bytes):
                    if done or not self._changed.wait(wait):
                        break
                    continue
                self._items.append(item)
                self._bytes += size
                done += 1
            if done:
                self._changed.notify_all()
        return items[done:]

    def qsize(self) -> int:
        return len(self._items)

    def get(self, timeout: float | None) -> _Message | None:
        with self._changed:
            if timeout is not None and not self._changed.wait_for(lambda: bool(self._items), timeout):
                raise queue.Empty
            if not self._items:
                raise queue.Empty
            item = self._items.popleft()
            self._bytes -= len(item.payload) if item is not None else 0
            self._changed.notify_all()
            return item
