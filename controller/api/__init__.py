"""The HTTP API (FastAPI) and the screens' shell, served in a process of its own: routes, auth,
the live feed, and the channel to the table's process (routes reach the table only by naming one of
its commands, controller/api/commands.py). No game is named here.
"""
