"""Baseball poker (GAMES.md section 3): rules.py (the engine), adapter.py (the table), api.py
(the opening and betting bodies), demo.py (a simulated dealer and players)."""
