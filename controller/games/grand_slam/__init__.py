"""Grand Slam (GAMES.md section 1): rules.py (the engine), adapter.py (the table), api.py (the
opening body), demo.py (a simulated dealer), camera.py (what the overhead camera means)."""
