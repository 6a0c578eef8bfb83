"""The table: every input is journaled, then handed to the engine, then its effects go out.

`Table` is the one owner of the table's state. The daemon calls its methods from a single asyncio
loop (device threads post to that loop; nothing else touches a Table). Each method validates its
input, appends one journal entry (committed before anything else happens), applies the entry,
and tells the outputs (LEDs, display, screens) what changed. Starting a Table replays the
journal through the very same `_apply` to rebuild the exact state, then re-drives the outputs.

Start-up does not replay all of history: at each round's end the table keeps a snapshot of its
state in the journal's database (each part serialised by the module that owns it: the engine
state through the engine's JSON, faults, meters, the round, the shoe count, the camera). Opening
restores the last snapshot after checking it against the entries it summarises (the previous
snapshot plus the entries between must give it exactly), then replays only what follows.

Faults (GAMES.md section 4) are latched in the journal: they block the card flow until a
supervisor clears them with a journaled action naming who and why, and they survive restarts.
A card that arrives while play is blocked is journaled and held, never dropped; it is dealt
when the fault is cleared (or returned to the supervisor's judgement by `replace` and `void`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from controller.camera.watch import SceneWatch
from controller.engine.base import (
    JSON,
    Awaiting,
    CardDead,
    CardDealt,
    Effect,
    Event,
    RuleError,
    ShoeReshuffled,
    VoidRound,
    event_from_json,
    from_json,
    to_json,
)
from controller.engine.cards import Card, CardError, ShoeTracker, parse_card
from controller.faults import CARD_FAULTS, FAULTS, JOURNAL_FAULT_ID, Fault
from controller.games import adapter
from controller.journal import Entry, Journal, JournalCorrupt, JournalUnwritable, Snapshot, utc_now
from controller.meters import Meters
from controller.rounds import RoundBook, RoundRecord
from controller.view import prompt

log = logging.getLogger(__name__)

#: While replaying a long tail at start (a journal from before snapshots), keep one every so many rounds.
REPLAY_SNAPSHOT_EVERY = 500
RECENT_EFFECTS = 200  # entries whose effects a late screen is told (the screens ask for the last 10)


class TableError(ValueError):
    """An input the table refuses now. `kind` says why, for the API's status code: "conflict"
    (not now: the wrong phase, blocked by a fault), "invalid" (the input itself is wrong),
    "not-found" (no such fault or round). `field` and `seat` name where, when the rules do."""

    def __init__(
        self, message: str, *, kind: str = "invalid", field: str = "", seat: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.field = field
        self.seat = seat

    @classmethod
    def of_rule(cls, exc: RuleError, message: str | None = None) -> TableError:
        return cls(message or str(exc), kind="invalid", field=exc.field, seat=exc.seat)


class TableUnavailable(TableError):
    """The journal cannot be written (the disk is full or failing): nothing was taken. The
    table's `journal_fault` says so in plain words until a write succeeds again."""

    quiet = True  # said once by the table, not again by every caller that offers the input again

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="unavailable")


class Output(Protocol):
    """Something that shows the table (LEDs, pole display, dealer screen feed)."""

    def redrive(self, table: Table) -> None:
        """Show the whole current state (at start and after recovery)."""

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        """Show what one journaled entry changed."""


class Table:
    """The table's state, rebuilt from `journal` at start and kept by journaling every input."""

    def __init__(
        self,
        journal: Journal,
        *,
        game: str,
        rules: Mapping[str, Any],
        table_id: str = "TABLE-1",
        simulated: bool = False,
        outputs: list[Output] | None = None,
        replay: bool = True,
        seats: int | None = None,
    ) -> None:
        """`replay=False` gives the table as it stands before any entry (for checking snapshots);
        `seats`: the seats the table has (config `table.seats`; None: the game's table card's)."""
        self.journal = journal
        self.adapter = adapter(game)
        self.game = self.adapter.rules
        self.game_name = game
        self.rules_doc = dict(rules)
        most = self.adapter.seats_max
        self.seats = most if seats is None else seats
        if isinstance(self.seats, bool) or not isinstance(self.seats, int) or not 1 <= self.seats <= most:
            raise TableError(f"table.seats: a {self.adapter.title} table seats 1 to {most}, not {self.seats!r}")
        self.table_id = table_id
        self.simulated = simulated
        self.outputs: list[Output] = outputs or []
        self.state: Any = self.game.initial()
        try:  # the configured rules are checked now, not at the first round
            self.shoe = ShoeTracker(self.game.shoe_for_rules(self.rules_doc))
        except RuleError as exc:
            raise TableError(str(exc)) from None
        self.faults: dict[int, Fault] = {}
        self.held: list[tuple[int, Card]] = []  # (journal seq, card) waiting for a fault to clear
        self.rounds = RoundBook(journal)
        self.round_no: int | None = None
        self.meters = Meters()
        self.last_card: str | None = None
        self.shoe_link: dict[str, Any] | None = None  # last (session, seq, frame) the shoe delivered
        self.notice: str | None = None  # from the engine (a puck to remove, a dead card) until the next card or confirm
        # The effects of the last entries applied (seq -> effects), for screens that join late: the
        # live feed's backlog tells each entry with what it did, as it was told live.
        self.recent_effects: dict[int, tuple[Effect, ...]] = {}
        self.shuffle_due: str | None = None  # "cut card" / "shoe empty": load a new shoe after this round
        self.devices: dict[str, dict[str, JSON]] = {}
        self.listeners: list[Output] = []  # the API's live feed; told after the devices
        # Told when a device's status changes (no entry is journaled for it): the live feed sends
        # the screens the state again, so a Devices panel follows the shoe as it comes and goes.
        self.device_watchers: list[Callable[[Table], None]] = []
        # What the overhead camera has seen (from `scene` entries) and what it means for this game.
        self.camera = SceneWatch(self.adapter.camera())
        self.journal_fault: Fault | None = None  # the journal cannot be written (never journaled itself)
        self._refused = 0  # inputs refused while it lasts
        self._round_ended = False  # set by _apply when an entry ends a round: a snapshot is due
        self._ending = False  # set by _finish_round while _apply runs
        if replay:
            self._restore()
            self.redrive()

    def redrive(self) -> None:
        """Show the whole state on every output (at start, after recovery, after a device returns)."""
        for output in self.outputs:
            try:
                output.redrive(self)
            except Exception as exc:
                log.exception("output %s failed to re-drive", type(output).__name__)
                self.devices[type(output).__name__] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    # -- what the table looks like --------------------------------------------------------------

    @property
    def blocked(self) -> bool:
        return bool(self.faults)

    @property
    def awaiting(self) -> Awaiting:
        return self.game.awaiting(self.state)

    @property
    def current(self) -> RoundRecord | None:
        """The round being dealt, or the last one (settled or void); None before the first."""
        return self.rounds.get(self.round_no) if self.round_no is not None else None

    def payouts(self) -> list[dict[str, Any]]:
        """What the dealer pays and takes at each seat for the last settled round."""
        record = self.current
        if record is None or record.settlement is None or record.status != "settled":
            return []
        return self.game.payouts(record.settlement)

    # -- inputs ---------------------------------------------------------------------------------

    def open_round(self, body: Mapping[str, Any], by: str, *, via: str | None = None) -> int:
        """Open a round with `body` = {"seats": [...], "blind_seat": n | null} as in a round file
        (`via` = "camera" when the wagers are the camera's proposal, which the dealer confirmed)."""
        if self.faults:
            raise TableError(f"play is stopped: {prompt(self)}", kind="conflict")
        if self.awaiting.kind != "round":
            raise TableError(f"round {self.round_no} is still being dealt; settle or void it first", kind="conflict")
        event = self._open_event(body)
        # Ask the engine before journaling, so a refused opening leaves no trace but the refusal.
        try:
            self.game.apply(self.state, event)
        except RuleError as exc:
            raise TableError.of_rule(exc) from None
        number = (self.round_no or 0) + 1
        entry: dict[str, JSON] = {"event": to_json(event), "by": by}
        if via is not None:
            entry |= {"via": via, "scene_seq": self.camera.seq}
        self._commit("round-open", entry, number)
        return number

    def opening_refused(self, body: Mapping[str, Any]) -> str | None:
        """Why `body` would not open a round now (the engine's words), or None if it would."""
        try:
            self.game.apply(self.state, self._open_event(body))
        except (TableError, RuleError) as exc:
            return str(exc)
        return None

    def open_from_camera(self, by: str, scene_seq: int | None = None) -> int:
        """Open the round the camera proposes, as the dealer confirmed it. `scene_seq` is the view
        the dealer looked at: if the felt has changed since, the dealer must look again."""
        if self.faults:
            raise TableError(f"play is stopped: {prompt(self)}", kind="conflict")
        if self.awaiting.kind != "round":
            raise TableError(f"round {self.round_no} is still being dealt; settle or void it first", kind="conflict")
        proposal = self.camera.proposal(self)
        if proposal is None:
            raise TableError("round not opened: this table's camera has not reported any wagers", kind="conflict")
        if scene_seq is not None and scene_seq != proposal["scene_seq"]:
            raise TableError(
                f"round not opened: the wagers on the felt changed since you looked (view {scene_seq}, now "
                f"{proposal['scene_seq']}); check the proposal again",
                kind="conflict",
            )
        if not proposal["ready"]:
            raise TableError(f"round not opened from the camera: {proposal['why_not']}", kind="conflict")
        return self.open_round(proposal["opening"], by, via="camera")

    def scene_seen(self, view: Mapping[str, Any]) -> Entry | None:
        """The camera's settled view (from the reading thread): journaled only when it changes
        something (a zone's value or state, a puck, the camera's own state)."""
        body = self.camera.changes(view)
        if body is None:
            return None
        return self._commit("scene", body, self.round_no)

    def decide(self, body: Mapping[str, Any], by: str) -> Entry:
        """A player's choice (Jokers 22: hit, stand, double, split, surrender, match, decline), in
        the form a round file writes it. The engine is asked first: a refusal leaves no trace."""
        if self.faults:
            raise TableError(f"play is stopped: {prompt(self)}", kind="conflict")
        if self.awaiting.kind != "decision":
            raise TableError(f"round {self.round_no} needs no decision now: {prompt(self)}", kind="conflict")
        try:
            event = self.game.parse_decision(body, "decision")
            self.game.apply(self.state, event)
        except RuleError as exc:
            raise TableError.of_rule(exc) from None
        return self._commit("decision", {"event": to_json(event), "by": by}, self.round_no)

    def card(self, card: Card, source: Mapping[str, JSON]) -> Entry:
        """A card came out of the shoe (`source` says from where: the shoe's session and seq,
        or a dealer's entry). Always journaled: a card is never lost, even when play is stopped."""
        return self._commit("card", {"card": str(card), "source": dict(source)}, self.round_no)

    def misread(self, message: str, source: Mapping[str, JSON]) -> Entry:
        return self.raise_fault("misread", message, source=source)

    def raise_fault(self, code: str, message: str, **extra: Any) -> Entry:
        if code not in FAULTS:
            raise TableError(f"unknown fault code {code!r}")
        return self._commit("fault", {"code": code, "message": message, **extra}, self.round_no)

    def clear_fault(self, fault_id: int, action: str, by: str, reason: str, card: str | None = None) -> Entry:
        """A supervisor clears a latched fault: confirm the held card, replace it, dismiss, or void."""
        fault = self.faults.get(fault_id)
        if fault is None:
            raise TableError(f"there is no open fault {fault_id}", kind="conflict")
        if fault_id == JOURNAL_FAULT_ID:
            raise TableError("this fault clears itself as soon as the journal can be written again", kind="conflict")
        allowed = fault.actions
        if action not in allowed:
            raise TableError(f"fault {fault_id} ({fault.code}) is cleared by {', '.join(allowed)}, not {action!r}")
        if not by.strip() or not reason.strip():
            raise TableError("clearing a fault needs who clears it and why")
        body: dict[str, JSON] = {"fault": fault_id, "action": action, "by": by, "reason": reason}
        if action == "replace":
            if card is None:
                raise TableError("replace needs the card the supervisor sees (such as 'AS')")
            try:
                replacement = parse_card(card)
            except CardError as exc:
                raise TableError(str(exc), field="card") from None
            if self.shoe.composition.count(replacement) == 0:
                raise TableError(
                    f"{replacement} cannot come from the {self.shoe.composition.describe()}: replace with the card "
                    "in hand, one this shoe holds",
                    field="card",
                )
            body["card"] = str(replacement)
        if action == "void" and (self.round_no is None or self.awaiting.kind == "round"):
            raise TableError("there is no round being dealt to void; dismiss the fault instead", kind="conflict")
        if fault.code == "camera-bumped" and self.camera.status == "bumped":
            raise TableError(
                f"there is no recalibration yet for fault {fault_id}: the camera still sees its markers moved; "
                "recalibrate it first (POST /api/camera/recalibrate), then dismiss",
                kind="conflict",
            )
        return self._commit("fault-cleared", body, self.round_no)

    def acknowledge_fault(self, fault_id: int, by: str) -> Entry:
        if fault_id not in self.faults:
            raise TableError(f"there is no open fault {fault_id}", kind="conflict")
        return self._commit("fault-acknowledged", {"fault": fault_id, "by": by}, self.round_no)

    def void(self, by: str, reason: str) -> Entry:
        if self.round_no is None or self.awaiting.kind == "round":
            raise TableError("there is no round being dealt to void", kind="conflict")
        if not by.strip() or not reason.strip():
            raise TableError("voiding a round needs who voids it and why")
        return self._commit("void", {"by": by, "reason": reason}, self.round_no)

    def button(self, name: str, by: str, source: Mapping[str, JSON] | None = None) -> Entry:
        """A dealer button. `confirm` after a settled round means the seats are paid (the
        home-plate lamps go dark, the display returns to idle; with a camera, the payouts on the
        felt are checked); pressed again after the cut card, it means a freshly shuffled shoe is
        loaded; pressed between rounds with nothing else to confirm, it opens the round the
        camera proposes. `source` is the shoe's message when the shoe's own button was pressed
        (kept like a card's, so a restarted reader resumes after it)."""
        record = self.current
        idle = (
            name == "confirm"
            and self.awaiting.kind == "round"
            and not self.shuffle_due
            and not (record is not None and record.status == "settled" and not record.paid)
        )
        body: dict[str, JSON] = {"button": name, "by": by}
        if source is not None:
            body["source"] = dict(source)
        entry = self._commit("button", body, self.round_no)
        if idle and not self.faults:
            proposal = self.camera.proposal(self)
            if proposal is not None and proposal["ready"]:
                with contextlib.suppress(TableError):  # the press is journaled either way
                    self.open_from_camera(by, proposal["scene_seq"])
        return entry

    def shoe_reshuffled(self, by: str) -> Entry:
        """A freshly shuffled shoe is loaded (between rounds): every card is back in the count."""
        if self.awaiting.kind != "round":
            raise TableError(
                f"round {self.round_no} is still being dealt; load a new shoe between rounds", kind="conflict"
            )
        return self._commit("shoe-reshuffled", {"by": by}, self.round_no)

    def shoe_event(self, event: str, source: Mapping[str, JSON]) -> Entry:
        """The shoe says the cut card came out or the shoe is empty: shuffle after this round."""
        return self._commit("shoe-event", {"event": event, "source": dict(source)}, self.round_no)

    def access(self, kind: Literal["login", "camera-recalibrated"], body: Mapping[str, JSON]) -> Entry:
        """An access to the table or its devices (a login, good or refused; a recalibration):
        journaled for the audit trail; it changes nothing in the game."""
        return self._commit(kind, dict(body), self.round_no)

    def device_status(self, device: str, status: Mapping[str, JSON]) -> None:
        """Record a device's status for the screens (not journaled: it is not an input)."""
        if self.devices.get(device) == dict(status):
            return
        self.devices[device] = dict(status)
        self._status_changed(f"the {device}'s status")

    def _status_changed(self, what: str) -> None:
        # Something the screens show changed without an entry (a device, the journal's disk).
        for watcher in self.device_watchers:
            try:
                watcher(self)
            except Exception:  # a screen's feed never stops the table
                log.exception("telling the screens of %s failed", what)

    def follow(self, entry: Entry) -> tuple[Effect, ...]:
        """Apply an entry another Table journaled (a replica that follows the journal: the floor
        publisher's copy of the table). Nothing is journaled or shown, and no history is kept:
        after a round ends only the round being dealt stays in memory."""
        effects = self._apply(entry)
        if self._round_ended:
            self._round_ended = False
            self.rounds.indexed(self.round_no)
        return effects

    def retry_journal(self) -> Entry | None:
        """While the journal cannot be written, try again (the daemon calls this every few
        seconds): the entry that says the fault is over, or None if there was no fault."""
        if self.journal_fault is None:
            return None
        return self._journal_back()

    # -- the one path every entry takes ---------------------------------------------------------

    def _commit(self, kind: str, body: dict[str, JSON], round_no: int | None) -> Entry:
        if self.journal_fault is not None:
            self._journal_back()
        try:
            entry = self.journal.append(kind, body, round_no)
        except JournalUnwritable as exc:
            self._journal_down(exc)
            raise TableUnavailable(str(exc)) from None
        effects = self._apply(entry)
        self._tell(entry, effects)
        if self._round_ended:
            self._round_ended = False
            self.keep_snapshot()
        return entry

    def journal_down(self, exc: JournalUnwritable) -> None:
        """The journal was found unwritable without an input being refused (the daemon's probe at
        start): the journal fault shows at once, and clears itself as after a refused input."""
        self._journal_down(exc, refused=0)

    def _journal_down(self, exc: JournalUnwritable, *, refused: int = 1) -> None:
        if self.journal_fault is not None:
            self._refused += refused
            return
        code = "disk-full" if exc.reason == "full" else "disk-failing"
        self.journal_fault = Fault(JOURNAL_FAULT_ID, code, str(exc), utc_now(), self.round_no)
        self.faults[JOURNAL_FAULT_ID] = self.journal_fault
        self._refused = refused
        log.error("%s (%s)", exc, exc.detail)  # once: the count is logged when it ends
        self.redrive()
        self._status_changed("the journal's fault")

    def _journal_back(self) -> Entry:
        fault = self.journal_fault
        assert fault is not None
        body: dict[str, JSON] = {
            "code": fault.code,
            "message": fault.message,
            "since": fault.at,
            "refused": self._refused,
        }
        try:
            entry = self.journal.append("journal-restored", body, self.round_no)
        except JournalUnwritable:
            self._refused += 1
            raise TableUnavailable(fault.message) from None
        self.journal_fault = None
        effects = self._apply(entry)
        log.warning(
            "the journal can be written again (%s since %s; %d inputs refused meanwhile, to be offered again)",
            fault.code,
            fault.at,
            self._refused,
        )
        self._tell(entry, effects)
        self.redrive()
        return entry

    def _tell(self, entry: Entry, effects: tuple[Effect, ...]) -> None:
        for output in [*self.outputs, *self.listeners]:
            try:
                output.update(self, entry, effects)
            except Exception as exc:  # a broken lamp or display never loses the journaled entry
                log.exception("output %s failed on journal entry %d", type(output).__name__, entry.seq)
                self.devices[type(output).__name__] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    # -- snapshots ------------------------------------------------------------------------------

    def snapshot_state(self) -> dict[str, JSON]:
        """The whole table state as plain JSON, each part from the module that owns it."""
        current = self.current
        state: dict[str, Any] = {
            "game": self.game_name,
            "engine": to_json(self.state),
            "round_no": self.round_no,
            "round": current.record_json() if current is not None else None,
            "round_ended": self.rounds.ended_at(self.round_no),
            "faults": [f.to_json() for n, f in sorted(self.faults.items()) if n != JOURNAL_FAULT_ID],
            "held": [[seq, str(card)] for seq, card in self.held],
            "meters": self.meters.to_json(),
            "shoe": self.shoe.to_json(),
            "last_card": self.last_card,
            "shoe_link": self.shoe_link,
            "notice": self.notice,
            "shuffle_due": self.shuffle_due,
            "camera": self.camera.to_json(),
        }
        return _plain(state)

    def keep_snapshot(self) -> bool:
        """Keep the state after the last entry, and the rounds finished since the last one, in
        the journal's database (a read-only table keeps nothing)."""
        if self.journal.readonly:
            return False
        body = {"state": self.snapshot_state(), "floor_confirmed": self.journal.floor_confirmed()}
        if not self.journal.write_snapshot(body, self.rounds.to_index(self.round_no)):
            return False
        self.rounds.indexed(self.round_no)
        return True

    def _load_state(self, state: Mapping[str, Any]) -> None:
        if state["game"] != self.game_name:
            raise TableError(
                f"the journal is of a {state['game']} table, but the configuration says {self.game_name}"
            )
        self.state = from_json(self.game.state_type, state["engine"])
        self.round_no = state["round_no"]
        current = RoundRecord.from_record(state["round"]) if state["round"] is not None else None
        self.rounds.restore(current, state["round_ended"])
        self.faults = {int(f["id"]): Fault.from_json(f) for f in state["faults"]}
        self.held = [(int(seq), parse_card(card)) for seq, card in state["held"]]
        self.meters = Meters.from_json(state["meters"])
        self.shoe.restore(state["shoe"])
        self.last_card = state["last_card"]
        self.shoe_link = state["shoe_link"]
        self.notice = state["notice"]
        self.shuffle_due = state["shuffle_due"]
        self.camera.restore(state["camera"])

    def _restore(self) -> None:
        """The state after the last entry: the last snapshot (checked), then the entries after it."""
        snapshots = self.journal.snapshots(2)
        after = self.journal.first_seq() - 1
        if snapshots:
            last = snapshots[-1]
            self._check_snapshot(snapshots[-2] if len(snapshots) > 1 else None, last)
            self._load_state(last.body["state"])
            after = last.seq
        elif after > 0:
            raise JournalCorrupt(
                f"{self.journal.path}: entries up to {after} were archived but no snapshot of the table after "
                "them is left; run `tablectl journal rebuild` with the archive"
            )
        due = 0
        for entry in self.journal.entries(after=after):
            self._apply(entry)
            if self._round_ended:
                self._round_ended = False
                due += 1
                if due % REPLAY_SNAPSHOT_EVERY == 0:
                    self.keep_snapshot()
        if due % REPLAY_SNAPSHOT_EVERY:
            self.keep_snapshot()

    def _check_snapshot(self, previous: Snapshot | None, last: Snapshot) -> None:
        """`last` must be exactly what the previous snapshot (or the first entry) and the entries
        between give: a snapshot that disagrees with its entries stops the table."""
        scratch = Table(
            self.journal, game=self.game_name, rules=self.rules_doc, table_id=self.table_id, replay=False
        )
        start = self.journal.first_seq() - 1
        if previous is not None:
            scratch._load_state(previous.body["state"])
            start = previous.seq
        elif start > 0:
            raise JournalCorrupt(
                f"{self.journal.path}: the snapshot after entry {last.seq} cannot be checked (no earlier snapshot "
                "and no first entries); run `tablectl journal rebuild`"
            )
        for entry in self.journal.entries(after=start, upto=last.seq):
            scratch._apply(entry)
        made = scratch.snapshot_state()
        kept = last.body["state"]
        if made != kept:
            part = next((k for k in sorted(set(made) | set(kept)) if made.get(k) != kept.get(k)), "?")
            raise JournalCorrupt(
                f"{self.journal.path}: the snapshot after entry {last.seq} disagrees with the entries it summarises "
                f"(its {part!r} differs). The entries are the truth: run `tablectl journal rebuild` to make the "
                "snapshots again from them, then start the table"
            )

    def _apply(self, entry: Entry) -> tuple[Effect, ...]:
        """Apply one journaled entry. Deterministic: replaying the journal rebuilds the state."""
        body = entry.body
        effects: tuple[Effect, ...] = ()
        if entry.kind == "round-open":
            assert entry.round is not None
            self.round_no = entry.round
            self.rounds.add(RoundRecord(entry.round, entry.at))
            self.notice = None
            effects = self._engine(event_from_json(body["event"]))
            self._follow_shuffles(effects)
            self._take_notice(effects)
        elif entry.kind == "card":
            card = parse_card(body["card"])
            self.last_card = str(card)
            self._note_shoe_link(body)
            if self.faults:
                self.held.append((entry.seq, card))
            else:
                effects = self._deal(entry, card)
        elif entry.kind == "decision":
            effects = self._engine(event_from_json(body["event"]))
            self._take_notice(effects)
        elif entry.kind == "fault":
            self._latch(entry, body["code"], body["message"], body.get("card"))
            self._note_shoe_link(body)
        elif entry.kind == "fault-acknowledged":
            self.faults[body["fault"]].acknowledged_by = body["by"]
        elif entry.kind == "fault-cleared":
            effects = self._clear(entry)
        elif entry.kind == "void":
            effects = self._void(body["by"], body["reason"])
        elif entry.kind == "button":
            self._note_shoe_link(body)
            record = self.current
            if body["button"] == "confirm":
                self.notice = None  # the dealer has read it (a dead card set aside, a puck removed)
            if body["button"] == "confirm" and record is not None and record.status == "settled" and not record.paid:
                record.paid = True
            elif body["button"] == "confirm" and self.shuffle_due and self.awaiting.kind == "round":
                self.shoe.reshuffle()  # the dealer confirms the new shoe is loaded
                self.shuffle_due = None
        elif entry.kind == "shoe-reshuffled":
            self.shoe.reshuffle()
            self.shuffle_due = None
        elif entry.kind == "shoe-event":
            self.shuffle_due = body["event"]
            self._note_shoe_link(body)
        elif entry.kind == "journal-restored":
            self.faults.pop(JOURNAL_FAULT_ID, None)
            self.meters.faults[body["code"]] += 1
        raised = self.camera.follow(self, entry, effects)
        if raised is not None:
            self._latch(entry, raised[0], raised[1], None)
        if self._ending and self.round_no is not None:
            self._ending = False
            self._round_ended = True
            self.rounds.ended(self.round_no, entry.seq)
        self.recent_effects[entry.seq] = effects
        if len(self.recent_effects) > RECENT_EFFECTS:
            del self.recent_effects[next(iter(self.recent_effects))]
        return effects

    def _note_shoe_link(self, body: Mapping[str, Any]) -> None:
        # The last shoe message journaled: a restarted reader resumes after it, so the shoe's
        # repeat of it is recognised and not used twice.
        source = body.get("source") or {}
        if "session" in source and "seq" in source:
            # "frame" (the message's TYPE and PAYLOAD, hex) tells a resend from a reused SEQ.
            self.shoe_link = {k: source[k] for k in ("session", "seq", "frame") if k in source}

    def _deal(self, entry: Entry, card: Card, *, confirmed: bool = False) -> tuple[Effect, ...]:
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
        self.state, effects = self.game.apply(self.state, event)
        if before != "round" and self.awaiting.kind == "round" and self.round_no is not None:
            self._finish_round()
        return effects

    def _finish_round(self) -> None:
        assert self.round_no is not None
        record = self.rounds[self.round_no]
        if record.status != "open":
            return
        self._ending = True
        settlement = self.game.settlement(self.state)
        record.settlement = settlement
        record.status = "void" if "void" in settlement else "settled"
        if record.status == "void":
            # A void round settles nothing (every wager went back), so it has no round file to
            # replay; recall shows who voided it and why.
            self.meters.voids += 1
            return
        record.round_file = self.game.round_file(self.state)
        self.meters.settled(self.game, settlement)

    def _latch(self, entry: Entry, code: str, message: str, card: str | None) -> None:
        held = parse_card(card) if card is not None and code in CARD_FAULTS else None
        unconfirmable = held is not None and self.shoe.composition.count(held) == 0
        fault = Fault(entry.seq, code, message, entry.at, entry.round, card, unconfirmable=unconfirmable)
        self.faults[entry.seq] = fault
        self.meters.faults[code] += 1

    def _clear(self, entry: Entry) -> tuple[Effect, ...]:
        body = entry.body
        fault = self.faults.pop(body["fault"])
        effects: list[Effect] = []
        held_card = fault.card
        action = body["action"]
        if action == "void":
            self.held.clear()
            self.faults.clear()
            return self._void(body["by"], body["reason"])
        if fault.code in CARD_FAULTS:
            if action == "confirm" and held_card is not None:
                effects.extend(self._deal(entry, parse_card(held_card), confirmed=True))
            elif action == "replace":
                effects.extend(self._deal(entry, parse_card(body["card"])))
        elif action == "replace":  # a misread: the card the dealer sees is entered by hand
            effects.extend(self._deal(entry, parse_card(body["card"])))
        # Cards that came out while play was stopped are dealt now, in the order they came.
        while self.held and not self.faults:
            seq, card = self.held.pop(0)
            effects.extend(self._deal(dataclasses.replace(entry, seq=seq), card))
        return tuple(effects)

    def _void(self, by: str, reason: str) -> tuple[Effect, ...]:
        if self.awaiting.kind == "round":
            return ()
        return self._engine(VoidRound(by=by, reason=reason))

    def _open_event(self, body: Mapping[str, Any]) -> Event:
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
            raise TableError.of_rule(exc, str(exc).replace("round file: ", "", 1)) from None

    # -- recall ---------------------------------------------------------------------------------

    def last_rounds(self, count: int) -> list[RoundRecord]:
        """The last `count` rounds, oldest first, read by number from the round index."""
        return self.rounds.last(count)


def _plain(value: dict[str, Any]) -> dict[str, JSON]:
    # Exactly what a stored snapshot reads back as (tuples become lists), so the two compare.
    plain: dict[str, JSON] = json.loads(json.dumps(value, sort_keys=True))
    return plain

