"""Benchmarks: `make bench` runs every `benchmarks/bench_*.py` and writes `benchmarks/results/*.json`.

Each benchmark module defines `run() -> dict` returning at least:
  name       short identifier; the result goes to `benchmarks/results/<name>.json`
  what       what was measured, in a sentence
  on         the machine and inputs it ran on (filled in by the harness if absent)
  reference  what the measurement is compared against, in a sentence
  ratio      measured / reference (a number; say in `what` which direction is good)
  results    the numbers themselves
Speed and memory are measured here, never by timed assertions in tests.
"""
