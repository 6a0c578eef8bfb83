"""The table: every input is journaled, then applied by the reducer, then its effects go out.

`Table` is the one owner of the table's state and the one writer of its journal. The daemon calls
its methods from a single asyncio loop (device threads post to that loop; nothing else touches a
Table). Each method validates its input against the state, appends one journal entry (committed
before anything else happens), applies the entry with the reducer (`TableState.apply`, the same
code every replay runs), and tells the outputs (LEDs, display, screens) what changed. Starting a
Table restores the state from the journal (controller/table/snapshots.py), then re-drives the
outputs.

Faults (GAMES.md section 4) are latched in the journal: they block the card flow until a
supervisor clears them with a journaled action naming who and why, and they survive restarts.
A card that arrives while play is blocked is journaled and held, never dropped; it is dealt
when the fault is cleared (or returned to the supervisor's judgement by `replace` and `void`).
The journal's own fault (its disk cannot be written) is the Table's: nothing can be journaled
while it lasts, so it is shown beside the latched faults and ended by a `journal-restored` entry.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from controller.engine.base import JSON, Awaiting, Effect, Game, RuleError, SharedJson, to_json
from controller.engine.cards import Card, CardError, ShoeTracker, parse_card
from controller.games.base import GameAdapter
from controller.journal.entries import parse_entry
from controller.journal.log import Entry, Journal, JournalUnwritable, utc_now
from controller.journal.rounds import RoundBook, RoundRecord
from controller.table import snapshots
from controller.table.camera import SceneWatch
from controller.table.errors import TableError, TableUnavailable
from controller.table.faults import FAULTS, JOURNAL_FAULT_ID, Fault
from controller.table.meters import Meters
from controller.table.roster import Roster, parse_list
from controller.table.state import TableSetup, TableState
from controller.table.view import prompt, shoe_empty

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

log = logging.getLogger("controller.table")

RECENT_EFFECTS = 200  # entries whose effects a late screen is told (the screens ask for the last 10)


class Output(Protocol):
    """Something that shows the table (LEDs, pole display, dealer screen feed)."""

    def redrive(self, table: Table) -> None:
        """Show the whole current state (at start and after recovery)."""

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        """Show what one journaled entry changed."""


#: Entries that change nothing a lamp, the pole display or a screen's picture shows (a signed chain
#: head, controller/security/chainhead.py): the lamps and the pole display are not told of them,
#: and the API's feed reuses its last snapshot with the journal's new head (controller/api/side.py).
QUIET_KINDS = frozenset({"chain-head"})


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
        """`replay=False` gives the table as it stands before any entry; `seats`: the seats the
        table has (config `table.seats`; None: the game's table card's)."""
        self.journal = journal
        self.setup = TableSetup.of(game, rules, seats)
        self.table_id = table_id
        self.simulated = simulated
        self.outputs: list[Output] = outputs or []
        # The effects of the last entries applied (seq -> effects), for screens that join late: the
        # live feed's backlog tells each entry with what it did, as it was told live.
        self.recent_effects: dict[int, tuple[Effect, ...]] = {}
        self.devices: dict[str, dict[str, JSON]] = {}
        self.listeners: list[Output] = []  # the API's live feed; told after the devices
        # Told each entry's kind BEFORE it is journaled (a card's commit and fsync not yet begun):
        # the software check's RoundHold stops a check's process before a card dealt between
        # rounds waits on the disk (controller/security/checker.py). Quick, and never raise.
        self.ahead: list[Callable[[str], None]] = []
        # Told when a device's status changes (no entry is journaled for it): the live feed sends
        # the screens the state again, so a Devices panel follows the shoe as it comes and goes.
        self.device_watchers: list[Callable[[Table], None]] = []
        self.journal_fault: Fault | None = None  # the journal cannot be written (never journaled itself)
        # The last entry that may have changed what the table shows (not a QUIET_KINDS one): the API's
        # feed makes a new snapshot only after such an entry (controller/api/side.py).
        self.shown_seq = journal.last_seq
        # The engine state's JSON after one entry and the next, its unchanged parts reused: the
        # live feed's snapshot makes it after each entry, and the snapshot kept as a round ends
        # takes it from there (the same state: made once, not again).
        self.state_json = SharedJson()
        self._refused = 0  # inputs refused while it lasts
        # The dealer list and who is signed in: read from the journal once, at start (a scan of the
        # entries' kinds, not to be paid on the loop at the first round), then followed.
        self._roster: Roster | None = Roster.read(journal) if replay else None
        if replay:
            self.now = snapshots.restore(journal, self.setup, applied=self._remember)
            self.redrive()
        else:
            self.now = TableState.initial(self.setup)

    def redrive(self) -> None:
        """Show the whole state on every output (at start, after recovery, after a device returns)."""
        for output in self.outputs:
            try:
                output.redrive(self)
            except Exception as exc:
                log.exception("output %s failed to re-drive", type(output).__name__)
                self.devices[type(output).__name__] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    # -- what the table looks like: the reducer's state, and the journal's own fault -------------

    @property
    def adapter(self) -> GameAdapter:
        return self.setup.adapter

    @property
    def game(self) -> Game[Any]:
        return self.setup.game

    @property
    def game_name(self) -> str:
        return self.setup.game_name

    @property
    def rules_doc(self) -> dict[str, Any]:
        return dict(self.setup.rules_doc)

    @property
    def seats(self) -> int:
        return self.setup.seats

    @property
    def state(self) -> Any:
        """The engine's state."""
        return self.now.engine

    @property
    def faults(self) -> dict[int, Fault]:
        """Every fault that stops play: those latched by entries, and the journal's own."""
        if self.journal_fault is None:
            return self.now.faults
        return {**self.now.faults, JOURNAL_FAULT_ID: self.journal_fault}

    @property
    def held(self) -> list[tuple[int, Card]]:
        return self.now.held

    @property
    def round_no(self) -> int | None:
        return self.now.round_no

    @property
    def rounds(self) -> RoundBook:
        """Every round by number: the recent ones from the state, the rest from the round index."""
        return RoundBook(self.journal, self.now.rounds)

    @property
    def meters(self) -> Meters:
        return self.now.meters

    @property
    def shoe(self) -> ShoeTracker:
        return self.now.shoe

    @property
    def camera(self) -> SceneWatch:
        """What the overhead camera has seen (from `scene` entries) and what it means for this game."""
        return self.now.camera

    @property
    def last_card(self) -> str | None:
        return self.now.last_card

    @property
    def shoe_link(self) -> dict[str, Any] | None:
        return self.now.shoe_link

    @property
    def notice(self) -> str | None:
        return self.now.notice

    @property
    def shuffle_due(self) -> str | None:
        return self.now.shuffle_due

    @property
    def blocked(self) -> bool:
        return bool(self.faults)

    @property
    def awaiting(self) -> Awaiting:
        return self.now.awaiting

    @property
    def current(self) -> RoundRecord | None:
        """The round being dealt, or the last one (settled or void); None before the first."""
        return self.now.current

    def payouts(self) -> list[dict[str, Any]]:
        """What the dealer pays and takes at each seat for the last settled round."""
        return self.now.payouts()

    def confirm_does(self) -> str | None:
        """What the dealer's confirm does now ("payouts", "shoe", "notice"), or None."""
        return self.now.confirm_does()

    def payouts_due(self) -> bool:
        """The last round's payouts wait for the dealer's confirm: no round opens until then."""
        return self.now.payouts_due()

    # -- inputs ---------------------------------------------------------------------------------

    def open_round(self, body: Mapping[str, Any], by: str, *, via: str | None = None) -> int:
        """Open a round with `body` = {"seats": [...], "blind_seat": n | null} as in a round file
        (`via` = "camera" when the wagers are the camera's proposal, which the dealer confirmed)."""
        if self.faults:
            raise TableError(f"play is stopped: {prompt(self)}", kind="conflict")
        if self.awaiting.kind != "round":
            raise TableError(f"round {self.round_no} is still being dealt; settle or void it first", kind="conflict")
        self._refuse_unpaid()
        event = self.setup.open_event(body)
        # Ask the engine before journaling, so a refused opening leaves no trace but the refusal.
        try:
            self.game.apply(self.state, event)
        except RuleError as exc:
            raise TableError.of_rule(exc) from None
        number = (self.round_no or 0) + 1
        entry: dict[str, JSON] = {"event": to_json(event), "by": by}
        if self.roster.on is not None:
            entry["dealer"] = self.roster.on  # who dealt it (controller/analytics/dealers.py)
        if via is not None:
            entry |= {"via": via, "scene_seq": self.camera.seq}
        self._commit("round-open", entry, number)
        return number

    # -- dealers and rating sessions (controller/analytics/: journaled here, read there) ----------

    @property
    def roster(self) -> Roster:
        """The dealer list the supervisor keeps and who is signed in, as the journal says."""
        if self._roster is None:
            self._roster = Roster.read(self.journal)
        return self._roster

    def _roster_entry(self, kind: str, body: dict[str, JSON]) -> Entry:
        entry = self._commit(kind, body, self.round_no)
        self.roster.follow(kind, body, entry.at)
        return entry

    def dealer_list(self, dealers: Any, by: str, reason: str = "") -> Entry:
        """The supervisor's dealer list, whole (each dealer's id, their own short code, and name)."""
        try:
            listed = parse_list(dealers)
        except ValueError as exc:
            raise TableError(str(exc), field="dealers") from None
        on = self.roster.on
        if on is not None and on not in {d["id"] for d in listed}:
            raise TableError(
                f"dealer {on} is signed in: keep them on the list until they sign out (or the next dealer signs in)",
                kind="conflict",
                field="dealers",
            )
        body: dict[str, JSON] = {"dealers": [dict(d) for d in listed], "by": by, "reason": reason}
        return self._roster_entry("dealer-list", body)

    def dealer_sign_in(self, code: str, by: str) -> Entry:
        """A dealer signs in at the start of a down with their id (one on the supervisor's list):
        every round opened from now on records them as its dealer."""
        if not self.roster.dealers:
            raise TableError(
                "this table has no dealer list yet: a supervisor adds the dealers on the supervisor screen",
                kind="conflict",
            )
        found = self.roster.find(code)
        if found is None:
            raise TableError(
                f"dealer id {code.strip()!r} is not on this table's dealer list: check the code, or ask the supervisor",
                field="dealer",
            )
        if self.awaiting.kind != "round":
            raise TableError(f"sign in between rounds: round {self.round_no} is still being dealt", kind="conflict")
        return self._roster_entry("dealer-in", {"dealer": found, "by": by})

    def dealer_sign_out(self, by: str) -> Entry:
        """The signed-in dealer's down ends."""
        on = self.roster.on
        if on is None:
            raise TableError("no dealer is signed in", kind="conflict")
        if self.awaiting.kind != "round":
            raise TableError(f"sign out between rounds: round {self.round_no} is still being dealt", kind="conflict")
        return self._roster_entry("dealer-out", {"dealer": on, "by": by})

    def rating_session(self, action: str, place: int, player: str | None, by: str) -> Entry:
        """The supervisor opens (with a player id, typed or scanned from the rating slip) or
        closes the rating session of a place (a seat; a spot at Jokers 22)."""
        if not 1 <= place <= self.seats:
            raise TableError(f"place {place}: this table's places are 1 to {self.seats}", field="place")
        if action == "open":
            if not player or not player.strip() or len(player.strip()) > 64 or not player.strip().isprintable():
                raise TableError("a player id (typed or scanned: 1 to 64 printable characters)", field="player")
            return self._commit("rating-open", {"place": place, "player": player.strip(), "by": by}, self.round_no)
        body: dict[str, JSON] = {"place": place, "by": by}
        if player and player.strip():
            body["player"] = player.strip()  # that player's session only (Jokers 22: one of a spot's)
        return self._commit("rating-close", body, self.round_no)

    def opening_refused(self, body: Mapping[str, Any]) -> str | None:
        """Why `body` would not open a round now (the engine's words), or None if it would."""
        return self.now.opening_refused(body)

    def _refuse_unpaid(self) -> None:
        if self.now.payouts_due():
            raise TableError(
                f"round not opened: round {self.round_no}'s payouts are not confirmed yet. {prompt(self)}, then "
                "press confirm (a supervisor can let the next round open without it, giving the reason)",
                kind="conflict",
            )

    def override_payouts(self, by: str, reason: str) -> Entry:
        """A supervisor lets the next round open although the dealer has not confirmed the last
        round's payouts (a dispute, a dealer who left): journaled with who and why; the round
        stays not paid in recall and in the meters."""
        if not by.strip() or not reason.strip():
            raise TableError("opening over unconfirmed payouts needs who allows it and why", field="reason")
        if not self.now.payouts_due():
            raise TableError("there are no unconfirmed payouts to override", kind="conflict")
        return self._commit("pay-override", {"by": by, "reason": reason}, self.round_no)

    def open_from_camera(self, by: str, scene_seq: int | None = None) -> int:
        """Open the round the camera proposes, as the dealer confirmed it. `scene_seq` is the view
        the dealer looked at: if the felt has changed since, the dealer must look again."""
        if self.faults:
            raise TableError(f"play is stopped: {prompt(self)}", kind="conflict")
        if self.awaiting.kind != "round":
            raise TableError(f"round {self.round_no} is still being dealt; settle or void it first", kind="conflict")
        self._refuse_unpaid()
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
        camera proposes. A confirm with nothing to confirm is refused (TableError naming the next
        step) and not journaled, unless it is the shoe's own button (`source`: the shoe's
        message, kept like a card's so a restarted reader resumes after it)."""
        record = self.current
        between = (
            name == "confirm"
            and self.awaiting.kind == "round"
            and not self.shuffle_due
            and not (record is not None and record.pay_due)
            and not self.faults
        )
        proposal = self.camera.proposal(self) if between else None
        opens = proposal is not None and proposal["ready"]
        if name == "confirm" and self.now.confirm_does() is None and not opens and source is None:
            raise TableError(f"Nothing to confirm now. Next: {prompt(self)}", kind="conflict")
        body: dict[str, JSON] = {"button": name, "by": by}
        if source is not None:
            body["source"] = dict(source)
        entry = self._commit("button", body, self.round_no)
        if opens and proposal is not None:
            with contextlib.suppress(TableError):  # the press is journaled either way
                self.open_from_camera(by, proposal["scene_seq"])
        return entry

    @property
    def shoe_empty(self) -> bool:
        """The shoe has nothing left to deal: the count says so, or the shoe itself did."""
        return shoe_empty(self)

    def shoe_reshuffled(self, by: str) -> Entry:
        """A freshly shuffled shoe is loaded (between rounds, or mid-round once the shoe is empty:
        the round cannot go on otherwise): every card is back in the count."""
        if self.awaiting.kind != "round" and not self.shoe_empty:
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

    def accesses(
        self, items: Sequence[tuple[Literal["login", "camera-recalibrated"], Mapping[str, JSON]]]
    ) -> list[Entry]:
        """Several accesses journaled together, in one commit (the API gathers a burst of refused
        logins so that a flood of them costs the disk one write, not one each); then each is
        applied and told in order, as `access` would."""
        if self.journal_fault is not None:
            self._journal_back()
        try:
            entries = self.journal.append_many([(kind, dict(body), self.round_no) for kind, body in items])
        except JournalUnwritable as exc:
            self._journal_down(exc, refused=len(items))
            raise TableUnavailable(str(exc)) from None
        for entry in entries:
            self._tell(entry, self._apply(entry))
            if self.now.ended_by(entry.seq):
                self.keep_snapshot()
        return entries

    def software_check(self, report: Mapping[str, JSON], trigger: str, by: str | None = None) -> Entry:
        """A run of the software authentication (controller/security/authentication.py's report, as JSON),
        whatever its result: a failure latches the blocking `software-authentication` fault, a
        pass ends it. `trigger`: start-up, periodic or on demand; `by`: who asked."""
        body: dict[str, JSON] = {**dict(report), "trigger": trigger, "by": by}
        body.pop("root", None)  # where the code is: the same on every run, kept in the log only
        return self._commit("software-check", body, self.round_no)

    def software_installed(self, body: Mapping[str, JSON]) -> Entry:
        """An install, upgrade or removal of the table's software (controller/security/installs.py): what,
        which release (version, manifest digest), who. For the record only: it changes no play."""
        return self._commit("software-install", dict(body), self.round_no)

    def config_accepted(self, body: Mapping[str, JSON]) -> Entry:
        """A supervisor accepted the configuration file (its digest): the software check compares
        the file with it from now on. For the record: it changes no play."""
        return self._commit("config-accepted", dict(body), self.round_no)

    def sign_head(self, key: Ed25519PrivateKey) -> Entry:
        """Sign where the hash chain stands now (the last entry's seq, the chain after it, the time)
        with the table's own key and journal it as a `chain-head` entry (controller/security/chainhead.py),
        which the floor checks the entries it holds against."""
        from controller.security.chainhead import sign_head  # cryptography: only a signing table imports it

        return self.journal_head(
            sign_head(key, self.table_id, seq=self.journal.last_seq, chain=self.journal.chain, at=utc_now())
        )

    def journal_head(self, body: Mapping[str, JSON], *, durable: bool = True) -> Entry:
        """Journal a signed head (chainhead.sign_head's body, made off the loop by the daemon's
        HeadSigner) as a `chain-head` entry. It must sign where the chain stands now (TableError:
        the chain moved since, sign again). `durable=False`: committed without its own fsync
        (Journal.append(sync=False)); the caller has it flushed off the loop and then calls
        `journal.made_durable` (until then the floor publisher does not send it)."""
        if (body.get("seq"), body.get("chain")) != (self.journal.last_seq, self.journal.chain):
            raise TableError(
                f"the signed head is of entry {body.get('seq')}, the journal is at {self.journal.last_seq}: sign again",
                kind="conflict",
            )
        return self._commit("chain-head", dict(body), self.round_no, sync=durable)

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

    def retry_journal(self) -> Entry | None:
        """While the journal cannot be written, try again (the daemon calls this every few
        seconds): the entry that says the fault is over, or None if there was no fault."""
        if self.journal_fault is None:
            return None
        return self._journal_back()

    # -- the one path every entry takes ---------------------------------------------------------

    def _commit(self, kind: str, body: dict[str, JSON], round_no: int | None, *, sync: bool = True) -> Entry:
        """Write-ahead: the entry is in the journal (committed, fsync'd), then applied, then its
        effects go out. The journal's head file (controller/journal/head.py) is written after
        them, before this returns (and so before the shoe's acknowledgement): its own fsync is
        not in the lamps' way, and a head one entry behind is harmless at the next start."""
        if self.journal_fault is not None:
            self._journal_back()
        for ahead in self.ahead:
            try:
                ahead(kind)
            except Exception:
                log.exception("told of a %s entry ahead of its commit, %r failed", kind, ahead)
        try:
            entry = self.journal.append(kind, body, round_no, head_later=True, sync=sync)
        except JournalUnwritable as exc:
            self._journal_down(exc)
            raise TableUnavailable(str(exc)) from None
        try:
            faults = tuple(self.faults) if kind in QUIET_KINDS else None
            effects = self._apply(entry)
            # Quiet only when it did nothing: no effect, no fault raised or cleared by it.
            self._tell(entry, effects, quiet=faults is not None and not effects and faults == tuple(self.faults))
        finally:
            # A quiet entry's head is not fsync'd on its own: the next entry's makes it durable.
            self.journal.write_head(sync=kind not in QUIET_KINDS)
        if self.now.ended_by(entry.seq):
            self.keep_snapshot()
        return entry

    def _apply(self, entry: Entry) -> tuple[Effect, ...]:
        self.now, effects = self.now.apply(parse_entry(entry))
        self._remember(entry.seq, effects)
        return effects

    def _remember(self, seq: int, effects: tuple[Effect, ...]) -> None:
        self.recent_effects[seq] = effects
        if len(self.recent_effects) > RECENT_EFFECTS:
            del self.recent_effects[next(iter(self.recent_effects))]

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

    def _tell(self, entry: Entry, effects: tuple[Effect, ...], *, quiet: bool = False) -> None:
        """Tell the outputs (lamps, pole display) and then the listeners (the API's feed, the floor
        publisher, the signer) of a journaled entry. A `quiet` one (QUIET_KINDS, and it did nothing)
        changes nothing a lamp or the pole display shows: only the listeners are told."""
        if not quiet:
            self.shown_seq = entry.seq
        for output in self.listeners if quiet else [*self.outputs, *self.listeners]:
            try:
                output.update(self, entry, effects)
            except Exception as exc:  # a broken lamp or display never loses the journaled entry
                log.exception("output %s failed on journal entry %d", type(output).__name__, entry.seq)
                self.devices[type(output).__name__] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    # -- snapshots ------------------------------------------------------------------------------

    def snapshot_state(self) -> dict[str, JSON]:
        """The whole table state as plain JSON (controller/table/snapshots.py)."""
        return snapshots.snapshot_state(self.now)

    def keep_snapshot(self) -> bool:
        """Keep the state after the last entry, and the rounds finished since the last one, in
        the journal's database (a read-only table keeps nothing). A disk found without room for
        the next round at its checkpoint is the journal's fault from now, before any new round."""
        kept = snapshots.keep(self.journal, self.now, self.state_json)
        if self.journal_fault is None and (short := self.journal.short_of_room) is not None:
            self.journal_down(short)
        return kept

    # -- recall ---------------------------------------------------------------------------------

    def last_rounds(self, count: int) -> list[RoundRecord]:
        """The last `count` rounds, oldest first, read by number from the round index."""
        return self.rounds.last(count)
