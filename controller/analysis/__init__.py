"""`tablectl analyze`, shared: the command, the Monte Carlo driver and the analysis interface
(`base.py`); each game's figures are its folder's `analysis.py` (controller/games/README.md)."""
