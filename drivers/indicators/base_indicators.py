"""BaseIndicators: what the base lamps say to the dealer, over any lamp backend.

In front of each seat are the lamps the pin map names (`seat3.first`, `seat3.home`, ...; which
of them a game lights, and what each means to its players, is the game's), and the table has one
status lamp. The table loop gives semantic commands (a wager stands here, the next card goes
here, this stack scored, this wager is out, a fault) and the pin map decides which output each
lamp lands on. After a restart `set_from_state` re-drives every lamp from a snapshot.

    >>> lamps = BaseIndicators.from_pin_map(load_pin_map(name="small-gpio"), pin_factory=factory)
    >>> lamps.show_wager("seat3.first")      # seat 3's first lamp lights steady
    >>> lamps.next_card("seat3.first")       # ... and blinks: the next card is seat 3's

A command on the blinking lamp means its card came, so the blink stops there. Commands are
cheap and thread-safe; with `run_blinker=True` a background thread keeps the
patterns moving. The lamps mean (also in hardware/wiring.md):

    dark                      no wager here
    steady                    a wager stands here (or it scored here, waiting to be paid)
    slow blink                the next card goes here
    five rapid flashes        the stack scored here, then steady until paid
    two long pulses, dark     the wager here is out
    status steady / fast      table ready / fault: play stopped, read the dealer screen
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from drivers.indicators.blinker import Blinker, Clock
from drivers.indicators.patterns import DARK, FAULT, NEXT_CARD, OUT, SCORED, STEADY, Pattern
from drivers.indicators.sinks import (
    STATUS,
    GpioLampSink,
    LampId,
    LedSink,
    ShiftRegisterSink,
)
from drivers.pins import PinMap

log = logging.getLogger(__name__)

#: A seat's lamp, by its name in the pin map ("seat3.first").
Spot = str


@dataclass(frozen=True)
class LampSnapshot:
    """What the lamps mean at one moment: enough to re-drive them all after a restart."""

    wagers: frozenset[Spot] = field(default_factory=frozenset)
    next_card: Spot | None = None
    fault: bool = False


class BaseIndicators:
    """Semantic control of the base lamps and the status lamp; see the module docstring."""

    def __init__(
        self,
        lamps: Iterable[Spot],
        sinks: Sequence[LedSink],
        *,
        clock: Clock = time.monotonic,
        run_blinker: bool = True,
    ) -> None:
        self._lamps = tuple(sorted(frozenset(lamps)))
        every: list[LampId] = [STATUS, *self._lamps]
        driven = frozenset().union(*(sink.lamps for sink in sinks))
        missing = [lamp for lamp in every if lamp not in driven]
        if missing:
            raise ValueError(f"no output drives lamp(s) {missing}")
        self._sinks = tuple(sinks)
        self._blinker = Blinker(every, sinks, clock=clock)
        self._wagers: set[Spot] = set()
        self._next: Spot | None = None
        self._fault = False
        self._lock = threading.RLock()
        # Inside `together()`: how deep, and whether a command changed a pattern meanwhile (the
        # frame is then written once, as the outermost `together()` ends).
        self._together = 0
        self._untold = False
        self._blinker.play(STATUS, STEADY)
        self._blinker.tick()
        if run_blinker:
            self._blinker.start()

    @classmethod
    def from_pin_map(cls, pin_map: PinMap, *, pin_factory: Any, **kwargs: Any) -> BaseIndicators:
        """Build the sinks the pin map describes and the indicators over them."""
        spots: dict[LampId, int] = dict(pin_map.lamp_pins)
        sinks: list[LedSink] = []
        try:
            sinks.append(GpioLampSink({STATUS: pin_map.status}, pin_factory=pin_factory))
            if pin_map.chain is None:
                sinks.append(GpioLampSink(spots, pin_factory=pin_factory))
            else:
                sinks.append(ShiftRegisterSink(pin_map.chain, spots, pin_factory=pin_factory))
            return cls(spots, sinks, **kwargs)
        except Exception:
            for sink in sinks:
                sink.close()
            raise

    @contextlib.contextmanager
    def together(self) -> Iterator[BaseIndicators]:
        """The commands given inside show at once, as they end: one frame written (on a 74HC595
        chain one shift and one latch) for all of them, not one a command (the table gives the
        lamp changes of one journal entry together). Nested, the outermost one writes."""
        with self._lock, self._blinker.held():
            self._together += 1
            try:
                yield self
            finally:
                self._together -= 1
                if not self._together and self._untold:
                    self._untold = False
                    self._blinker.tick()

    # -- what the dealer sees ---------------------------------------------------------------

    @property
    def lamps(self) -> tuple[Spot, ...]:
        """The seats' lamps, by name."""
        return self._lamps

    def show_wager(self, lamp: Spot) -> None:
        """A wager stands here: steady."""
        with self._lock:
            spot = self._spot(lamp)
            self._card_came(spot)
            self._wagers.add(spot)
            self._play(spot, STEADY)

    def remove_wager(self, lamp: Spot) -> None:
        """The stack left here (moved on, or paid): dark."""
        with self._lock:
            spot = self._spot(lamp)
            self._card_came(spot)
            self._wagers.discard(spot)
            self._play(spot, DARK)

    def next_card(self, lamp: Spot) -> None:
        """The next card goes here: slow blink. The lamp that blinked before settles back."""
        with self._lock:
            spot = self._spot(lamp)
            previous, self._next = self._next, spot
            if previous is not None and previous != spot:
                self._blinker.play(previous, STEADY if previous in self._wagers else DARK)
            self._play(spot, NEXT_CARD)

    def scored(self, lamp: Spot) -> None:
        """A stack scored here: rapid flashes, then steady until paid."""
        with self._lock:
            spot = self._spot(lamp)
            self._card_came(spot)
            self._wagers.add(spot)
            self._play(spot, SCORED)

    def out(self, lamp: Spot) -> None:
        """The wager here is out: two long pulses, then dark."""
        with self._lock:
            spot = self._spot(lamp)
            self._card_came(spot)
            self._wagers.discard(spot)
            self._play(spot, OUT)

    def fault(self) -> None:
        """Play is stopped: the status lamp blinks fast. The seats' lamps keep what they show."""
        with self._lock:
            self._fault = True
            self._play(STATUS, FAULT)

    def clear_fault(self) -> None:
        """The fault was cleared by a person: the status lamp is steady again."""
        with self._lock:
            self._fault = False
            self._play(STATUS, STEADY)

    def clear(self) -> None:
        """Every seat's lamp dark (end of round); the status lamp keeps its meaning."""
        with self._lock:
            self._wagers.clear()
            self._next = None
            for lamp in self._lamps:
                self._blinker.play(lamp, DARK)
            self._show()

    def set_from_state(self, snapshot: LampSnapshot, *, force: bool = True) -> None:
        """Re-drive every lamp from `snapshot` (recovery): every output is written again. With
        `force=False` (the picture drawn again as play goes on, the lamps' state already known)
        a sink whose outputs would stay as they are is not written (no shift of a 74HC595 chain
        that shows this frame already)."""
        with self._lock:
            spots = [*snapshot.wagers, *([snapshot.next_card] if snapshot.next_card else [])]
            for lamp in spots:
                self._spot(lamp)
            self._wagers = set(snapshot.wagers)
            self._next = snapshot.next_card
            self._fault = snapshot.fault
            for spot in self._lamps:
                pattern = STEADY if spot in self._wagers else DARK
                self._blinker.play(spot, NEXT_CARD if spot == self._next else pattern)
            self._blinker.play(STATUS, FAULT if self._fault else STEADY)
            self._blinker.tick(force=force)

    def snapshot(self) -> LampSnapshot:
        """What the lamps mean now (the table loop journals its own state; this is for checks)."""
        with self._lock:
            return LampSnapshot(frozenset(self._wagers), self._next, self._fault)

    @property
    def blinking(self) -> Spot | None:
        """The lamp the next card goes to (`snapshot().next_card`, without copying the wagers)."""
        return self._next

    @property
    def faulted(self) -> bool:
        """Whether the status lamp shows a fault (`snapshot().fault`, without copying the wagers)."""
        return self._fault

    def has_wager(self, lamp: Spot) -> bool:
        """Whether a wager stands at `lamp` (`lamp in snapshot().wagers`, without copying them)."""
        with self._lock:
            return lamp in self._wagers

    def pattern_name(self, lamp: LampId) -> str:
        """The pattern a lamp is playing, by name (for the dealer screen's lamp panel)."""
        return self._blinker.pattern_of(lamp).name

    # -- running -----------------------------------------------------------------------------

    def blink_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Keep the patterns moving by `loop`'s timers (the table's loop, which gives the lamps
        their commands), not the blinker's own thread: make the indicators with
        `run_blinker=False`, then call this once."""
        self._blinker.run_on(loop)

    def tick(self) -> float | None:
        """Render the lamps for now; return when the next change is due (None: all steady)."""
        return self._blinker.tick()

    @property
    def last_error(self) -> str | None:
        return self._blinker.last_error

    def close(self) -> None:
        """Stop blinking, turn every lamp off and release the pins."""
        self._blinker.stop()
        for sink in self._sinks:
            try:
                sink.write({}, force=True)
            except Exception:
                log.exception("could not turn the lamps off while closing")
            finally:
                sink.close()

    def __enter__(self) -> BaseIndicators:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers -----------------------------------------------------------------------------

    def _spot(self, lamp: Spot) -> Spot:
        if lamp not in self._lamps:
            seats = sorted({int(name.partition(".")[0].removeprefix("seat")) for name in self._lamps})
            raise ValueError(f"no lamp {lamp!r} in the pin map (this table's seats: {', '.join(map(str, seats))})")
        return lamp

    def _card_came(self, spot: Spot) -> None:
        # Any news about the blinking base means its card came: it is owed nothing now.
        if self._next == spot:
            self._next = None

    def _play(self, lamp: LampId, pattern: Pattern) -> None:
        self._blinker.play(lamp, pattern)
        self._show()

    def _show(self) -> None:
        # The frame for now, at once; inside `together()`, once, as it ends.
        if self._together:
            self._untold = True
        else:
            self._blinker.tick()
