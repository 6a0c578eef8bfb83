"""No face-down card by any route, in any game: seeded random rounds of every game played through
`tablectl run --sim` (the simulated shoe, the simulated pole display), with folds, doubles, blind
hands, voids and a restart of the daemon mid-hand, and everything the dealer can read scanned
for every card the rules keep face down, in every notation.

What the dealer reads: `GET /api/state`, every message of the live feed (`/api/ws`) for the
dealer's token (entries with their shoe frames, effects and state; the backlog after a restart),
recall (`GET /api/rounds`, `/api/rounds/{n}`), each `/api/sim/draw` answer, the prompts a
decision answers with, a refusal that quotes the prompt, and what the pole display shows (the
simulated display's lines, read with the supervisor's token, which masks nothing).

Which cards are face down is worked out HERE from GAMES.md and the order the cards came in,
never by asking the table: Grand Slam's blind hand (a card each time the solo player takes one,
in seat order in the same pass; never turned over); Jokers 22's double down (the next card after
a double, face down until the hands are shown: a void round never shows it); Baseball poker's
down cards (3rd street down, down, up; 4th to 6th up; 7th down; a face-up 4's extra card down;
a queen of spades face up re-deals), shown at a showdown only for the players still in.

A card is looked for as a word ("6H", "10H"), with its suit's symbol ("6♥"), and in hex as the
shoe's frames carry it ("3648" inside a hex value or spelled-out bytes, such as the journaled
frame "103648"). Each round takes its cards without repeats (the table reshuffles between Grand
Slam and Jokers 22 rounds; Baseball poker deals each hand from a fresh deck), so a card's text
in a document about that round can only be that card.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from controller.testing import DEALER, PATIENCE_S, SUPERVISOR, Daemon

# Rounds of each game (more by the environment: FACE_DOWN_ROUNDS=200).
ROUNDS = {"grand-slam": 16, "jokers-22": 16, "baseball-poker": 6}
MORE = int(os.environ.get("FACE_DOWN_ROUNDS", "0"))
WAIT_S = PATIENCE_S  # the most an event is waited for (each wait ends as soon as the event comes)

RANKS = "23456789TJQKA"
SUITS = "CDHS"
SYMBOL = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
DECK = [r + s for r in RANKS for s in SUITS]
BASES = ("first", "second", "third")


# -- the rules, from GAMES.md: which cards of a round lie face down -------------------------------


def grand_slam_down(opening: dict[str, Any], cards: list[str]) -> list[bool]:
    """For each card dealt so far, whether GAMES.md puts it face down: the blind hand's."""
    standing = {s["seat"]: set(s["wagers"]) for s in opening["seats"]}
    blind = opening.get("blind_seat") if len(standing) == 1 else None
    slams: set[int] = set()
    out: list[bool] = []
    it = iter(cards)
    for base in BASES:  # base-major: a pass over first base, then second, then third
        for seat in sorted(standing):
            if seat in slams or base not in standing[seat]:
                continue
            if blind is not None and blind < seat:  # the blind hand's card, in seat order
                if next(it, None) is None:
                    return out
                out.append(True)
            card = next(it, None)
            if card is None:
                return out
            out.append(False)
            to = destination(base, card[0])
            standing[seat].discard(base)
            if to == "slam":
                slams.add(seat)
            elif to in BASES:
                standing[seat].add(to)
            if blind is not None and blind > seat:
                if next(it, None) is None:
                    return out
                out.append(True)
    return out


def destination(base: str, rank: str) -> str:
    """GAMES.md's table of card effects."""
    if rank in "TJQKA":
        return "out"
    if rank == "3" or base == "third":
        return "home"
    if rank == "2":
        return "third" if base == "first" else "home"
    if rank == "4":
        return "slam" if base == "first" else "third"
    return "second" if base == "first" else "third"


@dataclass
class BaseballDeal:
    """Baseball poker's dealing passes: 3rd street down, down, up; 4th-6th up; 7th down; a face-up
    4 earns an extra face-down card at once; a face-up queen of spades re-deals."""

    seats: list[int]
    folded: set[int] = field(default_factory=set)
    passes: int = 0
    queue: list[tuple[int, str]] = field(default_factory=list)
    deal: list[tuple[int, str, str]] = field(default_factory=list)  # (seat, card, face) this deal
    earlier_down: set[str] = field(default_factory=set)  # down cards of deals a rainout ended

    FACES = ("down", "down", "up", "up", "up", "up", "down")

    def next_face(self) -> str:
        if not self.queue:
            live = [s for s in self.seats if s not in self.folded]
            return self.FACES[self.passes] if self.passes < len(self.FACES) and live else "none"
        return self.queue[0][1]

    def take(self, card: str) -> str:
        if not self.queue:
            self.queue = [(s, self.FACES[self.passes]) for s in self.seats if s not in self.folded]
            self.passes += 1
        seat, face = self.queue.pop(0)
        self.deal.append((seat, card, face))
        if face == "up" and card == "QS":  # rainout: a fresh deal to the players still in
            self.earlier_down |= {c for _, c, f in self.deal if f == "down"}
            self.deal, self.queue, self.passes = [], [], 0
        elif face == "up" and card[0] == "4":
            self.queue.insert(0, (seat, "down"))
        return face

    def down(self) -> set[str]:
        return self.earlier_down | {c for _, c, f in self.deal if f == "down"}

    def shown_at_showdown(self) -> set[str]:
        """At a showdown every card of the players still in is turned over (this deal's)."""
        still_in = [s for s in self.seats if s not in self.folded]
        if len(still_in) < 2:
            return set()
        return {c for s, c, _ in self.deal if s in still_in}


@dataclass
class RoundModel:
    number: int
    game: str
    opening: dict[str, Any]
    cards: list[str] = field(default_factory=list)
    down: set[str] = field(default_factory=set)
    revealed: set[str] = field(default_factory=set)
    finished: bool = False
    baseball: BaseballDeal | None = None
    double_next: bool = False  # Jokers 22: a double was called, its card comes next

    def secret(self) -> set[str]:
        """The cards of this round the dealer may not read now."""
        return self.down - self.revealed


# -- what the dealer reads, and the scan ----------------------------------------------------------


def strings(doc: Any) -> Iterator[str]:
    """Every text in a document, but a showdown's best five ("best"): every card of a hand shown
    at a showdown is face up, and a wild card is written there as the card it stands for (a 3
    standing for the queen of clubs is "QC", whatever became of the dealt QC)."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for key, value in doc.items():
            yield str(key)
            if key != "best":
                yield from strings(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from strings(value)


_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z.:])[0-9A-Fa-f]{4,}(?![0-9A-Za-z])")
_HEX_BYTES = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{2}(?: [0-9A-Fa-f]{2})+(?![0-9A-Za-z])")


def forms(card: str) -> list[str]:
    """The card as a word and with its suit's symbol (the ten also as "10"), as patterns."""
    ranks = [card[0], "10"] if card[0] == "T" else [card[0]]
    out = [rf"(?<![A-Za-z0-9]){re.escape(r + card[1])}(?![A-Za-z0-9])" for r in ranks]
    if card != "JK":
        out += [rf"(?<![A-Za-z0-9]){re.escape(r + SYMBOL[card[1]])}" for r in ranks]
    return out


@functools.lru_cache(maxsize=256)
def pattern(secret: frozenset[str]) -> re.Pattern[str]:
    return re.compile("|".join(f for card in sorted(secret) for f in forms(card)))


def leaks(doc: Any, secret: set[str]) -> list[str]:
    """Each face-down card of `secret` that stands in `doc`: as a word, with its suit's symbol,
    or in hex (its two ASCII bytes in a hex value such as a frame, or in bytes spelled out)."""
    if not secret:
        return []
    text = "\n".join(strings(doc))
    found = [
        f"{m.group(0)} in {text[max(m.start() - 40, 0) : m.end() + 40]!r}"
        for m in pattern(frozenset(secret)).finditer(text)
    ]
    for m in [*_HEX_TOKEN.finditer(text), *_HEX_BYTES.finditer(text)]:
        digits = m.group(0).replace(" ", "")
        if len(digits) % 2:
            continue
        data = bytes.fromhex(digits)
        found += [f"{card} in hex {m.group(0)!r}" for card in secret if card.encode("ascii") in data]
    return found


# -- the table --------------------------------------------------------------------------------------


CONFIG = """
[table]
id = "FACE-DOWN"
game = "{game}"
"""


class Feed:
    """The dealer's live feed: every message kept, with what it says of the journal's seq."""

    def __init__(self, daemon: Daemon, after: int) -> None:
        self.stack = contextlib.ExitStack()
        url = daemon.url.replace("http", "ws") + "/api/ws"
        self.ws: ClientConnection = self.stack.enter_context(connect(url, open_timeout=WAIT_S))
        self.ws.send(json.dumps({"after": after, "token": DEALER}))
        self.unread: list[dict[str, Any]] = []
        self.last_seq = after
        self.cards = 0  # card entries read

    def read(self) -> None:
        message = json.loads(self.ws.recv(timeout=WAIT_S))
        self.unread.append(message)
        self.last_seq = max(self.last_seq, int(message.get("seq") or 0))
        if message.get("type") == "entry" and message.get("kind") == "card":
            self.cards += 1

    def until_cards(self, count: int) -> None:
        """Wait until the table has journaled `count` cards in all (the shoe's cards reach it
        after the draw is answered)."""
        while self.cards < count:
            self.read()

    def catch_up(self, seq: int) -> None:
        while self.last_seq < seq:
            self.read()

    def until(self, seq: int) -> list[dict[str, Any]]:
        """Every message not yet taken, up to the one for journal entry `seq` (or a state at or
        after it)."""
        self.catch_up(seq)
        got, self.unread = self.unread, []
        return got

    def close(self) -> None:
        self.stack.close()


@dataclass
class Player:
    """Plays one game's rounds at the daemon and scans everything the dealer reads."""

    daemon: Daemon
    game: str
    rng: random.Random
    rounds: dict[int, RoundModel] = field(default_factory=dict)
    current: RoundModel | None = None
    last: tuple[str, int] | None = None  # the last card dealt and its round
    pool: list[str] = field(default_factory=list)
    feed: Feed | None = None
    scanned: int = 0
    found: list[str] = field(default_factory=list)
    looks: list[tuple[int, set[str]]] = field(default_factory=list)  # (journal seq, secret then)
    state: dict[str, Any] = field(default_factory=dict)  # the dealer's last GET /api/state
    restarts: int = 0

    # -- what the dealer may not read now ------------------------------------------------------

    def secret_now(self) -> set[str]:
        """The round being dealt's face-down cards, and the last card if its round keeps it down."""
        secret = self.current.secret() if self.current else set()
        if self.last is not None:
            card, number = self.last
            if card in self.rounds[number].secret():
                secret = secret | {card}
        return secret

    def scan(self, what: str, doc: Any, secret: set[str]) -> None:
        self.scanned += 1
        self.found += [f"{what}: {leak}" for leak in leaks(doc, secret)]

    def look(self, what: str, *, state: dict[str, Any] | None = None, recall: bool = False) -> None:
        """Everything the dealer reads now (and the pole display), scanned: `state` is the
        dealer's GET /api/state if just read; `recall` reads the last rounds too."""
        secret = self.secret_now()
        d = self.daemon
        state = state or d.get("/api/state", token=DEALER)
        self.state = state
        self.scan(f"{what}: GET /api/state", state, secret)
        display = d.get("/api/devices")["display"]  # the supervisor's: what the display shows, as is
        self.scan(f"{what}: pole display", [display["upper"], display["lower"]], secret)
        if recall:
            self.scan(f"{what}: GET /api/devices", d.get("/api/devices", token=DEALER), secret)
            for rnd in d.get("/api/rounds?last=4", token=DEALER)["rounds"]:
                self.scan(f"{what}: recall of round {rnd['round']}", rnd, self.rounds[rnd["round"]].secret())
        if self.current is not None:
            n = self.current.number
            self.scan(f"{what}: GET /api/rounds/{n}", d.get(f"/api/rounds/{n}", token=DEALER), self.current.secret())
        seq = state["journal_seq"]
        self.looks.append((seq, secret))
        assert self.feed is not None
        for message in self.feed.until(seq):
            self.scan(
                f"{what}: live feed {message.get('type')} {message.get('seq')}", message, self.feed_secret(message)
            )

    def feed_secret(self, message: dict[str, Any]) -> set[str]:
        number = message.get("round")
        if message.get("type") == "entry" and not message.get("live") and number in self.rounds:
            # The backlog after a restart: an entry alone, of its own round.
            entry_round = self.rounds[number]
            return entry_round.secret() | (self.secret_now() if entry_round is self.current else set())
        # A live message tells the table as it stood at its seq: what was secret then (the first
        # look at or after that seq; a late one, such as a device's state, comes with an old seq).
        seq = int(message.get("seq") or 0)
        return next((secret for at, secret in self.looks if at >= seq), self.secret_now())

    # -- playing ----------------------------------------------------------------------------------

    def connect(self, after: int) -> None:
        if self.feed is not None:
            self.feed.close()
        self.feed = Feed(self.daemon, after)

    def open_round(self) -> None:
        d = self.daemon
        if d.get("/api/state")["payment"] == "due":  # the dealer pays the last round first
            assert d.post("/api/confirm", {})[0] == 200
        if self.game != "baseball-poker":  # a fresh shoe: no card is out of the count
            assert d.post("/api/shoe/reshuffle", {})[0] == 200
        opening = self.opening()
        status, answer = d.post("/api/rounds", opening)
        assert status == 201, answer
        model = RoundModel(answer["round"], self.game, opening)
        if self.game == "baseball-poker":
            model.baseball = BaseballDeal(sorted(p["seat"] for p in opening["players"]))
        self.rounds[model.number] = model
        self.current = model
        self.pool = self.rng.sample(DECK + (["JK"] if self.game == "jokers-22" else []), k=len(DECK))
        self.look(f"round {model.number} opened", recall=True)

    def opening(self) -> dict[str, Any]:
        rng = self.rng
        if self.game == "grand-slam":
            seats = sorted(rng.sample(range(1, 8), rng.choice([1, 1, 2, 3])))
            out = []
            for seat in seats:
                bases = rng.randint(1, 3)
                out.append({"seat": seat, "wagers": {b: 10 for b in BASES[:bases]}})
            blind = None
            if len(seats) == 1 and rng.random() < 0.8:
                blind = seats[0] + 1 if seats[0] < 7 and (seats[0] == 1 or rng.random() < 0.5) else seats[0] - 1
            return {"seats": out, "blind_seat": blind}
        if self.game == "jokers-22":
            spots = sorted(rng.sample(range(1, 8), rng.randint(1, 3)))
            wagers = []
            for spot in spots:
                bets = [{"player": f"p{spot}", "amount": rng.choice([10, 20])}]
                if rng.random() < 0.3:
                    bets.append({"player": f"q{spot}", "amount": 5})
                wagers.append({"spot": spot, "wagers": bets})
            return {"banker": {"stake": 500}, "spots": wagers}
        seats = sorted(rng.sample(range(1, 8), rng.randint(2, 4)))
        return {"players": [{"seat": s, "stack": rng.choice([100, 200])} for s in seats]}

    def pick(self, avoid: set[str] = frozenset()) -> str:  # type: ignore[assignment]
        card = next(c for c in self.pool if c not in avoid)
        self.pool.remove(card)
        return card

    def draw(self, state: dict[str, Any]) -> None:
        model = self.current
        assert model is not None
        cards = [self.pick(self.draw_avoids(model))]
        deal = model.baseball
        if deal is not None and deal.next_face() == "up" and self.rng.random() < 0.3:
            # A face-up 4 and its extra face-down card, pulled in one draw.
            four = next((c for c in self.pool if c[0] == "4"), None)
            if four is not None:
                self.pool.append(cards[0])
                self.pool.remove(four)
                cards = [four, self.pick(self.draw_avoids(model) | {"QS"})]
        d = self.daemon
        assert self.feed is not None
        self.feed.catch_up(self.looks[-1][0])  # every card so far counted
        journaled = self.feed.cards
        assert d.post("/api/sim/shoe", {"cards": cards})[0] == 200
        status, drawn = d.post("/api/sim/draw", {"count": len(cards)})
        assert status == 200, drawn
        self.feed.until_cards(journaled + len(cards))
        for card in cards:
            self.dealt(model, card)
        now = self.ended()
        self.scan(f"round {model.number}: the answer to drawing {cards}", drawn, self.secret_now())
        # A refusal that quotes the prompt ("round 3 needs no decision now: Deal to ...").
        if self.game != "grand-slam" and now["awaiting"]["kind"] == "card" and self.rng.random() < 0.25:
            body = {"seat": 1, "action": "call"} if deal is not None else {"spot": 1, "action": "hit"}
            status, refusal = d.post("/api/decisions", body)
            assert status == 409, refusal
            self.scan(f"round {model.number}: a refused decision", refusal, self.secret_now())
        self.look(f"round {model.number}: after {cards}", state=now, recall=model.finished)

    def draw_avoids(self, model: RoundModel) -> set[str]:
        deal = model.baseball
        if deal is None:
            return set()
        # After a rainout the new deal holds no card an earlier deal put face down (so a card's
        # text is one card), and no second queen of spades face up.
        return set(deal.earlier_down) | ({"QS"} if deal.earlier_down else set())

    def dealt(self, model: RoundModel, card: str) -> None:
        model.cards.append(card)
        self.last = (card, model.number)
        if self.game == "grand-slam":
            downs = grand_slam_down(model.opening, model.cards)
            model.down = {c for c, down in zip(model.cards, downs, strict=False) if down}
        elif self.game == "jokers-22":
            if model.double_next:
                model.down.add(card)
                model.double_next = False
        else:
            assert model.baseball is not None
            model.baseball.take(card)
            model.down = model.baseball.down()

    def decide(self, state: dict[str, Any]) -> None:
        model = self.current
        assert model is not None
        who, allowed = state["awaiting"]["who"], state["awaiting"]["allowed"]
        if self.game == "jokers-22":
            weights = {"double": 6, "hit": 3, "stand": 3, "split": 2, "surrender": 1, "match": 2, "decline": 2}
            action = self.rng.choices(allowed, [weights.get(a, 1) for a in allowed])[0]
            body: dict[str, Any] = {"spot": who["spot"], "action": action}
            if action in ("match", "decline", "surrender"):
                body["player"] = who["player"]
        else:
            weights = {"fold": 2, "check": 6, "call": 6, "bring-in": 4, "complete": 1, "bet": 1, "raise": 1, "pay": 2}
            assert model.baseball is not None
            if model.baseball.passes == len(BaseballDeal.FACES):
                weights["fold"] = 10  # after 7th street's down card: hands won without a showdown
            action = self.rng.choices(allowed, [weights.get(a, 1) for a in allowed])[0]
            body = {"seat": who["seat"], "action": action}
        status, answer = self.daemon.post("/api/decisions", body)
        assert status == 200, (body, answer)
        if action == "double":
            model.double_next = True
        if action == "fold":
            assert model.baseball is not None
            model.baseball.folded.add(who["seat"])
        now = self.ended()
        self.scan(f"round {model.number}: the answer to {body}", answer, self.secret_now())
        self.look(f"round {model.number}: after {body}", state=now, recall=model.finished)

    def ended(self) -> dict[str, Any]:
        """If the last action ended the round (as the table's state says to everyone): what its
        rules turn over then. The dealer's state, as read."""
        model = self.current
        assert model is not None
        state: dict[str, Any] = self.daemon.get("/api/state", token=DEALER)
        if model.finished or state["awaiting"]["kind"] != "round":
            return state
        model.finished = True
        if state["round_status"] == "settled":
            if self.game == "jokers-22":
                model.revealed = set(model.down)  # the hands are shown: the doubles turned over
            elif model.baseball is not None:
                model.revealed = model.baseball.shown_at_showdown()
        return state

    def void(self) -> None:
        model = self.current
        assert model is not None
        status, answer = self.daemon.post(
            "/api/rounds/current/void", {"reason": "misdeal", "name": "Kim"}, token=SUPERVISOR
        )
        assert status == 200, answer
        self.look(f"round {model.number} void", state=self.ended(), recall=True)

    def play_round(self, restart_at: int | None) -> None:
        """One round; with `restart_at`, the daemon is restarted at that step of the hand (or
        the hand's last one, if it ends sooner)."""
        self.open_round()
        steps = 0
        void_at = self.rng.randint(1, 40) if self.rng.random() < 0.25 else None  # a quarter are voided
        while True:
            state = self.state  # the dealer's, as the last look read it
            kind = state["awaiting"]["kind"]
            if kind == "round":
                return
            steps += 1
            if restart_at is not None and steps >= restart_at:
                restart_at = None
                self.restart()
                continue
            if steps == void_at:
                self.void()
                continue
            if kind == "card":
                self.draw(state)
            else:
                self.decide(state)
            if restart_at is not None and self.state["awaiting"]["kind"] == "round":
                restart_at = None
                self.restart()  # the hand has ended: restart between it and the next

    def restart(self) -> None:
        """Stop the daemon mid-hand and start it again: the hand goes on; the screens reconnect
        and are sent the whole backlog."""
        assert self.daemon.stop() == 0, self.daemon.log()
        self.daemon.start()
        self.connect(0)
        self.restarts += 1
        self.look("after a restart", recall=True)


@pytest.fixture
def daemon_for(tmp_path: Path) -> Iterator[Any]:
    started: list[Daemon] = []

    def make(game: str) -> Daemon:
        (tmp_path / game).mkdir()
        daemon = Daemon(tmp_path / game, CONFIG.format(game=game))
        daemon.start()
        started.append(daemon)
        return daemon

    yield make
    for daemon in started:
        assert daemon.stop() == 0, daemon.log()


@pytest.mark.parametrize("game", ["grand-slam", "jokers-22", "baseball-poker"])
def test_no_face_down_card_reaches_the_dealer_by_any_route(daemon_for: Any, game: str) -> None:
    rng = random.Random(f"face-down {game}")
    player = Player(daemon_for(game), game, rng)
    player.connect(0)
    rounds = MORE or ROUNDS[game]
    restart_round = rng.randrange(1, rounds)
    face_down = 0
    for number in range(rounds):
        player.play_round(restart_at=rng.randint(2, 8) if number == restart_round else None)
        face_down += len(player.rounds[number + 1].down)
    player.open_round()  # the last round's last card, at the next one
    assert player.restarts == 1
    assert player.feed is not None
    player.feed.close()
    assert face_down, "no round dealt a face-down card: the test proves nothing"
    assert not player.found, f"{len(player.found)} face-down cards readable by the dealer:\n" + "\n".join(
        player.found[:40]
    )
