"""`tablectl journal synth`: seeded simulated rounds written through the real table code.

A `Table` runs in this process with no devices: a simulated dealer opens each round as the game's
demo dealer does, cards come from a seeded shuffled shoe, players choose as the game's demo
players do, and the dealer confirms the payouts. Every input takes the table's own path (journal,
then engine), so the journal, its snapshots and its round index are what a live table writes.
For soak tests and capacity planning; `durable=False` (the default for synth) skips the per-entry
fsync, the one thing a bulk build need not pay for.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from controller.engine.cards import Card
from controller.journal.log import Journal
from controller.table import Table, TableError

#: A new shoe is loaded between rounds when fewer cards than this are left (as the demo dealer does).
RESHUFFLE_BELOW = 60


class SynthDealer:
    """Deals `rounds` rounds at `table`, seeded: the same seed writes the same inputs."""

    def __init__(
        self, table: Table, seed: int, opening: Callable[[random.Random], dict[str, Any]] | None = None
    ) -> None:
        self.table = table
        self.rng = random.Random(seed)
        self.opening = opening or (lambda rng: table.adapter.demo_opening(rng, seats=table.seats))
        self.full = list(table.shoe.composition.cards())
        self.shoe: list[Card] = []
        self.dealt = 0
        self._load()
        self._resumed = False

    def _load(self) -> None:
        self.shoe = list(self.full)
        self.rng.shuffle(self.shoe)
        self.dealt += 1

    def _resume(self) -> None:
        """Take over a journal as it was left: a round left open (a build stopped midway) is
        voided, and a new shoe is loaded so the table's count follows this dealer's shoe."""
        table = self.table
        if table.faults:
            raise TableError(f"synth: the table is stopped: {next(iter(table.faults.values())).message}")
        if table.awaiting.kind != "round":
            table.void(by="synth-dealer", reason="synth resumes this journal: the round left open is voided")
        if table.shoe.dealt_count:
            table.shoe_reshuffled(by="synth-dealer")
        self._resumed = True

    def play_round(self) -> None:
        table = self.table
        if not self._resumed:
            self._resume()
        if len(self.shoe) < min(RESHUFFLE_BELOW, len(self.full)) or table.shuffle_due:
            self._load()
            table.shoe_reshuffled(by="synth-dealer")
        table.open_round(self.opening(self.rng), by="synth-dealer")
        while True:
            awaiting = table.awaiting
            if awaiting.kind == "round":
                break
            if awaiting.kind == "card":
                if table.shoe.dealt_count == 0 and len(self.shoe) < len(self.full):
                    self._load()  # a game dealing on from a fresh deck (a Baseball poker rainout)
                if not self.shoe:
                    self._load()
                card = self.shoe.pop()
                table.card(card, {"via": "synth", "session": self.dealt, "seq": len(self.full) - len(self.shoe)})
            elif awaiting.kind == "decision":
                table.decide(table.adapter.demo_choice(awaiting, self.rng), by="synth-player")
            if table.faults:
                raise TableError(f"synth: the table stopped: {next(iter(table.faults.values())).message}")
        table.button("confirm", by="synth-dealer")


def synthesize(
    state_dir: Path,
    rounds: int,
    *,
    game: str = "grand-slam",
    rules: Mapping[str, Any] | None = None,
    seed: int = 1,
    durable: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Journal:
    """Add `rounds` rounds to the journal in `state_dir` (created if absent); returns it open."""
    journal = Journal(state_dir / "journal.sqlite3", durable=durable)
    table = Table(journal, game=game, rules=dict(rules or {}), simulated=True)
    dealer = SynthDealer(table, seed + journal.last_seq)
    for n in range(rounds):
        dealer.play_round()
        if progress is not None and (n + 1) % 1000 == 0:
            progress(n + 1, journal.last_seq)
    journal.sync()
    return journal
