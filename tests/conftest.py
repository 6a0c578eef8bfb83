"""What every test shares: hypothesis runs the same examples on every CI run (CI=true), so a
landing's result can be reproduced; elsewhere each run explores new ones. No example is timed
(hypothesis's 200 ms deadline failed a decoder property at a load of 15 on 2 cores): speed is
measured by benchmarks/ only."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("untimed", deadline=None)
settings.register_profile("ci", parent=settings.get_profile("untimed"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "untimed")

#: The suite's longest files, longest first (seconds of one `make test --durations` run on this
#: 2-core machine at a load of 30, 2 workers: 877, 614, 602, 377, 344, 225, then 130-155 each):
#: handed out first, so that they run beside the many short files instead of after them. Only
#: with --no-loadscope-reorder (the Makefile's `make test`): by default xdist sorts the files by
#: their number of tests and this order is lost.
LONGEST_FIRST = (
    "tests/browser/test_every_prompt_from_the_screen.py",
    "tests/install/",
    "tests/cli/test_authentication.py",
    "tests/hil/test_face_down_everywhere.py",
    "tests/hil/test_recovery.py",
    "tests/browser/test_screens_as_used.py",
    "tests/hil/test_daemon_rounds.py",
    "tests/browser/test_sizes.py",
    "tests/hil/test_ws_load.py",
    "tests/browser/test_eight_seats_screen.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, in LONGEST_FIRST's order, then the rest in theirs (a stable sort:
    each file's tests keep their order, together)."""

    def rank(item: pytest.Item) -> int:
        return next((i for i, path in enumerate(LONGEST_FIRST) if item.nodeid.startswith(path)), len(LONGEST_FIRST))

    items.sort(key=rank)


@pytest.fixture(scope="session", autouse=True)
def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What the workers of one xdist run share (tests/exact.py) goes in the run's own temp folder,
    the parent of each worker's: pytest removes it with the run's other temp folders."""
    os.environ["TABLECTL_TESTS_RUN_DIR"] = str(tmp_path_factory.getbasetemp().parent)
