"""A simulated table keeps a bounded history of its pins and its pole display's wire.

gpiozero's mock pins keep every level change for ever, and the simulated display kept every byte
written: a simulated table dealing all day grew without end (issue 35 point 5). Both now keep
their latest changes only, which is what /api/sim/pins and the tests read.
"""

from __future__ import annotations

import itertools
from typing import Any

from drivers.display.device import WIRE_KEPT, SimulatedDisplay
from drivers.indicators.base_indicators import BaseIndicators
from drivers.pins import PIN_HISTORY, load_pin_map

SEVEN = load_pin_map(name="seven-seat-595")
CARDS = 200  # each card moves a wager and the next-card lamp: the chain is shifted out again


def test_a_days_worth_of_lamp_changes_keeps_each_pins_latest_changes_only(pin_factory: Any, clock: Any) -> None:
    chain = SEVEN.chain
    assert chain is not None
    with BaseIndicators.from_pin_map(SEVEN, pin_factory=pin_factory, clock=clock, run_blinker=False) as lamps:
        for card in range(CARDS):
            seat = card % 7 + 1
            lamps.show_wager(f"seat{seat}.first")
            lamps.next_card(f"seat{seat}.second")
            clock.advance(0.4)
            lamps.tick()
            lamps.remove_wager(f"seat{seat}.first")
            lamps.tick()
        lamps.show_wager("seat3.home")
        lamps.tick()
        clock_pin, latch = pin_factory.pin(chain.clock), pin_factory.pin(chain.latch)
        # The clock line toggled tens of thousands of times; each pin holds its last PIN_HISTORY changes.
        assert len(clock_pin.states) == PIN_HISTORY
        assert all(len(pin.states) <= PIN_HISTORY for pin in pin_factory.pins.values())
        # What is kept is the latest: consecutive changes (each a toggle), ending at the level now.
        clock_levels = [state.state for state in clock_pin.states]
        assert all(a != b for a, b in itertools.pairwise(clock_levels))
        assert clock_levels[-1] == clock_pin.state
        assert latch.states[-1].state == latch.state
        assert lamps.snapshot().wagers == frozenset({"seat3.home"})


def test_a_clear_of_the_history_starts_a_bounded_one_again(pin_factory: Any) -> None:
    pin = pin_factory.pin(SEVEN.status)
    pin.function = "output"
    for level in range(3 * PIN_HISTORY):
        pin.state = level % 2
    assert len(pin.states) == PIN_HISTORY
    pin.clear_states()
    for level in range(3 * PIN_HISTORY):
        pin.state = level % 2
    assert len(pin.states) == PIN_HISTORY
    assert pin.states[-1].state == pin.state == (3 * PIN_HISTORY - 1) % 2


def test_the_simulated_displays_wire_keeps_its_latest_bytes_only() -> None:
    display = SimulatedDisplay()
    for amount in range(1, 2001):
        display.show_payout(amount % 7 + 1, amount)
    shown = display.current
    assert shown is not None and shown.upper.strip() == "PAY SEAT 6" and shown.lower.strip() == "2000"
    # 2,000 frames of a few dozen bytes each went out; the wire holds the last few kilobytes of them.
    assert WIRE_KEPT <= len(display.wire.written) <= 2 * WIRE_KEPT
    assert bytes(display.wire.written).endswith(shown.raw)
