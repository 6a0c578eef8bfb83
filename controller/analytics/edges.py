"""The exact house edge of each bet type under a table's rules, from the analysis code
(`tablectl analyze`), never typed in: what a rating's theoretical win multiplies wagers by.

    edges = edges_for("grand-slam", rules_doc, cache_dir=state_dir)
    edges.bets["second/first+second"]      # Fraction: the house's win per chip on that wager

- **Grand Slam**: each base wager's edge depends on which bases the seat bet (a 4 at first base
  scores the whole seat's wagers), so a wager's bet type is its base and the seat's shape
  ("second/first+second"); each is the engine's own settlement over every round one seat can
  have, with its exact probability for the table's decks (`enumerate_rounds`, exact fractions).
  The side bets (3 OUT INSURANCE, POKER BONUS) likewise, under the table's paytable.
- **Jokers 22**: the players play against a player-banker, not the house. `spot` is the
  banker's advantage per chip a player wagers (the analysis' exact enumeration for the table's
  decks, jokers and coverage with a full bank, the first three cards without replacement; the
  analysis adds probabilities in double precision, so this one is as exact as a float). The
  house's own take is the time collection (`time_fee` a spot), a certain amount, not an edge.
- **Baseball poker**: player against player; the house's only take would be a rake or a
  collection, and GAMES.md and the rule options name none: 0.

Computing Grand Slam's edges takes seconds, so they are kept in the state directory
(`analytics-edges.json`), keyed by a digest of the game and its rule options: computed once per
configuration, and again only when the rules change.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

CACHE_FILE = "analytics-edges.json"
#: Bumped when what is computed changes: older cached figures are then computed again.
VERSION = 1


@dataclass(frozen=True)
class Edges:
    """A game's bet types -> the house's exact win per chip wagered, and how they were had."""

    game: str
    digest: str
    bets: Mapping[str, Fraction]
    method: str
    note: str = ""

    @functools.cached_property
    def scaled(self) -> tuple[dict[str, int], int]:
        """The edges as whole numbers over their common denominator (exact sums made fast)."""
        den = math.lcm(*(v.denominator for v in self.bets.values())) if self.bets else 1
        return {k: v.numerator * (den // v.denominator) for k, v in self.bets.items()}, den

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "digest": self.digest,
            "method": self.method,
            "note": self.note,
            "bets": {k: {"edge": str(v), "percent": round(float(v) * 100, 6)} for k, v in self.bets.items()},
        }

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Edges:
        return cls(
            doc["game"],
            doc["digest"],
            {k: Fraction(v["edge"]) for k, v in doc["bets"].items()},
            doc["method"],
            doc.get("note", ""),
        )


def digest(game: str, rules: Mapping[str, Any]) -> str:
    text = json.dumps({"game": game, "rules": rules, "version": VERSION}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def edges_for(game: str, rules: Mapping[str, Any], cache_dir: Path | None = None) -> Edges:
    """The edges of `game` under `rules` (a round file's rule options: what differs from the
    game's defaults), from the cache in `cache_dir` when computed before (a cache that cannot be
    read or written is computed around: it is only a cache)."""
    key = digest(game, rules)
    cached = _read_cache(cache_dir)
    if key in cached:
        try:
            return Edges.from_json(cached[key])
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            pass
    edges = compute(game, rules, key)
    if cache_dir is not None:
        cached[key] = edges.to_json()
        _write_cache(cache_dir, cached)
    return edges


def compute(game: str, rules: Mapping[str, Any], key: str | None = None) -> Edges:
    key = key or digest(game, rules)
    if game == "grand-slam":
        return _grand_slam(rules, key)
    if game == "jokers-22":
        return _jokers22(rules, key)
    if game == "baseball-poker":
        return Edges(
            game,
            key,
            {},
            "none",
            "player against player: the house's take is a rake or a collection, and this table is configured "
            "with none (GAMES.md names none for Baseball poker), so its theoretical win is 0",
        )
    return Edges(game, key, {}, "none", f"{game} has no analysis of its edges: theoretical win not computed")


def _grand_slam(rules_doc: Mapping[str, Any], key: str) -> Edges:
    from controller.games.grand_slam.analysis import enumerate_rounds
    from controller.games.grand_slam.rules import BASES, SIDE_BETS, parse_rules

    rules = parse_rules(dict(rules_doc))
    bets: dict[str, Fraction] = {}
    for shape in (BASES[:1], BASES[:2], BASES):
        expected = dict.fromkeys(shape, Fraction(0))
        for o in enumerate_rounds(dict.fromkeys(shape, 1), rules=rules, decks=rules.decks):
            for base in shape:
                w = o.settlement["wagers"][base]
                expected[base] += o.weight * (w["paid"] if w["result"] == "home" else -w["amount"])
        for base in shape:
            bets[f"{base}/{'+'.join(shape)}"] = -expected[base]
    for side in SIDE_BETS:
        net = Fraction(0)
        for o in enumerate_rounds(dict.fromkeys(BASES, 1), {side: 1}, rules=rules, decks=rules.decks):
            entry = o.settlement["side_bets"][side]
            net += o.weight * {"won": entry["paid"], "lost": -1, "push": 0}[entry["result"]]
        bets[side] = -net
    return Edges(
        "grand-slam",
        key,
        bets,
        "exact",
        f"every round one seat can have, through the engine, {rules.decks} decks without replacement",
    )


def _jokers22(rules_doc: Mapping[str, Any], key: str) -> Edges:
    from controller.games.jokers22.analysis import analyze
    from controller.games.jokers22.rules import parse_rules

    rules = parse_rules(dict(rules_doc))
    figures = analyze(decks=rules.decks, jokers_per_deck=rules.jokers_per_deck, depth=3, coverage=rules.coverage)
    return Edges(
        "jokers-22",
        key,
        {"spot": Fraction(repr(figures.banker_edge))},
        "exact (double precision)",
        "the player-banker's advantage per chip a player wagers (the house banks nothing; its take is the "
        f"time collection, {rules.time_fee} a spot with wagers)",
    )


def _read_cache(cache_dir: Path | None) -> dict[str, Any]:
    if cache_dir is None:
        return {}
    try:
        doc = json.loads((cache_dir / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _write_cache(cache_dir: Path, doc: Mapping[str, Any]) -> None:
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=".edges-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(tmp, cache_dir / CACHE_FILE)
    except OSError:
        pass  # only a cache: computed again next time
