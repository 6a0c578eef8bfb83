"""Grand Slam at the table: its words, lamps, pole display, opening body, demo and camera."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from controller.engine.base import Awaiting, Effect, RoundVoided
from controller.games.base import GameAdapter, LampMove, LampPicture, Lines, Show, TableView, Words
from controller.games.grand_slam.rules import BASES, GAME, SEATS_MAX, GrandSlamScored, NextCard, StackMoved

if TYPE_CHECKING:
    from pydantic import BaseModel

    from controller.analysis.base import GameAnalysis
    from controller.games.grand_slam.camera import GrandSlamCamera

_ORDINAL = {"first": "1ST BASE", "second": "2ND BASE", "third": "3RD BASE"}


def _seat(target: Mapping[str, Any]) -> str:
    return f"seat {target['seat']}" + (" (blind hand)" if target.get("blind") else "")


class GrandSlamAdapter(GameAdapter):
    name = "grand-slam"
    title = "Grand Slam"
    seats_max = SEATS_MAX
    words = Words(
        named=(("seat", _seat), ("base", lambda t: f"{t['base']} base")),
        hidden=frozenset({"blind"}),
    )

    def card_prompt(self, target: Mapping[str, Any]) -> str:
        seat = f"seat {target['seat']}" + (" (blind hand, face down)" if target.get("blind") else "")
        return f"Deal to {seat}, {target['base']} base"

    def step_prompt(self, awaiting: Any) -> str:
        if awaiting.kind == "card":
            return f"Deal to {self.describe(awaiting.target)}"
        return super().step_prompt(awaiting)

    def opening_model(self) -> type[BaseModel]:
        from controller.games.grand_slam.api import OpenRoundBody

        return OpenRoundBody

    # -- what the dealer may see: the blind hand is dealt face down and never turned over ---------

    def hidden_cards(self, state: Any) -> frozenset[str]:
        """The blind hand's cards (GAMES.md: "it receives a card ... face down"). A 6-deck shoe
        may hold the same card face up at a seat too: its text is hidden with the blind one's."""
        blind = state.blind
        return frozenset(str(c) for c in blind.cards) if blind is not None else frozenset()

    def hidden_after(
        self, settlement: Mapping[str, Any], round_file: Mapping[str, Any] | None, cards: Sequence[str]
    ) -> frozenset[str]:
        """The blind hand has no money and nothing turns it over: its cards stay face down."""
        blind = settlement.get("blind")
        return frozenset(str(c) for c in blind.get("cards", [])) if isinstance(blind, Mapping) else frozenset()

    def next_card_hidden(self, awaiting: Awaiting) -> bool:
        return awaiting.kind == "card" and bool(awaiting.target.get("blind"))

    # -- lamps: one per base and home plate in front of every seat --------------------------------

    lamp_names = ("first", "second", "third", "home")

    def lamps(self, table: TableView, seats: frozenset[int]) -> LampPicture:
        state = table.state
        wagers: set[tuple[int, str]] = set()
        record = table.current
        paid = record is not None and record.paid
        if state.phase == "dealing" or (state.phase == "settled" and not paid):
            for seat in state.seats:
                if seat.seat not in seats:
                    continue
                for position, stack in seat.stacks.items():
                    if stack and position != "out":
                        wagers.add((seat.seat, position))
        return LampPicture(frozenset(wagers), self.lamp_next(table, seats))

    def lamp_next(self, table: TableView, seats: frozenset[int]) -> tuple[int, str] | None:
        awaiting = table.awaiting
        if awaiting.kind == "card" and awaiting.target.get("seat") in seats:
            return (int(awaiting.target["seat"]), str(awaiting.target["base"]))
        return None

    def lamp_moves(self, effects: tuple[Effect, ...]) -> list[LampMove] | None:
        moves: list[LampMove] = []
        for fx in effects:
            if isinstance(fx, StackMoved):
                if fx.to == "out":
                    moves.append(LampMove("out", fx.seat, fx.from_base))
                else:
                    moves.append(LampMove("remove", fx.seat, fx.from_base))
                    moves.append(LampMove("scored" if fx.to == "home" else "show", fx.seat, fx.to))
            elif isinstance(fx, GrandSlamScored):
                moves.extend(LampMove("remove", fx.seat, base) for base in BASES)
                moves.append(LampMove("scored", fx.seat, "home"))
            elif isinstance(fx, NextCard):
                moves.append(LampMove("next", fx.seat, fx.base))
            elif isinstance(fx, RoundVoided):
                moves.append(LampMove("clear"))
        return moves

    def display_card(self, target: Mapping[str, Any], last: str) -> Show:
        where = _ORDINAL.get(str(target.get("base")), "")
        return Lines(f"DEAL SEAT {target.get('seat')} {where}".strip(), last)

    # -- simulation and the camera ----------------------------------------------------------------

    def demo_opening(self, rng: random.Random, *, seats: int) -> dict[str, Any]:
        from controller.games.grand_slam.demo import opening

        return opening(rng, seats)

    def camera(self) -> GrandSlamCamera:
        from controller.games.grand_slam.camera import GrandSlamCamera

        return GrandSlamCamera()

    def recall_lines(self, settlement: Mapping[str, Any]) -> list[str]:
        lines = []
        for seat in settlement.get("seats", []):
            bets = [f"{name} {bet['result']}" for name, bet in [*seat["wagers"].items(), *seat["side_bets"].items()]]
            slam = " GRAND SLAM" if seat.get("grand_slam") else ""
            lines.append(
                f"  seat {seat['seat']}: net {seat['net']:+d}{slam} ({', '.join(bets)}) cards {' '.join(seat['cards'])}"
            )
        if settlement.get("blind"):
            lines.append(f"  blind hand seat {settlement['blind']['seat']}: {' '.join(settlement['blind']['cards'])}")
        return lines

    def analysis(self) -> GameAnalysis:
        from controller.games.grand_slam.analysis import ANALYSIS

        return ANALYSIS


ADAPTER = GrandSlamAdapter(GAME)
