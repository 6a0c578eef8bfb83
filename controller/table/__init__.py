"""The table: the reducer over typed journal entries, and the one writer that feeds it.

    entries.py    one frozen record type per journal entry kind; `parse_entry` reads an Entry once
    state.py      `TableSetup` (the configuration) and `TableState.apply(entry) -> (state, effects)`
    latch.py      the fault latch and the cards held while a fault stands
    snapshots.py  the state as JSON, and start-up: the last snapshot checked, then the entries after
    table.py      `Table`: inputs validated, journaled (write-ahead), applied, told to the outputs
    errors.py     what the table refuses
"""

from controller.journal.entries import TableEntry, parse_entry
from controller.table.errors import TableError, TableUnavailable
from controller.table.faults import FAULTS
from controller.table.snapshots import REPLAY_SNAPSHOT_EVERY
from controller.table.state import TableSetup, TableState
from controller.table.table import RECENT_EFFECTS, Output, Table

__all__ = [
    "FAULTS",
    "RECENT_EFFECTS",
    "REPLAY_SNAPSHOT_EVERY",
    "Output",
    "Table",
    "TableEntry",
    "TableError",
    "TableSetup",
    "TableState",
    "TableUnavailable",
    "parse_entry",
]
