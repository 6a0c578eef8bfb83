"""The game adapter: everything outside the rules that the rest of tablectl asks a game.

The engine (`controller/engine/`) runs a game's rules; the adapter says what those rules mean at
the table: the words of a prompt, what the lamps and the pole display show, the API body that
opens a round, how a demo dealer plays, and (for a game with a camera layout) what the overhead
camera's view means. The table loop, the outputs, `tablectl replay`, the daemon, the API and the
screens call these methods; none of them compares a game's name or probes a state's keys.

A game is one folder `controller/games/<game>/`: `rules.py` (the engine's `GAME`), `adapter.py`
(`ADAPTER`, a `GameAdapter`), and whatever else it needs (`api.py`, `camera.py`, `demo.py`).
Nothing here imports a device library, FastAPI or OpenCV: `tablectl replay` loads adapters too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from controller.engine.base import Awaiting, Effect, Event, Game

if TYPE_CHECKING:
    from pydantic import BaseModel

    from controller.analysis.base import GameAnalysis
    from controller.journal.entries import TableEntry
    from controller.journal.rounds import RoundRecord


class TableView(Protocol):
    """What an adapter may read of the table (the `Table` is one, and so is the `TableState` the
    reducer passes while it applies an entry)."""

    @property
    def state(self) -> Any: ...

    @property
    def awaiting(self) -> Awaiting: ...

    @property
    def blocked(self) -> bool: ...

    @property
    def current(self) -> RoundRecord | None: ...

    @property
    def last_card(self) -> str | None: ...

    @property
    def notice(self) -> str | None: ...

    def payouts(self) -> list[dict[str, Any]]: ...

    def opening_refused(self, body: Mapping[str, Any]) -> str | None: ...


# -- what the devices show, in neutral terms ---------------------------------------------------


@dataclass(frozen=True)
class LampPicture:
    """The lamps as a whole: steady where a wager stands, blinking where play is. A place is a
    lamp in front of a seat, by the name the pin map gives it (seat 3's "first" is the lamp
    `seat3.first`); the game's `lamp_names` are the ones it lights (hardware/wiring.md)."""

    wagers: frozenset[tuple[int, str]] = frozenset()
    next: tuple[int, str] | None = None


@dataclass(frozen=True)
class LampMove:
    """One lamp gesture for an effect: `show` / `remove` a wager, `out` (two long pulses),
    `scored` (rapid flashes at `place`), `next` (the next card goes here), `clear` (all dark)."""

    gesture: str
    seat: int = 0
    place: str = ""


@dataclass(frozen=True)
class Lines:
    """Two lines of the pole display (the display fits them to its 20 columns)."""

    upper: str
    lower: str = ""


@dataclass(frozen=True)
class PayOne:
    """The pole display's payout screen for one seat: PAY SEAT n / the amount."""

    seat: int
    amount: int


@dataclass(frozen=True)
class Idle:
    """The pole display's idle screen."""


Show = Lines | PayOne | Idle


# -- words --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Words:
    """How a game names the keys of its targets and deciders: `named` keys in this order, each
    as its formatter says; `hidden` keys are bookkeeping the screens show on their own; any other
    key is written "key value"."""

    named: tuple[tuple[str, Any], ...]
    hidden: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, target: Mapping[str, Any]) -> str:
        parts = []
        for key, say in self.named:
            if key in target:
                text = say(target)
                if text:
                    parts.append(text)
        shown = {key for key, _ in self.named}
        parts.extend(f"{k} {v}" for k, v in target.items() if k not in shown | self.hidden)
        return ", ".join(parts) or "the table"


def seat_of(target: Mapping[str, Any]) -> tuple[int | None, str]:
    """The seat (or spot) a target or decider names, and which word names it."""
    if "seat" in target:
        seat = target["seat"]
        return (seat if isinstance(seat, int) else None), "seat"
    spot = target.get("spot")
    return (spot if isinstance(spot, int) else None), "spot" if "spot" in target else "seat"


class SceneView(Protocol):
    """The camera's settled view as the table holds it (controller/table/camera.py)."""

    status: str | None
    why: str
    seq: int | None
    zones: dict[str, Any]  # zone -> ZoneView (state, value, why)
    pucks: dict[str, str | None]
    last_ok: dict[str, int]
    last_check: dict[str, Any] | None


class CameraMeaning(Protocol):
    """What the overhead camera's view means for one game: the proposal of the next round's
    wagers, the checks while dealing (past posting) and at the payouts, and how a simulated
    dealer's hands move the chips. Decided from journaled entries only, so a replay agrees."""

    def follow(
        self, table: TableView, view: SceneView, entry: TableEntry, effects: tuple[Effect, ...]
    ) -> tuple[str, str] | None:
        """Follow one journaled entry (a typed record; any kind but a scene, which is `changed`),
        `table` as it stands after it; the fault (code, message) it raises, if any."""
        ...

    def changed(
        self, table: TableView, view: SceneView, changed: list[tuple[str, int | None, int]]
    ) -> tuple[str, str] | None: ...

    def recheck(self, view: SceneView, zones: Mapping[str, Any]) -> tuple[str, str] | None:
        """A scene entry's changed zones (zone -> ZoneView) after the payouts were confirmed: the
        payouts the check left open (the camera unsure) decided on its first sure reading; the
        fault (code, message) it raises, if any."""
        ...

    def proposal(self, table: TableView, view: SceneView) -> dict[str, Any] | None: ...

    def prompt(self, proposal: Mapping[str, Any]) -> str: ...

    def payout_view(self, settlement: Mapping[str, Any], view: SceneView) -> list[dict[str, Any]]: ...

    def to_json(self) -> dict[str, Any]:
        """What the meaning keeps between entries, for the table's snapshots."""
        ...

    def restore(self, data: Mapping[str, Any]) -> None:
        """Take back what `to_json` wrote."""
        ...

    def scene_change(
        self, table: TableView, effects: tuple[Effect, ...], *, place: bool, pick_up: bool
    ) -> Callable[[dict[str, list[int]], dict[str, Any]], None] | None:
        """How a simulated dealer's and players' hands change the felt (zone -> chips, puck ->
        zone) after an entry with `effects` (`place`: a round opened by hand, so its wagers are
        put down; `pick_up`: the players take their winnings), or None when nothing moves."""
        ...


class GameAdapter:
    """One game at the table. Subclasses set the class attributes and override what differs.

    name             the game's id (config, round files, the registry)
    title            the game's name for people ("Grand Slam")
    rules            the engine's state machine (`rules.GAME`)
    between_rounds   the dealer's prompt when no round is open
    describe(t)      a card target or a decider in words ("seat 3, second base")
    """

    name: str = ""
    title: str = ""
    between_rounds = "Place wagers and open the round"
    words: Words = Words(named=())
    #: The most seats (spots) a table of this game has: its table card (GAMES.md). A table's
    #: config may seat fewer (`table.seats`); the rules refuse a seat beyond the table's count.
    seats_max = 7
    #: The lamps the game lights in front of each seat, by their names in the pin map (seat 3's
    #: "first" is `seat3.first`): the table refuses a pin map that lacks one (hardware/wiring.md).
    lamp_names: tuple[str, ...] = ("first",)

    def __init__(self, rules: Game[Any]) -> None:
        self.rules = rules

    # -- words ------------------------------------------------------------------------------------

    def describe(self, target: Mapping[str, Any]) -> str:
        return self.words(target)

    def card_prompt(self, target: Mapping[str, Any]) -> str:
        return f"Deal to {self.describe(target)}"

    def decision_prompt(self, who: Mapping[str, Any], allowed: Sequence[str]) -> str:
        return f"{self.describe(who).capitalize()}: {' or '.join(allowed)}?"

    def step_prompt(self, awaiting: Awaiting) -> str:
        """A step of a replayed round in words (game recall)."""
        if awaiting.kind == "card":
            return self.card_prompt(awaiting.target)
        if awaiting.kind == "decision":
            return self.decision_prompt(awaiting.who, awaiting.allowed)
        return "Settled"

    def payee(self, pay: Mapping[str, Any]) -> str:
        """Whom a payout row pays, in the prompt's words."""
        return f"seat {pay['seat']}"

    def recall_lines(self, settlement: Mapping[str, Any]) -> list[str]:
        """The lines `tablectl recall` prints under a round's heading from its settlement (the
        heading says the round, its status and cards, and who voided it); none by default."""
        return []

    def unlisted_decision(self, awaiting: Awaiting) -> dict[str, Any] | None:
        """The decision a round file leaves out where the engine asks one (REPLAY.md never lists a
        forced action), in round-file form; `tablectl replay` takes it when the file has no more
        decisions. None: the round file must list this decision."""
        return None

    def unlisted_before(self, state: Any, decision: Event) -> bool:
        """Whether the decision the engine asks now in `state` is one the round file left out
        (`unlisted_decision`) because `decision`, the file's next, is for a later hand or player:
        `tablectl replay` then takes the unlisted one first and deals the cards the round needs
        before `decision`. False by default."""
        return False

    # -- the API ----------------------------------------------------------------------------------

    def opening_model(self) -> type[BaseModel]:
        """The pydantic model of the body that opens a round (POST /api/rounds)."""
        raise NotImplementedError

    def decision_model(self) -> type[BaseModel] | None:
        """The pydantic model of a decision (POST /api/decisions), or None for a game without."""
        return None

    def screen(self, seats: int) -> dict[str, Any]:
        """What the screens need to know of the game beyond the state (GET /api/state `game_info`):
        `seats` is the table's seat count, the seats the screens draw."""
        return {"name": self.name, "title": self.title, "seats": seats, "seats_max": self.seats_max}

    # -- what the dealer may see ------------------------------------------------------------------

    def hidden_cards(self, state: Any) -> frozenset[str]:
        """The cards of the hand being dealt in `state` that the dealer's view may not show (as
        the journal writes them: "AS"): its face-down cards. None by default: every card of the
        game lies face up. The supervisor and surveillance see them all (controller/table/visibility.py)."""
        return frozenset()

    def hidden_after(
        self, settlement: Mapping[str, Any], round_file: Mapping[str, Any] | None, cards: Sequence[str]
    ) -> frozenset[str]:
        """The cards of a finished round (its settlement, its round file: None for a void round,
        and every card it used) that stay hidden from the dealer's view: what the rules never
        turn over."""
        return frozenset()

    #: Keys whose cards are a hand as the rules show it at a showdown ("best": the five that play,
    #: a wild card written as what it stands for), not cards as dealt: never hidden, since such
    #: a hand is only ever shown (a wild card standing for 8H is not the dealt 8H).
    shown_hand_keys: frozenset[str] = frozenset()

    #: Keys whose value is worked out from the cards beside them (a hand's total): where a hidden
    #: card is masked, these beside it are masked too, or a total would tell the card's value.
    derived_keys: frozenset[str] = frozenset()

    def next_card_hidden(self, awaiting: Awaiting) -> bool:
        """Whether the card the table waits for goes face down (a card a fault holds then stays hidden)."""
        return False

    # -- the lamps and the pole display ----------------------------------------------------------

    def lamps(self, table: TableView, seats: frozenset[int]) -> LampPicture:
        """The whole lamp picture. By default: the first lamp of every place still in play is
        steady and the one whose turn it is (a card or a decision) blinks."""
        places = {n for n in self.in_play(table.state) if n in seats}
        return LampPicture(frozenset((n, "first") for n in places), self._turn_lamp(table, seats))

    def lamp_next(self, table: TableView, seats: frozenset[int]) -> tuple[int, str] | None:
        """The blinking place of `lamps`' picture alone (`lamps(table, seats).next`), without the
        rest of it: what the lamps ask after every entry. A game that draws its own picture says
        its blinking place here too, or the whole picture is drawn for it."""
        if type(self).lamps is GameAdapter.lamps:
            return self._turn_lamp(table, seats)
        return self.lamps(table, seats).next

    def _turn_lamp(self, table: TableView, seats: frozenset[int]) -> tuple[int, str] | None:
        awaiting = table.awaiting
        where = awaiting.target if awaiting.kind == "card" else awaiting.who
        turn, _ = seat_of(where)
        return (turn, "first") if turn is not None and turn in seats else None

    def in_play(self, state: Any) -> set[int]:
        """Seats (or spots) still in the round being dealt."""
        return set()

    def lamp_moves(self, effects: tuple[Effect, ...]) -> list[LampMove] | None:
        """Lamp gestures for one entry's effects, or None: show the whole picture again."""
        return None

    def display(self, table: TableView) -> Show:
        """What the pole display shows when no fault stops play."""
        awaiting = table.awaiting
        last = f"LAST {table.last_card}" if table.last_card else ""
        if awaiting.kind == "card":
            return self.display_card(awaiting.target, last)
        if awaiting.kind == "decision":
            return self.display_decision(awaiting.who, awaiting.allowed)
        record = table.current
        if record is not None and record.pay_due:
            pays = [p for p in table.payouts() if p["pay"]]
            return self.display_payouts(pays) if pays else Lines("ROUND OVER", "NO PAYOUTS")
        if table.notice:
            return Lines(f"DEAD CARD {table.last_card or ''}", "NO SEAT OWED A CARD")
        if record is not None and record.status == "void":
            return Lines(f"ROUND {record.number} VOID", "WAGERS RETURNED")
        return Idle()

    def display_card(self, target: Mapping[str, Any], last: str) -> Show:
        return Lines(f"DEAL SEAT {target.get('seat')}", last)

    def display_decision(self, who: Mapping[str, Any], allowed: Sequence[str]) -> Show:
        return Lines(f"SEAT {who.get('seat')}", " ".join(a.upper() for a in allowed))

    def display_payouts(self, pays: list[dict[str, Any]]) -> Show:
        if len(pays) == 1:
            return PayOne(pays[0]["seat"], pays[0]["pay"])
        first, rest = pays[0], pays[1:]
        then = " ".join(f"S{p['seat']} {p['pay']}" for p in rest)
        return Lines(f"PAY SEAT {first['seat']}: {first['pay']}", f"THEN {then}")

    # -- simulation -------------------------------------------------------------------------------

    def demo_opening(self, rng: random.Random, *, seats: int) -> dict[str, Any]:
        """A simulated dealer's opening body (as POST /api/rounds takes it) at a table of `seats` seats."""
        raise NotImplementedError

    def demo_choice(self, awaiting: Awaiting, rng: random.Random) -> dict[str, Any]:
        """A simulated player's decision (as POST /api/decisions takes it)."""
        raise NotImplementedError(f"{self.title} has no decisions")

    # -- the overhead camera ----------------------------------------------------------------------

    def camera(self) -> CameraMeaning | None:
        """What the camera's view means for this game, or None when its layout has no zones."""
        return None

    # -- tablectl analyze -------------------------------------------------------------------------

    def analysis(self) -> GameAnalysis | None:
        """What `tablectl analyze` computes for this game (controller/analysis/base.py), or None:
        the command refuses the game in one line."""
        return None
