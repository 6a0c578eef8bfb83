"""What every game's rules share: a round is opened, dealt (and decided), then settled or voided.

`RoundGame` is the engine's `Game` protocol with that shape written once; a game's `rules.py`
subclasses it and gives only what its rules decide (`open_round`, `deal`, `decide`, `dealing`,
`returned`, `settled`, `open_shoe`). It serves a game kept outside this tree as well as tablectl's
own (the fourth-game test installs one from its own distribution). Like a game's rules, it imports only the
engine: no device library, no clock, no I/O.

    class CoinToss(RoundGame[CoinTossState, OpenRound, Event]):
        name, title = "coin-toss", "Coin toss"
        state_type, open_type = CoinTossState, OpenRound
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from controller.engine.base import (
    JSON,
    Awaiting,
    CardDead,
    CardDealt,
    Effect,
    Event,
    Phase,
    RoundVoided,
    RuleError,
    Void,
    VoidRound,
    seat_refused,
    table_seats,
)
from controller.engine.cards import Card, ShoeComposition


class RoundState(Protocol):
    """What `RoundGame` reads of a game's state (a frozen dataclass): where the round is, the cards
    nobody was owed, and who voided it."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def phase(self) -> Phase: ...

    @property
    def dead_cards(self) -> tuple[Card, ...]: ...

    @property
    def void(self) -> Void | None: ...


S = TypeVar("S", bound=RoundState)
O = TypeVar("O", bound=Event)  # noqa: E741 - the opening event
D = TypeVar("D", bound=Event)


class RoundGame(Generic[S, O, D]):
    """A game's rules as rounds (the engine's `Game`): `S` its state, `O` the event that opens a
    round, `D` a player's decision (`decision_type` None: the cards decide everything).

    What it does once for every game: an opening while a round is being dealt is refused; a card
    while none is being dealt is dead (kept in the state, told to the dealer); a decision goes to
    `decide`; a void needs who and why and returns every wager (`returned`); any other event is
    refused naming the game; the settlement is the game's (`settled`) between its name and the
    void; `shoe` checks the opening event before `open_shoe` reads it.
    """

    name: str  # the game's id in config and round files
    title: str  # the game's name in a refusal ("Grand Slam has no event ...")
    round_word = "round"  # what a round is called in a refusal (a poker game deals a "hand")
    nobody_owed = "no seat"  # who no card is owed to, in a dead card's reason ("no seat is owed a card")
    state_type: type[S]
    open_type: type[O]
    decision_type: type[D] | None = None

    # -- the engine's Game protocol ----------------------------------------------------------------

    def initial(self) -> S:
        return self.state_type()

    def shoe(self, open_event: Event) -> ShoeComposition:
        if not isinstance(open_event, self.open_type):
            raise RuleError(
                f"a {self.title} {self.round_word} opens with {self.open_type.kind!r}, not {open_event.kind!r}",
                field="event",
            )
        return self.open_shoe(open_event)

    def apply(self, state: S, ev: Event) -> tuple[S, tuple[Effect, ...]]:
        if isinstance(ev, self.open_type):
            if state.phase == "dealing":
                raise RuleError(f"a {self.round_word} is already being dealt; settle or void it first", field="round")
            return self.open_round(state, ev)
        if isinstance(ev, CardDealt):
            if state.phase != "dealing":
                word = self.round_word
                why = f"no {word} is being dealt" if state.phase == "idle" else f"the {word} is {state.phase}"
                return self.dead(state, ev.card, f"{self.nobody_owed} is owed a card: {why}")
            return self.deal(state, ev.card)
        if self.decision_type is not None and isinstance(ev, self.decision_type):
            return self.decide(state, ev)
        if isinstance(ev, VoidRound):
            return self._void(state, ev)
        raise RuleError(f"{self.title} has no event {ev.kind!r}", field="event")

    def awaiting(self, state: S) -> Awaiting:
        if state.phase != "dealing":
            return Awaiting("round")
        return self.dealing(state)

    def settlement(self, state: S) -> dict[str, JSON]:
        """The round's settlement in REPLAY.md form (a void round: every wager returned)."""
        if state.phase not in ("settled", "void"):
            raise RuleError(f"the {self.round_word} is not finished", field="round")
        out: dict[str, JSON] = {"game": self.name, **self.settled(state)}
        if state.void is not None:
            out["void"] = {"by": state.void.by, "reason": state.void.reason}
        return out

    # -- what each game's rules decide ------------------------------------------------------------

    def open_shoe(self, open_event: O) -> ShoeComposition:
        """The shoe a round opened by `open_event` is dealt from."""
        raise NotImplementedError

    def open_round(self, state: S, ev: O) -> tuple[S, tuple[Effect, ...]]:
        """Open a round (no round is being dealt): check the opening, the first effects."""
        raise NotImplementedError

    def deal(self, state: S, card: Card) -> tuple[S, tuple[Effect, ...]]:
        """A card from the shoe while the round is being dealt."""
        raise NotImplementedError

    def decide(self, state: S, ev: D) -> tuple[S, tuple[Effect, ...]]:
        """A player's decision (`decision_type`), or RuleError naming the rule it breaks."""
        raise NotImplementedError

    def dealing(self, state: S) -> Awaiting:
        """What the round being dealt needs next: a card for a target, or a decision."""
        raise NotImplementedError

    def returned(self, state: S) -> dict[int, int]:
        """Seat (or spot) -> the chips a void returns: every wager of the round being dealt."""
        raise NotImplementedError

    def settled(self, state: S) -> dict[str, JSON]:
        """The settlement's own keys (REPLAY.md), after "game"; a void round's too."""
        raise NotImplementedError

    def voided(self, state: S, void: Void) -> S:
        """The state of the round voided by `void` (a game clears what it waits for here)."""
        return dataclasses.replace(state, phase="void", void=void)

    # -- shared steps -----------------------------------------------------------------------------

    def dead(self, state: S, card: Card, reason: str) -> tuple[S, tuple[Effect, ...]]:
        """A card nobody is owed: kept with the round's dead cards and shown to the dealer."""
        new = dataclasses.replace(state, dead_cards=(*state.dead_cards, card))
        return new, (CardDead(card=card, reason=reason),)

    def _void(self, state: S, ev: VoidRound) -> tuple[S, tuple[Effect, ...]]:
        word = self.round_word
        if state.phase != "dealing":
            raise RuleError(f"only a {word} being dealt can be voided", field="round")
        if not ev.by.strip() or not ev.reason.strip():
            raise RuleError(f"voiding a {word} needs who voids it and why", field="void")
        returned = self.returned(state)
        new = self.voided(state, Void(by=ev.by, reason=ev.reason))
        return new, (RoundVoided(by=ev.by, reason=ev.reason, returned=returned),)


def changed_rules(rules: Any) -> dict[str, JSON]:
    """A round file's "rules": the options of `rules` (a game's rules dataclass, whose defaults are
    the table's) that differ from the defaults, as JSON (a mapping as an object, a tuple a list)."""
    default = type(rules)()
    out: dict[str, JSON] = {}
    for f in dataclasses.fields(rules):
        value = getattr(rules, f.name)
        if value == getattr(default, f.name):
            continue
        out[f.name] = dict(value) if isinstance(value, Mapping) else list(value) if isinstance(value, tuple) else value
    return out


class Seating:
    """The seats (or spots) an opening names, checked one by one: each on this table (1 to its
    `table.seats`, at most the game's `maximum`) and listed once. `seen` holds those taken."""

    def __init__(self, count: object, maximum: int, title: str, place: str = "seat") -> None:
        self.table = table_seats(count, maximum, title)
        self.maximum, self.title, self.place = maximum, title, place
        self.seen: set[int] = set()

    def take(self, seat: object, where: str) -> None:
        """Seat `seat` of the opening's part `where` ("seats[0]"); RuleError naming `where.seat`."""
        field = f"{where}.{self.place}"
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in self.table:
            raise RuleError(seat_refused(seat, self.table, self.maximum, self.title, self.place), field=field)
        if seat in self.seen:
            raise RuleError(f"the {self.place} is listed twice", field=field, seat=seat, place=self.place)
        self.seen.add(seat)
