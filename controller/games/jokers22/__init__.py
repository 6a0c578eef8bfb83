"""Jokers 22 (GAMES.md section 2): rules.py (the engine), adapter.py (the table), api.py (the
opening and decision bodies), demo.py (a simulated dealer and players)."""
