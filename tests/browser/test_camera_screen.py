"""The overhead camera on the screens in Chromium, with `tablectl run --sim` rendering and reading
a simulated felt: chips placed as a player places them (POST /api/sim/scene) are proposed on the
dealer screen, opened with one press, dealt, and the payouts on the felt checked; a knocked camera
stops both screens until the supervisor recalibrates it.

The felt is tests/hil/test_vision_table.py's: single-colour stacks of red 5s in 4, 8, 12 or 16
chips, which the reader reads right in every zone used here at the default camera geometry
(vision/README.md). Every wait for the camera is bounded: it renders a few frames a second and
settles a change in about half a second, more on a busy machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import Screens

CONFIG = """
[table]
id = "BROWSER-CAM"
[indicators]
pin_map = "small-gpio"
[camera]
fps = 4
stable_frames = 2
"""
R = 5  # a red chip

# A solo player at seat 6 bets all three bases and 3 outs insurance and puts the blind puck on
# seat 7 (the first test of tests/hil/test_vision_table.py).
FELT = {
    "seat6.first": [R] * 8,
    "seat6.second": [R] * 4,
    "seat6.third": [R] * 4,
    "seat6.three_outs": [R] * 4,
}
# GAMES.md 1: 5H at first base moves the stack to second; 3D at second and 4S at third go home;
# the blind hand at seat 7 takes a card after each of seat 6's (face down: 2C, 7C, KH). Every base wager is home at even
# money, so 40 + 20 + 20 = 80 is owed beside home plate; the insurance loses.
CARDS = ["5H", "2C", "3D", "7C", "4S", "KH"]
OWED = 40 + 20 + 20


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The conftest's simulated table with a simulated overhead camera (overrides its `daemon`)."""
    yield from Daemon(tmp_path, CONFIG).serve()


class HeldFeed:
    """The screen's live feed through a valve: while held, what the table sends waits, as on a
    slow link, so the screen shows a view of the felt that is no longer the table's."""

    def __init__(self) -> None:
        self.held = False
        self.waiting: list[str | bytes] = []
        self.page_side: WebSocketRoute | None = None

    def route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        self.page_side = ws
        ws.on_message(server.send)
        server.on_message(self.from_table)

    def from_table(self, message: str | bytes) -> None:
        if self.held:
            self.waiting.append(message)
        elif self.page_side is not None:
            self.page_side.send(message)

    def release(self) -> None:
        self.held = False
        waiting, self.waiting = self.waiting, []
        for message in waiting:
            self.from_table(message)


def proposal(state: dict[str, Any]) -> dict[str, Any]:
    return dict((state.get("camera") or {}).get("proposal") or {})


def place(daemon: Daemon, zones: dict[str, list[int]], **more: Any) -> None:
    """Chips (and hands, pucks, knocks) on the simulated felt, as a player's hands put them."""
    status, answer = daemon.post("/api/sim/scene", {"zones": zones, **more})
    assert status == 200, answer


def base(seat: int, name: str) -> str:
    return f'#table g[data-seat="{seat}"][data-base="{name}"]'


def draw_and_see(page: Page, card: str) -> None:
    page.click("#draw-card")
    expect(page.locator(f'#last-card .card[data-card="{card}"]')).to_be_visible()
    expect(page.locator("#action-error")).to_have_text("")


def test_chips_on_the_felt_open_the_round_and_a_short_payout_is_shown_then_stops_play(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    feed = HeldFeed()
    page.route_web_socket(re.compile(r"/api/ws$"), feed.route)  # before the login opens the feed
    # Chromium logs the table's refusal of a stale proposal (a 409) as a console error.
    dealer.expected.append(r"status of 409 .*/api/rounds/from-camera")
    screens.login(dealer, DEALER)
    badge = page.locator("#camera-badge")
    expect(badge).to_have_attribute("data-status", "ok")
    expect(badge).to_have_text("Camera watching")
    expect(page.locator("#camera-banner")).to_be_hidden()

    # The player's chips go down with a hand still over first base: the camera cannot read it,
    # so the round cannot open from the felt yet, and that base is greyed on the drawing.
    place(daemon, FELT, pucks={"blind": "seat7.puck"}, hands=[{"over": "seat6.first"}])
    panel = page.locator("#camera-panel")
    not_ready = page.locator("#camera-not-ready")
    expect(not_ready).to_contain_text("Not ready: cannot read Seat 6 first base (blocked")
    expect(page.locator("#camera-open")).to_be_hidden()
    expect(page.locator(base(6, "first"))).to_have_attribute("data-camera", "blocked")
    expect(page.locator('#camera-seats tr[data-seat="6"] td[data-bet="first"]')).to_have_text("?")
    expect(page.locator(base(6, "second"))).not_to_have_attribute("data-camera", re.compile(".*"))

    # The hand goes: the camera proposes what stands on the felt, seat by seat.
    place(daemon, {}, hands=[])
    open_button = page.locator("#camera-open")
    expect(open_button).to_be_visible()
    expect(panel).to_have_attribute("data-ready", "true")
    expect(not_ready).to_be_hidden()
    expect(page.locator(base(6, "first"))).not_to_have_attribute("data-camera", re.compile(".*"))
    seat6 = page.locator('#camera-seats tr[data-seat="6"]')
    expected = {"first": "40", "second": "20", "third": "20", "three_outs": "20", "poker_bonus": ""}
    for bet, amount in expected.items():
        expect(seat6.locator(f'td[data-bet="{bet}"]')).to_have_text(amount)
    expect(page.locator("#camera-seats tbody tr")).to_have_count(1)
    expect(page.locator("#camera-blind")).to_have_text("Blind puck at seat 7")
    expect(page.locator("#prompt")).to_contain_text("Camera sees seat 6 first base 40")
    assert daemon.get("/api/state")["round"] is None  # proposed, not opened: the dealer decides
    screens.keep_for_docs(dealer, "camera")

    # The player adds four chips to first base while the screen's link lags: the dealer presses
    # on the 40 still shown, the table refuses (the felt changed), and the screen shows 60.
    feed.held = True
    place(daemon, {"seat6.first": [R] * 12})
    daemon.wait_for(
        "the camera to see 60 on first base",
        lambda s: proposal(s).get("seats", [{}])[0].get("wagers", {}).get("first") == 60,
    )
    first = seat6.locator('td[data-bet="first"]')
    expect(first).to_have_text("40")
    open_button.click()
    expect(page.locator("#camera-error")).to_contain_text("the wagers on the felt changed since you looked")
    expect(first).to_have_text("60")
    assert daemon.get("/api/state")["round"] is None
    feed.release()
    # The player takes the four chips back; the camera proposes 40 again, and the dealer opens it.
    place(daemon, {"seat6.first": [R] * 8})
    expect(first).to_have_text("40")
    expect(panel).to_have_attribute("data-ready", "true")
    open_button.click()
    expect(panel).to_be_hidden()
    expect(page.locator("#camera-error")).to_have_text("")
    expect(page.locator("#round-info")).to_contain_text("Round 1")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 6, first base")
    expect(page.locator(base(6, "first"))).to_have_attribute("data-wagers", "first")
    expect(page.locator("#event-log li", has_text="Round 1 opened from the camera: seat 6")).to_have_count(1)
    # The round holds exactly the chips on the felt (the engine's state, as the API gives it).
    engine = daemon.get("/api/state")["state"]
    assert [seat["bet"] for seat in engine["seats"]] == [
        {"seat": 6, "wagers": {"first": 40, "second": 20, "third": 20}, "side_bets": {"three_outs": 20}}
    ]
    assert engine["blind_seat"] == 7

    status, stacked = daemon.post("/api/sim/shoe", {"cards": CARDS})
    assert status == 200, stacked
    for card in CARDS[0::2]:
        draw_and_see(page, card)  # seat 6's card, face up
        # The blind hand's, face down (GAMES.md 1): the dealer's screen shows its back.
        page.click("#draw-card")
        expect(page.locator("#last-card-where")).to_contain_text("face-down card to seat 7")
        expect(page.locator("#last-card .card.back")).to_be_visible()
    expect(page.locator("#prompt")).to_have_text(f"Pay seat 6: {OWED}")

    # The simulated dealer pays the 80 beside home plate; the camera sees it right.
    check = page.locator('#payout-check tr[data-zone="seat6.home.payout"]')
    expect(check).to_have_attribute("data-state", "paid")
    expect(check.locator(".owed")).to_have_text(str(OWED))
    expect(check.locator(".seen")).to_have_text(str(OWED))
    # A careless dealer takes half of it back: 8 chips of 5 where 80 is owed.
    place(daemon, {"seat6.home.payout": [R] * 8})
    expect(check).to_have_attribute("data-state", "short")
    expect(check.locator(".seen")).to_have_text("40")
    expect(check.locator(".state")).to_have_text("short 40")
    expect(page.locator("#fault-overlay")).to_be_hidden()  # shown while paying; checked on confirm

    page.click("#confirm")
    overlay = page.locator("#fault-overlay")
    expect(overlay).to_be_visible()
    fault = overlay.locator("[data-fault-id]")
    expect(fault).to_have_count(1)
    expect(fault.locator("h2")).to_have_text("Payout mismatch")
    expect(fault.locator(".fault-message")).to_contain_text(
        f"Seat 6 home plate payout: 40 paid where {OWED} is owed (underpaid by 40)"
    )
    expect(page.locator("#prompt")).to_contain_text("STOP: Round 1: Seat 6 home plate payout")
    # Behind the stop, the camera's check of round 1 keeps the same words until the next round.
    expect(page.locator("#payout-check")).to_be_hidden()
    problem = page.locator('#camera-check li.problem[data-kind="underpay"]')
    expect(problem).to_have_text(f"Seat 6 home plate payout: 40 paid where {OWED} is owed (underpaid by 40)")
    expect(page.locator("#camera-check-title")).to_have_text("Round 1: the camera found a problem")


def test_a_knocked_camera_stops_the_dealer_until_the_supervisor_recalibrates_and_clears_it(
    daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    d = dealer.page
    screens.login(dealer, DEALER)
    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    camera = s.locator("#camera-device")
    expect(camera).to_be_visible()
    expect(camera.locator("#camera-state")).to_have_text("Camera watching (simulated)")
    expect(s.locator('#devices [data-device="camera"]')).to_have_count(0)  # shown once, here
    expect(camera.locator('dd[data-key="read time"]')).to_have_text(re.compile(r"^\d+(\.\d)? ms a frame$"))
    # the lens's sharpness measured on the markers (vision/health.py): the simulated lens is sharp
    expect(camera.locator('dd[data-key="lens blur"]')).to_have_text(re.compile(r"^0\.\d px at the markers$"))
    expect(camera.locator('dd[data-key="stream"]')).to_have_text("raw frames")
    expect(camera.locator('dd[data-key="camera fault"]')).to_have_count(0)

    place(daemon, {}, bump=True)
    # The dealer: the badge, the banner saying why, and the stop taking over the screen.
    expect(d.locator("#camera-badge")).to_have_attribute("data-status", "bumped")
    expect(d.locator("#camera-badge")).to_have_text("Camera moved")
    expect(d.locator("#camera-banner")).to_contain_text("Camera moved: ")
    expect(d.locator("#camera-banner")).to_contain_text("until a supervisor recalibrates it")
    fault = d.locator("#fault-overlay [data-fault-id]")
    expect(fault.locator("h2")).to_have_text("Camera moved")
    expect(fault.locator(".fault-message")).to_contain_text("until a supervisor recalibrates the camera")
    fault_id = fault.get_attribute("data-fault-id")
    # Chromium logs the table's refusal below (a 409) as a console error.
    supervisor.expected.append(rf"status of 409 .*/api/faults/{fault_id}/clear")

    # The supervisor cannot wave it away while the camera still sees its markers moved.
    item = s.locator(f'#faults article[data-fault-id="{fault_id}"]')
    expect(item.locator("h3")).to_have_text(f"Camera moved (fault {fault_id})")
    expect(camera.locator("#camera-state")).to_have_text("Camera moved (simulated)")
    s.fill("#reason", "camera knocked by a player, set back")
    item.locator('.clear-action[data-action="dismiss"]').click()
    expect(s.locator("#action-error")).to_contain_text("recalibrate it first")
    expect(d.locator("#fault-overlay")).to_be_visible()

    # Recalibrate from the fault itself: the camera measures where it now stands, and is back.
    item.locator(".recalibrate-action").click()
    expect(s.locator("#action-done")).to_contain_text("The camera calibrates from its next frame")
    expect(camera.locator("#camera-state")).to_have_text("Camera watching (simulated)")
    expect(d.locator("#camera-badge")).to_have_attribute("data-status", "ok")
    expect(d.locator("#camera-banner")).to_be_hidden()
    expect(d.locator("#fault-overlay")).to_be_visible()  # the stop stays until it is cleared

    item.locator('.clear-action[data-action="dismiss"]').click()
    expect(s.locator("#action-done")).to_have_text(f"Fault {fault_id} cleared: Dismiss.")
    expect(s.locator("#faults")).to_have_text("No open faults: play can go on.")
    expect(d.locator("#fault-overlay")).to_be_hidden()
    expect(d.locator("#prompt")).to_have_text("Place wagers and open the round")
    expect(d.locator("#event-log li", has_text="Camera moved: ").first).to_be_visible()


def test_a_payout_the_camera_is_not_sure_of_at_the_confirm_stays_open_on_the_supervisor_screen_with_why(
    daemon: Daemon, screens: Screens
) -> None:
    supervisor = screens.open("/supervisor", "supervisor")
    screens.login(supervisor, SUPERVISOR)
    s = supervisor.page
    # A round opened by hand: the simulated dealer puts its wager on the felt; a 3 sends it home.
    assert daemon.post("/api/rounds", {"seats": [{"seat": 6, "wagers": {"first": 40}}]})[0] == 201
    assert daemon.post("/api/sim/shoe", {"cards": ["3H"]})[0] == 200
    assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200
    paid = [{"seat": 6, "zone": "seat6.home.payout", "owed": 40, "seen": 40, "state": "paid"}]
    daemon.wait_for("the 40 paid beside home plate", lambda st: (st.get("camera") or {}).get("payouts") == paid)
    # The dealer's hand is still over the payout when the dealer confirms: the camera cannot read it.
    place(daemon, {}, hands=[{"over": "seat6.home.payout"}])
    daemon.wait_for(
        "the hand over the payout",
        lambda st: (st.get("camera") or {}).get("payouts", [{}])[0].get("why", "").startswith("blocked"),
    )
    assert daemon.post("/api/confirm", {})[0] == 200

    box = s.locator("#camera-payouts")
    expect(box).to_have_attribute("data-result", "open")
    expect(s.locator("#camera-payouts-title")).to_have_text("Round 1 payouts: waiting for the camera on 1 payout")
    waiting = s.locator('#camera-payouts-list li.open[data-zone="seat6.home.payout"]')
    expect(waiting).to_contain_text("Seat 6 home plate payout: 40 owed, waiting for the camera (blocked: ")
    assert daemon.get("/api/state")["faults"] == []  # neither passed nor failed

    # The hand leaves; the simulated players took their winnings at the confirm: the camera reads
    # the circle empty, which is not the stack that was paid. Closed as not checked, never failed.
    place(daemon, {}, hands=[])
    expect(box).to_have_attribute("data-result", "partial")
    expect(s.locator("#camera-payouts-title")).to_have_text("Round 1 payouts: checked in part")
    expect(s.locator("#camera-payouts-list li.unchecked")).to_contain_text(
        "Seat 6 home plate payout: not checked (taken before the camera was sure of it; it said "
    )
    expect(s.locator("#camera-payouts-list li.open")).to_have_count(0)
    assert daemon.get("/api/state")["faults"] == []
