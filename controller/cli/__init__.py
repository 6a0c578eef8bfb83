"""The commands: one module per `tablectl` command, each importing only what it uses.
`main.py` parses the command line and hands over; `python -m controller.cli` runs it.
"""
