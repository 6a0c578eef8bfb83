"""A tablet stays logged in while the daemon restarts (its session is kept in the state
directory), and a screen that is logged out says why: the table's tokens changed, or the person
signed out. (Expiry, on the session's own clock, is shown by tests/controller/test_sessions.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from controller.testing import DEALER, Daemon

from .conftest import CONFIG, Screens

NEW_DEALER = "the-new-dealer-token-0123456789"
WAIT_MS = 60_000  # a backstop only: the screen reconnects as soon as the table answers


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG).serve()


def test_the_dealer_stays_logged_in_across_a_restart_and_is_told_why_when_not(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    # While the table is down the screen's requests fail, and with a new token they are refused.
    dealer.expected += [r"ERR_CONNECTION_REFUSED", r"WebSocket", r"status of 401"]
    screens.login(dealer, DEALER)
    link = page.locator("#connection")

    assert daemon.stop() == 0, daemon.log()
    expect(link).not_to_have_attribute("data-status", "live", timeout=WAIT_MS)
    daemon.start()
    expect(link).to_have_attribute("data-status", "live", timeout=WAIT_MS)
    expect(page.locator("#login")).to_be_hidden()
    expect(page.locator("#prompt")).to_have_text("Place wagers and open the round")

    # The table starts again with another dealer token: the old session ends, and the screen says why.
    assert daemon.stop() == 0, daemon.log()
    daemon.env["TABLECTL_DEALER_TOKEN"] = NEW_DEALER
    daemon.start()
    expect(page.locator("#login")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#login-error")).to_have_text(
        "The table's dealer token has changed since this screen logged in: log in with the new token."
    )
    screens.login(dealer, NEW_DEALER)

    page.click("#logout")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#login-error")).to_have_text("You signed out of this screen.")
