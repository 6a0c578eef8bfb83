"""Each game's adapter, asked as the table asks it: the words of a target, the pole display."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.engine.base import Awaiting
from controller.games import adapter
from controller.games.base import Idle, Lines, PayOne
from controller.journal.rounds import RoundRecord


@dataclass
class View:
    """A table as an adapter reads it."""

    awaiting: Awaiting
    state: Any = None
    blocked: bool = False
    current: Any = None
    last_card: str | None = None
    notice: str | None = None
    pays: list[dict[str, Any]] = field(default_factory=list)

    def payouts(self) -> list[dict[str, Any]]:
        return self.pays

    def opening_refused(self, body: Any) -> str | None:
        return None


@pytest.mark.parametrize(
    ("game", "target", "words"),
    [
        ("grand-slam", {"seat": 3, "base": "second", "blind": False}, "seat 3, second base"),
        ("grand-slam", {"seat": 2, "base": "first", "blind": True}, "seat 2 (blind hand), first base"),
        ("jokers-22", {"banker": True}, "the banker"),
        ("jokers-22", {"spot": 2, "hand": 1, "player": "ann", "total": "soft 17"}, "spot 2, hand 1, player ann, total soft 17"),
        ("baseball-poker", {"seat": 4, "face": "down", "street": 3}, "seat 4, face down, street 3"),
        ("baseball-poker", {"community": True, "face": "up", "street": 7}, "the community card, face up, street 7"),
        ("baseball-poker", {"seat": 1, "street": 4, "to_call": 4, "stack": 90, "pot": 12, "amounts": {}}, "seat 1, to call 4, street 4"),
        ("baseball-poker", {"seat": 1, "face": "up", "street": 4, "extra": True}, "seat 1, the extra card for a 4, face up, street 4"),
    ],
)
def test_a_target_in_the_words_of_its_game(game: str, target: dict[str, Any], words: str) -> None:
    assert adapter(game).describe(target) == words


def test_the_pole_display_says_where_the_card_goes_in_each_game() -> None:
    gs, j22, bb = adapter("grand-slam"), adapter("jokers-22"), adapter("baseball-poker")
    card = lambda target: View(Awaiting("card", target=target), last_card="KH")  # noqa: E731
    assert gs.display(card({"seat": 3, "base": "second"})) == Lines("DEAL SEAT 3 2ND BASE", "LAST KH")
    assert j22.display(card({"banker": True})) == Lines("DEAL THE BANKER", "LAST KH")
    assert j22.display(card({"spot": 2, "hand": 2})) == Lines("DEAL SPOT 2 HAND 2", "LAST KH")
    assert bb.display(card({"community": True, "face": "up"})) == Lines("DEAL COMMUNITY CARD", "LAST KH")
    assert bb.display(card({"seat": 5, "face": "down"})) == Lines("DEAL SEAT 5", "LAST KH")


def test_the_pole_display_says_who_decides_and_what_to_pay() -> None:
    j22, bb, gs = adapter("jokers-22"), adapter("baseball-poker"), adapter("grand-slam")
    ask = View(Awaiting("decision", who={"spot": 1, "player": "ann"}, allowed=("hit", "stand", "surrender")))
    assert j22.display(ask) == Lines("SPOT 1 ANN", "HIT STD SUR")
    pay = View(Awaiting("decision", who={"seat": 2, "for": "wild card 3S", "price": 4}, allowed=("pay", "decline")))
    assert bb.display(pay) == Lines("SEAT 2 PAY 4?", "FOR WILD CARD 3S")

    def Settled() -> RoundRecord:  # a round settled, its payouts not confirmed
        return RoundRecord(4, "2026-12-01T08:00:00.000Z", "settled")

    one = View(Awaiting("round"), current=Settled(), pays=[{"seat": 3, "pay": 40}])
    assert gs.display(one) == PayOne(3, 40)
    two = View(Awaiting("round"), current=Settled(), pays=[{"seat": 1, "pay": 10}, {"seat": 5, "pay": 30}])
    assert gs.display(two) == Lines("PAY SEAT 1: 10", "THEN S5 30")
    player = View(Awaiting("round"), current=Settled(), pays=[{"seat": 2, "spot": 2, "player": "bo", "pay": 25}])
    assert j22.display(player) == Lines("PAY BO SPOT 2", "25".rjust(20))
    assert gs.display(View(Awaiting("round"))) == Idle()


def test_the_shipped_games_are_found_by_the_entry_points_tablectl_declares() -> None:
    """tablectl's three games are registered as any game is (pyproject.toml's `tablectl.games`
    entry points, as installed), listed by name, each naming the package its rules and adapter
    come from. A stale install (entry points from before) fails here, saying what to do."""
    import tomllib
    from importlib.metadata import entry_points
    from pathlib import Path

    from controller.engine import game_names, game_package, get_game

    declared = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    points = declared["project"]["entry-points"]["tablectl.games"]
    installed = {p.name: p.value for p in entry_points(group="tablectl.games") if p.dist and p.dist.name == "tablectl"}
    assert installed == points, "tablectl's installed entry points are stale: install it again (pip install -e .)"
    assert game_names()[:3] == ("baseball-poker", "grand-slam", "jokers-22")  # by name: metadata keeps no order
    for name, package in points.items():
        assert game_package(name) == package
        assert get_game(name).name == adapter(name).name == name
