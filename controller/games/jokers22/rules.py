"""Jokers 22: the California player-banker "No Bust" game of GAMES.md section 2, as a pure state machine.

Each spot with wagers plays one hand (two after a split) against the banker's (the designated
player's) hand. Nobody busts: a hand of 22 or more loses to a banker at 21 or less and pushes a
banker further from 22. The engine deals in the order of REPLAY.md, takes forced hits and stands
itself, and asks a spot's deciding player only where the rules leave a choice. The banker's second
card names the ACTION spot, from which the banker's stake covers the wagers "to the extent that
money covers".

    state = GAME.initial()
    opening = OpenRound(Jokers22Rules(), Banker(500), (SpotBet(1, (Wager("ann", 50),)),))
    state, fx = GAME.apply(state, opening)
    state, fx = GAME.apply(state, CardDealt(parse_card("9H")))   # ann's first card

Readings this module fixes where GAMES.md is silent:
a natural (A+A included) takes no more cards, for players and the banker; a natural may surrender
(surrender is allowed on any first two cards), so the table asks it "stand or surrender?", and a
natural that does not surrender stands and is never listed in a round file (`unlisted_action`:
the same for a 20 or 21 whose only choices are stand and surrender, except the first hand of a
split, whose stand is listed so that the second hand's stand or surrender reads as the second
hand's: `_listed`); the deciding player of
a hand is computed on that hand's stakes (after a split, each hand's own money); in rotation
coverage a player's money on a spot is covered hand 1 before hand 2; the time collection is paid
by each spot's original bettor, is not part of any net and is kept when a round is voided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

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
    from_json,
    only_keys,
    rule_options,
)
from controller.engine.cards import Card, Rank, ShoeComposition
from controller.games.round_game import RoundGame, Seating, changed_rules

Coverage = Literal["rotation", "collect-first"]
Result = Literal["win", "win 2 to 1", "push", "lose", "surrender", "void"]
PLAYS = ("hit", "stand", "double", "split", "surrender")
ANSWERS = ("match", "decline")
ACTIONS = (*PLAYS, *ANSWERS)
#: A Jokers 22 table has seven spots (its table card); a table's config may have fewer (`table.seats`).
SPOTS_MAX = 7
SPOTS = range(1, SPOTS_MAX + 1)

#: The ACTION value of each card (GAMES.md default mapping): A=1, 2-9, T=10, J=11, Q=12, K=13, joker=14.
DEFAULT_ACTION_VALUES: dict[str, int] = {
    **{Rank(r).symbol: (1 if r == Rank.ACE else int(r)) for r in Rank},
    "JK": 14,
}


class SpotError(RuleError):
    """A refusal about a spot: `seat` holds the spot number, and the text says "spot 2"."""

    def __init__(self, rule: str, *, field: str = "", spot: int | None = None) -> None:
        super().__init__(rule, field=field, seat=spot, place="spot")


# --- hand values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Total:
    """What a hand counts: `value` (an ace as 11 where that keeps it at 21 or less: `soft`)."""

    value: int
    soft: bool = False
    natural: bool = False  # the first two cards are JK+JK, A+A or JK+A
    joker: bool = False  # a joker and another card: a hard 21 that takes no more cards

    def __str__(self) -> str:
        if self.natural:
            return "natural"
        return f"soft {self.value}" if self.soft else str(self.value)


def _points(card: Card) -> int:
    assert card.rank is not None
    return 1 if card.rank == Rank.ACE else min(int(card.rank), 10)


def hand_total(cards: Sequence[Card]) -> Total:
    """The total of a hand (GAMES.md section 2: values, soft totals, the joker, naturals)."""
    if len(cards) == 2 and all(c.is_joker or c.rank == Rank.ACE for c in cards):
        aces = sum(c.rank == Rank.ACE for c in cards)
        return Total(21 if aces < 2 else 12, soft=aces == 2, natural=True, joker=aces < 2)
    if any(c.is_joker for c in cards):
        return Total(21, joker=True) if len(cards) >= 2 else Total(0, joker=True)
    hard = sum(_points(c) for c in cards)
    if any(c.rank == Rank.ACE for c in cards) and hard + 10 <= 21:
        return Total(hard + 10, soft=True)
    return Total(hard)


def is_pair_of_jokers(cards: Sequence[Card]) -> bool:
    return len(cards) == 2 and all(c.is_joker for c in cards)


def compare(player: Sequence[Card], banker: Sequence[Card]) -> Result:
    """The result of a player's hand against the banker's (the comparison table of GAMES.md)."""
    p, b = hand_total(player), hand_total(banker)
    if p.natural and b.natural:
        return "win" if is_pair_of_jokers(player) and not is_pair_of_jokers(banker) else "push"
    if p.natural:
        return "win 2 to 1" if is_pair_of_jokers(player) else "win"
    if b.natural:
        return "lose"
    if p.value <= 21:
        if b.value >= 22 or p.value > b.value:
            return "win"
        return "push" if p.value == b.value else "lose"
    if b.value <= 21:
        return "lose"
    return "push" if p.value < b.value else "lose"


def player_options(total: Total) -> tuple[str, ...]:
    """Hit and stand as the forced drawing rules allow them (a natural or a joker hand stands)."""
    if total.natural or total.joker or total.value >= 20:
        return ("stand",)
    if total.value <= 11:
        return ("hit",)
    return ("hit", "stand")


def unlisted_action(allowed: Sequence[str]) -> str | None:
    """What a round file leaves unlisted for a decision with these choices, or None.

    A hand whose only choices are stand and surrender (20, 21 or a natural on its first two cards)
    stands when none of its players surrenders: REPLAY.md lists a surrender only when it is taken
    and never lists a forced action, so the table's round files do not list that stand either."""
    return "stand" if set(allowed) == {"stand", "surrender"} else None


def stands_unlisted(state: Jokers22State, ev: Event) -> bool:
    """Whether the hand deciding now stands unlisted before `ev`, the round's next decision: its
    only choices are stand and surrender, and `ev` is for another spot, or for the spot's next hand
    after a split (a play this hand may not take). Nobody surrendered, so the hand stands; the
    round may need cards before `ev` (the next hand's second card), which `tablectl replay` deals
    after taking the stand."""
    need = _need(state)
    return (
        isinstance(ev, Decision)
        and need.kind == "decision"
        and need.why == "play"
        and need.spot is not None
        and unlisted_action(need.allowed) == "stand"
        and (ev.spot != need.spot or (ev.action not in need.allowed and need.hand < len(state.spot(ev.spot).hands)))
    )


def _listed(state: Jokers22State, need: Need) -> bool:
    """Whether the round file lists a stand at `need`. Not where the only choices are stand and
    surrender (REPLAY.md never lists that forced stand), except on a hand after which the spot plays
    another (the first hand of a split, with surrender after a split allowed): there the next hand's
    stand or surrender would otherwise read as this hand's, and the round would replay to another
    settlement. Listed, the stand is this hand's choice, read in order as REPLAY.md reads every
    decision where the rules leave a choice."""
    assert need.spot is not None
    return unlisted_action(need.allowed) != "stand" or need.hand < len(state.spot(need.spot).hands)


def banker_hits(total: Total) -> bool:
    """The banker stands on hard 17 and above and hits soft 17 and below (a natural stands)."""
    if total.natural or total.joker:
        return False
    return total.value < 17 or (total.value == 17 and total.soft)


# --- rules and inputs ------------------------------------------------------------------------


@dataclass(frozen=True)
class Jokers22Rules:
    """The table's rule options (GAMES.md section 2 defaults); a round file may override any."""

    decks: int = 6
    jokers_per_deck: int = 1
    coverage: Coverage = "rotation"
    time_fee: int = 0  # time collection per spot with wagers, paid by its original bettor
    min_wager: int = 1
    max_wager: int = 10000
    double_after_split: bool = False
    surrender_after_split: bool = False
    action_values: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_ACTION_VALUES))

    def validate(self, where: str = "rules") -> None:
        """Raise RuleError naming the option if any option is out of its range."""
        for name, low in (("decks", 1), ("jokers_per_deck", 0), ("time_fee", 0), ("min_wager", 1), ("max_wager", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RuleError(f"must be a whole number of {low} or more, not {value!r}", field=f"{where}.{name}")
        if self.min_wager > self.max_wager:
            raise RuleError("the table minimum is above its maximum", field=f"{where}.min_wager")
        if self.coverage not in get_args(Coverage):
            raise RuleError(f"must be one of {list(get_args(Coverage))}", field=f"{where}.coverage")
        for name in ("double_after_split", "surrender_after_split"):
            if not isinstance(getattr(self, name), bool):
                raise RuleError(f"must be true or false, not {getattr(self, name)!r}", field=f"{where}.{name}")
        if not isinstance(self.action_values, Mapping) or set(self.action_values) != set(DEFAULT_ACTION_VALUES):
            raise RuleError(
                f"must give a value to each of {list(DEFAULT_ACTION_VALUES)}", field=f"{where}.action_values"
            )
        for card, value in self.action_values.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RuleError(
                    f"must be a whole number of 1 or more, not {value!r}", field=f"{where}.action_values.{card}"
                )

    @property
    def shoe(self) -> ShoeComposition:
        return ShoeComposition(decks=self.decks, jokers_per_deck=self.jokers_per_deck)


@dataclass(frozen=True)
class Wager:
    """One player's money placed on a spot, in chip units."""

    player: str
    amount: int


@dataclass(frozen=True)
class SpotBet:
    """A spot's wagers in the order they were placed: the first is the spot's original bettor."""

    spot: int
    wagers: tuple[Wager, ...]


@dataclass(frozen=True)
class Banker:
    """The banker's (designated player's) stake: the most the banker can win."""

    stake: int
    player: str | None = None


@event("jokers-22.open")
@dataclass(frozen=True)
class OpenRound(Event):
    """The dealer locks the wagers and the banker's stake; the round begins."""

    rules: Jokers22Rules
    banker: Banker
    spots: tuple[SpotBet, ...]
    #: The spots of the table (its config's `table.seats`); a round file has none (REPLAY.md): seven.
    table_seats: int = SPOTS_MAX


@event("jokers-22.decision")
@dataclass(frozen=True)
class Decision(Event):
    """A choice at a spot: hit, stand, double, split by the deciding player (`player` optional);
    match or decline after a double or split, and surrender, by the named `player`."""

    spot: int
    action: str
    player: str | None = None


# --- effects ---------------------------------------------------------------------------------


@effect("jokers-22.round-opened")
@dataclass(frozen=True)
class RoundOpened(Effect):
    spots: tuple[int, ...]
    wagered: int
    stake: int


@effect("jokers-22.time-collected")
@dataclass(frozen=True)
class TimeCollected(Effect):
    """The time collection of a spot, taken before the deal and kept apart from the wagers."""

    spot: int
    player: str
    amount: int


@effect("jokers-22.next-card")
@dataclass(frozen=True)
class NextCard(Effect):
    """The next card from the shoe goes to this spot's hand, or to the banker (spot None)."""

    spot: int | None
    hand: int
    why: str


@effect("jokers-22.card-placed")
@dataclass(frozen=True)
class CardPlaced(Effect):
    spot: int | None
    hand: int
    card: Card
    total: str


@effect("jokers-22.forced")
@dataclass(frozen=True)
class ForcedAction(Effect):
    """The engine hit or stood a hand for its player, because the drawing rules leave no choice."""

    spot: int
    hand: int
    action: str
    total: str


@effect("jokers-22.decision-due")
@dataclass(frozen=True)
class DecisionDue(Effect):
    spot: int
    hand: int
    player: str
    total: str
    allowed: tuple[str, ...]


@effect("jokers-22.decision-taken")
@dataclass(frozen=True)
class DecisionTaken(Effect):
    """A decision was accepted; `amount` is the money it moved (the extra wager, half a surrender)."""

    spot: int
    hand: int
    player: str
    action: str
    amount: int = 0


@effect("jokers-22.action-spot")
@dataclass(frozen=True)
class ActionSpot(Effect):
    """The banker's second card names the ACTION spot, where the banker's coverage starts."""

    card: Card
    value: int
    spot: int

    def notice(self) -> str | None:
        return f"ACTION spot: {self.spot} (banker's second card {self.card})"


@effect("jokers-22.covered")
@dataclass(frozen=True)
class Covered(Effect):
    """How much of one wager the banker covers (rotation); the rest goes back to the player."""

    spot: int
    hand: int
    player: str
    amount: int
    covered: int


@effect("jokers-22.player-settled")
@dataclass(frozen=True)
class PlayerSettled(Effect):
    """What the dealer does for this player at this spot: pay `pay`, take `collect`."""

    player: str
    spot: int
    pay: int
    collect: int
    net: int


@effect("jokers-22.banker-settled")
@dataclass(frozen=True)
class BankerSettled(Effect):
    net: int


@effect("jokers-22.round-settled")
@dataclass(frozen=True)
class RoundSettled(Effect):
    cards_used: int
    wagered: int
    paid: int
    collected: int
    time_collected: int


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stake:
    """One player's money on one hand (`amount` includes a double)."""

    player: str
    amount: int
    doubled: bool = False
    surrendered: bool = False


@dataclass(frozen=True)
class HandState:
    cards: tuple[Card, ...]
    stakes: tuple[Stake, ...]  # in the spot's wager order
    from_split: bool = False
    doubled: bool = False
    stood: bool = False  # takes no more cards
    acted: bool = False  # a decision other than surrender was taken: the first-two-card options are gone
    owed: bool = False  # a hit or double was called: the next card is this hand's
    pending: str = ""  # "double" or "split" while the other players answer match or decline
    asking: tuple[str, ...] = ()  # players still to answer, in wager order
    matched: tuple[str, ...] = ()

    @property
    def total(self) -> Total:
        return hand_total(self.cards)

    def live(self) -> tuple[Stake, ...]:
        return tuple(s for s in self.stakes if not s.surrendered)


@dataclass(frozen=True)
class SpotState:
    spot: int
    wagers: tuple[Wager, ...]
    hands: tuple[HandState, ...]

    def order(self, player: str) -> int:
        return next(i for i, w in enumerate(self.wagers) if w.player == player)


@dataclass(frozen=True)
class Jokers22State:
    """The table's Jokers 22 state: the round in play (or the last one)."""

    phase: Phase = "idle"
    rules: Jokers22Rules = field(default_factory=Jokers22Rules)
    banker: Banker = field(default_factory=lambda: Banker(stake=1))
    spots: tuple[SpotState, ...] = ()
    banker_cards: tuple[Card, ...] = ()
    dealt: tuple[Card, ...] = ()  # every card the round used, in shoe order
    decisions: tuple[Decision, ...] = ()  # every decision accepted, in order (the round file's list)
    dead_cards: tuple[Card, ...] = ()
    void: Void | None = None

    def spot(self, number: int) -> SpotState:
        return next(s for s in self.spots if s.spot == number)


def deciding_player(spot: SpotState, hand: HandState) -> str | None:
    """The player with the most money in action on the hand; ties: the original bettor, then
    the earlier wager. None when every stake on the hand has surrendered."""
    live = hand.live()
    if not live:
        return None
    return max(live, key=lambda s: (s.amount, -spot.order(s.player))).player


# --- what the round needs next ---------------------------------------------------------------


@dataclass(frozen=True)
class Need:
    kind: Literal["card", "decision", "stand", "settle"]
    spot: int | None = None  # None: the banker
    hand: int = 1
    why: str = ""
    player: str = ""
    allowed: tuple[str, ...] = ()


def _first_two(hand: HandState) -> bool:
    return len(hand.cards) == 2 and not hand.acted


def _can_double(rules: Jokers22Rules, hand: HandState) -> str:
    """Why the hand may not double down, or "" when it may."""
    if not _first_two(hand):
        return "double down only on the first two cards"
    if hand.from_split and not rules.double_after_split:
        return "no double down after a split"
    if any(c.is_joker or c.rank == Rank.ACE for c in hand.cards):
        return "no double down on a hand holding an ace or a joker"
    return ""


def _can_split(spot: SpotState, hand: HandState) -> str:
    if hand.from_split or len(spot.hands) > 1:
        return "a spot splits only once"
    if not _first_two(hand):
        return "split only the first two cards"
    first, second = hand.cards
    if first.is_joker or second.is_joker:
        return "jokers may not be split"
    if first.rank != second.rank:
        return "only a pair of equal rank may be split"
    if first.rank == Rank.ACE:
        return "aces may not be split"
    return ""


def _can_surrender(state: Jokers22State, hand: HandState, player: str | None = None) -> str:
    if state.banker_cards and state.banker_cards[0].is_joker:
        return "no surrender when the banker's first card is a joker"
    if hand.from_split and not state.rules.surrender_after_split:
        return "no surrender after a split"
    if not _first_two(hand):
        return "surrender only on the first two cards, before the spot's first other decision"
    if player is not None:
        stake = next((s for s in hand.stakes if s.player == player), None)
        if stake is None:
            return f"{player} has no wager on this hand"
        if stake.surrendered:
            return f"{player} has already surrendered"
    elif not hand.live():
        return "every wager on the hand has surrendered"
    return ""


def _hand_need(state: Jokers22State, spot: SpotState, number: int, hand: HandState) -> Need | None:
    if hand.stood or not hand.live():
        return None
    if len(hand.cards) < 2 or hand.owed:
        why = "split" if len(hand.cards) < 2 else "double" if hand.doubled else "hit"
        return Need("card", spot.spot, number, why)
    total = hand.total
    if hand.asking:
        return Need("decision", spot.spot, number, hand.pending, hand.asking[0], ANSWERS)
    options = player_options(total)
    extra = tuple(
        action
        for action, why_not in (
            ("double", _can_double(state.rules, hand)),
            ("split", _can_split(spot, hand)),
            ("surrender", _can_surrender(state, hand)),
        )
        if not why_not
    )
    if extra or len(options) == 2:
        player = deciding_player(spot, hand)
        assert player is not None
        return Need("decision", spot.spot, number, "play", player, (*options, *extra))
    if options == ("hit",):
        return Need("card", spot.spot, number, "forced hit")
    return Need("stand", spot.spot, number, "forced stand")


def _need(state: Jokers22State) -> Need:
    """The next thing the dealing round needs, in the dealing order of REPLAY.md."""
    if not state.banker_cards:
        for spot in state.spots:
            if not spot.hands[0].cards:
                return Need("card", spot.spot, 1, "deal")
        return Need("card", None, 1, "deal")
    for spot in state.spots:
        if len(spot.hands) == 1 and len(spot.hands[0].cards) < 2:
            return Need("card", spot.spot, 1, "deal")
    for spot in state.spots:
        for number, hand in enumerate(spot.hands, 1):
            need = _hand_need(state, spot, number, hand)
            if need is not None:
                return need
    if len(state.banker_cards) < 2:
        return Need("card", None, 1, "banker's second card")
    if banker_hits(hand_total(state.banker_cards)):
        return Need("card", None, 1, "banker draws")
    return Need("settle")


def _who(state: Jokers22State, need: Need) -> dict[str, JSON]:
    assert need.spot is not None
    hand = state.spot(need.spot).hands[need.hand - 1]
    return {"spot": need.spot, "hand": need.hand, "player": need.player, "total": str(hand.total)}


def surrender_allowed(state: Jokers22State, spot: int) -> tuple[str, ...]:
    """The players who may still surrender on `spot` now (for the dealer screen), in wager order."""
    need = _need(state) if state.phase == "dealing" else Need("settle")
    if need.kind != "decision" or need.spot != spot or "surrender" not in need.allowed:
        return ()
    hand = state.spot(spot).hands[need.hand - 1]
    return tuple(s.player for s in hand.live())


# --- settlement ------------------------------------------------------------------------------


@dataclass(frozen=True)
class WagerResult:
    spot: int
    hand: int
    player: str
    amount: int
    result: Result
    covered: int | None  # rotation: the part of the wager the banker's stake covers
    net: int


def action_spot(state: Jokers22State) -> tuple[int, int]:
    """(value of the banker's second card, the ACTION spot it names)."""
    card = state.banker_cards[1]
    value = state.rules.action_values[str(card)[:-1] if not card.is_joker else "JK"]
    spots = [s.spot for s in state.spots]
    return value, spots[(value - 1) % len(spots)]


def _clockwise(state: Jokers22State, start: int) -> list[tuple[int, int, Stake]]:
    """(spot, hand, stake) in coverage order: spots clockwise from `start`; in a spot the original
    bettor first, then the others in the order they were placed; a player's hand 1 before hand 2."""
    i = next(n for n, s in enumerate(state.spots) if s.spot == start)
    out: list[tuple[int, int, Stake]] = []
    for spot in (*state.spots[i:], *state.spots[:i]):
        stakes = [(h, s) for h, hand in enumerate(spot.hands, 1) for s in hand.stakes]
        stakes.sort(key=lambda hs: (spot.order(hs[1].player), hs[0]))
        out.extend((spot.spot, h, s) for h, s in stakes)
    return out


def _half_for_banker(amount: int) -> int:
    """What a surrender loses: half, an odd half rounded in the banker's favour."""
    return (amount + 1) // 2


def settle_wagers(state: Jokers22State) -> list[WagerResult]:
    """Every wager's result and net, in coverage order, under the round's coverage mode."""
    if state.phase == "void":
        return [
            WagerResult(sp.spot, h, s.player, s.amount, "void", None, 0)
            for sp in state.spots
            for h, hand in enumerate(sp.hands, 1)
            for s in hand.stakes
        ]
    _, start = action_spot(state)
    order = _clockwise(state, start)

    def result(spot: int, hand: int, stake: Stake) -> Result:
        if stake.surrendered:
            return "surrender"
        return compare(state.spot(spot).hands[hand - 1].cards, state.banker_cards)

    out: list[WagerResult] = []
    if state.rules.coverage == "rotation":
        stake_left = state.banker.stake
        for spot, hand, stake in order:
            covered = min(stake.amount, stake_left)
            stake_left -= covered
            res = result(spot, hand, stake)
            net = {
                "win": covered,
                "win 2 to 1": 2 * covered,
                "push": 0,
                "lose": -covered,
                "surrender": -_half_for_banker(covered),
            }[res]
            out.append(WagerResult(spot, hand, stake.player, stake.amount, res, covered, net))
        return out
    # collect-first: every loss goes into the bank before any winner is paid from it
    results = [(spot, hand, stake, result(spot, hand, stake)) for spot, hand, stake in order]
    bank = state.banker.stake
    nets: list[int] = []
    for _, _, stake, res in results:
        loss = stake.amount if res == "lose" else _half_for_banker(stake.amount) if res == "surrender" else 0
        bank += loss
        nets.append(-loss)
    for i, (_, _, stake, res) in enumerate(results):
        if res in ("win", "win 2 to 1"):
            paid = min(stake.amount * (2 if res == "win 2 to 1" else 1), bank)
            bank -= paid
            nets[i] = paid
    return [
        WagerResult(spot, hand, stake.player, stake.amount, res, None, net)
        for (spot, hand, stake, res), net in zip(results, nets, strict=True)
    ]


def player_nets(state: Jokers22State, wagers: Sequence[WagerResult]) -> list[dict[str, Any]]:
    """Per player per spot, in spot then wager order: pay (winnings), collect (losses), net."""
    out = []
    for spot in state.spots:
        for w in spot.wagers:
            mine = [r for r in wagers if r.spot == spot.spot and r.player == w.player]
            pay = sum(r.net for r in mine if r.net > 0)
            collect = -sum(r.net for r in mine if r.net < 0)
            out.append({"player": w.player, "spot": spot.spot, "pay": pay, "collect": collect, "net": pay - collect})
    return out


def time_collection(state: Jokers22State) -> list[dict[str, Any]]:
    fee = state.rules.time_fee
    return [{"spot": s.spot, "player": s.wagers[0].player, "amount": fee} for s in state.spots] if fee else []


# --- the game --------------------------------------------------------------------------------


class Jokers22(RoundGame[Jokers22State, OpenRound, Decision]):
    """The Jokers 22 rules as a pure state machine (see controller/engine/README.md); what every
    game's rules share is `RoundGame`'s (controller/games/round_game.py)."""

    name = "jokers-22"
    title = "Jokers 22"
    nobody_owed = "no hand"
    state_type = Jokers22State
    open_type = OpenRound
    decision_type = Decision
    rules_type = Jokers22Rules

    def open_shoe(self, open_event: OpenRound) -> ShoeComposition:
        return open_event.rules.shoe

    def dealing(self, state: Jokers22State) -> Awaiting:
        need = _need(state)
        if need.kind == "decision":
            return Awaiting("decision", who=_who(state, need), allowed=need.allowed)
        assert need.kind == "card", "a dealing round always needs a card or a decision"
        target: dict[str, JSON] = {"banker": True} if need.spot is None else {"spot": need.spot, "hand": need.hand}
        if need.why == "double":
            target["face"] = "down"  # GAMES.md: a double down is one card, face down
        return Awaiting("card", target=target)

    # -- opening ------------------------------------------------------------------------------

    def open_round(self, state: Jokers22State, ev: OpenRound) -> tuple[Jokers22State, tuple[Effect, ...]]:
        validate_open(ev)
        spots = tuple(
            SpotState(
                spot=b.spot,
                wagers=b.wagers,
                hands=(HandState(cards=(), stakes=tuple(Stake(w.player, w.amount) for w in b.wagers)),),
            )
            for b in sorted(ev.spots, key=lambda b: b.spot)
        )
        new = Jokers22State(phase="dealing", rules=ev.rules, banker=ev.banker, spots=spots)
        effects: list[Effect] = [
            RoundOpened(
                spots=tuple(s.spot for s in spots),
                wagered=sum(w.amount for s in spots for w in s.wagers),
                stake=ev.banker.stake,
            )
        ]
        effects.extend(TimeCollected(**t) for t in time_collection(new))
        return self._advance(new, effects)

    # -- cards --------------------------------------------------------------------------------

    def deal(self, state: Jokers22State, card: Card) -> tuple[Jokers22State, tuple[Effect, ...]]:
        need = _need(state)
        if need.kind != "card":
            return self.dead(
                state, card, f"no hand is owed a card: spot {need.spot}, hand {need.hand} must decide first"
            )
        state = dataclasses.replace(state, dealt=(*state.dealt, card))
        effects: list[Effect] = []
        if need.spot is None:
            state = dataclasses.replace(state, banker_cards=(*state.banker_cards, card))
            effects.append(CardPlaced(None, 1, card, str(hand_total(state.banker_cards))))
            if len(state.banker_cards) == 2:
                value, spot = action_spot(state)
                effects.append(ActionSpot(card=card, value=value, spot=spot))
            return self._advance(state, effects)
        hand = state.spot(need.spot).hands[need.hand - 1]
        hand = dataclasses.replace(hand, cards=(*hand.cards, card), owed=False, stood=hand.doubled)
        state = _with_hand(state, need.spot, need.hand, hand)
        effects.append(CardPlaced(need.spot, need.hand, card, str(hand.total)))
        return self._advance(state, effects)

    # -- decisions ----------------------------------------------------------------------------

    def decide(self, state: Jokers22State, ev: Decision) -> tuple[Jokers22State, tuple[Effect, ...]]:
        where = f"decisions[{len(state.decisions)}]"

        def refuse(rule: str) -> SpotError:
            return SpotError(rule, field=where, spot=ev.spot)

        if state.phase != "dealing":
            raise refuse("no round is being dealt")
        if ev.action not in ACTIONS:
            raise refuse(f"{ev.action!r} is not a decision; the decisions are {', '.join(ACTIONS)}")
        need = _need(state)
        if need.kind != "decision":
            target = "the banker" if need.spot is None else f"spot {need.spot}, hand {need.hand}"
            raise refuse(f"no decision is due: the next card goes to {target}")
        assert need.spot is not None
        if stands_unlisted(state, ev):
            # Stand or surrender, and the next decision is for another spot (or for the spot's
            # next hand after a split): nobody surrendered, so the hand stands (a round file lists
            # neither), and the decision is checked against what the round needs after it. A
            # decision at this hand that it may not take is refused below, naming the rule.
            stood = _with_hand(
                state, need.spot, need.hand, dataclasses.replace(self._hand(state, need), stood=True, acted=True)
            )
            if need.hand < len(state.spot(need.spot).hands):
                stood = _log(stood, Decision(need.spot, "stand"))  # listed: see _listed
            forced: list[Effect] = [ForcedAction(need.spot, need.hand, "stand", str(self._hand(state, need).total))]
            stood, before = self._advance(stood, forced)
            after, effects = self.decide(stood, ev)
            return after, (*before, *effects)
        allowed = ", ".join(need.allowed)
        if ev.spot != need.spot:
            raise refuse(
                f"out of turn: spot {need.spot}, hand {need.hand} ({need.player}) decides now; allowed: {allowed}"
            )
        spot = state.spot(need.spot)
        hand = spot.hands[need.hand - 1]
        if need.why in ("double", "split"):
            if ev.action not in ANSWERS:
                raise refuse(f"{need.player} must first match or decline the {need.why}; allowed: {allowed}")
            if ev.player != need.player:
                raise refuse(f"{need.player} answers the {need.why} next (wager order), not {ev.player}")
            return self._answer(state, ev, spot, need.hand, hand)
        if ev.action in ANSWERS:
            raise refuse(f"there is no double or split to {ev.action}; allowed: {allowed}")
        if ev.action == "surrender":
            if ev.player is None:
                raise refuse("a surrender names the player who surrenders")
            why_not = _can_surrender(state, hand, ev.player)
            if why_not:
                raise refuse(f"{why_not}; allowed: {allowed}")
            return self._surrender(state, ev, spot, need.hand, hand)
        if ev.player is not None and ev.player != need.player:
            raise refuse(
                f"{need.player} has the most money in action on the hand and decides; {ev.player} may not {ev.action}"
            )
        if ev.action not in need.allowed:
            raise refuse(f"{_why_not(state, spot, hand, ev.action)}; allowed: {allowed}")
        listed = ev.action != "stand" or _listed(state, need)
        return self._play(state, ev, spot, need.hand, hand, need.player, listed=listed)

    @staticmethod
    def _hand(state: Jokers22State, need: Need) -> HandState:
        assert need.spot is not None
        return state.spot(need.spot).hands[need.hand - 1]

    def _play(
        self,
        state: Jokers22State,
        ev: Decision,
        spot: SpotState,
        number: int,
        hand: HandState,
        player: str,
        *,
        listed: bool = True,
    ) -> tuple[Jokers22State, tuple[Effect, ...]]:
        """Carry out a deciding player's play. A stand that a round file does not list (stand or
        surrender, and nobody surrendered) is taken but kept out of the round's decisions."""
        hand = dataclasses.replace(hand, acted=True)
        amount = 0
        if ev.action == "hit":
            hand = dataclasses.replace(hand, owed=True)
        elif ev.action == "stand":
            hand = dataclasses.replace(hand, stood=True)
        else:
            amount = next(s.amount for s in hand.stakes if s.player == player)
            others = tuple(s.player for s in hand.live() if s.player != player)
            hand = dataclasses.replace(hand, pending=ev.action, asking=others, matched=(player,))
        state = _with_hand(state, spot.spot, number, hand)
        if listed:
            state = _log(state, ev)
        effects: list[Effect] = [DecisionTaken(spot.spot, number, player, ev.action, amount)]
        if hand.pending and not hand.asking:
            state = _carry_out(state, spot.spot, number)
        return self._advance(state, effects)

    def _answer(
        self, state: Jokers22State, ev: Decision, spot: SpotState, number: int, hand: HandState
    ) -> tuple[Jokers22State, tuple[Effect, ...]]:
        assert ev.player is not None
        matched = (*hand.matched, ev.player) if ev.action == "match" else hand.matched
        hand = dataclasses.replace(hand, asking=hand.asking[1:], matched=matched)
        amount = next(s.amount for s in hand.stakes if s.player == ev.player) if ev.action == "match" else 0
        state = _log(_with_hand(state, spot.spot, number, hand), ev)
        if not hand.asking:
            state = _carry_out(state, spot.spot, number)
        return self._advance(state, [DecisionTaken(spot.spot, number, ev.player, ev.action, amount)])

    def _surrender(
        self, state: Jokers22State, ev: Decision, spot: SpotState, number: int, hand: HandState
    ) -> tuple[Jokers22State, tuple[Effect, ...]]:
        stakes = tuple(dataclasses.replace(s, surrendered=True) if s.player == ev.player else s for s in hand.stakes)
        hand = dataclasses.replace(hand, stakes=stakes)
        amount = next(s.amount for s in stakes if s.player == ev.player)
        state = _log(_with_hand(state, spot.spot, number, hand), ev)
        assert ev.player is not None
        return self._advance(state, [DecisionTaken(spot.spot, number, ev.player, "surrender", amount)])

    def _advance(self, state: Jokers22State, effects: list[Effect]) -> tuple[Jokers22State, tuple[Effect, ...]]:
        """Take the forced stands, then say what comes next, or settle the round."""
        while True:
            need = _need(state)
            if need.kind == "stand":
                assert need.spot is not None
                hand = state.spot(need.spot).hands[need.hand - 1]
                state = _with_hand(state, need.spot, need.hand, dataclasses.replace(hand, stood=True))
                effects.append(ForcedAction(need.spot, need.hand, "stand", str(hand.total)))
                continue
            break
        if need.kind == "card":
            if need.why == "forced hit":
                assert need.spot is not None
                total = state.spot(need.spot).hands[need.hand - 1].total
                effects.append(ForcedAction(need.spot, need.hand, "hit", str(total)))
            effects.append(NextCard(need.spot, need.hand, need.why))
            return state, tuple(effects)
        if need.kind == "decision":
            who = _who(state, need)
            effects.append(DecisionDue(need.spot or 0, need.hand, need.player, str(who["total"]), need.allowed))
            return state, tuple(effects)
        state = dataclasses.replace(state, phase="settled")
        wagers = settle_wagers(state)
        effects.extend(Covered(w.spot, w.hand, w.player, w.amount, w.covered) for w in wagers if w.covered is not None)
        players = player_nets(state, wagers)
        effects.extend(PlayerSettled(**p) for p in players)
        effects.append(BankerSettled(net=-sum(p["net"] for p in players)))
        effects.append(
            RoundSettled(
                cards_used=len(state.dealt),
                wagered=sum(w.amount for w in wagers),
                paid=sum(p["pay"] for p in players),
                collected=sum(p["collect"] for p in players),
                time_collected=sum(t["amount"] for t in time_collection(state)),
            )
        )
        return state, tuple(effects)

    # -- voiding ------------------------------------------------------------------------------

    def returned(self, state: Jokers22State) -> dict[int, int]:
        return {s.spot: sum(st.amount for hand in s.hands for st in hand.stakes) for s in state.spots}

    # -- settlement and round files -----------------------------------------------------------

    def settled(self, state: Jokers22State) -> dict[str, JSON]:
        """The settlement's keys (REPLAY.md); players' nets and the banker's sum to zero. The time
        collection is listed apart and is in no net."""
        wagers = settle_wagers(state)
        players = player_nets(state, wagers)
        banker_net = -sum(p["net"] for p in players)
        return {
            "action_spot": action_spot(state)[1] if state.phase == "settled" else None,
            "coverage": state.rules.coverage,
            "players": [{"player": p["player"], "spot": p["spot"], "net": p["net"]} for p in players],
            "banker": {
                "player": state.banker.player,
                "stake": state.banker.stake,
                "cards": [str(c) for c in state.banker_cards],
                **_total_json(hand_total(state.banker_cards)),
                "net": banker_net,
            },
            "spots": [
                {
                    "spot": sp.spot,
                    "hands": [
                        {
                            "hand": h,
                            "cards": [str(c) for c in hand.cards],
                            **_total_json(hand.total),
                            "wagers": [
                                {
                                    "player": w.player,
                                    "amount": w.amount,
                                    "result": w.result,
                                    **({"covered": w.covered} if w.covered is not None else {}),
                                    "net": w.net,
                                }
                                for w in wagers
                                if w.spot == sp.spot and w.hand == h
                            ],
                        }
                        for h, hand in enumerate(sp.hands, 1)
                    ],
                }
                for sp in state.spots
            ],
            "time_collection": time_collection(state),
            "cards_used": len(state.dealt),
        }

    def payouts(self, settlement: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Per player per spot: what the dealer pays, takes, and the net ("seat" is the spot)."""
        out = []
        for spot in settlement.get("spots", []):
            for player in dict.fromkeys(w["player"] for hand in spot["hands"] for w in hand["wagers"]):
                nets = [w["net"] for hand in spot["hands"] for w in hand["wagers"] if w["player"] == player]
                pay = sum(n for n in nets if n > 0)
                collect = -sum(n for n in nets if n < 0)
                out.append(
                    {
                        "seat": spot["spot"],
                        "spot": spot["spot"],
                        "player": player,
                        "pay": pay,
                        "collect": collect,
                        "net": pay - collect,
                    }
                )
        return out

    def bets(self, settlement: Mapping[str, Any]) -> list[tuple[str, int, int]]:
        """(bet type, amount wagered, amount paid) for every wager, for the meters."""
        return [
            ("wager", w["amount"], max(w["net"], 0))
            for spot in settlement.get("spots", [])
            for hand in spot["hands"]
            for w in hand["wagers"]
        ]

    def round_file(self, state: Jokers22State) -> dict[str, JSON]:
        """The round as a REPLAY.md round file: replaying it gives this round's settlement."""
        banker: dict[str, JSON] = {"stake": state.banker.stake}
        if state.banker.player is not None:
            banker["player"] = state.banker.player
        return {
            "game": self.name,
            "rules": changed_rules(state.rules),
            "banker": banker,
            "spots": [
                {"spot": s.spot, "wagers": [{"player": w.player, "amount": w.amount} for w in s.wagers]}
                for s in state.spots
            ],
            "cards": [str(c) for c in state.dealt],
            "decisions": [
                {"spot": d.spot, "action": d.action, **({"player": d.player} if d.player is not None else {})}
                for d in state.decisions
            ],
        }

    def shoe_for_rules(self, doc: Mapping[str, Any]) -> ShoeComposition:
        return parse_rules(doc).shoe

    def parse_decision(self, doc: Mapping[str, Any], where: str) -> Event:
        """One decision as a round file writes it; read without pydantic
        when plainly right (`plain.py`), else by its model (`api.py`)."""
        from controller.games.jokers22.plain import decision

        return decision(doc, where)

    def parse_round_file(self, doc: Mapping[str, Any], *, seats: int | None = None) -> RoundInput:
        """Read a round file into its opening event, cards and decisions; RuleError names what is wrong.
        `seats`: the table's spot count (None: seven, as a round file says none). The round
        file's model (`api.py`, pydantic) is loaded when a round file is first read."""
        from controller.games.jokers22.plain import round_input

        return round_input(doc, SPOTS_MAX if seats is None else seats)


GAME = Jokers22()


def _total_json(total: Total) -> dict[str, JSON]:
    return {"total": total.value, "soft": total.soft, "natural": total.natural}


def _with_hand(state: Jokers22State, spot: int, number: int, hand: HandState) -> Jokers22State:
    def updated(s: SpotState) -> SpotState:
        hands = tuple(hand if i == number else h for i, h in enumerate(s.hands, 1))
        return dataclasses.replace(s, hands=hands)

    return dataclasses.replace(state, spots=tuple(updated(s) if s.spot == spot else s for s in state.spots))


def _log(state: Jokers22State, ev: Decision) -> Jokers22State:
    return dataclasses.replace(state, decisions=(*state.decisions, ev))


def _carry_out(state: Jokers22State, spot_number: int, number: int) -> Jokers22State:
    """Every answer is in: double the matched stakes and owe one card, or split the pair."""
    spot = state.spot(spot_number)
    hand = spot.hands[number - 1]
    matched = set(hand.matched)
    if hand.pending == "double":
        stakes = tuple(
            dataclasses.replace(s, amount=2 * s.amount, doubled=True) if s.player in matched else s for s in hand.stakes
        )
        done = dataclasses.replace(hand, stakes=stakes, doubled=True, owed=True, pending="", matched=())
        return _with_hand(state, spot_number, number, done)
    first, second = hand.cards
    one = HandState(cards=(first,), stakes=hand.stakes, from_split=True)
    two = HandState(
        cards=(second,),
        stakes=tuple(Stake(s.player, s.amount) for s in hand.stakes if s.player in matched),
        from_split=True,
    )
    split = dataclasses.replace(spot, hands=(one, two))
    return dataclasses.replace(state, spots=tuple(split if s.spot == spot_number else s for s in state.spots))


def _why_not(state: Jokers22State, spot: SpotState, hand: HandState, action: str) -> str:
    """The rule that forbids `action` on this hand now."""
    total = hand.total
    if action == "hit":
        if total.natural:
            return "a natural takes no more cards"
        if total.joker:
            return "a hand holding a joker is a hard 21 and takes no more cards"
        return f"the player must stand on {total}"
    if action == "stand":
        return f"the player must hit {total}"
    if action == "double":
        return _can_double(state.rules, hand)
    return _can_split(spot, hand)


# --- validation ------------------------------------------------------------------------------


def validate_open(ev: OpenRound) -> None:
    """Raise RuleError (field, spot, rule) for any wager or stake the table must refuse."""
    rules = ev.rules
    rules.validate()
    seating = Seating(ev.table_seats, SPOTS_MAX, "Jokers 22", "spot")
    stake = ev.banker.stake
    if isinstance(stake, bool) or not isinstance(stake, int) or stake < 1:
        raise RuleError(
            f"the banker's stake must be a whole number of 1 or more chips, not {stake!r}", field="banker.stake"
        )
    if ev.banker.player is not None and (not isinstance(ev.banker.player, str) or not ev.banker.player.strip()):
        raise RuleError("the banker's name must be text", field="banker.player")
    if not ev.spots:
        raise RuleError("a round needs at least one spot with a wager", field="spots")
    for i, bet in enumerate(ev.spots):
        where = f"spots[{i}]"
        seating.take(bet.spot, where)
        if not bet.wagers:
            raise SpotError("a spot in the round has at least one wager", field=f"{where}.wagers", spot=bet.spot)
        players: set[str] = set()
        for j, w in enumerate(bet.wagers):
            at = f"{where}.wagers[{j}]"
            if not isinstance(w.player, str) or not w.player.strip():
                raise SpotError(f"the player must be named, not {w.player!r}", field=f"{at}.player", spot=bet.spot)
            if w.player in players:
                raise SpotError(f"{w.player} has two wagers on the spot", field=f"{at}.player", spot=bet.spot)
            if w.player == ev.banker.player:
                raise SpotError(
                    f"{w.player} is the banker and may not bet on a spot", field=f"{at}.player", spot=bet.spot
                )
            players.add(w.player)
            if isinstance(w.amount, bool) or not isinstance(w.amount, int):
                raise SpotError(
                    f"the wager must be a whole number of chips, not {w.amount!r}", field=f"{at}.amount", spot=bet.spot
                )
            if not rules.min_wager <= w.amount <= rules.max_wager:
                raise SpotError(
                    f"the wager ({w.amount}) must be between {rules.min_wager} and {rules.max_wager}",
                    field=f"{at}.amount",
                    spot=bet.spot,
                )


def parse_rules(doc: object, where: str = "rules") -> Jokers22Rules:
    """Rule options from a round file or config; unknown keys and bad values are refused."""
    kwargs = rule_options(doc, Jokers22Rules, where)
    if "action_values" in kwargs:
        values = kwargs["action_values"]
        if not isinstance(values, Mapping):
            raise RuleError("must be an object of card: value", field=f"{where}.action_values")
        only_keys(values, set(DEFAULT_ACTION_VALUES), f"{where}.action_values")
        kwargs["action_values"] = {**DEFAULT_ACTION_VALUES, **values}  # a round file names only what it changes
    rules = Jokers22Rules(**kwargs)
    rules.validate(where)
    return rules


def state_from_json(data: JSON) -> Jokers22State:
    return from_json(Jokers22State, data)
