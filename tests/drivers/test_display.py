"""Payout pole display: golden bytes for both command sets, on a real pty and in the simulator.

The golden bytes are written out by hand from the command references (CD5220: ESC @ = 1B 40,
CLR = 0C, ESC _ 0 = 1B 5F 00, ESC Q A ... CR = 1B 51 41 ... 0D, ESC Q B ... CR = 1B 51 42 ... 0D;
Epson DM-D: ESC @ = 1B 40, ESC t 0 = 1B 74 00 (PC437), US MD1 = 1F 01, US C 0 = 1F 43 00,
US $ n m = 1F 24 n m) and the screen layout in hardware/wiring.md, not copied from the code.
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.display import Dialect, DisplayError, PoleDisplay, SimulatedDisplay, open_display
from drivers.display.commands import encode_frame
from drivers.display.messages import fault_pages, result_frame
from drivers.display.text import CodePage

SP = b" "
PAY_SEAT_3 = b"PAY SEAT 3" + SP * 10
FORTY = SP * 18 + b"40"

CD5220_INIT = bytes.fromhex("1B40 0C 1B5F00")
CD5220_PAY_3_40 = bytes.fromhex("1B5141") + PAY_SEAT_3 + bytes.fromhex("0D 1B5142") + FORTY + b"\r"
DMD_INIT_CP437 = bytes.fromhex("1B40 1B7400 1F01 1F4300")
DMD_INIT_ASCII = bytes.fromhex("1B40 1F01 1F4300")
DMD_PAY_3_40 = bytes.fromhex("1F240101") + PAY_SEAT_3 + bytes.fromhex("1F240102") + FORTY


# -- golden bytes ------------------------------------------------------------------------------


def test_cd5220_payout_frame_is_the_golden_bytes() -> None:
    display = SimulatedDisplay(dialect=Dialect.CD5220)
    display.show_payout(3, 40)
    assert bytes(display.wire.written) == CD5220_INIT + CD5220_PAY_3_40


def test_epson_dmd_payout_frame_is_the_golden_bytes() -> None:
    display = SimulatedDisplay(dialect=Dialect.EPSON_DMD)
    display.show_payout(3, 40)
    assert bytes(display.wire.written) == DMD_INIT_CP437 + DMD_PAY_3_40


def test_epson_dmd_on_an_ascii_display_selects_no_code_table() -> None:
    display = SimulatedDisplay(dialect=Dialect.EPSON_DMD, code_page="ascii")
    assert bytes(display.wire.written) == DMD_INIT_ASCII


@pytest.fixture
def pty() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    path = os.ttyname(slave)
    yield master, path
    os.close(slave)
    with contextlib.suppress(OSError):  # a test closed it already
        os.close(master)


def read_exactly(fd: int, count: int) -> bytes:
    data = b""
    while len(data) < count:
        ready, _, _ = select.select([fd], [], [], 5.0)
        if not ready:
            break  # the assertion below shows what did arrive
        data += os.read(fd, count - len(data))
    return data


@pytest.mark.parametrize(
    ("dialect", "golden"),
    [
        (Dialect.CD5220, CD5220_INIT + CD5220_PAY_3_40),
        (Dialect.EPSON_DMD, DMD_INIT_CP437 + DMD_PAY_3_40),
    ],
)
def test_bytes_on_a_real_serial_line_are_the_golden_bytes(
    pty: tuple[int, str], dialect: Dialect, golden: bytes
) -> None:
    master, path = pty
    with PoleDisplay.open(path, dialect=dialect) as display:
        display.show_payout(3, 40)
        assert read_exactly(master, len(golden)) == golden


def test_a_display_that_went_away_is_reported_with_its_port(pty: tuple[int, str]) -> None:
    master, path = pty
    display = PoleDisplay.open(path, dialect=Dialect.CD5220)
    os.close(master)
    with pytest.raises(DisplayError, match=f"payout display at {path}: writing failed"):
        display.show_payout(1, 5)
    display.close()


def test_a_port_that_does_not_exist_is_reported_with_the_url() -> None:
    with pytest.raises(DisplayError, match="/dev/does-not-exist: cannot open the port"):
        PoleDisplay.open("/dev/does-not-exist", dialect=Dialect.CD5220)


# -- text --------------------------------------------------------------------------------------


def test_long_lines_are_cut_to_twenty_columns_and_short_ones_padded() -> None:
    raw = encode_frame(Dialect.CD5220, "SEAT 3 GRAND SLAM WINNER", "", "ascii")
    assert raw == bytes.fromhex("1B5141") + b"SEAT 3 GRAND SLAM WI\r" + bytes.fromhex(
        "1B5142"
    ) + SP * 20 + b"\r"


def test_accents_show_on_cp437_and_drop_to_the_plain_letter_on_ascii() -> None:
    # CP437 has e-acute at 0x82; an ASCII display shows the plain e.
    assert encode_frame(Dialect.EPSON_DMD, "Café", "", "cp437")[4:8] == b"Caf\x82"
    assert encode_frame(Dialect.EPSON_DMD, "Café", "", "ascii")[4:8] == b"Cafe"


def test_characters_a_display_cannot_show_become_question_marks() -> None:
    # The smiley is in CP437, but at 0x01: a control byte on the wire, so it is not sent.
    raw = encode_frame(Dialect.EPSON_DMD, "A\u263aB\u20acC", "", "cp437")
    assert raw[4:9] == b"A?B?C"


@given(st.text(max_size=60), st.text(max_size=60), st.sampled_from(["ascii", "cp437"]))
def test_no_text_can_inject_a_command(upper: str, lower: str, code_page: CodePage) -> None:
    cd = encode_frame(Dialect.CD5220, upper, lower, code_page)
    assert len(cd) == 48 and cd[:3] == b"\x1bQA" and cd[23:27] == b"\r\x1bQB" and cd[47:] == b"\r"
    assert all(byte >= 0x20 and byte != 0x7F for byte in cd[3:23] + cd[27:47])
    dmd = encode_frame(Dialect.EPSON_DMD, upper, lower, code_page)
    assert len(dmd) == 48 and dmd[:4] == b"\x1f$\x01\x01" and dmd[24:28] == b"\x1f$\x01\x02"
    assert all(byte >= 0x20 and byte != 0x7F for byte in dmd[4:24] + dmd[28:48])


# -- messages ----------------------------------------------------------------------------------


def test_results_say_who_won_or_lost_and_how_much() -> None:
    assert result_frame(3, 25) == result_frame(3, 25, "")
    assert result_frame(3, 25).upper == "SEAT 3 WINS"
    assert result_frame(3, 25).lower == " " * 18 + "25"
    assert result_frame(4, -20).upper == "SEAT 4 LOSES"
    assert result_frame(5, 40, "GRAND SLAM").lower == "GRAND SLAM" + " " * 8 + "40"
    assert result_frame(6, 0).upper == "SEAT 6 PUSH"


@pytest.mark.parametrize("amount", [-5, 2.5, True, "40"])
def test_a_payout_that_is_not_whole_chips_is_refused(amount: Any) -> None:
    with pytest.raises(ValueError, match="amount must be a whole number"):
        SimulatedDisplay().show_payout(3, amount)


def test_a_long_fault_is_shown_in_plain_words_page_by_page() -> None:
    display = SimulatedDisplay(dialect=Dialect.CD5220)
    display.show_fault("The shoe stopped answering while dealing to seat 3. Call a supervisor.")
    assert display.pages == 2
    seen = [(display.current.upper.rstrip(), display.current.lower.rstrip())]  # type: ignore[union-attr]
    assert display.next_page()
    seen.append((display.current.upper.rstrip(), display.current.lower.rstrip()))  # type: ignore[union-attr]
    assert display.next_page()  # and round again
    assert seen == [
        ("The shoe stopped", "answering while"),
        ("dealing to seat 3.", "Call a supervisor."),
    ]
    assert display.current.upper.rstrip() == "The shoe stopped"  # type: ignore[union-attr]


def test_a_short_fault_fits_one_page_and_does_not_page() -> None:
    display = SimulatedDisplay()
    display.show_fault("Shoe unplugged")
    assert display.next_page() is False
    assert fault_pages("Shoe unplugged")[0].upper == "Shoe unplugged"


# -- simulated display -------------------------------------------------------------------------


def test_simulated_display_keeps_the_last_frames_with_text_and_bytes() -> None:
    display = SimulatedDisplay(dialect=Dialect.EPSON_DMD, keep=3)
    for seat in range(1, 6):
        display.show_payout(seat, 10 * seat)
    frames = display.frames
    assert [frame.upper.rstrip() for frame in frames] == ["PAY SEAT 3", "PAY SEAT 4", "PAY SEAT 5"]
    assert frames[-1].lower == " " * 18 + "50"
    assert frames[0].raw == DMD_PAY_3_40.replace(FORTY, SP * 18 + b"30")


def test_simulated_display_says_simulated_when_idle_and_in_every_snapshot() -> None:
    display = SimulatedDisplay()
    display.show_idle("GRAND SLAM", 5, 500)
    assert display.current is not None
    assert display.current.lower.strip() == "SIMULATED"
    display.show_payout(2, 15)
    snapshot = display.snapshot()
    assert snapshot["label"] == "SIMULATED" and snapshot["simulated"] is True
    assert snapshot["upper"].rstrip() == "PAY SEAT 2"


def test_a_real_display_shows_the_table_and_its_wager_limits_when_idle() -> None:
    with PoleDisplay.open("loop://", dialect=Dialect.CD5220) as display:
        display.show_idle("GRAND SLAM", 5, 500)
        assert display.current is not None
        assert (display.current.upper, display.current.lower) == (
            "     GRAND SLAM     ",
            "   BETS 5 TO 500    ",
        )


def test_reset_reinitialises_and_redraws_the_current_frame() -> None:
    display = SimulatedDisplay(dialect=Dialect.CD5220)
    display.show_payout(3, 40)
    display.wire.written.clear()
    display.reset()
    assert bytes(display.wire.written) == CD5220_INIT + CD5220_PAY_3_40


# -- configuration -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"dialect": "cd-5220", "url": "loop://"}, r"display\.dialect = 'cd-5220': use one of"),
        ({"url": "loop://"}, r"display\.dialect = None"),
        ({"dialect": "cd5220"}, r"display\.url: missing"),
        ({"dialect": "cd5220", "url": "loop://", "baudrate": 9601}, r"display\.baudrate = 9601"),
        ({"dialect": "cd5220", "url": "loop://", "code_page": "utf-8"}, r"display\.code_page"),
        ({"dialect": "cd5220", "url": "loop://", "port": "x"}, r"display\.port: unknown setting"),
    ],
)
def test_display_settings_errors_name_the_key(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(DisplayError, match=message):
        open_display(settings, simulated=False)


def test_config_picks_the_dialect_and_simulated_mode_needs_no_port() -> None:
    display = open_display({"dialect": "epson-dmd", "keep": 5}, simulated=True)
    assert isinstance(display, SimulatedDisplay) and display.dialect is Dialect.EPSON_DMD
    real = open_display({"dialect": "cd5220", "url": "loop://"}, simulated=False)
    try:
        assert not real.simulated and real.dialect is Dialect.CD5220
    finally:
        real.close()


class _Wire:
    """A serial port whose flush() waits for the wire, as pyserial's tcdrain does on a UART."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.flushes = 0

    def write(self, data: bytes) -> int:
        self.written += data
        return len(data)

    def flush(self) -> None:
        self.flushes += 1  # a real port: 10 bits a byte at 9600 baud, 50 ms a frame, on the table's loop

    def close(self) -> None:
        pass


def test_a_frame_is_handed_to_the_port_and_not_waited_for_on_the_wire() -> None:
    wire = _Wire()
    display = PoleDisplay(wire, dialect=Dialect.CD5220)
    display.show_payout(3, 40)
    display.show_fault("The card-reading shoe is silent: check its cable and power, then press confirm")
    display.next_page()
    assert bytes(wire.written).startswith(CD5220_INIT) and CD5220_PAY_3_40 in bytes(wire.written)
    assert wire.flushes == 0
