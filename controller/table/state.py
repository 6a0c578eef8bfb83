"""The table as a reducer: `TableState.apply(entry) -> (state, effects)`.

`TableState` is everything the table knows that follows from its journal: the engine's state,
the round being dealt (and those finished since the last snapshot), the fault latch and the cards
it holds, the meters, the shoe's count, the camera's view, the dealer's notice. `apply` takes one
typed entry (controller/journal/entries.py) and returns the state after it with the engine's
effects. It reads no clock, device, file or journal and logs nothing: the same entries from the
same state give the same state, which is what start-up's replay, the snapshot check, recall,
`tablectl journal verify|rebuild`, synth (through the `Table`) and the floor publisher's replica
all rely on.

The state is one mutable object that `apply` changes and returns, not a frozen value copied per
entry: its parts (the shoe's count of every card of up to eight decks, the round's cards, the
meters' counters, the camera's zones) would all be copied on every card, on a Raspberry Pi, to
give no caller anything it uses (nobody keeps the state before an entry: the snapshot check
builds its own state from the previous snapshot). Callers rebind (`state, fx = state.apply(e)`)
and never share a state between two owners.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from typing import Any

from controller.engine.base import (
    Awaiting,
    CardDead,
    CardDealt,
    Effect,
    Event,
    Game,
    RuleError,
    ShoeReshuffled,
    VoidRound,
)
from controller.engine.cards import Card, CardError, ShoeComposition, ShoeTracker, parse_card
from controller.games import adapter as game_adapter
from controller.games.base import GameAdapter
from controller.journal.entries import (
    ButtonPressed,
    CardRead,
    ConfirmPressed,
    Decided,
    FaultAcknowledged,
    FaultCleared,
    FaultRaised,
    JournalRestored,
    NewShoe,
    PayOverride,
    RoundOpened,
    SceneChanged,
    ShoeSignal,
    SoftwareChecked,
    TableEntry,
    Voided,
)
from controller.journal.rounds import RecentRounds, RoundRecord
from controller.table.camera import SceneWatch
from controller.table.errors import TableError
from controller.table.faults import CARD_FAULTS, Fault
from controller.table.latch import FaultLatch
from controller.table.meters import Meters


@dataclasses.dataclass(frozen=True)
class TableSetup:
    """What a table is for its whole life (its configuration): the game, its rule options, its
    seats and the shoe they ask for."""

    game_name: str
    adapter: GameAdapter
    rules_doc: Mapping[str, Any]
    seats: int
    composition: ShoeComposition

    @classmethod
    def of(cls, game: str, rules: Mapping[str, Any], seats: int | None = None) -> TableSetup:
        """The setup for `game` with rule options `rules` and `seats` (None: the game's table
        card's); TableError naming the key when the configuration is wrong."""
        found = game_adapter(game)
        most = found.seats_max
        count = most if seats is None else seats
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= most:
            raise TableError(f"table.seats: a {found.title} table seats 1 to {most}, not {count!r}")
        doc = dict(rules)
        try:  # the configured rules are checked now, not at the first round
            composition = found.rules.shoe_for_rules(doc)
        except RuleError as exc:
            raise TableError(str(exc)) from None
        return cls(game, found, doc, count, composition)

    @property
    def game(self) -> Game[Any]:
        return self.adapter.rules

    def open_event(self, body: Mapping[str, Any]) -> Event:
        """The opening event for `body`: a round file's opening keys (Grand Slam: seats and
        blind_seat; Jokers 22: banker and spots) with the table's rules and no cards yet."""
        if not isinstance(body, Mapping):
            raise TableError("the round is an object, as a round file opens one")
        fixed = sorted({"game", "rules", "cards", "decisions"} & set(body))
        if fixed:
            raise TableError(f"unknown key {fixed[0]!r}: the table sets the game, its rules and the cards")
        doc = {"game": self.game_name, "rules": self.rules_doc, **body, "cards": []}
        try:
            return self.game.parse_round_file(doc, seats=self.seats).open
        except RuleError as exc:
            raise TableError.of_rule(exc) from None


@dataclasses.dataclass(eq=False)
class TableState:
    """The table's state after some entries; `apply` is the only way it changes."""

    setup: TableSetup
    engine: Any  # the game's own (frozen) state
    shoe: ShoeTracker
    camera: SceneWatch
    round_no: int | None = None
    rounds: RecentRounds = dataclasses.field(default_factory=RecentRounds)
    latch: FaultLatch = dataclasses.field(default_factory=FaultLatch)
    meters: Meters = dataclasses.field(default_factory=Meters)
    last_card: str | None = None
    shoe_link: dict[str, Any] | None = None  # last (session, seq, frame) the shoe delivered
    notice: str | None = None  # from the engine (a puck to remove, a dead card) until the next card or confirm
    shuffle_due: str | None = None  # "cut card" / "shoe empty": load a new shoe after this round
    # Set while one entry is applied, when it ends the round being dealt (never left set after).
    _ending: bool = False
    # The engine's answer to "what next" for the engine state it was asked of (a card's path asks
    # it a dozen times: the table, the lamps, the display, the screens; the engine state is frozen).
    _awaiting: tuple[Any, Awaiting] | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def initial(cls, setup: TableSetup) -> TableState:
        """The table before any entry."""
        return cls(
            setup,
            setup.game.initial(),
            ShoeTracker(setup.composition),
            SceneWatch(setup.adapter.camera()),
        )

    # -- what the table looks like (the games' TableView) -----------------------------------------

    @property
    def adapter(self) -> GameAdapter:
        return self.setup.adapter

    @property
    def game(self) -> Game[Any]:
        return self.setup.adapter.rules

    @property
    def game_name(self) -> str:
        return self.setup.game_name

    @property
    def state(self) -> Any:
        """The engine's state (as the games' TableView names it)."""
        return self.engine

    @property
    def faults(self) -> dict[int, Fault]:
        return self.latch.faults

    @property
    def held(self) -> list[tuple[int, Card]]:
        return self.latch.held

    @property
    def blocked(self) -> bool:
        return self.latch.blocked

    @property
    def awaiting(self) -> Awaiting:
        engine, known = self.engine, self._awaiting
        if known is not None and known[0] is engine:
            return known[1]
        awaiting = self.game.awaiting(engine)
        self._awaiting = (engine, awaiting)
        return awaiting

    @property
    def current(self) -> RoundRecord | None:
        """The round being dealt, or the last one (settled or void); None before the first."""
        return self.rounds.get(self.round_no)

    def payouts(self) -> list[dict[str, Any]]:
        """What the dealer pays and takes at each seat for the last settled round."""
        record = self.current
        if record is None or record.settlement is None or record.status != "settled":
            return []
        return self.game.payouts(record.settlement)

    def payouts_due(self) -> bool:
        """The last round is settled, owes some seat a payout, and the dealer has not confirmed
        paying it (nor has a supervisor let the next round open without): no round opens."""
        record = self.current
        return record is not None and record.pay_due and any(p["pay"] for p in self.payouts())

    def confirm_does(self) -> str | None:
        """What the dealer's confirm does now: "payouts" (the seats are paid), "notice" (the
        dealer has read it), "shoe" (a new shoe is loaded), or None: nothing to confirm."""
        record = self.current
        if record is not None and record.pay_due:
            return "payouts"
        if self.shuffle_due and self.awaiting.kind == "round":
            return "shoe"
        if self.notice:
            return "notice"
        return None

    def opening_refused(self, body: Mapping[str, Any]) -> str | None:
        """Why `body` would not open a round now (the engine's words), or None if it would."""
        try:
            self.game.apply(self.engine, self.setup.open_event(body))
        except (TableError, RuleError) as exc:
            return str(exc)
        return None

    def ended_by(self, seq: int) -> bool:
        """Whether entry `seq` (the last one applied) ended the round being dealt: a snapshot is due."""
        return self.round_no is not None and self.rounds.ended_at(self.round_no) == seq

    # -- the reducer --------------------------------------------------------------------------------

    def apply(self, entry: TableEntry) -> tuple[TableState, tuple[Effect, ...]]:
        """The state after `entry`, and the engine's effects. Deterministic: replaying the journal
        from a snapshot (or the first entry) rebuilds the state."""
        self._ending = False
        effects: tuple[Effect, ...] = ()
        match entry:
            case RoundOpened():
                assert entry.round is not None
                self.round_no = entry.round
                self.rounds.add(RoundRecord(entry.round, entry.at))
                self.notice = None
                effects = self._engine(entry.event)
                self._follow_shuffles(effects)
                self._take_notice(effects)
            case CardRead():
                self.last_card = str(entry.card)
                self._note_shoe_link(entry.source)
                if self.latch.blocked:
                    self.latch.hold(entry.seq, entry.card)
                else:
                    effects = self._deal(entry, entry.card)
            case Decided():
                effects = self._engine(entry.event)
                self._take_notice(effects)
            case FaultRaised():
                self._latch(entry, entry.code, entry.message, entry.card)
                self._note_shoe_link(entry.source)
            case FaultAcknowledged():
                self.latch.acknowledge(entry.fault, entry.by)
            case FaultCleared():
                effects = self._clear(entry)
            case Voided():
                effects = self._void(entry.by, entry.reason)
            case ConfirmPressed():
                self._note_shoe_link(entry.source)
                self._confirmed()
            case ButtonPressed():
                self._note_shoe_link(entry.source)
            case PayOverride():
                record = self.rounds.get(entry.round)
                if record is not None and record.pay_due:
                    record.override = {"by": entry.by, "reason": entry.reason, "at": entry.at}
                    self.meters.unpaid += 1
            case NewShoe():
                self.shoe.reshuffle()
                self.shuffle_due = None
            case ShoeSignal():
                self.shuffle_due = entry.event
                self._note_shoe_link(entry.source)
            case JournalRestored():
                self.meters.faults[entry.code] += 1
            case SoftwareChecked():
                effects = self._software_checked(entry)
            case SceneChanged():
                raised = self.camera.seen(self, entry)
                if raised is not None:
                    self._latch(entry, raised[0], raised[1], None)
        if not isinstance(entry, SceneChanged):
            raised = self.camera.follow(self, entry, effects)
            if raised is not None:
                self._latch(entry, raised[0], raised[1], None)
        if self._ending and self.round_no is not None:
            self._ending = False
            self.rounds.ended(self.round_no, entry.seq)
        return self, effects

    def _confirmed(self) -> None:
        """The dealer's confirm: the notice is read; then the seats are paid, or else (between
        rounds, after the cut card) the new shoe is loaded."""
        record = self.current
        self.notice = None  # the dealer has read it (a dead card set aside, a puck removed)
        if record is not None and record.pay_due:
            record.paid = True
        elif self.shuffle_due and self.awaiting.kind == "round":
            self.shoe.reshuffle()  # the dealer confirms the new shoe is loaded
            self.shuffle_due = None

    def _note_shoe_link(self, source: Mapping[str, Any]) -> None:
        # The last shoe message journaled: a restarted reader resumes after it, so the shoe's
        # repeat of it is recognised and not used twice.
        if "session" in source and "seq" in source:
            # "frame" (the message's TYPE and PAYLOAD, hex) tells a resend from a reused SEQ.
            self.shoe_link = {k: source[k] for k in ("session", "seq", "frame") if k in source}

    def _deal(self, entry: TableEntry, card: Card, *, confirmed: bool = False) -> tuple[Effect, ...]:
        self.last_card = str(card)  # a held card dealt now, or the supervisor's replacement
        if not confirmed:
            try:
                self.shoe.check(card)
            except CardError as exc:
                # A card the shoe cannot hold at all cannot be confirmed: it would not be dealt either.
                can = "confirm, replace or void" if self.shoe.composition.count(card) else "replace or void"
                self._latch(entry, "impossible-card", f"{exc}. Stop dealing; a supervisor must {can}.", str(card))
                return ()
        try:
            effects = self._engine(CardDealt(card))
        except RuleError as exc:
            self._latch(entry, "rejected-card", f"{card}: {exc}. A supervisor must replace or void.", str(card))
            return ()
        if confirmed:
            # The supervisor has the card in hand: the count follows it as far as the shoe allows.
            with contextlib.suppress(CardError):
                self.shoe.take(card)
        else:
            self.shoe.take(card)
        self._follow_shuffles(effects)  # after the take: the card that caused it was the old deck's
        dead = [e for e in effects if isinstance(e, CardDead)]
        if dead:
            self.meters.dead_cards += len(dead)
        elif self.round_no is not None:
            self.rounds[self.round_no].cards.append(str(card))
            self.notice = None  # the dealer has moved on
        self._take_notice(effects)
        return effects

    def _follow_shuffles(self, effects: tuple[Effect, ...]) -> None:
        if any(isinstance(fx, ShoeReshuffled) for fx in effects):
            self.shoe.reshuffle()  # a game that deals each hand from a fresh deck (Baseball poker)

    def _take_notice(self, effects: tuple[Effect, ...]) -> None:
        for fx in effects:
            words = fx.notice()
            if words:
                self.notice = words

    def _engine(self, event: Event) -> tuple[Effect, ...]:
        before = self.awaiting.kind
        self.engine, effects = self.game.apply(self.engine, event)
        if before != "round" and self.awaiting.kind == "round" and self.round_no is not None:
            self._finish_round()
        return effects

    def _finish_round(self) -> None:
        assert self.round_no is not None
        record = self.rounds[self.round_no]
        if record.status != "open":
            return
        self._ending = True
        settlement = self.game.settlement(self.engine)
        record.settlement = settlement
        record.status = "void" if "void" in settlement else "settled"
        if record.status == "void":
            # A void round settles nothing (every wager went back), so it has no round file to
            # replay; recall shows who voided it and why.
            self.meters.voids += 1
            return
        record.round_file = self.game.round_file(self.engine)
        self.meters.settled(self.game, settlement)

    def _latch(self, entry: TableEntry, code: str, message: str, card: str | None) -> None:
        self.latch.latch(entry.seq, entry.at, entry.round, code, message, card, self.shoe.composition)
        self.meters.faults[code] += 1

    def _clear(self, entry: FaultCleared) -> tuple[Effect, ...]:
        fault = self.latch.take(entry.fault)
        effects: list[Effect] = []
        if entry.action == "void":
            self.latch.drop_all()
            return self._void(entry.by, entry.reason)
        if entry.action == "confirm" and fault.card is not None and fault.code in CARD_FAULTS:
            effects.extend(self._deal(entry, parse_card(fault.card), confirmed=True))
        elif entry.action == "replace" and entry.card is not None:
            # A card fault's replacement, or a misread's card the dealer entered by hand.
            effects.extend(self._deal(entry, entry.card))
        # Cards that came out while play was stopped are dealt now, in the order they came.
        for seq, card in self.latch.release():
            effects.extend(self._deal(dataclasses.replace(entry, seq=seq), card))
        return tuple(effects)

    def _software_checked(self, entry: SoftwareChecked) -> tuple[Effect, ...]:
        """A failed check latches the software fault (the latest failure's words replace an earlier
        one's); a passing check ends it, and the cards held meanwhile are dealt. So does one that ran
        to its end on a simulated table run from a checkout (`ok` None: no release to check, journaled
        only there), after a check whose own process failed."""
        self.latch.take_code("software-authentication")
        if entry.ok is False and entry.unfinished:
            message = (
                f"{entry.summary}. Stop play: the software could not be checked. Ask for a check again "
                "(POST /api/verify or tablectl verify); if it does not finish either, restart the table "
                "and tell surveillance (hardware/authentication.md). A check that passes ends this fault."
            )
            self._latch(entry, "software-authentication", message, None)
            return ()
        if entry.ok is False:
            message = (
                f"{entry.summary}. Stop play: the software is not the approved release; reinstall it "
                "(hardware/authentication.md). A check that passes ends this fault."
            )
            self._latch(entry, "software-authentication", message, None)
            return ()
        effects: list[Effect] = []
        for seq, card in self.latch.release():
            effects.extend(self._deal(dataclasses.replace(entry, seq=seq), card))
        return tuple(effects)

    def _void(self, by: str, reason: str) -> tuple[Effect, ...]:
        if self.awaiting.kind == "round":
            return ()
        return self._engine(VoidRound(by=by, reason=reason))

