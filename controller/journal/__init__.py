"""The table's storage: the append-only SQLite journal with its chain and head file,
retention into the archive and the audit trail read back from it. Knows no game and no device.
"""
