"""The analysis' exact enumerations that the tests check, each computed once per run: the figures
that several tests and files ask for come from one enumeration, kept here (Grand Slam's six-deck
shoe alone takes most of a minute on a busy machine). Within a process a call is kept in memory;
under pytest-xdist (`make test`) the first worker to ask computes it and leaves it, pickled, in a
folder of this run (in pytest's temp folder of the run, removed with it) for the others (a lock per enumeration makes a second worker wait for the
first instead of computing it again). An exact enumeration is the same whichever process made it
(fractions, no floating point, no randomness), so a figure read back is the figure computed. The
figures are read, never changed, by the tests."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from controller.games.grand_slam.analysis import analyze as _grand_slam
from controller.games.jokers22.analysis import analyze as _jokers22

F = TypeVar("F", bound=Callable[..., Any])

#: The same for every worker of one `pytest -n` run, and new at each run (pytest-xdist sets it).
RUN = os.environ.get("PYTEST_XDIST_TESTRUNUID")


def _folder() -> Path | None:
    """This run's folder for what its workers share (tests/conftest.py names it), if any."""
    shared = os.environ.get("TABLECTL_TESTS_RUN_DIR")
    return Path(shared) / f"exact-{RUN}" if RUN and shared else None


def once_per_run(analyze: F) -> F:
    @functools.cache
    def figures(*args: Any, **kwargs: Any) -> Any:
        folder = _folder()
        if folder is None:
            return analyze(*args, **kwargs)
        call = repr((analyze.__module__, args, sorted(kwargs.items())))
        folder.mkdir(exist_ok=True)
        kept = folder / (hashlib.sha256(call.encode()).hexdigest()[:20] + ".pickle")
        with (folder / (kept.stem + ".lock")).open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even on an error
            if kept.exists():
                return pickle.loads(kept.read_bytes())
            made = analyze(*args, **kwargs)
            partial = kept.with_suffix(".partial")
            partial.write_bytes(pickle.dumps(made))
            partial.replace(kept)
            return made

    return figures  # type: ignore[return-value]


grand_slam_figures = once_per_run(_grand_slam)
jokers22_figures = once_per_run(_jokers22)
