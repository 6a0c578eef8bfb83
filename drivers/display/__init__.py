"""The payout pole display: a 2x20 customer display on a serial port, or simulated.

    text.py      what a line can show: code page, replacement, 20 columns
    commands.py  CD5220 and Epson DM-D command sets, as pure functions to bytes
    messages.py  payout, result, fault and idle screens, as pure functions to frames
    device.py    PoleDisplay (pyserial URL), SimulatedDisplay, open_display(config)
"""

from drivers.display.commands import Dialect, encode_frame, encode_init
from drivers.display.device import (
    DisplayError,
    PoleDisplay,
    ShownFrame,
    SimulatedDisplay,
    open_display,
)
from drivers.display.messages import Frame

__all__ = [
    "Dialect",
    "DisplayError",
    "Frame",
    "PoleDisplay",
    "ShownFrame",
    "SimulatedDisplay",
    "encode_frame",
    "encode_init",
    "open_display",
]
