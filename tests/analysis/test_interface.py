"""The analysis interface's shared command line: each game's options once, and two games that
declare one option differently stop `tablectl analyze` (fail loud, never parse it one game's way)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

import controller.engine
import controller.games
from controller.analysis.base import GameAnalysis, option
from controller.cli import analyze as cli
from controller.engine.base import RuleError


class _Game:
    def __init__(self, analysis: GameAnalysis) -> None:
        self._analysis = analysis

    def analysis(self) -> GameAnalysis:
        return self._analysis


def _games(monkeypatch: pytest.MonkeyPatch, analyses: dict[str, Any]) -> None:
    monkeypatch.setattr(controller.engine, "game_names", lambda: tuple(analyses))
    monkeypatch.setattr(controller.games, "adapter", lambda name: _Game(analyses[name]))


def test_an_option_two_games_declare_alike_is_one_option(monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = GameAnalysis(), GameAnalysis()
    one.options = (option("--decks", type=int, default=6, help="decks"),)
    two.options = (option("--decks", type=int, default=6, help="decks in the shoe"), option("--spots", type=int))
    _games(monkeypatch, {"one": one, "two": two})
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["two", "--decks", "2", "--spots", "3"])
    assert (args.game, args.decks, args.spots) == ("two", 2, 3)


def test_an_option_two_games_declare_differently_is_refused_naming_both(monkeypatch: pytest.MonkeyPatch) -> None:
    one, two = GameAnalysis(), GameAnalysis()
    one.options = (option("--decks", type=int, default=6),)
    two.options = (option("--decks", type=int, default=8),)
    _games(monkeypatch, {"one": one, "two": two})
    with pytest.raises(RuleError, match="two and one both declare --decks, differently"):
        cli.add_arguments(argparse.ArgumentParser())
