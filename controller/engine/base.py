"""The engine interface every game implements, and the JSON form of its records.

A game is a pure state machine::

    state, effects = game.apply(state, event)

`state`, every event and every effect are frozen dataclasses. `to_json` turns any of them into
plain JSON values and `from_json` turns those back into the same object, so the journal can store
events, recovery can rebuild state, and tests can compare records as values. The engine never
reads a clock, a device, a file or a random source: same events in, same state and effects out.

Events and effects carry a `kind` (the record's name in the JSON, such as ``"card"``), registered
with `@event` and `@effect`; `event_from_json` and `effect_from_json` read any of them back.

Refusals are `RuleError`: they name the field, the seat (or spot) and the rule, in one line.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from controller.engine.cards import Card, CardError, ShoeComposition, parse_card

JSON = Any  # the values json.loads gives: dict, list, str, int, bool, None


class RuleError(ValueError):
    """An input the rules refuse. `str()` is one line: the field, the seat and the rule."""

    def __init__(self, rule: str, *, field: str = "", seat: int | None = None, place: str = "seat") -> None:
        self.rule = rule
        self.field = field
        self.seat = seat  # the seat, or the spot when `place` is "spot"
        self.place = place
        parts = [p for p in (field, f"{place} {seat}" if seat is not None else "") if p]
        super().__init__(": ".join([*parts, rule]))


@dataclasses.dataclass(frozen=True)
class Record:
    """Base of events and effects: a frozen dataclass with a registered `kind`."""

    kind: ClassVar[str] = ""


@dataclasses.dataclass(frozen=True)
class Event(Record):
    """Something that happened at the table (a card came out, a wager was opened, a decision)."""


@dataclasses.dataclass(frozen=True)
class Effect(Record):
    """What the engine says must happen because of an event: a prompt, a move, a payout."""

    def notice(self) -> str | None:
        """Words the dealer must read before going on (a puck to remove, a dead card), if any."""
        return None


_EVENTS: dict[str, type[Event]] = {}
_EFFECTS: dict[str, type[Effect]] = {}

E = TypeVar("E", bound=type[Event])
F = TypeVar("F", bound=type[Effect])


def event(kind: str) -> Callable[[E], E]:
    """Register an event class under `kind` (unique across all games)."""

    def register(cls: E) -> E:
        if kind in _EVENTS:
            raise TypeError(f"event kind {kind!r} is registered twice")
        cls.kind = kind
        _EVENTS[kind] = cls
        return cls

    return register


def effect(kind: str) -> Callable[[F], F]:
    """Register an effect class under `kind` (unique across all games)."""

    def register(cls: F) -> F:
        if kind in _EFFECTS:
            raise TypeError(f"effect kind {kind!r} is registered twice")
        cls.kind = kind
        _EFFECTS[kind] = cls
        return cls

    return register


# --- states made anew -------------------------------------------------------------------------

D = TypeVar("D")


def evolve(state: D, **changes: Any) -> D:
    """`dataclasses.replace(state, **changes)` for a frozen dataclass whose fields are all set by
    its `__init__` and that has no `__post_init__` and no `__slots__` (the games' states): the same
    new object, its other fields the very objects `state` holds, made by copying `state`'s fields
    instead of calling `__init__` with every one of them (about a quarter of the time; a card's
    deal makes four or five). A name that is not a field is a TypeError, as `replace` says."""
    kind = type(state)
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = _plain_fields(kind)
    if not names.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - names))
        raise TypeError(f"{kind.__name__} has no field {unknown}")
    held = state.__dict__
    if len(held) != len(names):
        # something beside the fields lives in the instance (a value cached on it): a copy would
        # carry it to a state it was not worked out for, so the new state is made as replace does
        return dataclasses.replace(state, **changes)  # type: ignore[type-var]
    new = object.__new__(kind)
    fields = new.__dict__
    fields.update(held)
    fields.update(changes)
    return new


#: Each evolved type's field names, checked once (evolve's conditions).
_FIELDS: dict[type, frozenset[str]] = {}


def _plain_fields(kind: type) -> frozenset[str]:
    params = getattr(kind, "__dataclass_params__", None)
    fields = dataclasses.fields(kind) if params is not None else ()
    if (
        params is None
        or not params.frozen
        or "__slots__" in kind.__dict__
        or hasattr(kind, "__post_init__")
        or not all(f.init for f in fields)
    ):
        raise TypeError(
            f"evolve takes a frozen dataclass without __slots__, __post_init__ or init=False fields: {kind.__name__}"
        )
    return frozenset(f.name for f in fields)


# --- JSON ------------------------------------------------------------------------------------


def to_json(value: Any) -> JSON:
    """Plain JSON values for a record, a state, a card or a container of them."""
    convert = _TO_JSON.get(type(value))
    if convert is None:
        convert = _TO_JSON[type(value)] = _converter(type(value))
    return convert(value)


#: How each type's values become JSON, decided once per type (the snapshot of a state sent to the
#: screens after every entry converts thousands of values: asking `isinstance` and `dataclasses`
#: about each one cost most of a card's CPU).
_TO_JSON: dict[type, Callable[[Any], JSON]] = {}


def _converter(tp: type) -> Callable[[Any], JSON]:
    """The conversion of `tp`'s values, in the order `to_json` has always asked: a card, a record,
    a dataclass, an enum, a mapping, a sequence, a plain value."""
    if issubclass(tp, Card):
        return str
    if dataclasses.is_dataclass(tp) and not issubclass(tp, type):
        names = tuple(f.name for f in dataclasses.fields(tp))
        if issubclass(tp, Record):
            return lambda value: {"kind": value.kind, **{n: to_json(getattr(value, n)) for n in names}}
        return lambda value: {n: to_json(getattr(value, n)) for n in names}
    if issubclass(tp, enum.Enum):
        return _enum_value
    if issubclass(tp, Mapping):
        return lambda value: {str(k): to_json(v) for k, v in value.items()}
    if issubclass(tp, tuple | list):
        return lambda value: [to_json(v) for v in value]
    if tp is type(None) or issubclass(tp, bool | int | str):
        return _same
    return _no_json


def _enum_value(value: enum.Enum) -> JSON:
    return value.value


def _same(value: JSON) -> JSON:
    return value


def _no_json(value: Any) -> JSON:
    raise TypeError(f"{type(value).__name__} has no JSON form in the engine")


class SharedJson:
    """`to_json` of one value after another (the table's state after each entry), the JSON of every
    part that is the same object as in the value before reused, not made again.

    The engine's state is immutable (frozen dataclasses, tuples, cards): an entry makes a new
    state that keeps, as the same objects, every part it did not change (the seats no card went
    to, the rules, the shoe). The JSON of a frozen dataclass or a tuple seen in the last value is
    the same JSON now, so it is handed out again, the same object: the whole state is not
    converted again for each card, and what compares the state with the last (the live feed's
    `changes`) finds the parts that did not change at once, by identity. What is handed out is
    never changed by anyone (the snapshot's documents are not). Equal, byte for byte, to
    `to_json` (tests/controller/test_shared_state_json.py)."""

    def __init__(self) -> None:
        # id -> (the object, its JSON, every part kept within it by id), of the last value's
        # immutable parts: the object is kept so its id cannot be taken by another meanwhile.
        self._last: dict[int, _Kept] = {}

    def __call__(self, value: Any) -> JSON:
        parts: list[_Kept] = []
        try:
            return self._json(value, parts)
        finally:
            # Kept for the next value: the parts of this one (each with the parts within it, made
            # once, when the part was made: no walk of the parts used again), nothing older.
            self._last = _within(parts)

    def _json(self, value: Any, parts: list[_Kept]) -> JSON:
        """`value`'s JSON; the parts kept for the next value are added to `parts` (its container's)."""
        tp = type(value)
        plan = _PLANS.get(tp)
        if plan is None:
            plan = _PLANS[tp] = _plan(tp)
        how, names = plan
        if how == _PLAIN:
            return to_json(value)
        kept = self._last.get(id(value))
        if kept is not None and kept[0] is value:
            parts.append(kept)
            return kept[1]
        own: list[_Kept] = []
        out: JSON
        if how == _RECORD:
            out = {"kind": value.kind, **{n: self._json(getattr(value, n), own) for n in names}}
        elif how == _DATACLASS:
            out = {n: self._json(getattr(value, n), own) for n in names}
        elif how == _MAPPING:  # not kept itself (a mapping may change): its immutable parts are
            return {str(k): self._json(v, parts) for k, v in value.items()}
        elif how == _LIST:
            return [self._json(v, parts) for v in value]
        else:  # a tuple
            out = [self._json(v, own) for v in value]
        made = (value, out, _within(own))
        parts.append(made)
        return out


#: A part of a value SharedJson keeps: the object, its JSON, and every part kept within it (by id).
_Kept = tuple[Any, JSON, dict[int, Any]]


def _within(parts: list[_Kept]) -> dict[int, _Kept]:
    """`parts` and every part kept within them, by id (dicts merged at C speed, no walk)."""
    out: dict[int, _Kept] = {}
    for part in parts:
        out.update(part[2])
        out[id(part[0])] = part
    return out


# How SharedJson takes a type's values: converted by `to_json` (a card, an enum, a plain value),
# or part by part, kept for the next value when the type is immutable (a frozen dataclass, a tuple).
_PLAIN, _RECORD, _DATACLASS, _MAPPING, _LIST, _TUPLE = range(6)
_PLANS: dict[type, tuple[int, tuple[str, ...]]] = {}


def _plan(tp: type) -> tuple[int, tuple[str, ...]]:
    if issubclass(tp, Card):
        return _PLAIN, ()
    if dataclasses.is_dataclass(tp) and not issubclass(tp, type):
        names = tuple(f.name for f in dataclasses.fields(tp))
        params = getattr(tp, "__dataclass_params__", None)
        if params is None or not params.frozen:
            return _PLAIN, ()  # a dataclass that may change: converted whole, every time
        return (_RECORD if issubclass(tp, Record) else _DATACLASS), names
    if issubclass(tp, enum.Enum):
        return _PLAIN, ()
    if issubclass(tp, Mapping):
        return _MAPPING, ()
    if issubclass(tp, tuple):
        return _TUPLE, ()
    if issubclass(tp, list):
        return _LIST, ()
    return _PLAIN, ()


T = TypeVar("T")


def from_json(tp: type[T], data: JSON) -> T:
    """The object of type `tp` whose `to_json` is `data`; TypeError/ValueError if it does not fit."""
    return typing.cast(T, _from_json(tp, data, "$"))


def event_from_json(data: JSON) -> Event:
    return _record_from_json(_EVENTS, data, "event")


def effect_from_json(data: JSON) -> Effect:
    return _record_from_json(_EFFECTS, data, "effect")


def _record_from_json(registry: Mapping[str, type[R]], data: JSON, what: str) -> R:
    if not isinstance(data, dict) or "kind" not in data:
        raise ValueError(f"an {what} is an object with a 'kind'")
    cls = registry.get(data["kind"])
    if cls is None:
        raise ValueError(f"unknown {what} kind {data['kind']!r}")
    return typing.cast(R, _from_json(cls, data, "$"))


R = TypeVar("R", bound=Record)


@functools.cache
def _shape(tp: type) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A dataclass's resolved field types and field names, in order (resolving the hints costs
    milliseconds a type, so it is done once per type, not once per journal entry)."""
    return typing.get_type_hints(tp), tuple(f.name for f in dataclasses.fields(tp))


def _from_json(tp: Any, data: JSON, where: str) -> Any:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _from_json(arg, data, where)
            except (TypeError, ValueError) as exc:
                errors.append(str(exc))
        raise ValueError(f"{where}: {data!r} fits none of {tp}: {'; '.join(errors)}")
    if origin is typing.Literal:
        if data not in args:
            raise ValueError(f"{where}: {data!r} is not one of {list(args)}")
        return data
    if tp is Card:
        try:
            return parse_card(data)
        except CardError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if origin is tuple:
        _expect(data, list, where)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_json(args[0], v, f"{where}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise ValueError(f"{where}: expected {len(args)} items, got {len(data)}")
        return tuple(_from_json(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, data, strict=True)))
    if origin in (dict, Mapping) or tp is dict:
        _expect(data, dict, where)
        key_tp, val_tp = args or (str, Any)
        return {_key_from_json(key_tp, k, where): _from_json(val_tp, v, f"{where}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        _expect(data, dict, where)
        hints, fields = _shape(tp)
        kwargs = {}
        extra = set(data) - set(fields) - ({"kind"} if issubclass(tp, Record) else set())
        if extra:
            raise ValueError(f"{where}: unknown key(s) {sorted(extra)} for {tp.__name__}")
        for name in fields:
            if name in data:
                kwargs[name] = _from_json(hints[name], data[name], f"{where}.{name}")
        return tp(**kwargs)
    if tp is bool:
        _expect(data, bool, where)
        return data
    if tp is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValueError(f"{where}: expected a whole number, got {data!r}")
        return data
    if tp is str:
        _expect(data, str, where)
        return data
    if tp is type(None):
        if data is not None:
            raise ValueError(f"{where}: expected null, got {data!r}")
        return None
    raise TypeError(f"{where}: no JSON reader for {tp!r}")


def _key_from_json(tp: Any, key: str, where: str) -> Any:
    if tp is int:
        try:
            return int(key)
        except ValueError:
            raise ValueError(f"{where}: key {key!r} is not a whole number") from None
    return _from_json(tp, key, where)


def _expect(data: JSON, tp: type, where: str) -> None:
    if not isinstance(data, tp):
        raise ValueError(f"{where}: expected {tp.__name__}, got {type(data).__name__} {data!r}")


# --- what every game's state shares ----------------------------------------------------------

#: Where a game's round is: none open yet, being dealt, or finished.
Phase = typing.Literal["idle", "dealing", "settled", "void"]


@dataclasses.dataclass(frozen=True)
class Void:
    """Who voided a round, and why (kept in the game's state and its settlement)."""

    by: str
    reason: str


# --- the table's seats ------------------------------------------------------------------------


def table_seats(count: object, maximum: int, title: str) -> range:
    """The seats 1..`count` of a table of the game `title`, which seats at most `maximum` (its
    table card); RuleError naming the field when `count` is not a seat count of that game."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= maximum:
        raise RuleError(f"a {title} table seats 1 to {maximum}, not {count!r}", field="table_seats")
    return range(1, count + 1)


def seat_refused(seat: object, table: range, maximum: int, title: str, place: str = "seat") -> str:
    """The rule a seat (or spot) outside `table` breaks: beyond this table's count (its config's
    `table.seats`) or beyond the game's own (a round file says no count: the game's maximum)."""
    count = len(table)
    if count < maximum:
        return f"{place}s are numbered 1 to {count}, not {seat!r} (this table seats {count}: table.seats = {count})"
    return f"{place}s are numbered 1 to {count}, not {seat!r} (a {title} table seats at most {maximum})"


# --- reading round files: what every game's parser shares ---------------------------------------


def only_keys(doc: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """Refuse a key a round file (or a part of one) does not have: unknown keys are refused, not ignored."""
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise RuleError(f"unknown key {unknown[0]!r}; allowed keys are {sorted(allowed)}", field=where)


def rule_options(doc: object, rules_type: type[Any], where: str = "rules") -> dict[str, Any]:
    """A round file's or a config's rule options as the keyword arguments of the game's rules
    dataclass `rules_type`: an object, with none of its keys unknown. The game converts and
    checks the values (its `parse_rules`)."""
    if not isinstance(doc, Mapping):
        raise RuleError("must be an object of rule options", field=where)
    only_keys(doc, {f.name for f in dataclasses.fields(rules_type)}, where)
    return dict(doc)


def parse_card_list(doc: Mapping[str, Any], key: str = "cards") -> tuple[Card, ...]:
    """A round file's list of cards in shoe order; RuleError names the position of a bad one."""
    texts = doc[key]
    if not isinstance(texts, list):
        raise RuleError("must be a list of cards", field=key)
    cards = []
    for i, text in enumerate(texts):
        try:
            cards.append(parse_card(text))
        except CardError as exc:
            raise RuleError(str(exc), field=f"{key}[{i}]") from None
    return tuple(cards)


# --- the game interface ----------------------------------------------------------------------

S = TypeVar("S")


@dataclasses.dataclass(frozen=True)
class Awaiting:
    """What the engine needs next, so the table loop and the screens ask the engine, not the rules.

    kind: "round"    no round is open; an open-round event is expected
          "card"     the next card from the shoe goes to `target` (a seat and base, a spot, ...)
          "decision" `who` must choose one of `allowed` (Jokers 22, Baseball poker)
          "nothing"  the round is settled or void
    """

    kind: typing.Literal["round", "card", "decision", "nothing"]
    target: Mapping[str, JSON] = dataclasses.field(default_factory=dict)
    who: Mapping[str, JSON] = dataclasses.field(default_factory=dict)
    allowed: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class RoundInput:
    """A round file read into engine terms: the opening event, the cards in shoe order, and the
    decisions in the order they were taken (empty for Grand Slam, which has none)."""

    open: Event
    cards: tuple[Card, ...]
    decisions: tuple[Event, ...] = ()


class Game(Protocol, Generic[S]):
    """A game's rules as a pure state machine. One module per game implements it.

    name                   the game's id in config and round files ("grand-slam")
    state_type             the state's dataclass, for `from_json(game.state_type, data)`
    initial()              the state with no round open
    apply(s, e)            (next state, effects) for event `e`, or RuleError with `s` unchanged
    awaiting(s)            what the engine needs next (a round, a card for X, a decision by Y)
    settlement(s)          the settlement of a finished round in REPLAY.md form
    shoe(open)             the shoe a round opened by event `open` is dealt from (shoe tracker)
    shoe_for_rules(doc)    the shoe the rule options `doc` (config) ask for; RuleError if they are bad
    parse_round_file(doc, seats=n)  a REPLAY.md round file as a RoundInput, or RuleError; `seats`
                           is the table's seat count (None: the game's maximum, as a round file has none)
    parse_decision(d, w)   one decision as a round file writes it (a player's choice), or RuleError
    round_file(s)          the round of state `s` as a round file (game recall)
    payouts(settlement)    per seat (or player): pay, collect, net, for the dealer
    bets(settlement)       (bet type, wagered, paid) for every bet, for the meters
    """

    name: str
    state_type: type[S]

    def initial(self) -> S: ...

    def apply(self, state: S, event: Event) -> tuple[S, tuple[Effect, ...]]: ...

    def awaiting(self, state: S) -> Awaiting: ...

    def settlement(self, state: S) -> dict[str, JSON]: ...

    def shoe(self, open_event: Event) -> ShoeComposition: ...

    def shoe_for_rules(self, doc: Mapping[str, Any]) -> ShoeComposition: ...

    def parse_round_file(self, doc: Mapping[str, Any], *, seats: int | None = None) -> RoundInput: ...

    def parse_decision(self, doc: Mapping[str, Any], where: str) -> Event: ...

    def round_file(self, state: S) -> dict[str, JSON]: ...

    def payouts(self, settlement: Mapping[str, Any]) -> list[dict[str, Any]]: ...

    def bets(self, settlement: Mapping[str, Any]) -> list[tuple[str, int, int]]: ...


def run_events(game: Game[S], events: Sequence[Event], state: S | None = None) -> tuple[S, list[Effect]]:
    """Apply `events` in order from `state` (or the initial state): the one way rounds are run."""
    s = game.initial() if state is None else state
    effects: list[Effect] = []
    for ev in events:
        s, out = game.apply(s, ev)
        effects.extend(out)
    return s, effects


# --- events and effects every game shares ----------------------------------------------------


@event("card")
@dataclasses.dataclass(frozen=True)
class CardDealt(Event):
    """A card came out of the shoe (read by the shoe, or entered by the dealer)."""

    card: Card


@event("void")
@dataclasses.dataclass(frozen=True)
class VoidRound(Event):
    """A supervisor voids the open round: every wager is returned."""

    by: str
    reason: str


@effect("card-dead")
@dataclasses.dataclass(frozen=True)
class CardDead(Effect):
    """A card dealt where no seat is owed one: ruled dead, shown to the dealer, journaled."""

    card: Card
    reason: str

    def notice(self) -> str | None:
        return f"Dead card {self.card} ({self.reason}): set it aside"


@effect("shoe-reshuffled")
@dataclasses.dataclass(frozen=True)
class ShoeReshuffled(Effect):
    """The cards are dealt from a freshly shuffled full deck from here on (a new Baseball poker
    hand, a rainout): whoever counts the shoe starts again."""

    reason: str


@effect("round-voided")
@dataclasses.dataclass(frozen=True)
class RoundVoided(Effect):
    """The round is void; every wager goes back to its owner."""

    by: str
    reason: str
    returned: Mapping[int, int]  # seat (or spot) -> chips returned
