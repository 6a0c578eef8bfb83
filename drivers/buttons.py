"""The dealer's push buttons: confirm (wagers locked / next round) and, where wired, void request.

Each button is a gpiozero `DigitalInputDevice` between its GPIO pin and ground, using the Pi's
internal pull-up (pressed = low, as gpiozero's `Button`, whose hold-detection thread woke ten
times a second per button for a hold nothing here uses). A press reaches the table loop as one
`ButtonPress`, however much the contacts chatter.

    >>> buttons = DealerButtons({"confirm": 5, "void": 6}, on_press=print, pin_factory=factory)
    >>> # the dealer presses confirm
    ButtonPress(button='confirm', at=1234.5)

Debounce: a press counts only if the line was quiet (no edge at all) for `bounce_time` before
it. The rule is applied here, on every backend, because gpiozero's backends disagree (lgpio
filters for stability, RPi.GPIO locks out after an edge, and the mock pins used in tests and in
simulated mode ignore bounce_time altogether). `bounce_time` is still passed to gpiozero so a
backend that filters in the kernel does so. Counting from the last edge of either kind is what
stops a release that chatters from reading as a second press.

`on_press` runs in gpiozero's event thread: hand the event to the asyncio loop with
`loop.call_soon_threadsafe`, never change table state there.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gpiozero.input_devices import DigitalInputDevice  # not the package: controller/api/launch.py

from drivers.pins import BUTTON_NAMES, PinMap

DEFAULT_BOUNCE_S = 0.05


@dataclass(frozen=True)
class ButtonPress:
    """The dealer pressed `button` at clock time `at` (seconds, monotonic)."""

    button: str
    at: float


class DealerButtons:
    """The dealer's buttons by name; calls `on_press(ButtonPress)` once per real press."""

    def __init__(
        self,
        pins: Mapping[str, int],
        *,
        on_press: Callable[[ButtonPress], None],
        pin_factory: Any,
        bounce_time: float = DEFAULT_BOUNCE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if "confirm" not in pins:
            raise ValueError("the dealer buttons need at least a confirm button")
        for name in pins:
            if name not in BUTTON_NAMES:
                known = ", ".join(BUTTON_NAMES)
                raise ValueError(f"unknown dealer button {name!r} (known: {known})")
        if not 0 < bounce_time <= 1:
            raise ValueError(f"bounce_time = {bounce_time} s: use a value above 0 and up to 1 s")
        self._on_press = on_press
        self._bounce = bounce_time
        self._clock = clock
        self._lock = threading.Lock()
        self._last_edge: dict[str, float | None] = dict.fromkeys(pins)
        self._buttons: dict[str, Any] = {}
        try:
            for name, pin in pins.items():
                button = DigitalInputDevice(
                    pin, pull_up=True, bounce_time=bounce_time, pin_factory=pin_factory
                )
                button.when_activated = functools.partial(self._edge, name, True)
                button.when_deactivated = functools.partial(self._edge, name, False)
                self._buttons[name] = button
        except Exception:
            self.close()
            raise

    @classmethod
    def from_pin_map(cls, pin_map: PinMap, **kwargs: Any) -> DealerButtons:
        return cls(pin_map.buttons, **kwargs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._buttons)

    def is_pressed(self, name: str) -> bool:
        """Whether the button is held down right now (raw, not debounced)."""
        return bool(self._buttons[name].is_active)

    def _edge(self, name: str, pressed: bool) -> None:
        now = self._clock()
        with self._lock:
            last, self._last_edge[name] = self._last_edge[name], now
        if pressed and (last is None or now - last >= self._bounce):
            self._on_press(ButtonPress(name, now))

    def close(self) -> None:
        for button in self._buttons.values():
            button.close()
        self._buttons.clear()

    def __enter__(self) -> DealerButtons:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
