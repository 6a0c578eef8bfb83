# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The game `make run` plays: grand-slam, jokers-22 or baseball-poker (make run GAME=jokers-22).
GAME   ?= grand-slam
# The port its screens are served on, on 127.0.0.1 (make run PORT=8100).
PORT   ?= 8000

.PHONY: run test lint bench clean bundle pi-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tablectl run --sim --demo --game $(GAME) --http 127.0.0.1:$(PORT)

# The suite runs on every core (pytest-xdist, one test file to a worker, at most 4 workers),
# except the schemathesis API fuzzing: its tests share one name per operation, which xdist
# cannot hand out, so that file runs on its own after the rest.
FUZZ   := tests/controller/test_api_fuzz.py

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest --numprocesses=auto --maxprocesses=4 --dist=loadfile --ignore=$(FUZZ)
	$(BIN)/python -m pytest $(FUZZ)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# The offline install bundles, dist/tablectl-<version>-linux-aarch64.tar.gz (a Pi) and
# -linux-x86_64.tar.gz (a test bench): hardware/install.md. Downloads the pinned wheels
# (deploy/constraints.txt); the bundle installs with no network.
bundle: $(BIN)/python
	$(BIN)/python deploy/bundle.py

# The aarch64 bundle installed with the network off and run on an emulated arm64 Bookworm
# (tens of minutes; root; not part of `make test`): deploy/pi-check.sh says what it does.
pi-check: $(BIN)/python
	PYTHON=$(CURDIR)/$(BIN)/python bash deploy/pi-check.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
