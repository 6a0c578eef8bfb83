"""Which gpiozero pin factory drives the table, and which pin each lamp and button lands on.

Two things live here because both answer "what is wired where":

- `make_pin_factory(simulated, name)` picks the gpiozero pin factory. Simulated mode always gets
  a `MockFactory` with PWM-capable mock pins, set explicitly, so a laptop never needs a Pi and a
  real table never silently runs on mock pins.
- `load_pin_map(path, name)` reads one named map from `hardware/pins.toml` (BCM numbers),
  checks it with the one validator of operators' documents (vision/documents.py), and
  returns a `PinMap`. Every error names the file and the key. A map every key of which is plainly
  right is read without the validator's models (the same rules; pydantic is not loaded in the
  table's process: tests/drivers/test_pins_plain.py holds the two readings to the same answers).

    >>> factory = make_pin_factory(simulated=True, name=None)
    >>> pin_map = load_pin_map(DEFAULT_PIN_FILE, "small-gpio")
    >>> pin_map.lamp_pins["seat1.first"]
    17

A lamp is named as vision names a zone: `seat<n>.<name>`, `<name>` being what the map calls the
lamp in front of seat n (`first`, `home`, ...). The map knows no game: which lamps a game lights
is the game's (its adapter's `lamp_names`), checked against the map when the table starts.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from gpiozero.pins.mock import MockFactory, MockPWMPin

from hardware import shipped

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


#: The level changes a simulated pin keeps, the latest (gpiozero's mock pins keep every one).
PIN_HISTORY = 500


class SimulatedPin(MockPWMPin):  # type: ignore[misc]
    """gpiozero's PWM-capable mock pin that keeps only its last PIN_HISTORY level changes.

    gpiozero's mock pins append every change to `states` for ever; a simulated table's 74HC595
    chain toggles its clock and data lines dozens of times for each lamp update, so a day of play
    would hold millions (a real Pi's pins keep none). `states` is a deque of the latest changes,
    oldest first, each with the time since the change before it, as gpiozero keeps them."""

    def clear_states(self) -> None:
        super().clear_states()
        self.states: deque[Any] = deque(self.states, maxlen=PIN_HISTORY)


def make_pin_factory(simulated: bool, name: str | None = None) -> Any:
    """Return the gpiozero pin factory to pass as `pin_factory=` to every device.

    Simulated mode ignores `name` and GPIOZERO_PIN_FACTORY: mock pins, with PWM support, each
    keeping its last PIN_HISTORY level changes (`SimulatedPin`).
    On a real table the factory comes from `name` (config), else GPIOZERO_PIN_FACTORY, else
    lgpio (the only one that works on a Pi 5, and it works on older Pis too).
    """
    if simulated:
        return MockFactory(pin_class=SimulatedPin)
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
    """The map, read without pydantic when every key in it is plainly right (`_plain_fields`);
    else the one validator of operators' documents reads it and refuses it in its words (so every
    refusal of a single key is its own; the table's process never loads pydantic for a right map)."""
    if not isinstance(table, dict):
        raise PinError(f"{source}: [{name}] must be a table")
    fields = _plain_fields(table)
    if fields is None:
        fields = _checked_fields(source, name, table)
    return _assemble(name, source, **fields)


class _Refused(ValueError):
    """A key's value refused: `why` follows the key (it starts with ": ", " = " or ".key")."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _whole(value: Any, where: str) -> int:
    # TOML booleans are not numbers here, though Python's bool is an int.
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Refused(f"{where} = {value!r} must be a whole number")
    return value


def _gpio(value: Any) -> int:
    pin = _whole(value, "")
    if pin not in HEADER_GPIO:
        raise _Refused(f" = {pin} is not a BCM GPIO pin on the header (0-27)")
    return pin


def _lamps(value: Any) -> str:
    if value not in LAMP_KINDS:
        raise _Refused(f' = {value!r}: use "gpio" or "shift-register"')
    return str(value)


def _buttons(value: Any) -> dict[str, int]:
    if not isinstance(value, dict) or "confirm" not in value:
        raise _Refused(" must be a table with at least confirm = <pin>")
    for key in value:
        if key not in BUTTON_NAMES:
            raise _Refused(f": unknown button {key!r} (known: confirm, void)")
    out = {}
    for key, pin in value.items():
        try:
            out[str(key)] = _gpio(pin)
        except _Refused as exc:
            raise _Refused(f".{key}{exc.why}") from None
    return out


def _seats(value: Any) -> dict[int, dict[str, int]]:
    if not isinstance(value, dict) or not value:
        raise _Refused(" must list at least one seat")
    seats: dict[int, dict[str, int]] = {}
    for seat_key, named in value.items():
        where = f".{seat_key}"
        if not seat_key.isdigit() or int(seat_key) not in SEATS:
            raise _Refused(f"{where}: seats are numbered 1 to {SEATS[-1]}")
        if not isinstance(named, dict) or not named:
            raise _Refused(f"{where} must name the seat's lamps: {{ first = , second = , ... }}")
        lamps: dict[str, int] = {}
        for key, number in named.items():
            if not LAMP_NAME.fullmatch(key):
                raise _Refused(f"{where}: {key!r} is not a lamp's name (a-z, 0-9, - and _, a letter first)")
            lamps[key] = _whole(number, f"{where}.{key}")
        seats[int(seat_key)] = lamps
    return dict(sorted(seats.items()))


def _chips(value: Any) -> int:
    chips = _whole(value, "")
    if not 1 <= chips <= 8:
        raise _Refused(f" = {chips}: a chain has 1 to 8 chips")
    return chips


def _description(value: Any) -> str | None:
    if value is None or type(value) is str:
        return value
    raise _Refused("")  # not plainly text: the validator reads it (and says why)


#: A chain's keys and their rules, all required (the validator's `_ChainDoc`).
CHAIN_KEYS: dict[str, Any] = {"data": _gpio, "clock": _gpio, "latch": _gpio, "chips": _chips}
#: A pin map's keys: their rules, and whether each may be left out (the validator's `_PinMapDoc`).
MAP_KEYS: dict[str, tuple[Any, bool]] = {
    "description": (_description, True),
    "lamps": (_lamps, False),
    "status": (_gpio, False),
    "buttons": (_buttons, False),
    "chain": (None, True),
    "seats": (_seats, False),
}


def _plain_fields(table: dict[str, Any]) -> dict[str, Any] | None:
    """The map's keys as the validator would give them when every key is plainly right (no key
    unknown or left out, each taken by its rule); None to let the validator read it."""
    if any(key not in MAP_KEYS for key in table):
        return None
    out: dict[str, Any] = {}
    try:
        for key, (read, optional) in MAP_KEYS.items():
            if key not in table:
                if not optional:
                    return None
                out[key] = None
            elif key == "chain":
                out[key] = _plain_chain(table[key])
            else:
                out[key] = read(table[key])
    except Exception:  # whatever a rule says, the validator says it in its words
        return None
    return out


def _plain_chain(value: Any) -> ChainPins | None:
    if value is None:
        return None
    if type(value) is not dict or set(value) != set(CHAIN_KEYS):
        raise _Refused("")
    return ChainPins(**{key: read(value[key]) for key, read in CHAIN_KEYS.items()})


def _checked_fields(source: str, name: str, table: dict[str, Any]) -> dict[str, Any]:
    """The map's keys read by the one validator of operators' documents (pydantic: loaded here
    only, for a map not plainly right), or PinError naming the file and the key."""
    doc = check(_models()[0], table, source, PinError, _models()[1](name))
    chain = doc.chain
    return {
        "description": doc.description,
        "lamps": doc.lamps,
        "status": doc.status,
        "buttons": dict(doc.buttons),
        "chain": None if chain is None else ChainPins(chain.data, chain.clock, chain.latch, chain.chips),
        "seats": {seat: dict(lamps) for seat, lamps in doc.seats.items()},
    }


def _assemble(
    name: str,
    source: str,
    *,
    description: str | None,
    lamps: str,
    status: int,
    buttons: dict[str, int],
    chain: ChainPins | None,
    seats: dict[int, dict[str, int]],
) -> PinMap:
    """The map from its keys, with the rules across keys: a GPIO pin or a chain output used once,
    lamps numbered by the lamp kind; or PinError naming the file, the map and the key."""
    del description  # the operator's note, not wiring
    gpio_users: dict[int, str] = {}

    def refused(why: str) -> PinError:
        return PinError(f"{source}: [{name}]{why}")

    def take(key: str, pin: int) -> int:
        if pin in gpio_users:
            raise refused(f".{key}: GPIO {pin} is already used by {gpio_users[pin]}")
        gpio_users[pin] = f"{name}.{key}"
        return pin

    status = take("status", status)
    buttons = {key: take(f"buttons.{key}", pin) for key, pin in buttons.items()}
    if lamps == "shift-register":
        if chain is None:
            raise refused(': lamps = "shift-register" needs chain = {data, clock, latch, chips}')
        chain = ChainPins(
            data=take("chain.data", chain.data),
            clock=take("chain.clock", chain.clock),
            latch=take("chain.latch", chain.latch),
            chips=chain.chips,
        )
    elif chain is not None:
        raise refused('.chain is only for lamps = "shift-register"')
    outputs_used: dict[int, str] = {}
    for seat, numbers in seats.items():
        for lamp, number in numbers.items():
            key = f"seats.{seat}.{lamp}"
            if chain is None:
                if number not in HEADER_GPIO:
                    raise refused(f".{key} = {number} is not a BCM GPIO pin on the header (0-27)")
                take(key, number)
                continue
            if not 0 <= number < chain.outputs:
                last = chain.outputs - 1
                raise refused(f".{key} = {number}: the chain of {chain.chips} chips has outputs 0 to {last}")
            if number in outputs_used:
                raise refused(f".{key}: chain output {number} is already used by {outputs_used[number]}")
            outputs_used[number] = f"{name}.{key}"
    lamps_kind: Literal["gpio", "shift-register"] = "gpio" if lamps == "gpio" else "shift-register"
    return PinMap(name=name, source=source, lamps=lamps_kind, seats=seats, status=status, buttons=buttons, chain=chain)


@functools.cache
def _models() -> tuple[Any, Any]:
    """The validator's models of a pin map and its style of naming a key, made on first use (they
    import pydantic, which a table whose map is plainly right never loads)."""
    from vision.documents import Document, Style, problem, rule

    def ruled(read: Any) -> Any:
        def check(value: Any) -> Any:
            try:
                return read(value)
            except _Refused as exc:
                raise problem(exc.why) from None

        return rule(check)

    class _ChainDoc(Document):
        data: Annotated[int, ruled(_gpio)]
        clock: Annotated[int, ruled(_gpio)]
        latch: Annotated[int, ruled(_gpio)]
        chips: Annotated[int, ruled(_chips)]

    class _PinMapDoc(Document):
        """One named pin map as hardware/pins.toml writes it (BCM numbers; chain outputs for a 74HC595)."""

        description: str | None = None
        lamps: Annotated[str, ruled(_lamps)]
        status: Annotated[int, ruled(_gpio)]
        buttons: Annotated[dict[str, int], ruled(_buttons)]
        chain: _ChainDoc | None = None
        seats: Annotated[dict[int, dict[str, int]], ruled(_seats)]

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

    return _PinMapDoc, _PinStyle


def check(model: Any, doc: Any, source: str, error: type[Exception], style: Any) -> Any:
    """vision/documents.py's `check`, imported when first used."""
    from vision.documents import check as checked

    return checked(model, doc, source, error, style)
