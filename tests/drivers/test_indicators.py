"""Base lamps on mock pins: what the dealer sees, in order, on GPIO LEDs and on a 74HC595 chain.

Expected sequences come from the patterns documented in hardware/wiring.md (slow blink: 0.4 s
dark / 0.4 s lit; scored: five 0.1 s flashes then steady; out: two 0.9 s pulses then dark;
fault: 0.1 s lit / 0.1 s dark) and from the 74HC595 datasheet (SER sampled on the rising edge of
SRCLK into Q0, Q7 passed down the chain; outputs follow the shift register on the rising edge of
RCLK). The chain is decoded by a model of the chip written here, not by the driver.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import PWMLED
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.indicators import STATUS, BaseIndicators, LampSnapshot
from drivers.pins import PinError, load_pin_map, make_pin_factory


class LogicAnalyserPin(MockPWMPin):  # type: ignore[misc]
    """A mock pin that also logs each level change, in order, on its factory's shared wire."""

    def _change_state(self, value: Any) -> bool:
        changed = bool(super()._change_state(value))
        if changed:
            self._factory.wire.append((self._number, bool(value)))
        return changed


class AnalyserFactory(MockFactory):  # type: ignore[misc]
    """Mock pins whose changes, across all pins, land on one ordered list of (BCM pin, level):
    the order the three chain lines changed in, which is what a 74HC595 responds to."""

    def __init__(self) -> None:
        self.wire: list[tuple[int, bool]] = []
        super().__init__(pin_class=LogicAnalyserPin)


@pytest.fixture
def analyser() -> Iterator[AnalyserFactory]:
    factory = AnalyserFactory()
    yield factory
    factory.reset()
    factory.close()


SMALL = load_pin_map(name="small-gpio")
SEVEN = load_pin_map(name="seven-seat-595")


def levels(factory: Any, pin: int) -> list[int]:
    """The level history of one mock pin, oldest first (1 lit, 0 dark)."""
    return [int(state.state) for state in factory.pin(pin).states]


def run_until(lamps: BaseIndicators, clock: Any, until: float) -> None:
    """What the blinker thread does, without sleeping: render at every change up to `until`."""
    while (deadline := lamps.tick()) is not None and deadline <= until:
        clock.now = deadline
    clock.now = until
    lamps.tick()


def gpio_lamps(pin_factory: Any, clock: Any) -> BaseIndicators:
    return BaseIndicators.from_pin_map(SMALL, pin_factory=pin_factory, clock=clock, run_blinker=False)


# -- GPIO LEDs ---------------------------------------------------------------------------------


def test_status_lamp_is_steady_once_the_table_is_up_and_bases_start_dark(
    pin_factory: Any, clock: Any
) -> None:
    with gpio_lamps(pin_factory, clock):
        assert levels(pin_factory, SMALL.status) == [0, 1]
        for bases in SMALL.seats.values():
            for pin in bases.values():
                assert levels(pin_factory, pin) == [0]


def test_a_wager_lights_its_own_base_steady_and_no_other(pin_factory: Any, clock: Any) -> None:
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.show_wager("seat2.second")
        run_until(lamps, clock, clock.now + 5)
        assert levels(pin_factory, SMALL.seats[2]["second"]) == [0, 1]
        others = [
            pin
            for seat, bases in SMALL.seats.items()
            for base, pin in bases.items()
            if (seat, base) != (2, "second")
        ]
        assert all(levels(pin_factory, pin) == [0] for pin in others)


def test_next_card_blinks_slowly_until_the_card_comes(pin_factory: Any, clock: Any) -> None:
    pin = SMALL.seats[1]["first"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.show_wager("seat1.first")
        start = clock.now
        lamps.next_card("seat1.first")
        run_until(lamps, clock, start + 1.7)
        # steady, then dark at once, lit at 0.4, dark at 0.8, lit at 1.2, dark at 1.6
        assert levels(pin_factory, pin) == [0, 1, 0, 1, 0, 1, 0]
        lamps.show_wager("seat1.first")  # the card came and the stack stayed: steady again
        run_until(lamps, clock, clock.now + 3)
        assert levels(pin_factory, pin)[-2:] == [0, 1]
        assert lamps.snapshot().next_card is None


def test_next_card_moving_on_settles_the_previous_base_back_to_steady(
    pin_factory: Any, clock: Any
) -> None:
    first, second = SMALL.seats[1]["first"], SMALL.seats[2]["first"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.show_wager("seat1.first")
        lamps.show_wager("seat2.first")
        lamps.next_card("seat1.first")
        run_until(lamps, clock, clock.now + 0.5)
        lamps.next_card("seat2.first")
        run_until(lamps, clock, clock.now + 3)
        assert levels(pin_factory, first)[-1] == 1
        assert lamps.pattern_name("seat1.first") == "steady"
        assert lamps.pattern_name("seat2.first") == "next card"
        assert levels(pin_factory, second)[:3] == [0, 1, 0]


def test_scored_flashes_home_plate_five_times_then_holds_steady_until_paid(
    pin_factory: Any, clock: Any
) -> None:
    home = SMALL.seats[3]["home"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.scored("seat3.home")
        run_until(lamps, clock, clock.now + 5)
        assert levels(pin_factory, home) == [0, 1, 0, 1, 0, 1, 0, 1, 0, 1]
        assert lamps.tick() is None  # nothing left to change: steady
        lamps.remove_wager("seat3.home")  # paid
        assert levels(pin_factory, home)[-1] == 0


def test_out_pulses_twice_then_the_base_goes_dark(pin_factory: Any, clock: Any) -> None:
    third = SMALL.seats[3]["third"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.show_wager("seat3.third")
        lamps.out("seat3.third")
        run_until(lamps, clock, clock.now + 5)
        assert levels(pin_factory, third) == [0, 1, 0, 1, 0, 1, 0]
        assert "seat3.third" not in lamps.snapshot().wagers


def test_fault_blinks_the_status_lamp_four_times_faster_than_next_card(
    pin_factory: Any, clock: Any
) -> None:
    base = SMALL.seats[1]["first"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.next_card("seat1.first")
        lamps.fault()
        run_until(lamps, clock, clock.now + 1.99)
        status_changes = len(levels(pin_factory, SMALL.status)) - 2  # minus start and ready
        base_changes = len(levels(pin_factory, base)) - 1
        assert (status_changes, base_changes) == (19, 4)
        lamps.clear_fault()
        run_until(lamps, clock, clock.now + 1)
        assert levels(pin_factory, SMALL.status)[-1] == 1
        assert lamps.pattern_name(STATUS) == "steady"


def test_fault_leaves_the_wager_lamps_as_they_were(pin_factory: Any, clock: Any) -> None:
    base = SMALL.seats[2]["third"]
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.show_wager("seat2.third")
        lamps.fault()
        run_until(lamps, clock, clock.now + 3)
        assert levels(pin_factory, base) == [0, 1]


def test_clear_darkens_every_base_and_keeps_the_status_lamp(pin_factory: Any, clock: Any) -> None:
    with gpio_lamps(pin_factory, clock) as lamps:
        for seat in SMALL.seats:
            lamps.show_wager(f"seat{seat}.first")
        lamps.next_card("seat2.first")
        lamps.clear()
        run_until(lamps, clock, clock.now + 3)
        for seat, bases in SMALL.seats.items():
            assert levels(pin_factory, bases["first"])[-1] == 0, seat
        assert levels(pin_factory, SMALL.status) == [0, 1]
        assert lamps.snapshot() == LampSnapshot()


def test_set_from_state_redrives_every_lamp_after_a_restart(pin_factory: Any, clock: Any) -> None:
    snapshot = LampSnapshot(
        wagers=frozenset({"seat1.first", "seat1.second", "seat3.home"}),
        next_card="seat1.second",
        fault=True,
    )
    with gpio_lamps(pin_factory, clock) as lamps:
        lamps.set_from_state(snapshot)
        assert levels(pin_factory, SMALL.seats[1]["first"]) == [0, 1]
        assert levels(pin_factory, SMALL.seats[3]["home"]) == [0, 1]
        assert levels(pin_factory, SMALL.seats[2]["first"]) == [0]
        run_until(lamps, clock, clock.now + 0.45)
        assert levels(pin_factory, SMALL.seats[1]["second"]) == [0, 1]  # blinking, lit at 0.4
        assert levels(pin_factory, SMALL.status) == [0, 1, 0, 1, 0, 1]  # fast blink
        assert lamps.snapshot() == snapshot


def test_close_turns_every_lamp_off(pin_factory: Any, clock: Any) -> None:
    lamps = gpio_lamps(pin_factory, clock)
    lamps.show_wager("seat1.home")
    lamps.close()
    assert levels(pin_factory, SMALL.seats[1]["home"])[-1] == 0
    assert levels(pin_factory, SMALL.status)[-1] == 0


def test_a_seat_without_lamps_is_refused_naming_the_tables_seats(
    pin_factory: Any, clock: Any
) -> None:
    with gpio_lamps(pin_factory, clock) as lamps, pytest.raises(ValueError, match="1, 2, 3"):
        lamps.show_wager("seat5.first")


def test_blinker_thread_keeps_blinking_without_anyone_calling_tick(pin_factory: Any) -> None:
    # The real clock and thread, as tablectl runs; only the order of levels is asserted.
    pin = SMALL.seats[1]["third"]
    lamps = BaseIndicators.from_pin_map(SMALL, pin_factory=pin_factory)
    try:
        lamps.next_card("seat1.third")
        pin_obj = pin_factory.pin(pin)
        deadline = time.monotonic() + 60  # a backstop: a blink takes 0.8 s, longer on a loaded machine
        while len(pin_obj.states) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert levels(pin_factory, pin)[:3] == [0, 1, 0]
    finally:
        lamps.close()


def test_the_tables_loop_keeps_blinking_without_a_thread_or_anyone_calling_tick(pin_factory: Any) -> None:
    # As the daemon runs them: the blink kept by the table's asyncio loop's timers (no blinker
    # thread); a scored base's quicker flashes start at once, though a slower blink was set first.
    blink, flash = SMALL.seats[1]["third"], SMALL.seats[2]["first"]
    lamps = BaseIndicators.from_pin_map(SMALL, pin_factory=pin_factory, run_blinker=False)

    async def play() -> None:
        lamps.blink_on(asyncio.get_running_loop())
        lamps.next_card("seat1.third")
        lamps.scored("seat2.first")
        deadline = time.monotonic() + 60  # a backstop: the flashes take 1 s, longer on a loaded machine
        while (len(pin_factory.pin(blink).states) < 3 or len(pin_factory.pin(flash).states) < 10) and (
            time.monotonic() < deadline
        ):
            await asyncio.sleep(0.01)

    try:
        asyncio.run(play())
        assert not [t for t in threading.enumerate() if t.name == "lamp-blinker"]
        assert levels(pin_factory, blink)[:3] == [0, 1, 0]
        assert levels(pin_factory, flash)[:10] == [0, *[1, 0] * 4, 1]  # from dark: five flashes, the last held
    finally:
        lamps.close()


# -- 74HC595 chain -----------------------------------------------------------------------------


class Model595Chain:
    """A chain of 74HC595s as the datasheet describes them, fed from the logic analyser."""

    def __init__(self, chips: int) -> None:
        self.stages = [False] * (8 * chips)
        self.ser = False
        self.clocks_since_latch = 0
        self.latched: list[tuple[bool, ...]] = []
        self.clocks_per_latch: list[int] = []
        self.ser_at_clock: list[bool] = []

    def feed(self, wire: list[tuple[int, bool]], data: int, clock: int, latch: int) -> None:
        for pin, level in wire:
            if pin == data:
                self.ser = level
            elif pin == clock and level:  # rising SRCLK: SER into Q0, everything moves up
                self.stages = [self.ser, *self.stages[:-1]]
                self.ser_at_clock.append(self.ser)
                self.clocks_since_latch += 1
            elif pin == latch and level:  # rising RCLK: outputs take the shift register
                self.latched.append(tuple(self.stages))
                self.clocks_per_latch.append(self.clocks_since_latch)
                self.clocks_since_latch = 0


def decode(analyser: Any) -> Model595Chain:
    chain = SEVEN.chain
    assert chain is not None
    model = Model595Chain(chain.chips)
    model.feed(analyser.wire, chain.data, chain.clock, chain.latch)
    return model


def lit_spots(frame: tuple[bool, ...]) -> set[str]:
    by_output = {out: lamp for lamp, out in SEVEN.lamp_pins.items()}
    return {by_output[i] for i, lit in enumerate(frame) if lit}


def chain_lamps(factory: Any, clock: Any) -> BaseIndicators:
    return BaseIndicators.from_pin_map(SEVEN, pin_factory=factory, clock=clock, run_blinker=False)


def test_chain_latches_an_all_dark_frame_as_soon_as_it_is_opened(
    analyser: AnalyserFactory, clock: Any
) -> None:
    with chain_lamps(analyser, clock):
        model = decode(analyser)
        assert model.latched == [(False,) * 32]
        assert model.clocks_per_latch == [32]


def test_chain_shifts_the_farthest_output_first_and_each_chips_q7_first(
    analyser: AnalyserFactory, clock: Any
) -> None:
    with chain_lamps(analyser, clock) as lamps:
        lamps.show_wager("seat7.home")  # output 27: chip 4, Q3
        model = decode(analyser)
        # 32 bits for outputs 31, 30, ... 0: only the fifth one clocked (output 27) is high
        assert model.ser_at_clock[32:] == [i == 4 for i in range(32)]
        assert lit_spots(model.latched[-1]) == {"seat7.home"}


@pytest.mark.parametrize("pin_class", [MockPWMPin, MockPin])
def test_chain_lines_hold_each_level_as_the_pins_own_state_write_stores_it(pin_class: type, clock: Any) -> None:
    """The chain's lines are written straight, not through gpiozero's `state` property; their
    history (the simulated table's pin panel) still holds each level as that property stores it:
    1.0 and 0.0 on a PWM-capable mock pin (the simulated table's), True and False on a plain one."""
    chain = SEVEN.chain
    assert chain is not None
    reference = MockFactory(pin_class=pin_class).pin(chain.data)
    reference.function = "output"
    reference.state = True
    high = reference.state
    reference.state = False
    low = reference.state
    factory = MockFactory(pin_class=pin_class)
    try:
        with chain_lamps(factory, clock) as lamps:
            lamps.show_wager("seat7.home")
            lamps.show_wager("seat1.first")
            lamps.remove_wager("seat7.home")
            for line in (chain.data, chain.clock, chain.latch):
                written = [state.state for state in factory.pin(line).states[1:]]  # after the device's own first
                assert written, line
                assert {(type(level), level) for level in written} <= {(type(high), high), (type(low), low)}, line
    finally:
        factory.reset()
        factory.close()


def test_chain_frames_follow_the_commands_in_order_with_the_blink_relatched(
    analyser: AnalyserFactory, clock: Any
) -> None:
    with chain_lamps(analyser, clock) as lamps:
        lamps.show_wager("seat7.home")
        lamps.show_wager("seat1.first")
        lamps.next_card("seat1.first")
        run_until(lamps, clock, clock.now + 0.9)
        lamps.out("seat1.first")
        run_until(lamps, clock, clock.now + 3)
        frames = [lit_spots(frame) for frame in decode(analyser).latched]
        home7, first1 = "seat7.home", "seat1.first"
        assert frames == [
            set(),  # opened: all dark
            {home7},
            {home7, first1},
            {home7},  # next card: dark at once
            {home7, first1},  # 0.4 s
            {home7},  # 0.8 s
            # out at 0.9 s, while the blink was dark: 0.3 s dark, 0.9 s lit, twice, then dark
            {home7, first1},
            {home7},
            {home7, first1},
            {home7},
        ]
        assert all(count == 32 for count in decode(analyser).clocks_per_latch)


def test_chain_is_relatched_in_full_on_recovery_even_when_nothing_changed(
    analyser: AnalyserFactory, clock: Any
) -> None:
    with chain_lamps(analyser, clock) as lamps:
        lamps.show_wager("seat4.second")
        before = len(decode(analyser).latched)
        lamps.set_from_state(lamps.snapshot())
        model = decode(analyser)
        assert len(model.latched) == before + 1
        assert lit_spots(model.latched[-1]) == {"seat4.second"}


def test_status_lamp_stays_on_its_own_gpio_pin_beside_the_chain(
    analyser: AnalyserFactory, clock: Any
) -> None:
    with chain_lamps(analyser, clock) as lamps:
        lamps.fault()
        run_until(lamps, clock, clock.now + 0.45)
        assert levels(analyser, SEVEN.status) == [0, 1, 0, 1, 0, 1]
        assert all(not any(frame) for frame in decode(analyser).latched)


commands = st.lists(
    st.tuples(
        st.sampled_from(["show_wager", "remove_wager", "next_card", "out", "scored", "fault"]),
        st.integers(1, 3),
        st.sampled_from(["first", "second", "third", "home"]),
        st.integers(0, 1500),
    ),
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(commands)
def test_gpio_leds_and_the_chain_show_the_same_lamps_for_any_command_script(
    script: list[tuple[str, int, str, int]]
) -> None:
    # One clock drives both backends; after every command and wait they must agree.
    gpio_factory, chain_factory = MockFactory(pin_class=MockPWMPin), AnalyserFactory()
    now = [0.0]

    def clock() -> float:
        return now[0]

    gpio = BaseIndicators.from_pin_map(SMALL, pin_factory=gpio_factory, clock=clock, run_blinker=False)
    chain = BaseIndicators.from_pin_map(SEVEN, pin_factory=chain_factory, clock=clock, run_blinker=False)
    try:
        for name, seat, base, wait_ms in script:
            for lamps in (gpio, chain):
                if name == "scored":
                    lamps.scored(f"seat{seat}.home")
                elif name == "fault":
                    lamps.fault()
                else:
                    getattr(lamps, name)(f"seat{seat}.{base}")
            now[0] += wait_ms / 1000
            gpio.tick()
            chain.tick()
            lit_on_gpio = {lamp for lamp, pin in SMALL.lamp_pins.items() if gpio_factory.pin(pin).state}
            assert lit_on_gpio == lit_spots(decode(chain_factory).latched[-1])
            assert gpio_factory.pin(SMALL.status).state == chain_factory.pin(SEVEN.status).state
    finally:
        gpio.close()
        chain.close()
        gpio_factory.close()
        chain_factory.close()


# -- pin maps and pin factories ----------------------------------------------------------------


def test_default_pin_maps_cover_a_three_seat_gpio_table_and_a_seven_seat_chain() -> None:
    assert sorted(SMALL.seats) == [1, 2, 3]
    assert sorted(SEVEN.seats) == [1, 2, 3, 4, 5, 6, 7]
    assert SEVEN.chain is not None and SEVEN.chain.outputs == 32
    assert SMALL.buttons["confirm"] == 5 and SEVEN.buttons["confirm"] == 5


GOOD_GPIO = """
[t]
lamps = "gpio"
status = 4
buttons = { confirm = 5 }
[t.seats]
1 = { first = 17, second = 27, third = 22, home = 23 }
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("first = 17", "first = 40"), r"\[t\]\.seats\.1\.first = 40 is not a BCM GPIO pin"),
        (("home = 23", "home = 4"), r"\[t\]\.seats\.1\.home: GPIO 4 is already used by t\.status"),
        (("1 = { first = 17, second = 27, third = 22, home = 23 }", "1 = {}"), r"\[t\]\.seats\.1 must name the seat's lamps"),
        (("1 = {", "9 = {"), r"\[t\]\.seats\.9: seats are numbered 1 to 8"),
        (("confirm = 5", "confirm = 5, pause = 6"), r"unknown button 'pause'"),
        (("lamps = \"gpio\"", "lamps = \"leds\""), r"\[t\]\.lamps = 'leds'"),
        (("status = 4", "status = \"4\""), r"\[t\]\.status = '4' must be a whole number"),
        (("first = 17", "first = 17, Fourth = 13"), r"'Fourth' is not a lamp's name"),
    ],
)
def test_pin_map_errors_name_the_file_and_the_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(GOOD_GPIO.replace(*change))
    with pytest.raises(PinError, match=message) as error:
        load_pin_map(path, "t")
    assert str(error.value).startswith(str(path))


def test_chain_outputs_must_exist_on_the_chain_and_be_used_once(tmp_path: Path) -> None:
    text = """
[c]
lamps = "shift-register"
status = 4
buttons = { confirm = 5 }
chain = { data = 17, clock = 27, latch = 22, chips = 1 }
[c.seats]
1 = { first = 0, second = 1, third = 2, home = 3 }
2 = { first = 4, second = 5, third = 6, home = 8 }
"""
    path = tmp_path / "pins.toml"
    path.write_text(text)
    with pytest.raises(PinError, match=r"seats\.2\.home = 8: the chain of 1 chips has outputs 0 to 7"):
        load_pin_map(path, "c")
    path.write_text(text.replace("home = 8", "home = 3"))
    with pytest.raises(PinError, match=r"seats\.2\.home: chain output 3 is already used by c\.seats\.1\.home"):
        load_pin_map(path, "c")


def test_unknown_pin_map_name_lists_the_maps_in_the_file() -> None:
    with pytest.raises(PinError, match=r"no pin map \[nine-seat\] \(maps in this file: eight-seat-595, seven-seat-595, small-gpio\)"):
        load_pin_map(name="nine-seat")


def test_simulated_mode_gets_mock_pins_that_can_do_pwm_whatever_the_environment(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    factory = make_pin_factory(simulated=True)
    try:
        led = PWMLED(18, pin_factory=factory)
        led.value = 0.25
        assert factory.pin(18).state == 0.25
        led.close()
    finally:
        factory.reset()
        factory.close()


def test_real_mode_refuses_mock_pins_and_unknown_factories() -> None:
    with pytest.raises(PinError, match="--sim"):
        make_pin_factory(simulated=False, name="mock")
    with pytest.raises(PinError, match="unknown gpiozero pin factory 'gpiod'"):
        make_pin_factory(simulated=False, name="gpiod")


def test_missing_lgpio_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero.pins.lgpio", None)
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    with pytest.raises(PinError, match="python3-lgpio"):
        make_pin_factory(simulated=False, name=None)


# -- the blinker's frames ------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Frames:
    """A sink that keeps every frame written to it."""

    def __init__(self, lamps: frozenset[str]) -> None:
        self.lamps = lamps
        self.frames: list[dict[str, bool]] = []

    def write(self, frame: dict[str, bool], *, force: bool = False) -> None:
        self.frames.append({lamp: bool(frame.get(lamp, False)) for lamp in self.lamps})

    def close(self) -> None:
        pass


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.sampled_from(["dark", "steady", "next", "scored", "out", "fault"]),
            st.integers(0, 1500),
        ),
        max_size=25,
    )
)
def test_every_frame_shows_each_lamp_as_its_pattern_says_whatever_it_played_before(
    script: list[tuple[int, str, int]],
) -> None:
    """Each frame, and when the next change is due, is what each lamp's own pattern says at that
    moment, for lamps dark or steady (one level, never a change) and blinking alike, as lamps go
    from one pattern to another in any order (the blinker asks only the blinking ones)."""
    from drivers.indicators.blinker import Blinker
    from drivers.indicators.patterns import DARK, FAULT, NEXT_CARD, OUT, SCORED, STEADY

    patterns = {"dark": DARK, "steady": STEADY, "next": NEXT_CARD, "scored": SCORED, "out": OUT, "fault": FAULT}
    lamps = [f"seat{n}.first" for n in range(4)]
    clock = _Clock()
    sink = _Frames(frozenset(lamps))
    blinker = Blinker(lamps, [sink], clock=clock)
    playing = {lamp: (DARK, 0) for lamp in lamps}
    for lamp, name, wait_ms in script:
        clock.now += wait_ms / 1000
        now = round(clock.now * 1000)
        blinker.play(lamps[lamp], patterns[name])
        playing[lamps[lamp]] = (patterns[name], now)
        due = blinker.tick()
        assert sink.frames[-1] == {lamp: pattern.lit_at(now - started) for lamp, (pattern, started) in playing.items()}
        changes = [s + d for p, s in playing.values() if (d := p.next_change(now - s)) is not None]
        assert due == (min(changes) / 1000 if changes else None)


def test_the_blinking_lamp_the_fault_and_each_wager_are_read_as_the_snapshot_says(
    pin_factory: Any, clock: Any
) -> None:
    """`blinking`, `faulted` and `has_wager` (read on every card, without copying the wagers)
    say what `snapshot()` says, through every kind of command."""
    with chain_lamps(pin_factory, clock) as lamps:
        script = [
            lambda: lamps.show_wager("seat1.first"),
            lambda: lamps.show_wager("seat3.second"),
            lambda: lamps.next_card("seat1.first"),
            lambda: lamps.scored("seat3.home"),
            lambda: lamps.next_card("seat5.third"),
            lambda: lamps.fault(),
            lambda: lamps.out("seat3.second"),
            lambda: lamps.remove_wager("seat1.first"),
            lambda: lamps.clear_fault(),
            lambda: lamps.set_from_state(LampSnapshot(frozenset({"seat2.first"}), "seat2.first", True)),
            lambda: lamps.clear(),
        ]
        seen = set()
        for command in script:
            command()
            snap = lamps.snapshot()
            wagers = frozenset(lamp for lamp in lamps.lamps if lamps.has_wager(lamp))
            assert (lamps.blinking, lamps.faulted, wagers) == (snap.next_card, snap.fault, snap.wagers)
            seen.add((snap.next_card is not None, snap.fault, bool(snap.wagers)))
        assert len(seen) >= 4  # blinking or not, a fault or not, wagers or none: each was read


def test_no_frame_of_the_blinkers_own_can_be_rendered_inside_together(pin_factory: Any, clock: Any) -> None:
    """Inside `together()` the blinker's lock is held, so its thread (or the loop's timer) cannot
    render a frame with some of the commands given and not the others; outside, it can."""
    with chain_lamps(pin_factory, clock) as lamps:
        blinker = lamps._blinker

        def could_render() -> bool:
            got: list[bool] = []

            def attempt() -> None:
                taken = blinker._lock.acquire(blocking=False)  # what tick() takes first
                if taken:
                    blinker._lock.release()
                got.append(taken)

            thread = threading.Thread(target=attempt)
            thread.start()
            thread.join()
            return got[0]

        assert could_render()
        with lamps.together():
            lamps.show_wager("seat1.first")
            assert not could_render()
        assert could_render()
