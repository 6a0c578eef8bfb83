"""Baseball poker: seven-card stud, fixed limit, threes and nines wild (GAMES.md section 3), as a pure state machine.

Every player antes; 3rd street is dealt down, down, up; 4th to 6th one card up; 7th one card
down. A 4 dealt face up gives its player an extra face-down card at once. A queen of spades dealt
face up rains the deal out: the players still in ante again and get a new deal from a reshuffled
deck, the pot staying. Each street opens with a forced bring-in or completion by the lowest up
card (3rd street) or the best showing hand (later streets), at most four bets a round, then the
best five of all a player's cards (and any community card) takes the pot, with side pots for
players all in. With the option to pay for wild cards, a player dealt a wild card face up (face
down too with `pay_for_wild_down`) is asked at once to pay one bet of the street for it to play
wild; a card not paid for plays at its own rank and suit, in the showdown and in the showing hand.

    state = GAME.initial()
    opening = OpenRound(BaseballRules(), (Player(1, 100), Player(2, 100)))
    state, fx = GAME.apply(state, opening)           # antes taken; the first card goes to seat 1
    state, fx = GAME.apply(state, CardDealt(parse_card("KH")))

The dealing schedule is written once, below (`next_step`, `rains_out`, `earns_extra`): `apply`
deals by it, and so does `tablectl analyze baseball-poker` (analysis.py).

The engine has no randomness: a hand, and each rainout re-deal, is dealt from a freshly shuffled
deck, and the engine says so with a `shoe-reshuffled` effect; whoever tracks which cards the deck
still holds starts again on it (controller/games/replay.py and the table loop).

Readings this module fixes where GAMES.md is silent:
a bet, completion or raise is always a full bet: a player whose stack does not cover it may call,
all in if short (a bring-in short of its amount is all in for less); a player may raise only while
another player still in has chips; a player who could check may not fold; the opener of a street
is chosen among the players still in who have chips, and a street has a betting round only when
two or more of them do; a player short of the ante (or a re-ante) antes what they have and is all
in; paying for an extra card is dead money in the main pot, matched by nobody, and a player whose
stack cannot pay it in full does not take the card (declined for them, and not listed in the round
file); an uncalled bet goes back to its owner (a pot with one contributor, marked "returned");
showing hands count only the player's own up cards, not community cards; at the showdown odd chips
follow the winners' highest own card (community cards are shared, so they order nobody).
Paying for wild cards: the question comes right after the wild card lands, before any other card
(a wild 4 face up: the wild card's question first, then the extra card's); the payment is dead
money in the main pot like the extra card's, and a player whose stack cannot pay it in full plays
the card at its own rank (declined for them, not listed in the round file); a community card
belongs to nobody, so a wild one plays wild in every hand unpaid; after a rainout the payments
stay in the pot and the new deal's wild cards are paid for anew; `pay_for_wild_down` without
`pay_for_wild` is refused (it would do nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar, get_args

from controller.engine.base import (
    JSON,
    Awaiting,
    Effect,
    Event,
    Phase,
    RoundInput,
    RuleError,
    ShoeReshuffled,
    Void,
    effect,
    event,
    from_json,
    rule_options,
)
from controller.engine.cards import Card, Rank, ShoeComposition, Suit
from controller.engine.hands import HandValue, evaluate
from controller.games.round_game import RoundGame, Seating, changed_rules

ExtraCard = Literal["free", "pay", "none"]
Face = Literal["up", "down"]
BETS = ("bring-in", "complete", "check", "bet", "call", "raise", "fold")
PAYMENTS = ("pay", "decline")
ACTIONS = (*BETS, *PAYMENTS)
#: A seven-card stud table seats eight (GAMES.md section 3; 8 x 7 > 52 is why the community card
#: exists); a table's config may seat fewer (`table.seats`), which the opening event carries.
SEATS_MAX = 8
SEATS = range(1, SEATS_MAX + 1)
MAX_BETS = 4  # the full opening or completion and three raises
DECK = 52
STREETS = (3, 4, 5, 6, 7)
#: The dealing passes of each street, by face.
PASSES: dict[int, tuple[Face, ...]] = {3: ("down", "down", "up"), 4: ("up",), 5: ("up",), 6: ("up",), 7: ("down",)}
QUEEN_OF_SPADES = Card(Rank.QUEEN, Suit.SPADES)


T = TypeVar("T")


def _evolve(record: T, **changes: Any) -> T:
    """`dataclasses.replace` without its per-field work: a hand makes hundreds of state copies,
    and these frozen dataclasses have no `__post_init__` to run (the copy is equal to replace's)."""
    assert changes.keys() <= record.__dataclass_fields__.keys(), f"no such field: {sorted(changes)}"  # type: ignore[attr-defined]
    new = object.__new__(type(record))
    new.__dict__.update(record.__dict__)
    new.__dict__.update(changes)
    return new


# --- rules and inputs ------------------------------------------------------------------------


@dataclass(frozen=True)
class BaseballRules:
    """The table's rule options (GAMES.md section 3 defaults); a round file may override any."""

    ante: int = 1
    small_bet: int = 2  # 3rd and 4th street
    big_bet: int = 4  # 5th, 6th and 7th street
    wild: tuple[str, ...] = ("3", "9")  # wild ranks, as card notation writes a rank
    double_ace_flush: bool = False
    natural_wins: bool = False
    extra_card: ExtraCard = "free"  # for a face-up 4: "free", "pay" (one bet of the street) or "none"
    rainout: bool = True
    burn_cards: bool = False  # one burn card before each street after 3rd
    check_option: bool = False  # from 4th street on, the opener may check (then: check or bet)
    pay_for_wild: bool = False  # a wild card dealt face up plays wild only if paid for (one bet)
    pay_for_wild_down: bool = False  # with pay_for_wild: face-down wild cards are paid for too

    def validate(self, where: str = "rules") -> None:
        """Raise RuleError naming the option if any option is out of its range."""
        for name, low in (("ante", 0), ("small_bet", 2), ("big_bet", 2)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RuleError(f"must be a whole number of {low} or more, not {value!r}", field=f"{where}.{name}")
        if self.big_bet < self.small_bet:
            raise RuleError(
                f"the big bet ({self.big_bet}) is below the small bet ({self.small_bet})", field=f"{where}.big_bet"
            )
        if not isinstance(self.wild, tuple) or len(set(self.wild)) != len(self.wild):
            raise RuleError('must be a list of different ranks, such as ["3", "9"]', field=f"{where}.wild")
        for i, rank in enumerate(self.wild):
            if rank not in _RANKS:
                raise RuleError(f"{rank!r} is not a rank; write 2-9, T, J, Q, K or A", field=f"{where}.wild[{i}]")
        for name in _SWITCHES:
            if not isinstance(getattr(self, name), bool):
                raise RuleError(f"must be true or false, not {getattr(self, name)!r}", field=f"{where}.{name}")
        if self.pay_for_wild_down and not self.pay_for_wild:
            raise RuleError(
                "face-down wild cards are paid for only when wild cards are: set pay_for_wild to true as well",
                field=f"{where}.pay_for_wild_down",
            )
        if self.extra_card not in get_args(ExtraCard):
            raise RuleError(f"must be one of {list(get_args(ExtraCard))}", field=f"{where}.extra_card")

    @property
    def wild_ranks(self) -> frozenset[Rank]:
        return frozenset(_RANKS[r] for r in self.wild)

    def street_bet(self, street: int) -> int:
        return self.small_bet if street <= 4 else self.big_bet

    def must_pay_for(self, card: Card, face: Face) -> bool:
        """Whether a player dealt `card` this way is asked to pay for it to play wild."""
        return self.pay_for_wild and (face == "up" or self.pay_for_wild_down) and card.rank in self.wild_ranks


_RANKS: dict[str, Rank] = {r.symbol: r for r in Rank}
_SWITCHES = (
    "double_ace_flush",
    "natural_wins",
    "rainout",
    "burn_cards",
    "check_option",
    "pay_for_wild",
    "pay_for_wild_down",
)


@dataclass(frozen=True)
class Player:
    """A player in the hand: the seat and the chips they play with (table stakes)."""

    seat: int
    stack: int


@event("baseball-poker.open")
@dataclass(frozen=True)
class OpenRound(Event):
    """The dealer starts a hand: rule options and the players with their stacks."""

    rules: BaseballRules
    players: tuple[Player, ...]
    #: The seats of the table the hand is dealt at (its config's `table.seats`). A round file has
    #: no seat count (REPLAY.md): a hand read from one may use every seat of a stud table.
    table_seats: int = SEATS_MAX


@event("baseball-poker.action")
@dataclass(frozen=True)
class Action(Event):
    """A player's choice: a betting action, or pay / decline for an extra card or a wild card."""

    seat: int
    action: str


# --- effects ---------------------------------------------------------------------------------


@effect("baseball-poker.round-opened")
@dataclass(frozen=True)
class RoundOpened(Effect):
    seats: tuple[int, ...]
    ante: int
    small_bet: int
    big_bet: int


@effect("baseball-poker.ante")
@dataclass(frozen=True)
class AnteTaken(Effect):
    seat: int
    amount: int
    all_in: bool


@effect("baseball-poker.next-card")
@dataclass(frozen=True)
class NextCard(Effect):
    """Where the next card goes: a seat (face up or down), the community card, or the burn."""

    to: Literal["seat", "community", "burn"]
    seat: int | None
    face: Face
    street: int
    extra: bool = False


@effect("baseball-poker.card-placed")
@dataclass(frozen=True)
class CardPlaced(Effect):
    to: Literal["seat", "community", "burn"]
    seat: int | None
    card: Card
    face: Face
    street: int
    extra: bool = False


@effect("baseball-poker.rainout")
@dataclass(frozen=True)
class Rainout(Effect):
    """A queen of spades face up ends the deal: re-deal to `seats`, each anteing again."""

    card: Card
    seat: int | None  # None: it came as the community card
    number: int
    seats: tuple[int, ...]

    def notice(self) -> str | None:
        where = f"seat {self.seat}" if self.seat is not None else "the community card"
        seats = ", ".join(str(s) for s in self.seats)
        return (
            f"Rainout: {self.card} face up at {where}. Leave the pot, shuffle the full deck, re-deal to seats {seats}"
        )


@effect("baseball-poker.opener")
@dataclass(frozen=True)
class OpenerChosen(Effect):
    """Who opens the street's betting, and why (lowest up card, best showing hand)."""

    seat: int
    street: int
    why: str


@effect("baseball-poker.no-betting")
@dataclass(frozen=True)
class NoBetting(Effect):
    """The street has no betting round: fewer than two players still in have chips."""

    street: int


@effect("baseball-poker.decision-due")
@dataclass(frozen=True)
class DecisionDue(Effect):
    seat: int
    street: int
    allowed: tuple[str, ...]
    amounts: Mapping[str, int]  # chips each choice puts in


@effect("baseball-poker.action-taken")
@dataclass(frozen=True)
class ActionTaken(Effect):
    """An action was accepted; `amount` is the chips it put in, `pot` the pot after it."""

    seat: int
    action: str
    amount: int
    pot: int
    all_in: bool = False
    forced: bool = False  # taken by the engine (a player who cannot pay for an extra card or a wild card)
    card: Card | None = None  # for pay / decline: the face-up 4 or the wild card it was about


@effect("baseball-poker.hand-shown")
@dataclass(frozen=True)
class HandShown(Effect):
    seat: int
    category: str
    best: tuple[Card, ...]


@effect("baseball-poker.pot-awarded")
@dataclass(frozen=True)
class PotAwarded(Effect):
    """A pot pushed to its winners (`shares`: seat -> chips, odd chips already placed)."""

    amount: int
    winners: tuple[int, ...]
    shares: Mapping[int, int]
    returned: bool = False  # an uncalled bet going back to its owner


@effect("baseball-poker.player-settled")
@dataclass(frozen=True)
class PlayerSettled(Effect):
    """Push `pay` to the seat; `collect` is what the seat put in the pot; `net` = pay - collect."""

    seat: int
    pay: int
    collect: int
    net: int


@effect("baseball-poker.round-settled")
@dataclass(frozen=True)
class RoundSettled(Effect):
    pot: int
    rainouts: int
    cards_used: int
    showdown: bool


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    """A card in a player's hand, as dealt."""

    card: Card
    face: Face
    street: int
    extra: bool = False  # the extra face-down card for a face-up 4
    natural: bool = False  # a wild-rank card not paid for (pay_for_wild): it plays at its own rank


@dataclass(frozen=True)
class SeatState:
    seat: int
    start: int  # the stack the player started the hand with
    stack: int  # chips still behind
    put: int = 0  # antes and bets: what the pots are built from
    dead: int = 0  # payments for extra cards and wild cards: main pot, matched by nobody
    street_put: int = 0  # put in during the betting round now being played
    cards: tuple[Held, ...] = ()  # this deal's cards (the last deal's, for a player who folded)
    folded: bool = False

    @property
    def can_act(self) -> bool:
        return not self.folded and self.stack > 0

    def up_cards(self) -> list[Card]:
        return [h.card for h in self.cards if h.face == "up"]

    def own_cards(self) -> list[Card]:
        return [h.card for h in self.cards]

    def plays_natural(self) -> list[Card]:
        """The wild-rank cards that play at their own rank: not paid for."""
        return [h.card for h in self.cards if h.natural]


@dataclass(frozen=True)
class Target:
    """Where the next card goes."""

    to: Literal["seat", "community", "burn"]
    seat: int | None
    face: Face
    extra: bool = False


@dataclass(frozen=True)
class Ask:
    """A player must pay `price` or decline: for the extra card their face-up 4 earns, or (`wild`)
    for the wild card just dealt to them to play wild. The question is about their last card."""

    seat: int
    card: Card
    price: int
    wild: bool = False

    def question(self) -> str:
        if self.wild:
            return f"pay {self.price} to play its {self.card} as wild, or decline (it then plays as itself)"
        return f"pay {self.price} for the extra card its {self.card} earns, or decline it"


@dataclass(frozen=True)
class Betting:
    """The betting round of a street."""

    street: int
    opener: int
    bet: int  # the street's full bet
    high: int = 0  # what each player must have put in this round to stay
    bets: int = 0  # full bets made: the opening or completion, then each raise
    opened: bool = False
    pending: tuple[int, ...] = ()  # seats still to act, in turn order


@dataclass(frozen=True)
class BaseballState:
    """The table's Baseball poker state: the hand in play (or the last one)."""

    phase: Phase = "idle"
    rules: BaseballRules = field(default_factory=BaseballRules)
    players: tuple[Player, ...] = ()  # as the hand opened (for the round file)
    seats: tuple[SeatState, ...] = ()
    street: int = 3
    passes_begun: int = 0  # passes of this street begun (a community card counts as one)
    pass_left: tuple[int, ...] = ()  # seats still to get a card in the pass being dealt
    burned: bool = False  # this street's burn card is done (or not needed)
    betting_done: bool = False  # this street's betting round is over (or skipped)
    target: Target | None = None
    ask: Ask | None = None
    betting: Betting | None = None
    community: tuple[Card, ...] = ()
    burns: tuple[Card, ...] = ()
    in_deck: int = DECK  # cards still in this deal's deck
    dealt: tuple[Card, ...] = ()  # every card the hand used, in shoe order (rainouts included)
    actions: tuple[Action, ...] = ()  # every action accepted, in order (the round file's list)
    rainouts: int = 0
    dead_cards: tuple[Card, ...] = ()
    void: Void | None = None

    def seat(self, number: int) -> SeatState:
        return next(s for s in self.seats if s.seat == number)

    def live(self) -> list[SeatState]:
        return [s for s in self.seats if not s.folded]

    @property
    def pot(self) -> int:
        return sum(s.put + s.dead for s in self.seats)


def _with_seat(state: BaseballState, seat: SeatState) -> BaseballState:
    return _evolve(state, seats=tuple(seat if s.seat == seat.seat else s for s in state.seats))


# --- the dealing schedule --------------------------------------------------------------------
# GAMES.md section 3, once: `GAME.apply` deals by these, and so does `tablectl analyze
# baseball-poker` (controller/games/baseball/analysis.py), which deals hands to the showdown
# without the betting rounds in between.


class DealStep(NamedTuple):
    """The next step of a street's dealing: a pass of one card to each player still in, in seat
    order, face `face` (`to_seats`); or the burn card or the community card (`target`); or a
    step that deals no card (the deck is empty: neither). `passes_begun` and `burned` are where
    the street's schedule stands after it."""

    passes_begun: int
    burned: bool
    to_seats: bool = False
    face: Face = "down"
    target: Target | None = None


_BURN = Target("burn", None, "down")
_COMMUNITY = Target("community", None, "up")


def _schedule() -> dict[tuple[bool, int, int, bool], tuple[DealStep, DealStep, DealStep]]:
    """Every street's next step, by (burn_cards, street, passes begun, burned): the step when the
    deck holds a card for every player still in, when it holds fewer, and when it is empty."""
    steps: dict[tuple[bool, int, int, bool], tuple[DealStep, DealStep, DealStep]] = {}
    for burn_cards in (False, True):
        for street in STREETS:
            for begun in range(len(PASSES[street]) + 1):
                for burned in (False, True):
                    key = (burn_cards, street, begun, burned)
                    if street > 3 and burn_cards and not burned:  # one burn card before the street
                        burn = DealStep(begun, True, target=_BURN)
                        steps[key] = (burn, burn, DealStep(begun, True))
                    elif begun < len(PASSES[street]):
                        # Too few cards for the pass: one community card face up, for everyone.
                        face = PASSES[street][begun]
                        steps[key] = (
                            DealStep(begun + 1, burned, to_seats=True, face=face),
                            DealStep(begun + 1, burned, target=_COMMUNITY),
                            DealStep(begun + 1, burned),
                        )
    return steps


_SCHEDULE = _schedule()


def next_step(
    rules: BaseballRules, street: int, passes_begun: int, burned: bool, in_deck: int, players: int
) -> DealStep | None:
    """What `street` deals next, its passes (`PASSES`) `passes_begun` begun and its burn card
    done or not (`burned`), with `in_deck` cards left for `players` players still in; None when
    the street's cards are all dealt (its betting round is next).

    Burn cards (`burn_cards`): one before each street after 3rd, none from an empty deck. Before
    each pass, a deck holding fewer cards than there are players still in deals one community
    card face up in its place, and an empty deck none."""
    steps = _SCHEDULE.get((rules.burn_cards, street, passes_begun, burned))
    if steps is None:
        return None
    enough, short, empty = steps
    return enough if in_deck >= players else short if in_deck > 0 else empty


def pass_face(street: int, passes_begun: int) -> Face:
    """The face of the cards of the pass being dealt (the last one begun)."""
    return PASSES[street][passes_begun - 1]


def rains_out(rules: BaseballRules, card: Card, face: Face) -> bool:
    """Whether `card` dealt `face` ends the deal (a queen of spades face up, to a player or as the
    community card, with `rainout`): re-dealt from a reshuffled full deck to the players still in."""
    return face == "up" and card.rank is _RAIN_RANK and card.suit is _RAIN_SUIT and rules.rainout


def earns_extra(rules: BaseballRules, card: Card, face: Face, in_deck: int) -> bool:
    """Whether `card` dealt `face` to a player gives them an extra face-down card at once (a 4
    face up, unless `extra_card` is "none"; "pay": if they pay one bet of the street), with
    `in_deck` cards left after it: only while the deck has cards."""
    return face == "up" and card.rank is _FOUR and in_deck > 0 and rules.extra_card != "none"


def face_up_ranks(rules: BaseballRules) -> tuple[Rank, ...]:
    """The ranks of the cards that can change the deal when dealt face up (`rains_out`,
    `earns_extra`): a face-up card of any other rank only lies there."""
    return (*((_RAIN_RANK,) if rules.rainout else ()), *((_FOUR,) if rules.extra_card != "none" else ()))


_RAIN_RANK, _RAIN_SUIT = QUEEN_OF_SPADES.rank, QUEEN_OF_SPADES.suit
_FOUR = Rank.FOUR


# --- who opens -------------------------------------------------------------------------------

_SHOWING = ("high card", "pair", "two pair", "three of a kind", "four of a kind")


def showing_hand(
    up: Sequence[Card], wild: frozenset[Rank], *, wild_cards: Collection[int] | None = None
) -> tuple[int, ...]:
    """The strength of up cards as a showing hand: (category 1-5, group ranks by size then rank).

    Pairs, two pair, trips and quads only (no straights or flushes; kickers count); the wild
    cards join the largest group of equal ranks, the highest such rank; wild cards alone are aces.
    The wild cards are those of a `wild` rank or, given `wild_cards`, those at these positions
    in `up` (as `hands.evaluate` takes them: a wild card not paid for is left out).
    """
    is_wild = [c.rank in wild for c in up] if wild_cards is None else [i in wild_cards for i in range(len(up))]
    naturals = Counter(int(c.rank) for c, w in zip(up, is_wild, strict=True) if c.rank is not None and not w)
    wild_count = sum(is_wild)
    if wild_count:
        if naturals:
            _, rank = max((n, r) for r, n in naturals.items())
        else:
            rank = int(Rank.ACE)
        naturals[rank] += wild_count
    groups = sorted(((n, r) for r, n in naturals.items()), reverse=True)
    sizes = [n for n, _ in groups]
    if not sizes:
        category = 0
    elif sizes[0] >= 4:
        category = 5
    elif sizes[0] == 3:
        category = 4
    elif sizes[:2] == [2, 2]:
        category = 3
    elif sizes[0] == 2:
        category = 2
    else:
        category = 1
    return (category, *(r for _, r in groups))


def _card_key(card: Card) -> tuple[int, int]:
    assert card.rank is not None and card.suit is not None
    return (int(card.rank), int(card.suit))


def choose_opener(state: BaseballState, street: int) -> tuple[int, str]:
    """(seat, why) of the player who opens `street`, among the players still in with chips."""
    actors = [s for s in state.seats if s.can_act]
    if street == 3:

        def lowest(s: SeatState) -> tuple[int, int]:
            return min((_card_key(c) for c in s.up_cards()), default=(99, 9))

        seat = min(actors, key=lowest)
        card = min(seat.up_cards(), key=_card_key, default=None)
        return seat.seat, f"lowest up card {card}" if card else "no up card: first seat"
    wild = state.rules.wild_ranks

    def showing(s: SeatState) -> tuple[tuple[int, ...], tuple[int, int]]:
        held = [h for h in s.cards if h.face == "up"]
        up = [h.card for h in held]
        strength = showing_hand(up, wild, wild_cards=_wild_positions(held, wild))
        return strength, max((_card_key(c) for c in up), default=(0, 0))

    seat = max(actors, key=showing)
    strength, _ = showing(seat)
    up = seat.up_cards()
    words = _SHOWING[strength[0] - 1] if strength[0] else "nothing"
    ranks = "".join(Rank(r).symbol for r in strength[1:])
    high = max(up, key=_card_key, default=None)
    return seat.seat, f"best showing hand: {words} ({ranks}), high card {high}"


# --- betting ---------------------------------------------------------------------------------


def options(state: BaseballState, b: Betting, number: int) -> dict[str, int]:
    """The actions open to seat `number` in betting round `b`, each with the chips it puts in."""
    s = state.seat(number)
    rules = state.rules
    rival = any(o.can_act for o in state.seats if o.seat != number)  # someone who could still call a raise
    if not b.opened:
        if rules.check_option and b.street >= 4:
            return {"check": 0, **({"bet": b.bet} if s.stack >= b.bet else {})}
        return {"bring-in": min(b.bet // 2, s.stack), **({"complete": b.bet} if s.stack >= b.bet else {})}
    to_call = b.high - s.street_put
    if to_call <= 0:
        opts = {"check": 0}
        if b.bets < MAX_BETS and s.stack >= b.bet and rival:
            opts["bet" if b.bets == 0 else "raise"] = b.bet
        return opts
    opts = {"call": min(to_call, s.stack)}
    if b.bets == 0:
        if s.stack >= b.bet - s.street_put and rival and b.bet > b.high:
            opts["complete"] = b.bet - s.street_put
    elif b.bets < MAX_BETS and s.stack >= to_call + b.bet and rival:
        opts["raise"] = to_call + b.bet
    opts["fold"] = 0
    return opts


def _turns_after(state: BaseballState, number: int) -> tuple[int, ...]:
    """The other players who can still act, clockwise (increasing seat, wrapping) after `number`."""
    seats = [s.seat for s in state.seats if s.can_act and s.seat != number]
    return tuple(sorted(seats, key=lambda seat: (seat < number, seat)))


def _why_not(b: Betting, action: str, allowed: Mapping[str, int]) -> str:
    if action in ("bring-in", "complete") and b.opened and b.bets:
        return "the street is already open for a full bet"
    if action in ("bring-in",) and b.opened:
        return "the street is already open"
    if action in ("complete", "bet", "raise") and b.bets >= MAX_BETS:
        return f"the round has its {MAX_BETS} bets: only calls and folds"
    if action in ("complete", "bet", "raise"):
        return "a bet, completion or raise is a full bet the stack must cover, against a player who can call"
    if action == "check":
        return "there is a bet to call" if b.opened else "the opener must bring it in or complete"
    if action == "fold":
        return "nothing to call: check instead"
    if action in PAYMENTS:
        return "nothing is asked to be paid for now (pay and decline answer for an extra card or a wild card)"
    return "not open to this player now"


# --- side pots -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]
    contributors: tuple[int, ...]

    @property
    def returned(self) -> bool:
        """An uncalled bet: nobody but its owner put chips in this pot."""
        return len(self.contributors) == 1 and self.contributors == self.eligible


def side_pots(seats: Sequence[SeatState]) -> list[Pot]:
    """The main pot and side pots: each level of contributions up to an all-in (or a fold)
    is a pot for the players still in who put that much. Extra-card payments go to the main pot."""
    puts = {s.seat: s.put for s in seats}
    live = {s.seat for s in seats if not s.folded}
    pots: list[Pot] = []
    carry, carried_from = 0, set[int]()
    previous = 0
    for level in sorted({p for p in puts.values() if p > 0}):
        amount = carry + sum(min(p, level) - min(p, previous) for p in puts.values())
        contributors = carried_from | {seat for seat, p in puts.items() if p > previous}
        eligible = tuple(sorted(seat for seat in live if puts[seat] >= level))
        previous = level
        if not eligible:  # only folded players reached this level: it rides with the pot below
            if pots:
                last = pots[-1]
                pots[-1] = Pot(
                    last.amount + amount, last.eligible, tuple(sorted(set(last.contributors) | contributors))
                )
            else:
                carry, carried_from = amount, contributors
            continue
        carry, carried_from = 0, set()
        if pots and pots[-1].eligible == eligible:
            last = pots[-1]
            pots[-1] = Pot(last.amount + amount, eligible, tuple(sorted(set(last.contributors) | contributors)))
        else:
            pots.append(Pot(amount, eligible, tuple(sorted(contributors))))
    dead = sum(s.dead for s in seats)
    dead_from = {s.seat for s in seats if s.dead}
    if dead or carry:
        if pots:
            main = pots[0]
            both = set(main.contributors) | dead_from | carried_from
            pots[0] = Pot(main.amount + dead + carry, main.eligible, tuple(sorted(both)))
        else:
            pots.append(Pot(dead + carry, tuple(sorted(live)), tuple(sorted(dead_from | carried_from))))
    return pots


# --- the showdown ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How a finished hand is paid: each pot's winners and shares, each seat's hand if shown."""

    pots: tuple[tuple[Pot, tuple[int, ...], dict[int, int]], ...]
    hands: dict[int, HandValue]
    won: dict[int, int]

    @property
    def showdown(self) -> bool:
        return bool(self.hands)


def hand_of(state: BaseballState, seat: SeatState) -> HandValue:
    """The best five of the seat's cards and the community cards, with the table's wild ranks;
    a wild-rank card its player did not pay for plays at its own rank (a community card is paid
    for by nobody and plays wild)."""
    rules = state.rules
    wild = rules.wild_ranks
    cards = [*seat.own_cards(), *state.community]
    if not any(h.natural for h in seat.cards):  # every wild-rank card is wild: the faster way
        return evaluate(cards, wild, double_ace_flush=rules.double_ace_flush, natural_wins=rules.natural_wins)
    return evaluate(
        cards,
        wild_cards=[
            *_wild_positions(seat.cards, wild),
            *(len(seat.cards) + i for i, c in enumerate(state.community) if c.rank in wild),
        ],
        double_ace_flush=rules.double_ace_flush,
        natural_wins=rules.natural_wins,
    )


def _wild_positions(held: Sequence[Held], wild: frozenset[Rank]) -> list[int]:
    """The positions of the cards in `held` that play wild: of a wild rank, and not unpaid."""
    return [i for i, h in enumerate(held) if h.card.rank in wild and not h.natural]


def outcome(state: BaseballState) -> Outcome:
    live = state.live()
    hands = {s.seat: hand_of(state, s) for s in live} if len(live) > 1 else {}

    def high_card(seat: int) -> tuple[int, int]:
        return max((_card_key(c) for c in state.seat(seat).own_cards()), default=(0, 0))

    paid: list[tuple[Pot, tuple[int, ...], dict[int, int]]] = []
    won = {s.seat: 0 for s in state.seats}
    for pot in side_pots(state.seats):
        winners: tuple[int, ...]
        if len(pot.eligible) == 1:
            winners = pot.eligible
        else:
            best = max(hands[seat].strength for seat in pot.eligible)
            winners = tuple(seat for seat in pot.eligible if hands[seat].strength == best)
        share, odd = divmod(pot.amount, len(winners))
        shares = dict.fromkeys(winners, share)
        for seat in sorted(winners, key=high_card, reverse=True)[:odd]:
            shares[seat] += 1  # odd chips: one each, highest own card (rank, then suit) first
        for seat, chips in shares.items():
            won[seat] += chips
        paid.append((pot, winners, shares))
    return Outcome(pots=tuple(paid), hands=hands, won=won)


# --- what the hand needs next ----------------------------------------------------------------


def _ante_all(state: BaseballState, seats: Sequence[int]) -> tuple[BaseballState, list[Effect]]:
    effects: list[Effect] = []
    for number in seats:
        s = state.seat(number)
        amount = min(state.rules.ante, s.stack)
        s = _evolve(s, stack=s.stack - amount, put=s.put + amount)
        state = _with_seat(state, s)
        effects.append(AnteTaken(number, amount, all_in=s.stack == 0))
    return state, effects


def _next_card_effect(state: BaseballState) -> NextCard:
    assert state.target is not None
    t = state.target
    return NextCard(t.to, t.seat, t.face, state.street, t.extra)


class Baseball(RoundGame[BaseballState, OpenRound, Action]):
    """The Baseball poker rules as a pure state machine (see controller/engine/README.md); what
    every game's rules share is `RoundGame`'s (controller/games/round_game.py)."""

    name = "baseball-poker"
    title = "Baseball poker"
    round_word = "hand"
    nobody_owed = "nobody"
    state_type = BaseballState
    open_type = OpenRound
    decision_type = Action
    rules_type = BaseballRules

    def open_shoe(self, open_event: OpenRound) -> ShoeComposition:
        return ShoeComposition(decks=1)

    def shoe_for_rules(self, doc: Mapping[str, Any]) -> ShoeComposition:
        parse_rules(doc)
        return ShoeComposition(decks=1)

    def dealing(self, state: BaseballState) -> Awaiting:
        if state.ask is not None:
            a = state.ask
            what = f"wild card {a.card}" if a.wild else f"extra card for {a.card}"
            who = {"seat": a.seat, "street": state.street, "for": what, "price": a.price}
            return Awaiting("decision", who=who, allowed=PAYMENTS)
        if state.target is not None:
            t = state.target
            target: dict[str, JSON] = (
                {"seat": t.seat, "face": t.face, "street": state.street}
                if t.to == "seat"
                else {t.to: True, "face": t.face, "street": state.street}
            )
            if t.extra:
                target["extra"] = True
            return Awaiting("card", target=target)
        b = state.betting
        assert b is not None and b.pending, "a hand being dealt always needs a card or a decision"
        seat = state.seat(b.pending[0])
        opts = options(state, b, seat.seat)
        who = {
            "seat": seat.seat,
            "street": b.street,
            "to_call": max(b.high - seat.street_put, 0),
            "stack": seat.stack,
            "pot": state.pot,
            "amounts": opts,
        }
        return Awaiting("decision", who=who, allowed=tuple(opts))

    # -- opening ------------------------------------------------------------------------------

    def open_round(self, state: BaseballState, ev: OpenRound) -> tuple[BaseballState, tuple[Effect, ...]]:
        validate_open(ev)
        players = tuple(sorted(ev.players, key=lambda p: p.seat))
        new = BaseballState(
            phase="dealing",
            rules=ev.rules,
            players=players,
            seats=tuple(SeatState(seat=p.seat, start=p.stack, stack=p.stack) for p in players),
        )
        effects: list[Effect] = [
            RoundOpened(tuple(p.seat for p in players), ev.rules.ante, ev.rules.small_bet, ev.rules.big_bet),
            ShoeReshuffled("a new hand is dealt from a freshly shuffled deck"),
        ]
        new, antes = _ante_all(new, [p.seat for p in players])
        effects.extend(antes)
        return self._advance(new, effects)

    # -- cards --------------------------------------------------------------------------------

    def deal(self, state: BaseballState, card: Card) -> tuple[BaseballState, tuple[Effect, ...]]:
        if card.is_joker:
            return self.dead(state, card, "a Baseball poker deck holds no joker")
        t = state.target
        if t is None:
            who = state.ask.seat if state.ask else state.betting.pending[0] if state.betting else None
            return self.dead(state, card, f"nobody is owed a card: seat {who} must act first")
        state = _evolve(state, target=None, dealt=(*state.dealt, card), in_deck=state.in_deck - 1)
        placed = CardPlaced(t.to, t.seat, card, t.face, state.street, t.extra)
        if t.to == "burn":
            return self._advance(_evolve(state, burns=(*state.burns, card)), [placed])
        if t.to == "community":
            state = _evolve(state, community=(*state.community, card))
        else:
            assert t.seat is not None
            s = state.seat(t.seat)
            # A wild card to be paid for plays natural until it is: a question, then the answer.
            owed = state.rules.must_pay_for(card, t.face)
            s = _evolve(s, cards=(*s.cards, Held(card, t.face, state.street, t.extra, natural=owed)))
            state = _with_seat(state, s)
            if not t.extra:
                state = _evolve(state, pass_left=state.pass_left[1:])
        effects: list[Effect] = [placed]
        if rains_out(state.rules, card, t.face):
            return self._rainout(state, card, t.seat, effects)
        if t.to == "seat":
            assert t.seat is not None
            if state.seat(t.seat).cards[-1].natural:
                state, more = self._wild(state, card, t.seat)
                effects.extend(more)
            if state.ask is None:
                state, more = self._four(state, card, t.seat, t.face)
                effects.extend(more)
        return self._advance(state, effects)

    def _wild(self, state: BaseballState, card: Card, seat: int) -> tuple[BaseballState, list[Effect]]:
        """A wild card to be paid for: ask its player for one bet of the street, or decline for
        them if their stack cannot pay it (the card then plays as itself)."""
        price = state.rules.street_bet(state.street)
        if state.seat(seat).stack >= price:
            return _evolve(state, ask=Ask(seat, card, price, wild=True)), []
        return state, [ActionTaken(seat, "decline", 0, state.pot, forced=True, card=card)]

    def _four(self, state: BaseballState, card: Card, seat: int, face: Face) -> tuple[BaseballState, list[Effect]]:
        """A face-up 4: its player's extra face-down card now, free or for one bet of the street."""
        if not earns_extra(state.rules, card, face, state.in_deck):
            return state, []
        if state.rules.extra_card == "free":
            return _evolve(state, target=Target("seat", seat, "down", extra=True)), []
        price = state.rules.street_bet(state.street)
        if state.seat(seat).stack >= price:
            return _evolve(state, ask=Ask(seat, card, price)), []
        return state, [ActionTaken(seat, "decline", 0, state.pot, forced=True, card=card)]

    def _rainout(
        self, state: BaseballState, card: Card, seat: int | None, effects: list[Effect]
    ) -> tuple[BaseballState, tuple[Effect, ...]]:
        """The deal ends: the players still in get a new deal from a reshuffled deck and ante again."""
        still_in = [s.seat for s in state.live()]
        seats = tuple(s if s.folded else _evolve(s, cards=(), street_put=0) for s in state.seats)
        number = state.rainouts + 1
        state = _evolve(
            state,
            seats=seats,
            street=3,
            passes_begun=0,
            pass_left=(),
            burned=False,
            betting_done=False,
            target=None,
            ask=None,
            betting=None,
            community=(),
            in_deck=DECK,
            rainouts=number,
        )
        effects.append(Rainout(card, seat, number, tuple(still_in)))
        effects.append(ShoeReshuffled(f"rainout {number}: the deal is re-dealt from a reshuffled full deck"))
        state, antes = _ante_all(state, still_in)
        effects.extend(antes)
        return self._advance(state, effects)

    # -- actions ------------------------------------------------------------------------------

    def decide(self, state: BaseballState, ev: Action) -> tuple[BaseballState, tuple[Effect, ...]]:
        where = f"actions[{len(state.actions)}]"

        def refuse(rule: str) -> RuleError:
            return RuleError(rule, field=where, seat=ev.seat if isinstance(ev.seat, int) else None)

        if state.phase != "dealing":
            raise refuse("no hand is being dealt")
        if ev.action not in ACTIONS:
            raise refuse(f"{ev.action!r} is not an action; the actions are {', '.join(ACTIONS)}")
        if state.ask is not None:
            a = state.ask
            if ev.seat != a.seat or ev.action not in PAYMENTS:
                raise refuse(f"seat {a.seat} must first {a.question()}; allowed: pay, decline")
            return self._pay(state, ev, a)
        if state.target is not None:
            t = state.target
            to = f"seat {t.seat}" if t.to == "seat" else f"the {t.to} card"
            raise refuse(f"no action is due: the next card goes to {to}")
        b = state.betting
        assert b is not None and b.pending
        turn = b.pending[0]
        opts = options(state, b, turn)
        allowed = ", ".join(opts)
        if ev.seat != turn:
            raise refuse(f"out of turn: seat {turn} acts now; allowed: {allowed}")
        if ev.action not in opts:
            raise refuse(f"may not {ev.action}: {_why_not(b, ev.action, opts)}; allowed: {allowed}")
        return self._bet(state, ev, b, opts[ev.action])

    def _pay(self, state: BaseballState, ev: Action, a: Ask) -> tuple[BaseballState, tuple[Effect, ...]]:
        state = _evolve(state, ask=None, actions=(*state.actions, ev))
        s = state.seat(a.seat)
        if ev.action == "pay":
            s = _evolve(s, stack=s.stack - a.price, dead=s.dead + a.price)
            if a.wild:  # the card the question was about is the player's last
                last = s.cards[-1]
                s = _evolve(s, cards=(*s.cards[:-1], _evolve(last, natural=False)))
            state = _with_seat(state, s)
            effects: list[Effect] = [ActionTaken(a.seat, "pay", a.price, state.pot, all_in=s.stack == 0, card=a.card)]
        else:
            effects = [ActionTaken(a.seat, "decline", 0, state.pot, card=a.card)]
        if not a.wild:
            if ev.action == "pay":
                state = _evolve(state, target=Target("seat", a.seat, "down", extra=True))
            return self._advance(state, effects)
        # A wild 4 dealt face up still earns its extra card, now that the wild card is settled.
        state, more = self._four(state, a.card, a.seat, s.cards[-1].face)
        return self._advance(state, [*effects, *more])

    def _bet(
        self, state: BaseballState, ev: Action, b: Betting, amount: int
    ) -> tuple[BaseballState, tuple[Effect, ...]]:
        s = state.seat(ev.seat)
        s = _evolve(
            s,
            stack=s.stack - amount,
            put=s.put + amount,
            street_put=s.street_put + amount,
            folded=s.folded or ev.action == "fold",
        )
        state = _with_seat(state, s)
        action = ev.action
        if action in ("bring-in", "complete", "bet", "raise"):
            bets = b.bets if action == "bring-in" else b.bets + 1
            b = _evolve(b, high=s.street_put, bets=bets, opened=True, pending=_turns_after(state, s.seat))
        elif action == "check" and not b.opened:
            b = _evolve(b, opened=True, pending=_turns_after(state, s.seat))
        else:
            b = _evolve(b, pending=b.pending[1:])
        state = _evolve(state, betting=b, actions=(*state.actions, ev))
        return self._advance(
            state, [ActionTaken(s.seat, action, amount, state.pot, all_in=s.stack == 0 and not s.folded)]
        )

    # -- the flow of the hand -----------------------------------------------------------------

    def _advance(self, state: BaseballState, effects: list[Effect]) -> tuple[BaseballState, tuple[Effect, ...]]:
        """Walk the hand's schedule (burn, passes, community cards, betting rounds, streets) to
        the next thing it needs from outside: a card, an action, or nothing (settled)."""
        while True:
            if state.ask is not None:
                a = state.ask
                effects.append(DecisionDue(a.seat, state.street, PAYMENTS, {"pay": a.price, "decline": 0}))
                break
            if state.target is not None:
                effects.append(_next_card_effect(state))
                break
            if len(state.live()) == 1:
                return self._settle(state, effects)
            b = state.betting
            if b is not None:
                if b.pending:
                    opts = options(state, b, b.pending[0])
                    effects.append(DecisionDue(b.pending[0], b.street, tuple(opts), opts))
                    break
                seats = tuple(_evolve(s, street_put=0) for s in state.seats)
                state = _evolve(state, seats=seats, betting=None, betting_done=True)
                continue
            if state.pass_left:
                face = pass_face(state.street, state.passes_begun)
                state = _evolve(state, target=Target("seat", state.pass_left[0], face))
                continue
            if state.betting_done:
                if state.street == STREETS[-1]:
                    return self._settle(state, effects)
                state = _evolve(state, street=state.street + 1, passes_begun=0, burned=False, betting_done=False)
                continue
            live = tuple(s.seat for s in state.live())
            step = next_step(state.rules, state.street, state.passes_begun, state.burned, state.in_deck, len(live))
            if step is not None:  # the street's next card (or cards) by the dealing schedule
                state = _evolve(
                    state,
                    passes_begun=step.passes_begun,
                    burned=step.burned,
                    pass_left=live if step.to_seats else (),
                    target=step.target,
                )
                continue
            actors = [s for s in state.seats if s.can_act]
            if len(actors) < 2:
                effects.append(NoBetting(state.street))
                state = _evolve(state, betting_done=True)
                continue
            opener, why = choose_opener(state, state.street)
            effects.append(OpenerChosen(opener, state.street, why))
            bet = state.rules.street_bet(state.street)
            state = _evolve(state, betting=Betting(state.street, opener, bet, pending=(opener,)))
        return state, tuple(effects)

    def _settle(self, state: BaseballState, effects: list[Effect]) -> tuple[BaseballState, tuple[Effect, ...]]:
        state = _evolve(state, phase="settled", target=None, ask=None, betting=None)
        result = outcome(state)
        for seat, hand in result.hands.items():
            effects.append(HandShown(seat, hand.category, hand.best))
        for pot, winners, shares in result.pots:
            effects.append(PotAwarded(pot.amount, winners, shares, pot.returned))
        for s in state.seats:
            collect = s.put + s.dead
            effects.append(PlayerSettled(s.seat, result.won[s.seat], collect, result.won[s.seat] - collect))
        effects.append(RoundSettled(state.pot, state.rainouts, len(state.dealt), result.showdown))
        return state, tuple(effects)

    # -- voiding ------------------------------------------------------------------------------

    def returned(self, state: BaseballState) -> dict[int, int]:
        return {s.seat: s.put + s.dead for s in state.seats}

    def voided(self, state: BaseballState, void: Void) -> BaseballState:
        return _evolve(state, phase="void", void=void, target=None, ask=None)

    # -- settlement and round files -----------------------------------------------------------

    def settled(self, state: BaseballState) -> dict[str, JSON]:
        """The settlement's keys (REPLAY.md); the nets sum to zero."""
        void = state.phase == "void"
        result = None if void else outcome(state)
        players: list[dict[str, JSON]] = []
        for s in state.seats:
            put = s.put + s.dead
            won = put if result is None else result.won[s.seat]
            hand = result.hands.get(s.seat) if result is not None else None
            players.append(
                {
                    "seat": s.seat,
                    "stack": s.start,
                    "cards": [str(h.card) for h in s.cards],
                    "up": [str(h.card) for h in s.cards if h.face == "up"],
                    "folded": s.folded,
                    "put": put,
                    "won": won,
                    "hand": hand.to_json() if hand is not None else None,
                    "net": won - put,
                }
            )
            if state.rules.pay_for_wild:  # why a wild-rank card in `cards` played as itself
                players[-1]["played_natural"] = [str(c) for c in s.plays_natural()]
        pots: list[dict[str, JSON]] = []
        if result is not None:
            for pot, winners, shares in result.pots:
                entry: dict[str, JSON] = {
                    "amount": pot.amount,
                    "eligible": list(pot.eligible),
                    "winners": list(winners),
                    "shares": [{"seat": seat, "chips": chips} for seat, chips in sorted(shares.items())],
                }
                if pot.returned:
                    entry["returned"] = True
                pots.append(entry)
        return {
            "players": players,
            "pots": pots,
            "community": [str(c) for c in state.community],
            "rainouts": state.rainouts,
            "showdown": bool(result and result.showdown),
            "cards_used": len(state.dealt),
        }

    def payouts(self, settlement: Mapping[str, Any]) -> list[dict[str, int]]:
        """Per seat: the chips pushed to it (`pay`), what it put in the pot (`collect`), the net."""
        return [
            {"seat": p["seat"], "pay": p["won"], "collect": p["put"], "net": p["net"]}
            for p in settlement.get("players", [])
        ]

    def bets(self, settlement: Mapping[str, Any]) -> list[tuple[str, int, int]]:
        """(bet type, chips put in, chips won) for every player, for the meters."""
        return [("pot", p["put"], p["won"]) for p in settlement.get("players", [])]

    def round_file(self, state: BaseballState) -> dict[str, JSON]:
        """The hand as a REPLAY.md round file: replaying it gives this hand's settlement."""
        return {
            "game": self.name,
            "rules": changed_rules(state.rules),
            "players": [{"seat": p.seat, "stack": p.stack} for p in state.players],
            "cards": [str(c) for c in state.dealt],
            "actions": [{"seat": a.seat, "action": a.action} for a in state.actions],
        }

    def parse_decision(self, doc: Mapping[str, Any], where: str) -> Event:
        """One action as a round file writes it; read without pydantic
        when plainly right (`plain.py`), else by its model (`api.py`)."""
        from controller.games.baseball.plain import action

        return action(doc, where)

    def parse_round_file(self, doc: Mapping[str, Any], *, seats: int | None = None) -> RoundInput:
        """Read a round file into its opening event, cards and actions; RuleError names what is wrong.
        `seats`: the table's seat count (None: a stud table's eight, as a round file says none). The
        round file is read without pydantic when it is plainly right (`plain.py`), else by its model (`api.py`)."""
        from controller.games.baseball.plain import round_input

        return round_input(doc, SEATS_MAX if seats is None else seats)


GAME = Baseball()


# --- validation ------------------------------------------------------------------------------


def validate_open(ev: OpenRound) -> None:
    """Raise RuleError (field, seat, rule) for any opening the table must refuse."""
    ev.rules.validate()
    seating = Seating(ev.table_seats, SEATS_MAX, "Baseball poker")
    if len(ev.players) < 2:
        raise RuleError("a hand needs at least two players", field="players")
    for i, p in enumerate(ev.players):
        where = f"players[{i}]"
        seating.take(p.seat, where)
        if isinstance(p.stack, bool) or not isinstance(p.stack, int) or p.stack < 1:
            raise RuleError(
                f"the stack must be a whole number of 1 or more chips, not {p.stack!r}",
                field=f"{where}.stack",
                seat=p.seat,
            )


def parse_rules(doc: object, where: str = "rules") -> BaseballRules:
    """Rule options from a round file or config; unknown keys and bad values are refused."""
    kwargs = rule_options(doc, BaseballRules, where)
    if "wild" in kwargs:
        wild = kwargs["wild"]
        if not isinstance(wild, list | tuple):
            raise RuleError('must be a list of ranks, such as ["3", "9"] (or [] for none)', field=f"{where}.wild")
        ranks = []
        for i, rank in enumerate(wild):
            if not isinstance(rank, str):
                raise RuleError(f"{rank!r} is not a rank; write 2-9, T, J, Q, K or A", field=f"{where}.wild[{i}]")
            text = rank.strip().upper()
            ranks.append("T" if text == "10" else text)
        kwargs["wild"] = tuple(ranks)
    rules = BaseballRules(**kwargs)
    rules.validate(where)
    return rules


def state_from_json(data: JSON) -> BaseballState:
    return from_json(BaseballState, data)
