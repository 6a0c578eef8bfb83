"""Seat rating sessions from the journal's rounds, with their exact theoretical win.

    ratings = Ratings(edges=lambda game, rules: edges_for(game, rules, state_dir), close_after=3)
    for times, record in rounds:            # RoundPace (pace.py) and its round-index record
        ratings.add(times, record)
    ratings.sessions()                      # every session, open and closed

A session belongs to a place and a player: a Grand Slam seat (no player id: the seat), a Jokers
22 player on a spot (the name their wager was placed under), a Baseball poker seat. It opens
with the first settled round that has its wagers, and closes once `close_after` settled rounds
in a row went by without them (its end: its last round's end). Void rounds change nothing.
Computed from the journal each time, so a session survives a restart of the daemon.

For each: time played, rounds, handle and average wager per bet type, the side-bet mix, the
actual result (the player's net, and what the player lost to the table: the house's win at Grand
Slam, the bank's at Jokers 22; at Baseball poker the players' money goes to each other and the
house wins nothing without a rake) and the theoretical win: each wager
times the exact house edge of its bet type (edges.py), summed exactly (a fraction), given to
the chip's hundredth. Jokers 22 adds the house's take, the time collection the player paid.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from controller.analytics.edges import Edges
from controller.analytics.pace import RoundPace, iso

#: Settled rounds in a row without a place's wagers that close its session.
CLOSE_AFTER = 3
SIDE_BETS = ("three_outs", "poker_bonus")


#: (the rules' digest, the bet type of the edge) -> chips wagered: the theoretical win is these
#: times the edges, summed once at the end (exact, and one product a bet type, not one a wager).
Wagered = dict[tuple[str, str], int]


def add_to(into: dict[Any, int], more: Mapping[Any, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def theoretical(wagered: Wagered, edges: Mapping[str, Edges]) -> Fraction:
    """Sum of chips x edge, exactly: in whole numbers over each rule set's common denominator."""
    sums: dict[str, int] = {}
    for (digest, bet), amount in wagered.items():
        sums[digest] = sums.get(digest, 0) + amount * edges[digest].scaled[0].get(bet, 0)
    if len(sums) == 1:  # one rule set (the usual): one fraction, no sum of them
        ((d, n),) = sums.items()
        return Fraction(n, edges[d].scaled[1])
    return sum((Fraction(n, edges[d].scaled[1]) for d, n in sums.items()), Fraction(0))


def handle_of(wagered: Wagered) -> dict[str, int]:
    """Chips by bet type ("second/first+second" is bet on second base)."""
    out: dict[str, int] = {}
    for (_, bet), amount in wagered.items():
        name = bet.split("/", 1)[0]
        out[name] = out.get(name, 0) + amount
    return dict(sorted(out.items()))


@dataclass
class Play:
    """One place's part in one round: its wagers by bet type, by the edge they are rated at, its
    net, and the house's take (time collection)."""

    key: tuple[int, str | None]
    wagered: Wagered
    net: int
    house_take: int = 0


@dataclass
class Session:
    place: int
    player: str | None
    opened: float
    last: float
    rounds: int = 0
    wagered: Wagered = field(default_factory=dict)
    net: int = 0
    house_take: int = 0
    missed: int = 0
    closed: float | None = None
    dealers: set[str] = field(default_factory=set)
    by_supervisor: bool = False  # opened by the supervisor with a player id (the rating slip)

    def add(self, play: Play, end: float, dealer: str | None) -> None:
        self.rounds += 1
        add_to(self.wagered, play.wagered)
        self.net += play.net
        self.house_take += play.house_take
        self.last = end
        self.missed = 0
        if dealer:
            self.dealers.add(dealer)

    def to_json(self, game: str, edges: Mapping[str, Edges]) -> dict[str, Any]:
        theo = theoretical(self.wagered, edges)
        handle = handle_of(self.wagered)
        total = sum(handle.values())
        side = sum(v for k, v in handle.items() if k in SIDE_BETS)
        return {
            "game": game,
            "place": self.place,
            "player": self.player,
            "status": "closed" if self.closed is not None else "open",
            "opened": iso(self.opened),
            "last_round_end": iso(self.last),
            "closed": None if self.closed is None else iso(self.closed),
            "time_s": round(self.last - self.opened, 3),
            "rounds": self.rounds,
            "handle": handle,
            "average_wager": {k: round(v / self.rounds, 2) for k, v in handle.items()} if self.rounds else {},
            "side_bet_mix_percent": round(100 * side / total, 2) if total else 0.0,
            "player_net": self.net,
            "actual_win": 0 if game == "baseball-poker" else -self.net,
            "theoretical_win": round(float(theo), 2),
            "theoretical_win_exact": str(theo),
            "house_take": self.house_take,
            "dealers": sorted(self.dealers),
            "opened_by": "supervisor" if self.by_supervisor else "wagers",
        }


@dataclass
class Money:
    """Rounds' money: handle by bet type, what players won (paid), their net, the table's actual
    and theoretical win, the house's take (time collection)."""

    rounds: int = 0
    paid: int = 0
    player_net: int = 0
    actual_win: int = 0
    wagered: Wagered = field(default_factory=dict)
    house_take: int = 0

    def add(self, play: Play, game: str) -> None:
        add_to(self.wagered, play.wagered)
        self.paid += max(play.net, 0)
        self.player_net += play.net
        self.actual_win += 0 if game == "baseball-poker" else -play.net
        self.house_take += play.house_take

    def to_json(self, edges: Mapping[str, Edges]) -> dict[str, Any]:
        theo = theoretical(self.wagered, edges)
        handle = handle_of(self.wagered)
        total = sum(handle.values())
        return {
            "rounds": self.rounds,
            "handle": handle,
            "handle_total": total,
            "paid": self.paid,
            "actual_win": self.actual_win,
            "hold_percent": round(100 * self.actual_win / total, 2) if total else None,
            "theoretical_win": round(float(theo), 2),
            "theoretical_win_exact": str(theo),
            "actual_minus_theoretical": round(self.actual_win - float(theo), 2),
            "house_take": self.house_take,
        }


class Ratings:
    """Rating sessions of one table, fed its settled rounds in order."""

    def __init__(
        self,
        edges: Callable[[str, Mapping[str, Any]], Edges],
        close_after: int = CLOSE_AFTER,
        *,
        marks: Sequence[tuple[int, float, str, int, str | None]] = (),
    ) -> None:
        """`marks`: the supervisor's `rating-open` and `rating-close` entries, in journal order
        (seq, time, kind, place, player), applied between the rounds they came between."""
        if close_after < 1:
            raise ValueError(f"close_after {close_after}: a session closes after 1 or more rounds without wagers")
        self.edges = edges
        self.close_after = close_after
        self.game = ""
        self.open: dict[tuple[int, str | None], Session] = {}
        self.closed: list[Session] = []
        self.notes: dict[str, str] = {}
        self.known: dict[str, Edges] = {}  # digest -> the edges of the rules of that digest
        self._of_rules: dict[str, Edges] = {}  # the round files' rules (as JSON) -> their edges
        # The money of every round added, for each dealer (the shift report); the table's is theirs summed.
        self.by_dealer: dict[str, Money] = {}
        self._marks = list(marks)
        self._next_mark = 0
        self.named: dict[int, str] = {}  # place -> the player id the supervisor opened it for

    def marks_until(self, seq: float, *, by_time: bool = True) -> None:
        """Apply the supervisor's marks up to `seq` (by time with `by_time`: up to that time)."""
        while self._next_mark < len(self._marks):
            mseq, t, kind, place, player = self._marks[self._next_mark]
            if (t if by_time else mseq) > seq:
                return
            self._next_mark += 1
            # Opening for a player closes the place's unnamed session (the seat's, so far) and the
            # player's own; closing closes the player's (a player given) or every one at the place.
            ends = [k for k in self.open if k[0] == place and (player is None or k[1] in (None, player))]
            if kind == "rating-open" and player:
                ends = [(place, None), (place, player)]
            for key in ends:
                self.close(*key, at=t)
            if player is None or self.named.get(place) == player or kind == "rating-open":
                self.named.pop(place, None)
            if kind == "rating-open" and player:
                self.named[place] = player
                self.open[(place, player)] = Session(place, player, t, t, by_supervisor=True)

    def add(self, times: RoundPace, record: Mapping[str, Any]) -> None:
        """A round of the table (a void or unsettled one changes nothing)."""
        if record.get("status") != "settled" or not record.get("settlement") or not record.get("round_file"):
            return
        game = str(record["round_file"]["game"])
        self.game = game
        rules = record["round_file"].get("rules") or {}  # what differs from the game's defaults
        said = json.dumps(rules, sort_keys=True) if rules else ""
        edges = self._of_rules.get(said)
        if edges is None:
            edges = self._of_rules[said] = self.edges(game, rules)
            self.known[edges.digest] = edges
            self.notes[edges.digest] = edges.note
        end = times.end if times.end is not None else times.opened
        self.marks_until(times.open_seq, by_time=False)
        try:
            plays = {self._key(p.key): p for p in plays_of(game, record, rules, edges)}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(
                f"round {times.round}: its record in the round index cannot be rated (missing or bad {exc}); "
                "run `tablectl journal rebuild` to index the rounds again from the entries"
            ) from None
        money = self.by_dealer.get(times.dealer or "unknown")
        if money is None:
            money = self.by_dealer[times.dealer or "unknown"] = Money()
        money.rounds += 1
        for play in plays.values():
            money.add(play, game)
        for key, play in plays.items():
            session = self.open.get(key)
            if session is None:
                session = self.open[key] = Session(key[0], key[1], times.opened, end)
            session.add(play, end, times.dealer)
        for key in [k for k in self.open if k not in plays]:
            session = self.open[key]
            session.missed += 1
            if session.missed >= self.close_after:
                session.closed = session.last
                self.closed.append(self.open.pop(key))
                if key[1] is not None and self.named.get(key[0]) == key[1]:
                    del self.named[key[0]]

    def _key(self, key: tuple[int, str | None]) -> tuple[int, str | None]:
        """A place's play goes to the session the supervisor opened there for a player id (a play
        with no name of its own: a seat; at Jokers 22 the wager's name is the player's)."""
        if key[1] is None and key[0] in self.named:
            return key[0], self.named[key[0]]
        return key

    def close(self, place: int, player: str | None, at: float) -> bool:
        """A supervisor closes a session (False: no such session is open)."""
        session = self.open.pop((place, player), None)
        if session is None:
            return False
        session.closed = at
        self.closed.append(session)
        return True

    def sessions(self) -> list[dict[str, Any]]:
        every = sorted([*self.closed, *self.open.values()], key=lambda s: (s.opened, s.place, s.player or ""))
        return [s.to_json(self.game, self.known) for s in every]

    @property
    def totals(self) -> Money:
        """The money of every round added: each dealer's summed."""
        out = Money()
        for m in self.by_dealer.values():
            out.rounds += m.rounds
            out.paid += m.paid
            out.player_net += m.player_net
            out.actual_win += m.actual_win
            out.house_take += m.house_take
            add_to(out.wagered, m.wagered)
        return out

    def money(self, dealer: str | None = None) -> dict[str, Any]:
        """The money of the table's rounds (or of `dealer`'s)."""
        return (self.totals if dealer is None else self.by_dealer[dealer]).to_json(self.known)


def plays_of(game: str, record: Mapping[str, Any], rules: Mapping[str, Any], edges: Edges) -> Iterator[Play]:
    """Each place's play in a settled round, from its round file (REPLAY.md) and settlement."""
    file, settlement = record["round_file"], record["settlement"]
    if game == "grand-slam":
        seat_nets = {s["seat"]: int(s["net"]) for s in settlement["seats"]}
        for seat in file["seats"]:
            wagers, sides = seat.get("wagers", {}), seat.get("side_bets", {})
            shape = "+".join(b for b in ("first", "second", "third") if b in wagers)
            wagered = {(edges.digest, f"{b}/{shape}"): int(a) for b, a in wagers.items()}
            wagered |= {(edges.digest, side): int(a) for side, a in sides.items()}
            yield Play((int(seat["seat"]), None), wagered, seat_nets[seat["seat"]])
    elif game == "jokers-22":
        nets: dict[tuple[int, str | None], int] = {}
        for p in settlement["players"]:
            key = (int(p["spot"]), p.get("player"))
            nets[key] = nets.get(key, 0) + int(p["net"])
        fee = int(rules.get("time_fee", 0) or 0)
        handles: dict[tuple[int, str | None], int] = {}
        payer: set[tuple[int, str | None]] = set()
        for spot in file["spots"]:
            for i, w in enumerate(spot["wagers"]):
                key = (int(spot["spot"]), w.get("player"))
                handles[key] = handles.get(key, 0) + int(w["amount"])
                if i == 0:
                    payer.add(key)
        for key, amount in handles.items():
            wagered = {(edges.digest, "spot"): amount}
            yield Play(key, wagered, nets.get(key, 0), fee if key in payer else 0)
    elif game == "baseball-poker":
        for p in settlement["players"]:
            yield Play((int(p["seat"]), None), {(edges.digest, "pot"): int(p.get("put", 0))}, int(p["net"]))
