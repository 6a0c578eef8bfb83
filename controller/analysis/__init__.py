"""House edge machinery shared by the games: the analysis interface (`base.py`) and the Monte Carlo
driver (`montecarlo.py`). Each game's own figures are its folder's `analysis.py`; `tablectl analyze`
is controller/cli/analyze.py and finds a game's analysis through controller.games.
"""
