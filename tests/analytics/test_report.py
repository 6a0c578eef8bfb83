"""`tablectl report` as a supervisor runs it: a Grand Slam table (2 decks, its own paytable) is
played on the test's clock, then the command reads its journal. Its figures must be the test's
own: rounds and rounds an hour from the time the test spent dealing, faults and voids as the test
caused them, the handle by bet type and the win from the round files, the theoretical win from
the test's own exact edges; the same pace as GET /api/pace; and its HTML prints on one A4 page
(Chromium, as the browser tests run it)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from controller.analytics.pace import iso
from controller.api.app import create_app
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
from tests.analytics.test_ratings import RULES, SUP, TOKENS, derived_edges, sessions_of
from tests.analytics.timeline import Clock, Run, play

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CHECKOUT = Path(__file__).resolve().parents[2]


class Shift:
    def __init__(self, root: Path) -> None:
        self.state = root / "state"
        self.config = root / "table.toml"
        self.config.write_text(
            f'[table]\nid = "GS-7"\ngame = "grand-slam"\n\n[state]\ndir = "{self.state}"\n', encoding="utf-8"
        )
        self.table = Table(Journal(self.state / "journal.sqlite3"), game="grand-slam", rules=RULES, simulated=True)
        self.start = time.time() - 5 * 3600
        clock = Clock(self.start)
        with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
            self.run: Run = play(self.table, clock, random.Random("report"), 50, dealers=("dealer:ann", "dealer:bo"))
        self.end = clock.now() + 1

    def report(self, *form: str, start: float | None = None, end: float | None = None) -> str:
        args = ["--from", iso(start or self.start - 60), "--to", iso(end or self.end), *form]
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "report", "--sim", "--config", str(self.config), *args],
            capture_output=True,
            text=True,
            cwd=CHECKOUT,
            env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def shift(tmp_path_factory: pytest.TempPathFactory) -> Shift:
    return Shift(tmp_path_factory.mktemp("shift"))


@pytest.mark.slow
def test_the_report_gives_the_tests_own_figures(shift: Shift) -> None:
    doc = json.loads(shift.report("--json"))
    run = shift.run
    files = [(shift.table.rounds[n].round_file, shift.table.rounds[n].settlement) for n in sorted(run.settled)]
    pace, money = doc["pace"], doc["money"]
    assert doc["table"] == "GS-7" and doc["game"] == "grand-slam"
    assert pace["rounds"] == len(run.settled) and pace["voids"] == len(run.voided)
    assert pace["dealer_s"] == pytest.approx(run.dealer_s, abs=0.0015)
    assert pace["rounds_per_hour"] == round(len(run.settled) * 3600 / run.dealer_s, 2)
    assert pace["faults"]["by_kind"] == dict(run.faults)
    assert pace["shuffles"]["count"] == run.shuffles
    handle: Counter[str] = Counter()
    nets = []
    theo = Fraction(0)
    edges = derived_edges()
    for file, settlement in files:
        assert file is not None and settlement is not None
        for seat in file["seats"]:
            handle.update(seat["wagers"])
            handle.update(seat.get("side_bets", {}))
            bases = "+".join(b for b in ("first", "second", "third") if b in seat["wagers"])
            theo += sum((a * edges[f"{b}/{bases}"] for b, a in seat["wagers"].items()), Fraction(0))
            theo += sum((a * edges[s] for s, a in seat.get("side_bets", {}).items()), Fraction(0))
        nets += [s["net"] for s in settlement["seats"]]
    assert money["handle"] == dict(sorted(handle.items()))
    assert money["actual_win"] == -sum(nets)
    assert money["paid"] == sum(n for n in nets if n > 0)
    assert money["hold_percent"] == round(100 * -sum(nets) / sum(handle.values()), 2)
    assert Fraction(money["theoretical_win_exact"]) == theo
    assert money["theoretical_win"] == round(float(theo), 2)
    assert money["actual_minus_theoretical"] == round(-sum(nets) - float(theo), 2)
    # Per dealer: the rounds each opened, and the table's money split between them.
    dealers = doc["dealers"]
    assert {d: v["rounds"] for d, v in dealers.items()} == dict(Counter(run.dealers[n] for n in run.settled))
    assert sum(Fraction(v["money"]["theoretical_win_exact"]) for v in dealers.values()) == theo
    assert sum(v["voids"] for v in dealers.values()) == len(run.voided)
    # The rating sessions, as the test makes them from the round files.
    want = sessions_of(files, edges)  # type: ignore[arg-type]
    assert [(s["place"], s["rounds"], Fraction(s["theoretical_win_exact"])) for s in doc["sessions"]] == [
        (w["place"], w["rounds"], w["theo"]) for w in want
    ]


def test_the_report_and_the_api_give_the_same_pace(shift: Shift) -> None:
    doc = json.loads(shift.report("--json"))
    client = TestClient(create_app(Runtime(table=shift.table, tokens=TOKENS)))
    api = client.get("/api/pace?window=6h", headers=SUP).json()
    for key in ("rounds", "voids", "rounds_per_hour", "dealer_s", "phases", "shuffles", "faults", "idle_s"):
        assert doc["pace"][key] == api[key], key


def test_the_text_and_csv_forms_say_the_same(shift: Shift) -> None:
    doc = json.loads(shift.report("--json"))
    text = shift.report()
    assert f"rounds {doc['pace']['rounds']}, rounds an hour {doc['pace']['rounds_per_hour']:g}" in text
    assert f"theoretical win {doc['money']['theoretical_win']:.2f}" in text
    csv_text = shift.report("--csv")
    assert "# rating sessions" in csv_text and "# dealers" in csv_text
    assert f"dealer:ann,{doc['dealers']['dealer:ann']['rounds']}," in csv_text


def test_a_refused_report_says_why_in_one_line(shift: Shift) -> None:
    for args, words in (
        (["--from", "yesterday", "--to", "2026-12-02"], "--from 'yesterday'"),
        (["--from", "2026-12-02", "--to", "2026-12-01"], "is not after"),
        (["--from", "2026-12-01", "--to", "2026-12-02", "--table", "JK-1"], "--table JK-1"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "report", "--sim", "--config", str(shift.config), *args],
            capture_output=True,
            text=True,
            cwd=CHECKOUT,
            env={**os.environ, "PYTHONPATH": str(CHECKOUT)},
            timeout=300,
        )
        assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_html_report_of_a_day_prints_on_one_a4_page(shift: Shift, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: install Debian's package `chromium`; the tests never download a browser"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    page_html = shift.report("--html", start=shift.end - 86400, end=shift.end)
    assert "<svg" in page_html and "rounds an hour</text>" in page_html
    pdf = tmp_path / "report.pdf"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page()
            page.set_content(page_html)
            bars = page.locator("svg rect").count()
            page.pdf(path=str(pdf), format="A4", print_background=True)
        finally:
            browser.close()
    assert bars in (24, 25)  # an hour a bar over the day, on whole hours
    data = pdf.read_bytes()
    assert data.count(b"/Type /Page") - data.count(b"/Type /Pages") == 1
