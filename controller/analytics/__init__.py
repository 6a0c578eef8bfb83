"""Table analytics from the journal: pace (`pace.py`), the exact house edges a rating uses
(`edges.py`), seat rating sessions (`ratings.py`) and the shift report (`report.py`).

Everything here only reads: journal entries and the round index, never the table's state, so it
changes no wager, card or payout, and runs beside a live table on a read-only journal.
"""
