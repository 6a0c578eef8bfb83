"""The supervisor's Pace and ratings panel in Chromium at 1280x800 (as tests/browser runs it): a
table played on the test's clock is served on 127.0.0.1, the supervisor logs in through the
screen's form, and the panel shows what the API says: the rounds and rounds an hour, a bar an
hour of the chart with the API's figure, the axis labelled in type as large as the screen's
own (14 px or more) and inside the chart, the chart within the screen's width, and a row a
rating session with its theoretical win."""

from __future__ import annotations

import asyncio
import os
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table
from tests.analytics.test_ratings import SUP, TOKENS
from tests.analytics.test_report import CHROMIUM, CHROMIUM_ARGS
from tests.analytics.timeline import Clock, Run, play

PATIENCE_MS = 60_000
# The type size of an SVG text as drawn on the screen: its font size times the drawing's scale
# (rotation kept apart: the axis label stands on its side).
TYPE_PX = (
    "(n) => { const m = n.getScreenCTM(); return parseFloat(getComputedStyle(n).fontSize) * Math.hypot(m.a, m.b); }"
)
SUPERVISOR = "supervisor-token-0123456789"


class Served(uvicorn.Server):
    """The app on a socket of the test's; `ready` is set once it answers."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.loop = asyncio.get_running_loop()
        self.ready.set()

    def stop(self, rt: Runtime) -> None:
        """As the daemon stops its server: every screen's feed is closed, then the server."""

        def stop() -> None:
            rt.live.close_all()
            self.loop.call_soon(setattr, self, "should_exit", True)

        self.loop.call_soon_threadsafe(stop)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, TestClient, Run]]:
    path: Path = tmp_path_factory.mktemp("panel") / "journal.sqlite3"
    table = Table(Journal(path), game="grand-slam", rules={}, simulated=True)
    clock = Clock(time.time() - 6 * 3600)
    with pytest.MonkeyPatch.context() as mp, clock.installed(mp):
        run = play(table, clock, random.Random("panel"), 60, dealers=("dealer:ann", "dealer:bo"))
    rt = Runtime(table=table, tokens=TOKENS)
    app = create_app(rt)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = Served(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert server.ready.wait(60), "the test's server did not start"
    try:
        yield f"http://127.0.0.1:{port}", TestClient(app), run
    finally:
        server.stop(rt)
        thread.join(60)
        assert not thread.is_alive(), "the test's server did not stop"
        sock.close()


def test_the_pace_panel_shows_the_apis_figures_readably(served: tuple[str, TestClient, Run]) -> None:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: install Debian's package `chromium`; the tests never download a browser"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import expect, sync_playwright

    url, client, run = served
    pace: dict[str, Any] = client.get("/api/pace?window=8h", headers=SUP).json()
    sessions = client.get("/api/ratings?window=8h", headers=SUP).json()["sessions"]
    assert pace["rounds"] == len(run.settled)
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=PATIENCE_MS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.set_default_timeout(PATIENCE_MS)
            page = context.new_page()
            page.on("pageerror", lambda exc: problems.append(f"uncaught: {exc}"))
            page.on(
                "console",
                lambda msg: problems.append(msg.text) if msg.type == "error" and "api/whoami" not in msg.text else None,
            )
            page.goto(f"{url}/supervisor")
            page.locator("#login").wait_for(state="visible")
            page.fill("#token", SUPERVISOR)
            page.locator("#login-form button[type=submit]").click()
            page.locator("#login").wait_for(state="hidden")
            expect(page.locator('#pace-summary [data-key="rounds"]')).to_have_text(str(pace["rounds"]))
            expect(page.locator('#pace-summary [data-key="rounds_per_hour"]')).to_have_text(
                f"{pace['rounds_per_hour']:.1f}"
            )
            bars = page.locator("#pace-chart rect.bar")
            expect(bars).to_have_count(len(pace["chart"]))
            shown = [bars.nth(i).get_attribute("data-rounds-per-hour") for i in range(bars.count())]
            # The same numbers: the page writes 48 where Python writes 48.0 (a bucket's pace is a whole
            # number of rounds an hour on some hours of the day, as the test's clock falls).
            assert [float(v) if v else None for v in shown] == [c["rounds_per_hour"] for c in pace["chart"]]
            page.locator("#sec-pace").scroll_into_view_if_needed()
            chart = page.locator("#pace-chart").bounding_box()
            axis = page.locator("#pace-axis-label")
            axis_box = axis.bounding_box()
            assert chart is not None and axis_box is not None
            assert chart["x"] >= 0 and chart["x"] + chart["width"] <= 1280
            assert chart["x"] <= axis_box["x"] and axis_box["x"] + axis_box["width"] <= chart["x"] + chart["width"]
            assert chart["y"] <= axis_box["y"] and axis_box["y"] + axis_box["height"] <= chart["y"] + chart["height"]
            assert axis.text_content() == "rounds an hour"
            size = axis.evaluate(TYPE_PX)
            assert size >= 14
            for tick in page.locator("#pace-chart text.hour").all():
                assert tick.evaluate(TYPE_PX) >= 14
            rows = page.locator("#ratings tbody tr[data-place]")
            expect(rows).to_have_count(len(sessions))
            first = rows.first.locator("td")
            assert first.nth(0).text_content() == str(sessions[0]["place"])
            assert first.nth(8).text_content() == f"{sessions[0]['theoretical_win']:.2f}"
            csv_href = page.locator("#ratings-csv").get_attribute("href") or ""
            assert re.search(r"format=csv", csv_href)
            page.screenshot(path=str(Path(os.environ.get("TMPDIR", "/tmp")) / "pace-panel.png"))
        finally:
            browser.close()
    assert problems == []
