"""The wiring: `tablectl run`'s daemon, its start-up checks, the table's configuration
(table.toml) and the process's memory settings. It imports every layer below; none imports it.
"""
