"""The floor page (`tablectl floor --broker URL --http HOST:PORT`) in Chromium: the same board as
the terminal's from a real Mosquitto, faulted tables first, a pit chosen, a column sorted, a new
fault moving its table to the top live; read-only, behind a password when it has one, and
showing only the pit it was started with (--pit)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from playwright.sync_api import Browser, Page, expect

from controller.testing import free_port
from tests.floor.conftest import WAIT_S, Mosquitto, mosquitto_binary

from .conftest import ARTIFACTS, CSP_WATCH, DOCS_SHOTS, VIEWPORT

REPO = Path(__file__).resolve().parents[2]
SILENT = {"id": 40, "code": "shoe-silent", "title": "Shoe silent", "message": "The shoe has been silent for 3 s"}
MISREAD = {"id": 77, "code": "misread", "title": "Shoe misread", "message": "The shoe could not read a card"}
#: (table, pit, online, open faults)
TABLES = [
    ("GS-01", "pit-1", True, []),
    ("GS-02", "pit-1", True, [SILENT]),
    ("J22-1", "pit-2", False, []),
    ("J22-2", "pit-2", True, []),
    ("BP-01", "pit-2", True, []),
    ("BP-02", "pit-1", True, []),
]


class Floor:
    """Tables' messages as hardware/floor.md documents them, published to the broker."""

    def __init__(self, broker: Mosquitto) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv311)
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        self.seq: dict[str, int] = {}

    def send(self, table: str, topic_kind: str, **fields: Any) -> None:
        payload = {"v": 1, "site": "main", "table": table, "boot": "b1", **fields}
        if topic_kind != "status":
            self.seq[table] = self.seq.get(table, 100) + 1
            payload["seq"] = self.seq[table]
        topic = f"tablectl/main/{table}/{topic_kind}"
        info = self.client.publish(topic, json.dumps(payload), 1, topic_kind != "entry")
        info.wait_for_publish(WAIT_S)

    def table(self, table: str, pit: str, online: bool, faults: list[dict[str, Any]]) -> None:
        self.send(table, "status", status="online" if online else "offline", game="grand-slam", pit=pit)
        self.send(table, "entry", at="2026-01-05T21:04:31.120Z", round=12, kind="round-open", body={})
        self.send(table, "meters", game="grand-slam", meters={"rounds": 11, "total_wagered": 845, "total_paid": 910})
        self.send(table, "fault", raised=faults, cleared=[], open=faults)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    server = Mosquitto(mosquitto_binary(), tmp_path / "broker")
    server.start()
    yield server
    server.stop()


class View:
    """`tablectl floor --http` as its own process, stopped by its PID."""

    def __init__(self, broker: Mosquitto, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "controller.cli", "floor", "--broker", f"mqtt://127.0.0.1:{broker.port}"]
        self.process = subprocess.Popen(
            [*argv, "--http", f"127.0.0.1:{self.port}", *extra],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.ready = self.process.stdout.readline()  # its ready line, or "" if it died
        assert self.ready.startswith("tablectl floor: the floor page"), (
            self.process.stderr and self.process.stderr.read()
        )

    def stop(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=WAIT_S)


def open_page(browser: Browser, url: str, problems: list[str], **context: Any) -> Page:
    page = browser.new_context(viewport=VIEWPORT, **context).new_page()
    page.set_default_timeout(WAIT_S * 1000)
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.expose_function("reportCspViolation", lambda report: problems.append(f"CSP: {report}"))
    page.add_init_script(CSP_WATCH)
    page.goto(url)
    return page


def tables_shown(page: Page) -> list[str]:
    return page.locator("#rows tr").evaluate_all("rows => rows.map(r => r.dataset.table)")


def test_the_floor_page_shows_the_board_faulted_first_filters_by_pit_sorts_and_follows_the_floor(
    browser: Browser, broker: Mosquitto
) -> None:
    floor = Floor(broker)
    for table in TABLES:
        floor.table(*table)
    view = View(broker)
    problems: list[str] = []
    try:
        page = open_page(browser, f"{view.url}/", problems)
        expect(page.locator("#summary")).to_have_text("6 table(s): 1 with faults, 1 OFFLINE")
        for table, *_ in TABLES:  # live entries, after the retained messages filled the board
            floor.send(table, "entry", at="2026-01-05T21:06:02.250Z", round=12, kind="card", body={"card": "KD"})
        expect(page.locator('#rows tr[data-table="GS-01"] td').nth(6)).to_have_text("104")
        expect(page.locator('#rows tr[data-table="BP-02"] td').nth(11)).to_have_text("21:06:02")
        # Faulted first, then offline, then by site, pit and table: the terminal's order.
        assert tables_shown(page) == ["GS-02", "J22-1", "BP-02", "GS-01", "BP-01", "J22-2"]
        first = page.locator("#rows tr").first
        expect(first).to_have_class("faulted")
        expect(first.locator("td").nth(7)).to_have_text("1: Shoe silent")
        expect(page.locator('#rows tr[data-table="J22-1"] td').nth(4)).to_have_text("OFFLINE")

        page.select_option("#pit", "pit-2")
        expect(page.locator("#summary")).to_have_text("3 table(s): 0 with faults, 1 OFFLINE in pit pit-2")
        assert tables_shown(page) == ["J22-1", "BP-01", "J22-2"]

        page.select_option("#pit", "")
        page.locator('th[data-column="TABLE"]').click()
        page.locator('th[data-column="TABLE"]').click()  # descending; faulted and offline still first
        expect(page.locator('th[data-column="TABLE"]')).to_have_attribute("aria-sort", "descending")
        assert tables_shown(page) == ["GS-02", "J22-1", "J22-2", "GS-01", "BP-02", "BP-01"]

        floor.send("BP-01", "fault", raised=[MISREAD], cleared=[], open=[MISREAD])  # live: a new fault
        expect(page.locator("#summary")).to_have_text("6 table(s): 2 with faults, 1 OFFLINE")
        assert tables_shown(page)[:2] == ["GS-02", "BP-01"]
        expect(page.locator('#rows tr[data-table="BP-01"]')).to_have_class("faulted")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "floor-page.png"), full_page=True)
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS_SHOTS / "floor-page.png"))
        page.context.close()
    finally:
        code = view.stop()
        floor.stop()
    assert code == 0
    assert problems == []


def request(url: str, method: str = "GET", password: str | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Authorization": "Basic " + base64.b64encode(f"pit-boss:{password}".encode()).decode()}
    made = urllib.request.Request(url, method=method, headers=headers if password is not None else {})
    try:
        with urllib.request.urlopen(made, timeout=WAIT_S) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_floor_page_is_read_only_and_asks_for_its_password(
    browser: Browser, broker: Mosquitto, tmp_path: Path
) -> None:
    floor = Floor(broker)
    floor.table(*TABLES[1])
    floor.table(*TABLES[2])  # in pit-2, which this page does not show
    secret = tmp_path / "page-password"
    secret.write_text("correct horse battery\n")
    view = View(broker, "--http-password-file", str(secret), "--pit", "pit-1")
    problems: list[str] = []
    try:
        assert "(password)" in view.ready
        status, headers, _ = request(f"{view.url}/api/floor")
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic ")
        assert request(f"{view.url}/api/floor", password="wrong")[0] == 401
        status, headers, body = request(f"{view.url}/api/floor", password="correct horse battery")
        assert status == 200 and "default-src 'none'" in headers["Content-Security-Policy"]
        assert set(json.loads(body)) >= {"header", "summary", "columns", "tables", "pits"}
        assert request(f"{view.url}/api/floor", "POST", "correct horse battery")[0] == 405
        assert request(f"{view.url}/api/floor", "DELETE", "correct horse battery")[0] == 405

        page = open_page(
            browser,
            f"{view.url}/",
            problems,
            http_credentials={"username": "pit-boss", "password": "correct horse battery"},
        )
        expect(page.locator("#source")).to_contain_text("(connected), 2 table(s)")  # both tables are on the board
        expect(page.locator("#summary")).to_have_text("1 table(s): 1 with faults, 0 OFFLINE")
        assert tables_shown(page) == ["GS-02"]
        page.context.close()
    finally:
        assert view.stop() == 0
        floor.stop()
    assert problems == []
