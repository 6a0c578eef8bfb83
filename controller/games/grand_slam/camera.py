"""What the overhead camera's view means at a Grand Slam table.

Zones follow the layout's names: `seatN.first|second|third|home|three_outs|poker_bonus`, their
`.payout` circles beside them, `seatN.puck`. A base wager that wins stands on home plate, so its
payout is placed in `seatN.home.payout`; a side bet's in its own payout circle.

- Before a round, the wagers on the felt and the blind puck are the proposal of the next round.
- After the first card, a wager that changes other than as the cards moved it is past posting.
- When the dealer confirms the payouts, each payout circle must hold what the engine owes, and
  every zone where a losing wager stood must be empty (payout-mismatch otherwise). A payout the
  camera is unsure of (its frames disagree, a check failed, its frames still settling) is
  neither passed nor failed: the check stays open on it, with the camera's reason, and the
  camera's first sure reading of that stack decides it (verified, or payout-mismatch); a hand
  over it or the stack taken first closes it as not checked, never passed or failed.
- A stack the reader finds out of square is the dealer's to put right: "square the stack".
- In simulation, the dealer's hands move each stack where its card sends it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

from controller.engine.base import Effect, RoundVoided
from controller.games.base import SceneView, TableView
from controller.games.grand_slam.rules import (
    BASES,
    SIDE_BETS,
    BlindSwitchedOff,
    GrandSlamScored,
    RoundSettled,
    SeatState,
    StackMoved,
)
from controller.journal.entries import ConfirmPressed, RoundOpened, TableEntry

WAGER_SPOTS = (*BASES, *SIDE_BETS)
PAYOUT_SPOTS = (*BASES, "home", *SIDE_BETS)  # a betting seat's zones: each has its payout circle
SPOT_WORDS = {
    "first": "first base",
    "second": "second base",
    "third": "third base",
    "home": "home plate",
    "three_outs": "3 outs insurance",
    "poker_bonus": "poker bonus",
}
_ZONE = re.compile(r"^seat([1-9][0-9]?)\.([a-z_]+)(\.payout)?$")


def parse_zone(name: str) -> tuple[int, str, bool] | None:
    """("seat3.first.payout") -> (3, "first", True); None for a puck spot or a foreign name."""
    match = _ZONE.match(name)
    if match is None or match.group(2) == "puck":
        return None
    return int(match.group(1)), match.group(2), match.group(3) is not None


def zone_words(name: str) -> str:
    """A zone as the dealer says it: "Seat 3 first base", "Seat 3 home plate payout"."""
    parsed = parse_zone(name)
    if parsed is None:
        return name
    seat, spot, payout = parsed
    return f"Seat {seat} {SPOT_WORDS.get(spot, spot)}{' payout' if payout else ''}"


def doubt_words(state: str, why: str) -> str:
    """Why a zone has no value, for the dealer and the supervisor: a stack out of square is the
    dealer's to put right ("square the stack"), anything else the camera's reason."""
    if "not square" in why:
        return "square the stack"
    return f"{state}: {why}" if why else state


def _chips(value: int | None) -> str:
    return "nothing" if not value else str(value)


def chips_for(amount: int) -> tuple[int, ...]:
    """A stack for `amount` of one colour where it can be (what the reader reads best), at most
    16 chips of 5 before larger chips."""
    for chip, most in ((5, 16), (25, 8), (100, 8), (1, 10)):
        if amount % chip == 0 and amount // chip <= most:
            return (chip,) * (amount // chip)
    out: list[int] = []
    for chip in (1000, 500, 100, 25, 5, 1):
        while amount >= chip:
            out.append(chip)
            amount -= chip
    return tuple(sorted(out, reverse=True))


class GrandSlamCamera:
    """The camera's meaning for one Grand Slam table (rebuilt from the journal with the table)."""

    def __init__(self) -> None:
        # Where each wager (named by the base it was bet on) has stood this round, per the engine:
        # the dealer moves the chips after the card, so a zone may show any of these for a while.
        self.stood: dict[tuple[int, str], set[str]] = {}
        self.home_left: dict[int, int] = {}  # chips left on a home plate when the round opened
        self.flagged: set[tuple[str, int]] = set()  # (zone, value) already raised this round
        self.checked_round: int | None = None
        # Each seat's stacks (the engine's state is immutable: a seat whose stacks moved has a new
        # mapping) as last added to `stood`, and the `stood` they were added to: a seat whose
        # stacks are the same object adds nothing again.
        self._folded: dict[int, object] = {}
        self._folded_into: object = None

    def to_json(self) -> dict[str, Any]:
        return {
            "stood": [[seat, wager, sorted(spots)] for (seat, wager), spots in sorted(self.stood.items())],
            "home_left": {str(seat): n for seat, n in sorted(self.home_left.items())},
            "flagged": sorted([zone, value] for zone, value in self.flagged),
            "checked_round": self.checked_round,
        }

    def restore(self, data: Mapping[str, Any]) -> None:
        self.stood = {(int(seat), str(wager)): set(spots) for seat, wager, spots in data["stood"]}
        self._folded.clear()
        self.home_left = {int(seat): int(n) for seat, n in data["home_left"].items()}
        self.flagged = {(str(zone), int(value)) for zone, value in data["flagged"]}
        self.checked_round = data["checked_round"]

    # -- following the round --------------------------------------------------------------------

    def follow(
        self, table: TableView, view: SceneView, entry: TableEntry, effects: tuple[Effect, ...]
    ) -> tuple[str, str] | None:
        state = table.state
        if isinstance(entry, RoundOpened):
            self.close_open(view)
            self.stood.clear()
            self.flagged.clear()
            self.home_left = {seat.seat: view.last_ok.get(f"seat{seat.seat}.home", 0) for seat in state.seats}
        if state.phase in ("dealing", "settled"):
            stood, folded = self.stood, self._folded
            if self._folded_into is not stood or isinstance(entry, RoundOpened):
                folded.clear()  # `stood` begun again (a round, a restore): every seat adds its stacks
                self._folded_into = stood
            for seat in state.seats:
                stacks = seat.stacks
                if folded.get(seat.seat) is stacks:
                    continue  # its stacks are where they were when last added
                for position, wagers in stacks.items():
                    for wager in wagers:
                        stood.setdefault((seat.seat, wager), set()).add(position)
                folded[seat.seat] = stacks
        if isinstance(entry, ConfirmPressed):
            record = table.current
            paid = record is not None and record.status == "settled" and record.paid
            if paid and record is not None and self.checked_round != record.number:
                self.checked_round = record.number
                return self._check_payouts(view, record.number, record.settlement or {})
        return None

    def changed(
        self, table: TableView, view: SceneView, changed: list[tuple[str, int | None, int]]
    ) -> tuple[str, str] | None:
        """Past posting: a wager that changed after the first card other than as the cards moved it."""
        record = table.current
        state = table.state
        if state.phase != "dealing" or record is None or not record.cards:
            return None  # before the first card a wager may still be put right
        seats = {seat.seat: seat for seat in state.seats}
        words = []
        for name, before, now in changed:
            parsed = parse_zone(name)
            if parsed is None or parsed[2] or parsed[0] not in seats or parsed[1] not in PAYOUT_SPOTS:
                continue
            allowed = self.allowed(seats[parsed[0]], parsed[1])
            if now in allowed or (name, now) in self.flagged:
                continue
            self.flagged.add((name, now))
            has = " or ".join(_chips(v) for v in sorted(allowed))
            words.append(
                f"{zone_words(name)}: the wager changed from {_chips(before)} to {_chips(now)} after the first card "
                f"(the round has {has} there)"
            )
        if not words:
            return None
        return "past-posting", "; ".join(words) + ". A supervisor must look, then dismiss the alert or void the round."

    def allowed(self, seat: SeatState, spot: str) -> set[int]:
        """The chips a zone of a betting seat may show while dealing: each wager that has stood on
        it may still be there or already moved on (the dealer moves it after the card); one that
        never moved must be there. Side bets never move."""
        if spot in SIDE_BETS:
            return {int(dict(seat.bet.side_bets).get(spot, 0))}
        required = self.home_left.get(seat.seat, 0) if spot == "home" else 0
        optional: list[int] = []
        for wager, amount in seat.bet.wagers.items():
            stood = self.stood.get((seat.seat, wager), {wager})
            if spot not in stood:
                continue
            if stood == {spot}:
                required += amount
            else:
                optional.append(amount)
        return {required + sum(some) for n in range(len(optional) + 1) for some in itertools.combinations(optional, n)}

    # -- payouts --------------------------------------------------------------------------------

    def owed(self, settlement: Mapping[str, Any]) -> dict[str, int]:
        """What each payout circle of the round's seats should hold (0 where nothing is owed)."""
        out: dict[str, int] = {}
        for seat in settlement.get("seats", []):
            n = seat["seat"]
            for spot in PAYOUT_SPOTS:
                out[f"seat{n}.{spot}.payout"] = 0
            out[f"seat{n}.home.payout"] = sum(w["paid"] for w in seat["wagers"].values() if w["result"] == "home")
            for name, bet in seat["side_bets"].items():
                if bet["result"] == "won":
                    out[f"seat{n}.{name}.payout"] = bet["paid"]
        return out

    def payout_view(self, settlement: Mapping[str, Any], view: SceneView) -> list[dict[str, Any]]:
        """Each payout circle with something owed or placed: owed, seen, and how it stands."""
        out = []
        for zone, due in self.owed(settlement).items():
            seen = view.zones.get(zone)
            value = seen.value if seen is not None and seen.state == "ok" else None
            if not due and not value:
                continue
            parsed = parse_zone(zone)
            assert parsed is not None
            state = "unread" if value is None else "paid" if value == due else "short" if value < due else "over"
            row: dict[str, Any] = {"seat": parsed[0], "zone": zone, "owed": due, "seen": value, "state": state}
            if value is None:
                row["why"] = "not read yet" if seen is None else doubt_words(seen.state, seen.why)
            out.append(row)
        return out

    def _check_payouts(self, view: SceneView, number: int, settlement: Mapping[str, Any]) -> tuple[str, str] | None:
        """At the dealer's confirmation: each payout circle against what is owed, and every zone
        where a losing wager stood must be empty. The result stays in `view.last_check`; a payout
        circle the camera has no value for yet is left open there (`open`), and `recheck` decides
        it on the camera's next sure reading."""
        if view.status != "ok":
            why = f"the camera could not see the table ({view.status}): payouts not checked"
            view.last_check = {"round": number, "checked": False, "problems": [], "unchecked": [], "why": why}
            return None
        problems: list[dict[str, Any]] = []
        waiting: list[dict[str, Any]] = []
        verified: list[str] = []
        for row in self.payout_view(settlement, view):
            where, seen, due = zone_words(row["zone"]), row["seen"], row["owed"]
            if row["state"] == "unread":
                state = view.zones[row["zone"]].state if row["zone"] in view.zones else "unsure"
                item = {"seat": row["seat"], "zone": row["zone"], "where": where, "owed": due}
                item |= {"state": state, "why": row["why"]}
                waiting.append(item)
            elif row["state"] == "paid":
                verified.append(f"{where}: {seen}")
            else:
                problems.append(_mismatch(row, where, seen, due))
        for seat in settlement.get("seats", []):
            n = seat["seat"]
            losing = {f"seat{n}.{name}" for name, bet in seat["side_bets"].items() if bet["result"] == "lost"}
            for wager, bet in seat["wagers"].items():
                if bet["result"] == "out":
                    losing |= {f"seat{n}.{p}" for p in self.stood.get((n, wager), {wager}) if p in BASES}
            for zone in sorted(losing):
                zview = view.zones.get(zone)
                if zview is not None and zview.state == "ok" and zview.value:
                    words = f"{zone_words(zone)}: a losing wager ({zview.value}) is still on the felt"
                    problems.append({"seat": n, "zone": zone, "kind": "unremoved", "seen": zview.value, "words": words})
        check: dict[str, Any] = {
            "round": number,
            "checked": True,
            "problems": problems,
            "unchecked": [_waiting_words(item) for item in waiting],
        }
        if waiting:  # kept open (only then these keys: a check settled at the confirm reads as it always did)
            check |= {"open": waiting, "closed": [], "verified": verified}
        view.last_check = check
        return _mismatch_fault(number, problems)

    def recheck(self, view: SceneView, zones: Mapping[str, Any]) -> tuple[str, str] | None:
        """A change of the camera's view (`zones`: zone -> ZoneView, the zones that changed) after
        the payouts were confirmed: each payout circle the check left open is decided by the
        camera's first sure reading of it, the stack the dealer placed: verified when it holds what
        is owed, a payout-mismatch when it holds another stack. Never by a reading that may be of
        something else: once a hand comes over it, or it is read empty (the players took their
        winnings before the camera was sure), it is closed as not checked, with why. The check
        stays open until then, or until the next round opens (`close_open`)."""
        check = view.last_check
        if not check or not check.get("open"):
            return None
        waiting: list[dict[str, Any]] = []
        problems: list[dict[str, Any]] = []
        verified, closed = list(check["verified"]), list(check["closed"])
        for item in check["open"]:
            zone = zones.get(item["zone"])
            where = zone_words(item["zone"])
            if zone is None:
                waiting.append(item)
            elif zone.state == "ok" and zone.value:
                row = {"seat": item["seat"], "zone": item["zone"], "owed": item["owed"], "seen": zone.value}
                if zone.value == item["owed"]:
                    verified.append(f"{where}: {zone.value}")
                else:
                    row["state"] = "short" if zone.value < item["owed"] else "over"
                    problems.append(_mismatch(row, where, zone.value, item["owed"]))
            elif zone.state == "ok":
                closed.append(f"{where}: not checked (taken before the camera was sure of it; it said {item['why']})")
            elif zone.state == "blocked":
                closed.append(
                    f"{where}: not checked (a hand came over it before the camera was sure; it said {item['why']})"
                )
            else:
                waiting.append({**item, "state": zone.state, "why": doubt_words(zone.state, zone.why)})
        view.last_check = {
            **check,
            "problems": [*check["problems"], *problems],
            "unchecked": [*closed, *(_waiting_words(item) for item in waiting)],
            "open": waiting,
            "closed": closed,
            "verified": verified,
        }
        return _mismatch_fault(int(check["round"]), problems)

    def close_open(self, view: SceneView) -> None:
        """The next round opens: a payout still waiting for the camera is closed as not checked."""
        check = view.last_check
        if not check or not check.get("open"):
            return
        closed = [
            *check["closed"],
            *(f"{zone_words(i['zone'])}: not checked ({i['why']}; the next round opened)" for i in check["open"]),
        ]
        view.last_check = {**check, "unchecked": closed, "open": [], "closed": closed}

    # -- the next round -------------------------------------------------------------------------

    def proposal(self, table: TableView, view: SceneView) -> dict[str, Any] | None:
        seats: list[dict[str, Any]] = []
        unread: list[str] = []
        numbers = sorted({p[0] for p in map(parse_zone, view.zones) if p is not None})
        for n in numbers:
            wagers: dict[str, int] = {}
            side: dict[str, int] = {}
            for spot in WAGER_SPOTS:
                name = f"seat{n}.{spot}"
                seen = view.zones.get(name)
                if seen is None or seen.state != "ok":
                    why = "not read yet" if seen is None else doubt_words(seen.state, seen.why)
                    unread.append(f"{zone_words(name)} ({why})")
                elif seen.value:
                    (side if spot in SIDE_BETS else wagers)[spot] = seen.value
            if wagers or side:
                seats.append({"seat": n, "wagers": wagers, **({"side_bets": side} if side else {})})
        puck = view.pucks.get("blind")
        blind = int(puck[4 : puck.index(".")]) if puck and re.match(r"^seat\d+\.puck$", puck) else None
        why_not: str | None = None
        if view.status != "ok":
            why_not = f"the camera cannot read the table: {view.why or view.status}"
        elif unread:
            more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
            why_not = "cannot read " + ", ".join(unread[:3]) + more
        elif not seats:
            why_not = "no wagers on the felt"
        else:
            why_not = table.opening_refused({"seats": seats, "blind_seat": blind})
        return {
            "seats": seats,
            "blind_seat": blind,
            "ready": why_not is None,
            "why_not": why_not,
            "scene_seq": view.seq,
            "opening": {"seats": seats, "blind_seat": blind},
        }

    def prompt(self, proposal: Mapping[str, Any]) -> str:
        seats = "; ".join(
            f"seat {seat['seat']} "
            + ", ".join(f"{SPOT_WORDS[k]} {v}" for k, v in {**seat["wagers"], **seat.get("side_bets", {})}.items())
            for seat in proposal["seats"]
        )
        blind = f"; blind hand at seat {proposal['blind_seat']}" if proposal["blind_seat"] else ""
        return f"Camera sees {seats}{blind}: press confirm to open the round"

    # -- simulation: the dealer's and the players' hands ------------------------------------------

    def scene_change(
        self, table: TableView, effects: tuple[Effect, ...], *, place: bool, pick_up: bool
    ) -> Callable[[dict[str, list[int]], dict[str, Any]], None] | None:
        moving = (StackMoved, GrandSlamScored, BlindSwitchedOff, RoundSettled, RoundVoided)
        if not (place or pick_up or any(isinstance(fx, moving) for fx in effects)):
            return None
        state = table.state
        record = table.current

        def clear(zones: dict[str, list[int]], spots: tuple[str, ...]) -> None:
            for seat in state.seats:
                for spot in spots:
                    zones.pop(f"seat{seat.seat}.{spot}", None)

        def change(zones: dict[str, list[int]], pucks: dict[str, Any]) -> None:
            if place:
                for seat in state.seats:
                    for spot, amount in [*seat.bet.wagers.items(), *seat.bet.side_bets.items()]:
                        zones[f"seat{seat.seat}.{spot}"] = list(chips_for(amount))
                if state.blind is not None:
                    pucks["blind"] = f"seat{state.blind.seat}.puck"
            for fx in effects:
                if isinstance(fx, StackMoved):
                    _move(zones, fx.seat, fx.from_base, fx.to)
                elif isinstance(fx, GrandSlamScored):
                    for base in BASES:
                        _move(zones, fx.seat, base, "home")
                elif isinstance(fx, BlindSwitchedOff):
                    pucks.pop("blind", None)
                elif isinstance(fx, RoundSettled) and record is not None and record.settlement is not None:
                    for zone, due in self.owed(record.settlement).items():
                        if due:
                            zones[zone] = list(chips_for(due))
                    for seat in record.settlement.get("seats", []):
                        for name, bet in seat["side_bets"].items():
                            if bet["result"] == "lost":
                                zones.pop(f"seat{seat['seat']}.{name}", None)
                elif isinstance(fx, RoundVoided):
                    clear(zones, (*WAGER_SPOTS, "home"))
            if pick_up:  # the players take their winnings, their stakes and any pushed side bet
                clear(zones, ("home", "home.payout", *SIDE_BETS, *(f"{s}.payout" for s in SIDE_BETS)))

        return change


def _mismatch(row: Mapping[str, Any], where: str, seen: int, due: int) -> dict[str, Any]:
    """A payout circle holding another stack than what is owed, as a problem of the check."""
    if seen < due:
        words = f"{where}: {seen} paid where {due} is owed (underpaid by {due - seen})"
        return {**row, "kind": "underpay", "words": words}
    return {**row, "kind": "overpay", "words": f"{where}: {seen} paid where {due} is owed (overpaid by {seen - due})"}


def _mismatch_fault(number: int, problems: list[dict[str, Any]]) -> tuple[str, str] | None:
    if not problems:
        return None
    words = "; ".join(p["words"] for p in problems)
    return "payout-mismatch", f"Round {number}: {words}. A supervisor must check the payouts, then dismiss this."


def _waiting_words(item: Mapping[str, Any]) -> str:
    """A payout circle the check waits on: not checked yet, and the camera's reason."""
    return f"{zone_words(item['zone'])}: not checked ({item['why']})"


def _move(zones: dict[str, list[int]], seat: int, base: str, to: str) -> None:
    chips = zones.pop(f"seat{seat}.{base}", [])
    if to != "out" and chips:
        zones.setdefault(f"seat{seat}.{to}", []).extend(chips)  # put on top of what stands there
