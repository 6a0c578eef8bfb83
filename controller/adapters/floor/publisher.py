"""The table's publisher to the floor: the journal, sent in order over MQTT at QoS 1.

The outbox is the journal itself. The publisher reads entries through its own read-only
connection (WAL lets it read beside the table loop's writer), turns each entry into messages
(schema.py), publishes them in journal order, and moves a high-water mark (`floor.acked` in the
journal's meta) only past entries whose every message the broker has acknowledged (PUBACK). When
the broker is away, entries simply wait in the journal; after a reconnection paho sends again what
was in flight, then the publisher carries on from where it stopped; after a restart it resumes
after the mark. The mark is a lower bound, never ahead of the broker: a mark written late (or lost
in a crash) means some messages are sent twice, which consumers drop by (table, seq), and never
that one is missing.

The broker's PUBACK is only the broker having a message: a broker killed before it saved its
store forgets it. So the publisher also runs the table's catch-up responder (catchup.py), which
answers a floor store that asks for what it is missing, from the journal, and records what each
store confirms (`floor.stored`). MQTT 5 throughout: a broker that refuses a message (its ACL)
says so in the PUBACK, and the publisher logs it and stops its mark there.

Each entry goes out twice: whole on the table's surveillance topic (schema.surveillance_topic),
which only the floor store and surveillance may read, and as the dealer sees it on the general
`entry` topic, which the live floor view reads: no face-down card is on any general topic. The
dealer's sight (controller.table.visibility) is asked of the replica below, before and after the entry,
and every general message of the entry (the entry, its settlement, faults and meters) is masked
by both: a card face down on either side of the entry stays "face-down card" in it. An entry the
replica cannot follow is sent on the general topic without its body (`"withheld": true`), since
then nobody can tell which of its cards lie face down.

Settlements, fault changes and meters are derived, so they must come out the same however often
an entry is sent: the publisher keeps its own replica of the table's state, a `TableState` that
the table's own reducer (`TableState.apply`) moves entry by entry, and compares it before and
after each entry. At start the replica resumes from the journal's snapshot at or before the mark
(`Replica.resume`: a round or two of entries through the reducer, not the whole journal), on the
publisher's thread, so the table loop never waits for it.

    publisher = FloorPublisher(config.floor, journal.path, table_id="GS-01", game="grand-slam",
                               rules={}, mark=loop_mark(journal, loop))
    table.listeners.append(publisher)     # each new entry wakes it; the journal is the data
    publisher.start() ... publisher.stop()

Threads: paho's network loop (`loop_start`) and one pump thread here. They share only a set of
acknowledged message ids and an Event; no lock of ours is ever held while calling into paho,
because paho holds its own lock while it calls `on_publish`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

from controller.adapters.floor import schema
from controller.adapters.floor.catchup import CatchupResponder, new_client
from controller.adapters.floor.config import FloorConfig, check_level
from controller.engine.base import Effect
from controller.journal.log import SNAPSHOTS_KEPT, Entry, Journal, JournalCorrupt, JournalError
from controller.table import Table, TableSetup, TableState, parse_entry
from controller.table import snapshots as table_snapshots
from controller.table.visibility import sight

log = logging.getLogger("tablectl.floor")

#: The journal meta key under which the publisher keeps how far the broker has acknowledged.
MARK_KEY = "floor.acked"
#: The mark is written at most this often: each write is a commit on the table's journal.
MARK_EVERY_S = 0.25
#: On stop, how long to wait for the broker to acknowledge what is already in flight.
STOP_GRACE_S = 2.0
#: With nothing new, the pump still looks at the journal this often (a missed wake-up costs this).
POLL_S = 1.0
#: Entries read from the journal at a time while sending a backlog.
BACKLOG_SLICE = 1000

Message = tuple[str, dict[str, Any]]  # (kind, payload); kind SURVEILLANCE: the whole entry
#: The kind of the whole, unmasked entry: sent on the table's surveillance topic, not a general one.
SURVEILLANCE = schema.SURVEILLANCE


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class FloorPublisher:
    """Sends every journal entry of one table, and what it changed, to the floor broker.

    It is also a table listener (`update`, `redrive`): a new entry only wakes it.
    """

    def __init__(
        self,
        config: FloorConfig,
        journal_path: Path | str,
        *,
        table_id: str,
        game: str,
        rules: Mapping[str, Any],
        mark: Callable[[int], None],
        meta: Callable[[str, str], None] | None = None,
        boot: str | None = None,
        reconnect_max_s: int = 30,
        durable: Callable[[], int] | None = None,
    ) -> None:
        """`durable`: the last entry on disk (Journal.durable_seq, read on the publisher's threads):
        nothing beyond it is sent, nor given to a catch-up (an entry committed without its own
        fsync, a signed head, is sent once it is on disk: never one a power cut could take back).
        None: every committed entry is on disk."""
        self.config = config
        self.journal_path = Path(journal_path)
        self._durable = durable
        self.table_id = check_level(table_id, "table.id")
        self.site = config.site
        self.game = game
        self.rules = dict(rules)
        self.boot = boot or secrets.token_hex(6)
        self.client_id = config.client_id or f"tablectl-{config.site}-{table_id}"
        self._mark = mark
        # Where the floor-confirmed marks go (controller.adapters.floor.catchup): the daemon's loop_mark
        # carries a meta writer; without one they are kept in memory only.
        self._meta: Callable[[str, str], None] | None = meta or getattr(mark, "meta", None)
        self._responder: CatchupResponder | None = None
        self._refused: str | None = None
        self._journal_last = 0
        self._reconnect_max_s = reconnect_max_s
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._acks: set[int] = set()  # message ids the broker acknowledged, not yet taken by the pump
        self._acks_lock = threading.Lock()
        self._status_mids: set[int] = set()  # status messages are outside the journal's order
        self._connected = False
        self._said: str | None = None  # the last connection trouble logged
        self._acked = 0  # every message of every entry up to here is acknowledged
        self._sent = 0  # the last entry handed to paho
        self._acked_changed = threading.Condition()
        self._client: mqtt.Client | None = None
        self._pump_thread: threading.Thread | None = None

    # -- the table's listener -------------------------------------------------------------------

    def update(self, table: Table, entry: Entry, effects: tuple[Any, ...]) -> None:
        self._wake.set()

    def redrive(self, table: Table) -> None:
        self._wake.set()

    # -- what it has done -----------------------------------------------------------------------

    @property
    def acked(self) -> int:
        """The last journal seq whose messages the broker has all acknowledged."""
        return self._acked

    @property
    def connected(self) -> bool:
        return self._connected

    def status(self) -> dict[str, Any]:
        """For the device view: where it sends, whether it is connected, and how far it is."""
        return {
            "broker": str(self.config.broker),
            "site": self.site,
            "connected": self._connected,
            "acked": self._acked,
            "sent": self._sent,
            "boot": self.boot,
            # What floor stores have confirmed holding (end-to-end), as opposed to the broker's PUBACK.
            "stored": self._responder.stored if self._responder is not None else {},
            "refused": self._refused,
        }

    def wait_acked(self, seq: int, timeout: float) -> bool:
        """Block until everything up to `seq` is acknowledged, or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._acked_changed:
            while self._acked < seq:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._acked_changed.wait(left)
        return True

    # -- start and stop -------------------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background and start sending; returns at once. A missing broker is not
        an error: entries wait in the journal. A password file that cannot be read is."""
        password = self.config.password()
        client = new_client(self.config, self.client_id, password)
        client.will_set(self._topic("status"), schema.encode(self._status("offline", "connection lost")), 1, True)
        client.reconnect_delay_set(1, self._reconnect_max_s)
        client.max_inflight_messages_set(self.config.inflight)
        client.max_queued_messages_set(0)  # the window below bounds it
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        self._client = client
        log.info(
            "floor: publishing to %s as %s (site %s, boot %s)", self.config.broker, self.client_id, self.site, self.boot
        )
        # A clean start: the journal is the outbox, so no broker-side session is needed.
        client.connect_async(
            self.config.broker.host, self.config.broker.port, keepalive=self.config.keepalive, clean_start=True
        )
        client.loop_start()
        self._responder = CatchupResponder(
            self.config,
            self.journal_path,
            table_id=self.table_id,
            client_id=f"{self.client_id}-catchup",
            boot=self.boot,
            password=password,
            meta=self._meta,
            reconnect_max_s=self._reconnect_max_s,
            durable=self._durable,
        )
        self._responder.start()
        self._pump_thread = threading.Thread(target=self._pump, name="floor-publisher", daemon=True)
        self._pump_thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Send what is in flight if the broker is there (briefly), record the mark, say offline."""
        self._stopping.set()
        self._wake.set()
        if self._responder is not None:
            self._responder.stop(timeout)
            self._responder = None
        if self._pump_thread is not None:
            self._pump_thread.join(timeout)
        client = self._client
        if client is None:
            return
        if self._connected:
            info = client.publish(self._topic("status"), schema.encode(self._status("offline", "stopped")), 1, True)
            # A graceful DISCONNECT discards the will, so the retained status must say offline first.
            info.wait_for_publish(min(timeout, STOP_GRACE_S))
        client.disconnect()
        client.loop_stop()
        self._client = None

    # -- paho's thread --------------------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            # The reason is the broker's word ("Not authorized", "Bad user name or password"): no secret.
            self._trouble(f"{self.config.broker} refused the connection: {reason}; retrying")
            return
        self._connected = True
        self._said = None
        log.info("floor: connected to %s", self.config.broker)
        info = client.publish(self._topic("status"), schema.encode(self._status("online")), 1, True)
        # Its PUBACK is read by this same thread later, so recording the id now cannot race it.
        with self._acks_lock:
            self._status_mids.add(info.mid)
        self._wake.set()

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        self._connected = False
        self._trouble(f"cannot reach {self.config.broker}; events wait in the journal; retrying")

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        was, self._connected = self._connected, False
        if was and not self._stopping.is_set():
            self._trouble(f"lost {self.config.broker} ({reason}); events wait in the journal; reconnecting")

    def _trouble(self, words: str) -> None:
        # Said once, not at every retry of the backoff: a broker down for an hour is one line.
        if words != self._said:
            log.warning("floor: %s", words)
            self._said = words

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            # MQTT 5 says so when the broker will not take a message (its ACL): the entry is not
            # delivered, so the mark stops before it, and the operator is told what to fix.
            words = (
                f"{self.config.broker} refused message {mid} from table {self.table_id}: {reason}; the broker's ACL "
                f"must let this table's user write {schema.topic(self.site, self.table_id, '#')}; "
                "events wait in the journal"
            )
            if words != self._refused:
                log.error("floor: %s", words)
            self._refused = words
            with self._acks_lock:
                self._status_mids.discard(mid)
            return
        with self._acks_lock:
            if mid in self._status_mids:
                self._status_mids.discard(mid)
                return
            self._acks.add(mid)
        self._wake.set()

    # -- the pump thread ------------------------------------------------------------------------

    def _pump(self) -> None:
        try:
            reader = Journal(self.journal_path, readonly=True)
        except JournalError as exc:
            log.error("floor: cannot read the journal, nothing will be published: %s", exc)
            return
        try:
            self._pump_journal(reader)
        except Exception:  # the floor link must never take the table down
            log.exception("floor: the publisher stopped on an unexpected error; the journal keeps every event")
        finally:
            reader.close()

    def _pump_journal(self, reader: Journal) -> None:
        text = reader.get_meta(MARK_KEY)
        start = int(text) if text and text.isdigit() else 0
        try:
            # The state after the mark, before the first entry to send: from the snapshot at or
            # before it, in constant time whatever the journal's length.
            replica = Replica.resume(reader, self.game, self.rules, start)
        except JournalError as exc:
            log.error("floor: cannot rebuild the table's state from the journal, nothing will be published: %s", exc)
            return
        self._journal_last = max(start, reader.last_seq)
        backlog: deque[Entry] = deque()
        self._sent = start
        self._set_acked(start)
        pending: deque[tuple[int, int]] = deque()  # (message id, journal seq), in publish order
        written = start
        written_at = 0.0
        drain_until = 0.0
        client = self._client
        assert client is not None
        while True:
            self._wake.clear()
            self._take_acks(pending)
            now = time.monotonic()
            stopping = self._stopping.is_set()
            if self._acked > written and (stopping or now - written_at >= MARK_EVERY_S):
                written, written_at = self._write_mark(written), now
            if stopping:
                drain_until = drain_until or now + STOP_GRACE_S
                if pending and self._connected and now < drain_until:
                    self._wake.wait(0.05)  # what is in flight may still be acknowledged
                    continue
                return
            if not backlog:  # read in slices: a long backlog never sits in memory whole
                upto = self._durable() if self._durable is not None else None
                backlog.extend(islice(reader.entries(after=self._sent, upto=upto), BACKLOG_SLICE))
            while backlog and len(pending) < self.config.inflight:
                entry = backlog.popleft()
                self._journal_last = max(self._journal_last, entry.seq)
                for kind, payload in self._messages(replica, entry):
                    info = client.publish(self._topic(kind), schema.encode(payload), 1, kind in schema.RETAINED)
                    if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):  # NO_CONN: queued for later
                        raise RuntimeError(f"paho refused message {entry.seq} ({kind}): {mqtt.error_string(info.rc)}")
                    pending.append((info.mid, entry.seq))
                self._sent = entry.seq
            if not pending:
                # Nothing in flight: every message up to the last sent one is acknowledged.
                self._set_acked(self._sent)
            wait = POLL_S if self._acked == written else MARK_EVERY_S
            self._wake.wait(wait)

    def _take_acks(self, pending: deque[tuple[int, int]]) -> None:
        with self._acks_lock:
            while pending and pending[0][0] in self._acks:
                self._acks.discard(pending.popleft()[0])
        if pending:
            # Every message of the entries before the oldest one still in flight is acknowledged.
            self._set_acked(max(self._acked, pending[0][1] - 1))
        else:
            self._set_acked(self._sent)

    def _set_acked(self, seq: int) -> None:
        if seq != self._acked:
            with self._acked_changed:
                self._acked = seq
                self._acked_changed.notify_all()

    def _write_mark(self, written: int) -> int:
        seq = self._acked
        try:
            self._mark(seq)
        except Exception as exc:  # a stale mark only means repeats after a restart
            log.warning("floor: could not record that the broker has entry %d: %s", seq, exc)
            return written
        return seq

    # -- messages -------------------------------------------------------------------------------

    def _topic(self, kind: str) -> str:
        if kind == SURVEILLANCE:
            return schema.surveillance_topic(self.site, self.table_id)
        return schema.topic(self.site, self.table_id, kind)

    def _envelope(self, entry: Entry) -> dict[str, Any]:
        return {"v": schema.VERSION, "site": self.site, "table": self.table_id, "boot": self.boot, "seq": entry.seq,
                "at": entry.at}  # fmt: skip

    def _status(self, status: str, reason: str | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "v": schema.VERSION,
            "site": self.site,
            "table": self.table_id,
            "boot": self.boot,
            "at": _now(),
            "status": status,
            "game": self.game,
            "last": self._journal_last,  # the journal's newest seq as far as the publisher has read
        }
        if self.config.pit is not None:
            payload["pit"] = self.config.pit
        if reason:
            payload["reason"] = reason
        return payload

    def _messages(self, replica: Replica, entry: Entry) -> Iterator[Message]:
        envelope = self._envelope(entry)
        whole = {**envelope, "round": entry.round, "kind": entry.kind, "body": entry.body}
        yield SURVEILLANCE, whole
        if entry.seq <= replica.blind_through:  # its state is gone from the journal (Replica.resume)
            yield "entry", {**envelope, "round": entry.round, "kind": entry.kind, "body": {}, "withheld": True}
            return
        try:
            # What the dealer may not see as the entry comes, on the replica as it stands before it.
            before = sight(replica.state, None)
            hidden = before.hidden(entry.round) | before.current()
            derived = _derive(replica, entry)
            after = sight(replica.state, None)  # ... and as it stands after it: both are masked
            general = [("entry", {"round": entry.round, "kind": entry.kind, "body": entry.body}), *derived]
            masked = [
                (kind, {**envelope, **after.entry(after.mask(fields, hidden), entry.round)}) for kind, fields in general
            ]
        except Exception:  # a replica that cannot follow still lets every entry through, whole to surveillance
            log.exception("floor: the replica could not follow entry %d (%s)", entry.seq, entry.kind)
            yield "entry", {**envelope, "round": entry.round, "kind": entry.kind, "body": {}, "withheld": True}
            return
        yield from masked


class LoopMark:
    """The daemon's mark writer: writes run on the table loop, so the journal keeps one writer
    (the publisher's own connection is read-only and cannot contend with a card being journaled).
    Calling it records the broker's mark; `meta` records any other floor mark (the stores').
    Stop the publisher while the loop still runs (`await asyncio.to_thread(publisher.stop)`) so
    the last mark lands; a mark that does not land only means repeats after the next start."""

    def __init__(self, journal: Journal, loop: asyncio.AbstractEventLoop) -> None:
        self.journal = journal
        self.loop = loop

    def __call__(self, seq: int) -> None:
        self.meta(MARK_KEY, str(seq))

    def meta(self, key: str, value: str) -> None:
        self.loop.call_soon_threadsafe(self.journal.set_meta, key, value)


def loop_mark(journal: Journal, loop: asyncio.AbstractEventLoop) -> LoopMark:
    """The marks of `journal`, written on `loop` (see LoopMark)."""
    return LoopMark(journal, loop)


class Replica:
    """The publisher's copy of the table's state: the table's reducer, fed the journal's entries
    one by one. Nothing is journaled or shown, and no history is kept: after a round ends only
    the round being dealt stays in memory.

    `blind_through`: entries up to this seq cannot be followed (their state is gone from the
    journal, see `resume`); they are sent whole to surveillance and withheld on the general topic."""

    def __init__(
        self, game: str, rules: Mapping[str, Any], state: TableState | None = None, blind_through: int = 0
    ) -> None:
        self.state = state if state is not None else TableState.initial(TableSetup.of(game, rules))
        self.blind_through = blind_through

    @classmethod
    def resume(cls, journal: Journal, game: str, rules: Mapping[str, Any], mark: int) -> Replica:
        """The replica as the table stood after entry `mark`, made as the table makes its own
        state at start (controller/table/snapshots.py): the journal's last snapshot at or before
        the mark, checked against the snapshot before it and the entries between (a disagreement
        raises JournalCorrupt), then the entries up to the mark through the reducer. So its cost
        is a round or two of entries, whatever the journal's length.

        With no snapshot at or before the mark (a journal from before snapshots, or a mark older
        than the snapshots kept) it starts from the first entry, as a full replay does. When
        retention has removed those first entries too, the state at the mark is known nowhere:
        it resumes at the oldest snapshot kept, and the entries up to it are sent blind."""
        setup = TableSetup.of(game, rules)
        first = journal.first_seq()
        # Only snapshots whose following entries are all still here (retention may have archived
        # the entries after an old one): the state is carried forward from them entry by entry.
        kept = [snapshot for snapshot in journal.snapshots(SNAPSHOTS_KEPT) if snapshot.seq >= first - 1]
        before = [i for i, snapshot in enumerate(kept) if snapshot.seq <= mark]
        if before:
            i = before[-1]
            if i > 0:
                table_snapshots.check(journal, setup, kept[i - 1], kept[i])
            replica = cls(game, rules, table_snapshots.load_state(setup, kept[i].body["state"]))
            after = kept[i].seq
        elif first > 1:
            if not kept:
                raise JournalCorrupt(
                    f"{journal.path}: entries up to {first - 1} were archived but no snapshot of the table after "
                    "them is left; run `tablectl journal rebuild` with the archive"
                )
            log.error(
                "floor: the publisher's mark (entry %d) is older than every snapshot the journal keeps and "
                "entries up to %d were archived: entries %d-%d go to the floor whole on the surveillance topic "
                "and withheld on the general one (no settlements, faults or meters for them)",
                mark, first - 1, mark + 1, kept[0].seq,
            )  # fmt: skip
            return cls(game, rules, table_snapshots.load_state(setup, kept[0].body["state"]), kept[0].seq)
        else:
            replica, after = cls(game, rules), 0
        for entry in journal.entries(after=after, upto=mark):
            replica.follow(entry)  # the state before the first entry to send: no messages
        return replica

    def follow(self, entry: Entry) -> tuple[Effect, ...]:
        self.state, effects = self.state.apply(parse_entry(entry))
        if self.state.ended_by(entry.seq):
            self.state.rounds.forget_finished(self.state.round_no)
        return effects


def _derive(replica: Replica, entry: Entry) -> list[Message]:
    """What `entry` changed on the replica: a settled or voided round, faults, meters."""
    was_state = replica.state
    record = was_state.current
    was = record.status if record is not None else None
    faults_before = {fid: f.to_json() for fid, f in was_state.faults.items()}
    meters_before = was_state.meters.to_json()
    replica.follow(entry)
    state = replica.state
    out: list[Message] = []
    if record is not None and was == "open" and record.status != "open":
        settled: dict[str, Any] = {
            "round": record.number,
            "status": record.status,
            "opened_at": record.opened_at,
            "cards": list(record.cards),
            "settlement": record.settlement,
        }
        if record.status == "settled":
            settled["payouts"] = state.payouts()
        out.append(("settlement", settled))
    faults_after = {fid: f.to_json() for fid, f in state.faults.items()}
    if faults_after != faults_before:
        how = {key: entry.body.get(key) for key in ("action", "by", "reason")}
        cleared = [{"id": fid, "code": f["code"], **how} for fid, f in faults_before.items() if fid not in faults_after]
        raised = [f for fid, f in faults_after.items() if fid not in faults_before]
        out.append(("fault", {"raised": raised, "cleared": cleared, "open": list(faults_after.values())}))
    meters = state.meters.to_json()
    if meters != meters_before:
        out.append(("meters", {"game": state.game_name, "meters": meters}))
    return out
