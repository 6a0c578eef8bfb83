"""tablectl's controller: the table daemon in layers, one folder a layer (docs/architecture.md).

From the bottom up: engine (the game contract), journal (storage), analysis, security, games,
camera, table (the reducer and its one writer), adapters (effects out), analytics, floor (the
floor's server side), api, app (wiring), cli (commands). An import points down this list, never up
(tests/test_layers.py); `testing.py` is the rig that tests and benchmarks share.
"""
