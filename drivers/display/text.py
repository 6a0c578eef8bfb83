"""Text for a 2x20 pole display: only what the display can show, exactly 20 columns a line.

A display shows printable characters of its code page and nothing else; a control byte in text
would be read as a command (CD5220 ends an ESC Q string at CR, for one). So every character is
either shown as itself, shown without its accent (e -> e for an accented e on an ASCII display),
or replaced by "?". Lines are padded with spaces or cut to 20 columns so that a new frame
always overwrites all of the old one.

    >>> fit("PAY SEAT 3", "ascii")
    'PAY SEAT 3          '
    >>> encode_line("Café", "ascii")
    b'Cafe                '
"""

from __future__ import annotations

import unicodedata
from typing import Literal

WIDTH = 20
LINES = 2
CodePage = Literal["ascii", "cp437"]
CODE_PAGES: tuple[CodePage, ...] = ("ascii", "cp437")
REPLACEMENT = "?"


def _shows(char: str, code_page: CodePage) -> bool:
    try:
        encoded = char.encode(code_page)
    except UnicodeEncodeError:
        return False
    # One byte, and not a control byte: CP437 maps symbols such as the smiley to 0x01-0x1F,
    # which a display would take for commands.
    return len(encoded) == 1 and encoded[0] >= 0x20 and encoded[0] != 0x7F


def displayable(text: str, code_page: CodePage) -> str:
    """`text` with every character the display cannot show replaced (accents dropped first)."""
    if text.isascii() and text.isprintable():
        return text  # 0x20-0x7E: each shown as itself in both code pages (most of what a table says)
    out: list[str] = []
    for char in text:
        if char in "\t\r\n":
            out.append(" ")
        elif _shows(char, code_page):
            out.append(char)
        else:
            plain = "".join(
                c for c in unicodedata.normalize("NFKD", char) if _shows(c, code_page)
            )
            out.append(plain or REPLACEMENT)
    return "".join(out)


def fit(text: str, code_page: CodePage) -> str:
    """What one display line shows: displayable, padded or cut to exactly 20 columns."""
    return displayable(text, code_page)[:WIDTH].ljust(WIDTH)


def encode_line(text: str, code_page: CodePage) -> bytes:
    """The 20 bytes that show `text` on one line."""
    return fit(text, code_page).encode(code_page)


def wrap(text: str, width: int = WIDTH) -> list[str]:
    """Split plain words into lines of at most `width` columns; over-long words are cut."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if not word:
            continue
        if not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line = f"{line} {word}"
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines
