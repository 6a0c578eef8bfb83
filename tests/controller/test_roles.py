"""Who may read what, and what each role sees: every route tried with every role (and none), the
README's table checked against the access table the app enforces, and a Baseball poker hand with
face-down cards read through everything the dealer's role receives (state, recall, the live
feed, the prompts, the pole display, the log): no down card's text in any of it while the hand
is live, and after it the folded player's down cards still hidden; the supervisor and
surveillance see every card."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from controller.adapters.outputs import DisplayOutput
from controller.api.access import ACCESS
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from drivers.display.messages import Frame

DEALER = "dealer-token-0123456789"
SUPERVISOR = "supervisor-token-0123456789"
SURVEILLANCE = "surveillance-token-0123456789"
TOKENS = {"dealer": DEALER, "supervisor": SUPERVISOR, "surveillance": SURVEILLANCE}
README = Path(__file__).resolve().parents[2] / "README.md"

PLAYERS = {"players": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 3, "stack": 100}]}
# 3rd street: down x3, down x3, up x3; seat 3's up card is a 4, so its extra face-down card comes
# at once (KH). Then 4th to 6th street up, 7th down. No queen of spades face up, no other 4.
CARDS = [
    "AS", "JD", "7C",  # down
    "TS", "8D", "6C",  # down
    "2H", "5D", "4C",  # up (seat 3's 4: the extra card next)
    "KH",  # seat 3's extra card, down
    "9S", "TC", "JH",  # 4th
    "8S", "2D", "5C",  # 5th
    "7D", "6H", "3C",  # 6th
    "AC", "QD", "KC",  # 7th, down
]


def bearer(role: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"} if role else {}


class RecordingDisplay:
    """The pole display as the players read it: everything it was asked to show, in order."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def show_fault(self, text: str, *, again: bool = True) -> None:
        self.shown.append(text)

    def show_payout(self, seat: int, amount: int, *, again: bool = True) -> None:
        self.shown.append(f"PAY SEAT {seat} {amount}")

    def show(self, frame: Frame, *, again: bool = True) -> None:
        self.shown.append(f"{frame.upper} / {frame.lower}")

    def show_idle(self, title: str, *, again: bool = True) -> None:
        self.shown.append(title)


@pytest.fixture
def display() -> RecordingDisplay:
    return RecordingDisplay()


@pytest.fixture
def table(tmp_path: Path, display: RecordingDisplay) -> Table:
    output = DisplayOutput(display, "Baseball poker")  # type: ignore[arg-type]
    return Table(
        Journal(tmp_path / "j.sqlite3"), game="baseball-poker", rules={}, simulated=True, outputs=[output]
    )


@pytest.fixture
def client(table: Table) -> TestClient:
    rt = Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR, SURVEILLANCE), config_view={"game": "baseball-poker"})
    return TestClient(create_app(rt))


def deal(table: Table, cards: list[str], *, count: int) -> list[str]:
    """Deal `count` cards of `cards` (taking them off the list), the players acting between them
    as the table asks: seat 1 folds at its first chance, the others check or call."""
    while count:
        awaiting = table.awaiting
        if awaiting.kind == "card":
            table.card(parse_card(cards.pop(0)), {"via": "test"})
            count -= 1
        elif awaiting.kind == "decision":
            act(table, awaiting.who["seat"], awaiting.allowed)
        else:
            break
    return cards


def act(table: Table, seat: int, allowed: tuple[str, ...]) -> None:
    if seat == 1 and "fold" in allowed:
        action = "fold"
    else:
        action = next(a for a in ("check", "call", "bring-in", "decline", *allowed) if a in allowed)
    table.decide({"seat": seat, "action": action}, by="dealer")


def finish(table: Table, cards: list[str]) -> None:
    while table.awaiting.kind != "round":
        deal(table, cards, count=1) if table.awaiting.kind == "card" else act(
            table, table.awaiting.who["seat"], table.awaiting.allowed
        )


def down_cards(client: TestClient, seats: set[int] | None = None) -> set[str]:
    """The face-down cards of the seats, read with the supervisor's token."""
    state = client.get("/api/state", headers=bearer("supervisor")).json()["state"]
    return {
        c["card"]
        for s in state["seats"]
        if seats is None or s["seat"] in seats
        for c in s["cards"]
        if c["face"] == "down"
    }


def leaked(text: str, cards: set[str]) -> set[str]:
    """The cards of `cards` whose text stands as a word in `text` ("AS", not "LAST")."""
    return {c for c in cards if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", text)}


def dealer_reads(client: TestClient) -> dict[str, str]:
    """Everything the dealer's role may GET, as the text it receives."""
    reads = {}
    for key, roles in ACCESS.items():
        method, path = key.split(" ", 1)
        if method != "GET" or (roles is not None and "dealer" not in roles) or not path.startswith("/api/"):
            continue
        url = path.replace("{number}", "1")
        response = client.get(url, headers=bearer("dealer"))
        assert response.status_code in (200, 404), (url, response.text)
        reads[url] = response.text
    return reads


def feed(client: TestClient, role: str, *, after: int = 0, live: int = 0, then: Any = None) -> list[str]:
    """What the live feed sends `role`: the backlog after `after`, the state, and `live` more
    messages once `then()` has run."""
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": after, "token": TOKENS[role]})
        got = []
        while True:
            got.append(ws.receive_text())
            if '"type":"state"' in got[-1][:20]:
                break
        if then is not None:
            then()
            got.extend(ws.receive_text() for _ in range(live))
    return got


# -- the access table ---------------------------------------------------------------------------


def test_every_route_of_the_app_is_in_the_access_table_and_nothing_else_is(client: TestClient) -> None:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    routes = {f"{method.upper()} {path}" for path, ops in paths.items() for method in ops}
    # The pages, the feed, the schema itself and the Prometheus scrape are not in the schema.
    routes |= {"GET /", "GET /supervisor", "WS /api/ws", "GET /api/openapi.json", "GET /metrics"}
    assert routes == set(ACCESS)


def test_the_readme_table_of_roles_is_the_table_the_app_enforces() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Who may read what", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    said: dict[str, tuple[str, ...] | None] = {}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        route, anyone, *by_role = cells
        for key in re.findall(r"`([^`]+)`", route):
            if anyone != "no":
                said[key] = None
            else:
                said[key] = tuple(r for r, cell in zip(("dealer", "supervisor", "surveillance"), by_role, strict=True) if cell != "no")
    assert said == ACCESS


@pytest.mark.parametrize("role", [None, "dealer", "supervisor", "surveillance"])
@pytest.mark.parametrize("key", [k for k in ACCESS if not k.startswith("WS ")])
def test_each_route_answers_each_role_as_the_access_table_says(
    client: TestClient, table: Table, key: str, role: str | None
) -> None:
    method, path = key.split(" ", 1)
    url = path.replace("{number}", "1").replace("{fault_id}", "1")
    before = table.journal.last_seq
    response = client.request(method, url, headers=bearer(role), json={} if method == "POST" else None)
    allowed = ACCESS[key]
    if allowed is not None and role is None:
        assert response.status_code == 401, response.text
        assert "log in first" in response.json()["error"]
    elif allowed is not None and role not in allowed:
        assert response.status_code == 403, response.text
        assert response.json()["kind"] == "forbidden"
    else:
        assert response.status_code not in (401, 403), response.text
    if response.status_code in (401, 403):  # a refusal changes nothing at the table
        assert table.journal.last_seq == before


def test_without_a_role_health_says_only_whether_the_table_is_up(client: TestClient) -> None:
    assert client.get("/api/health").json() == {"status": "ok"}
    assert client.get("/api/health", headers=bearer("surveillance")).json()["game"] == "baseball-poker"


def test_surveillance_reads_everything_the_supervisor_reads_and_changes_nothing(client: TestClient) -> None:
    for path in ("/api/audit", "/api/config", "/api/meters"):
        assert client.get(path, headers=bearer("surveillance")).status_code == 200
    for path, body in (("/api/rounds", PLAYERS), ("/api/confirm", {}), ("/api/rounds/current/void", {"reason": "x"})):
        refused = client.post(path, json=body, headers=bearer("surveillance"))
        assert refused.status_code == 403 and "not the surveillance's" in refused.json()["error"]


# -- face-down cards ----------------------------------------------------------------------------


def test_no_down_card_of_a_live_hand_reaches_the_dealer_anywhere(
    client: TestClient, table: Table, display: RecordingDisplay, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    cards = list(CARDS)
    assert client.post("/api/rounds", json=PLAYERS, headers=bearer("dealer")).status_code == 201
    deal(table, cards, count=8)
    received = dealer_reads(client)
    # The live feed: the backlog, then seat 3's 4 face up and its extra card face down, live.
    received["feed"] = "\n".join(feed(client, "dealer", live=2, then=lambda: deal(table, cards, count=2)))
    down = down_cards(client)
    assert down == {"AS", "JD", "7C", "TS", "8D", "6C", "KH"}
    # A decision through the API: its answer's prompt.
    awaiting = client.get("/api/state", headers=bearer("dealer")).json()["awaiting"]
    decided = client.post(
        "/api/decisions", json={"seat": awaiting["who"]["seat"], "action": "bring-in"}, headers=bearer("dealer")
    )
    assert decided.status_code == 200, decided.text
    received["decision"] = decided.text
    received |= {f"after {k}": v for k, v in dealer_reads(client).items()}
    # Every other route too, as the dealer calls it (its answer, or its refusal's words).
    for key in ACCESS:
        method, path = key.split(" ", 1)
        if method != "WS" and path.startswith("/api/"):
            url = path.replace("{number}", "1").replace("{fault_id}", "1")
            received[key] = client.request(method, url, headers=bearer("dealer"), json={} if method == "POST" else None).text
    for where, text in received.items():
        assert not leaked(text, down), f"{where} shows the down cards {leaked(text, down)}"
    state = client.get("/api/state", headers=bearer("dealer")).json()
    # The dealer's drawing still has every card, face down ones as backs: what to draw, not what they are.
    seat3 = next(s for s in state["state"]["seats"] if s["seat"] == 3)
    assert [c["face"] for c in seat3["cards"]] == ["down", "down", "up", "down"]
    assert [c["card"] for c in seat3["cards"]] == ["face-down card", "face-down card", "4C", "face-down card"]
    assert "4C" in received["feed"] and "5D" in received["feed"]  # the up cards are there
    assert not leaked("\n".join(display.shown), down), display.shown
    assert not leaked(caplog.text, down)
    # The supervisor and surveillance see every card, in the state and in the feed.
    for role in ("supervisor", "surveillance"):
        seen = client.get("/api/state", headers=bearer(role)).text
        assert leaked(seen, down) == down
        assert leaked("\n".join(feed(client, role)), down) == down


def test_the_pole_display_never_says_which_card_went_face_down(table: Table, display: RecordingDisplay) -> None:
    table.open_round(PLAYERS, by="dealer")
    cards = deal(table, list(CARDS), count=10)
    assert any("LAST 4C" in line for line in display.shown)  # an up card is named
    assert not leaked("\n".join(display.shown), {"AS", "JD", "7C", "TS", "8D", "6C", "KH"}), display.shown
    finish(table, cards)


def test_a_card_held_by_a_fault_that_would_go_face_down_stays_hidden_from_the_dealer(
    client: TestClient, table: Table, display: RecordingDisplay
) -> None:
    table.open_round(PLAYERS, by="dealer")
    table.card(parse_card("AS"), {"via": "test"})  # down to seat 1
    table.card(parse_card("AS"), {"via": "test"})  # again: a single deck holds one; seat 2's down card
    state = client.get("/api/state", headers=bearer("dealer")).json()
    assert state["blocked"] and state["faults"][0]["code"] == "impossible-card"
    assert not leaked(client.get("/api/state", headers=bearer("dealer")).text, {"AS"})
    assert not leaked("\n".join(display.shown), {"AS"})
    # A refusal quoting the prompt ("play is stopped: STOP: ...") is masked for the dealer too.
    refused = client.post("/api/decisions", json={"seat": 1, "action": "fold"}, headers=bearer("dealer"))
    assert refused.status_code == 409 and "play is stopped" in refused.json()["error"]
    assert not leaked(refused.text, {"AS"})
    assert leaked(client.post("/api/decisions", json={"seat": 1, "action": "fold"}, headers=bearer("supervisor")).text, {"AS"})
    fault = client.get("/api/state", headers=bearer("supervisor")).json()["faults"][0]
    assert fault["card"] == "AS" and "AS" in fault["message"]


def test_after_the_hand_the_folded_players_down_cards_stay_hidden_from_the_dealer(
    client: TestClient, table: Table
) -> None:
    client.post("/api/rounds", json=PLAYERS, headers=bearer("dealer"))
    cards = deal(table, list(CARDS), count=10)
    folded_down = down_cards(client, {1})
    finish(table, cards)
    assert client.get("/api/state", headers=bearer("dealer")).json()["round_status"] == "settled"
    settlement = client.get("/api/rounds/1", headers=bearer("supervisor")).json()["settlement"]
    assert settlement["showdown"] and next(p for p in settlement["players"] if p["seat"] == 1)["folded"]
    shown_down = {c for p in settlement["players"] if p["seat"] != 1 for c in p["cards"] if c not in p["up"]}
    assert folded_down == {"AS", "TS"} and shown_down
    for where, text in {**dealer_reads(client), "feed": "\n".join(feed(client, "dealer"))}.items():
        assert not leaked(text, folded_down), f"{where} shows the folded seat's down cards"
    # At the showdown the players still in turn their down cards over, for the dealer too.
    assert leaked(client.get("/api/rounds/1", headers=bearer("dealer")).text, shown_down) == shown_down
    assert leaked(client.get("/api/rounds/1", headers=bearer("surveillance")).text, folded_down) == folded_down
    # The round file (every card in shoe order) is recall: the supervisor's and surveillance's.
    assert client.get("/api/rounds/1/file", headers=bearer("dealer")).status_code == 403
    assert client.get("/api/rounds/1/file", headers=bearer("surveillance")).json()["cards"][:2] == ["AS", "JD"]


def test_after_a_rainout_the_earlier_deal_is_shown_as_it_was_dealt(client: TestClient, table: Table) -> None:
    client.post("/api/rounds", json=PLAYERS, headers=bearer("dealer"))
    # 3rd street: six down cards, then seat 1's 2H up and seat 2's queen of spades up: rainout.
    for card in ("AS", "JD", "7C", "TS", "8D", "6C", "2H"):
        table.card(parse_card(card), {"via": "test"})
    live = feed(client, "dealer", live=1, then=lambda: table.card(parse_card("QS"), {"via": "test"}))
    assert table.state.rainouts == 1
    assert '"kind":"baseball-poker.rainout"' in live[-1] and '"card":"QS"' in live[-1]
    deal(table, ["KH", "9D", "5C"], count=3)  # the re-deal's first pass, face down
    text = "\n".join([*dealer_reads(client).values(), *feed(client, "dealer"), *live])
    assert leaked(text, {"AS", "JD", "7C", "TS", "8D", "6C", "KH", "9D", "5C"}) == set()
    assert leaked(text, {"2H", "QS"}) == {"2H", "QS"}  # the earlier deal's up cards and the rainout


def test_the_surveillance_token_comes_from_the_environment_or_a_file_and_is_optional(tmp_path: Path) -> None:
    from controller.api.auth import TokenError, load_tokens

    base = {"TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
    assert load_tokens(simulated=False, env=base).role_of(SURVEILLANCE) is None  # no token: nobody has the role
    token_file = tmp_path / "surveillance-token"
    token_file.write_text(SURVEILLANCE + "\n")
    tokens = load_tokens(simulated=False, env={**base, "TABLECTL_SURVEILLANCE_TOKEN_FILE": str(token_file)})
    assert tokens.role_of(SURVEILLANCE) == "surveillance" and tokens.role_of(DEALER) == "dealer"
    with pytest.raises(TokenError, match="must all differ"):
        load_tokens(simulated=False, env={**base, "TABLECTL_SURVEILLANCE_TOKEN": DEALER})
    with pytest.raises(TokenError, match="TABLECTL_SURVEILLANCE_TOKEN: the surveillance token is too short"):
        load_tokens(simulated=False, env={**base, "TABLECTL_SURVEILLANCE_TOKEN": "short"})
    made = load_tokens(simulated=True, env={})
    assert made.generated and made.surveillance and made.role_of(made.surveillance) == "surveillance"


def test_cards_held_while_play_is_stopped_stay_hidden_from_the_dealer_until_dealt(client: TestClient, table: Table) -> None:
    table.open_round(PLAYERS, by="dealer")
    deal(table, list(CARDS[:6]), count=6)  # the six down cards
    table.card(parse_card("JK"), {"via": "test"})  # no joker in a Baseball deck: play stops at an up card
    for card in ("2H", "5D"):  # read while play is stopped: held, not yet dealt anywhere
        table.card(parse_card(card), {"via": "test"})
    dealer = client.get("/api/state", headers=bearer("dealer")).json()
    assert dealer["blocked"] and dealer["held_cards"] == ["face-down card", "face-down card"]
    assert dealer["faults"][0]["actions"] == ["replace", "void"]  # a joker cannot be confirmed here
    assert client.get("/api/state", headers=bearer("surveillance")).json()["held_cards"] == ["2H", "5D"]
