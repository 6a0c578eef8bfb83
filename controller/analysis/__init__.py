"""Game math: exact figures where the state space allows, Monte Carlo otherwise."""
