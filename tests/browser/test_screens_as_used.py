"""The screens as a dealer and a supervisor use them, at 1280x800 (issue 16, point 5), on one
simulated Baseball poker table: Enter and Space confirm while a button has focus (Enter after
"Draw card" never draws again); a dead card's notice is written 5♦ like every card, fits the prompt
box and clears at Confirm; the event log tells a card the same way in the backlog as live; seats
with 8 cards keep to themselves, their ranks and EXTRA readable; the recall of such a hand is
readable; surveillance watches the supervisor screen read-only; Devices follows the live feed."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import DOCS_SHOTS, Screens

SURVEILLANCE = "rig-surveillance-token-0123456789"
CONFIG = """
[table]
id = "BROWSER-USE"
game = "baseball-poker"
[rules]
ante = 1
small_bet = 2
big_bet = 4
"""
PLAYERS = [{"seat": s, "stack": 100} for s in range(1, 6)]
# Five players, 3rd street two passes down and one up; then a card drawn too soon is dead, and
# on 4th and 5th street a seat shows a 4 (4D, 4H): an extra card down at once, so two seats end
# with 8 cards. The rest of the deck follows in order, the queen of spades last (no rainout).
TOP = ["2C", "5C", "6C", "7C", "8C", "TC", "JC", "2D", "5D", "6D", "7D", "8D", "TD", "JD", "AS"]
TOP += ["KH", "AH", "AD", "AC", "4D", "KS", "QH", "KD", "9H", "4H", "QD", "2H", "5H"]
DECK = [r + s for r in "23456789TJQKA" for s in "CDHS"]
SHOE = TOP + [c for c in DECK if c not in TOP and c != "QS"] + ["QS"]
CARD_NOTATION = re.compile(r"\b(?:10|[2-9TJQKA])[CDHS]\b")
SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
# Shots for docs/screens/ (checked in there from here, as the other screens' shots are).
DOCS = DOCS_SHOTS / "screens"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    DOCS.mkdir(parents=True, exist_ok=True)
    yield from Daemon(tmp_path_factory.mktemp("use"), CONFIG, env={"TABLECTL_SURVEILLANCE_TOKEN": SURVEILLANCE}).serve()


@pytest.fixture
def daemon(table: Daemon) -> Daemon:
    """The module's one table (overrides the conftest's one a test)."""
    return table


def open_hand(d: Daemon) -> None:
    if d.get("/api/state")["payment"] == "due":  # the last hand's pots are pushed first
        assert d.post("/api/confirm", {})[0] == 200
    status, said = d.post("/api/rounds", {"players": PLAYERS})
    assert status == 201, said
    assert d.post("/api/sim/shoe", {"cards": SHOE})[0] == 200


def play_on(d: Daemon, until: Any) -> dict[str, Any]:
    """Deal and decide through the API (check, call, bring it in) until `until(state)`."""
    for _ in range(400):
        state: dict[str, Any] = d.get("/api/state")
        if until(state):
            return state
        awaiting = state["awaiting"]
        if awaiting["kind"] == "decision":
            action = next(a for a in ("check", "call", "bring-in", "pay") if a in awaiting["allowed"])
            assert d.post("/api/decisions", {"seat": awaiting["who"]["seat"], "action": action})[0] == 200
        elif awaiting["kind"] == "card":
            # The card comes over the simulated shoe's line: wait for it before looking again.
            assert d.post("/api/sim/draw", {"count": 1})[0] == 200
            d.wait_for("the card journaled", lambda s, seq=state["journal_seq"]: s["journal_seq"] > seq)
        else:
            raise AssertionError(f"nothing to do: {state['prompt']}")
    raise AssertionError("the hand did not get there")


def settled(state: dict[str, Any]) -> bool:
    return bool(state["round_status"] == "settled")


def written(card: str) -> str:
    """A card as the screens write it: "KH" -> "K♥", "TD" -> "10♦"."""
    return f"{'10' if card[0] == 'T' else card[0]}{SYMBOLS[card[1]]}"


def log_lines(page: Page, kind: str) -> dict[str, str]:
    """The event log's lines of entries of `kind`: seq -> the words (without the time)."""
    lines: dict[str, str] = {}
    for item in page.locator(f'#event-log li[data-kind="{kind}"]').all():
        seq = str(item.get_attribute("data-seq"))
        words = item.inner_text().split(" ", 1)[1]
        lines[seq] = f"{lines[seq]} | {words}" if seq in lines else words
    return lines


def fits(box: Locator) -> bool:
    return bool(box.evaluate("(el) => el.scrollHeight <= el.clientHeight && el.scrollWidth <= el.clientWidth"))


def boxes(page: Page, svg: str, seats: list[int]) -> dict[int, dict[str, float]]:
    """Each seat's drawn cards, tags and words as one box on screen."""
    out: dict[int, dict[str, float]] = {}
    for n in seats:
        box = page.locator(f'{svg} g.bb-seat[data-seat="{n}"] .seat-body').bounding_box()
        assert box is not None
        out[n] = box
    return out


def overlapping(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def assert_seats_readable(page: Page, svg: str, seats: list[int] | None = None, extra: bool = True) -> None:
    """No two seats' drawings meet (of `seats`: this module's players unless told); in every row
    each card shows a strip 20 px wide or more (its rank and suit in full); EXTRA (there is one
    unless `extra` is false) is 10 px tall or more."""
    drawn = boxes(page, svg, seats if seats is not None else [p["seat"] for p in PLAYERS])
    for a in drawn:
        for b in drawn:
            assert a >= b or not overlapping(drawn[a], drawn[b]), f"seats {a} and {b} overlap: {drawn[a]} {drawn[b]}"
    for n in drawn:
        cards = page.locator(f'{svg} g.bb-seat[data-seat="{n}"] .seat-cards > g.bb-card')
        rows: dict[float, list[float]] = {}
        for card in cards.all():
            box = card.locator("rect").first.bounding_box()
            assert box is not None
            # A row is the cards level with one another (a wild card's gold frame sticks out a little).
            row = next((y for y in rows if abs(y - box["y"]) < 8), box["y"])
            rows.setdefault(row, []).append(box["x"])
        assert len(rows) <= 2
        for xs in rows.values():
            gaps = [b - a for a, b in itertools.pairwise(xs)]
            assert all(g >= 20 for g in gaps), (n, gaps)
    tags = page.locator(f"{svg} .extra-tag")
    assert tags.count() >= (1 if extra else 0)
    for tag in tags.all():
        box = tag.bounding_box()
        assert box is not None and box["height"] >= 10, box


def test_the_dealer_confirms_with_the_keys_reads_cards_one_way_and_sees_8_cards_a_seat(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    dealer.expected.append(r"status of 409 .*/api/confirm")  # Confirm while nothing awaits it: refused
    screens.login(dealer, DEALER)
    open_hand(daemon)
    expect(page.locator("#prompt")).to_have_text("Deal to seat 1, face down, street 3")

    # The dealer deals 3rd street with the Draw card button, which keeps the focus.
    for _ in range(15):
        page.click("#draw-card")
        expect(page.locator("#last-card .card")).to_have_count(1)
        if daemon.get("/api/state")["awaiting"]["kind"] == "decision":
            break
    expect(page.locator("#decisions")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == "draw-card"
    before = daemon.get("/api/state")
    # Enter, then Space, with "Draw card" focused: each confirms, and with nothing to confirm
    # the dealer is told so and what comes next; no card is drawn and nothing is journaled.
    for key in ("Enter", " "):
        page.evaluate('document.getElementById("action-error").textContent = ""')
        page.keyboard.press(key)
        expect(page.locator("#action-error")).to_have_text(
            re.compile(r"^Nothing to confirm now\. Next: Seat \d, street 3: bring-in or complete\?$")
        )
        assert daemon.get("/api/state")["journal_seq"] == before["journal_seq"]
    expect(page.locator("#event-log li", has_text="Confirm pressed")).to_have_count(0)
    after = daemon.get("/api/state")
    assert after["shoe"] == before["shoe"] and after["state"]["dead_cards"] == [] and after["last_card"] == before["last_card"]

    # A card drawn while a player must act is dead: the notice names it as every card is
    # written (A♠), fits the prompt box with what follows it, and goes at Confirm.
    page.click("#draw-card")
    prompt = page.locator("#prompt")
    expect(prompt).to_contain_text("Dead card")
    dead = daemon.get("/api/state")["state"]["dead_cards"]
    assert len(dead) == 1
    expect(prompt).to_contain_text(f"Dead card {written(dead[0])} (nobody is owed a card: seat")
    assert not CARD_NOTATION.search(prompt.inner_text()), prompt.inner_text()
    assert fits(prompt)
    expect(page.locator("#confirm")).to_be_in_viewport()
    expect(page.locator("#event-log li").first).to_contain_text(f"Dead card {written(dead[0])}: nobody is owed a card")
    page.screenshot(path=str(DOCS / "dealer-dead-card.png"), animations="disabled")
    page.keyboard.press("Enter")
    expect(prompt).not_to_contain_text("Dead card")
    expect(prompt).to_have_text(re.compile(r"^Seat \d, street 3: bring-in or complete\?$"))

    # The log after a reload (the backlog) tells each card as it was told live.
    live = log_lines(page, "card")
    assert live and any("face" in words for words in live.values()), live
    page.reload()
    page.locator('#connection[data-status="live"]').wait_for()
    backlog = log_lines(page, "card")
    shared = set(live) & set(backlog)
    assert shared, (live, backlog)
    assert {s: backlog[s] for s in shared} == {s: live[s] for s in shared}

    # Down to 7th street: seats 1 and 2 hold 8 cards, an extra one each for a 4 up.
    def eight(state: dict[str, Any]) -> bool:
        return any(len(s["cards"]) >= 8 for s in state["state"]["seats"]) and state["awaiting"]["kind"] == "decision"

    state = play_on(daemon, eight)
    held = {s["seat"]: s["cards"] for s in state["state"]["seats"]}
    assert sum(len(c) == 8 for c in held.values()) == 2, held
    for n, cards in held.items():
        expect(page.locator(f'#table g.bb-seat[data-seat="{n}"] .seat-cards > g.bb-card')).to_have_count(len(cards))
    expect(page.locator("#table .extra-tag")).to_have_count(sum(c["extra"] for cards in held.values() for c in cards))
    assert_seats_readable(page, "#table")
    # A down card the dealer may not see is said once ("Card to seat 5 face down"), never named.
    expect(page.locator("#event-log li", has_text=re.compile(r"Card to seat \d face down"))).not_to_have_count(0)
    expect(page.locator("#event-log")).not_to_contain_text("face-down card to")
    page.screenshot(path=str(DOCS / "baseball-8-cards.png"), animations="disabled")
    assert state["state"]["dead_cards"] == dead  # the one drawn too soon, no other
    play_on(daemon, settled)
    expect(page.locator("#table g.bb-seat.shown")).to_have_count(len(PLAYERS))
    assert_seats_readable(page, "#table")
    assert not CARD_NOTATION.search(page.locator("#event-log").inner_text())


def test_surveillance_watches_the_supervisor_screen_read_only_and_the_recall_reads(
    daemon: Daemon, screens: Screens
) -> None:
    if not any(r["status"] == "settled" for r in daemon.get("/api/rounds?last=5")["rounds"]):
        if daemon.get("/api/state")["round_status"] != "open":
            open_hand(daemon)
        play_on(daemon, settled)
    watcher = screens.open("/supervisor", "surveillance")
    page = watcher.page
    watcher.expected.append(r"status of 403 ")
    screens.login(watcher, SURVEILLANCE)
    expect(page.locator("#read-only")).to_be_visible()
    expect(page.locator("#read-only")).to_contain_text("Read only")
    for control in ("#reason", "#replace-card", "#supervisor-name", "#void-round"):
        expect(page.locator(control)).to_be_disabled()
    expect(page.locator("#audit tbody tr").first).to_be_visible()
    expect(page.locator("#config dd").first).to_be_visible()

    # The recall of the 8-card hand: every seat readable at the last step.
    page.locator("#recall [data-round]").first.click()
    expect(page.locator("#replay")).to_be_visible()
    for _ in range(120):
        if page.locator("#replay-next").is_disabled():
            break
        page.click("#replay-next")
    expect(page.locator("#replay-step .replay-more li").first).to_be_visible()
    assert_seats_readable(page, "#replay-table")
    page.locator("#replay-table").scroll_into_view_if_needed()
    page.screenshot(path=str(DOCS / "recall-baseball.png"), animations="disabled")

    # A new hand: surveillance sees its down cards, as the access table says.
    open_hand(daemon)
    state = play_on(daemon, lambda s: s["awaiting"]["kind"] == "decision")
    assert state["state"]["dead_cards"] == []
    expect(page.locator("#live-table g.bb-card[data-face=down][data-card]")).to_have_count(2 * len(PLAYERS))
    # A fault: shown with what a supervisor could do, nothing pressable; the API refuses anyway.
    assert daemon.post("/api/sim/fault", {"fault": "misread"}, token=SUPERVISOR)[0] == 200
    assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
    fault = page.locator("#faults [data-fault-id]")
    expect(fault).to_have_count(1)
    expect(fault.locator("button.read-only-action")).not_to_have_count(0)
    for button in fault.locator("button").all():
        expect(button).to_be_disabled()
    expect(fault.locator(".clear-action, .ack-action")).to_have_count(0)
    page.locator("#sec-faults").scroll_into_view_if_needed()
    page.screenshot(path=str(DOCS / "supervisor-surveillance.png"), animations="disabled")
    fault_id = fault.get_attribute("data-fault-id")
    refused = page.evaluate(
        """async (id) => (await fetch(`/api/faults/${id}/clear`, {method: "POST", headers: {"X-Tablectl": "1",
        "Content-Type": "application/json"}, body: JSON.stringify({action: "dismiss", reason: "watching"})})).status""",
        fault_id,
    )
    assert refused == 403
    status, said = daemon.post(f"/api/faults/{fault_id}/clear", {"action": "void", "reason": "test over"}, token=SUPERVISOR)
    assert status == 200, said


def test_faults_fill_the_stop_box_without_a_scroll_bar(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    screens.login(dealer, DEALER)
    overlay = page.locator("#fault-overlay")
    # Three shoe faults at once, each with its message and what to do: the box takes them all in.
    for n, fault in enumerate(("misread", "garbage", "misread"), start=1):
        assert daemon.post("/api/sim/fault", {"fault": fault}, token=SUPERVISOR)[0] == 200
        assert daemon.post("/api/sim/shoe", {"cards": [DECK[n]]})[0] == 200
        assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
        expect(overlay.locator("[data-fault-id]")).to_have_count(n)
    box = overlay.locator(".fault-box")
    expect(overlay).to_be_visible()
    assert fits(box)
    for part in ("#fault-stop", ".fault-call", "[data-fault-id]:last-child .ack-action"):
        expect(overlay.locator(part)).to_be_in_viewport(ratio=1)
    assert not CARD_NOTATION.search(box.inner_text())
    page.screenshot(path=str(DOCS / "dealer-faults.png"), animations="disabled")
    for fault in daemon.get("/api/state")["faults"]:
        status, said = daemon.post(
            f"/api/faults/{fault['id']}/clear", {"action": "dismiss", "reason": "test"}, token=SUPERVISOR
        )
        assert status == 200, said
    expect(overlay).to_be_hidden()


def test_the_supervisor_devices_follow_the_shoe_with_no_entry_journaled(daemon: Daemon, screens: Screens) -> None:
    sup = screens.open("/supervisor", "supervisor")
    page = sup.page
    screens.login(sup, SUPERVISOR)
    shoe = page.locator('#devices [data-device="shoe"] .state')
    expect(shoe).to_contain_text("connected")
    assert daemon.post("/api/sim/fault", {"fault": "silent"}, token=SUPERVISOR)[0] == 200
    expect(shoe).to_contain_text("silent")
    seq = daemon.get("/api/state")["journal_seq"]
    assert daemon.post("/api/sim/fault", {"fault": "silent", "on": False}, token=SUPERVISOR)[0] == 200
    # The shoe speaks again: only its status changes (nothing is journaled), and Devices shows it.
    expect(shoe).to_contain_text("connected")
    assert daemon.get("/api/state")["journal_seq"] == seq
    page.locator("#sec-devices").scroll_into_view_if_needed()
    page.screenshot(path=str(DOCS / "supervisor-devices.png"), animations="disabled")
