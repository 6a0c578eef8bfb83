"""The table as people see it: the dealer's one prompt, and the snapshot the API serves.

Both read the table and ask its game's adapter for the words; neither changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from controller.engine.base import JSON, to_json
from controller.journal.rounds import payment

if TYPE_CHECKING:
    from controller.engine.cards import Card, ShoeTracker
    from controller.games.base import GameAdapter, TableView
    from controller.journal.log import Journal
    from controller.table.camera import SceneWatch
    from controller.table.faults import Fault

    class Shown(TableView, Protocol):
        """What the prompt and the snapshot read of the table (the `Table` is one; read only)."""

        @property
        def adapter(self) -> GameAdapter: ...

        @property
        def faults(self) -> dict[int, Fault]: ...

        @property
        def held(self) -> list[tuple[int, Card]]: ...

        @property
        def shuffle_due(self) -> str | None: ...

        @property
        def camera(self) -> SceneWatch: ...

        @property
        def table_id(self) -> str: ...

        @property
        def game_name(self) -> str: ...

        @property
        def simulated(self) -> bool: ...

        @property
        def seats(self) -> int: ...

        @property
        def journal(self) -> Journal: ...

        @property
        def round_no(self) -> int | None: ...

        @property
        def shoe(self) -> ShoeTracker: ...

        @property
        def devices(self) -> dict[str, dict[str, JSON]]: ...

        def confirm_does(self) -> str | None: ...


#: What the shoe says when it has dealt its last card (its EVENT frame, as the daemon journals it).
SHOE_EMPTY = "The shoe is empty"


def shoe_empty(table: Shown) -> bool:
    """The shoe has nothing left to deal: the count says so, or the shoe itself did."""
    return table.shoe.remaining_count <= 0 or table.shuffle_due == SHOE_EMPTY


def prompt(table: Shown) -> str:
    """The one thing the dealer should do next, in plain words."""
    if table.notice and not table.faults:
        return f"{table.notice}. Then: {_next_step(table)}"
    return _next_step(table)


def _next_step(table: Shown) -> str:
    if table.faults:
        fault = table.faults[min(table.faults)]
        return f"STOP: {fault.message}"
    game = table.adapter
    awaiting = table.awaiting
    if awaiting.kind == "card":
        if shoe_empty(table):  # nothing can come out: a new shoe, mid-round (Table.shoe_reshuffled)
            then = game.card_prompt(awaiting.target)
            return f"{SHOE_EMPTY}: shuffle, load a new shoe, then press New shoe. Then: {then}"
        return game.card_prompt(awaiting.target)
    if awaiting.kind == "decision":
        return game.decision_prompt(awaiting.who, awaiting.allowed)
    record = table.current
    if record is not None and record.pay_due:
        pays = [p for p in table.payouts() if p["pay"]]
        if pays:
            return "Pay " + ", ".join(f"{game.payee(p)}: {p['pay']}" for p in pays)
        return "Take the losing wagers; open the next round"
    if table.shuffle_due:
        return f"{table.shuffle_due}: shuffle, load a new shoe, then press confirm"
    return table.camera.prompt(table) or game.between_rounds


def snapshot(table: Shown, state_json: Callable[[Any], JSON] = to_json) -> dict[str, JSON]:
    """The whole table for the API and the screens (with `camera` once a camera has reported).
    `state_json` makes the engine's state's JSON (a `SharedJson`, for one snapshot after another:
    the same JSON, its unchanged parts reused)."""
    record = table.current
    awaiting = table.awaiting
    snap: dict[str, Any] = {
        "table": table.table_id,
        "game": table.game_name,
        "game_info": table.adapter.screen(table.seats),
        "simulated": table.simulated,
        "journal_seq": table.journal.last_seq,
        "round": table.round_no,
        "round_status": record.status if record else None,
        # "paid" once the dealer confirmed the payouts, "due" while the next round waits for it.
        "payment": payment(record, any(p["pay"] for p in table.payouts()), current=True) if record else None,
        # What the confirm button does now ("payouts", "shoe", "notice"), or null: nothing.
        "confirm": table.confirm_does(),
        "awaiting": {
            "kind": awaiting.kind,
            "target": dict(awaiting.target),
            "who": dict(awaiting.who),
            "allowed": list(awaiting.allowed),
        },
        "prompt": prompt(table),
        "blocked": table.blocked,
        "faults": [f.to_json() for f in table.faults.values()],
        "held_cards": [str(c) for _, c in table.held],
        "last_card": table.last_card,
        "shuffle_due": table.shuffle_due,
        "notice": table.notice,
        "state": state_json(table.state),
        "payouts": table.payouts(),
        "settlement": record.settlement if record is not None and record.status != "open" else None,
        "shoe": {"dealt": table.shoe.dealt_count, "remaining": table.shoe.remaining_count, "empty": shoe_empty(table)},
        # A copy: the snapshot is read on other threads (the API's) while the table goes on.
        "devices": dict(table.devices),
    }
    if table.camera.active:
        snap["camera"] = table.camera.snapshot(table)
    return snap
