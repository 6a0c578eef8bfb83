"""Where lamp states go: GPIO LEDs, or a chain of 74HC595 shift registers.

A sink drives a fixed set of lamps and takes whole frames (every lamp's lit/dark state at one
instant). Timing lives in the blinker, not here, so both backends blink in step and show the
same thing for the same frame.

    >>> sink = GpioLampSink({"seat1.first": 17}, pin_factory=factory)
    >>> sink.write({"seat1.first": True})      # GPIO17 high: the lamp is lit

Both sinks take `pin_factory=` and pass it to every gpiozero device, so nothing depends on
gpiozero's global default factory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

from gpiozero.output_devices import LED, DigitalOutputDevice  # not the package: controller/api/launch.py
from gpiozero.pins.mock import MockPin, MockPWMPin

from drivers.pins import ChainPins

STATUS: Literal["status"] = "status"
#: A lamp by its name: a seat's lamp as the pin map names it ("seat3.first"), or the status lamp.
LampId = str
Frame = Mapping[LampId, bool]


class LedSink(Protocol):
    """Drives the lamps in `lamps`; `write` shows one frame, ignoring lamps it does not drive."""

    @property
    def lamps(self) -> frozenset[LampId]: ...

    def write(self, frame: Frame, *, force: bool = False) -> None: ...

    def close(self) -> None: ...


class GpioLampSink:
    """One gpiozero LED per lamp, each on its own GPIO pin (active high, through a resistor).

    Only lamps whose state changed are written, unless `force` (recovery re-drives everything).
    """

    def __init__(self, pins: Mapping[LampId, int], *, pin_factory: Any) -> None:
        self._leds: dict[LampId, Any] = {}
        try:
            for lamp, pin in pins.items():
                self._leds[lamp] = LED(pin, initial_value=False, pin_factory=pin_factory)
        except Exception:
            self.close()
            raise
        self._shown: dict[LampId, bool] = dict.fromkeys(self._leds, False)

    @property
    def lamps(self) -> frozenset[LampId]:
        return frozenset(self._leds)

    def write(self, frame: Frame, *, force: bool = False) -> None:
        for lamp, led in self._leds.items():
            lit = frame.get(lamp, False)
            if force or lit != self._shown[lamp]:
                led.value = lit
                self._shown[lamp] = lit

    def close(self) -> None:
        for led in self._leds.values():
            led.close()
        self._leds.clear()


class ShiftRegisterSink:
    """Lamps on a chain of 74HC595s, driven by three GPIO outputs (SER, SRCLK, RCLK).

    Every frame shifts all 8 x chips bits, farthest output first and each chip's Q7 first, then
    pulses the latch: the lamps change together on the latch's rising edge, never showing a
    half-shifted frame. `outputs` maps each lamp to its chain output (0 = first chip's Q0).
    The chain powers up with random outputs, so an all-dark frame is latched at once.
    """

    def __init__(
        self, chain: ChainPins, outputs: Mapping[LampId, int], *, pin_factory: Any
    ) -> None:
        for lamp, output in outputs.items():
            if not 0 <= output < chain.outputs:
                raise ValueError(f"lamp {lamp}: no output {output} on a {chain.chips}-chip chain")
        self._chain = chain
        self._outputs = dict(outputs)
        # Each output's lamp, by output number (None: an output no lamp is wired to).
        self._wired: tuple[LampId | None, ...] = tuple(
            {output: lamp for lamp, output in self._outputs.items()}.get(i) for i in range(chain.outputs)
        )
        self._devices: list[Any] = []
        try:
            self._data = self._add(chain.data, pin_factory)
            self._clock = self._add(chain.clock, pin_factory)
            self._latch = self._add(chain.latch, pin_factory)
        except Exception:
            self.close()
            raise
        self._data_level = False
        self._bits: list[bool] = [False] * chain.outputs
        self._shift_out(self._bits)

    def _add(self, pin: int, pin_factory: Any) -> Any:
        device = DigitalOutputDevice(pin, initial_value=False, pin_factory=pin_factory)
        self._devices.append(device)
        return device

    @property
    def lamps(self) -> frozenset[LampId]:
        return frozenset(self._outputs)

    def write(self, frame: Frame, *, force: bool = False) -> None:
        get = frame.get
        bits = [lamp is not None and get(lamp, False) for lamp in self._wired]
        if force or bits != self._bits:
            self._shift_out(bits)
            self._bits = bits

    def _shift_out(self, bits: list[bool]) -> None:
        # Written to the pins themselves (each output device is active-high, never blinks): a
        # frame is about 70 writes, and gpiozero's on()/off(), even its `pin.state`, cost several
        # times the write (`_lean`), each write the pin's own call with its own low and high.
        (data, data_low, data_high), (clock, clock_low, clock_high), (latch, latch_low, latch_high) = self._lines()
        level = self._data_level
        for bit in reversed(bits):
            # SER only changes when the bit does: one GPIO write fewer for every repeated bit.
            if bit != level:
                data(data_high if bit else data_low)
                level = bit
            clock(clock_high)
            clock(clock_low)
        self._data_level = level
        latch(latch_high)
        latch(latch_low)

    def _lines(self) -> tuple[_Line, _Line, _Line]:
        lines = getattr(self, "_written", None)
        if lines is None:
            lines = self._written = (_lean(self._data.pin), _lean(self._clock.pin), _lean(self._latch.pin))
        return lines

    def close(self) -> None:
        for device in self._devices:
            device.close()
        self._devices.clear()


#: How one line of the chain is written: the pin's own write call, then its low and its high level.
_Line = tuple[Callable[[Any], object], object, object]


def _lean(pin: Any) -> _Line:
    """How a level is written to `pin` with nothing in between that a frame need not pay for:
    gpiozero's `pin.state = level` is a property calling the pin's `_set_state`, which for its
    mock pins (the simulated table's, the tests') checks the pin's function and the value's range
    on every write and records the change (`_change_state`, what the tests' logic analyser
    watches). The chain's three lines are outputs this sink made, the levels 0 and 1: the record
    is written straight, called with the level as the pin stores it (a float on a PWM-capable
    mock pin, so no call in between converts it), and any other pin (a Pi's) has its
    `_set_state` called, what the property does."""
    if isinstance(pin, MockPWMPin):
        return pin._change_state, 0.0, 1.0
    if isinstance(pin, MockPin):
        return pin._change_state, False, True
    set_state = getattr(pin, "_set_state", None)
    if set_state is not None:
        return set_state, False, True
    return (lambda level: setattr(pin, "state", level)), False, True
