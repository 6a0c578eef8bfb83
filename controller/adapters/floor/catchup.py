"""The table's side of end-to-end catch-up: a floor consumer asks, the table answers from its journal.

A broker's PUBACK is not the floor having an entry: a broker killed before it saved its store
forgets sessions and queued messages. So a floor consumer that sees a gap in a table's seqs (or
has not heard from a table) asks the table itself, over MQTT 5 request/response:

    request  tablectl/<site>/<table>/catchup/request, QoS 1 (a periodic probe's: QoS 0), payload
             {"v": 1, "after": 812, "limit": 2000, "store": "<store id>"[, "from": 2812]},
             properties ResponseTopic = tablectl/<site>/<table>/catchup/reply/<consumer>,
             CorrelationData = any bytes (echoed on every reply message)
    replies  on the response topic, in journal order: every entry with seq > from (`from`
             defaults to `after`; at most `limit`), as on the entry topic plus "reply": "entry";
             then one {"reply": "end", "after", "through", "last", "more", "gaps"} (`last`: the
             journal's newest; `gaps`: [first, last] ranges of seqs between from and through that
             the journal does not hold, at most 10)
    pages    a request with "page": N (1 to 2,000) asks for the entries N to a message, and may
             ask for up to "page_limit" (at most 20,000) of them in one answer: each message
             {"v", "site", "table", "boot", "reply": "page", "entries": [{"seq", "at", "round",
             "kind", "body"}, ...]}, then the same end. A table from before pages ignores both
             keys and answers entry by entry, `limit` of them; a consumer reads either form.

`from` lets a consumer of a group (shared subscriptions: each reply entry may be stored by
another consumer of the group, not yet committed when the `end` comes) ask for the next chunk
without confirming more than its store holds; `gaps` says a hole in the table's journal outright,
so whichever consumer reads the `end` can raise the floor alert without waiting for the others.

`after` says the store holds every entry up to it: the responder records it per store in the
journal's meta (`floor.stored`, JSON {store id: seq}), the floor-confirmed mark, distinct from
the broker's `floor.acked`. The journal never drops an entry (it is append-only); whatever ever
trims one must stay at or below `retention_limit` (the lowest mark of every store that has
confirmed), so nothing a floor store has not stored is ever lost.

The responder has its own MQTT connection (client id `<publisher's>-catchup`) and thread, and its
own read-only view of the journal, so a day's catch-up never delays the live feed, and its
acknowledgements never mix with the publisher's.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from itertools import islice
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.adapters.floor import schema
from controller.adapters.floor.config import FloorConfig, check_level
from controller.journal.log import FLOOR_CONFIRMED_KEY, Journal, JournalError

log = logging.getLogger("tablectl.floor")
_paho_log = logging.getLogger("tablectl.floor.mqtt")

#: The journal meta key of the floor-confirmed marks: {store id: every seq up to here is stored}.
STORED_KEY = FLOOR_CONFIRMED_KEY  # the journal reads it too: retention never trims past it
#: How long to wait for the broker to take one reply before giving up on the request.
REPLY_WAIT_S = 10.0


def new_client(config: FloorConfig, client_id: str, password: str | None) -> mqtt.Client:
    """A paho MQTT 5 client as a table connects: TLS and login from the [floor] section. MQTT 5,
    because its PUBACK says when the broker refused a message (an ACL), and for request/response."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    # paho's own lines at DEBUG only: paho 2.2 logs a routine end of its network loop as an error.
    # Only when DEBUG is on: paho formats every packet's line (its properties too) for on_log.
    if _paho_log.isEnabledFor(logging.DEBUG):
        client.on_log = lambda c, u, level, text: _paho_log.debug("%s", text)
    if config.broker.tls:
        client.tls_set(ca_certs=config.ca_file, certfile=config.cert_file, keyfile=config.key_file)
    if config.username is not None:
        client.username_pw_set(config.username, password)
    return client


def read_stored(text: str | None) -> dict[str, int]:
    """The floor-confirmed marks as the journal keeps them ({} when none, or unreadable)."""
    if not text:
        return {}
    try:
        marks = json.loads(text)
    except json.JSONDecodeError:
        log.error("floor: the journal's %s mark is not JSON; treating every store as holding nothing", STORED_KEY)
        return {}
    if not isinstance(marks, dict):
        return {}
    return {str(k): v for k, v in marks.items() if isinstance(v, int) and not isinstance(v, bool)}


def retention_limit(journal: Journal) -> int:
    """The highest seq every floor store has confirmed (0 when none has): nothing above it may
    ever be trimmed from the table (controller/journal/retention.py asks `Journal.floor_confirmed`)."""
    return journal.floor_confirmed() or 0


class CatchupResponder:
    """Answers floor consumers' catch-up requests for one table from its journal."""

    def __init__(
        self,
        config: FloorConfig,
        journal_path: Path | str,
        *,
        table_id: str,
        client_id: str,
        boot: str,
        password: str | None,
        meta: Callable[[str, str], None] | None,
        reconnect_max_s: int = 30,
        durable: Callable[[], int] | None = None,
    ) -> None:
        """`durable`: the last entry on disk (FloorPublisher's): none beyond it is given."""
        self.config = config
        self._durable = durable
        self.site = config.site
        self.table_id = table_id
        self.boot = boot
        self.journal_path = Path(journal_path)
        self.client_id = client_id
        self._meta = meta
        self._requests: queue.Queue[mqtt.MQTTMessage | None] = queue.Queue()
        self._prefix = schema.reply_topic(self.site, table_id, "")
        self._stored: dict[str, int] = {}
        self._refused: set[int] = set()
        self._refused_lock = threading.Lock()
        self.answered = 0
        self._said: str | None = None
        self._thread: threading.Thread | None = None
        self._client = new_client(config, client_id, password)
        self._client.reconnect_delay_set(1, reconnect_max_s)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self._client.on_publish = self._on_publish

    @property
    def stored(self) -> dict[str, int]:
        """The floor-confirmed marks: {store id: every entry up to here is in that store}."""
        return dict(self._stored)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="floor-catchup", daemon=True)
        self._thread.start()
        self._client.connect_async(
            self.config.broker.host, self.config.broker.port, keepalive=self.config.keepalive, clean_start=True
        )
        self._client.loop_start()

    def stop(self, timeout: float = 5.0) -> None:
        self._requests.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
        self._client.disconnect()
        self._client.loop_stop()

    # -- paho's thread ----------------------------------------------------------------------------

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if not reason.is_failure:  # the publisher says what a refused connection means, once
            client.subscribe(schema.request_topic(self.site, self.table_id), qos=1)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        self._requests.put(message)

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            with self._refused_lock:
                self._refused.add(mid)

    # -- the responder's thread ---------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            reader = Journal(self.journal_path, readonly=True)
        except JournalError as exc:
            log.error("floor: cannot read the journal, no catch-up will be answered: %s", exc)
            return
        try:
            self._stored = read_stored(reader.get_meta(STORED_KEY))
            while True:
                message = self._requests.get()
                if message is None:
                    return
                try:
                    self._answer(reader, message)
                except _Refused as exc:
                    self._say(f"refused a catch-up request on {message.topic}: {exc}")
        except Exception:  # catch-up must never take the table down
            log.exception("floor: the catch-up responder stopped on an unexpected error; the journal keeps every event")
        finally:
            reader.close()

    def _say(self, words: str) -> None:
        if words != self._said:  # one line per kind of trouble, not one per request
            log.warning("floor: %s", words)
            self._said = words

    def _answer(self, reader: Journal, message: mqtt.MQTTMessage) -> None:
        props = message.properties
        response = getattr(props, "ResponseTopic", None) if props is not None else None
        correlation = getattr(props, "CorrelationData", None) if props is not None else None
        if not isinstance(response, str) or not response.startswith(self._prefix):
            raise _Refused(f"the response topic must be {self._prefix}<consumer>, not {response!r}")
        try:
            check_level(response[len(self._prefix) :], "the consumer in the response topic")
        except ValueError as exc:
            raise _Refused(str(exc)) from None
        try:
            request = json.loads(message.payload)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise _Refused("the payload is not JSON") from None
        if not isinstance(request, dict) or request.get("v") != schema.VERSION:
            raise _Refused(f"not a version {schema.VERSION} JSON object")
        after, limit, store = request.get("after"), request.get("limit", schema.REPLY_LIMIT), request.get("store")
        if isinstance(after, bool) or not isinstance(after, int) or after < 0:
            raise _Refused(f"after must be a journal seq, 0 or more, not {after!r}")
        start = request.get("from", after)
        if isinstance(start, bool) or not isinstance(start, int) or start < after:
            raise _Refused(f"from must be a journal seq, {after} (after) or more, not {start!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= schema.REPLY_LIMIT:
            raise _Refused(f"limit must be a whole number from 0 to {schema.REPLY_LIMIT}, not {limit!r}")
        page = request.get("page")
        if page is not None:
            if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= schema.PAGE_MAX:
                raise _Refused(f"page must be a whole number from 1 to {schema.PAGE_MAX}, not {page!r}")
            limit = request.get("page_limit", limit)
            if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= schema.PAGED_LIMIT:
                raise _Refused(f"page_limit must be a whole number from 0 to {schema.PAGED_LIMIT}, not {limit!r}")
        if store is not None:
            try:
                check_level(str(store), "store")
            except ValueError as exc:
                raise _Refused(str(exc)) from None
        last = reader.read_last_seq()
        if self._durable is not None:
            last = min(last, self._durable())  # an entry not yet on disk is not given (FloorPublisher)
        base = {"v": schema.VERSION, "site": self.site, "table": self.table_id, "boot": self.boot}
        infos: list[mqtt.MQTTMessageInfo] = []
        out = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        if isinstance(correlation, bytes | bytearray):
            out.CorrelationData = bytes(correlation)
        if after > last:
            # The store says it has entries this journal never wrote: another table's, or a
            # replaced journal. Never confirmed; the consumer is told and logs it.
            log.error(
                "floor: store %s says it holds entries up to %d but this journal ends at %d: a table id used twice, "
                "or a replaced journal? Not recorded as stored",
                store, after, last,
            )  # fmt: skip
            end = {**base, "reply": "end", "after": after, "through": after, "last": last, "more": False,
                   "error": f"the journal of {self.table_id} ends at {last}, before {after}"}  # fmt: skip
            infos.append(self._client.publish(response, schema.encode(end), 1, properties=out))
            self._wait(infos)
            return
        start = min(start, last)  # a consumer ahead of this journal gets its end at once
        through = start
        gaps: list[list[int]] = []
        rows: list[dict[str, Any]] = []
        for entry in islice(reader.entries(after=start, upto=last), limit):
            if entry.seq != through + 1 and len(gaps) < 10:
                gaps.append([through + 1, entry.seq - 1])
            row = {"seq": entry.seq, "at": entry.at, "round": entry.round, "kind": entry.kind, "body": entry.body}
            through = entry.seq
            if page is None:
                infos.append(self._client.publish(response, schema.encode({**base, "reply": "entry", **row}), 1,
                                                  properties=out))  # fmt: skip
                continue
            rows.append(row)
            if len(rows) >= page:
                infos.append(self._page(response, base, rows, out))
                rows = []
        if rows:
            infos.append(self._page(response, base, rows, out))
        last = max(last, through)
        end = {**base, "reply": "end", "after": after, "through": through, "last": last, "more": through < last,
               "gaps": gaps}  # fmt: skip
        infos.append(self._client.publish(response, schema.encode(end), 1, properties=out))
        self.answered += 1
        if store is not None:
            self._confirm(str(store), after)
        self._wait(infos)

    def _page(
        self, response: str, base: dict[str, Any], rows: list[dict[str, Any]], out: Properties
    ) -> mqtt.MQTTMessageInfo:
        return self._client.publish(response, schema.encode({**base, "reply": "page", "entries": rows}), 1,
                                    properties=out)  # fmt: skip

    def _wait(self, infos: list[mqtt.MQTTMessageInfo]) -> None:
        # Paced by the broker: the next request is read only when this reply is taken (or given up).
        for info in infos:
            try:
                info.wait_for_publish(REPLY_WAIT_S)
            except (RuntimeError, ValueError):  # not connected: the consumer will ask again
                return
            if not info.is_published():
                return
        with self._refused_lock:
            refused = [info.mid for info in infos if info.mid in self._refused]
            self._refused.difference_update(refused)
        if refused:
            log.error(
                "floor: the broker refused %d catch-up reply message(s) of %s: its ACL must let the table write "
                "%s#", len(refused), self.table_id, self._prefix,
            )  # fmt: skip

    def _confirm(self, store: str, seq: int) -> None:
        if seq <= self._stored.get(store, 0):
            return
        self._stored = {**self._stored, store: seq}
        if self._meta is None:
            return
        try:
            self._meta(STORED_KEY, json.dumps(self._stored, sort_keys=True))
        except Exception as exc:  # kept in memory; the next request writes it again
            log.warning("floor: could not record that store %s holds entry %d: %s", store, seq, exc)


class _Refused(ValueError):
    """A request this table does not answer; the text says why."""
