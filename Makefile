# Two commands set everything up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The game `make run` plays: grand-slam, jokers-22 or baseball-poker (make run GAME=jokers-22).
GAME   ?= grand-slam
# The port its screens are served on, on 127.0.0.1 (make run PORT=8100).
PORT   ?= 8000

.PHONY: run test busy-check lint bench release clean bundle pi-check

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml deploy/constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c deploy/constraints.txt -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tablectl run --sim --demo --game $(GAME) --http 127.0.0.1:$(PORT)

# The suite runs on every core (pytest-xdist, one test file to a worker, at most 4 workers),
# except the schemathesis API fuzzing: its tests share one name per operation, which xdist
# cannot hand out, so that file runs on its own after the rest. --no-loadscope-reorder: xdist
# hands out the files in the order tests/conftest.py gives them, the longest first
# (LONGEST_FIRST); by default it reorders them by their number of tests, which sent the longest
# files (one to a few tests each) last, to run on after every other file had ended.
FUZZ   := tests/controller/test_api_fuzz.py

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest --numprocesses=auto --maxprocesses=4 --dist=loadfile --no-loadscope-reorder --ignore=$(FUZZ)
	$(BIN)/python -m pytest $(FUZZ)

# `make test` three times in a row beside two busy processes (`yes > /dev/null`), as on a shared CI
# machine (issue 30): stops at the first run that fails and says which. The two are started here
# and ended here by their PIDs, whether the runs pass, fail or are interrupted. About 35 minutes.
busy-check: $(STAMP)
	@yes > /dev/null & y1=$$!; yes > /dev/null & y2=$$!; \
	trap 'kill $$y1 $$y2 2>/dev/null' EXIT; trap 'exit 130' INT TERM; \
	echo "busy-check: two busy processes, PIDs $$y1 and $$y2"; \
	for run in 1 2 3; do \
	  start=$$(date +%s); echo "busy-check: run $$run of 3: make test"; \
	  if ! $(MAKE) --no-print-directory test; then \
	    echo "busy-check: run $$run of 3 FAILED after $$(( $$(date +%s) - start )) s (the runs before it passed)" >&2; exit 1; \
	  fi; \
	  echo "busy-check: run $$run of 3 passed in $$(( $$(date +%s) - start )) s"; \
	done; \
	echo "busy-check: make test passed 3 times in a row beside two busy processes"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# The benchmarks, then README's Pi table rewritten from their results (benchmarks/pi_table.py), also
# when a benchmark failed (the others' figures are new), and make still fails if one did.
bench: $(STAMP)
	$(BIN)/python -m benchmarks; status=$$?; $(BIN)/python -m benchmarks.pi_table >/dev/null && exit $$status

# A signed release: the wheel, with the manifest of every file it installs signed by the release
# key inside it (controller/security/release.py), and a copy of the manifest beside it in dist/. The key
# is never in this repository: make release RELEASE_KEY=/secure/place/release.key
release: $(STAMP)
	@test -n "$(RELEASE_KEY)" || { echo "make release: give the release key: make release RELEASE_KEY=FILE (hardware/authentication.md)" >&2; exit 2; }
	rm -rf build dist
	$(BIN)/python -m pip wheel --quiet --no-deps --wheel-dir dist .
	$(BIN)/python -m controller.security.release --key "$(RELEASE_KEY)" dist/tablectl-*.whl

# The offline install bundles, dist/tablectl-<version>-linux-aarch64.tar.gz (a Pi) and
# -linux-x86_64.tar.gz (a test bench): hardware/install.md. Downloads the pinned wheels
# (deploy/constraints.txt); the bundle installs with no network. `make bundle RELEASE_KEY=FILE`
# signs the release (hardware/authentication.md): a live table opens only on a signed one.
bundle: $(BIN)/python
	$(BIN)/python deploy/bundle.py $(if $(RELEASE_KEY),--release-key "$(RELEASE_KEY)")

# The aarch64 bundle installed with the network off and run on an emulated arm64 Bookworm
# (tens of minutes; root; not part of `make test`): deploy/pi-check.sh says what it does.
pi-check: $(BIN)/python
	PYTHON=$(CURDIR)/$(BIN)/python bash deploy/pi-check.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
