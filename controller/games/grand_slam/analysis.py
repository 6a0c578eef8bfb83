"""`tablectl analyze grand-slam`: exact figures from an enumeration run through the engine itself,
and the Monte Carlo's rounds (`ANALYSIS`, the adapter's `analysis()`; controller/analysis/base.py).

A seat never takes more than three cards, so the sequences of three cards cover every round one
seat can have (cards past the ones the round uses are not dealt, which the probabilities of the
longer sequences already sum over). What a round pays depends only on the three ranks and on
whether the three cards share one suit (the POKER BONUS), so each rank sequence is played through
the engine twice, suited and not, weighted by the exact probability of that class:

- infinite deck (decks = 0): every card is one of 13 ranks with probability 1/13, and three cards
  share a suit with probability 1/16;
- a finite shoe of d decks: a seat's three cards are three cards drawn without replacement from
  the full shoe (by exchangeability this holds whatever the other seats were dealt), so a
  sequence has probability d/N x (d - repeats)/(N-1) x ... with N = 52 d.

No rule is restated here: every outcome comes from `GrandSlam.apply` and its settlement.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.analysis.base import Chunk, GameAnalysis, Progress, option
from controller.analysis.montecarlo import Tally, play_round
from controller.engine.base import CardDealt, Event, run_events, to_json
from controller.engine.cards import Card, Rank, Suit
from controller.games.grand_slam.rules import (
    BASES,
    GAME,
    SIDE_BETS,
    Base,
    GrandSlamRules,
    OpenRound,
    SeatBet,
    SideBet,
    parse_rules,
)

RANK_SEQUENCES = 13**3
_SUITED = (Suit.SPADES, Suit.SPADES, Suit.SPADES)
_UNSUITED = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS)


@dataclass(frozen=True)
class Outcome:
    """One enumerated round: its probability and the seat's settlement."""

    weight: Fraction
    ranks: tuple[Rank, Rank, Rank]
    suited: bool
    settlement: Mapping[str, Any]


@functools.cache
def class_weights(ranks: tuple[Rank, Rank, Rank], decks: int) -> tuple[Fraction, Fraction]:
    """P(these three ranks in this order, all one suit) and P(..., not all one suit)."""
    if decks == 0:
        p = Fraction(1, RANK_SEQUENCES)
        return p * Fraction(1, 16), p * Fraction(15, 16)
    total = 52 * decks
    suited = unsuited = 0
    for suits in itertools.product(Suit, repeat=3):
        cards = list(zip(ranks, suits, strict=True))
        ways = 1
        for i, card in enumerate(cards):
            ways *= decks - cards[:i].count(card)
        if suits[0] == suits[1] == suits[2]:
            suited += ways
        else:
            unsuited += ways
    den = total * (total - 1) * (total - 2)
    return Fraction(suited, den), Fraction(unsuited, den)


def _settle(opened: Any, ranks: tuple[Rank, Rank, Rank], suited: bool) -> Mapping[str, Any]:
    state = opened
    for rank, suit in zip(ranks, _SUITED if suited else _UNSUITED, strict=True):
        if GAME.awaiting(state).kind != "card":
            break
        state, _ = GAME.apply(state, CardDealt(Card(rank, suit)))
    seat: Mapping[str, Any] = GAME.settlement(state)["seats"][0]
    return seat


_PLAYED: dict[str, list[tuple[tuple[Rank, Rank, Rank], bool, Mapping[str, Any]]]] = {}


def _played(
    bet: SeatBet, rules: GrandSlamRules, suits_matter: bool
) -> list[tuple[tuple[Rank, Rank, Rank], bool, Mapping[str, Any]]]:
    """Every rank sequence (suited and not, where suits matter) played once through the engine;
    kept, since what a round pays does not depend on the shoe, only how likely it is."""
    key = json.dumps([to_json(bet), to_json(rules), suits_matter], sort_keys=True)
    if key not in _PLAYED:
        opened, _ = run_events(GAME, [OpenRound(rules=rules, seats=(bet,))])
        _PLAYED[key] = [
            ((a, b, c), suited, _settle(opened, (a, b, c), suited))
            for a, b, c in itertools.product(Rank, repeat=3)
            for suited in ((True, False) if suits_matter else (False,))
        ]
    return _PLAYED[key]


def enumerate_rounds(
    wagers: Mapping[Base, int],
    side_bets: Mapping[SideBet, int] | None = None,
    rules: GrandSlamRules | None = None,
    decks: int = 0,
) -> Iterator[Outcome]:
    """Every round one seat with these wagers can have, with its exact probability, for an
    infinite deck (decks = 0) or a shoe of `decks` decks."""
    if decks < 0:
        raise ValueError(f"decks is 0 (an infinite deck) or more, not {decks}")
    bet = SeatBet(seat=1, wagers=dict(wagers), side_bets=dict(side_bets or {}))
    for ranks, suited, settlement in _played(bet, rules or GrandSlamRules(), bool(side_bets)):
        suited_p, unsuited_p = class_weights(ranks, decks)
        weight = (suited_p if suited else unsuited_p) if side_bets else suited_p + unsuited_p
        if weight:
            yield Outcome(weight, ranks, suited, settlement)


@dataclass(frozen=True)
class WagerFigures:
    """One wager's exact figures: the distribution of the player's net per round."""

    name: str
    wagered: int  # chips on the wager(s) per round
    distribution: Mapping[int, Fraction]  # net result -> probability

    @property
    def expected_net(self) -> Fraction:
        return sum((net * p for net, p in self.distribution.items()), Fraction(0))

    @property
    def house_edge(self) -> Fraction:
        """The house's expected win per chip wagered."""
        return -self.expected_net / self.wagered

    @property
    def variance(self) -> Fraction:
        mean = self.expected_net
        return sum(((net - mean) ** 2 * p for net, p in self.distribution.items()), Fraction(0))

    @property
    def sd(self) -> float:
        """Standard deviation of the net per round, in chips."""
        return math.sqrt(self.variance)

    def to_json(self) -> dict[str, Any]:
        return {
            "house_edge": str(self.house_edge),
            "house_edge_percent": round(float(self.house_edge) * 100, 6),
            "expected_net": str(self.expected_net),
            "wagered": self.wagered,
            "sd_per_round": round(self.sd, 6),
            "variance": str(self.variance),
            "distribution": {str(net): str(p) for net, p in sorted(self.distribution.items())},
        }


WAGER_SHAPES: dict[str, tuple[Base, ...]] = {
    "first": BASES[:1],
    "first+second": BASES[:2],
    "first+second+third": BASES,
}


def analyze(
    decks: int = 0,
    units: tuple[int, int, int] = (1, 1, 1),
    rules: GrandSlamRules | None = None,
    *,
    progress: bool = False,
) -> dict[str, WagerFigures]:
    """Exact figures of every wager shape (`units` chips on first, second, third) and of both
    side bets (one chip, for a seat betting all three bases), for an infinite deck or `decks`;
    with `progress`, how far it has got on standard error (it takes a while)."""
    out: dict[str, WagerFigures] = {}
    shown = Progress(len(WAGER_SHAPES) + len(SIDE_BETS), "wagers") if progress else None
    for name, bases in WAGER_SHAPES.items():
        if shown is not None:
            shown.step(len(out), name)
        wagers: dict[Base, int] = {base: units[i] for i, base in enumerate(bases)}
        dist: dict[int, Fraction] = {}
        for o in enumerate_rounds(wagers, rules=rules, decks=decks):
            dist[o.settlement["net"]] = dist.get(o.settlement["net"], Fraction(0)) + o.weight
        out[name] = WagerFigures(name, sum(wagers.values()), dist)
    all_bases: dict[Base, int] = {"first": units[0], "second": units[1], "third": units[2]}
    for side in SIDE_BETS:
        if shown is not None:
            shown.step(len(out), side)
        dist = {}
        for o in enumerate_rounds(all_bases, {side: 1}, rules=rules, decks=decks):
            entry = o.settlement["side_bets"][side]
            net = {"won": entry["paid"], "lost": -1, "push": 0}[entry["result"]]
            dist[net] = dist.get(net, Fraction(0)) + o.weight
        out[side] = WagerFigures(side, 1, dist)
    if shown is not None:
        shown.step(len(out))
        shown.end()
    return out


def p_grand_slam_at_table(seats: int, decks: int = 0) -> Fraction:
    """P(at least one Grand Slam in a round) with `seats` seats all betting: a Grand Slam is a 4
    as a seat's first card, and the first pass deals one card to each seat's first base."""
    if not 1 <= seats <= 7:
        raise ValueError(f"seats are 1 to 7, not {seats}")
    if decks == 0:
        return 1 - Fraction(12, 13) ** seats
    total, fours = 52 * decks, 4 * decks
    return 1 - Fraction(math.comb(total - fours, seats), math.comb(total, seats))


@dataclass(frozen=True)
class BetFigures:
    name: str
    units: int  # chips wagered on the bet(s)
    expected_net: Fraction  # the player's expected win per round (negative: the house's edge)

    @property
    def house_edge(self) -> Fraction:
        return -self.expected_net / self.units


_LABELS = {
    "first": "First only",
    "first+second": "First + Second",
    "first+second+third": "First + Second + Third",
    "three_outs": "3 OUT INSURANCE",
    "poker_bonus": "POKER BONUS",
}


def house_edges(rules: GrandSlamRules | None = None, decks: int = 0) -> list[BetFigures]:
    """The exact house edge of the three base-bet patterns (one unit a base) and both side bets."""
    return [
        BetFigures(_LABELS[name], f.wagered, f.expected_net) for name, f in analyze(decks=decks, rules=rules).items()
    ]


def probabilities() -> dict[str, Fraction]:
    """P(Grand Slam) and P(three out cards) for a seat betting all three bases, from the
    enumeration: a Grand Slam as the engine reports it, three outs as the engine wins the
    3 OUT INSURANCE bet."""
    grand_slam = three_outs = Fraction(0)
    for o in enumerate_rounds({"first": 1, "second": 1, "third": 1}, {"three_outs": 1}):
        if o.settlement["grand_slam"]:
            grand_slam += o.weight
        if o.settlement["side_bets"]["three_outs"]["result"] == "won":
            three_outs += o.weight
    return {"grand_slam": grand_slam, "three_outs": three_outs}


def figures_table(rules: GrandSlamRules | None = None) -> str:
    """The Markdown table of house edges the README reports."""
    lines = ["| bet (1 unit a base) | expected player net per round | house edge |", "|---|---|---|"]
    for f in house_edges(rules):
        lines.append(f"| {f.name} | {f.expected_net} | {f.house_edge} = {float(f.house_edge) * 100:.4f}% |")
    return "\n".join(lines)


# --- the Monte Carlo ---------------------------------------------------------------------------


def chunk(seed: tuple[int, int], rounds: int, decks: int, units: tuple[int, int, int]) -> dict[str, Tally]:
    """`rounds` rounds of one seat through `GAME.apply`, each wager shape with `units` chips (and
    both side bets with the three bases), on a fresh `decks`-deck shoe (0: an infinite deck)."""
    rng = random.Random(f"{seed[0]}:{seed[1]}")
    rules = GrandSlamRules(decks=max(decks, 1))
    cards = list(rules.shoe.cards())
    shapes = {"first": BASES[:1], "first+second": BASES[:2], "first+second+third": BASES}
    tallies = {name: Tally(sum(units[: len(b)])) for name, b in shapes.items()}
    tallies |= {"three_outs": Tally(1), "poker_bonus": Tally(1)}
    openings = {
        name: OpenRound(
            rules=rules,
            seats=(
                SeatBet(
                    1,
                    {b: units[i] for i, b in enumerate(bases)},
                    {"three_outs": 1, "poker_bonus": 1} if len(bases) == 3 else {},
                ),
            ),
        )
        for name, bases in shapes.items()
    }

    def draw() -> Iterator[Card]:
        return iter(rng.choices(cards, k=3) if decks == 0 else rng.sample(cards, 3))

    for _ in range(rounds):
        for name, opening in openings.items():
            # An infinite deck draws each card afresh; a shoe deals its top cards without replacement.
            state, _ = GAME.apply(GAME.initial(), opening)
            seat = GAME.settlement(play_round(GAME, state, draw, _no_decisions))["seats"][0]
            tallies[name].add(
                sum(w["paid"] if w["result"] == "home" else -w["amount"] for w in seat["wagers"].values())
            )
            for side, bet in seat["side_bets"].items():
                tallies[side].add({"won": bet["paid"], "lost": -1, "push": 0}[bet["result"]])
    return tallies


def _no_decisions(state: Any, awaiting: Any) -> Event:
    raise AssertionError("Grand Slam never asks a player to decide")


# --- tablectl analyze grand-slam ----------------------------------------------------------------

DECKS = option("--decks", type=int, default=6, help="decks in the shoe; 0 for an infinite deck (6)")
_BETS = ("first", "first+second", "first+second+third")


class GrandSlamAnalysis(GameAnalysis):
    """`tablectl analyze grand-slam [--decks N] [--units 2,1,1] [--paytable pair=1,flush=3,...]
    [--config table.toml]`, exact or `--monte-carlo`."""

    options = (
        DECKS,
        option("--units", default="1,1,1", help="chips on first,second,third for the wager shapes (1,1,1)"),
        option("--paytable", help="POKER BONUS paytable, e.g. pair=1,flush=3,straight=4 (hand names with -)"),
        option("--config", type=Path, metavar="FILE", help="take the rule options (the paytable) from table.toml"),
    )

    def exact(self, args: argparse.Namespace) -> dict[str, Any]:
        units = _units(args.units)
        rules_doc: dict[str, Any] = dict(getattr(args, "config_rules", None) or {})  # --config's, read by the command
        rules_doc["decks"] = max(args.decks, 1)
        if args.paytable:
            rules_doc["poker_bonus_paytable"] = _paytable(args.paytable)
        rules = parse_rules(rules_doc)
        figures = analyze(decks=args.decks, units=units, rules=rules, progress=True)
        return {
            "decks": args.decks,
            "units": list(units),
            "poker_bonus_paytable": dict(rules.poker_bonus_paytable),
            "wagers": {k: figures[k].to_json() for k in _BETS},
            "side_bets": {k: figures[k].to_json() for k in ("three_outs", "poker_bonus")},
            "grand_slam_at_table": {
                str(seats): {"p": str(p), "percent": round(float(p) * 100, 4)}
                for seats in range(1, 8)
                for p in [p_grand_slam_at_table(seats, args.decks)]
            },
        }

    def chunk(self) -> Chunk:
        return chunk

    def simulation(self, args: argparse.Namespace) -> dict[str, Any]:
        return {"decks": args.decks, "units": _units(args.units)}

    def simulated(
        self, args: argparse.Namespace, options: Mapping[str, Any], tallies: dict[str, Tally]
    ) -> dict[str, Any]:
        return {
            "decks": args.decks,
            "wagers": {k: tallies[k].to_json() for k in _BETS},
            "side_bets": {k: tallies[k].to_json() for k in ("three_outs", "poker_bonus")},
        }

    def text(self, doc: Mapping[str, Any]) -> list[str]:
        lines = super().text(doc)
        for seats, p in doc.get("grand_slam_at_table", {}).items():
            lines.append(f"  P(a Grand Slam at a table of {seats}) = {p['percent']:.4f}%")
        return lines


def _units(text: str) -> tuple[int, int, int]:
    try:
        parts = [int(p) for p in text.split(",")]
    except ValueError:
        raise ValueError(f"--units {text}: three whole numbers such as 2,1,1") from None
    if len(parts) != 3 or min(parts) < 1:
        raise ValueError(f"--units {text}: three whole numbers of 1 or more, for first, second and third")
    first, second, third = parts
    if not third <= second <= first:
        raise ValueError(f"--units {text}: third <= second <= first, as the table's rule says")
    return first, second, third


def _paytable(text: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for item in text.split(","):
        name, _, odds = item.partition("=")
        if not odds.strip().isdigit():
            raise ValueError(f"--paytable {item!r}: write hand=odds, such as pair=1 or straight-flush=30")
        table[name.strip().replace("-", " ").replace("_", " ")] = int(odds)
    return table


ANALYSIS = GrandSlamAnalysis()
