"""BaseIndicators: what the base lamps say to the dealer, over any lamp backend.

Per seat there is a lamp on first, second and third base and on home plate, and the table has
one status lamp. The table loop gives semantic commands (a wager stands here, the next card
goes here, this stack scored, this wager is out, a fault) and the pin map decides which output
each lamp lands on. After a restart `set_from_state` re-drives every lamp from a snapshot.

    >>> lamps = BaseIndicators.from_pin_map(load_pin_map(name="small-gpio"), pin_factory=factory)
    >>> lamps.show_wager(3, Base.FIRST)      # seat 3's first-base lamp lights steady
    >>> lamps.next_card(3, Base.FIRST)       # ... and blinks: the next card is seat 3's

A command on the blinking base means its card came, so the blink stops there. Commands are
cheap and thread-safe; with `run_blinker=True` a background thread keeps the
patterns moving. The lamps mean (also in hardware/wiring.md):

    dark                      no wager on this base
    steady                    a wager stands here (home plate: scored, waiting to be paid)
    slow blink                the next card goes here
    five rapid flashes        the stack scored (home plate), then steady until paid
    two long pulses, dark     the wager on this base is out
    status steady / fast      table ready / fault: play stopped, read the dealer screen
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Sequence
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
from drivers.pins import Base, PinMap

log = logging.getLogger(__name__)

Spot = tuple[int, Base]


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
        seats: Iterable[int],
        sinks: Sequence[LedSink],
        *,
        clock: Clock = time.monotonic,
        run_blinker: bool = True,
    ) -> None:
        self._seats = frozenset(seats)
        lamps: list[LampId] = [STATUS]
        lamps += [(seat, base) for seat in sorted(self._seats) for base in Base]
        driven = frozenset().union(*(sink.lamps for sink in sinks))
        missing = [lamp for lamp in lamps if lamp not in driven]
        if missing:
            raise ValueError(f"no output drives lamp(s) {missing}")
        self._sinks = tuple(sinks)
        self._blinker = Blinker(lamps, sinks, clock=clock)
        self._wagers: set[Spot] = set()
        self._next: Spot | None = None
        self._fault = False
        self._lock = threading.RLock()
        self._blinker.play(STATUS, STEADY)
        self._blinker.tick()
        if run_blinker:
            self._blinker.start()

    @classmethod
    def from_pin_map(cls, pin_map: PinMap, *, pin_factory: Any, **kwargs: Any) -> BaseIndicators:
        """Build the sinks the pin map describes and the indicators over them."""
        spots: dict[LampId, int] = {
            (seat, base): number
            for seat, bases in pin_map.seats.items()
            for base, number in bases.items()
        }
        sinks: list[LedSink] = []
        try:
            sinks.append(GpioLampSink({STATUS: pin_map.status}, pin_factory=pin_factory))
            if pin_map.chain is None:
                sinks.append(GpioLampSink(spots, pin_factory=pin_factory))
            else:
                sinks.append(ShiftRegisterSink(pin_map.chain, spots, pin_factory=pin_factory))
            return cls(pin_map.seats, sinks, **kwargs)
        except Exception:
            for sink in sinks:
                sink.close()
            raise

    # -- what the dealer sees ---------------------------------------------------------------

    def show_wager(self, seat: int, base: Base) -> None:
        """A wager stands on this base: steady."""
        with self._lock:
            spot = self._spot(seat, base)
            self._card_came(spot)
            self._wagers.add(spot)
            self._play(spot, STEADY)

    def remove_wager(self, seat: int, base: Base) -> None:
        """The stack left this base (moved on, or paid from home plate): dark."""
        with self._lock:
            spot = self._spot(seat, base)
            self._card_came(spot)
            self._wagers.discard(spot)
            self._play(spot, DARK)

    def next_card(self, seat: int, base: Base) -> None:
        """The next card goes here: slow blink. The lamp that blinked before settles back."""
        with self._lock:
            spot = self._spot(seat, base)
            previous, self._next = self._next, spot
            if previous is not None and previous != spot:
                self._blinker.play(previous, STEADY if previous in self._wagers else DARK)
            self._play(spot, NEXT_CARD)

    def scored(self, seat: int) -> None:
        """The seat's stack reached home plate: rapid flashes there, then steady until paid."""
        with self._lock:
            spot = self._spot(seat, Base.HOME)
            self._card_came(spot)
            self._wagers.add(spot)
            self._play(spot, SCORED)

    def out(self, seat: int, base: Base) -> None:
        """The wager on this base is out: two long pulses, then dark."""
        with self._lock:
            spot = self._spot(seat, base)
            self._card_came(spot)
            self._wagers.discard(spot)
            self._play(spot, OUT)

    def fault(self) -> None:
        """Play is stopped: the status lamp blinks fast. Base lamps keep what they show."""
        with self._lock:
            self._fault = True
            self._play(STATUS, FAULT)

    def clear_fault(self) -> None:
        """The fault was cleared by a person: the status lamp is steady again."""
        with self._lock:
            self._fault = False
            self._play(STATUS, STEADY)

    def clear(self) -> None:
        """Every base lamp dark (end of round); the status lamp keeps its meaning."""
        with self._lock:
            self._wagers.clear()
            self._next = None
            for seat in self._seats:
                for base in Base:
                    self._blinker.play((seat, base), DARK)
            self._blinker.tick()

    def set_from_state(self, snapshot: LampSnapshot) -> None:
        """Re-drive every lamp from `snapshot` (recovery): every output is written again."""
        with self._lock:
            spots = [*snapshot.wagers, *([snapshot.next_card] if snapshot.next_card else [])]
            for seat, base in spots:
                self._spot(seat, base)
            self._wagers = set(snapshot.wagers)
            self._next = snapshot.next_card
            self._fault = snapshot.fault
            for seat in self._seats:
                for base in Base:
                    spot = (seat, base)
                    pattern = STEADY if spot in self._wagers else DARK
                    self._blinker.play(spot, NEXT_CARD if spot == self._next else pattern)
            self._blinker.play(STATUS, FAULT if self._fault else STEADY)
            self._blinker.tick(force=True)

    def snapshot(self) -> LampSnapshot:
        """What the lamps mean now (the table loop journals its own state; this is for checks)."""
        with self._lock:
            return LampSnapshot(frozenset(self._wagers), self._next, self._fault)

    def pattern_name(self, lamp: LampId) -> str:
        """The pattern a lamp is playing, by name (for the dealer screen's lamp panel)."""
        return self._blinker.pattern_of(lamp).name

    # -- running -----------------------------------------------------------------------------

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

    def _spot(self, seat: int, base: Base) -> Spot:
        if seat not in self._seats:
            seats = ", ".join(map(str, sorted(self._seats)))
            raise ValueError(f"seat {seat} has no base lamps (this table's seats: {seats})")
        return (seat, Base(base))

    def _card_came(self, spot: Spot) -> None:
        # Any news about the blinking base means its card came: it is owed nothing now.
        if self._next == spot:
            self._next = None

    def _play(self, lamp: LampId, pattern: Pattern) -> None:
        self._blinker.play(lamp, pattern)
        self._blinker.tick()
