"""What a table says to the floor: topics and versioned JSON payloads, and how a consumer reads them.

Topics are `tablectl/<site>/<table>/<kind>`, one kind a topic. These are the general topics: the
live floor view and any other floor system read them, so no face-down card is ever on them. Each
message is what the dealer's view shows at that entry (controller.table.visibility, the dealer's sight
of the publisher's replica before and after the entry): a card face down is written "face-down
card", in every notation the dealer's view masks.

    entry       every journal entry, in journal order: seq, at, round, kind, body (masked)
    settlement  a round settled or was voided: round, status, settlement (the engine's words)
    fault       retained: faults raised or cleared by one entry: raised, cleared, open (all still open)
    meters      retained: the table's meters whenever an entry changed them (settlement, void, fault)
    status      retained: online or offline (the last will), game, boot, pit (when set); the only kind with no seq

The whole journal, every card as dealt, goes one level deeper, on the surveillance topic, which
only the floor store and surveillance may read (hardware/floor/acl), and which a subscriber to
`tablectl/+/+/+` never matches:

    tablectl/<site>/<table>/surveillance/entry   every journal entry, unmasked, as on `entry`

Every payload is one JSON object that starts with the same envelope:

    {"v": 1, "site": "main-floor", "table": "GS-01", "boot": "3f9c0a1b2e4d", "seq": 1234, "at": "...Z", ...}

`seq` is the journal entry's sequence number: gapless and unique for the life of the table's
journal, so (table, seq) is the idempotency key of an entry and of everything derived from it (a
settlement, a fault change, the meters) on that kind's topic. `boot` names the daemon start that
sent the message: after a restart the publisher sends again what the broker had not acknowledged
before, under a new boot, so a consumer can tell a restart's repeats from a fault and drop them by
(table, seq). `at` is when the entry was committed to the journal (UTC), not when it was sent.

End-to-end catch-up (MQTT 5 request/response) lives one level deeper, so a viewer subscribed to
`tablectl/+/+/+` never sees it (its replies are whole entries, as on the surveillance topic):

    tablectl/<site>/<table>/catchup/request            a floor consumer asks: {"v", "after", "limit", "store"
                                                       [, "page", "page_limit"]} with a response topic
                                                       and correlation data
    tablectl/<site>/<table>/catchup/reply/<consumer>   the table answers, in journal order: each entry
                                                       after `after` ({"reply": "entry", envelope,
                                                       round, kind, body}), or, asked for pages, the
                                                       entries `page` to a message ({"reply": "page",
                                                       envelope without seq, "entries": [{seq, at, round,
                                                       kind, body}, ...]}), then {"reply": "end", "after",
                                                       "through", "last", "more"}

A starting table asks the floor store how far it holds the table's history (controller/adapters/floor/history.py):

    tablectl/<site>/<table>/history/request   the table: {"v"} with a response topic and correlation data
    tablectl/<site>/<table>/history/reply     the store: {"v", "seq", "chain", "head_seq", "alerts"}

`after` is also the store's confirmation: it holds every entry up to it, so the table may record
it as floor-confirmed (`floor.stored`), distinct from the broker's PUBACK mark (`floor.acked`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VERSION = 1
ROOT = "tablectl"
KINDS = ("entry", "settlement", "fault", "meters", "status")
EVENT_KINDS = ("entry", "settlement", "fault", "meters")
#: Kinds that are the table's current state, kept by the broker so a new viewer sees them at once.
RETAINED = frozenset({"status", "fault", "meters"})
#: What a viewer or a consumer subscribes to for the table's messages: exactly four levels.
EVENTS_FILTER = f"{ROOT}/+/+/+"
#: The level under a table that only the floor store and surveillance may read.
SURVEILLANCE = "surveillance"
#: The surveillance topics: every table's whole journal, unmasked.
SURVEILLANCE_FILTER = f"{ROOT}/+/+/{SURVEILLANCE}/entry"
#: The tables' status messages (online, offline, their newest seq), which the floor store reads.
STATUS_FILTER = f"{ROOT}/+/+/status"
#: At most this many entries in one catch-up reply; the consumer asks again for the rest.
REPLY_LIMIT = 2000
#: A request that asks for pages (`"page": N`, N entries a message, at most PAGE_MAX) may ask
#: for up to PAGED_LIMIT entries in one answer (`"page_limit"`). A table from before pages
#: ignores both and answers `limit` entries a message each, which every consumer still reads.
PAGE = 500
PAGE_MAX = 2000
PAGED_LIMIT = 20_000


class FloorMessageError(ValueError):
    """A message on tablectl/# that is not one this version reads; the text says which and why."""


def topic(site: str, table: str, kind: str) -> str:
    return f"{ROOT}/{site}/{table}/{kind}"


def surveillance_topic(site: str, table: str) -> str:
    """Where the table publishes its whole journal, every card as dealt."""
    return f"{ROOT}/{site}/{table}/{SURVEILLANCE}/entry"


def request_topic(site: str, table: str) -> str:
    return f"{ROOT}/{site}/{table}/catchup/request"


def reply_topic(site: str, table: str, consumer: str) -> str:
    return f"{ROOT}/{site}/{table}/catchup/reply/{consumer}"


def history_request_topic(site: str, table: str) -> str:
    """Where a starting table asks the floor store how far it holds the table's history."""
    return f"{ROOT}/{site}/{table}/history/request"


def history_reply_topic(site: str, table: str) -> str:
    """Where the floor store answers it (only the table and the store may use either)."""
    return f"{ROOT}/{site}/{table}/history/reply"


#: The starting tables' questions, which the floor store answers.
HISTORY_REQUEST_FILTER = f"{ROOT}/+/+/history/request"


def reply_filter(consumer: str) -> str:
    return f"{ROOT}/+/+/catchup/reply/{consumer}"


def encode(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


@dataclass(frozen=True)
class FloorMessage:
    """One message read off the floor: the topic's parts and the JSON payload."""

    site: str
    table: str
    kind: str
    payload: dict[str, Any]

    @property
    def seq(self) -> int | None:
        seq = self.payload.get("seq")
        return seq if isinstance(seq, int) else None

    @property
    def boot(self) -> str:
        return str(self.payload["boot"])


def parse(topic_name: str, data: bytes | bytearray) -> FloorMessage:
    """Read one message; raise FloorMessageError naming the topic and what is wrong with it."""
    levels = topic_name.split("/")
    if len(levels) != 4 or levels[0] != ROOT:
        raise FloorMessageError(f"{topic_name}: not a tablectl/<site>/<table>/<kind> topic")
    _, site, table, kind = levels
    if kind not in KINDS:
        raise FloorMessageError(f"{topic_name}: unknown kind {kind!r}; this version reads {', '.join(KINDS)}")
    return _parse(topic_name, site, table, kind, data)


def parse_surveillance(topic_name: str, data: bytes | bytearray) -> FloorMessage:
    """Read one whole entry off a surveillance topic (kind "entry"); raise FloorMessageError."""
    levels = topic_name.split("/")
    if len(levels) != 5 or levels[0] != ROOT or levels[3:] != [SURVEILLANCE, "entry"]:
        raise FloorMessageError(f"{topic_name}: not a tablectl/<site>/<table>/{SURVEILLANCE}/entry topic")
    message = _parse(topic_name, levels[1], levels[2], "entry", data)
    check_entry(topic_name, message.payload)
    return message


def _parse(topic_name: str, site: str, table: str, kind: str, data: bytes | bytearray) -> FloorMessage:
    try:
        payload = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FloorMessageError(f"{topic_name}: the payload is not JSON") from None
    if not isinstance(payload, dict):
        raise FloorMessageError(f"{topic_name}: the payload is not a JSON object")
    if payload.get("v") != VERSION:
        raise FloorMessageError(f"{topic_name}: payload version {payload.get('v')!r}; this version reads {VERSION}")
    if payload.get("site") != site or payload.get("table") != table:
        raise FloorMessageError(f"{topic_name}: the payload names another table ({payload.get('table')!r})")
    if not isinstance(payload.get("boot"), str):
        raise FloorMessageError(f"{topic_name}: the payload has no boot id")
    seq = payload.get("seq")
    if kind in EVENT_KINDS and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 1):
        raise FloorMessageError(f"{topic_name}: seq must be a journal sequence number, not {seq!r}")
    return FloorMessage(site, table, kind, payload)


def parse_reply(topic_name: str, data: bytes | bytearray) -> FloorMessage:
    """Read one catch-up reply (kind "entry", "page" or "end"); raise FloorMessageError naming the
    topic (and, in a page, the entry)."""
    levels = topic_name.split("/")
    if len(levels) != 6 or levels[0] != ROOT or levels[3:5] != ["catchup", "reply"]:
        raise FloorMessageError(f"{topic_name}: not a tablectl/<site>/<table>/catchup/reply/<consumer> topic")
    _, site, table = levels[:3]
    try:
        payload = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise FloorMessageError(f"{topic_name}: the payload is not JSON") from None
    if not isinstance(payload, dict) or payload.get("v") != VERSION:
        raise FloorMessageError(f"{topic_name}: not a version {VERSION} JSON object")
    if payload.get("site") != site or payload.get("table") != table or not isinstance(payload.get("boot"), str):
        raise FloorMessageError(f"{topic_name}: the payload names another table, or no boot")
    kind = payload.get("reply")
    if kind == "entry":
        seq = payload.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise FloorMessageError(f"{topic_name}: seq must be a journal sequence number, not {seq!r}")
        check_entry(topic_name, payload)
    elif kind == "page":
        rows = payload.get("entries")
        if not isinstance(rows, list) or not rows:
            raise FloorMessageError(f"{topic_name}: a page's entries must be a list of entries, not {rows!r:.40}")
        before = 0
        for n, row in enumerate(rows):
            if not isinstance(row, dict):
                raise FloorMessageError(f"{topic_name}: entries[{n}] of the page is not a JSON object")
            seq = row.get("seq")
            if isinstance(seq, bool) or not isinstance(seq, int) or seq <= before:
                raise FloorMessageError(
                    f"{topic_name}: entries[{n}] of the page: seq must be a journal sequence number after "
                    f"{before}, not {seq!r}"
                )
            check_entry(f"{topic_name} entries[{n}]", row)
            before = seq
    elif kind == "end":
        for key in ("after", "through", "last"):
            value = payload.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise FloorMessageError(f"{topic_name}: {key} must be a whole number, not {value!r}")
    else:
        raise FloorMessageError(f"{topic_name}: reply must be 'entry', 'page' or 'end', not {kind!r}")
    return FloorMessage(site, table, kind, payload)


def check_entry(topic_name: str, payload: Mapping[str, Any]) -> None:
    """An entry payload carries what the store keeps: at, round, kind and body."""
    if not isinstance(payload.get("at"), str) or not isinstance(payload.get("kind"), str):
        raise FloorMessageError(f"{topic_name}: entry {payload.get('seq')} has no at or kind")
    rnd = payload.get("round")
    if rnd is not None and (isinstance(rnd, bool) or not isinstance(rnd, int)):
        raise FloorMessageError(f"{topic_name}: entry {payload.get('seq')}: round must be a number or null")
    if not isinstance(payload.get("body"), dict):
        raise FloorMessageError(f"{topic_name}: entry {payload.get('seq')}: body must be a JSON object")


@dataclass
class _Taken:
    last: int = 0
    missing: set[int] = field(default_factory=set)


class Ledger:
    """What a consumer has taken from each table, to drop repeats and notice what is missing.

    ledger = Ledger()
    if ledger.take(message): store(message)   # False for a repeat of (table, seq) on that topic

    On the entry topic seqs are gapless, so a jump leaves the skipped seqs in `missing` until they
    come: a consumer sees at once what it has not got, whatever the broker in between did. The
    derived kinds are sparse: a message is new when its seq is past the last one taken.
    """

    def __init__(self) -> None:
        self._taken: dict[tuple[str, str, str], _Taken] = {}

    def take(self, message: FloorMessage) -> bool:
        seq = message.seq
        if seq is None:  # status: not an event; the latest one is the truth
            return True
        taken = self._taken.setdefault((message.site, message.table, message.kind), _Taken())
        if seq > taken.last:
            if message.kind == "entry":
                taken.missing.update(range(taken.last + 1, seq))
            taken.last = seq
            return True
        if seq in taken.missing:
            taken.missing.discard(seq)
            return True
        return False

    def last(self, site: str, table: str, kind: str = "entry") -> int:
        taken = self._taken.get((site, table, kind))
        return taken.last if taken else 0

    def missing(self, site: str, table: str) -> list[int]:
        taken = self._taken.get((site, table, "entry"))
        return sorted(taken.missing) if taken else []


def entries(count: int) -> str:
    """"1 entry", "20 entries": a count of entries for the floor's logs and reports."""
    return f"{count} entry" if count == 1 else f"{count} entries"
