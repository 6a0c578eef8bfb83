"""Grand Slam: the baseball banking game of GAMES.md section 1, as a pure state machine.

Each seat bets first base, first and second, or all three bases. Every card dealt to a base moves
the whole stack standing there (2: two bases, 3: home, 4 at first: GRAND SLAM, 5-9: one base,
T-A: out); wagers that reach home plate are paid even money. Two side bets ride on the seat's three
cards: 3 OUT INSURANCE (15 to 1 on three out cards) and POKER BONUS (a three-card poker paytable).

    state = GAME.initial()
    state, fx = GAME.apply(state, OpenRound(rules=GrandSlamRules(), seats=(SeatBet(1, {"first": 10}),)))
    state, fx = GAME.apply(state, CardDealt(parse_card("5H")))   # seat 1's stack goes to second
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from controller.engine.base import (
    JSON,
    Awaiting,
    Effect,
    Event,
    Phase,
    RoundInput,
    RuleError,
    Void,
    effect,
    event,
    evolve,
    from_json,
    rule_options,
    seat_refused,
)
from controller.engine.cards import Card, CardError, Rank, ShoeComposition
from controller.games.round_game import RoundGame, Seating, changed_rules

from .bonus import evaluate_three

Base = Literal["first", "second", "third"]
Position = Literal["first", "second", "third", "home", "out"]
SideBet = Literal["three_outs", "poker_bonus"]
Dealing = Literal["base-major", "seat-major"]

BASES: tuple[Base, ...] = get_args(Base)
SIDE_BETS: tuple[SideBet, ...] = get_args(SideBet)
#: A Grand Slam table seats seven (its table card); a table's config may seat fewer (`table.seats`).
SEATS_MAX = 7
SEATS = range(1, SEATS_MAX + 1)

THREE_OUTS_ODDS = 15
#: The default POKER BONUS paytable of GAMES.md (to one), until the operator's approved one replaces it.
DEFAULT_POKER_BONUS = {
    "suited three of a kind": 75,
    "straight flush": 30,
    "three of a kind": 20,
    "straight": 4,
    "flush": 3,
    "pair": 1,
}
POKER_BONUS_HANDS = (*DEFAULT_POKER_BONUS, "high card")

# Where a card sends the stack on each base (GAMES.md card-effect table); "slam" is GRAND SLAM.
_OUT_RANKS = frozenset({Rank.TEN, Rank.JACK, Rank.QUEEN, Rank.KING, Rank.ACE})
_MOVES: dict[Base, dict[int, str]] = {
    "first": {2: "third", 3: "home", 4: "slam"},
    "second": {2: "home", 3: "home", 4: "third"},
    "third": {2: "home", 3: "home", 4: "home"},
}
_ONE_BASE_ON: dict[Base, Position] = {"first": "second", "second": "third", "third": "home"}


def destination(base: Base, card: Card) -> str:
    """Where `card` sends the stack on `base`: a position, or "slam" for a GRAND SLAM."""
    if card.rank is None:
        raise CardError(f"{card} has no place in Grand Slam: its shoe holds no jokers")
    if card.rank in _OUT_RANKS:
        return "out"
    return _MOVES[base].get(int(card.rank), _ONE_BASE_ON[base])


def is_out_card(card: Card) -> bool:
    return card.rank in _OUT_RANKS


# --- rules and inputs ------------------------------------------------------------------------


@dataclass(frozen=True)
class GrandSlamRules:
    """The table's rule options (GAMES.md section 1 defaults); a round file may override any."""

    decks: int = 6
    min_wager: int = 1
    max_wager: int = 10000
    min_side_bet: int = 1
    max_side_bet: int = 1000
    dealing: Dealing = "base-major"
    poker_bonus_paytable: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_POKER_BONUS))

    def validate(self, where: str = "rules") -> None:
        """Raise RuleError naming the option if any option is out of its range."""
        for name in ("decks", "min_wager", "max_wager", "min_side_bet", "max_side_bet"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RuleError(f"must be a whole number of 1 or more, not {value!r}", field=f"{where}.{name}")
        if self.min_wager > self.max_wager:
            raise RuleError("the table minimum is above its maximum", field=f"{where}.min_wager")
        if self.min_side_bet > self.max_side_bet:
            raise RuleError("the side-bet minimum is above its maximum", field=f"{where}.min_side_bet")
        if self.dealing not in get_args(Dealing):
            raise RuleError(f"must be one of {list(get_args(Dealing))}", field=f"{where}.dealing")
        for hand, odds in self.poker_bonus_paytable.items():
            if hand not in DEFAULT_POKER_BONUS:
                raise RuleError(
                    f"{hand!r} is not a three-card hand; use {list(DEFAULT_POKER_BONUS)}",
                    field=f"{where}.poker_bonus_paytable",
                )
            if isinstance(odds, bool) or not isinstance(odds, int) or odds < 1:
                raise RuleError(
                    f"pays a whole number to 1 (1 or more), not {odds!r}",
                    field=f"{where}.poker_bonus_paytable.{hand}",
                )

    @property
    def shoe(self) -> ShoeComposition:
        return ShoeComposition(decks=self.decks, jokers_per_deck=0)


@dataclass(frozen=True)
class SeatBet:
    """One seat's money at the start of a round: base wagers and side bets, in chip units."""

    seat: int
    wagers: Mapping[Base, int]
    side_bets: Mapping[SideBet, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.wagers.values()) + sum(self.side_bets.values())


@event("grand-slam.open")
@dataclass(frozen=True)
class OpenRound(Event):
    """The dealer locks the wagers and the round begins (blind_seat: where the blind puck is)."""

    rules: GrandSlamRules
    seats: tuple[SeatBet, ...]
    blind_seat: int | None = None
    #: The seats of the table (its config's `table.seats`); a round file has none (REPLAY.md): seven.
    table_seats: int = SEATS_MAX


# --- effects ---------------------------------------------------------------------------------


@effect("grand-slam.round-opened")
@dataclass(frozen=True)
class RoundOpened(Effect):
    seats: tuple[int, ...]
    blind_seat: int | None
    wagered: int


@effect("grand-slam.blind-off")
@dataclass(frozen=True)
class BlindSwitchedOff(Effect):
    """Prompt: remove the blind puck, because more than one player has a wager."""

    seat: int
    players: tuple[int, ...]

    def notice(self) -> str | None:
        return f"Remove the blind puck from seat {self.seat}: a second player has joined"


@effect("grand-slam.next-card")
@dataclass(frozen=True)
class NextCard(Effect):
    """The next card from the shoe goes to this seat's base (face down when `blind`)."""

    seat: int
    base: Base
    blind: bool = False


@effect("grand-slam.card-placed")
@dataclass(frozen=True)
class CardPlaced(Effect):
    seat: int
    base: Base
    card: Card
    blind: bool = False


@effect("grand-slam.stack-moved")
@dataclass(frozen=True)
class StackMoved(Effect):
    """The stack on `from_base` (the wagers first bet on `wagers`, `amount` in all) moved to `to`."""

    seat: int
    from_base: Base
    to: Position
    wagers: tuple[Base, ...]
    amount: int


@effect("grand-slam.grand-slam")
@dataclass(frozen=True)
class GrandSlamScored(Effect):
    """A 4 at first base: every wager of the seat scores at once; the seat takes no more cards."""

    seat: int
    wagers: tuple[Base, ...]
    amount: int


@effect("grand-slam.seat-settled")
@dataclass(frozen=True)
class SeatSettled(Effect):
    """What the dealer does at this seat: pay `pay`, take `collect`; `net` = pay - collect."""

    seat: int
    pay: int
    collect: int
    net: int


@effect("grand-slam.round-settled")
@dataclass(frozen=True)
class RoundSettled(Effect):
    cards_used: int
    wagered: int
    paid: int
    collected: int


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatState:
    """A seat during the round: where each of its wagers stands, and the cards it was dealt."""

    bet: SeatBet
    stacks: Mapping[Position, tuple[Base, ...]]  # position -> wagers there (named by first base), bottom first
    cards: tuple[Card, ...] = ()
    dealt_at: tuple[Base, ...] = ()  # the base each card was dealt to
    grand_slam: bool = False

    @property
    def seat(self) -> int:
        return self.bet.seat

    def standing(self, base: Base) -> tuple[Base, ...]:
        return self.stacks.get(base, ())

    def amount(self, wagers: tuple[Base, ...]) -> int:
        return sum(self.bet.wagers[w] for w in wagers)

    def position_of(self, wager: Base) -> Position:
        return next(p for p, ws in self.stacks.items() if wager in ws)


@dataclass(frozen=True)
class BlindState:
    seat: int
    player: int
    cards: tuple[Card, ...] = ()


@dataclass(frozen=True)
class GrandSlamState:
    """The table's Grand Slam state: the round in play (or the last one) and its dealing cursor."""

    phase: Phase = "idle"
    rules: GrandSlamRules = field(default_factory=GrandSlamRules)
    seats: tuple[SeatState, ...] = ()
    blind_seat: int | None = None  # where the blind puck was asked for (kept for the round file)
    blind: BlindState | None = None  # the blind hand actually dealt
    cursor: int = 0  # the next step of the dealing schedule to consider
    dealt: tuple[Card, ...] = ()  # every card of the round in shoe order
    dead_cards: tuple[Card, ...] = ()
    void: Void | None = None

    def seat(self, number: int) -> SeatState:
        return next(s for s in self.seats if s.seat == number)


# --- the dealing schedule --------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    seat: int
    base: Base
    blind: bool


def _schedule(state: GrandSlamState) -> tuple[Step, ...]:
    """Every place a card may go this round, in dealing order; `_live` says whether it does."""
    blind = state.blind
    return _schedule_of(
        tuple(sorted(s.seat for s in state.seats)),
        state.rules.dealing,
        None if blind is None else (blind.seat, blind.player),
    )


@functools.lru_cache(maxsize=64)
def _schedule_of(seats: tuple[int, ...], dealing: str, blind: tuple[int, int] | None) -> tuple[Step, ...]:
    """`_schedule` of a round's seats, dealing order and blind hand: made once for them, not again
    for every card of the round (its steps are immutable, shared)."""
    if dealing == "base-major":
        steps = [Step(seat, base, False) for base in BASES for seat in seats]
    else:
        steps = [Step(seat, base, False) for seat in seats for base in BASES]
    if blind is None:
        return tuple(steps)
    # The blind hand takes a card each time the solo player takes one, in seat order.
    before = blind[0] < blind[1]
    out: list[Step] = []
    for step in steps:
        pair = [Step(blind[0], step.base, True), step]
        out.extend(pair if before else reversed(pair))
    return tuple(out)


def _live(state: GrandSlamState, step: Step) -> bool:
    if not step.blind:
        seat = state.seat(step.seat)
        return not seat.grand_slam and bool(seat.standing(step.base))
    assert state.blind is not None
    player = state.seat(state.blind.player)
    if step.seat < player.seat:  # decided before the player's card: the same test the player's step makes
        return not player.grand_slam and bool(player.standing(step.base))
    return step.base in player.dealt_at


def _next_step(state: GrandSlamState) -> tuple[int, Step] | None:
    # A card asks this of the same state up to three times (the state after it, for where the
    # next card goes; what the table awaits; the next card's deal): the state is immutable, so
    # the answer for the last state asked is kept (one global, swapped whole: any thread safe).
    global _LAST_NEXT
    last = _LAST_NEXT
    if last[0] is state:
        return last[1]
    found = _first_live_step(state)
    _LAST_NEXT = (state, found)
    return found


_LAST_NEXT: tuple[GrandSlamState | None, tuple[int, Step] | None] = (None, None)


def _first_live_step(state: GrandSlamState) -> tuple[int, Step] | None:
    schedule = _schedule(state)
    for index in range(state.cursor, len(schedule)):
        if _live(state, schedule[index]):
            return index, schedule[index]
    return None


# --- the game --------------------------------------------------------------------------------


class GrandSlam(RoundGame[GrandSlamState, OpenRound, Event]):
    """The Grand Slam rules as a pure state machine (see controller/engine/README.md); what every
    game's rules share is `RoundGame`'s (controller/games/round_game.py)."""

    name = "grand-slam"
    title = "Grand Slam"
    state_type = GrandSlamState
    open_type = OpenRound
    rules_type = GrandSlamRules

    def open_shoe(self, open_event: OpenRound) -> ShoeComposition:
        return open_event.rules.shoe

    def dealing(self, state: GrandSlamState) -> Awaiting:
        nxt = _next_step(state)
        assert nxt is not None, "a dealing round always has a next step"
        step = nxt[1]
        return Awaiting("card", target={"seat": step.seat, "base": step.base, "blind": step.blind})

    # -- opening ------------------------------------------------------------------------------

    def open_round(self, state: GrandSlamState, ev: OpenRound) -> tuple[GrandSlamState, tuple[Effect, ...]]:
        validate_open(ev)
        players = tuple(sorted(b.seat for b in ev.seats))
        effects: list[Effect] = []
        blind: BlindState | None = None
        if ev.blind_seat is not None:
            if len(players) == 1:
                blind = BlindState(seat=ev.blind_seat, player=players[0])
            else:
                effects.append(BlindSwitchedOff(seat=ev.blind_seat, players=players))
        seats = tuple(
            SeatState(bet=b, stacks={base: (base,) for base in BASES if base in b.wagers})
            for b in sorted(ev.seats, key=lambda b: b.seat)
        )
        new = GrandSlamState(
            phase="dealing",
            rules=ev.rules,
            seats=seats,
            blind_seat=ev.blind_seat,
            blind=blind,
        )
        effects.insert(
            0,
            RoundOpened(
                seats=players,
                blind_seat=blind.seat if blind else None,
                wagered=sum(b.total for b in ev.seats),
            ),
        )
        return self._advance(new, effects)

    # -- dealing ------------------------------------------------------------------------------

    def deal(self, state: GrandSlamState, card: Card) -> tuple[GrandSlamState, tuple[Effect, ...]]:
        if card.is_joker:
            raise RuleError(f"{card} has no place in Grand Slam: its shoe holds no jokers", field="card")
        nxt = _next_step(state)
        assert nxt is not None
        index, step = nxt
        effects: list[Effect] = [CardPlaced(seat=step.seat, base=step.base, card=card, blind=step.blind)]
        state = evolve(state, cursor=index + 1, dealt=(*state.dealt, card))
        if step.blind:
            assert state.blind is not None
            state = evolve(state, blind=evolve(state.blind, cards=(*state.blind.cards, card)))
            return self._advance(state, effects)
        seat = state.seat(step.seat)
        seat = evolve(seat, cards=(*seat.cards, card), dealt_at=(*seat.dealt_at, step.base))
        to = destination(step.base, card)
        if to == "slam":
            standing = tuple(w for base in BASES for w in seat.standing(base))
            seat = evolve(
                seat,
                grand_slam=True,
                stacks={"home": (*seat.stacks.get("home", ()), *standing)},
            )
            effects.append(GrandSlamScored(seat=seat.seat, wagers=standing, amount=seat.amount(standing)))
        else:
            moving = seat.standing(step.base)
            stacks = dict(seat.stacks)
            del stacks[step.base]
            target = cast(Position, to)
            stacks[target] = (*stacks.get(target, ()), *moving)
            seat = evolve(seat, stacks=stacks)
            effects.append(
                StackMoved(seat=seat.seat, from_base=step.base, to=target, wagers=moving, amount=seat.amount(moving))
            )
        state = evolve(state, seats=tuple(seat if s.seat == seat.seat else s for s in state.seats))
        return self._advance(state, effects)

    def _advance(self, state: GrandSlamState, effects: list[Effect]) -> tuple[GrandSlamState, tuple[Effect, ...]]:
        """Say where the next card goes, or settle the round when no seat is owed one."""
        nxt = _next_step(state)
        if nxt is not None:
            step = nxt[1]
            effects.append(NextCard(seat=step.seat, base=step.base, blind=step.blind))
            return state, tuple(effects)
        state = evolve(state, phase="settled")
        paid = collected = 0
        for seat in state.seats:
            result = settle_seat(state.rules, seat)
            pay = sum(w["paid"] for w in result["wagers"].values()) + sum(
                s["paid"] for s in result["side_bets"].values()
            )
            collect = pay - result["net"]
            paid += pay
            collected += collect
            effects.append(SeatSettled(seat=seat.seat, pay=pay, collect=collect, net=result["net"]))
        effects.append(
            RoundSettled(
                cards_used=len(state.dealt),
                wagered=sum(s.bet.total for s in state.seats),
                paid=paid,
                collected=collected,
            )
        )
        return state, tuple(effects)

    # -- voiding ------------------------------------------------------------------------------

    def returned(self, state: GrandSlamState) -> dict[int, int]:
        return {s.seat: s.bet.total for s in state.seats}

    # -- settlement and round files -----------------------------------------------------------

    def settled(self, state: GrandSlamState) -> dict[str, JSON]:
        seats = [settle_seat(state.rules, s, void=state.phase == "void") for s in state.seats]
        return {
            "seats": seats,
            "blind": (
                {"seat": state.blind.seat, "cards": [str(c) for c in state.blind.cards]} if state.blind else None
            ),
            "cards_used": len(state.dealt),
        }

    def payouts(self, settlement: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Per seat of a settlement: what the dealer pays, takes, and the net."""
        out = []
        for seat in settlement.get("seats", []):
            bets = [*seat["wagers"].values(), *seat["side_bets"].values()]
            pay = sum(b["paid"] for b in bets)
            out.append({"seat": seat["seat"], "pay": pay, "collect": pay - seat["net"], "net": seat["net"]})
        return out

    def bets(self, settlement: Mapping[str, Any]) -> list[tuple[str, int, int]]:
        """(bet type, amount wagered, amount paid) for every bet of a settlement, for the meters."""
        return [
            (name, bet["amount"], bet["paid"])
            for seat in settlement.get("seats", [])
            for name, bet in [*seat["wagers"].items(), *seat["side_bets"].items()]
        ]

    def round_file(self, state: GrandSlamState) -> dict[str, JSON]:
        """The round as a REPLAY.md round file: replaying it gives this round's settlement."""
        return {
            "game": self.name,
            "rules": changed_rules(state.rules),
            "seats": [
                {
                    "seat": s.seat,
                    "wagers": dict(s.bet.wagers),
                    **({"side_bets": dict(s.bet.side_bets)} if s.bet.side_bets else {}),
                }
                for s in state.seats
            ],
            "blind_seat": state.blind_seat,
            "cards": [str(c) for c in state.dealt],
        }

    def shoe_for_rules(self, doc: Mapping[str, Any]) -> ShoeComposition:
        return parse_rules(doc).shoe

    def parse_decision(self, doc: Mapping[str, Any], where: str) -> Event:
        raise RuleError("Grand Slam has no player decisions: the cards decide everything", field=where)

    def parse_round_file(self, doc: Mapping[str, Any], *, seats: int | None = None) -> RoundInput:
        """Read a round file into its opening event and its cards; RuleError names what is wrong.
        `seats`: the table's seat count (None: seven, as a round file says none). The round
        file is read without pydantic when it is plainly right (`plain.py`), else by its model (`api.py`)."""
        from controller.games.grand_slam.plain import round_input

        return round_input(doc, SEATS_MAX if seats is None else seats)


GAME = GrandSlam()


# --- validation ------------------------------------------------------------------------------


def validate_open(ev: OpenRound) -> None:
    """Raise RuleError (field, seat, rule) for any wager the table must refuse."""
    rules = ev.rules
    rules.validate()
    seating = Seating(ev.table_seats, SEATS_MAX, "Grand Slam")
    if not ev.seats:
        raise RuleError("a round needs at least one seat with a wager", field="seats")
    for i, bet in enumerate(ev.seats):
        where = f"seats[{i}]"
        seating.take(bet.seat, where)
        _validate_bet(rules, bet, where)
    if ev.blind_seat is not None:
        _validate_blind(ev, seating.seen, seating.table)


def _validate_bet(rules: GrandSlamRules, bet: SeatBet, where: str) -> None:
    seat = bet.seat
    for base, amount in bet.wagers.items():
        if base not in BASES:
            raise RuleError(f"{base!r} is not a base; bet first, second or third", field=f"{where}.wagers", seat=seat)
        _check_amount(amount, rules.min_wager, rules.max_wager, f"{where}.wagers.{base}", seat, f"the wager on {base}")
    if "first" not in bet.wagers:
        raise RuleError("every seat bets first base", field=f"{where}.wagers.first", seat=seat)
    for base, needs in _NEEDS:
        if base in bet.wagers:
            if needs not in bet.wagers:
                raise RuleError(
                    f"a wager on {base} base needs a wager on {needs} base", field=f"{where}.wagers.{base}", seat=seat
                )
            if bet.wagers[base] > bet.wagers[needs]:
                raise RuleError(
                    f"the wager on {base} ({bet.wagers[base]}) may not exceed the wager on {needs} "
                    f"({bet.wagers[needs]})",
                    field=f"{where}.wagers.{base}",
                    seat=seat,
                )
    for name, amount in bet.side_bets.items():
        if name not in SIDE_BETS:
            raise RuleError(
                f"{name!r} is not a side bet; use three_outs or poker_bonus", field=f"{where}.side_bets", seat=seat
            )
        _check_amount(amount, rules.min_side_bet, rules.max_side_bet, f"{where}.side_bets.{name}", seat, "the side bet")
        if len(bet.wagers) != 3:
            raise RuleError(
                "side bets may be placed only by a seat that bets all three bases",
                field=f"{where}.side_bets.{name}",
                seat=seat,
            )


_NEEDS: tuple[tuple[Base, Base], ...] = (("second", "first"), ("third", "second"))


def _check_amount(amount: object, low: int, high: int, fieldname: str, seat: int, what: str) -> None:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise RuleError(f"{what} must be a whole number of chips, not {amount!r}", field=fieldname, seat=seat)
    if not low <= amount <= high:
        raise RuleError(f"{what} ({amount}) must be between {low} and {high}", field=fieldname, seat=seat)


def _validate_blind(ev: OpenRound, players: set[int], table: range) -> None:
    blind = ev.blind_seat
    if isinstance(blind, bool) or not isinstance(blind, int) or blind not in table:
        raise RuleError(seat_refused(blind, table, SEATS_MAX, "Grand Slam"), field="blind_seat")
    if blind in players:
        raise RuleError(
            "the blind hand goes on an empty seat, not on a seat with a wager", field="blind_seat", seat=blind
        )
    if len(players) == 1:
        (player,) = players
        if abs(blind - player) != 1:
            raise RuleError(
                f"the blind puck goes on the seat beside the solo player's (seat {player})",
                field="blind_seat",
                seat=blind,
            )


def parse_rules(doc: object, where: str = "rules") -> GrandSlamRules:
    """Rule options from a round file or config; unknown keys and bad values are refused."""
    kwargs = rule_options(doc, GrandSlamRules, where)
    if "poker_bonus_paytable" in kwargs:
        table = kwargs["poker_bonus_paytable"]
        if not isinstance(table, Mapping):
            raise RuleError("must be an object of hand: odds", field=f"{where}.poker_bonus_paytable")
        kwargs["poker_bonus_paytable"] = dict(table)
    rules = GrandSlamRules(**kwargs)
    rules.validate(where)
    return rules


# --- settlement ------------------------------------------------------------------------------


def settle_seat(rules: GrandSlamRules, seat: SeatState, *, void: bool = False) -> dict[str, JSON]:
    """One seat's settlement (REPLAY.md): each wager home or out, each side bet, and the net."""
    net = 0
    wagers: dict[str, JSON] = {}
    for base, amount in seat.bet.wagers.items():
        if void:
            wagers[base] = {"amount": amount, "result": "void", "paid": 0}
            continue
        result = seat.position_of(base)
        if result not in ("home", "out"):
            raise AssertionError(f"seat {seat.seat}: the wager first on {base} still stands on {result}")
        paid = amount if result == "home" else 0
        net += paid if result == "home" else -amount
        wagers[base] = {"amount": amount, "result": result, "paid": paid}
    side: dict[str, JSON] = {}
    for name, amount in seat.bet.side_bets.items():
        entry = _settle_side_bet(rules, seat, name, amount, void)
        net += entry["paid"] if entry["result"] == "won" else -amount if entry["result"] == "lost" else 0
        side[name] = entry
    return {
        "seat": seat.seat,
        "cards": [str(c) for c in seat.cards],
        "grand_slam": seat.grand_slam,
        "wagers": wagers,
        "side_bets": side,
        "net": net,
    }


def _settle_side_bet(rules: GrandSlamRules, seat: SeatState, name: str, amount: int, void: bool) -> dict[str, Any]:
    if void:
        return {"amount": amount, "result": "void", "paid": 0}
    if seat.grand_slam:
        return {"amount": amount, "result": "push", "paid": 0}
    if name == "three_outs":
        won = len(seat.cards) == 3 and all(is_out_card(c) for c in seat.cards)
        return {"amount": amount, "result": "won" if won else "lost", "paid": amount * THREE_OUTS_ODDS if won else 0}
    hand = evaluate_three(seat.cards).category
    odds = rules.poker_bonus_paytable.get(hand, 0)
    return {
        "amount": amount,
        "result": "won" if odds else "lost",
        "paid": amount * odds,
        "hand": hand,
    }


def state_from_json(data: JSON) -> GrandSlamState:
    return from_json(GrandSlamState, data)
