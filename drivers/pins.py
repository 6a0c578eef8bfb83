"""Which gpiozero pin factory drives the table, and which pin each lamp and button lands on.

Two things live here because both answer "what is wired where":

- `make_pin_factory(simulated, name)` picks the gpiozero pin factory. Simulated mode always gets
  a `MockFactory` with PWM-capable mock pins, set explicitly, so a laptop never needs a Pi and a
  real table never silently runs on mock pins.
- `load_pin_map(path, name)` reads one named map from `hardware/pins.toml` (BCM numbers),
  checks it, and returns a `PinMap`. Every error names the file and the key.

    >>> factory = make_pin_factory(simulated=True, name=None)
    >>> pin_map = load_pin_map(DEFAULT_PIN_FILE, "small-gpio")
    >>> pin_map.seats[1][Base.FIRST]
    17
"""

from __future__ import annotations

import enum
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpiozero.pins.mock import MockFactory, MockPWMPin

from hardware import shipped

#: The pin maps shipped with tablectl (package data, found wherever tablectl is installed);
#: `indicators.pin_file` names an operator's own file instead.
DEFAULT_PIN_FILE = shipped("pins.toml")

# The 40-pin header brings out BCM GPIO 0-27; nothing else can be wired to a lamp or a button.
HEADER_GPIO = range(0, 28)
SEATS = range(1, 8)
LAMP_KINDS = ("gpio", "shift-register")
REAL_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native")
BUTTON_NAMES = ("confirm", "void")


class PinError(ValueError):
    """A pin factory that cannot be used, or a pin map that is wrong. The message says where."""


class Base(enum.StrEnum):
    """The four lamps in front of every seat, in the order a stack travels."""

    FIRST = "first"
    SECOND = "second"
    THIRD = "third"
    HOME = "home"


def make_pin_factory(simulated: bool, name: str | None = None) -> Any:
    """Return the gpiozero pin factory to pass as `pin_factory=` to every device.

    Simulated mode ignores `name` and GPIOZERO_PIN_FACTORY: mock pins, with PWM support.
    On a real table the factory comes from `name` (config), else GPIOZERO_PIN_FACTORY, else
    lgpio (the only one that works on a Pi 5, and it works on older Pis too).
    """
    if simulated:
        return MockFactory(pin_class=MockPWMPin)
    chosen = name or os.environ.get("GPIOZERO_PIN_FACTORY") or "lgpio"
    chosen = chosen.strip().lower()
    if chosen == "mock":
        raise PinError(
            "pin factory 'mock' drives no hardware: a real table cannot use it. "
            "Start tablectl in simulated mode (--sim) instead."
        )
    if chosen not in REAL_FACTORIES:
        raise PinError(
            f"unknown gpiozero pin factory {chosen!r}; use one of {', '.join(REAL_FACTORIES)}"
        )
    # Imported by name so that a missing backend library fails here, with a plain message,
    # rather than deep inside the first device that is created.
    from importlib.metadata import entry_points

    for entry in entry_points(group="gpiozero_pin_factories"):
        if entry.name == chosen:
            try:
                return entry.load()()
            except Exception as exc:
                hint = (
                    "on Raspberry Pi OS install python3-lgpio and create the venv with "
                    "--system-site-packages"
                    if chosen == "lgpio"
                    else "check that its library is installed and its daemon runs"
                )
                raise PinError(
                    f"could not start the gpiozero pin factory {chosen!r} ({exc}); {hint}; "
                    "or run tablectl with --sim"
                ) from exc
    raise PinError(f"gpiozero does not provide the pin factory {chosen!r}")


@dataclass(frozen=True)
class ChainPins:
    """The three GPIO pins that drive a 74HC595 chain, and how many chips it has."""

    data: int  # SER, pin 14 of the first chip
    clock: int  # SRCLK, pin 11 of every chip
    latch: int  # RCLK, pin 12 of every chip
    chips: int

    @property
    def outputs(self) -> int:
        return 8 * self.chips


@dataclass(frozen=True)
class PinMap:
    """One table's wiring: lamps per seat and base, the status lamp, the dealer buttons.

    With `lamps == "gpio"` a seat's numbers are BCM GPIO pins; with `"shift-register"` they are
    chain outputs (0 is Q0 of the chip wired to the Pi, 8 is Q0 of the next chip, ...).
    The status lamp and the buttons are always on GPIO pins (wiring.md says why).
    """

    name: str
    source: str
    lamps: Literal["gpio", "shift-register"]
    seats: Mapping[int, Mapping[Base, int]]
    status: int
    buttons: Mapping[str, int]
    chain: ChainPins | None = None


def load_pin_map(
    path: str | os.PathLike[str] = DEFAULT_PIN_FILE, name: str = "small-gpio"
) -> PinMap:
    """Read the pin map called `name` from the TOML file at `path` and check it."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise PinError(f"{source}: cannot read the pin map file ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise PinError(f"{source}: not valid TOML ({exc})") from exc
    if name not in document:
        known = ", ".join(sorted(document)) or "none"
        raise PinError(f"{source}: no pin map [{name}] (maps in this file: {known})")
    return _parse_map(source, name, document[name])


def _parse_map(source: str, name: str, table: Any) -> PinMap:
    where = f"{source}: [{name}]"
    if not isinstance(table, dict):
        raise PinError(f"{where} must be a table")
    allowed = {"description", "lamps", "seats", "status", "buttons", "chain"}
    for key in table:
        if key not in allowed:
            raise PinError(f"{where}: unknown key {key!r} (allowed: {', '.join(sorted(allowed))})")
    for key in ("lamps", "seats", "status", "buttons"):
        if key not in table:
            raise PinError(f"{where}: missing key {key!r}")
    lamps = table["lamps"]
    if lamps not in LAMP_KINDS:
        raise PinError(f"{where}.lamps = {lamps!r}: use \"gpio\" or \"shift-register\"")

    gpio_users: dict[int, str] = {}

    def take_gpio(key: str, value: Any) -> int:
        pin = _integer(f"{where}.{key}", value)
        if pin not in HEADER_GPIO:
            raise PinError(f"{where}.{key} = {pin} is not a BCM GPIO pin on the header (0-27)")
        if pin in gpio_users:
            raise PinError(f"{where}.{key}: GPIO {pin} is already used by {gpio_users[pin]}")
        gpio_users[pin] = f"{name}.{key}"
        return pin

    status = take_gpio("status", table["status"])
    buttons_table = table["buttons"]
    if not isinstance(buttons_table, dict) or "confirm" not in buttons_table:
        raise PinError(f"{where}.buttons must be a table with at least confirm = <pin>")
    for key in buttons_table:
        if key not in BUTTON_NAMES:
            raise PinError(f"{where}.buttons: unknown button {key!r} (known: confirm, void)")
    buttons = {str(k): take_gpio(f"buttons.{k}", v) for k, v in buttons_table.items()}

    chain: ChainPins | None = None
    if lamps == "shift-register":
        if "chain" not in table or not isinstance(table["chain"], dict):
            raise PinError(
                f"{where}: lamps = \"shift-register\" needs chain = {{data, clock, latch, chips}}"
            )
        spec = table["chain"]
        for key in spec:
            if key not in ("data", "clock", "latch", "chips"):
                raise PinError(f"{where}.chain: unknown key {key!r}")
        for key in ("data", "clock", "latch", "chips"):
            if key not in spec:
                raise PinError(f"{where}.chain: missing key {key!r}")
        chips = _integer(f"{where}.chain.chips", spec["chips"])
        if not 1 <= chips <= 8:
            raise PinError(f"{where}.chain.chips = {chips}: a chain has 1 to 8 chips")
        chain = ChainPins(
            data=take_gpio("chain.data", spec["data"]),
            clock=take_gpio("chain.clock", spec["clock"]),
            latch=take_gpio("chain.latch", spec["latch"]),
            chips=chips,
        )
    elif "chain" in table:
        raise PinError(f"{where}.chain is only for lamps = \"shift-register\"")

    seats_table = table["seats"]
    if not isinstance(seats_table, dict) or not seats_table:
        raise PinError(f"{where}.seats must list at least one seat")
    outputs_used: dict[int, str] = {}
    seats: dict[int, dict[Base, int]] = {}
    for seat_key, bases_table in seats_table.items():
        seat_where = f"{where}.seats.{seat_key}"
        if not seat_key.isdigit() or int(seat_key) not in SEATS:
            raise PinError(f"{seat_where}: seats are numbered 1 to 7")
        if not isinstance(bases_table, dict):
            raise PinError(f"{seat_where} must be {{ first = , second = , third = , home = }}")
        for key in bases_table:
            if key not in {base.value for base in Base}:
                raise PinError(f"{seat_where}: unknown base {key!r} (first, second, third, home)")
        lamps_of_seat: dict[Base, int] = {}
        for base in Base:
            if base.value not in bases_table:
                raise PinError(f"{seat_where}: missing base {base.value!r}")
            key = f"seats.{seat_key}.{base.value}"
            value = bases_table[base.value]
            if chain is None:
                lamps_of_seat[base] = take_gpio(key, value)
                continue
            output = _integer(f"{where}.{key}", value)
            if not 0 <= output < chain.outputs:
                raise PinError(
                    f"{where}.{key} = {output}: the chain of {chain.chips} chips has outputs "
                    f"0 to {chain.outputs - 1}"
                )
            if output in outputs_used:
                raise PinError(
                    f"{where}.{key}: chain output {output} is already used by "
                    f"{outputs_used[output]}"
                )
            outputs_used[output] = f"{name}.{key}"
            lamps_of_seat[base] = output
        seats[int(seat_key)] = lamps_of_seat

    return PinMap(
        name=name,
        source=source,
        lamps=lamps,
        seats=dict(sorted(seats.items())),
        status=status,
        buttons=buttons,
        chain=chain,
    )


def _integer(where: str, value: Any) -> int:
    # TOML booleans are not numbers here, though Python's bool is an int.
    if isinstance(value, bool) or not isinstance(value, int):
        raise PinError(f"{where} = {value!r} must be a whole number")
    return value
