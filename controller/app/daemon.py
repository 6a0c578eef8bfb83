"""`tablectl run`: the table daemon. One asyncio loop owns the Table; devices post to it.

Start-up, in order: the tokens, the journal (checked; a damaged journal stops here), the devices
(chosen by config: real ones on a Pi, simulated ones with --sim, the same code paths), the Table
(rebuilt from the journal and re-driven onto the lamps and display), the shoe reader (resumed at
the last card the journal holds), the HTTP API, then READY=1 to systemd. The watchdog is pinged
from the table loop, so a hung loop is restarted by systemd.

The shoe's worker thread hands each card to the loop and waits until it is journaled; only then
is the card acknowledged to the shoe, so a card is never lost to a crash or a restart.
With a `[camera]` section, the camera is read in a process of its own (`tablectl-camera`,
controller/camera/process.py), which sends the settled view to the loop when it changes; the
table journals only its changes. A frame's read never holds this process's interpreter lock while
a card waits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import logging
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.adapters.metrics import TableMetrics
from controller.adapters.notify import Notifier
from controller.adapters.outputs import DisplayOutput, LampOutput
from controller.api.auth import SESSIONS_FILE, Tokens, load_tokens
from controller.api.channel import ApiProcess
from controller.api.side import table_side
from controller.app.config import CHECKED_FILE, Config, ConfigError, remember_checked
from controller.app.early import EarlyStart, start_early
from controller.app.heap import give_back_memory, settle_garbage_collector
from controller.app.startup import (
    WILDCARDS,
    host_addresses,
    lock_state_dir,
    ready_addresses,
)
from controller.engine.base import Effect
from controller.engine.cards import Card, ShoeComposition
from controller.games import adapter
from controller.journal.log import Entry, Journal, JournalCorrupt, JournalError, JournalUnwritable, utc_now
from controller.security.authentication import Component, Report, authenticate
from controller.security.checker import Checker, CheckStopped, RoundHold
from controller.table import Output, Table, TableError, TableUnavailable
from controller.table.view import SHOE_EMPTY, prompt
from controller.table.visibility import sight
from drivers.buttons import ButtonPress, DealerButtons
from drivers.display.device import PoleDisplay, SimulatedDisplay, open_display
from drivers.indicators.base_indicators import BaseIndicators, LampSnapshot
from drivers.pins import DEFAULT_PIN_FILE, PinMap, load_pin_map, make_pin_factory
from drivers.shoe.events import (
    CardRead,
    Connected,
    DamagedFrame,
    DriverEvent,
    FaultCleared,
    FaultKind,
    Misread,
    RefusedMessage,
    RepeatedFrame,
    ShoeEvent,
    ShoeFault,
)
from drivers.shoe.loop_reader import LoopShoeReader, watchable
from drivers.shoe.protocol import EventKind, LinkState
from drivers.shoe.repeats import RepeatWatch
from drivers.shoe.serial_backend import ShoeReader
from drivers.shoe.simulated import SimulatedShoe

if TYPE_CHECKING:
    from controller.adapters.floor.publisher import FloorPublisher

log = logging.getLogger("tablectl")

SHOE_FAULTS = {
    FaultKind.DISCONNECTED: "shoe-disconnected",
    FaultKind.SILENT: "shoe-silent",
    FaultKind.PROTOCOL: "shoe-protocol",
    FaultKind.SEQUENCE_GAP: "shoe-sequence-gap",
}
SHOE_EVENTS = {EventKind.CUT_CARD: "The cut card came out", EventKind.SHOE_EMPTY: SHOE_EMPTY}
#: How long the shoe's thread waits for the loop to journal a card before leaving it
#: unacknowledged (the shoe then sends it again). Only the threaded reader's: a port the loop
#: watches (drivers/shoe/loop_reader.py, a pty or a real serial device) is read on the loop itself.
JOURNAL_WAIT_S = 10.0
#: How often retention looks for rounds old enough to leave the live journal (between rounds).
RETAIN_EVERY_S = 600.0
#: How often the C heap's free pages go back to the system (after a burst of API load the
#: daemon's memory returns to what the table needs).
TRIM_EVERY_S = 10.0
#: How long a thread may keep the interpreter lock while another waits (controller's card path).
SWITCH_INTERVAL_S = 0.001
#: Journal meta: when the floor store last confirmed this table's history at start.
HISTORY_CONFIRMED = "floor.history_confirmed"
#: The demo dealer loads a new shoe between rounds when fewer cards than this are left.
DEMO_RESHUFFLE_BELOW = 60


def _shoe_source(event: CardRead | Misread | ShoeEvent | RefusedMessage) -> dict[str, Any]:
    """What the journal keeps of a shoe message: where it came from and its link state."""
    return {"via": "shoe", **event.link_state.to_record()}


def _resume_state(record: Mapping[str, Any] | None) -> LinkState | None:
    """The shoe link state the journal holds; a damaged record is logged and not used (the
    first frame then raises a sequence-gap fault instead of being trusted)."""
    if not record:
        return None
    try:
        return LinkState.from_record(record)
    except ValueError as exc:
        log.error("the journal's last shoe message cannot be used to resume: %s", exc)
        return None


class SimShoeControls:
    """The simulated dealer's hands on the in-process simulated shoe: the API's handle on it
    (blocking calls; run off the loop), and a table listener that keeps the shoe loaded as the
    table counts it. Whenever the table's count starts again (a new shoe loaded, the dealer's
    confirm after the cut card, a game that deals on from a fresh deck), the simulated dealer
    gathers the cards and loads the shoe with what the count says it holds, shuffled."""

    def __init__(self, shoe: SimulatedShoe, seed: int | None = None) -> None:
        self.shoe = shoe
        self.rng = random.Random(seed)
        self._dealt: int | None = None  # the table's count after the last entry

    def stack(self, cards: list[Card]) -> None:
        self.shoe.stack(cards)

    def draw(self, count: int) -> list[Card]:
        return self.shoe.draw(count)

    def fault(self, name: str, on: bool) -> str:
        return self.shoe.fault(name, on)

    def redrive(self, table: Table) -> None:
        self._dealt = table.shoe.dealt_count

    def update(self, table: Table, entry: Entry, effects: tuple[Effect, ...]) -> None:
        dealt = table.shoe.dealt_count
        restarted = entry.kind == "shoe-reshuffled" or (self._dealt is not None and dealt < self._dealt)
        self._dealt = dealt
        if restarted:
            self.shoe.load(self.rng, in_shoe(table))


def in_shoe(table: Table) -> list[Card]:
    """The cards the table's count says are still in the shoe (a card held while a fault stands
    has left it too), one list entry a card."""
    left = table.shoe.remaining_cards()
    left.subtract(card for _, card in table.held)
    return sorted(left.elements(), key=str)


class Daemon:
    """Everything `tablectl run` starts, wired together; `await run()` until SIGTERM."""

    def __init__(
        self,
        config: Config,
        *,
        simulated: bool,
        demo: bool = False,
        state_dir: Path,
        host: str,
        port: int,
        seed: int | None = None,
        demo_interval: float = 1.0,
        early: EarlyStart | None = None,
    ) -> None:
        self.config = config
        self.early = early  # the sockets bound and the API's process started by `tablectl run` already
        self.simulated = simulated
        self.demo = demo
        self.state_dir = state_dir
        self.host = host
        self.port = port
        self.seed = seed
        self.demo_interval = demo_interval
        self.stopping = asyncio.Event()
        self.notifier = Notifier()
        self._closers: list[Callable[[], Any]] = []
        self._repeats = RepeatWatch()  # the shoe's repeated frames (drivers/shoe/repeats.py)
        # The shoe's events handed to the loop (counted by the shoe's one thread once on the loop's
        # queue) and taken there (counted on the loop): more handed than taken, a card waits on the
        # loop's queue (HeadSigner.waiting).
        self._shoe_handed = 0
        self._shoe_taken = 0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.table: Table | None = None
        self.sim_shoe: SimulatedShoe | None = None
        self.sim_controls: SimShoeControls | None = None  # the in-process simulated shoe's (--sim, no shoe.url)
        self.display: PoleDisplay | None = None
        self.lamps: BaseIndicators | None = None
        self.pin_factory: Any = None
        self.camera_feed: Any = None  # controller.camera.process.CameraProcess, with a [camera] section
        self.sim_scene: Any = None  # controller.camera.sim.SimScene, with a simulated camera
        self.metrics: TableMetrics | None = None  # GET /metrics
        self._floor: FloorPublisher | None = None  # with a [floor] section, once started
        self.pin_map: PinMap | None = None  # read while the table is built
        self.buttons: DealerButtons | None = None  # with dealer buttons wired, once started
        self._sockets: list[Any] = []  # the API's, bound before anything is written (bind_http)
        self._unjournaled_check: tuple[Report, str] | None = None  # a software check the full disk kept out
        self._software: dict[str, Any] = {"release": "not a signed release (a checkout)"}
        self._accepted_config: str | None = None  # the config file's digest the supervisor accepted
        self.checker = Checker()  # the periodic and on-demand software checks, each in a process of its own

    # -- start-up -------------------------------------------------------------------------------

    async def run(self) -> int:
        self.loop = asyncio.get_running_loop()
        # The table's threads (the signer's worker, the devices', and the shoe's where its port is one
        # the loop cannot watch: loop://, rfc2217://, spy://) share one interpreter lock: a thread woken
        # by a card gets it within this long of asking, not CPython's default 5 ms.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        early = self.early or await start_early(self.config, self.state_dir, self.host, self.port, api=False)
        self._sockets = early.sockets
        self._closers.append(lambda: [sock.close() for sock in self._sockets])
        if early.api is not None:
            self._closers.append(early.api.proc.kill)
        try:
            self._closers.append(lock_state_dir(self.state_dir, "tablectl run").close)
            tokens = load_tokens(simulated=self.simulated)
            if tokens.generated:
                _announce_tokens(tokens)
            journal = Journal(self.state_dir / "journal.sqlite3")
        except BaseException:
            self._close_all()
            raise
        self._closers.append(journal.close)
        self._closers.append(self.checker.stop)  # a check under way is ended with the table, not waited for
        # The API's process starts now (or started before this module was loaded: `tablectl run`),
        # loading its libraries while the table opens (it is handed the table's side once there is
        # one); ended with the daemon on any way out.
        api = ApiProcess(self._sockets)
        self._closers.append(api.kill)
        try:
            if early.api is not None:
                api.adopt(early.api)
            else:
                await api.spawn()
            history = self._confirm_history(journal)  # before anything is written to the journal
            self._check_layout_seats()
            table = self._build_table(journal)
            journal.probe_writable(table.journal_down)  # a full disk is the journal fault from the start
            self._retain(table)
            self.table = table
            self._note_install(table)
            self._accept_first_config(table)
            self._authenticate(table, "start-up")  # before the shoe: a failure is a fault before any card
            if history is not None:
                table.device_status("history", history)
            self._start_head_signer(table)
            RoundHold(self.checker, self.loop, CHECK_AFTER_S).attach(table)  # no check runs while a round is dealt
            publisher = self._start_floor(table, journal)
            reader = self._start_shoe(table)
            self._start_buttons()
            await self._start_camera(table)
            self.metrics = TableMetrics(
                table,
                floor_acked=(lambda: publisher.acked) if publisher is not None else None,
                camera=lambda: self.camera_feed,
            )
            # The table's side of the API (its commands, device controls and the live feed's table
            # half) stays here, on the table's loop; HTTP and the screens are served by a process of
            # their own (controller/api/remote.py), which reaches the table only through this gate.
            gate = table_side(
                table,
                self.loop,
                sim=self.sim_controls,
                sim_pins=(lambda: _pin_history(self.pin_factory)) if self.simulated else None,
                device_views=self._device_views(reader),
                sim_scene=self.sim_scene,
                recalibrate=self.camera_feed.recalibrate if self.camera_feed is not None else None,
                metrics=self.metrics,
                authenticate=self._report_on_demand,
                accept_config=self.accept_config,
            )
            # Before the API answers: a SIGTERM from the moment a client can see the table stops it
            # cleanly (it once killed it outright while the server was coming up).
            for sig in (signal.SIGTERM, signal.SIGINT):
                self.loop.add_signal_handler(sig, self.stopping.set)
            # Settled while the API's process still loads (start-up's objects out of the collector's
            # sight), not once it listens: its first requests' replies are not held by the pass.
            settle_garbage_collector()
            http = self.config.http
            await api.serve(
                gate,
                {
                    "label": "SIMULATED " if self.simulated else "",
                    "adapter": table.adapter,
                    "game_name": table.game_name,
                    "table_id": table.table_id,
                    "simulated": table.simulated,
                    "seats": table.seats,
                    "controls": sorted(gate.controls),
                    "tokens": tokens,
                    # The screens stay logged in across a restart (each session expires on its own clock).
                    "sessions_path": self.state_dir / SESSIONS_FILE,
                    "config_view": self._config_in_force(),
                    "tls": http.tls,
                    "http": {
                        "trusted_proxies": list(http.trusted_proxies),
                        "tls_cert": http.tls_cert,
                        "tls_key": http.tls_key,
                    },
                },
            )
            tasks = [asyncio.create_task(self._watchdog(), name="watchdog")]
            if self.demo:
                tasks.append(asyncio.create_task(self._demo_dealer(), name="demo-dealer"))
            mode = "SIMULATED table" if self.simulated else "live table"
            base, also = self._screen_addresses()
            log.info(
                "%s %s (%s) ready: dealer screen %s/ supervisor screen %s/supervisor%s; journal %s at entry %d",
                mode,
                self.config.table_id,
                self.config.game,
                base,
                base,
                also,
                journal.path,
                journal.last_seq,
            )
            if self.demo:
                log.info(
                    "demo: the simulated dealer opens rounds, deals and plays every seat by itself (--demo); to "
                    "play yourself, start `tablectl run --sim` without --demo and deal from the dealer screen"
                )
            # systemd's status line is read by operators, not only supervisors: the dealer's view.
            self.notifier.ready(f"{mode} {self.config.table_id}: {sight(table, None).text(prompt(table))}")
            self._start_full_check(journal.path)
            self._remember_config()
            await self.stopping.wait()
            self.notifier.stopping()
            if publisher is not None:  # while the loop runs, so its last mark is written
                await asyncio.to_thread(publisher.stop)
            if gate.commands.feed is not None:
                gate.commands.feed.cancel_timers()
            await api.stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            return 0
        finally:
            self._close_all()

    def _close_all(self) -> None:
        for close in reversed(self._closers):
            with contextlib.suppress(Exception):
                close()
        self._closers.clear()

    def _screen_addresses(self) -> tuple[str, str]:
        """The ready line's base URL of the screens and its note: on 0.0.0.0 or ::, the addresses a
        laptop on the LAN can open (found without network traffic), never 0.0.0.0 itself."""
        addresses = host_addresses() if self.host in WILDCARDS else []
        return ready_addresses("https" if self.config.http.tls else "http", self.host, self.port, addresses)

    def _check_layout_seats(self) -> None:
        """A camera layout must print zones for every seat the table seats, or the camera would never
        see those seats' wagers: ConfigError naming camera.layout (a layout that cannot be read at
        all leaves the table without vision, as _start_camera says)."""
        cfg = self.config.camera
        if cfg is None:
            return
        from controller.camera.plain import PlainLayout, read_plainly

        layout: PlainLayout | Any = read_plainly(cfg.layout)  # without vision in this process
        if layout is None:
            from vision.layout import Layout, LayoutError

            try:
                layout = Layout.load(cfg.layout)
            except LayoutError:
                return
        unzoned = layout.seats_without_zones(self.config.seats)
        if unzoned:
            raise ConfigError(
                f"{self.config.source}: camera.layout: the layout {layout.name} ({layout.source}) has no zones for "
                f"seat {', '.join(map(str, unzoned))} of this table's {self.config.seats} (table.seats); give a "
                "layout with every seat's zones"
            )

    def _build_table(self, journal: Journal) -> Table:
        cfg = self.config
        pin_map = load_pin_map(Path(cfg.indicators.pin_file or DEFAULT_PIN_FILE), cfg.indicators.pin_map)
        self.pin_map = pin_map
        unwired = pin_map.unwired(cfg.seats)
        if unwired:
            words = (
                f"{cfg.source}: indicators.pin_map: the pin map [{pin_map.name}] in {pin_map.source} has no lamps for "
                f"seat {', '.join(map(str, unwired))} of this table's {cfg.seats} (table.seats); choose a map that "
                "wires every seat (hardware/wiring.md: eight-seat-595 for 8 seats)"
            )
            if not self.simulated:
                raise ConfigError(words)
            log.warning("%s: on this simulated table those seats show no lamp", words)
        found = adapter(cfg.game)
        unlit = pin_map.unlit(cfg.seats, found.lamp_names)
        if unlit:
            # The map knows no game: whether it has the lamps this game lights is checked here.
            raise ConfigError(
                f"{cfg.source}: indicators.pin_map: the pin map [{pin_map.name}] in {pin_map.source} has no lamp "
                f"{', '.join(unlit)}; {found.title} lights {', '.join(found.lamp_names)} in front of every seat "
                "(hardware/wiring.md)"
            )
        self.pin_factory = make_pin_factory(self.simulated, cfg.indicators.pin_factory)
        # The blink is kept by the table's loop, which gives the lamps their commands: no thread of
        # its own to wake at a new pattern (drivers/indicators/blinker.py's `run_on`).
        lamps = BaseIndicators.from_pin_map(pin_map, pin_factory=self.pin_factory, run_blinker=self.loop is None)
        if self.loop is not None:
            lamps.blink_on(self.loop)
        self.lamps = lamps
        self._closers.append(lamps.close)
        settings: dict[str, Any] = {"dialect": _display_dialect(cfg.display.dialect)}
        if cfg.display.url:
            settings |= {"url": cfg.display.url, "baudrate": cfg.display.baudrate}
        display = open_display(settings, simulated=self.simulated and cfg.display.url is None)
        self.display = display
        self._closers.append(display.close)
        title = f"{'SIM ' if self.simulated else ''}{cfg.table_id}"
        lit = frozenset(seat for seat in pin_map.seats if seat <= cfg.seats)  # the table's seats that have lamps
        outputs: list[Output] = [LampOutput(lamps, lit), DisplayOutput(display, title)]
        return Table(
            journal,
            game=cfg.game,
            rules=cfg.rules,
            table_id=cfg.table_id,
            simulated=self.simulated,
            outputs=outputs,
            seats=cfg.seats,
        )

    def _retain(self, table: Table) -> None:
        """Retention (at start, then every RETAIN_EVERY_S while the table waits for a round): rounds
        older than state.retain_days go to the archive (and leave the live journal) once exported,
        checked and, with a floor, confirmed by it; a pass moves a bounded number of entries."""
        from controller.journal.retention import retain

        archive = Path(self.config.archive_dir) if self.config.archive_dir else self.state_dir / "archive"
        try:
            done = retain(
                table.journal, archive, days=self.config.retain_days, floor_required=self.config.floor is not None
            )
        except JournalUnwritable as exc:
            log.warning("retention: %s", exc)
            return
        except JournalError as exc:  # the live journal is untouched: play goes on, the log says why
            log.error("retention: %s", exc)
            return
        if done.directory is not None:
            log.info("retention: entries to %d (rounds %s) exported to %s", done.through, done.rounds, done.directory)

    def _confirm_history(self, journal: Journal) -> dict[str, Any] | None:
        """With a floor: ask the floor store how far it holds this table's history, and refuse to
        start (HistoryRefused, nothing written) when the journal is behind it or forks from it.
        A floor that does not answer leaves the history unconfirmed, said on the supervisor's
        screen (the `history` device) with the time it was last confirmed."""
        floor = self.config.floor
        if floor is None:
            return None
        from controller.adapters.floor.history import ask_floor, check_history

        answer = ask_floor(floor, self.config.table_id)
        if answer is None:
            since = journal.get_meta(HISTORY_CONFIRMED) or "never (since this journal began)"
            words = f"history not confirmed by the floor since {since}: the floor store did not answer at start"
            log.warning("%s", words)
            return {"ok": False, "state": "not confirmed", "message": words}
        check_history(journal, answer, self.config.table_id)
        now = utc_now()
        journal.set_meta(HISTORY_CONFIRMED, now)
        log.info("history confirmed by the floor store through entry %s at start", answer.get("seq"))
        return {"ok": True, "state": "confirmed", "message": f"confirmed by the floor at {now} through entry "
                f"{answer.get('seq')}", "alerts": answer.get("alerts", [])}  # fmt: skip

    def _start_head_signer(self, table: Table) -> None:
        """With a floor: sign the chain's head at each round's end (controller/security/chainhead.py), on the
        loop after the round's last entry has gone out to the lamps and display."""
        if self.config.floor is None:
            return
        from controller.security.chainhead import fingerprint, public_hex, table_key

        path = Path(self.config.security.table_key or self.state_dir / "table.key")
        try:
            key = table_key(path)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.config.source}: security.table_key: {exc}") from None
        log.info("the table signs its chain heads with key %s (%s): the floor store accepts them once it is enrolled "
                 "there (tablectl floor enroll)", fingerprint(public_hex(key)), path)  # fmt: skip
        table.listeners.append(HeadSigner(table, key, self.loop, waiting=self._shoe_waiting))

    def _note_install(self, table: Table) -> None:
        """A signed release other than the last one the journal records was installed: record it
        (controller/security/installs.py), and show the install history on the Configuration panel."""
        from controller.security import installs

        release = installs.installed_release()
        if release is None:
            return
        last = installs.history(table.journal, 1)
        previous = last[-1].body if last else None
        action = installs.action_for(previous, release)
        if action is not None:
            by = f"found at start ({release['owner']} owns the installed files)"
            try:
                table.software_installed(installs.body(action, release, by, previous))
            except TableUnavailable:
                log.error("the install of tablectl %s is not journaled: the disk is full", release["version"])
        self._software = {
            "version": release["version"],
            "manifest_sha256": release["manifest_sha256"],
            "installs": {str(e.seq): installs.describe(e) for e in installs.history(table.journal, 50)},
        }

    def _software_report(self, seed: bytes | None = None, *, here: bool = False) -> Report:
        """The software authentication (controller/security/authentication.py), and the configuration file
        against the digest the supervisor accepted; a copy that is not a signed release fails it
        on a live table (a simulated one runs it, and says so). The files are hashed in a process
        of its own at a lower priority (controller/security/checker.py: the card path never waits
        for it; blocks, so never on the loop), or `here`, in this one, before the table opens.
        CheckStopped when the table stops meanwhile."""
        key = Path(self.config.security.release_key)
        report = authenticate(key, seed) if here else self.checker.run(key, seed)
        if report.ok is None and not self.simulated:
            report.ok = False
        config = self._config_file()
        if report.ok is not None and config is not None:
            component = Component(f"configuration ({config})", files=1)
            digest = _file_sha256(config)
            accepted = self._accepted_config
            if digest is None:
                component.failed.append((str(config), "cannot be read"))
            elif accepted is not None and digest != accepted:
                component.failed.append((str(config), "changed since the supervisor accepted it"))
            else:
                component.passed = f"sha256 {digest}, as accepted"
            report.components.append(component)
            report.ok = report.ok and component.ok
        return report

    def _report_on_demand(self, seed: bytes | None = None) -> Report:
        """The check the API asks for (POST /api/verify), on a thread of the channel's: as
        _software_report; the table's stop meanwhile is a refusal, not a result."""
        try:
            return self._software_report(seed)
        except CheckStopped:
            raise TableError("the table is stopping: its software check was ended", kind="unavailable") from None

    def _config_file(self) -> Path | None:
        path = Path(self.config.source)
        return path if path.is_file() else None

    def _remember_config(self) -> None:
        """What the table.toml it started with reads as, kept in the state directory for the commands
        that only read it (controller/config.py's CHECKED_FILE: they then load no pydantic), once the
        table is ready."""
        config = self._config_file()
        if config is not None and not remember_checked(config, self.state_dir):
            log.info("%s: no %s kept: the commands that read it check it themselves", config, CHECKED_FILE)

    def _accept_first_config(self, table: Table) -> None:
        """The configuration the supervisor last accepted (journaled `config-accepted`); a table's
        first start with a signed release accepts the one it starts with, on the record."""
        config = self._config_file()
        if config is None or _a_checkout():
            return
        last = table.journal.last_of_kinds(("config-accepted",), 1)
        if last:
            self._accepted_config = str(last[-1].body.get("sha256"))
            return
        self.accept_config(table, "the table's first start", "the configuration it first ran with")

    def accept_config(self, table: Table, by: str, reason: str) -> dict[str, Any]:
        """A supervisor accepts the configuration file as it is now (on the table's loop):
        journaled with its digest; the software check then compares against it."""
        config = self._config_file()
        if config is None:
            raise TableError("this table runs on built-in defaults: there is no configuration file to accept")
        digest = _file_sha256(config)
        if digest is None:
            raise TableError(f"{config} cannot be read")
        entry = table.config_accepted({"file": str(config), "sha256": digest, "by": by, "reason": reason})
        self._accepted_config = digest
        return {"seq": entry.seq, "file": str(config), "sha256": digest}

    def _authenticate(self, table: Table, trigger: str) -> None:
        """Run the software check now and journal it, whatever its result (a failure is the blocking
        `software-authentication` fault: play stops, the screens and the pole display say why)."""
        report = self._software_report(here=True)  # no card can come yet: nothing to make wait
        self._software_checked(table, report, trigger)

    def _software_checked(self, table: Table, report: Report, trigger: str) -> None:
        (log.info if report.ok else log.warning if report.ok is None else log.error)("%s", report.summary())
        state = {True: "authenticated", False: "FAILED", None: "not a signed release"}[report.ok]
        table.device_status("software", {"state": state, "ok": report.ok is not False, "summary": report.summary(),
                                         "checked": trigger})  # fmt: skip
        if report.ok is None:
            # A simulated table run from a checkout: nothing is a release, so nothing was checked
            # (the log and the Devices panel say so); asked on demand, even this is journaled.
            return
        self._unjournaled_check = (report, trigger)
        self._journal_check(table)

    def _journal_check(self, table: Table) -> None:
        """Journal the last check's result; while the journal's disk is full (play is stopped by
        that fault already) it waits, and is journaled as soon as the journal can be written."""
        if self._unjournaled_check is None or table.journal_fault is not None:
            return
        report, trigger = self._unjournaled_check
        try:
            table.software_check(report.to_json(), trigger)
        except TableUnavailable:
            return
        self._unjournaled_check = None

    async def _periodic_check(self) -> None:
        """Every `[security] verify_every` hours: hashed in a process of its own, journaled on the loop."""
        table = self.table
        assert table is not None
        hours = self.config.security.verify_every
        try:
            report = await asyncio.to_thread(self._software_report)
        except CheckStopped:
            return
        except Exception:  # never the end of the table's loop: said, and tried at the next interval
            log.exception("the periodic software check could not run")
            return
        self._software_checked(table, report, f"every {hours:g} h")

    def _start_full_check(self, path: Path) -> None:
        """The whole journal checked in the background once the table is ready (start-up itself
        checks the head file, the tail and the last snapshot): damage found latches a fault."""
        loop, table = self.loop, self.table
        assert loop is not None and table is not None
        table.device_status("journal", {"ok": True, "check": "running"})

        def report(status: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(table.device_status, "journal", status)

        def check() -> None:
            started = time.monotonic()
            try:
                reader = Journal(path, readonly=True)
                try:
                    count = reader.check()
                finally:
                    reader.close()
                took = round(time.monotonic() - started, 2)
                report({"ok": True, "check": "passed", "entries": count, "seconds": took})
            except JournalCorrupt as exc:
                log.error("journal: %s", exc)
                report({"ok": False, "check": "failed", "error": str(exc)})
                loop.call_soon_threadsafe(self._journal_damaged, str(exc))
            except JournalError as exc:
                log.warning("journal: the background check could not run: %s", exc)
                report({"ok": False, "check": "not run", "error": str(exc)})

        threading.Thread(target=check, name="journal-check", daemon=True).start()

    def _journal_damaged(self, message: str) -> None:
        assert self.table is not None
        with contextlib.suppress(TableError):
            self.table.raise_fault(
                "journal-damaged",
                f"{message}. Stop play: restore the journal from a good copy (hardware/install.md); never delete it.",
            )

    def _start_floor(self, table: Table, journal: Journal) -> FloorPublisher | None:
        """The floor publisher when config has a [floor] section: the journal is its outbox."""
        if self.config.floor is None:
            return None
        # Imported only here: the floor's MQTT client (paho) is loaded by a table that has a floor.
        from controller.adapters.floor.publisher import FloorPublisher, loop_mark

        assert self.loop is not None
        publisher = FloorPublisher(
            self.config.floor,
            journal.path,
            table_id=table.table_id,
            game=table.game_name,
            rules=table.rules_doc,
            mark=loop_mark(journal, self.loop),
            durable=lambda: journal.durable_seq,
        )
        table.listeners.append(publisher)
        # A signed head committed without its own fsync is sent once it is on disk (HeadSigner).
        journal.durable_watchers.append(lambda seq: publisher.redrive(table))
        publisher.start()
        self._floor = publisher
        return publisher

    def _start_shoe(self, table: Table) -> ShoeReader:
        cfg = self.config
        url = cfg.shoe.url
        if url is None:
            # A simulated table with no shoe port configured gets its own simulated shoe on a pty.
            # Loaded as the journal counts the shoe: after a restart mid-shoe the cards already
            # dealt since the last shuffle are not in it again (they would be impossible cards).
            rng = random.Random(self.seed)
            cards = in_shoe(table)
            rng.shuffle(cards)
            self.sim_shoe = SimulatedShoe(cards, seed=rng.randrange(2**32), link=str(self.state_dir / "sim-shoe"))
            self.sim_shoe.start()
            self._closers.append(self.sim_shoe.stop)
            self.sim_controls = SimShoeControls(self.sim_shoe, rng.randrange(2**32))
            self.sim_controls.redrive(table)
            table.listeners.append(self.sim_controls)
            url = self.sim_shoe.port
        resume = _resume_state(table.shoe_link)
        settings: dict[str, Any] = {
            "baudrate": cfg.shoe.baudrate,
            "resume": resume,
            "heartbeat_timeout": cfg.shoe.heartbeat_timeout,
        }
        reader: ShoeReader
        if watchable(url):  # read on the table's loop: a card journaled as it is read, no hand-over
            assert self.loop is not None
            reader = LoopShoeReader(url, self._from_shoe_on_loop, loop=self.loop, **settings)
        else:  # a port the loop cannot watch: read in a thread of its own
            reader = ShoeReader(url, self._from_shoe_thread, **settings)
        reader.start()
        self._closers.append(reader.stop)
        table.device_status("shoe", {"url": url, "simulated": self.sim_shoe is not None, "state": "connecting"})
        return reader

    async def _start_camera(self, table: Table) -> None:
        """The overhead camera, read in a process of its own (controller/camera/process.py: a frame's
        read never holds this loop's interpreter lock while a card waits), when config has a
        [camera] section. A camera that cannot start leaves a degraded table (no proposals, no
        checks), never a dead one: its process says why, and is started again if it ends."""
        cfg = self.config.camera
        if cfg is None:
            if table.camera.active and table.camera.status != "offline":
                # The journal remembers a camera this configuration no longer has: stop trusting its view.
                table.scene_seen({"camera": "offline", "why": "no camera in the configuration"})
            return
        from controller.camera.feed import HEALTH_FILE
        from controller.camera.plain import read_plainly
        from controller.camera.process import CameraProcess

        assert self.loop is not None
        simulated = cfg.backend == "simulated"
        # A real camera's layout is read whole by its own process: here only its name, plainly read
        # (no vision in this process); a simulated one's scene is held here, with the layout.
        layout: Any = None if simulated else read_plainly(cfg.layout)
        if layout is None:
            from vision.layout import Layout, LayoutError

            try:
                layout = Layout.load(cfg.layout)
            except LayoutError as exc:
                log.error("camera: %s", exc)
                table.device_status("camera", {"installed": True, "ok": False, "error": str(exc)})
                return
        settings = {
            "backend": cfg.backend,
            "device": cfg.device,
            "fps": cfg.fps,
            "layout": cfg.layout,
            "calibration": cfg.calibration,
            "stable_frames": cfg.stable_frames,
            "fresh_frames": cfg.fresh_frames,
            "health_path": str(self.state_dir / HEALTH_FILE),
        }
        camera = CameraProcess(
            settings,
            loop=self.loop,
            on_view=self._scene_view,
            on_status=lambda record: table.device_status("camera", record),
        )
        if simulated:
            from controller.camera.sim import SimScene, SimulatedDealer, mirrored_camera

            mirror = mirrored_camera(layout, camera.send_scene)
            table.listeners.append(SimulatedDealer(mirror, table.camera.meaning))
            self.sim_scene = SimScene(mirror)
        table.device_status(
            "camera",
            {
                "installed": True,
                "simulated": simulated,
                "layout": layout.name,
                "view": "starting",
                "message": ("SIMULATED camera: " if simulated else "") + "starting",
                "reads": 0,
                "frames_skipped": 0,
                "read_ms": 0.0,
            },
        )
        await camera.start()
        self._closers.append(camera.close)
        self.camera_feed = camera

    def _scene_view(self, view: dict[str, Any]) -> None:
        table = self.table
        assert table is not None
        try:
            table.scene_seen(view)
        except TableUnavailable:  # the journal's disk is full: said once by the table; the next view catches up
            return
        except ValueError as exc:  # a view the table cannot take is a bug in the reader's glue
            log.error("camera: %s", exc)

    def _config_in_force(self) -> dict[str, Any]:
        """The configuration as this daemon runs it: the file's values with the command line's
        overrides (--http, --state-dir) applied. Tokens are never part of it."""
        view = dataclasses.asdict(self.config)
        view["http"] = {"host": self.host, "port": self.port}
        view["state_dir"] = str(self.state_dir)
        view["simulated"] = self.simulated
        view["software"] = self._software
        return view

    def _composition(self) -> ShoeComposition:
        assert self.table is not None
        return self.table.shoe.composition

    def _start_buttons(self) -> None:
        assert self.pin_map is not None  # read by _build_table, before any device starts
        try:
            buttons = DealerButtons.from_pin_map(
                self.pin_map, pin_factory=self.pin_factory, on_press=self._from_button_thread
            )
        except Exception as exc:  # no buttons is a degraded table, not a dead one
            log.error("dealer buttons: %s", exc)
            assert self.table is not None
            self.table.device_status("buttons", {"ok": False, "error": str(exc)})
            return
        self.buttons = buttons
        self._closers.append(buttons.close)

    def _device_views(self, reader: ShoeReader) -> dict[str, Callable[[], Any]]:
        views: dict[str, Callable[[], Any]] = {}
        display = self.display
        if isinstance(display, SimulatedDisplay):
            views["display"] = display.snapshot
        elif display is not None:
            views["display"] = lambda: {"simulated": False, "dialect": display.dialect.value}
        lamps, pin_map = self.lamps, self.pin_map
        if lamps is not None and pin_map is not None:
            unwired = pin_map.unwired(self.config.seats)
            views["lamps"] = _LampsView(lamps, unwired)
        floor = self._floor
        if floor is not None:
            views["floor"] = floor.status
        return views

    # -- device threads -> the loop -------------------------------------------------------------

    def _from_shoe_on_loop(self, event: DriverEvent) -> None:
        """Called on the table's loop by the shoe's reader (drivers/shoe/loop_reader.py); returns
        only when the event is journaled (or raises, leaving the card unacknowledged so the shoe
        sends it again)."""
        if isinstance(event, RepeatedFrame):
            # Acknowledged again by the link and never used twice: the protocol's business.
            deaf = self._repeats.repeated(event.seq, time.monotonic())
            if deaf is None:
                log.info("%s", event.message)
                return
            self._latch_once("shoe-duplicate", _deaf_shoe(event, deaf))
            return
        self._take_shoe_event(event, time.perf_counter())  # the card-to-lamp latency starts here
        if isinstance(event, CardRead | Misread | RefusedMessage | ShoeEvent):
            self._repeats.delivered(event.seq)

    def _from_shoe_thread(self, event: DriverEvent) -> None:
        """Called in the shoe's thread; returns only when the event is journaled (or raises,
        leaving the card unacknowledged so the shoe sends it again)."""
        assert self.loop is not None
        if isinstance(event, RepeatedFrame):
            # Acknowledged again by the link and never used twice: the protocol's business, decided
            # here in the shoe's thread with the time it was read, never after waiting for the loop.
            deaf = self._repeats.repeated(event.seq, time.monotonic())
            if deaf is None:
                log.info("%s", event.message)
                return
            self.loop.call_soon_threadsafe(self._latch_once, "shoe-duplicate", _deaf_shoe(event, deaf))
            return
        handed = time.perf_counter()  # the card-to-lamp latency of GET /metrics starts here
        # A plain call on the loop, answered the moment it returns (no task, and no turn of the loop
        # between the commit and the shoe's acknowledgement, as a coroutine's future would take).
        future: concurrent.futures.Future[None] = concurrent.futures.Future()

        def on_the_loop() -> None:
            self._shoe_taken += 1
            if not future.set_running_or_notify_cancel():
                return
            try:
                self._take_shoe_event(event, handed)
            except BaseException as exc:
                future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                future.set_result(None)

        self.loop.call_soon_threadsafe(on_the_loop)
        self._shoe_handed += 1  # once on the loop's queue: counted, it is there (or taken already)
        future.result(timeout=JOURNAL_WAIT_S)
        if isinstance(event, CardRead | Misread | RefusedMessage | ShoeEvent):
            self._repeats.delivered(event.seq)

    def _shoe_waiting(self) -> bool:
        """On the loop: an event of the shoe's is on the loop's queue and not yet taken (a card
        waits behind what the loop runs now: a callback queued now runs after it)."""
        return self._shoe_handed > self._shoe_taken

    async def _shoe_event(self, event: DriverEvent, handed: float | None = None) -> None:
        self._take_shoe_event(event, handed)

    def _take_shoe_event(self, event: DriverEvent, handed: float | None = None) -> None:
        """What the shoe said, taken on the table's loop (journaled before this returns)."""
        table = self.table
        assert table is not None
        sequenced = CardRead | Misread | RefusedMessage | ShoeEvent
        if isinstance(event, sequenced) and event.link_state == _resume_state(table.shoe_link):
            # Journaled already: the shoe's thread gave up waiting after the commit, so the
            # frame went unacknowledged and came again. Taking it again would deal it twice.
            log.warning("shoe: %s is in the journal already; not taken twice", event.message)
            return
        if isinstance(event, CardRead):
            table.card(event.card, _shoe_source(event))
            if self.metrics is not None and handed is not None:  # journaled, and the lamps set
                self.metrics.card_read(time.perf_counter() - handed)
        elif isinstance(event, Misread):
            table.misread(event.message, _shoe_source(event))
        elif isinstance(event, RefusedMessage):
            # A sequenced frame: journaled with its (session, seq) so it is never taken twice.
            table.raise_fault(SHOE_FAULTS[FaultKind.PROTOCOL], event.message, source=_shoe_source(event))
        elif isinstance(event, ShoeEvent):
            source = _shoe_source(event)
            if event.kind == EventKind.CONFIRM_BUTTON:
                table.button("confirm", by="shoe", source=source)
            else:
                table.shoe_event(SHOE_EVENTS[event.kind], source)
            log.info("shoe: %s", event.message)
        elif isinstance(event, Connected):
            log.info("%s", event.message)
            table.device_status("shoe", {"state": "connected", "message": event.message, "shoe_id": event.shoe_id})
        elif isinstance(event, ShoeFault):
            log.error("shoe fault: %s", event.message)
            # A protocol or gap fault names its frame (a card, a span of SEQs): each distinct one
            # is journaled, not folded into the one already latched.
            naming = event.kind in (FaultKind.PROTOCOL, FaultKind.SEQUENCE_GAP)
            self._latch_once(SHOE_FAULTS[event.kind], event.message, per_message=naming)
            table.device_status("shoe", {"state": event.kind.value, "message": event.message})
        elif isinstance(event, FaultCleared):
            log.info("shoe: %s", event.message)
            table.device_status("shoe", {"state": "connected", "message": event.message})
        elif isinstance(event, DamagedFrame):
            log.warning("%s", event.message)
            self._latch_once(
                "shoe-line-noise",
                f"{event.message} Damaged data on the card line: check the shoe's cable; "
                "the card was asked for again and nothing damaged was used.",
            )

    def _latch_once(self, code: str, message: str, *, per_message: bool = False) -> None:
        table = self.table
        assert table is not None
        if any(f.code == code and (not per_message or f.message == message) for f in table.faults.values()):
            return
        table.raise_fault(code, message)

    def _from_button_thread(self, press: ButtonPress) -> None:
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self._button, press)

    def _button(self, press: ButtonPress) -> None:
        assert self.table is not None
        log.info("dealer button %s pressed", press.button)
        self.table.device_status("buttons", {"ok": True, "last": press.button})
        try:
            self.table.button(press.button, by="dealer")
        except TableError as exc:  # a confirm with nothing to confirm: said, not journaled
            log.info("dealer button %s: %s", press.button, exc)

    # -- loop tasks -----------------------------------------------------------------------------

    async def _watchdog(self) -> None:
        interval = self.notifier.watchdog_interval() or 5.0
        retained = trimmed = verified = time.monotonic()
        checks: set[asyncio.Task[None]] = set()
        while True:
            self.notifier.watchdog()
            if not checks and time.monotonic() - verified > self.config.security.verify_every * 3600:
                verified = time.monotonic()
                check = asyncio.create_task(self._periodic_check(), name="software-check")
                checks.add(check)
                check.add_done_callback(checks.discard)
            table = self.table
            due = table is not None and time.monotonic() - retained > RETAIN_EVERY_S
            if due and table is not None and table.awaiting.kind == "round" and not table.blocked:
                retained = time.monotonic()
                self._retain(table)
            if self.table is not None and self.table.journal_fault is not None:
                with contextlib.suppress(TableError):  # still full: the fault stays, said once
                    self.table.retry_journal()
            if self.table is not None:
                self._journal_check(self.table)
            if self.display is not None and self.table is not None and self.table.faults:
                self.display.next_page()  # a long fault text pages through the two lines
            if time.monotonic() - trimmed > TRIM_EVERY_S:
                trimmed = time.monotonic()
                give_back_memory()
            await asyncio.sleep(min(interval, 3.0))

    async def _demo_dealer(self) -> None:
        """A simulated dealer: opens rounds as the game's demo dealer would, pulls cards from the
        shoe, and makes the players' choices as the game's demo players would."""
        table = self.table
        shoe = self.sim_shoe
        assert table is not None
        rng = random.Random(self.seed)
        full = self._composition().size  # a one-deck game loads a new shoe after every hand
        while True:
            await asyncio.sleep(self.demo_interval)
            if table.blocked or shoe is None:
                continue
            awaiting = table.awaiting
            try:
                # A new shoe is loaded into the simulated shoe by SimShoeControls, as the table counts it.
                if awaiting.kind == "round" and table.shoe.remaining_count < min(DEMO_RESHUFFLE_BELOW, full):
                    table.shoe_reshuffled(by="demo-dealer")
                elif awaiting.kind == "round" and table.payouts_due():
                    table.button("confirm", by="demo-dealer")  # the seats are paid
                elif awaiting.kind == "round":
                    table.open_round(table.adapter.demo_opening(rng, seats=table.seats), by="demo-dealer")
                elif awaiting.kind == "card" and table.shoe_empty:
                    table.shoe_reshuffled(by="demo-dealer")
                elif awaiting.kind == "card":
                    await asyncio.to_thread(shoe.draw, 1)
                elif awaiting.kind == "decision":
                    table.decide(table.adapter.demo_choice(awaiting, rng), by="demo-player")
            except TableError as exc:
                log.info("demo dealer: %s", exc)
            except Exception:  # a bug, never a silent end of the simulated dealer: said, and it goes on
                log.exception("demo dealer: an unexpected error; dealing on")


#: How long after the job that ended a round its chain head is signed (HeadSigner). The shoe's
#: thread, woken when the round's last card is journaled, needs the interpreter lock to acknowledge
#: the card: signed at once, the signing and its commit held the lock meanwhile and delayed that
#: acknowledgement (benchmarks/bench_card_path.py: by up to a millisecond, more on a busy disk). A
#: dealer's next card comes hundreds of ms later.
SIGN_AFTER_S = 0.05
#: How long after the job that ended a round the software check held while it was dealt goes on
#: (controller/security/checker.py, RoundHold): after the round's end is signed.
CHECK_AFTER_S = 2 * SIGN_AFTER_S


class HeadSigner:
    """A table listener: once a round has ended, the chain's head is signed and journaled, soon
    after (SIGN_AFTER_S), on the table's loop (never inside the card's own commit, nor while the
    shoe's thread acknowledges the card), in the dealer's paying time: never while a round is
    dealt, so no card of a round waits for it (a round opened sooner, which a dealer cannot do,
    has the head signed at its own end, covering both).

    With a loop, the Ed25519 signature is made on a worker thread (the loop's default executor)
    and the loop only journals the result (`_signed`): the loop never waits for the signing. When
    the chain moved meanwhile (an entry journaled while the worker signed), the head is signed
    again where it stands then; when a round opened meanwhile, its own end signs it. Without a
    loop (a tool, a test) `sign` signs and journals at once.

    When the signature comes back while a card of the shoe's already waits on the loop
    (`waiting`, the daemon's: handed by the shoe's thread, not yet taken), the head is journaled
    after it: the card is not kept behind the head's commit (the head then signs again, the chain
    having moved, or is left to the round's end the card opened). A card that arrives once the
    head's commit has begun waits for it (a commit is not interrupted)."""

    #: How many turns of the loop a signed head may let the shoe's cards go first: a backstop (a
    #: card counted waiting is on the loop's queue already, so one turn lets it go; a shoe sends a
    #: card per dealer's draw, hundreds of ms apart; the head is not put off for ever).
    MAX_DEFERRED = 100

    def __init__(
        self,
        table: Table,
        key: Any,
        loop: asyncio.AbstractEventLoop | None,
        waiting: Callable[[], bool] | None = None,
    ) -> None:
        self.table = table
        self.key = key
        self.loop = loop
        self.waiting = waiting  # on the loop: True while a card of the shoe's waits to be taken
        self._signing = False  # a signature is being made on the worker thread

    def update(self, table: Table, entry: Any, effects: tuple[Any, ...]) -> None:
        if table.now.ended_by(entry.seq) and self.loop is not None:
            # Counted from the end of the job (the card's commit, the round's snapshot and every
            # output), not from the entry: on a slow disk those alone may take tens of ms.
            loop = self.loop
            loop.call_soon(loop.call_later, SIGN_AFTER_S, self.sign)

    def redrive(self, table: Table) -> None:
        return

    def _dealt(self) -> bool:
        record = self.table.now.current
        return record is not None and record.status == "open"

    def sign(self) -> None:
        """Sign where the chain stands now (on the loop): handed to the worker thread, or with no
        loop, signed and journaled here."""
        if self._dealt():
            return  # a round is being dealt: its end signs the head
        if self.loop is None:
            try:
                self.table.sign_head(self.key)
            except TableUnavailable:  # the disk is full: the next round's end signs the head again
                log.warning("the chain's head was not signed: the journal cannot be written")
            return
        if self._signing:
            return  # the signature under way is checked against the chain when it comes back
        from controller.security.chainhead import sign_head  # cryptography: only a signing table imports it

        journal = self.table.journal
        job = functools.partial(
            sign_head, self.key, self.table.table_id, seq=journal.last_seq, chain=journal.chain, at=utc_now()
        )
        self._signing = True
        self.loop.run_in_executor(None, job).add_done_callback(self._signed)

    def _signed(self, future: asyncio.Future[dict[str, Any]], deferred: int = 0) -> None:
        """The worker's signature, back on the loop: journaled if the chain has not moved since;
        after the shoe's card, when one waits (on the loop's queue already: put behind it, this
        runs after it)."""
        if self.waiting is not None and deferred < self.MAX_DEFERRED and self.waiting():
            assert self.loop is not None
            self.loop.call_soon(self._signed, future, deferred + 1)
            return
        self._signing = False
        try:
            body = future.result()
        except Exception:  # never a silent end of the signing: said; the next round's end signs again
            log.exception("the chain's head could not be signed")
            return
        if self._dealt():
            return  # a round opened meanwhile: its end signs the head
        journal = self.table.journal
        if (body["seq"], body["chain"]) != (journal.last_seq, journal.chain):
            self.sign()  # the chain moved while the worker signed: sign where it stands now
            return
        try:
            # Committed without its own fsync (nothing a player sees waits on it): flushed on the
            # worker thread, and only then sent to the floor (Journal.append(sync=False)).
            entry = self.table.journal_head(body, durable=False)
        except TableUnavailable:  # the disk is full: the next round's end signs the head again
            log.warning("the chain's head was not signed: the journal cannot be written")
            return
        assert self.loop is not None
        self.loop.run_in_executor(None, journal.flush).add_done_callback(functools.partial(self._flushed, entry.seq))

    def _flushed(self, seq: int, future: asyncio.Future[None]) -> None:
        """The signed head is on disk (back on the loop): the floor publisher may send it."""
        try:
            future.result()
        except OSError as exc:  # the next entry's fsync makes it durable, and it is sent then
            log.error("the signed chain head (entry %d) could not be put on disk yet: %s", seq, exc)
            return
        self.table.journal.made_durable(seq)


def _a_checkout() -> bool:
    """True when the running code is a checkout (no signed release): nothing is authenticated."""
    from controller.security.installs import installed_release

    return installed_release() is None


def _file_sha256(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _display_dialect(name: str) -> str:
    return {"cd5220": "cd5220", "dmd": "epson-dmd"}.get(name, name)


class _LampsView:
    """The lamps' view in the table's state (`devices.lamps`), made again only when what the
    lamps mean has changed (the live feed's snapshot asks for it after every entry; most entries
    change no wager lamp and move the blinking one at most): the same document handed out
    meanwhile, never changed by anyone (the snapshot's documents are not)."""

    def __init__(self, lamps: BaseIndicators, unwired: list[int]) -> None:
        self._lamps = lamps
        self._unwired = unwired
        self._of: LampSnapshot | None = None
        self._view: dict[str, Any] = {}

    def __call__(self) -> dict[str, Any]:
        snap = self._lamps.snapshot()
        if snap != self._of:
            self._view = _lamps_json(snap) | {"unwired_seats": self._unwired}
            self._of = snap
        return self._view


def _lamps_json(snap: LampSnapshot) -> dict[str, Any]:
    def said(lamp: str) -> str:  # "seat1.first" as the API has always said it: "1:first"
        return lamp.removeprefix("seat").replace(".", ":", 1)

    return {
        "wagers": sorted(said(lamp) for lamp in snap.wagers),
        "next_card": said(snap.next_card) if snap.next_card else None,
        "fault": snap.fault,
    }


def _pin_history(factory: Any) -> dict[str, Any]:
    """Every mock pin's recent state history (simulation only), for hardware-in-the-loop checks:
    {"GPIO17": [[seconds since the first state kept, state], ...]}, the last PIN_HISTORY changes
    of each (drivers/pins.py's SimulatedPin). gpiozero's mock pins record
    each state with the time since the previous change; these are summed here."""
    out: dict[str, Any] = {}
    for info, pin in list(getattr(factory, "pins", {}).items()):
        elapsed = 0.0
        history = []
        for state in list(pin.states):
            elapsed += state.timestamp
            history.append([round(elapsed, 6), state.state])
        out[str(getattr(info, "name", info))] = history
    return out


def _announce_tokens(tokens: Tokens) -> None:
    # Printed once to the terminal (never logged): a simulated table made these up just now.
    print(
        "SIMULATED table: no API tokens were set, so these were made for this run only:\n"
        f"  dealer token:       {tokens.dealer}\n"
        f"  supervisor token:   {tokens.supervisor}\n"
        f"  surveillance token: {tokens.surveillance}",
        file=sys.stderr,
        flush=True,
    )


def _deaf_shoe(event: RepeatedFrame, deaf: int) -> str:
    """The fault latched when the shoe keeps sending a card again: it does not hear the table."""
    return (
        f"{event.message} The shoe has sent it {deaf} times since, at its own pace: it does not hear "
        "the table's acknowledgements, and no card after it can come. Check the shoe's cable."
    )
