"""Command sets of 2x20 pole displays: pure functions from text to the bytes on the wire.

Two dialects, chosen in config because most displays ship both behind a DIP switch:

CD5220 (Partner Tech and its many clones), from the CD5220 user's manual as summarised in the
project's hardware notes (spec/HARDWARE-NOTES.md, "Payout pole displays"):
    ESC @            1B 40        initialise
    CLR              0C           clear the screen
    ESC _ n          1B 5F n      cursor off (0) / on (1)
    ESC Q A ... CR   1B 51 41 .. 0D   write the upper line (other commands ignored until CR)
    ESC Q B ... CR   1B 51 42 .. 0D   write the lower line

Epson DM-D (ESC/POS for customer displays), from Epson's "ESC/POS Command Reference for
Customer Displays" (download4.epson.biz/sec_pubs/pos/reference_en/escpos_dm/) and the DM-D110
specification (ESC @: "resets the settings, clears the screen, cursor to home; the receive
buffer is not cleared"); byte values cross-checked with node-escpos/driver
packages/screen/src/commands.ts:
    ESC @            1B 40        initialise (clears the screen)
    ESC t n          1B 74 n      character code table (n = 0: PC437)
    US MD1           1F 01        overwrite mode: writing the last column never scrolls
    US C n           1F 43 n      cursor off (0) / on (1)
    US $ n m         1F 24 n m    cursor to column n (1-20) of line m (1-2)

A frame always rewrites both full lines (20 columns each), so it never depends on what the
display showed before, and a frame never contains a control byte inside the text.
"""

from __future__ import annotations

import enum

from drivers.display.text import CodePage, encode_line

ESC = 0x1B
US = 0x1F
CR = 0x0D
CLR = 0x0C


class Dialect(enum.StrEnum):
    """The display's command set, as written in config (`display.dialect`)."""

    CD5220 = "cd5220"
    EPSON_DMD = "epson-dmd"


def cd5220_init() -> bytes:
    return bytes([ESC, 0x40, CLR, ESC, 0x5F, 0x00])


def cd5220_frame(upper: str, lower: str, code_page: CodePage) -> bytes:
    return (
        bytes([ESC, 0x51, 0x41])
        + encode_line(upper, code_page)
        + bytes([CR, ESC, 0x51, 0x42])
        + encode_line(lower, code_page)
        + bytes([CR])
    )


def dmd_init(code_page: CodePage) -> bytes:
    table = bytes([ESC, 0x74, 0x00]) if code_page == "cp437" else b""
    return bytes([ESC, 0x40]) + table + bytes([US, 0x01, US, 0x43, 0x00])


def dmd_cursor(column: int, line: int) -> bytes:
    if not (1 <= column <= 20 and 1 <= line <= 2):
        raise ValueError(f"no column {column} on line {line} of a 2x20 display")
    return bytes([US, 0x24, column, line])


def dmd_frame(upper: str, lower: str, code_page: CodePage) -> bytes:
    return (
        dmd_cursor(1, 1)
        + encode_line(upper, code_page)
        + dmd_cursor(1, 2)
        + encode_line(lower, code_page)
    )


def encode_init(dialect: Dialect, code_page: CodePage) -> bytes:
    """Bytes that put a just-opened (or just power-cycled) display into a known state."""
    return cd5220_init() if dialect is Dialect.CD5220 else dmd_init(code_page)


def encode_frame(dialect: Dialect, upper: str, lower: str, code_page: CodePage) -> bytes:
    """Bytes that show `upper` and `lower` (each fitted to 20 columns)."""
    if dialect is Dialect.CD5220:
        return cd5220_frame(upper, lower, code_page)
    return dmd_frame(upper, lower, code_page)
