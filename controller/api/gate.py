"""The API's only handle on the table: work handed to the table's loop, and the view it publishes.

The table has one writer: its own asyncio loop (the daemon's main thread), which reads the shoe,
commits to the journal and drives the lamps and the display. The HTTP server and the screens'
WebSockets run on another loop in another thread, and they never hold the `Table` (nor its
`Journal`): a route hands the table a job (`await gate.call(lambda table: table.button(...))`),
which runs on the table's loop, one job at a time, and gets back its result or its refusal.

The card path comes first. Jobs wait in the gate's own queue, not in the loop's: the loop runs one
job, then everything else that is ready (a card from the shoe, its acknowledgement, a lamp) before
the next job, so a card waits for at most one job however many requests are queued. At most
`limit` jobs wait at a time; beyond that a route is refused at once (`TableBusy`, a 503 with
Retry-After) instead of queueing without bound.

Accesses (logins, refused ones above all, and recalibrations) are journaled in bursts: those that
come within ACCESS_BATCH_S of the last commit of them are gathered and committed together, one
transaction and one fsync, so a flood of wrong tokens from a crowd of addresses costs the table a
few commits a second however large it is, and each caller still gets its answer only once its
access is on disk.

Reads do not queue a job each: the gate keeps the last `TableView` the table published (the state
as each audience sees it, the prompt, the status), read on the table's loop at most once per
change of the table, and only when somebody asks; the masking and encoding for each audience
happen on the API's side, not on the table's loop. A thousand `GET /api/state` between two cards
cost the table one view.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from controller.api.commands import Commands, Controls, Recalled
from controller.engine.base import Effect
from controller.journal.log import Entry
from controller.table.view import prompt, snapshot
from controller.table.visibility import mask_cards, sight

if TYPE_CHECKING:
    from controller.games.base import GameAdapter
    from controller.table import Output, Table

T = TypeVar("T")

#: Jobs that may wait for the table at once; more are refused with "busy" (503).
JOB_LIMIT = 64
#: Accesses are committed at most this often (seconds): those that come meanwhile wait and are
#: committed together; ACCESS_BATCH_MAX at most in one commit.
ACCESS_BATCH_S = 0.2
ACCESS_BATCH_MAX = 64

AccessKind = Literal["login", "camera-recalibrated"]


class TableBusy(RuntimeError):
    """The table's queue of jobs from the API is full: the request is refused, nothing was done."""


@dataclass(frozen=True)
class TableView:
    """What the table published at one moment (built on the table's loop; read anywhere, never changed)."""

    version: int
    seq: int
    blocked: bool
    journal_fault: str | None  # the journal cannot be written: why, in plain words
    #: The whole state (GET /api/state, the feed's "state"), by whether the audience sees every card.
    states: Mapping[bool, dict[str, Any]]
    prompts: Mapping[bool, str]
    hidden: frozenset[str]  # the cards the dealer may not see now
    meters: dict[str, Any] = field(default_factory=dict)
    _encoded: dict[bool, bytes] = field(default_factory=dict, compare=False, repr=False)

    def state(self, everything: bool) -> dict[str, Any]:
        return self.states[everything]

    def state_json(self, everything: bool) -> bytes:
        """The state as a JSON answer's body, encoded once per view and audience (once for both
        when they are given the same document: nothing hidden)."""
        body = self._encoded.get(everything)
        if body is None:
            doc, other = self.states[everything], self._encoded.get(not everything)
            body = other if other is not None and self.states[not everything] is doc else json_bytes(doc)
            self._encoded[everything] = body
        return body

    def prompt(self, everything: bool) -> str:
        return self.prompts[everything]


@dataclass(frozen=True)
class Published:
    """What the table's loop hands over for a view: read there, masked by the caller."""

    version: int
    seq: int
    blocked: bool
    journal_fault: str | None
    whole: dict[str, Any]
    words: str
    hidden: frozenset[str]
    meters: dict[str, Any]


@dataclass(frozen=True)
class Told:
    """What a live-feed message handed to the API's process says of the view beside its state (the
    gate's version after it, and what the state does not hold): with the feed's state, the view."""

    version: int
    journal_fault: str | None
    hidden: frozenset[str]
    meters: dict[str, Any]

    def published(self, whole: dict[str, Any]) -> Published:
        """The view of the table at this version, `whole` being the feed's state then."""
        return Published(
            version=self.version,
            seq=whole["journal_seq"],
            blocked=whole["blocked"],
            journal_fault=self.journal_fault,
            whole=whole,
            words=whole["prompt"],
            hidden=self.hidden,
            meters=self.meters,
        )


class Gate(Protocol):
    """The API's handle on the table, wherever the table is: in this process (`TableGate`) or in
    the daemon's while the API has a process of its own (controller/api/remote.py's RemoteGate).
    What never changes while the daemon runs is plain attributes; the rest is asked for."""

    adapter: GameAdapter
    game_name: str
    table_id: str
    simulated: bool
    seats: int

    async def command(self, name: str, *args: Any, **kwargs: Any) -> Any: ...

    async def view(self) -> TableView: ...

    def access(self, kind: AccessKind, body: Mapping[str, Any]) -> concurrent.futures.Future[Entry]: ...

    @property
    def controls(self) -> frozenset[str]: ...

    async def control(self, name: str, *args: Any) -> Any: ...

    def unmasked(self, recalled: Sequence[Recalled]) -> list[dict[str, Any]]: ...

    def close(self) -> None: ...


@dataclass
class _Job(Generic[T]):
    fn: Callable[[Table], T]
    future: concurrent.futures.Future[T]


class TableGate:
    """Runs the API's jobs on the table's loop, one at a time, between the table's own work.

    `loop` is the table's loop (the daemon's). Without one (a test's app, a tool) the gate runs its
    jobs on one loop in a thread of its own (shared by all such gates), so the app still never
    touches the table itself.
    """

    def __init__(
        self,
        table: Table,
        loop: asyncio.AbstractEventLoop | None = None,
        *,
        describe: Callable[[Table], dict[str, Any]] | None = None,
        limit: int = JOB_LIMIT,
        commands: Commands | None = None,
        controls: Controls | None = None,
    ) -> None:
        self._table = table
        self._loop = loop if loop is not None else _tables_loop()
        self._limit = limit
        self._jobs: deque[_Job[Any]] = deque()
        self._lock = threading.Lock()
        self._scheduled = False
        self._waiting = 0  # jobs queued or running
        self._version = 0  # bumped on the table's loop at every entry and device change
        self._view: TableView | None = None
        self._building: concurrent.futures.Future[Published] | None = None
        self.describe: Callable[[Table], dict[str, Any]] = describe or snapshot
        # What never changes while the daemon runs: safe to read from any thread.
        self.adapter: GameAdapter = table.adapter
        self.game_name = table.game_name
        self.table_id = table.table_id
        self.simulated = table.simulated
        self.seats = table.seats
        self._accesses: list[tuple[AccessKind, dict[str, Any], concurrent.futures.Future[Entry]]] = []
        self._access_due = False  # a commit of the waiting accesses is scheduled
        self._access_last = float("-inf")  # when (the table's loop's clock) the last such commit ran
        self.commands = commands if commands is not None else Commands(None)
        self.devices = controls if controls is not None else Controls()
        # Told each new version (another process), and whether an entry made it (the feed's message
        # of that entry follows in the same telling: controller/api/channel.py's `TableServer`).
        self.on_change: Callable[[int, bool], None] | None = None
        table.listeners.append(self)  # an Output: told of every entry
        table.device_watchers.append(self._changed)

    # -- told by the table (on its loop) --------------------------------------------------------

    def redrive(self, table: Table) -> None:
        self._changed(table)

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        self._changed(table, entry=True)
        if entry.round is not None:
            self.commands.forget(entry.round)

    def _changed(self, _table: Table, *, entry: bool = False) -> None:
        self._version += 1
        if self.on_change is not None:
            self.on_change(self._version, entry)

    def told_after(self, output: Output) -> None:
        """Have `output` told of each entry after the gate and every listener before it (the
        live feed's table half among them), in the same telling of the entry."""
        if output not in self._table.listeners:
            self._table.listeners.append(output)

    # -- jobs -----------------------------------------------------------------------------------

    @property
    def waiting(self) -> int:
        """Jobs queued or running now."""
        return self._waiting

    def submit(self, fn: Callable[[Table], T], *, urgent: bool = False) -> concurrent.futures.Future[T]:
        """Queue `fn(table)` for the table's loop; TableBusy when `limit` jobs already wait
        (`urgent`: the gate's own view, which is never refused)."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            if not urgent and self._waiting >= self._limit:
                raise TableBusy(f"the table is busy ({self._waiting} requests waiting); try again in a moment")
            self._waiting += 1
            self._jobs.append(_Job(fn, future))
            kick = not self._scheduled
            self._scheduled = True
        if kick:
            self._loop.call_soon_threadsafe(self._run_one)
        return future

    async def call(self, fn: Callable[[Table], T]) -> T:
        """`fn(table)` run on the table's loop: its result, or the exception it raised."""
        return await asyncio.wrap_future(self.submit(fn))

    def _run_one(self) -> None:
        # On the table's loop: one job, then whatever else is ready (the card path) before the next.
        job = self._jobs.popleft()
        try:
            if job.future.set_running_or_notify_cancel():
                try:
                    result = job.fn(self._table)
                except BaseException as exc:  # the caller gets the refusal; the loop goes on
                    job.future.set_exception(exc)
                else:
                    job.future.set_result(result)
        finally:
            with self._lock:
                self._waiting -= 1
                more = bool(self._jobs)
                self._scheduled = more
            if more:
                self._loop.call_soon(self._run_one)

    # -- commands and controls ---------------------------------------------------------------

    async def command(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The table's command `name` (controller/api/commands.py) run on the table's loop: its
        result, or the refusal it raised."""
        fn = self.commands.find(name)
        return await self.call(lambda table: fn(table, *args, **kwargs))

    @property
    def controls(self) -> frozenset[str]:
        return self.devices.names

    async def control(self, name: str, *args: Any) -> Any:
        """Device control `name` (blocking: run off both loops)."""
        return await asyncio.to_thread(self.devices.find(name), *args)

    def unmasked(self, recalled: Sequence[Recalled]) -> list[dict[str, Any]]:
        """Rounds the table recalled, masked for their audience (on the caller's loop)."""
        return [mask_cards(doc, hidden, self.adapter) for doc, hidden in recalled]

    # -- accesses, journaled in bursts ------------------------------------------------------------

    def access(self, kind: AccessKind, body: Mapping[str, Any]) -> concurrent.futures.Future[Entry]:
        """Journal an access (never refused as busy: every one is recorded); the future is done
        once it is committed (with TableError when the journal cannot be written)."""
        future: concurrent.futures.Future[Entry] = concurrent.futures.Future()
        with self._lock:
            self._accesses.append((kind, dict(body), future))
            kick = not self._access_due
            self._access_due = True
        if kick:
            self._loop.call_soon_threadsafe(self._schedule_accesses)
        return future

    def _schedule_accesses(self) -> None:
        # On the table's loop: the first access after a quiet spell goes at once, the rest of a
        # burst waits for the next commit, ACCESS_BATCH_S after the last.
        wait = self._access_last + ACCESS_BATCH_S - self._loop.time()
        if wait > 0:
            self._loop.call_later(wait, self._submit_accesses)
        else:
            self._submit_accesses()

    def _submit_accesses(self) -> None:
        self.submit(self._journal_accesses, urgent=True)

    def _journal_accesses(self, table: Table) -> None:
        self._access_last = self._loop.time()
        with self._lock:
            batch = self._accesses[:ACCESS_BATCH_MAX]
            del self._accesses[:ACCESS_BATCH_MAX]
            self._access_due = more = bool(self._accesses)
        if more:
            self._schedule_accesses()
        try:
            entries = table.accesses([(kind, body) for kind, body, _ in batch])
        except BaseException as exc:  # the journal cannot be written: each caller is told
            for _, _, future in batch:
                if future.set_running_or_notify_cancel():
                    future.set_exception(exc)
            return
        for (_, _, future), entry in zip(batch, entries, strict=True):
            if future.set_running_or_notify_cancel():
                future.set_result(entry)

    # -- the published view ---------------------------------------------------------------------

    def view_now(self) -> TableView | None:
        """The view of the table as it stands if it is made already (no change since), else None."""
        view = self._view
        return view if view is not None and view.version == self._version else None

    async def view(self) -> TableView:
        """The table as it stands (read on the table's loop at most once per change; masked and
        encoded here, on the caller's loop, so the table's loop only copies what it publishes)."""
        view = self._view
        if view is not None and view.version == self._version:
            return view
        building = self._building
        if building is None or building.done():
            building = self._building = self.submit(self.publish, urgent=True)
        # Shielded: the read is shared, and one caller that goes away must not cancel it for all.
        published = await asyncio.shield(asyncio.wrap_future(building))
        view = self._view
        if view is None or view.version < published.version:  # the first caller to get it masks it
            view = self._view = self._masked(published)
        return view

    def publish(self, table: Table) -> Published:
        """On the table's loop: what the view is made of, read from the table (fresh documents
        that the table never changes afterwards) with the cards the dealer may not see now."""
        return Published(
            version=self._version,
            seq=table.journal.last_seq,
            blocked=table.blocked,
            journal_fault=table.journal_fault.message if table.journal_fault is not None else None,
            whole=self.describe(table),
            words=prompt(table),
            hidden=sight(table, None).current(),
            meters=table.meters.report(due=table.payouts_due()),
        )

    def told(self) -> Told:
        """On the table's loop: the view's part beside the state, now (sent with a feed message)."""
        table = self._table
        return Told(
            version=self._version,
            journal_fault=table.journal_fault.message if table.journal_fault is not None else None,
            hidden=sight(table, None).current(),
            meters=table.meters.report(due=table.payouts_due()),
        )

    @property
    def version(self) -> int:
        """The table's version as the gate counts it (on the table's loop)."""
        return self._version

    def _masked(self, published: Published) -> TableView:
        return masked(published, self.adapter)

    def close(self) -> None:
        """Nothing to stop: the daemon's loop is the daemon's, and the one loop of gates given
        none lives as long as the process (one thread and its selector, however many gates)."""


def masked(published: Published, adapter: GameAdapter) -> TableView:
    """The view the table published, masked for each audience (on the API's side)."""
    whole, words, hidden = published.whole, published.words, published.hidden
    return TableView(
        version=published.version,
        seq=published.seq,
        blocked=published.blocked,
        journal_fault=published.journal_fault,
        states={True: whole, False: mask_cards(whole, hidden, adapter)},
        prompts={True: words, False: mask_cards(words, hidden, adapter)},
        hidden=hidden,
        meters=published.meters,
    )


def json_bytes(doc: Any) -> bytes:
    """`doc` as a JSON answer's body: compact, UTF-8, the bytes FastAPI's JSONResponse writes for it.

    Encoded by orjson (C: a state document of 5 KB in about 2 us, against 33 with the standard
    library's encoder, on every card for `GET /api/state` and the screens' feed), the same bytes
    as `json.dumps(doc, ensure_ascii=False, separators=(",", ":"))` for what the API says: strings,
    integers, booleans, null, lists and string-keyed objects. Where orjson refuses a document (a
    key that is not a string, an integer beyond 64 bits) the standard library encodes it, as it
    always did, so the answer is the same JSON either way. One difference, by choice: a float that
    is not a number (NaN, infinity) is written `null` (JSON has no such value), where the standard
    library's strict encoder refused the whole answer."""
    try:
        return _dumps()(doc)
    except TypeError:  # orjson.JSONEncodeError is a TypeError; a document json cannot encode raises again here
        return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def json_text(doc: Any) -> str:
    """`doc` as compact JSON text (a WebSocket text frame's), as `json_bytes` encodes it."""
    return json_bytes(doc).decode("utf-8")


_DUMPS: Callable[[Any], bytes] | None = None


def _dumps() -> Callable[[Any], bytes]:
    """orjson's encoder, imported when the first answer is made (the API's process; the table's
    process, which loads this module for its gate, never encodes an answer)."""
    global _DUMPS
    if _DUMPS is None:
        import orjson

        _DUMPS = orjson.dumps
    return _DUMPS


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _tables_loop() -> asyncio.AbstractEventLoop:
    """The loop that runs the jobs of gates given no loop (a test's app, a tool): one thread named
    "table" for the whole process, so the app still never touches a table on its own loop."""
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="table", daemon=True).start()
            _LOOP = loop
        return _LOOP
