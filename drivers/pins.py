"""Which gpiozero pin factory drives the table, and which pin each lamp and button lands on.

Two things live here because both answer "what is wired where":

- `make_pin_factory(simulated, name)` picks the gpiozero pin factory. Simulated mode always gets
  a `MockFactory` with PWM-capable mock pins, set explicitly, so a laptop never needs a Pi and a
  real table never silently runs on mock pins.
- `load_pin_map(path, name)` reads one named map from `hardware/pins.toml` (BCM numbers),
  checks it with the one validator of operators' documents (vision/documents.py), and
  returns a `PinMap`. Every error names the file and the key.

    >>> factory = make_pin_factory(simulated=True, name=None)
    >>> pin_map = load_pin_map(DEFAULT_PIN_FILE, "small-gpio")
    >>> pin_map.lamp_pins["seat1.first"]
    17

A lamp is named as vision names a zone: `seat<n>.<name>`, `<name>` being what the map calls the
lamp in front of seat n (`first`, `home`, ...). The map knows no game: which lamps a game lights
is the game's (its adapter's `lamp_names`), checked against the map when the table starts.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from gpiozero.pins.mock import MockFactory, MockPWMPin
from pydantic_core import PydanticCustomError

from hardware import shipped
from vision.documents import Document, Style, check, problem, rule

#: The pin maps shipped with tablectl (package data, found wherever tablectl is installed);
#: `indicators.pin_file` names an operator's own file instead.
DEFAULT_PIN_FILE = shipped("pins.toml")

# The 40-pin header brings out BCM GPIO 0-27; nothing else can be wired to a lamp or a button.
HEADER_GPIO = range(0, 28)
#: Seats a pin map may wire: a stud table seats eight (GAMES.md), the other games seven.
SEATS = range(1, 9)
LAMP_KINDS = ("gpio", "shift-register")
REAL_FACTORIES = ("lgpio", "rpigpio", "pigpio", "native")
BUTTON_NAMES = ("confirm", "void")


class PinError(ValueError):
    """A pin factory that cannot be used, or a pin map that is wrong. The message says where."""


#: What a lamp in front of a seat may be called in a pin map (the part after `seat<n>.`).
LAMP_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")


def lamp_name(seat: int, name: str) -> str:
    """The lamp called `name` in front of `seat`, as the lamps are named everywhere: "seat3.first"."""
    return f"seat{seat}.{name}"


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
    """One table's wiring: the lamps in front of each seat, by name, the status lamp, the dealer buttons.

    With `lamps == "gpio"` a seat's numbers are BCM GPIO pins; with `"shift-register"` they are
    chain outputs (0 is Q0 of the chip wired to the Pi, 8 is Q0 of the next chip, ...).
    The status lamp and the buttons are always on GPIO pins (wiring.md says why).
    """

    name: str
    source: str
    lamps: Literal["gpio", "shift-register"]
    seats: Mapping[int, Mapping[str, int]]  # seat -> its lamps as the map names them -> pin or output
    status: int
    buttons: Mapping[str, int]
    chain: ChainPins | None = None

    @property
    def lamp_pins(self) -> dict[str, int]:
        """Every seat's lamp by its name ("seat3.first") -> its GPIO pin or chain output."""
        return {lamp_name(seat, name): number for seat, lamps in self.seats.items() for name, number in lamps.items()}

    def unlit(self, seats: int, names: Sequence[str]) -> list[str]:
        """The lamps of a table of `seats` seats, called `names` before each, that this map lacks."""
        return [
            lamp_name(seat, name) for seat in range(1, seats + 1) if seat in self.seats
            for name in names if name not in self.seats[seat]
        ]

    def unwired(self, seats: int) -> list[int]:
        """The seats of a table of `seats` seats that this map has no lamps for."""
        return [seat for seat in range(1, seats + 1) if seat not in self.seats]


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
    if not isinstance(table, dict):
        raise PinError(f"{source}: [{name}] must be a table")
    doc = check(_PinMapDoc, table, source, PinError, _PinStyle(name))
    try:
        return doc.pin_map(name, source)
    except PydanticCustomError as exc:  # a rule across keys (a pin used twice, a chain output)
        raise PinError(f"{source}: [{name}]{exc.context['why'] if exc.context else exc.message()}") from None


def _whole(value: Any, where: str) -> int:
    # TOML booleans are not numbers here, though Python's bool is an int.
    if isinstance(value, bool) or not isinstance(value, int):
        raise problem(f"{where} = {value!r} must be a whole number")
    return value


def _gpio(value: Any) -> int:
    pin = _whole(value, "")
    if pin not in HEADER_GPIO:
        raise problem(f" = {pin} is not a BCM GPIO pin on the header (0-27)")
    return pin


def _lamps(value: Any) -> str:
    if value not in LAMP_KINDS:
        raise problem(f' = {value!r}: use "gpio" or "shift-register"')
    return str(value)


def _buttons(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or "confirm" not in value:
        raise problem(" must be a table with at least confirm = <pin>")
    for key in value:
        if key not in BUTTON_NAMES:
            raise problem(f": unknown button {key!r} (known: confirm, void)")
    out = {}
    for key, pin in value.items():
        try:
            out[str(key)] = _gpio(pin)
        except PydanticCustomError as exc:
            raise problem(f".{key}{_why(exc)}") from None
    return out


def _seats(value: Any) -> dict[int, dict[str, int]]:
    if not isinstance(value, dict) or not value:
        raise problem(" must list at least one seat")
    seats: dict[int, dict[str, int]] = {}
    for seat_key, named in value.items():
        where = f".{seat_key}"
        if not seat_key.isdigit() or int(seat_key) not in SEATS:
            raise problem(f"{where}: seats are numbered 1 to {SEATS[-1]}")
        if not isinstance(named, dict) or not named:
            raise problem(f"{where} must name the seat's lamps: {{ first = , second = , ... }}")
        lamps: dict[str, int] = {}
        for key, number in named.items():
            if not LAMP_NAME.fullmatch(key):
                raise problem(f"{where}: {key!r} is not a lamp's name (a-z, 0-9, - and _, a letter first)")
            lamps[key] = _whole(number, f"{where}.{key}")
        seats[int(seat_key)] = lamps
    return dict(sorted(seats.items()))


def _why(exc: PydanticCustomError) -> str:
    return str(exc.context["why"]) if exc.context else exc.message()


class _ChainDoc(Document):
    data: Annotated[int, rule(_gpio)]
    clock: Annotated[int, rule(_gpio)]
    latch: Annotated[int, rule(_gpio)]
    chips: Annotated[int, rule(lambda v: _chips(v))]


def _chips(value: Any) -> int:
    chips = _whole(value, "")
    if not 1 <= chips <= 8:
        raise problem(f" = {chips}: a chain has 1 to 8 chips")
    return chips


class _PinMapDoc(Document):
    """One named pin map as hardware/pins.toml writes it (BCM numbers; chain outputs for a 74HC595)."""

    description: str | None = None
    lamps: Annotated[str, rule(_lamps)]
    status: Annotated[int, rule(_gpio)]
    buttons: Annotated[dict[str, int], rule(_buttons)]
    chain: _ChainDoc | None = None
    seats: Annotated[dict[int, dict[str, int]], rule(_seats)]

    def pin_map(self, name: str, source: str) -> PinMap:
        """The map, with the rules across keys: a GPIO pin or a chain output used once, lamps
        numbered by the lamp kind."""
        gpio_users: dict[int, str] = {}

        def take(key: str, pin: int) -> int:
            if pin in gpio_users:
                raise problem(f".{key}: GPIO {pin} is already used by {gpio_users[pin]}")
            gpio_users[pin] = f"{name}.{key}"
            return pin

        status = take("status", self.status)
        buttons = {key: take(f"buttons.{key}", pin) for key, pin in self.buttons.items()}
        chain: ChainPins | None = None
        if self.lamps == "shift-register":
            if self.chain is None:
                raise problem(': lamps = "shift-register" needs chain = {data, clock, latch, chips}')
            chain = ChainPins(
                data=take("chain.data", self.chain.data),
                clock=take("chain.clock", self.chain.clock),
                latch=take("chain.latch", self.chain.latch),
                chips=self.chain.chips,
            )
        elif self.chain is not None:
            raise problem('.chain is only for lamps = "shift-register"')
        outputs_used: dict[int, str] = {}
        for seat, lamps in self.seats.items():
            for lamp, number in lamps.items():
                key = f"seats.{seat}.{lamp}"
                if chain is None:
                    if number not in HEADER_GPIO:
                        raise problem(f".{key} = {number} is not a BCM GPIO pin on the header (0-27)")
                    take(key, number)
                    continue
                if not 0 <= number < chain.outputs:
                    raise problem(
                        f".{key} = {number}: the chain of {chain.chips} chips has outputs 0 to {chain.outputs - 1}"
                    )
                if number in outputs_used:
                    raise problem(f".{key}: chain output {number} is already used by {outputs_used[number]}")
                outputs_used[number] = f"{name}.{key}"
        lamps_kind: Literal["gpio", "shift-register"] = "gpio" if self.lamps == "gpio" else "shift-register"
        return PinMap(
            name=name,
            source=source,
            lamps=lamps_kind,
            seats=self.seats,
            status=status,
            buttons=buttons,
            chain=chain,
        )


class _PinStyle(Style):
    """Pin maps name a key as [map].key and say what is unknown or missing their own way."""

    def __init__(self, name: str) -> None:
        self.name = name

    def where(self, loc: Any) -> str:
        return f"[{self.name}]" + "".join(f".{part}" for part in loc)

    def unknown(self, loc: Any, allowed: Any) -> str:
        return f"{self.where(loc[:-1])}: unknown key {loc[-1]!r} (allowed: {', '.join(sorted(allowed))})"

    def missing(self, loc: Any) -> str:
        return f"{self.where(loc[:-1])}: missing key {loc[-1]!r}"
