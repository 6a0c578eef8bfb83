"""No face-down card on any topic the live floor view may read, through the shipped broker and ACL.

Real rounds are dealt with their face-down cards, each card with the shoe's frame as the shoe
reader journals it. Which cards lie face down is worked out here from GAMES.md and the order the
cards were dealt in, not asked of tablectl: Baseball poker (section 3) deals 3rd street down,
down, up, 4th to 6th up and 7th down, to the players still in, and a 4 dealt face up brings an
extra face-down card at once; Grand Slam's blind hand (section 1) gets a card, face down, each
time the solo player gets one, in seat order within the pass. The live view's user subscribes to
everything the broker lets it, and no face-down card reaches it in any notation (the card code,
its Unicode form, the hex of the two card bytes the shoe sends, the raw bytes) while the hand is
live, nor afterwards unless the rules turn it over (a showdown); the surveillance topic is refused
to it; and the floor store still holds every entry with its card.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.adapters.floor import schema
from controller.engine.cards import parse_card
from controller.floor.store import open_store
from controller.journal.log import Journal
from controller.table import Table
from controller.table.visibility import sight

from .conftest import (
    PASSWORDS,
    SHIPPED,
    SITE,
    WAIT_S,
    Mosquitto,
    make_publisher,
    shipped_config,
    shipped_store_consumer,
    start_shipped_broker,
    store_matches_journal,
    wait_until,
)

#: Everything the live view's user might ask for: the whole broker, the floor, the general topics,
#: and, by name, the surveillance topics and the catch-up replies.
VIEW_FILTERS = ("#", "tablectl/#", schema.EVENTS_FILTER, schema.SURVEILLANCE_FILTER, "tablectl/+/+/catchup/#")
SUITS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
CARD_TYPE = 0x10  # the shoe protocol's CARD message type (hardware notes: TYPE, then the two ASCII bytes)


class Watcher:
    """An MQTT 5 client logged in as one of the broker's users, subscribed to `filters` one by one:
    what the broker granted for each filter, and every message it delivered."""

    def __init__(self, broker: Mosquitto, user: str, ca_file: Path, filters: tuple[str, ...]) -> None:
        self.filters = filters
        self.granted: dict[str, bool] = {}  # what the SUBACK said for each filter
        self.messages: list[tuple[str, bytes]] = []
        self.changed = threading.Condition()
        self._mids: dict[int, str] = {}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        self.client.tls_set(ca_certs=str(ca_file))
        self.client.username_pw_set(user, PASSWORDS[user])
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        for f in filters:
            # paho's lock is held while it records the mid: subscribing from here cannot race the SUBACK
            with self.changed:
                _, mid = self.client.subscribe(f, qos=1)
                self._mids[mid] = f
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.granted) == len(filters), WAIT_S), "no SUBACK"

    def _on_subscribe(self, client: mqtt.Client, userdata: object, mid: int, reasons: Any, props: Any) -> None:
        with self.changed:
            self.granted[self._mids[mid]] = not reasons[0].is_failure
            self.changed.notify_all()

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        with self.changed:
            self.messages.append((message.topic, bytes(message.payload)))
            self.changed.notify_all()

    def wait_for_seq(self, seq: int) -> bool:
        """Until an entry with `seq` has come (on whatever topic)."""

        def seen() -> bool:
            return any(_seq(payload) == seq and topic.endswith("/entry") for topic, payload in self.messages)

        with self.changed:
            return self.changed.wait_for(seen, WAIT_S)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _seq(payload: bytes) -> int | None:
    try:
        seq = json.loads(payload).get("seq")
    except (ValueError, AttributeError):
        return None
    return seq if isinstance(seq, int) else None


def words(card: str) -> list[re.Pattern[str]]:
    """`card` as text: its code, its Unicode form (rank and suit symbol), and the raw bytes a shoe's
    CARD frame carries after its type byte."""
    rank, suit = card[0], card[1]
    ranks = ("T", "10") if rank == "T" else (rank,)
    word = r"(?<![A-Za-z0-9]){}(?![A-Za-z0-9])"
    return [
        re.compile(word.format(card)),
        *(re.compile(word.format(re.escape(r + SUITS[suit]))) for r in ranks),
        re.compile(re.escape(chr(CARD_TYPE) + card)),
        re.compile(re.escape(f"\\u{CARD_TYPE:04x}{card}"), re.IGNORECASE),
    ]


def frame_hex(card: str) -> list[re.Pattern[str]]:
    """`card` as the hex of the two ASCII bytes a shoe's CARD frame carries, alone (as in the
    frame the shoe reader journals) or spaced."""
    two = card.encode("ascii").hex()
    return [re.compile(two, re.IGNORECASE), re.compile(f"{two[:2]} {two[2:]}", re.IGNORECASE)]


NOTATIONS = {"words": words, "frame": frame_hex}


def leaks(payload: bytes, cards: set[str], notation: str) -> set[str]:
    """The cards of `cards` that the payload carries in `notation`, as sent or as decoded."""
    raw = payload.decode("utf-8", errors="replace")
    try:
        texts = [raw, json.dumps(json.loads(payload), ensure_ascii=False)]
    except ValueError:
        texts = [raw]
    return {c for c in cards if any(p.search(t) for p in NOTATIONS[notation](c) for t in texts)}


def shoe_source(card: str, seq: int) -> dict[str, Any]:
    """What the shoe reader journals with a card: its session and SEQ, and the frame as hex."""
    return {"via": "shoe", "session": 77, "seq": seq % 255 + 1, "frame": (bytes([CARD_TYPE]) + card.encode()).hex()}


def deal(table: Table, card: str) -> None:
    table.card(parse_card(card), shoe_source(card, table.journal.last_seq))


# -- Baseball poker (GAMES.md section 3) ----------------------------------------------------------

STREETS = ("down", "down", "up", "up", "up", "up", "down")


def stud_faces(order: list[str], still_in: list[int]) -> Iterator[tuple[int, str, str]]:
    """(seat, card, face) for each card of `order` in the order GAMES.md deals them: each pass one
    card to each player still in (read at the start of the pass: players fold between streets),
    a 4 dealt face up followed at once by that player's extra face-down card."""
    cards = iter(order)
    for face in STREETS:
        for seat in list(still_in):
            card = next(cards)
            assert not (face == "up" and card == "QS"), "a rainout: this test's deal must not have one"
            yield seat, card, face
            if face == "up" and card[0] == "4":
                yield seat, next(cards), "down"


class StudHand:
    """One Baseball poker hand dealt on `table`: who folds, and what lay face down."""

    def __init__(self, table: Table, seats: list[int], order: list[str], folds: set[int]) -> None:
        self.down: set[str] = set()
        self.cards: dict[int, set[str]] = {s: set() for s in seats}
        still_in = list(seats)
        faces = stud_faces(order, still_in)
        if table.payouts_due():  # the dealer pushes the last hand's pots before the next
            table.button("confirm", by="dealer")
        table.open_round({"players": [{"seat": s, "stack": 100} for s in seats]}, by="dealer")
        self.round = table.round_no
        while table.awaiting.kind != "round":
            awaiting = table.awaiting
            if awaiting.kind == "card":
                seat, card, face = next(faces)
                self.cards[seat].add(card)
                if face == "down":
                    self.down.add(card)
                deal(table, card)
                continue
            seat, allowed = awaiting.who["seat"], awaiting.allowed
            if seat in folds and "fold" in allowed:
                action = "fold"
                still_in.remove(seat)
            else:
                action = next(a for a in ("check", "call", "bring-in", "decline", *allowed) if a in allowed)
            table.decide({"seat": seat, "action": action}, by="dealer")
        # At a showdown (two players or more still in) their cards are turned over; no others ever.
        self.turned_over = {c for s in still_in for c in self.cards[s]} if len(still_in) > 1 else set()


# Three players. Round 1: seat 3's up 4C brings its extra face-down KH; seat 1 folds at its first
# chance; seats 2 and 3 go to a showdown. No queen of spades face up.
STUD_1 = ["AS", "JD", "7C", "TS", "8D", "6C", "2H", "5D", "4C", "KH", "9S", "TC", "JH",
          "8S", "2D", "5C", "7D", "6H", "3C", "AC", "QD", "KC"]  # fmt: skip
# Round 2, none of round 1's cards: seat 2's up 4H brings its extra face-down AD; seats 1 and 2
# fold at their first chance, so seat 3 wins without a showdown and no down card is ever shown.
STUD_2 = ["8C", "9D", "TH", "JC", "QH", "KD", "2S", "4H", "AD", "7S", "5H", "6S", "7H",
          "8H", "9C", "TD", "JS", "KS", "AH", "QC", "3D", "3H", "5S", "6D", "4D", "4S"]  # fmt: skip


def check_the_live_view(
    table: Table, view: Watcher, hands: list[tuple[int, set[str], set[str]]], notation: str
) -> None:
    """No general message of a round carries a down card of that round while the hand is live, nor
    one the rules never turn over; no message outside a round carries any such card. `hands`:
    (round, its down cards, the ones its showdown turned over). Rounds are checked apart: a wild
    card in one round's shown hand may stand for any card, one face down in another round too."""
    journal = Journal(table.journal.path, readonly=True)
    try:
        entries = list(journal.entries())
    finally:
        journal.close()
    round_of = {e.seq: e.round for e in entries}
    ended = {}  # the seq of each round's last entry but the dealer's confirm: the one that settled it
    for e in entries:
        if e.round is not None and e.kind != "button":
            ended[e.round] = e.seq
    never = {r: down - shown for r, down, shown in hands}
    down_in = {r: down for r, down, _ in hands}
    assert view.messages
    for topic, payload in view.messages:
        seq = _seq(payload)
        rnd = round_of.get(seq) if seq is not None else None
        if rnd is None:
            hidden = set().union(*never.values())
        else:
            live = seq is not None and seq < ended[rnd]
            hidden = never.get(rnd, set()) | (down_in.get(rnd, set()) if live else set())
        assert not leaks(payload, hidden, notation), f"{topic} (seq {seq}) shows a face-down card: {payload!r}"


@pytest.fixture
def floor_store(shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path) -> Iterator[str]:
    """The floor store's consumer, logged in as floor-store, into a SQLite store."""
    url = f"sqlite://{tmp_path}/floor.db"
    consumer = shipped_store_consumer(shipped_broker, url, certificates)
    assert consumer.connected.wait(WAIT_S)
    yield url
    consumer.stop()


def _dealer_sight_shows_a_frames_card() -> bool:
    """Whether the dealer's sight (controller/table/visibility.py) still leaves a face-down card's bytes
    in the shoe frame journaled with it: masking that notation is another change than this one."""
    table = Table(Journal(":memory:"), game="baseball-poker", rules={}, simulated=True)
    table.open_round({"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}]}, by="dealer")
    deal(table, "AS")  # 3rd street's first pass: face down
    entry = list(table.journal.entries())[-1]
    return "4153" in json.dumps(sight(table, None).entry(entry.to_json(), entry.round))


FRAMES_PENDING = pytest.mark.xfail(
    _dealer_sight_shows_a_frames_card(),
    reason="the dealer's sight does not yet mask the shoe frame's hex (controller/table/visibility.py, changed apart)",
    raises=AssertionError,
    strict=True,
)


@pytest.mark.parametrize("notation", ["words", pytest.param("frame", marks=FRAMES_PENDING)])
def test_the_live_view_sees_no_baseball_down_card_and_the_store_holds_every_card(
    shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path, floor_store: str, notation: str
) -> None:
    ca = certificates["ca_pem"]
    view = Watcher(shipped_broker, "floor-view", ca, VIEW_FILTERS)
    surveillance = Watcher(shipped_broker, "surveillance", ca, (schema.SURVEILLANCE_FILTER,))
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="baseball-poker", rules={}, table_id="BP-01",
                  simulated=True)  # fmt: skip
    publisher = make_publisher(shipped_config(shipped_broker, "BP-01", tmp_path, certificates), table, boot="b0")
    publisher.start()
    try:
        first = StudHand(table, [1, 2, 3], STUD_1, folds={1})
        second = StudHand(table, [1, 2, 3], STUD_2, folds={1, 2})
        last = table.journal.last_seq
        assert view.wait_for_seq(last) and surveillance.wait_for_seq(last)
        assert wait_until(lambda: store_matches_journal(floor_store, table))
    finally:
        publisher.stop()
        view.stop()
        surveillance.stop()

    # What GAMES.md says lay face down, as dealt here: round 1's down cards (KH the extra card for
    # 4C), shown at its showdown but for seat 1's, who folded; round 2's never shown.
    assert first.down == {"AS", "TS", "JD", "8D", "AC", "7C", "6C", "KH", "QD"}
    assert first.down - first.turned_over == {"AS", "TS"}
    assert second.down == {"8C", "9D", "TH", "JC", "QH", "KD", "AD"} and not second.turned_over

    # Mosquitto takes the live view's subscriptions and checks its ACL on each message it would
    # deliver: the surveillance topics and the catch-up replies are refused there, every one.
    whole = surveillance.messages
    assert len(whole) == last and all("/surveillance/" in t for t, _ in whole)
    assert not any("/surveillance/" in t or "/catchup/" in t for t, _ in view.messages)
    assert {schema.parse(t, p).kind for t, p in view.messages} >= {"entry", "settlement", "meters", "status"}
    hands = [(first.round, first.down, first.turned_over), (second.round, second.down, set())]
    check_the_live_view(table, view, hands, notation)

    # Surveillance and the floor store have every card: each card entry whole, its frame included.
    entries = [json.loads(p) for _, p in whole]
    dealt = {e["body"]["card"]: e["body"]["source"]["frame"] for e in entries if e["kind"] == "card"}
    assert set(dealt) >= first.down | second.down
    assert dealt["AS"] == "104153"
    store = open_store(floor_store)
    try:
        stored = {r.body["card"] for r in store.entries(SITE, "BP-01") if r.kind == "card"}
    finally:
        store.close()
    assert stored >= first.down | second.down


# -- Grand Slam's blind hand (GAMES.md section 1) -------------------------------------------------


def blind_faces(order: list[str], solo: int, blind: int) -> Iterator[tuple[str, str]]:
    """(card, face) for a solo player betting all three bases with no Grand Slam (GAMES.md: then a
    seat receives exactly three cards, one a pass) and the blind hand beside it, which receives a
    card each time the solo player does, in seat order within the pass, face down."""
    cards = iter(order)
    for _ in range(3):
        for seat in sorted((solo, blind)):
            yield next(cards), "down" if seat == blind else "up"


def blind_hand(table: Table, order: list[str], solo: int, blind: int) -> tuple[int, set[str]]:
    """Deal one round with a blind hand; its round number and the blind hand's cards."""
    if table.payouts_due():  # the dealer pays the last round before the next opens
        table.button("confirm", by="dealer")
    table.open_round(
        {"seats": [{"seat": solo, "wagers": {"first": 10, "second": 10, "third": 10}}], "blind_seat": blind},
        by="dealer",
    )
    assert table.round_no is not None
    down = set()
    for card, face in blind_faces(order, solo, blind):
        assert table.awaiting.kind == "card"
        deal(table, card)
        if face == "down":
            down.add(card)
    assert table.awaiting.kind == "round"  # settled on the sixth card, as the rules say
    return table.round_no, down


def _dealer_sight_shows_the_blind_hand() -> bool:
    """Whether the dealer's sight still shows a blind hand's card (the Grand Slam adapter says
    which cards lie face down, and that is another change than this one)."""
    table = Table(Journal(":memory:"), game="grand-slam", rules={}, simulated=True)
    table.open_round({"seats": [{"seat": 2, "wagers": {"first": 10}}], "blind_seat": 3}, by="dealer")
    deal(table, "5H")
    deal(table, "KS")  # the blind hand's
    entry = list(table.journal.entries())[-1]
    return "KS" in json.dumps(sight(table, None).entry(entry.to_json(), entry.round))


# Solo seat 2 with the blind hand on seat 3 (its card after the solo player's in each pass), then
# solo seat 5 with the blind hand on seat 4 (before). No 4 to first base, so no Grand Slam.
BLIND_1 = ["5H", "KS", "7D", "QH", "2C", "AD"]  # blind: KS QH AD
BLIND_2 = ["JC", "6S", "TD", "8C", "9H", "3S"]  # blind: JC TD 9H


@pytest.mark.xfail(
    _dealer_sight_shows_the_blind_hand(),
    reason="the Grand Slam adapter does not yet keep the blind hand face down (changed apart)",
    raises=AssertionError,
    strict=True,
)
def test_the_live_view_never_sees_grand_slams_blind_hand(
    shipped_broker: Mosquitto, certificates: dict[str, Path], tmp_path: Path, floor_store: str
) -> None:
    view = Watcher(shipped_broker, "floor-view", certificates["ca_pem"], VIEW_FILTERS)
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, table_id="GS-01",
                  simulated=True)  # fmt: skip
    publisher = make_publisher(shipped_config(shipped_broker, "GS-01", tmp_path, certificates), table, boot="b0")
    publisher.start()
    try:
        first = blind_hand(table, BLIND_1, solo=2, blind=3)
        second = blind_hand(table, BLIND_2, solo=5, blind=4)
        assert view.wait_for_seq(table.journal.last_seq)
        assert wait_until(lambda: store_matches_journal(floor_store, table))
    finally:
        publisher.stop()
        view.stop()

    assert first[1] == {"KS", "QH", "AD"} and second[1] == {"JC", "TD", "9H"}
    # GAMES.md never turns the blind hand over: none of its cards, live or after the round.
    check_the_live_view(table, view, [(first[0], first[1], set()), (second[0], second[1], set())], "words")
    store = open_store(floor_store)
    try:
        stored = {r.body["card"] for r in store.entries(SITE, "GS-01") if r.kind == "card"}
    finally:
        store.close()
    assert stored == set(BLIND_1) | set(BLIND_2)


def test_a_live_view_read_line_widened_to_everything_still_gets_no_surveillance_entry(
    mosquitto_bin: str, certificates: dict[str, Path], tmp_path: Path
) -> None:
    # An operator who widens the live view's line to the whole tree: the ACL's deny lines still hold.
    shipped = (SHIPPED / "acl").read_text()
    assert "user floor-view\n" in shipped and "topic read tablectl/+/+/+\n" in shipped
    widened = shipped.replace("topic read tablectl/+/+/+\n", "topic read tablectl/#\n")
    broker = start_shipped_broker(mosquitto_bin, certificates, tmp_path, widened)
    stops = [broker.stop]  # whatever fails below, the broker this test started is stopped
    try:
        view = Watcher(broker, "floor-view", certificates["ca_pem"], VIEW_FILTERS)
        stops.insert(0, view.stop)
        surveillance = Watcher(broker, "surveillance", certificates["ca_pem"], (schema.SURVEILLANCE_FILTER,))
        stops.insert(0, surveillance.stop)
        table = Table(Journal(tmp_path / "journal.sqlite3"), game="baseball-poker", rules={}, table_id="BP-01",
                      simulated=True)  # fmt: skip
        publisher = make_publisher(shipped_config(broker, "BP-01", tmp_path, certificates), table, boot="b0")
        publisher.start()
        stops.insert(0, publisher.stop)
        StudHand(table, [1, 2, 3], STUD_2, folds={1, 2})
        last = table.journal.last_seq
        assert view.wait_for_seq(last) and surveillance.wait_for_seq(last)
    finally:
        for stop in stops:
            stop()
    assert len(surveillance.messages) == last
    assert {t.rsplit("/", 1)[1] for t, _ in view.messages} == {"entry", "settlement", "meters", "status"}
    assert not any("/surveillance/" in t for t, _ in view.messages)
