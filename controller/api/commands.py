"""What the API may ask of the table, by name: the jobs the table's loop runs for it (`Commands`)
and the device controls run beside it (`Controls`).

A route never hands the table code of its own. It names a command and gives its arguments
(`await table_call(rt, "void", by=..., reason=...)`); the table's side looks the name up here and
runs it on the table's loop, between cards (controller/api/gate.py). That is what lets the API
live in a process of its own (controller/api/remote.py): a command crosses the channel as a name
and plain data, and nothing else the API sends can run on the table's side. The same commands run
in one process (a test's app, a tool), through the same gate.

Each command takes the table first; what it returns goes back to the caller as it is (in another
process, pickled: entries, documents, text). Refusals are `TableError`s, as the table raises them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from controller.analytics.facts import Facts, journal_facts
from controller.journal.audit import audit as audit_rows
from controller.journal.rounds import RoundRecord, table_payment
from controller.table import TableError
from controller.table.view import prompt
from controller.table.visibility import sight

if TYPE_CHECKING:
    from controller.api.live import FeedSource, Joined, Unmasked
    from controller.engine.cards import Card
    from controller.journal.log import Entry
    from controller.security.authentication import Report
    from controller.table import Table

#: Finished rounds kept as the dealer recalls them (their documents and the cards hidden in them).
FINISHED_KEPT = 1000
#: A recalled round: its document and the cards its audience may not see in it.
Recalled = tuple[dict[str, Any], frozenset[str]]


class Commands:
    """The table's side of the API: every job a route may name (on the table's loop)."""

    def __init__(
        self,
        feed: FeedSource | None,
        *,
        metrics_text: Callable[[], tuple[str, bytes]] | None = None,
        accept_config: Callable[[Table, str, str], dict[str, Any]] | None = None,
    ) -> None:
        self.feed = feed
        self._metrics_text = metrics_text
        self._accept_config = accept_config
        # Finished rounds and the cards the dealer may not see in them.
        self._finished: dict[int, tuple[RoundRecord, frozenset[str]]] = {}

    def forget(self, number: int) -> None:
        """An entry of round `number` came: what was kept of it is read afresh next time."""
        self._finished.pop(number, None)

    # -- play -----------------------------------------------------------------------------------

    def open_round(self, table: Table, body: Mapping[str, Any], by: str) -> int:
        return table.open_round(body, by=by)

    def open_from_camera(self, table: Table, by: str, scene_seq: int | None) -> int:
        return table.open_from_camera(by=by, scene_seq=scene_seq)

    def decide(self, table: Table, choice: Mapping[str, Any], role: str) -> dict[str, Any]:
        return _with_prompt(table, table.decide(choice, by=role), role)

    def confirm(self, table: Table, by: str, role: str) -> dict[str, Any]:
        return _with_prompt(table, table.button("confirm", by=by), role)

    def void(self, table: Table, by: str, reason: str) -> Entry:
        return table.void(by=by, reason=reason)

    def override_payouts(self, table: Table, by: str, reason: str) -> Entry:
        return table.override_payouts(by=by, reason=reason)

    def clear_fault(
        self, table: Table, fault_id: int, action: str, by: str, reason: str, card: str | None
    ) -> Entry:
        return table.clear_fault(fault_id, action, by=by, reason=reason, card=card)

    def acknowledge_fault(self, table: Table, fault_id: int, by: str) -> Entry:
        return table.acknowledge_fault(fault_id, by=by)

    def shoe_reshuffled(self, table: Table, by: str) -> Entry:
        return table.shoe_reshuffled(by=by)

    def software_check(self, table: Table, report: Mapping[str, Any], trigger: str, by: str) -> Entry:
        return table.software_check(report, trigger, by=by)

    def accept_config(self, table: Table, by: str, reason: str) -> dict[str, Any]:
        if self._accept_config is None:
            raise TableError("this table was started without software authentication", kind="not-found")
        return self._accept_config(table, by, reason)

    def dealer_list(self, table: Table, dealers: Any, by: str, reason: str) -> dict[str, Any]:
        entry = table.dealer_list(dealers, by=by, reason=reason)
        return {"journal_seq": entry.seq, **table.roster.to_json()}

    def dealer_sign_in(self, table: Table, dealer: str, by: str) -> dict[str, Any]:
        entry = table.dealer_sign_in(dealer, by=by)
        return {"journal_seq": entry.seq, **table.roster.to_json()}

    def dealer_sign_out(self, table: Table, by: str) -> dict[str, Any]:
        entry = table.dealer_sign_out(by=by)
        return {"journal_seq": entry.seq, **table.roster.to_json()}

    def rating_session(self, table: Table, action: str, place: int, player: str | None, by: str) -> Entry:
        return table.rating_session(action, place, player, by=by)

    # -- reads ----------------------------------------------------------------------------------

    def dealers(self, table: Table) -> dict[str, Any]:
        """The dealer list and who is signed in."""
        return table.roster.to_json()

    def recalled(
        self, table: Table, numbers: list[int] | None, last: int, everything: bool, *, check: bool = False
    ) -> list[Recalled]:
        """Rounds `numbers` (or the `last` ones, oldest first) as recall lists them (with how each
        stands with its payouts, read afresh: it changes when the next round opens), each with the
        cards its audience may not see in it, for the caller to mask. A finished round is read from
        the journal once and kept (any entry of its round forgets it). `check`: a round the table
        does not have is refused in the table's words (not-found)."""
        if numbers is None:
            numbers = table.rounds.last_numbers(last)
        elif check:
            for number in numbers:
                _record(table, number)
        dealer = sight(table, None)
        now = frozenset() if everything else dealer.current()
        out = []
        for number in numbers:
            kept = self._finished.get(number)
            if kept is None:
                record = table.rounds[number]
                kept = (record, dealer.hidden(number))
                if record.status != "open":
                    self._finished[number] = kept
                    while len(self._finished) > FINISHED_KEPT:
                        del self._finished[next(iter(self._finished))]
            record, hidden = kept
            doc = {**record.to_json(), "payment": table_payment(table, record)}
            out.append((doc, frozenset() if everything else hidden | now))
        return out

    def round_file(self, table: Table, number: int) -> dict[str, Any]:
        record = _record(table, number)
        if record.status == "void":
            raise TableError(
                f"round {number} was void: every wager went back, so there is no round file to replay",
                kind="conflict",
            )
        if record.round_file is None:
            raise TableError(
                f"round {number} is still open; its round file exists once it is settled", kind="conflict"
            )
        return dict(record.round_file)

    def audit(self, table: Table, last: int) -> list[dict[str, Any]]:
        return audit_rows(table.journal, last)

    def metrics(self, _table: Table) -> tuple[str, bytes]:
        """The table's metrics in Prometheus's text format (its content type and the text),
        collected where the counts are kept."""
        if self._metrics_text is None:
            raise TableError("this table keeps no metrics", kind="not-found")
        return self._metrics_text()

    def camera(self, table: Table, device: dict[str, Any] | None, role: str) -> dict[str, Any] | None:
        if not table.camera.active and device is None:
            return None
        return sight(table, role).snapshot({"device": device, **table.camera.snapshot(table)})

    def journal_facts(self, table: Table) -> Facts:
        """Where the journal is and the rounds ended since the last snapshot (the analytics')."""
        return journal_facts(table)

    def shoe_composition(self, table: Table) -> Any:
        return table.shoe.composition

    def round_as_it_stands(self, table: Table) -> tuple[Any, bool]:
        return table.state, table.blocked

    def drawn(self, table: Table, role: str, drawn: list[str], state: Any, stopped: bool) -> list[str]:
        return sight(table, role).drawn(drawn, state, stopped)

    # -- the live feed --------------------------------------------------------------------------

    def feed_join(self, table: Table, whole: bool = False) -> Joined:
        return self._source().join(table, whole)

    def feed_backlog(self, table: Table, after: int, upto: int) -> tuple[list[Unmasked], int]:
        return self._source().backlog(table, after, upto)

    def _source(self) -> FeedSource:
        if self.feed is None:
            raise TableError("this table has no live feed", kind="not-found")
        return self.feed

    # -- by name --------------------------------------------------------------------------------

    def find(self, name: str) -> Callable[..., Any]:
        """The command called `name` (LookupError for any other name: nothing else runs)."""
        if name.startswith("_") or name in ("find", "forget") or not callable(getattr(type(self), name, None)):
            raise LookupError(f"no table command {name!r}")
        fn: Callable[..., Any] = getattr(self, name)
        return fn


class Controls:
    """The devices' controls the API may use (simulation's shoe, camera scene and pins, the
    camera's recalibration, the software check): blocking calls, run off both loops, by name.
    Each is there or not (`names`); a route says "not here" in its own words for one that is not."""

    def __init__(self, **controls: Callable[..., Any] | None) -> None:
        self._controls = {name: fn for name, fn in controls.items() if fn is not None}

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._controls)

    def find(self, name: str) -> Callable[..., Any]:
        fn = self._controls.get(name)
        if fn is None:
            raise LookupError(f"no device control {name!r} in this daemon")
        return fn


def sim_controls(
    sim: Any = None,
    sim_pins: Callable[[], dict[str, Any]] | None = None,
    sim_scene: Any = None,
    recalibrate: Callable[[], None] | None = None,
    authenticate: Callable[[bytes | None], Report] | None = None,
) -> Controls:
    """The controls a daemon (or a test's app) offers, from the devices it has."""

    def stack(cards: list[Card]) -> None:
        sim.stack(cards)

    def draw(count: int) -> list[Card]:
        return list(sim.draw(count))

    def fault(name: str, on: bool) -> str:
        return str(sim.fault(name, on))

    return Controls(
        sim_stack=stack if sim is not None else None,
        sim_draw=draw if sim is not None else None,
        sim_fault=fault if sim is not None else None,
        sim_pins=sim_pins,
        sim_scene=sim_scene.change if sim_scene is not None else None,
        recalibrate=recalibrate,
        authenticate=authenticate,
    )


def _record(table: Table, number: int) -> RoundRecord:
    record = table.rounds.get(number)
    if record is None:
        raise TableError(f"there is no round {number} at this table", kind="not-found")
    return record


def _with_prompt(table: Table, entry: Entry, role: str) -> dict[str, Any]:
    """An input's entry and the prompt after it, as `role` sees it (in the same job as the input)."""
    return {"journal_seq": entry.seq, "prompt": sight(table, role).text(prompt(table))}
