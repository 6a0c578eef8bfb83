"""Fifty screens on the live feed while 500 cards are dealt: `tablectl run --sim` as a process,
its own simulated shoe driven through /api/sim/draw, and fifty WebSocket clients on
ws://127.0.0.1/api/ws, each logging in with the dealer's token in its first message.

One session is played (module fixture): seven-seat Grand Slam rounds, all three bases bet, one
card per draw, a new shoe loaded between rounds when the old one runs low. Midway a few screens
hang up, miss the entries journaled while they are away, and come back with `{"after": last
seq}`. Every screen must end with the journal itself: every entry exactly once, gapless, in
order, each live entry with the table state after it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from controller.api.delta import patched
from controller.journal.log import Journal
from controller.testing import DEALER, PATIENCE_S, Daemon

SCREENS = 50
CARDS = 500
RESUMED = 5  # screens that hang up midway and resume from their last seq
HANG_UP_AT = 200  # cards dealt when they hang up
AWAY_FOR = 60  # cards dealt while they are away
WAIT_S = PATIENCE_S  # the bound on every wait; none is a timing assertion
CONFIG = '[table]\nid = "WS-LOAD-1"\n'
#: Seven seats on all three bases: a round takes at most 21 cards.
ROUND = {"seats": [{"seat": seat, "wagers": {"first": 10, "second": 10, "third": 5}} for seat in range(1, 8)]}
MOST_CARDS_A_ROUND = 21
ENTRY_FIELDS = ("seq", "at", "round", "kind", "body")


@dataclass
class Screen:
    """One dealer screen on /api/ws: every message it received, one list per connection."""

    number: int
    port: int
    connections: list[list[dict[str, Any]]] = field(default_factory=list)
    last_seq: int = 0
    closed_by_daemon: list[str] = field(default_factory=list)
    _ws: ClientConnection | None = None
    _listening: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Connect and ask for everything after the last entry this screen has (0 at first)."""
        self._ws = await connect(f"ws://127.0.0.1:{self.port}/api/ws", open_timeout=WAIT_S, close_timeout=WAIT_S)
        await self._ws.send(json.dumps({"after": self.last_seq, "token": DEALER}))
        received: list[dict[str, Any]] = []
        self.connections.append(received)
        self._listening = asyncio.create_task(self._listen(self._ws, received))

    async def _listen(self, ws: ClientConnection, received: list[dict[str, Any]]) -> None:
        try:
            async for raw in ws:
                message = json.loads(raw)
                received.append(message)
                if message["type"] == "entry":
                    self.last_seq = message["seq"]
        except ConnectionClosed as closed:  # the daemon ended the feed: a test failure, kept to report
            self.closed_by_daemon.append(f"code {closed.rcvd.code if closed.rcvd else None}")

    async def hang_up(self) -> None:
        assert self._ws is not None and self._listening is not None
        await self._ws.close()
        await asyncio.wait_for(self._listening, WAIT_S)

    @property
    def listening(self) -> bool:
        return self._listening is not None and not self._listening.done()

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [m for received in self.connections for m in received if m["type"] == "entry"]


@dataclass
class Session:
    screens: list[Screen]
    journal: list[dict[str, Any]]
    resumed: list[Screen]


async def _call(fn: Any, *args: Any) -> Any:
    """A blocking rig call off the loop, so the screens keep reading while the dealer waits."""
    return await asyncio.to_thread(fn, *args)


async def _state_when(daemon: Daemon, what: str, seq: int) -> dict[str, Any]:
    """The table state once the journal has reached entry `seq`."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        state: dict[str, Any] = await _call(daemon.get, "/api/state")
        if state["journal_seq"] >= seq:
            return state
        await asyncio.sleep(0.002)
    raise AssertionError(f"timed out waiting for {what}")


def _journal_kinds(daemon: Daemon, first: int) -> list[str]:
    """The kinds of the journal's entries from `first` on."""
    journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
    try:
        return [e.kind for e in journal.entries(after=first - 1)]
    finally:
        journal.close()


async def _deal(daemon: Daemon, cards: int) -> None:
    """The simulated dealer pulls `cards` cards one at a time, opening a round when none is
    being dealt and loading a new shoe first when the old one could not finish the round."""
    state = await _call(daemon.get, "/api/state")
    for _ in range(cards):
        assert not state["blocked"], state["prompt"]
        if state["awaiting"]["kind"] != "card":
            if state["payment"] == "due":  # the dealer pays the last round before the next opens
                status, answer = await _call(daemon.post, "/api/confirm", {})
                assert status == 200, answer
            if state["shoe"]["remaining"] < MOST_CARDS_A_ROUND:
                status, answer = await _call(daemon.post, "/api/shoe/reshuffle", {})
                assert status == 200, answer
            status, answer = await _call(daemon.post, "/api/rounds", ROUND)
            assert status == 201, answer
            state = await _call(daemon.get, "/api/state")
        status, answer = await _call(daemon.post, "/api/sim/draw", {"count": 1})
        assert status == 200 and len(answer["drawn"]) == 1, answer
        card, seq = answer["drawn"][0], state["journal_seq"] + 1
        # Wait until the card is journaled, so the next decision sees the round it ended.
        state = await _state_when(daemon, f"card {card} as entry {seq}", seq)
        assert state["last_card"] == card, state["prompt"]
        if state["journal_seq"] > seq:
            # The one entry the shoe may add by itself: "shoe empty" after a round took its last card.
            after = _journal_kinds(daemon, seq)
            assert after[0] == "card" and set(after[1:]) == {"shoe-event"}, after


async def _play(daemon: Daemon) -> Session:
    screens = [Screen(n, daemon.port) for n in range(SCREENS)]
    await asyncio.gather(*(s.connect() for s in screens))
    try:
        await _deal(daemon, HANG_UP_AT)
        resumed = screens[:: SCREENS // RESUMED][:RESUMED]
        await asyncio.gather(*(s.hang_up() for s in resumed))
        await _deal(daemon, AWAY_FOR)
        await asyncio.gather(*(s.connect() for s in resumed))
        await _deal(daemon, CARDS - HANG_UP_AT - AWAY_FOR)
        last = (await _call(daemon.get, "/api/health"))["journal_seq"]
        deadline = time.monotonic() + WAIT_S
        while any(s.last_seq < last and not s.closed_by_daemon for s in screens):
            assert time.monotonic() < deadline, f"screens still short of entry {last} after {WAIT_S:g} s"
            await asyncio.sleep(0.02)
    finally:
        await asyncio.gather(*(s.hang_up() for s in screens if s.listening))
    journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
    try:
        entries = [e.to_json() for e in journal.entries()]
    finally:
        journal.close()
    return Session(screens, entries, resumed)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    daemon = Daemon(Path(tmp_path_factory.mktemp("ws-load")), CONFIG)
    daemon.start()
    try:
        yield asyncio.run(_play(daemon))
    finally:
        assert daemon.stop() == 0, daemon.log()


def _order_problems(seqs: list[int], last: int) -> str:
    """What is wrong with a screen's sequence, in words (empty when it is 1..last)."""
    counts = Counter(seqs)
    missing = [s for s in range(1, last + 1) if s not in counts]
    twice = sorted(s for s, n in counts.items() if n > 1)
    backwards = [b for a, b in itertools.pairwise(seqs) if b <= a]
    return "; ".join(
        f"{what}: {found[:10]}"
        for what, found in (("missing", missing), ("received twice", twice), ("out of order", backwards))
        if found
    )


def test_the_session_dealt_500_cards_over_several_rounds_and_a_new_shoe(session: Session) -> None:
    kinds = Counter(e["kind"] for e in session.journal)
    assert kinds["card"] == CARDS
    # 312 cards in the 6-deck shoe: 500 cards need a new shoe; 21 cards at most a round.
    assert kinds["shoe-reshuffled"] >= 1
    assert kinds["round-open"] >= CARDS // MOST_CARDS_A_ROUND


def test_every_screen_gets_every_journal_entry_exactly_once_in_order(session: Session) -> None:
    last = len(session.journal)
    for screen in session.screens:
        assert screen.closed_by_daemon == [], f"screen {screen.number}: the daemon closed the feed"
        seqs = [m["seq"] for m in screen.entries]
        assert seqs == list(range(1, last + 1)), f"screen {screen.number}: {_order_problems(seqs, last)}"


def test_every_entry_a_screen_gets_is_the_journals_entry_word_for_word(session: Session) -> None:
    for screen in session.screens:
        for message in screen.entries:
            sent = {key: message[key] for key in ENTRY_FIELDS}
            assert sent == session.journal[message["seq"] - 1], f"screen {screen.number}"


def test_each_live_entry_carries_the_table_state_after_it(session: Session) -> None:
    for screen in session.screens:
        live = [m for m in screen.entries if m["live"]]
        assert live, f"screen {screen.number} got nothing live"
        for received in screen.connections:
            # Each live entry carries what it changed of the state, applied to the screen's state.
            state: dict[str, Any] | None = None
            for m in received:
                if m["type"] == "state":
                    state = m["state"] if "state" in m else patched(state, m["changes"])
                elif m["live"]:
                    assert "state" not in m, f"screen {screen.number}: entry {m['seq']} sent the whole state"
                    state = patched(state, m["changes"])
                    assert state["journal_seq"] == m["seq"], f"screen {screen.number}"
                    # The state after a card entry shows that card as the last one out of the shoe.
                    assert m["kind"] != "card" or state["last_card"] == m["body"]["card"], f"screen {screen.number}"


def test_each_connection_gets_its_backlog_then_the_state_at_its_end_then_live_entries(session: Session) -> None:
    for screen in session.screens:
        for received in screen.connections:
            kinds = [m["type"] for m in received]
            assert kinds.count("state") == 1, f"screen {screen.number}: {kinds.count('state')} state messages"
            split = kinds.index("state")
            backlog, state, live = received[:split], received[split], received[split + 1 :]
            assert all(not m["live"] for m in backlog) and all(m["live"] for m in live), f"screen {screen.number}"
            assert state["seq"] == state["state"]["journal_seq"]
            if backlog:
                assert state["seq"] == backlog[-1]["seq"]
            if live:
                assert live[0]["seq"] == state["seq"] + 1


def test_a_screen_that_hangs_up_midway_resumes_from_its_last_seq_with_no_gap_or_repeat(session: Session) -> None:
    last = len(session.journal)
    for screen in session.resumed:
        assert len(screen.connections) == 2
        before, after = screen.connections
        had = max(m["seq"] for m in before if m["type"] == "entry")
        # What was journaled while it was away came from the journal (the backlog), then live.
        missed = [m["seq"] for m in after if m["type"] == "entry" and not m["live"]]
        assert len(missed) >= AWAY_FOR and missed[0] == had + 1
        seqs = [m["seq"] for m in screen.entries]
        assert seqs == list(range(1, last + 1)), f"screen {screen.number}: {_order_problems(seqs, last)}"
