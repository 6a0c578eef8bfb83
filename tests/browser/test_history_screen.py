"""The supervisor's screen says when the floor has not confirmed the table's history (issue 31):
a table with a [floor] whose store does not answer at start plays on, and its Devices panel says
"history not confirmed by the floor since ..."."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from controller.testing import SUPERVISOR, Daemon, free_port

from .conftest import CONFIG, Screens


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    # A broker address nothing listens on: no floor store can answer the table's start-up question.
    floor = f'\n[floor]\nbroker = "mqtt://127.0.0.1:{free_port()}"\nsite = "test-floor"\n'
    yield from Daemon(tmp_path, CONFIG + floor).serve()


def test_the_supervisor_screen_says_the_history_is_not_confirmed_by_the_floor(daemon: Daemon, screens: Screens) -> None:
    sup = screens.open("/supervisor", "supervisor")
    screens.login(sup, SUPERVISOR)
    card = sup.page.locator('#devices [data-device="history"]')
    expect(card.locator(".state")).to_have_text("not confirmed")
    expect(card).to_contain_text("history not confirmed by the floor since never (since this journal began)")
    assert daemon.get("/api/state")["faults"] == []  # the table plays meanwhile
