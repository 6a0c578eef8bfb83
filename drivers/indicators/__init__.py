"""Base-indicator lamps: semantic commands (`BaseIndicators`) over GPIO LEDs or a 74HC595 chain.

    patterns.py         what a lamp does over time, as (lit, ms) steps
    sinks.py            where frames go: GpioLampSink, ShiftRegisterSink (the LedSink interface)
    blinker.py          plays patterns against one clock, in a thread or step by step
    base_indicators.py  BaseIndicators and LampSnapshot, the table loop's side
"""

from drivers.indicators.base_indicators import BaseIndicators, LampSnapshot
from drivers.indicators.patterns import (
    DARK,
    FAULT,
    NEXT_CARD,
    OUT,
    SCORED,
    STEADY,
    Pattern,
)
from drivers.indicators.sinks import (
    STATUS,
    GpioLampSink,
    LampId,
    LedSink,
    ShiftRegisterSink,
)

__all__ = [
    "DARK",
    "FAULT",
    "NEXT_CARD",
    "OUT",
    "SCORED",
    "STATUS",
    "STEADY",
    "BaseIndicators",
    "GpioLampSink",
    "LampId",
    "LampSnapshot",
    "LedSink",
    "Pattern",
    "ShiftRegisterSink",
]
