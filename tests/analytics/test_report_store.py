"""`tablectl report --store`: the shift report from the floor store, which holds every table's
entries (SQLite, and PostgreSQL as a floor runs it), gives the very figures the table's own
journal gives: one journal (Grand Slam on the test's clock, three dealers' downs, voids,
faults, dead cards, supervisor's rating sessions), its entries put in each store as the floor
consumer stores them, and the report's JSON and CSV from each source compared whole. A store
that lacks an entry of the window is refused, naming what it lacks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.floor.store import StoredEntry, open_store
from tests.analytics.test_dealers import Floor
from tests.analytics.test_report import CHECKOUT
from tests.floor.conftest import Postgres, postgres_bin

SITE = "main-floor"


def into_store(floor: Floor, url: str, *, leave_out: int | None = None) -> None:
    store = open_store(url)
    try:
        entries = [
            StoredEntry(SITE, "GS-7", e.seq, "boot-1", e.at, e.round, e.kind, e.body)
            for e in floor.table.journal.entries()
            if e.seq != leave_out
        ]
        store.add(entries)
    finally:
        store.close()


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Floor:
    return Floor(tmp_path_factory.mktemp("store-report"))


@pytest.fixture(scope="module")
def stores(floor: Floor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    sqlite = f"sqlite://{tmp_path_factory.mktemp('sqlite')}/floor.db"
    into_store(floor, sqlite)
    server = Postgres(postgres_bin())
    try:
        server.start()
        pg = server.new_database()
        into_store(floor, pg)
        yield {"sqlite": sqlite, "postgresql": pg}
    finally:
        server.stop()


def report(floor: Floor, *args: str) -> subprocess.CompletedProcess[str]:
    from controller.analytics.pace import iso

    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "report", "--sim", "--config", str(floor.config),
         "--from", iso(floor.start - 60), "--to", iso(floor.end), *args],
        capture_output=True, text=True, cwd=CHECKOUT, env={**os.environ, "PYTHONPATH": str(CHECKOUT)}, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_the_floor_store_gives_the_journals_report(floor: Floor, stores: dict[str, str]) -> None:
    for form in ("--json", "--csv"):
        journal = report(floor, form)
        assert journal.returncode == 0, journal.stderr
        for kind, url in stores.items():
            stored = report(floor, form, "--store", url, "--table", "GS-7")
            assert stored.returncode == 0, (kind, stored.stderr)
            assert stored.stdout == journal.stdout, (kind, form)
    doc = json.loads(journal.stdout if form == "--json" else report(floor, "--json").stdout)
    # Not an empty report found equal: the downs, the voids and the sessions are all there.
    assert len(doc["downs"]) == 3 and doc["pace"]["voids"] and doc["sessions"] and doc["money"]["handle_total"]


def test_a_store_missing_an_entry_is_refused_naming_it(floor: Floor, tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/floor.db"
    into_store(floor, url, leave_out=50)
    done = report(floor, "--json", "--store", url, "--table", "GS-7")
    assert done.returncode == 2 and done.stdout == ""
    assert "holds its entries without a gap only up to 49" in done.stderr and "missing 50" in done.stderr
    other = report(floor, "--json", "--store", url, "--table", "GS-9")
    assert other.returncode == 2 and "--table GS-9: the floor store holds no table of that id" in other.stderr
