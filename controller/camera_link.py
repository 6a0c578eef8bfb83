"""The camera in the game: what the settled scene means for the round (Grand Slam zones).

Three parts, one per side of the loop:

- `SceneWatch` lives inside the `Table` and is rebuilt from the journal: the camera's settled view
  (kept from `scene` entries, each one a change of the view), the wagers it proposes for the next
  round, and the checks: a wager changed after the first card (`past-posting`), the payouts the
  dealer placed against what the engine owes when the dealer confirms them (`payout-mismatch`),
  the camera knocked out of place (`camera-bumped`). It decides from journaled entries only, so
  replaying the journal gives the same proposals, alerts and checks.
- `CameraFeed` is the reading thread: its own `vision.Reader` and `StableScene`, fed the newest
  frame by the camera's worker thread; it posts the settled view to the table loop only when it
  changes, never each frame.
- `SimulatedDealer` (simulation only) keeps the simulated camera's scene following the table:
  the dealer's hands move the stacks as the cards say, take what lost and pay what won, so the
  whole loop runs in tests; a test plays a player (or a careless dealer) through the scene route.

Zones follow the layout's names: `seatN.first|second|third|home|three_outs|poker_bonus`, their
`.payout` circles beside them, `seatN.puck`. A base wager that wins stands on home plate, so its
payout is placed in `seatN.home.payout`; a side bet's in its own payout circle.
This module imports no vision at load time: only `CameraFeed` and the simulation touch frames.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.engine.base import Effect, RoundVoided
from controller.engine.grand_slam import BlindSwitchedOff, GrandSlamScored, RoundSettled, StackMoved
from controller.journal import Entry

if TYPE_CHECKING:
    from controller.table import Table
    from drivers.camera import SimulatedCamera
    from vision.calibration import Calibration
    from vision.geometry import CameraModel
    from vision.layout import Layout
    from vision.reader import FrameReading
    from vision.stable import StableReading

log = logging.getLogger(__name__)

BASES = ("first", "second", "third")
SIDE_BETS = ("three_outs", "poker_bonus")
WAGER_SPOTS = (*BASES, *SIDE_BETS)
PAYOUT_SPOTS = (*BASES, "home", *SIDE_BETS)  # a betting seat's zones: each has its payout circle
VIEW_STATES = ("ok", "blocked", "unsure")
CAMERA_STATES = ("ok", "bumped", "unverified", "offline", "uncalibrated")
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


def _chips(value: int | None) -> str:
    return "nothing" if not value else str(value)


@dataclass(frozen=True)
class ZoneView:
    """A zone as the table last knew it: "ok" with its value (0 when empty), or "blocked" /
    "unsure" with no value and the reader's reason."""

    state: str
    value: int | None
    why: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"state": self.state, "value": self.value}
        if self.why:
            out["why"] = self.why
        return out


class SceneWatch:
    """The camera's settled view as the table holds it, and what it means for the round."""

    def __init__(self) -> None:
        self.status: str | None = None  # None: no camera has ever reported to this table
        self.why = ""
        self.seq: int | None = None  # the journal entry of the last change of the view
        self.zones: dict[str, ZoneView] = {}
        self.pucks: dict[str, str | None] = {}
        self.last_ok: dict[str, int] = {}  # each zone's last value read (it survives a hand over it)
        # Where each wager (named by the base it was bet on) has stood this round, per the engine:
        # the dealer moves the chips after the card, so a zone may show any of these for a while.
        self.stood: dict[tuple[int, str], set[str]] = {}
        self.home_left: dict[int, int] = {}  # chips left on a home plate when the round opened
        self.flagged: set[tuple[str, int]] = set()  # (zone, value) already raised this round
        self.checked_round: int | None = None
        self.last_check: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        return self.status is not None

    # -- the camera's view in -------------------------------------------------------------------

    def changes(self, view: Mapping[str, Any]) -> dict[str, Any] | None:
        """The body of a `scene` entry for what `view` changes, or None when it changes nothing.
        A zone counts as changed when its state or value does (not its reason's words)."""
        status = view.get("camera")
        if status not in CAMERA_STATES:
            raise ValueError(f"camera view: camera must be one of {', '.join(CAMERA_STATES)}, not {status!r}")
        body: dict[str, Any] = {}
        if status != self.status:
            body["camera"] = status
            body["why"] = str(view.get("why", ""))
        if status == "ok":
            zones: dict[str, Any] = {}
            for name, seen in dict(view.get("zones", {})).items():
                state, value = seen.get("state"), seen.get("value")
                if state not in VIEW_STATES or (state == "ok") != isinstance(value, int) or isinstance(value, bool):
                    raise ValueError(f"camera view: zone {name}: {state!r} with value {value!r}")
                old = self.zones.get(name)
                if old is None or (old.state, old.value) != (state, value):
                    zones[str(name)] = ZoneView(state, value, str(seen.get("why", ""))).to_json()
            if zones:
                body["zones"] = zones
            pucks = {str(n): w for n, w in dict(view.get("pucks", {})).items() if self.pucks.get(n) != w}
            if pucks:
                body["pucks"] = pucks
        return body or None

    # -- following the journal ------------------------------------------------------------------

    def follow(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> tuple[str, str] | None:
        """Apply one journaled entry; returns the fault (code, message) it raises, if any."""
        if entry.kind == "scene":
            return self._seen(table, entry)
        if table.game_name != "grand-slam":
            return None
        if entry.kind == "round-open":
            self.stood.clear()
            self.flagged.clear()
            self.home_left = {seat.seat: self.last_ok.get(f"seat{seat.seat}.home", 0) for seat in table.state.seats}
        if table.state.phase in ("dealing", "settled"):
            for seat in table.state.seats:
                for position, wagers in seat.stacks.items():
                    for wager in wagers:
                        self.stood.setdefault((seat.seat, wager), set()).add(position)
        if entry.kind == "button" and entry.body.get("button") == "confirm":
            record = table.rounds.get(table.round_no) if table.round_no is not None else None
            paid = record is not None and record.status == "settled" and record.paid
            if paid and record is not None and self.checked_round != record.number:
                self.checked_round = record.number
                return self._check_payouts(record.number, record.settlement or {})
        return None

    def _seen(self, table: Table, entry: Entry) -> tuple[str, str] | None:
        body = entry.body
        self.seq = entry.seq
        newly_bumped = False
        if "camera" in body:
            newly_bumped = body["camera"] == "bumped" and self.status != "bumped"
            self.status = body["camera"]
            self.why = body.get("why", "")
        changed: list[tuple[str, int | None, int]] = []
        for name, seen in body.get("zones", {}).items():
            zone = ZoneView(seen["state"], seen.get("value"), seen.get("why", ""))
            self.zones[name] = zone
            if zone.state == "ok" and zone.value is not None:
                before = self.last_ok.get(name)
                self.last_ok[name] = zone.value
                if before != zone.value:
                    changed.append((name, before, zone.value))
        self.pucks.update(body.get("pucks", {}))
        if newly_bumped:
            return (
                "camera-bumped",
                f"The overhead camera has moved ({self.why}). Wagers and payouts are not watched until a "
                "supervisor recalibrates the camera, then dismisses this.",
            )
        if table.game_name == "grand-slam" and self.status == "ok" and changed:
            return self._past_posting(table, changed)
        return None

    def _past_posting(self, table: Table, changed: list[tuple[str, int | None, int]]) -> tuple[str, str] | None:
        record = table.rounds.get(table.round_no) if table.round_no is not None else None
        if table.state.phase != "dealing" or record is None or not record.cards:
            return None  # before the first card a wager may still be put right
        seats = {seat.seat: seat for seat in table.state.seats}
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

    def allowed(self, seat: Any, spot: str) -> set[int]:
        """The chips a zone of a betting seat may show while dealing: each wager that has stood on
        it may still be there or already moved on (the dealer moves it after the card); one that
        never moved must be there. Side bets never move."""
        if spot in SIDE_BETS:
            return {int(seat.bet.side_bets.get(spot, 0))}
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

    def payout_view(self, settlement: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Each payout circle with something owed or placed: owed, seen, and how it stands."""
        out = []
        for zone, due in self.owed(settlement).items():
            seen = self.zones.get(zone)
            value = seen.value if seen is not None and seen.state == "ok" else None
            if not due and not value:
                continue
            parsed = parse_zone(zone)
            assert parsed is not None
            state = "unread" if value is None else "paid" if value == due else "short" if value < due else "over"
            out.append({"seat": parsed[0], "zone": zone, "owed": due, "seen": value, "state": state})
        return out

    def _check_payouts(self, number: int, settlement: Mapping[str, Any]) -> tuple[str, str] | None:
        """At the dealer's confirmation: each payout circle against what is owed, and every zone
        where a losing wager stood must be empty. The result stays in `last_check`."""
        if self.status != "ok":
            why = f"the camera could not see the table ({self.status}): payouts not checked"
            self.last_check = {"round": number, "checked": False, "problems": [], "unchecked": [], "why": why}
            return None
        problems: list[dict[str, Any]] = []
        unchecked: list[str] = []
        for row in self.payout_view(settlement):
            where, seen, due = zone_words(row["zone"]), row["seen"], row["owed"]
            if row["state"] == "unread":
                unchecked.append(f"{where}: could not be read")
            elif row["state"] == "short":
                words = f"{where}: {seen} paid where {due} is owed (underpaid by {due - seen})"
                problems.append({**row, "kind": "underpay", "words": words})
            elif row["state"] == "over":
                words = f"{where}: {seen} paid where {due} is owed (overpaid by {seen - due})"
                problems.append({**row, "kind": "overpay", "words": words})
        for seat in settlement.get("seats", []):
            n = seat["seat"]
            losing = {f"seat{n}.{name}" for name, bet in seat["side_bets"].items() if bet["result"] == "lost"}
            for wager, bet in seat["wagers"].items():
                if bet["result"] == "out":
                    losing |= {f"seat{n}.{p}" for p in self.stood.get((n, wager), {wager}) if p in BASES}
            for zone in sorted(losing):
                view = self.zones.get(zone)
                if view is not None and view.state == "ok" and view.value:
                    words = f"{zone_words(zone)}: a losing wager ({view.value}) is still on the felt"
                    problems.append({"seat": n, "zone": zone, "kind": "unremoved", "seen": view.value, "words": words})
        self.last_check = {"round": number, "checked": True, "problems": problems, "unchecked": unchecked}
        if not problems:
            return None
        words = "; ".join(p["words"] for p in problems)
        return "payout-mismatch", f"Round {number}: {words}. A supervisor must check the payouts, then dismiss this."

    # -- the next round -------------------------------------------------------------------------

    def proposal(self, table: Table) -> dict[str, Any] | None:
        """The wagers the camera sees, as the opening of the next round (None while one is open).
        `ready` says whether it can open as it is; `why_not` says what stops it, in plain words."""
        if not self.active or table.game_name != "grand-slam" or table.awaiting.kind != "round":
            return None
        seats: list[dict[str, Any]] = []
        unread: list[str] = []
        numbers = sorted({p[0] for p in map(parse_zone, self.zones) if p is not None})
        for n in numbers:
            wagers: dict[str, int] = {}
            side: dict[str, int] = {}
            for spot in WAGER_SPOTS:
                name = f"seat{n}.{spot}"
                seen = self.zones.get(name)
                if seen is None or seen.state != "ok":
                    why = "not read yet" if seen is None else f"{seen.state}: {seen.why}" if seen.why else seen.state
                    unread.append(f"{zone_words(name)} ({why})")
                elif seen.value:
                    (side if spot in SIDE_BETS else wagers)[spot] = seen.value
            if wagers or side:
                seats.append({"seat": n, "wagers": wagers, **({"side_bets": side} if side else {})})
        puck = self.pucks.get("blind")
        blind = int(puck[4 : puck.index(".")]) if puck and re.match(r"^seat\d+\.puck$", puck) else None
        why_not: str | None = None
        if self.status != "ok":
            why_not = f"the camera cannot read the table: {self.why or self.status}"
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
            "scene_seq": self.seq,
        }

    def prompt(self, table: Table) -> str | None:
        """The dealer's next step between rounds when the camera proposes the wagers."""
        proposal = self.proposal(table)
        if proposal is None or not proposal["ready"]:
            return None
        seats = "; ".join(
            f"seat {seat['seat']} "
            + ", ".join(f"{SPOT_WORDS[k]} {v}" for k, v in {**seat["wagers"], **seat.get("side_bets", {})}.items())
            for seat in proposal["seats"]
        )
        blind = f"; blind hand at seat {proposal['blind_seat']}" if proposal["blind_seat"] else ""
        return f"Camera sees {seats}{blind}: press confirm to open the round"

    def snapshot(self, table: Table) -> dict[str, Any]:
        """The camera's part of the table state, for the dealer screen."""
        record = table.rounds.get(table.round_no) if table.round_no is not None else None
        payouts = None
        if record is not None and record.status == "settled" and not record.paid and record.settlement:
            payouts = self.payout_view(record.settlement)
        return {
            "status": self.status,
            "why": self.why,
            "scene_seq": self.seq,
            # Only zones holding chips or that cannot be read: the empty felt says nothing.
            "zones": {n: z.to_json() for n, z in sorted(self.zones.items()) if z.state != "ok" or z.value},
            "pucks": dict(self.pucks),
            "proposal": self.proposal(table),
            "payouts": payouts,
            "last_check": self.last_check,
        }


# -- the reading thread -----------------------------------------------------------------------


class CameraFeed:
    """Reads the newest frame in its own thread and posts the settled view when it changes.

    `offer(frame)` is the camera's `on_frame` (its worker thread): it only keeps the newest frame,
    so a slow read skips frames instead of falling behind. `post(view)` and `status(dict)` are
    called in the reading thread; the daemon passes functions that hop onto the table loop."""

    def __init__(
        self,
        layout: Layout,
        *,
        calibration: Calibration | None,
        calibration_path: Path | None,
        camera_model: CameraModel | None,
        stable_frames: int,
        post: Callable[[dict[str, Any]], None],
        status: Callable[[dict[str, Any]], None],
        simulated: bool,
        offline_after_s: float = 5.0,
    ) -> None:
        self.layout = layout
        self.calibration = calibration
        self.calibration_path = calibration_path
        self.camera_model = camera_model  # known intrinsics when the camera calibrates itself
        self.stable_frames = stable_frames
        self.post = post
        self.status = status
        self.simulated = simulated
        self.offline_after_s = offline_after_s
        self._cv = threading.Condition()
        self._frame: Any = None
        self._stop = False
        self._recalibrate = False
        self._thread: threading.Thread | None = None
        self.reads = 0
        self.dropped = 0
        self.read_ms = 0.0

    def offer(self, frame: Any) -> None:
        with self._cv:
            if self._frame is not None:
                self.dropped += 1
            self._frame = frame
            self._cv.notify()

    def recalibrate(self) -> None:
        """Calibrate again from the next frame (after the camera was moved back, or for good)."""
        with self._cv:
            self._recalibrate = True
            self._cv.notify()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="camera-reader", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _next(self) -> Any:
        """The newest frame, or None after `offline_after_s` without one (a wake-up for another
        reason, such as a recalibration request, does not count as the camera going quiet)."""
        deadline = time.monotonic() + self.offline_after_s
        with self._cv:
            while self._frame is None and not self._stop:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            frame, self._frame = self._frame, None
            return frame

    def _run(self) -> None:
        from vision.reader import Reader
        from vision.stable import StableScene

        reader: Reader | None = None
        stable = StableScene(self.stable_frames)
        last_frame: Any = None
        last_reading: FrameReading | None = None
        last_key: Any = None
        absent: dict[str, int] = {}
        while not self._stop:
            frame = self._next()
            if self._stop:
                return
            if frame is None:
                view = {"camera": "offline", "why": f"no frame from the camera for {self.offline_after_s:g} s"}
            elif self._recalibrate or reader is None:
                reader, view = self._calibrate(frame)
                stable = StableScene(self.stable_frames)
                last_frame = last_reading = None
                absent.clear()
                if reader is None:
                    continue
            if frame is not None and reader is not None:
                if frame is last_frame and last_reading is not None:
                    reading = last_reading  # the same picture reads the same: no need to read it again
                else:
                    try:
                        began = time.perf_counter()
                        reading = reader.read(frame)
                        self.read_ms = (time.perf_counter() - began) * 1000
                        self.reads += 1
                    except ValueError as exc:  # a frame of another size than the calibration's
                        view = {"camera": "uncalibrated", "why": f"{exc}: recalibrate the camera"}
                        reader = None
                        self._deliver(view)
                        continue
                    last_frame, last_reading = frame, reading
                view = view_of(stable.update(reading), reading, absent, self.stable_frames)
            key = _key(view)
            if key != last_key:
                last_key = key
                self._deliver(view)

    def _deliver(self, view: dict[str, Any]) -> None:
        try:
            self.post(view)
        except Exception:  # the loop is stopping
            log.exception("camera: the table did not take the view")
        self.status(self.describe(view["camera"], view.get("why", "")))

    def describe(self, camera: str, why: str) -> dict[str, Any]:
        return {
            "installed": True,
            "simulated": self.simulated,
            "layout": self.layout.name,
            "view": camera,
            "message": ("SIMULATED camera: " if self.simulated else "") + (why or camera),
            "reads": self.reads,
            "frames_skipped": self.dropped,
            "read_ms": round(self.read_ms, 1),
        }

    def _calibrate(self, frame: Any) -> tuple[Any, dict[str, Any]]:
        """A Reader for this camera: from the calibration given, or measured on this frame when
        there is none or the supervisor asked to recalibrate (the camera's lens is kept)."""
        from vision.calibration import Calibration, CalibrationError
        from vision.reader import Reader

        with self._cv:
            measure = self._recalibrate or self.calibration is None
            self._recalibrate = False
        try:
            if measure:
                model = self.camera_model or (self.calibration.camera if self.calibration else None)
                self.calibration = Calibration.from_frame(frame, self.layout, camera=model)
                if self.calibration_path is not None:
                    self.calibration.save(self.calibration_path)
                log.info("camera calibrated from a frame: %.2f mm reprojection error", self.calibration.error_mm)
            assert self.calibration is not None
            return Reader(self.layout, self.calibration), {"camera": "ok", "why": "calibrated"}
        except (CalibrationError, ValueError, OSError) as exc:
            view = {"camera": "uncalibrated", "why": str(exc)}
            self._deliver(view)
            return None, view


def view_of(stable: StableReading, reading: FrameReading, absent: dict[str, int], frames: int) -> dict[str, Any]:
    """The settled view the table keeps: camera state, settled zones, settled pucks. A zone still
    settling is left out (the table keeps what it had); a puck unseen for `frames` frames is gone."""
    camera = reading.camera
    if camera.bumped:
        return {"camera": "bumped", "why": camera.why}
    if not camera.verified:
        return {"camera": "unverified", "why": camera.why}
    zones: dict[str, Any] = {}
    for name, zone in stable.zones.items():
        if zone.state == "unsure" and zone.why.startswith("settling"):
            continue
        zones[name] = {"state": zone.state, "value": zone.value, "why": zone.why}
    pucks: dict[str, str | None] = dict(stable.pucks)
    for name in set(absent) | set(reading.pucks):
        absent[name] = 0 if name in reading.pucks else absent.get(name, 0) + 1
        if absent[name] >= frames:
            pucks[name] = None
    return {"camera": "ok", "why": camera.why, "zones": zones, "pucks": pucks}


def _key(view: Mapping[str, Any]) -> Any:
    zones = tuple(sorted((n, z["state"], z["value"]) for n, z in view.get("zones", {}).items()))
    return view["camera"], zones, tuple(sorted(view.get("pucks", {}).items(), key=lambda kv: kv[0]))


# -- simulation: the dealer's and the players' hands --------------------------------------------


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


class SimulatedDealer:
    """A table listener (simulation only) that moves the simulated chips as the table says: the
    wagers of a round opened by hand are placed, each stack moves where its card sends it, out
    stacks and losing side bets are taken, winners are paid beside home plate and their side bets,
    and once the dealer confirms the payouts the players pick up their chips."""

    def __init__(self, camera: SimulatedCamera) -> None:
        self.camera = camera
        self._picked_up: int | None = None  # the round whose winnings the players took

    def redrive(self, table: Table) -> None:
        """Nothing to show: the scene is the table's, not a picture of the state."""

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        if table.game_name != "grand-slam":
            return
        place = entry.kind == "round-open" and entry.body.get("via") != "camera"
        record = table.rounds.get(table.round_no) if table.round_no is not None else None
        pick_up = entry.kind == "button" and record is not None and record.paid and self._picked_up != record.number
        if pick_up and record is not None:
            self._picked_up = record.number
        moving = (StackMoved, GrandSlamScored, BlindSwitchedOff, RoundSettled, RoundVoided)
        if not (place or pick_up or any(isinstance(fx, moving) for fx in effects)):
            return

        def change(scene: Any) -> Any:
            zones = {name: [chip for stack in stacks for chip in stack.chips] for name, stacks in scene.zones.items()}
            pucks = dict(scene.pucks)
            if place:
                _place_wagers(table, zones, pucks)
            for fx in effects:
                if isinstance(fx, StackMoved):
                    _move(zones, fx.seat, fx.from_base, fx.to)
                elif isinstance(fx, GrandSlamScored):
                    for base in BASES:
                        _move(zones, fx.seat, base, "home")
                elif isinstance(fx, BlindSwitchedOff):
                    pucks.pop("blind", None)
                elif isinstance(fx, RoundSettled):
                    _pay(table, zones)
                elif isinstance(fx, RoundVoided):
                    _clear_seats(table, zones, (*WAGER_SPOTS, "home"))
            if pick_up:  # the players take their winnings, their stakes and any pushed side bet
                _clear_seats(table, zones, ("home", "home.payout", *SIDE_BETS, *(f"{s}.payout" for s in SIDE_BETS)))
            return _rebuilt(scene, zones, pucks)

        self.camera.edit(change)


def _rebuilt(scene: Any, zones: dict[str, list[int]], pucks: dict[str, Any]) -> Any:
    from vision.scene import Stack

    return dataclasses.replace(
        scene, zones={n: (Stack(tuple(chips)),) for n, chips in zones.items() if chips}, pucks=pucks
    )


def _place_wagers(table: Table, zones: dict[str, list[int]], pucks: dict[str, Any]) -> None:
    state = table.state
    for seat in state.seats:
        for spot, amount in [*seat.bet.wagers.items(), *seat.bet.side_bets.items()]:
            zones[f"seat{seat.seat}.{spot}"] = list(chips_for(amount))
    if state.blind is not None:
        pucks["blind"] = f"seat{state.blind.seat}.puck"


def _move(zones: dict[str, list[int]], seat: int, base: str, to: str) -> None:
    chips = zones.pop(f"seat{seat}.{base}", [])
    if to != "out" and chips:
        zones.setdefault(f"seat{seat}.{to}", []).extend(chips)  # put on top of what stands there


def _pay(table: Table, zones: dict[str, list[int]]) -> None:
    record = table.rounds.get(table.round_no) if table.round_no is not None else None
    if record is None or record.settlement is None:
        return
    for zone, due in table.camera.owed(record.settlement).items():
        if due:
            zones[zone] = list(chips_for(due))
    for seat in record.settlement.get("seats", []):
        for name, bet in seat["side_bets"].items():
            if bet["result"] == "lost":
                zones.pop(f"seat{seat['seat']}.{name}", None)


def _clear_seats(table: Table, zones: dict[str, list[int]], spots: tuple[str, ...]) -> None:
    for seat in table.state.seats:
        for spot in spots:
            zones.pop(f"seat{seat.seat}.{spot}", None)


class SimScene:
    """The API's handle on the simulated camera: players' and dealers' hands, and knocks."""

    def __init__(self, camera: SimulatedCamera, feed: CameraFeed | None = None) -> None:
        self.camera = camera
        self.feed = feed

    def change(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Apply {"zones": {zone: [chips] | []}, "pucks": {name: zone | null}, "hands": [...],
        "bump": bool}; raises ValueError naming the field when the body is wrong."""
        from vision.scene import Scene, SceneError

        known = {"zones", "pucks", "hands", "bump", "unplug"}
        for key in body:
            if key not in known:
                raise ValueError(f"body: unknown key {key!r}; the keys are {', '.join(sorted(known))}")
        layout_zones = self.camera.layout.zones
        zones_in = body.get("zones", {})
        pucks_in = body.get("pucks", {})
        if not isinstance(zones_in, dict) or not isinstance(pucks_in, dict):
            raise ValueError("body.zones and body.pucks are objects: zone -> chips, puck -> zone")
        for name in zones_in:
            if name not in layout_zones or layout_zones[name].kind == "puck":
                raise ValueError(f"body.zones.{name}: not a chip zone of the layout {self.camera.layout.name}")
        for name, where in pucks_in.items():
            if where is not None and (where not in layout_zones or layout_zones[where].kind != "puck"):
                raise ValueError(f"body.pucks.{name}: {where!r} is not a puck spot of the layout")
        bump = body.get("bump")
        if bump is not None and not isinstance(bump, bool):
            raise ValueError("body.bump: true (knock the camera) or false (put it back)")
        unplug = body.get("unplug")
        if unplug is not None and not isinstance(unplug, bool):
            raise ValueError("body.unplug: true or false")

        def edit(scene: Scene) -> Scene:
            doc = scene.to_dict()
            doc["zones"] = {n: z for n, z in doc["zones"].items() if n not in zones_in}
            doc["zones"].update({n: chips for n, chips in zones_in.items() if chips})
            pucks = {**doc["pucks"], **pucks_in}
            doc["pucks"] = {n: w for n, w in pucks.items() if w is not None}
            if "hands" in body:
                doc["hands"] = body["hands"]
            try:
                return Scene.from_dict(doc, "body")
            except SceneError as exc:
                raise ValueError(str(exc)) from None

        scene = self.camera.edit(edit)
        if bump is not None:
            self.camera.bump(bump)
        if unplug is not None:
            self.camera.unplugged = unplug
        return {
            "zones": {n: [c for s in stacks for c in s.chips] for n, stacks in sorted(scene.zones.items())},
            "pucks": dict(scene.pucks),
            "hands": len(scene.hands),
            "bumped": self.camera.bumped,
        }
