"""What the screens read to word an entry: the live feed's backlog tells each remembered entry
with its effects, as it was told live (so a screen joining late words a card by where it went,
not only "K♥ read"), masked for the dealer as live; and a notice (a dead card) clears at Confirm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
TOKENS = {"dealer": DEALER, "supervisor": SUPERVISOR, "surveillance": SURVEILLANCE}
PLAYERS = {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}]}
DOWN = ["AS", "JD", "TS", "8D"]  # 3rd street's two passes down
UP = ["2H", "5D"]  # then up: seat 1's 2H is the lowest, seat 1 brings it in


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(Journal(tmp_path / "j.sqlite3"), game="baseball-poker", rules={}, simulated=True)


@pytest.fixture
def client(table: Table) -> TestClient:
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE), config_view={"game": "baseball-poker"})
    return TestClient(create_app(rt))


def entries(client: TestClient, role: str, after: int = 0, then: Any = None, live: int = 0) -> list[dict[str, Any]]:
    """The entries the feed sends `role`: the backlog after `after`, then `live` live ones after `then()`."""
    got: list[dict[str, Any]] = []
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": after, "token": TOKENS[role]})
        while (message := json.loads(ws.receive_text()))["type"] != "state":
            got.append(message)
        if then is not None:
            then()
            got.extend(json.loads(ws.receive_text()) for _ in range(live))
    return got


def test_the_backlog_tells_each_entry_with_the_effects_it_was_told_live_masked_as_live(
    client: TestClient, table: Table
) -> None:
    table.open_round(PLAYERS, by="dealer")

    def deal() -> None:
        for card in DOWN + UP:
            table.card(parse_card(card), {"via": "test"})

    start = table.journal.last_seq
    live = entries(client, "dealer", after=start, then=deal, live=len(DOWN + UP))
    backlog = entries(client, "dealer", after=start)
    assert [e["seq"] for e in backlog] == [e["seq"] for e in live] and len(live) == len(DOWN + UP)
    for told, late in zip(live, backlog, strict=True):
        assert late["live"] is False and told["live"] is True
        assert late["effects"] == told["effects"] and late["effects"], late
        assert late["body"] == told["body"]
    # The dealer's feed never names a face-down card, in the backlog's effects either.
    text = json.dumps(backlog)
    assert not any(f'"{c}"' in text for c in DOWN), text
    supervised = entries(client, "supervisor", after=start)
    placed = [e for e in supervised if e["kind"] == "card"]
    assert [e["body"]["card"] for e in placed] == DOWN + UP
    assert all(any(fx["kind"] == "baseball-poker.card-placed" for fx in e["effects"]) for e in placed)


def test_a_dead_card_notice_clears_when_the_dealer_confirms(table: Table) -> None:
    table.open_round(PLAYERS, by="dealer")
    for card in DOWN + UP:
        table.card(parse_card(card), {"via": "test"})
    assert table.awaiting.kind == "decision"
    table.card(parse_card("KH"), {"via": "test"})  # nobody is owed a card: seat 1 must act first
    assert table.notice is not None and table.notice.startswith("Dead card KH")
    table.button("confirm", by="dealer")
    assert table.notice is None
    # The journal says the same after a restart: the notice is not brought back.
    again = Table(table.journal, game="baseball-poker", rules={}, simulated=True)
    assert again.notice is None and again.state == table.state
