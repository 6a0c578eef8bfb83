"""Dealer buttons on mock pins: one press per real press, however the contacts chatter.

The button is wired between its GPIO pin and ground with the pull-up on, so pressing drives the
pin low. Chatter is simulated by driving the mock pin low and high within the 50 ms window at
fake clock times; the outcome a dealer sees is the list of presses the table loop received.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from drivers.buttons import ButtonPress, DealerButtons
from drivers.pins import load_pin_map

CONFIRM, VOID = 5, 6


def drive(pin_factory: Any, clock: Any, pin: int, steps: list[tuple[float, str]]) -> None:
    """Drive `pin` "low" (pressed) or "high" (released) at the given fake clock times."""
    mock = pin_factory.pin(pin)
    for at, level in steps:
        clock.now = at
        mock.drive_low() if level == "low" else mock.drive_high()


@pytest.fixture
def presses(pin_factory: Any, clock: Any) -> Iterator[list[ButtonPress]]:
    received: list[ButtonPress] = []
    buttons = DealerButtons(
        {"confirm": CONFIRM, "void": VOID},
        on_press=received.append,
        pin_factory=pin_factory,
        bounce_time=0.05,
        clock=clock,
    )
    yield received
    # Released before closing: gpiozero's hold thread makes close() wait out a held button.
    for pin in (CONFIRM, VOID):
        pin_factory.pin(pin).drive_high()
    buttons.close()


def test_chatter_within_the_bounce_window_is_one_press(
    presses: list[ButtonPress], pin_factory: Any, clock: Any
) -> None:
    drive(pin_factory, clock, CONFIRM, [
        (10.000, "low"), (10.002, "high"), (10.004, "low"), (10.007, "high"), (10.009, "low"),
    ])
    assert presses == [ButtonPress("confirm", 10.000)]


def test_a_release_that_chatters_is_not_a_second_press(
    presses: list[ButtonPress], pin_factory: Any, clock: Any
) -> None:
    drive(pin_factory, clock, CONFIRM, [
        (10.000, "low"),
        (10.800, "high"), (10.803, "low"), (10.806, "high"), (10.810, "low"), (10.812, "high"),
    ])
    assert presses == [ButtonPress("confirm", 10.000)]


def test_two_deliberate_presses_count_twice(
    presses: list[ButtonPress], pin_factory: Any, clock: Any
) -> None:
    drive(pin_factory, clock, CONFIRM, [
        (10.000, "low"), (10.200, "high"), (10.500, "low"), (10.700, "high"),
    ])
    assert presses == [ButtonPress("confirm", 10.000), ButtonPress("confirm", 10.500)]


def test_a_press_right_after_a_bounce_window_closes_counts(
    presses: list[ButtonPress], pin_factory: Any, clock: Any
) -> None:
    # Quiet for exactly the bounce time before the second press: a real press, not chatter.
    drive(pin_factory, clock, CONFIRM, [(10.00, "low"), (10.10, "high"), (10.15, "low")])
    assert [p.at for p in presses] == [10.00, 10.15]


def test_each_button_reports_its_own_name_and_chatter_on_one_does_not_mute_the_other(
    presses: list[ButtonPress], pin_factory: Any, clock: Any
) -> None:
    drive(pin_factory, clock, CONFIRM, [(10.000, "low"), (10.001, "high")])
    drive(pin_factory, clock, VOID, [(10.002, "low")])
    assert presses == [ButtonPress("confirm", 10.000), ButtonPress("void", 10.002)]


def test_buttons_from_the_default_pin_map_press_on_their_wired_pins(
    pin_factory: Any, clock: Any
) -> None:
    received: list[ButtonPress] = []
    pin_map = load_pin_map(name="seven-seat-595")
    with DealerButtons.from_pin_map(
        pin_map, on_press=received.append, pin_factory=pin_factory, clock=clock
    ) as buttons:
        assert buttons.names == ("confirm", "void")
        drive(pin_factory, clock, pin_map.buttons["void"], [(20.0, "low")])
        assert buttons.is_pressed("void")
        drive(pin_factory, clock, pin_map.buttons["void"], [(20.5, "high")])
    assert received == [ButtonPress("void", 20.0)]


def test_a_button_set_without_confirm_or_with_an_unknown_button_is_refused(
    pin_factory: Any
) -> None:
    with pytest.raises(ValueError, match="at least a confirm button"):
        DealerButtons({"void": VOID}, on_press=print, pin_factory=pin_factory)
    with pytest.raises(ValueError, match="unknown dealer button 'pause'"):
        DealerButtons({"confirm": CONFIRM, "pause": 7}, on_press=print, pin_factory=pin_factory)
