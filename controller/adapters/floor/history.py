"""At start, a table that reports to a floor asks the floor store how far it holds its history,
and refuses to open when its own journal is behind that or forks from it.

The store answers with the last entry up to which it has checked the table's hash chain, the
chain's value there and its last signed head (controller/floor/store.py, `history`). A journal
that ends before that entry (a state directory restored from an earlier copy: database, WAL and
`journal.head` together) or whose chain differs there (entries rewritten and the chain recomputed)
is refused before anything is written to it, so no sequence number is used twice. A floor that
does not answer leaves the history unconfirmed: the table plays, and its supervisor screen says
since when the floor has not confirmed it.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from typing import Any

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.adapters.floor import schema
from controller.adapters.floor.catchup import new_client
from controller.adapters.floor.config import FloorConfig
from controller.journal.log import Journal, JournalError

log = logging.getLogger("tablectl.floor.history")

#: How long a starting table waits for the floor store's answer (a backstop: the answer is waited
#: for as an event, and a floor that is away only leaves the history unconfirmed).
ASK_TIMEOUT_S = 5.0


class HistoryRefused(Exception):
    """The journal is behind the floor's copy of it, or forks from it: the words say which."""


def ask_floor(config: FloorConfig, table_id: str, timeout: float = ASK_TIMEOUT_S) -> dict[str, Any] | None:
    """The floor store's answer for `table_id`, or None when none came within `timeout`."""
    answer: dict[str, Any] = {}
    got = threading.Event()
    subscribed = threading.Event()
    correlation = secrets.token_bytes(8)
    reply = schema.history_reply_topic(config.site, table_id)
    client = new_client(config, f"tablectl-{config.site}-{table_id}-history-{secrets.token_hex(3)}", config.password())

    def on_connect(c: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if not reason.is_failure:
            c.subscribe(reply, 1)

    def on_subscribe(c: Any, userdata: Any, mid: Any, reasons: Any, properties: Any) -> None:
        subscribed.set()

    def on_message(c: Any, userdata: Any, message: Any) -> None:
        if getattr(message.properties, "CorrelationData", None) != correlation or got.is_set():
            return  # another start's answer, or one after the first (the answer given is kept as it is)
        problem = answer_problem(message.payload)
        if problem is not None:
            log.error("floor: an answer on %s to this start's question is not the floor store's: %s; ignored",
                      message.topic, problem)  # fmt: skip
            return
        answer.update(json.loads(message.payload))
        got.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    try:
        client.connect_async(config.broker.host, config.broker.port, keepalive=config.keepalive, clean_start=True)
        client.loop_start()
        if not subscribed.wait(timeout):
            return None
        props = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        props.ResponseTopic = reply
        props.CorrelationData = correlation
        client.publish(schema.history_request_topic(config.site, table_id), schema.encode({"v": schema.VERSION}), 1,
                       properties=props)  # fmt: skip
        return answer if got.wait(timeout) else None
    finally:
        client.disconnect()
        client.loop_stop()


def answer_problem(payload: bytes) -> str | None:
    """What is wrong with a history answer as the store writes it (None: nothing):
    {"v", "seq": entry number >= 0, "chain": hex, "head_seq", "alerts": [entry numbers]}."""
    try:
        answer = json.loads(payload)
    except ValueError:
        return "not JSON"

    def count(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    if not isinstance(answer, dict) or answer.get("v") != schema.VERSION:
        return f"not a version {schema.VERSION} JSON object"
    if not count(answer.get("seq")) or not count(answer.get("head_seq", 0)):
        return f"seq {answer.get('seq')!r} is not an entry number"
    chain = answer.get("chain")
    if not isinstance(chain, str) or not chain or any(ch not in "0123456789abcdef" for ch in chain):
        return f"chain {str(chain)[:40]!r} is not a hash chain value"
    alerts = answer.get("alerts", [])
    if not isinstance(alerts, list) or not all(count(a) for a in alerts):
        return "alerts is not a list of entry numbers"
    return None


def check_history(journal: Journal, answer: dict[str, Any], table_id: str) -> None:
    """HistoryRefused when `journal` is behind the floor's `answer` or forks from it."""
    seq, chain = int(answer.get("seq", 0)), str(answer.get("chain", ""))
    if seq <= 0:
        return
    if journal.last_seq < seq:
        raise HistoryRefused(
            f"the journal is behind the floor's copy of it: the floor store holds table {table_id}'s entries "
            f"through {seq}, this journal ends at {journal.last_seq}. The state directory was restored from an "
            "earlier copy, or entries were removed; playing on would use sequence numbers 1 to "
            f"{seq} again. What to do: keep these files for the investigation and call surveillance; restore the "
            "state directory's latest copy (tablectl floor export holds every entry the floor has)"
        )
    try:
        ours = journal.chain if seq == journal.last_seq else journal.chain_through(seq)
    except JournalError as exc:
        raise HistoryRefused(f"the journal cannot be compared with the floor's copy: {exc}") from None
    if ours != chain:
        raise HistoryRefused(
            f"the journal forks from the floor's copy of it: at entry {seq} its hash chain is {ours[:12]}..., the "
            f"floor store's is {chain[:12]}...: entries up to {seq} were changed on this table. What to do: keep "
            "these files for the investigation and call surveillance; the floor's copy is the record"
        )
