"""Browser rig: `tablectl run --sim` as a real process on a free 127.0.0.1 port, and Debian's
Chromium driven by Playwright (Python). Every page a test opens is watched for console errors,
uncaught exceptions and Content-Security-Policy violations, and is photographed full-page into
tests/artifacts/ when the test ends (pass or fail).

The daemon is the one rig the HIL tests and the benchmarks use too (controller/testing.py).
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, ViewportSize, WebSocket, expect, sync_playwright

from controller.testing import Daemon

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
DOCS_SHOTS = ARTIFACTS / "docs"  # one shot of each screen, for the README (copied to docs/)
VIEWPORT: ViewportSize = {"width": 1280, "height": 800}  # the dealer's tablet
# The backstop of every wait on a screen (an action, a navigation, an `expect`): each waits for
# what it waits for, and this long only if it never comes. A CI machine shared at a load of 10-20
# on 2 cores takes seconds for what takes milliseconds when idle, so no wait is shorter.
PATIENCE_MS = 60_000

# small-gpio (hardware/pins.toml): one GPIO per lamp, so a lamp's history is one mock pin's history.
CONFIG = """
[table]
id = "BROWSER-1"
[indicators]
pin_map = "small-gpio"
"""

# Flags that keep Chromium from reaching anything but 127.0.0.1 and from touching the profile.
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


@dataclass
class Watched:
    """A page and what went wrong on it: console errors, uncaught exceptions, CSP violations."""

    page: Page
    name: str
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    # Console lines a test expects (e.g. the 401 of a wrong token): regexes matched against them.
    expected: list[str] = field(default_factory=list)
    # The page's last WebSocket events (opened, frames each way, closed), for the report of a failed
    # test: what the screen was told, not only what it drew.
    sockets: deque[str] = field(default_factory=lambda: deque(maxlen=SOCKET_EVENTS_KEPT))

    def report(self) -> str:
        """What a failed test's report says of this page: its link, its prompt, its errors, and the
        last messages its sockets carried."""
        lines = [f"screen {self.name!r}:"]
        try:
            link = self.page.locator("#connection").get_attribute("data-status", timeout=1000)
            prompt = (
                self.page.locator("#prompt").inner_text(timeout=1000) if self.page.locator("#prompt").count() else None
            )
            lines.append(f"  link {link!r}, prompt {prompt!r}")
        except Exception as exc:  # the page itself is gone: say so, the rest still helps
            lines.append(f"  page not readable: {type(exc).__name__}: {exc}")
        lines += [f"  error: {e}" for e in self.unexpected()]
        lines += [f"  {e}" for e in self.sockets]
        return "\n".join(lines)

    def unexpected(self) -> list[str]:
        errors = [e for e in self.console_errors if not any(re.search(p, e) for p in self.expected)]
        return errors + [f"uncaught: {e}" for e in self.page_errors] + [f"CSP: {v}" for v in self.csp_violations]


SOCKET_EVENTS_KEPT = 60
SOCKET_TEXT_KEPT = 500  # characters of each frame in the report


# Added before the page's own scripts run (an init script is not subject to the page's CSP); each
# violation the browser reports to the page is passed on to the test.
CSP_WATCH = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.reportCspViolation(`${e.violatedDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`);
});
"""

# Chromium logs every HTTP error answer to a fetch as a console error. A screen asks who it is
# before anyone has logged in, and that 401 is how it learns to show the login form.
NOT_LOGGED_IN_YET = r"status of 401 .*/api/whoami"  # older daemons answered 401 before login


class Screens:
    """Opens the dealer and supervisor screens in their own browser contexts (own cookies)."""

    def __init__(self, browser: Browser, daemon: Daemon, test_name: str) -> None:
        self.browser = browser
        self.daemon = daemon
        self.test_name = test_name
        self.opened: list[Watched] = []

    def open(self, path: str, name: str) -> Watched:
        context = self.browser.new_context(viewport=VIEWPORT, accept_downloads=False)
        context.set_default_timeout(PATIENCE_MS)
        context.set_default_navigation_timeout(PATIENCE_MS)
        page = context.new_page()
        watched = Watched(page, name, expected=[NOT_LOGGED_IN_YET])

        def on_console(msg: ConsoleMessage) -> None:
            if msg.type == "error":
                where = msg.location.get("url", "")
                watched.console_errors.append(f"{msg.text} [{where}]")

        def on_csp_violation(report: str) -> None:
            watched.csp_violations.append(report)

        def on_socket(ws: WebSocket) -> None:
            started = time.monotonic()

            def note(what: str, payload: object = "") -> None:
                watched.sockets.append(f"{time.monotonic() - started:8.3f} s {what} {str(payload)[:SOCKET_TEXT_KEPT]}")

            note("open", ws.url)
            ws.on("framereceived", lambda payload: note("<-", payload))
            ws.on("framesent", lambda payload: note("->", payload))
            ws.on("close", lambda _: note("closed"))

        page.on("console", on_console)
        page.on("pageerror", lambda exc: watched.page_errors.append(str(exc)))
        page.on("websocket", on_socket)
        page.expose_function("reportCspViolation", on_csp_violation)
        page.add_init_script(CSP_WATCH)
        page.goto(f"{self.daemon.url}{path}")
        self.opened.append(watched)
        return watched

    def login(self, watched: Watched, token: str) -> None:
        """Log in through the screen's own form, as a person would."""
        page = watched.page
        page.locator("#login").wait_for(state="visible")
        page.fill("#token", token)
        page.locator("#login-form button[type=submit]").click()
        page.locator("#login").wait_for(state="hidden")
        page.locator('#connection[data-status="live"]').wait_for()

    def keep_for_docs(self, watched: Watched, name: str, scroll_to: str | None = None) -> None:
        """A 1280x800 shot of the screen as it stands, for docs/ (the lead copies it there)."""
        if scroll_to:
            watched.page.locator(scroll_to).scroll_into_view_if_needed()
        DOCS_SHOTS.mkdir(parents=True, exist_ok=True)
        watched.page.screenshot(path=str(DOCS_SHOTS / f"{name}.png"), animations="disabled")

    def photograph(self) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for watched in self.opened:
            watched.page.screenshot(
                path=str(ARTIFACTS / f"{self.test_name}-{watched.name}.png"), full_page=True, animations="disabled"
            )

    def close(self) -> None:
        for watched in self.opened:
            watched.page.context.close()


# Package scope, not session: Playwright's sync API keeps an asyncio loop running in this thread
# while it is open, and the tests after this package (asyncio.run in the load and floor tests) need
# the thread free of it.
@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        message = (
            f"{CHROMIUM} is missing: install Debian's package `chromium` (apt-get install chromium); "
            "the browser tests never download a browser"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    expect.set_options(timeout=PATIENCE_MS)  # Playwright's own default is 5 s
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=PATIENCE_MS)
        yield chromium
        chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report says what each of its screens showed, and what its sockets said last."""
    report = yield
    opened = getattr(item, "funcargs", {}).get("screens")
    if report.when == "call" and report.failed and isinstance(opened, Screens):
        report.sections.append(("screens", "\n\n".join(w.report() for w in opened.opened)))
    return report


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG).serve()


@pytest.fixture
def screens(browser: Browser, daemon: Daemon, request: pytest.FixtureRequest) -> Iterator[Screens]:
    """The screens a test opens: photographed when the test ends (passed or failed), then checked
    for console errors, uncaught exceptions and CSP violations."""
    opened = Screens(browser, daemon, request.node.name)
    try:
        yield opened
        opened.photograph()
        problems = {w.name: w.unexpected() for w in opened.opened if w.unexpected()}
        assert not problems, f"errors on the screens: {problems}"
    finally:
        opened.close()
