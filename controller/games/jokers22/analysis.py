"""`tablectl analyze jokers-22`: the banker's advantage and the player's return per chip, for one
spot, exactly, and the Monte Carlo's rounds (`ANALYSIS`, the adapter's `analysis()`;
controller/analysis/base.py).

Every round one spot can have is enumerated card by card in the engine's dealing order (the
spot's first card, the banker's first card, the spot's second card, the spot's hands played out,
the banker's second card and draws), each card with its exact probability, and every rule is the
engine's own (controller/games/jokers22/rules.py): totals, naturals and jokers (`hand_total`), the forced
drawing rules (`player_options`, `banker_hits`), when a double, split or surrender is allowed, the
comparison (`compare`), and the money under either coverage mode (`settle_wagers`, on a
settled state built for each result). Only the player's choices come from outside: a `Strategy`.

The shoe is infinite (each card drawn afresh with the shoe's proportions) or finite: `decks`
decks of 52 cards and `jokers_per_deck` jokers, the round's first `depth` cards drawn without
replacement, exactly, and any card after them drawn from what the shoe held at that depth (a
depth of 30 is beyond any round, so exact without replacement throughout).

    >>> figures = analyze(decks=0)
    >>> round(figures.banker_edge * 100, 3)
    4.593
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.analysis.base import Chunk, GameAnalysis, edge_lines, option
from controller.analysis.montecarlo import Tally, play_round
from controller.engine.base import Event
from controller.engine.cards import JOKER, Card, Rank, Suit
from controller.games.jokers22.rules import (
    GAME,
    Banker,
    Decision,
    HandState,
    Jokers22Rules,
    Jokers22State,
    OpenRound,
    SpotBet,
    SpotState,
    Stake,
    Total,
    Wager,
    _can_double,
    _can_split,
    _can_surrender,
    banker_hits,
    hand_total,
    player_options,
    settle_wagers,
)

# A card kind: 0-12 the ranks 2 to A, 13 the joker (suits change nothing in Jokers 22).
KINDS = 14
_CARD: tuple[Card, ...] = (*(Card(Rank(r), Suit.SPADES) for r in range(2, 15)), JOKER)
_SYMBOLS = (*(Rank(r).symbol for r in range(2, 15)), "JK")
PLAYER = "player"
#: A depth beyond any round: every card without replacement.
FULL_DEPTH = 30

Distribution = dict[int, float]


# --- the player's strategy ---------------------------------------------------------------------

CODES = {
    "H": ("hit",),
    "S": ("stand",),
    "D": ("double", "hit"),
    "DS": ("double", "stand"),
    "P": ("split",),
    "R": ("surrender", "hit"),
    "RS": ("surrender", "stand"),
}


@dataclass(frozen=True)
class Strategy:
    """What the player chooses where the rules leave a choice: a table of codes by hand (a hard
    total "15", a soft total "soft 17", a pair "pair 8") and the banker's first card, and for
    every hand the table does not list, hit below `stand_on` and never double, split or surrender.

    Codes: H hit, S stand, D double (else hit), DS double (else stand), P split (else the hand's
    total row), R surrender (else hit), RS surrender (else stand). The forced rules still hold:
    a hand of 11 or less hits, 20 or more stands, whatever the table says.
    """

    stand_on: int = 17
    table: Mapping[tuple[str, int], str] = field(default_factory=dict)
    source: str = ""

    def describe(self) -> str:
        base = f"hit below {self.stand_on} where allowed; never double, split or surrender"
        return f"the table {self.source}, elsewhere: {base}" if self.source else base

    def choose(self, cards: tuple[Card, ...], total: Total, up: Card, allowed: Iterable[str]) -> str:
        """The action for a hand of `cards` (total `total`) against the banker's `up` card."""
        allowed = tuple(allowed)
        column = _kind(up)
        rows = [f"soft {total.value}" if total.soft else str(total.value)]
        if len(cards) == 2 and cards[0].rank is not None and cards[0].rank == cards[1].rank:
            rows.insert(0, f"pair {cards[0].rank.symbol}")
        for row in rows:
            code = self.table.get((row, column))
            if code is None:
                continue
            for action in CODES[code]:
                if action in allowed:
                    return action
        default = "hit" if total.value < self.stand_on else "stand"
        if default in allowed:
            return default
        return "stand" if "stand" in allowed else "hit"


def read_strategy(path: Path, stand_on: int = 17) -> Strategy:
    """A strategy table from a CSV file: a header `hand,A,2,...,9,T,J,Q,K,JK` (J, Q and K may be
    left out: T's column then stands for them) and one row a hand. Raises ValueError naming the
    line and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--strategy {path}: cannot read it ({exc.strerror})") from None
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip() and line.strip()[0] != "#"]
    if not lines:
        raise ValueError(f"--strategy {path}: the file holds no table")
    rows = list(csv.reader(io.StringIO("\n".join(line for _, line in lines))))
    header = [cell.strip().upper() for cell in rows[0]]
    where = f"--strategy {path}: line {lines[0][0]}"
    if not header or header[0] != "HAND":
        raise ValueError(f"{where}: the header starts with 'hand', then the banker's cards (A,2,...,T,JK)")
    columns: list[int] = []
    for cell in header[1:]:
        if cell not in _SYMBOLS and cell != "10":
            raise ValueError(f"{where}: {cell!r} is not a banker's card; write A, 2-9, T, J, Q, K or JK")
        columns.append(_SYMBOLS.index("T" if cell == "10" else cell))
    missing = [s for k, s in enumerate(_SYMBOLS) if k not in columns and s not in ("J", "Q", "K")]
    if missing or (_SYMBOLS.index("T") not in columns and any(_SYMBOLS.index(s) not in columns for s in "JQK")):
        raise ValueError(f"{where}: no column for the banker's {', '.join(missing) or 'T'}")
    table: dict[tuple[str, int], str] = {}
    for (number, _), row in zip(lines[1:], rows[1:], strict=True):
        where = f"--strategy {path}: line {number}"
        hand = _hand_row(row[0], where)
        if len(row) != len(header):
            raise ValueError(f"{where}: {len(row)} cells, the header has {len(header)}")
        for column, cell in zip(columns, row[1:], strict=True):
            code = cell.strip().upper()
            if code not in CODES:
                raise ValueError(f"{where}: {cell.strip()!r} is not a code; write {', '.join(CODES)}")
            table[(hand, column)] = code
    for s in "JQK":  # a ten-value column the header leaves out reads T's
        k = _SYMBOLS.index(s)
        if k not in columns:
            for (hand, column), code in list(table.items()):
                if column == _SYMBOLS.index("T"):
                    table.setdefault((hand, k), code)
    return Strategy(stand_on=stand_on, table=table, source=str(path))


def _hand_row(text: str, where: str) -> str:
    words = text.strip().lower().split()
    if len(words) == 1 and words[0].isdigit() and 4 <= int(words[0]) <= 21:
        return words[0]
    if len(words) == 2 and words[0] == "hard" and words[1].isdigit():
        return words[1]
    if len(words) == 2 and words[0] == "soft" and words[1].isdigit() and 12 <= int(words[1]) <= 21:
        return f"soft {int(words[1])}"
    if len(words) == 2 and words[0] == "pair" and words[1].upper() in (*_SYMBOLS[:-1], "10"):
        rank = "T" if words[1] == "10" else words[1].upper()
        return f"pair {rank}"
    raise ValueError(f"{where}: {text.strip()!r} is not a hand; write a total (15), soft 17 or pair 8")


def _kind(card: Card) -> int:
    return KINDS - 1 if card.rank is None else int(card.rank) - 2


# --- the shoe ----------------------------------------------------------------------------------


class Shoe:
    """What the next card can be: counts by kind, and how many more cards come out without
    replacement (0: every draw sees these counts). Made by `Shoe.of`, one object for each
    composition, so that the calculation's tables find a shoe by identity."""

    __slots__ = ("_draws", "counts", "exact_left")

    def __init__(self, counts: tuple[int, ...], exact_left: int) -> None:
        self.counts = counts
        self.exact_left = exact_left
        self._draws: list[tuple[int, float, Shoe]] | None = None

    @staticmethod
    def of(counts: tuple[int, ...], exact_left: int = 0) -> Shoe:
        key = (counts, exact_left)
        found = _SHOES.get(key)
        if found is None:
            found = _SHOES[key] = Shoe(counts, exact_left)
        return found

    def draws(self) -> list[tuple[int, float, Shoe]]:
        """(kind, probability, the shoe after it) for every card the shoe can give next."""
        found = self._draws
        if found is None:
            total = sum(self.counts)
            found = []
            for kind, n in enumerate(self.counts):
                if n:
                    after = self
                    if self.exact_left:
                        counts = list(self.counts)
                        counts[kind] -= 1
                        after = Shoe.of(tuple(counts), self.exact_left - 1)
                    found.append((kind, n / total, after))
            self._draws = found
        return found


_SHOES: dict[tuple[tuple[int, ...], int], Shoe] = {}


def full_shoe(decks: int, jokers_per_deck: int, depth: int) -> Shoe:
    """The shoe a round starts from: infinite when `decks` is 0 (one deck's proportions)."""
    per_rank = 4 * max(decks, 1)
    counts = (*([per_rank] * 13), jokers_per_deck * max(decks, 1))
    return Shoe.of(counts, depth if decks else 0)


# --- the round ---------------------------------------------------------------------------------

# A finished hand: its class for the comparison ("JJ", "NAT" or the total), doubled, surrendered.
Finished = tuple[Any, bool, bool]


@dataclass
class _Round:
    """One spot's rounds under fixed rules, strategy and money, with the tables that make the
    enumeration share what repeats (a hand's play from a shoe, the banker's final hands, nets)."""

    rules: Jokers22Rules
    strategy: Strategy
    wager: int
    stake: int
    memo: dict[Any, Distribution] = field(default_factory=dict)
    finals: dict[Any, dict[Any, float]] = field(default_factory=dict)
    nets: dict[Any, int] = field(default_factory=dict)
    choices: dict[Any, str] = field(default_factory=dict)

    def deal(self, shoe: Shoe) -> Distribution:
        """The spot's first card, the banker's first, the spot's second; then the play."""
        out: Distribution = {}
        for first, p1, s1 in shoe.draws():
            for up, p2, s2 in s1.draws():
                for second, p3, s3 in s2.draws():
                    _add(out, self.play(s3, (), (first, second), False, None, up), p1 * p2 * p3)
        return out

    def play(
        self, shoe: Shoe, done: tuple[Finished, ...], hand: tuple[int, ...], split: bool, waiting: int | None, up: int
    ) -> Distribution:
        """Play `hand` (kinds, sorted but for a split's waiting card), then the split hand still
        `waiting` for its second card, then the banker."""
        key = ("play", shoe, done, hand, split, waiting, up)
        found = self.memo.get(key)
        if found is not None:
            return found
        out: Distribution = {}
        if len(hand) < 2:  # a split hand's second card
            for kind, p, after in shoe.draws():
                _add(out, self.play(after, done, _sorted((*hand, kind)), split, waiting, up), p)
            self.memo[key] = out
            return out
        action = self.action(hand, split, up)
        if action in ("stand", "surrender"):
            finished = (_class(hand), False, action == "surrender")
            out = self.next_hand(shoe, (*done, finished), waiting, up)
        elif action == "split":
            out = self.play(shoe, done, (hand[0],), True, hand[1], up)
        else:
            for kind, p, after in shoe.draws():
                drawn = _sorted((*hand, kind))
                if action == "double":
                    finished = (_class(drawn), True, False)
                    _add(out, self.next_hand(after, (*done, finished), waiting, up), p)
                else:
                    _add(out, self.play(after, done, drawn, split, waiting, up), p)
        self.memo[key] = out
        return out

    def next_hand(self, shoe: Shoe, done: tuple[Finished, ...], waiting: int | None, up: int) -> Distribution:
        """After a hand is finished: the split hand still waiting, else the banker's draws."""
        if waiting is not None:
            return self.play(shoe, done, (waiting,), True, None, up)
        if all(surrendered for _, _, surrendered in done):
            return {self.net(done, None): 1.0}  # the banker's cards change nothing
        return self.banker(shoe, (up,), done)

    def banker(self, shoe: Shoe, cards: tuple[int, ...], done: tuple[Finished, ...]) -> Distribution:
        """The player's net once the banker has drawn, from the banker's final hands."""
        out: Distribution = {}
        for banker, p in self.banker_final(shoe, cards).items():
            net = self.net(done, banker)
            out[net] = out.get(net, 0.0) + p
        return out

    def banker_final(self, shoe: Shoe, cards: tuple[int, ...]) -> dict[Any, float]:
        """The classes of the banker's final hand (banker_hits decides each draw) -> probability."""
        key = ("banker", shoe, cards)
        found = self.finals.get(key)
        if found is not None:
            return found
        out: dict[Any, float] = {}
        stands = _BANKER_STANDS.get(cards)
        if stands is None:
            total = hand_total(tuple(_CARD[k] for k in cards))
            stands = _BANKER_STANDS[cards] = len(cards) >= 2 and not banker_hits(total)
        if stands:
            out = {_class(cards): 1.0}
        else:
            for kind, p, after in shoe.draws():
                for banker, q in self.banker_final(after, _sorted((*cards, kind))).items():
                    out[banker] = out.get(banker, 0.0) + p * q
        self.finals[key] = out
        return out

    def action(self, hand: tuple[int, ...], split: bool, up: int) -> str:
        """What the hand does now: the forced rules, else the strategy among what is allowed."""
        key = (hand, split, up)
        found = self.choices.get(key)
        if found is None:
            cards = tuple(_CARD[k] for k in hand)
            state = HandState(cards=cards, stakes=(Stake(PLAYER, self.wager),), from_split=split)
            spot = SpotState(1, (Wager(PLAYER, self.wager),), (state,))
            table = Jokers22State(rules=self.rules, banker_cards=(_CARD[up],))
            total = hand_total(cards)
            options = player_options(total)
            extra = tuple(
                a
                for a, why_not in (
                    ("double", _can_double(self.rules, state)),
                    ("split", _can_split(spot, state)),
                    ("surrender", _can_surrender(table, state)),
                )
                if not why_not
            )
            allowed = (*options, *extra)
            found = self.strategy.choose(cards, total, _CARD[up], allowed) if len(allowed) > 1 else allowed[0]
            self.choices[key] = found
        return found

    def net(self, done: tuple[Finished, ...], banker: Any) -> int:
        """The player's net, by the engine's settlement of a round with these results."""
        key = (done, banker)
        found = self.nets.get(key)
        if found is None:
            hands = tuple(
                HandState(
                    cards=_cards_of(cls if not surrendered else 20),
                    stakes=(Stake(PLAYER, self.wager * (2 if doubled else 1), doubled, surrendered),),
                    from_split=len(done) > 1,
                    doubled=doubled,
                    stood=True,
                )
                for cls, doubled, surrendered in done
            )
            state = Jokers22State(
                phase="settled",
                rules=self.rules,
                banker=Banker(stake=self.stake),
                spots=(SpotState(1, (Wager(PLAYER, self.wager),), hands),),
                banker_cards=_cards_of(banker if banker is not None else 20),
            )
            found = sum(w.net for w in settle_wagers(state))
            self.nets[key] = found
        return found


def _add(out: Distribution, part: Mapping[int, float], p: float) -> None:
    for net, q in part.items():
        out[net] = out.get(net, 0.0) + p * q


def _sorted(kinds: tuple[int, ...]) -> tuple[int, ...]:
    """The hand as the rest of the round sees it: two cards as they are (naturals, pairs, the
    first-two-card choices), three or more by what they count (the hard total, an ace, a joker)."""
    if len(kinds) < 3:
        return tuple(sorted(kinds))
    found = _CANONICAL.get(kinds)
    if found is None:
        if KINDS - 1 in kinds:
            found = (0, 0, KINDS - 1)  # a joker and other cards: a hard 21, whatever they are
        else:
            hard = sum(_POINTS[k] for k in kinds)
            ace = 12 in kinds
            # Three or more cards of the same hard total, with an ace if the hand has one.
            low = 1 if ace else 2
            left = hard - 1 if ace else hard
            count = max(2 if ace else 3, -(-left // 10))
            points = [low] * count
            extra = left - low * count
            for i in range(count):
                step = min(10 - low, extra)
                points[i] += step
                extra -= step
            found = tuple(sorted(([12] if ace else []) + [12 if q == 1 else q - 2 if q < 10 else 8 for q in points]))
        _CANONICAL[kinds] = found
    return found


_POINTS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 1, 0)
_CANONICAL: dict[tuple[int, ...], tuple[int, ...]] = {}
_BANKER_STANDS: dict[tuple[int, ...], bool] = {}


def _class(kinds: tuple[int, ...]) -> Any:
    """What `compare` reads of a hand: a pair of jokers, another natural, or the total."""
    total = hand_total(tuple(_CARD[k] for k in kinds))
    if total.natural:
        return "JJ" if kinds == (KINDS - 1, KINDS - 1) else "NAT"
    return total.value


def _cards_of(cls: Any) -> tuple[Card, ...]:
    """Cards the engine reads as this class (for the settlement)."""
    if cls == "JJ":
        return (JOKER, JOKER)
    if cls == "NAT":
        return (_CARD[12], JOKER)
    value = int(cls)
    cards: list[Card] = []
    while value > 12:
        cards.append(_CARD[8])  # a ten
        value -= 10
    cards += [_CARD[0], _CARD[value - 4]] if value >= 4 else [_CARD[value - 2]]
    return tuple(cards)


# --- the figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Jokers22Figures:
    """The exact figures of one spot against the banker (double precision: no sampling, only
    the rounding of adding probabilities up)."""

    distribution: Mapping[int, float]  # the player's net per round, in chips -> probability
    wager: int

    @property
    def expected_net(self) -> float:
        return sum(net * p for net, p in self.distribution.items())

    @property
    def player_return(self) -> float:
        """The player's expected net per chip wagered (negative: the banker's gain)."""
        return self.expected_net / self.wager

    @property
    def banker_edge(self) -> float:
        """The banker's advantage per chip the player wagers."""
        return -self.player_return

    @property
    def sd(self) -> float:
        """Standard deviation of the player's net per round, in chips."""
        mean = self.expected_net
        return math.sqrt(max(sum(p * (net - mean) ** 2 for net, p in self.distribution.items()), 0.0))

    def to_json(self) -> dict[str, Any]:
        return {
            "house_edge": round(self.banker_edge, 9),
            "banker_advantage_per_chip": round(self.banker_edge, 9),
            "player_return_per_chip": round(self.player_return, 9),
            "wagered": self.wager,
            "sd_per_round": round(self.sd, 6),
            "distribution": {str(net): round(p, 12) for net, p in sorted(self.distribution.items())},
        }


def analyze(
    decks: int = 6,
    jokers_per_deck: int = 1,
    *,
    depth: int = FULL_DEPTH,
    strategy: Strategy | None = None,
    wager: int = 2,
    stake: int | None = None,
    coverage: str = "rotation",
) -> Jokers22Figures:
    """The exact figures of one spot, `wager` chips from one player, against a banker's `stake`
    (None: enough to cover everything), for an infinite shoe (`decks` 0) or a finite one."""
    if decks < 0 or jokers_per_deck < 0:
        raise ValueError("decks and jokers per deck are whole numbers of 0 or more")
    if not 3 <= depth <= FULL_DEPTH:
        raise ValueError(f"--depth {depth}: the cards drawn without replacement, 3 (the first three) to {FULL_DEPTH}")
    if wager < 1 or (stake is not None and stake < 1):
        raise ValueError("the wager and the banker's stake are whole numbers of chips, 1 or more")
    rules = Jokers22Rules(decks=max(decks, 1), jokers_per_deck=jokers_per_deck, coverage=coverage)  # type: ignore[arg-type]
    rules.validate()
    game = _Round(rules, strategy or Strategy(), wager, stake if stake is not None else 10**9)
    distribution = game.deal(full_shoe(decks, jokers_per_deck, depth))
    _SHOES.clear()
    return Jokers22Figures(distribution, wager)


# --- the Monte Carlo ---------------------------------------------------------------------------


def chunk(
    seed: tuple[int, int],
    rounds: int,
    decks: int,
    strategy: Strategy | None = None,
    jokers_per_deck: int = 1,
    wager: int = 1,
    stake: int | None = None,
    coverage: str = "rotation",
) -> dict[str, Tally]:
    """One spot, one player betting `wager` against the banker's `stake` (None: always covers)
    under `coverage`, every round through `GAME.apply`; the player follows `strategy` (by default
    hit below 17, never double, split or surrender) where the rules leave a choice."""
    rng = random.Random(f"{seed[0]}:{seed[1]}")
    rules = Jokers22Rules(decks=max(decks, 1), jokers_per_deck=jokers_per_deck, coverage=coverage)  # type: ignore[arg-type]
    cards = list(rules.shoe.cards())
    banker = Banker(stake=stake if stake is not None else 10**9)
    opening = OpenRound(rules, banker, (SpotBet(1, (Wager("player", wager),)),))
    chosen = strategy or Strategy()
    tally = Tally(wager)

    def decide(state: Any, awaiting: Any) -> Event:
        hand = state.spot(int(awaiting.who["spot"])).hands[int(awaiting.who["hand"]) - 1]
        action = chosen.choose(hand.cards, hand_total(hand.cards), state.banker_cards[0], awaiting.allowed)
        return Decision(spot=int(awaiting.who["spot"]), action=action, player=str(awaiting.who["player"]))

    def draw() -> Iterator[Card]:
        return iter(rng.choices(cards, k=40) if decks == 0 else rng.sample(cards, 40))

    for _ in range(rounds):
        state, _ = GAME.apply(GAME.initial(), opening)
        settlement = GAME.settlement(play_round(GAME, state, draw, decide))
        tally.add(-int(settlement["banker"]["net"]))  # the banker's edge: the player's loss
    return {"banker_edge": tally}


# --- tablectl analyze jokers-22 -----------------------------------------------------------------


class Jokers22Analysis(GameAnalysis):
    """`tablectl analyze jokers-22 [--decks 6] [--jokers 1] [--depth 3] [--strategy FILE.csv]
    [--coverage rotation]`, exact or `--monte-carlo [--stand-on 17]`."""

    options = (
        option("--decks", type=int, default=6, help="decks in the shoe; 0 for an infinite deck (6)"),
        option("--stand-on", type=int, default=17, help="Jokers 22 player stands from this total (17)"),
        option(
            "--strategy", type=Path, metavar="CSV", help="Jokers 22 player strategy table: hand by banker's first card"
        ),
        option("--jokers", type=int, default=1, help="Jokers 22 jokers per deck (1)"),
        option("--depth", type=int, default=3, help="Jokers 22 exact: cards of a round drawn without replacement (3)"),
        option("--wager", type=int, default=2, help="Jokers 22 chips on the spot (2: a surrender returns 1)"),
        option("--stake", type=int, help="Jokers 22 banker's stake (enough to cover everything)"),
        option(
            "--coverage",
            choices=["rotation", "collect-first"],
            default="rotation",
            help="Jokers 22 coverage (rotation)",
        ),
    )

    def exact(self, args: argparse.Namespace) -> dict[str, Any]:
        options = self.simulation(args)
        figures = analyze(decks=args.decks, depth=args.depth, **{k: v for k, v in options.items() if k != "decks"})
        doc: dict[str, Any] = {"decks": args.decks}
        if args.decks:
            doc["depth"] = args.depth
        doc |= _terms(args, options)
        doc["banker"] = figures.to_json()
        doc["distribution"] = {"player net": {net: p for net, p in doc["banker"]["distribution"].items()}}
        return doc

    def chunk(self) -> Chunk:
        return chunk

    def simulation(self, args: argparse.Namespace) -> dict[str, Any]:
        if args.jokers < 0:
            raise ValueError(f"--jokers {args.jokers}: jokers per deck is 0 or more")
        if args.wager < 1 or (args.stake is not None and args.stake < 1):
            raise ValueError("--wager and --stake are whole numbers of chips, 1 or more")
        strategy = read_strategy(args.strategy, args.stand_on) if args.strategy else Strategy(stand_on=args.stand_on)
        return {
            "decks": args.decks,
            "strategy": strategy,
            "jokers_per_deck": args.jokers,
            "wager": args.wager,
            "stake": args.stake,
            "coverage": args.coverage,
        }

    def simulated(
        self, args: argparse.Namespace, options: Mapping[str, Any], tallies: dict[str, Tally]
    ) -> dict[str, Any]:
        return {"decks": args.decks, "banker": tallies["banker_edge"].to_json(), **_terms(args, options)}

    def shoe(self, doc: Mapping[str, Any]) -> str:
        shoe = super().shoe(doc)
        if doc.get("decks"):
            shoe += f" + {doc['jokers_per_deck']} joker(s) a deck"
        if "depth" in doc:
            shoe += f", the first {doc['depth']} cards exact"
        return shoe

    def text(self, doc: Mapping[str, Any]) -> list[str]:
        b = doc["banker"]
        if doc["method"] == "exact":
            lines = [
                f"  banker's advantage {b['banker_advantage_per_chip'] * 100:.4f}% per chip wagered; "
                f"player's return {b['player_return_per_chip'] * 100:+.4f}% per chip; "
                f"sd per round {b['sd_per_round']:.4f}"
            ]
        else:
            lines = edge_lines([("banker position", b)])
        lines.append(f"  player: {doc['player_strategy']}")
        lines.append(f"  {doc['wager']} chips on one spot, banker's stake: {doc['stake']}, coverage {doc['coverage']}")
        return lines


def _terms(args: argparse.Namespace, options: Mapping[str, Any]) -> dict[str, Any]:
    """What a Jokers 22 figure is a figure of: the shoe, the money, the strategy."""
    return {
        "jokers_per_deck": args.jokers,
        "wager": args.wager,
        "stake": args.stake if args.stake is not None else "covers every wager",
        "coverage": args.coverage,
        "player_strategy": options["strategy"].describe(),
    }


ANALYSIS = Jokers22Analysis()
