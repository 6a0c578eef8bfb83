"""The camera in the loop: `tablectl run --sim` with a simulated overhead camera as a process.

Chips are placed the way a player places them (through the simulated camera's scene route); the
simulated camera renders the felt, the daemon's reader reads the frames, and the table proposes,
checks and journals what it sees. The simulated dealer in the daemon moves the stacks as the cards
say and pays winners beside home plate. Stacks are single-colour and short (green 25s, red 5s):
what the reader reads exactly at the default camera geometry (vision/README.md); red 5s in
stacks of 4, 8, 12 and 16 read right in every zone used here.

The journal is then read back into a fresh Table, as `tablectl recall` reads it, to show that
every alert the table raised comes back from the journal alone. The last tests hand settled
views straight to a Table: the rules for stacks the dealer moves late, wagers taken back, and
payouts, without waiting for frames.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table
from controller.table.view import prompt, snapshot
from controller.testing import SUPERVISOR, Daemon, replay

CONFIG = """
[table]
id = "HIL-CAM"
[indicators]
pin_map = "small-gpio"
[camera]
fps = 4
stable_frames = 2
"""
WAIT_S = 30.0  # a frame is rendered and read in well under a second; the machine may be busy
R = 5  # a red chip


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    yield from Daemon(tmp_path, CONFIG).serve()


def camera(state: dict[str, Any]) -> dict[str, Any]:
    return dict(state.get("camera") or {})


def zone_value(state: dict[str, Any], zone: str) -> int | None:
    """The value the table holds for a zone (empty zones are not listed: 0)."""
    view = camera(state)
    if view.get("status") != "ok":
        return None
    seen = view["zones"].get(zone, {"state": "ok", "value": 0})
    return seen["value"] if seen["state"] == "ok" else None


def place(daemon: Daemon, zones: dict[str, list[int]], **more: Any) -> None:
    status, answer = daemon.post("/api/sim/scene", {"zones": zones, **more})
    assert status == 200, answer


def deal(daemon: Daemon, cards: list[str]) -> None:
    assert daemon.post("/api/sim/shoe", {"cards": cards})[0] == 200
    for _ in cards:
        assert daemon.post("/api/sim/draw", {"count": 1})[0] == 200


def journal_faults(daemon: Daemon) -> list[dict[str, Any]]:
    """The faults a Table rebuilt from the daemon's journal holds (read-only, as recall reads it)."""
    journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
    try:
        return [f.to_json() for f in Table(journal, game="grand-slam", rules={}).faults.values()]
    finally:
        journal.close()


def test_wagers_on_the_felt_are_proposed_opened_by_the_dealer_and_settled_as_replay_says(daemon: Daemon) -> None:
    # A solo player at seat 6 bets all three bases and 3 outs insurance, and puts the blind puck
    # on seat 7 beside them.
    place(
        daemon,
        {"seat6.first": [R] * 8, "seat6.second": [R] * 4, "seat6.third": [R] * 4, "seat6.three_outs": [R] * 4},
        pucks={"blind": "seat7.puck"},
    )
    expected = {
        "seats": [{"seat": 6, "wagers": {"first": 40, "second": 20, "third": 20}, "side_bets": {"three_outs": 20}}],
        "blind_seat": 7,
    }
    state = daemon.wait_for(
        "the camera to propose the wagers on the felt",
        lambda s: (
            {k: (camera(s).get("proposal") or {}).get(k) for k in expected} == expected
            and camera(s)["proposal"]["ready"]
        ),
        timeout=WAIT_S,
    )
    assert state["prompt"].startswith("Camera sees seat 6 first base 40, second base 20, third base 20")
    assert state["round"] is None  # proposed, not opened: the dealer confirms
    status, opened = daemon.post("/api/rounds/from-camera", {"scene_seq": camera(state)["proposal"]["scene_seq"]})
    assert status == 201, opened

    # 5H: first base to second; 3D: second base home; 4S: third base home; the blind hand at
    # seat 7 takes a card after each of seat 6's.
    deal(daemon, ["5H", "2C", "3D", "7C", "4S", "KH"])
    daemon.wait_for("round 1 to settle", lambda s: s["round_status"] == "settled", timeout=WAIT_S)
    record = daemon.get("/api/rounds/1")
    round_file = daemon.get("/api/rounds/1/file")
    assert round_file["seats"] == expected["seats"] and round_file["blind_seat"] == 7
    assert replay(round_file) == record["settlement"]
    seat = record["settlement"]["seats"][0]
    assert seat["net"] == 40 + 20 + 20 - 20  # every base home at even money; the insurance lost
    assert record["settlement"]["blind"] == {"seat": 7, "cards": ["2C", "7C", "KH"]}

    # The simulated dealer pays 80 beside home plate; the camera sees it, and the dealer's
    # confirmation finds every payout right.
    paid = [{"seat": 6, "zone": "seat6.home.payout", "owed": 80, "seen": 80, "state": "paid"}]
    daemon.wait_for("the payout beside home plate", lambda s: camera(s).get("payouts") == paid, timeout=WAIT_S)
    status, _ = daemon.post("/api/confirm", {})
    assert status == 200
    after = daemon.get("/api/state")
    assert after["faults"] == []
    assert camera(after)["last_check"] == {"round": 1, "checked": True, "problems": [], "unchecked": []}


def test_a_wager_raised_after_the_first_card_stops_play_as_past_posting(daemon: Daemon) -> None:
    # A round opened by hand: the simulated players put these chips down, and the camera agrees.
    body = {"seats": [{"seat": 6, "wagers": {"first": 20}}, {"seat": 7, "wagers": {"first": 40, "second": 20}}]}
    status, _ = daemon.post("/api/rounds", body)
    assert status == 201
    daemon.wait_for(
        "the camera to see the round's wagers",
        lambda s: [zone_value(s, z) for z in ("seat6.first", "seat7.first", "seat7.second")] == [20, 40, 20],
        timeout=WAIT_S,
    )
    # KD puts seat 6 out: the dealer takes those chips, which is no alert.
    deal(daemon, ["KD"])
    daemon.wait_for("seat 6's chips to be taken", lambda s: zone_value(s, "seat6.first") == 0, timeout=WAIT_S)
    assert daemon.get("/api/state")["faults"] == []

    # Seat 7 slips four more chips onto its second-base wager, which has not had its card yet.
    place(daemon, {"seat7.second": [R] * 8})
    state = daemon.wait_for("the past-posting alert", lambda s: s["blocked"], timeout=WAIT_S)
    [fault] = state["faults"]
    assert fault["code"] == "past-posting" and fault["title"] == "Past posting"
    assert fault["message"].startswith(
        "Seat 7 second base: the wager changed from 20 to 40 after the first card (the round has 20 there)"
    )
    assert state["prompt"].startswith("STOP: Seat 7 second base")
    assert daemon.get("/api/health")["status"] == "fault"
    # The next card out of the shoe is held, not dealt, until a supervisor decides.
    deal(daemon, ["6D"])
    assert daemon.wait_for("the held card", lambda s: s["held_cards"] == ["6D"], timeout=WAIT_S)["round"] == 1
    assert [(f["code"], f["message"]) for f in journal_faults(daemon)] == [(fault["code"], fault["message"])]


def test_a_payout_short_of_what_is_owed_is_shown_then_stops_the_next_round(daemon: Daemon) -> None:
    status, _ = daemon.post("/api/rounds", {"seats": [{"seat": 6, "wagers": {"first": 40}}]})
    assert status == 201
    daemon.wait_for("the camera to see the wager", lambda s: zone_value(s, "seat6.first") == 40, timeout=WAIT_S)
    deal(daemon, ["3H"])  # a 3 at first base: home, paid even money
    daemon.wait_for("round 1 to settle", lambda s: s["round_status"] == "settled", timeout=WAIT_S)
    # The dealer puts four chips of 5 beside the winning stack of eight instead of eight.
    place(daemon, {"seat6.home.payout": [R] * 4})
    short = [{"seat": 6, "zone": "seat6.home.payout", "owed": 40, "seen": 20, "state": "short"}]
    state = daemon.wait_for(
        "the short payout on the state", lambda s: camera(s).get("payouts") == short, timeout=WAIT_S
    )
    assert not state["blocked"]  # shown while the dealer pays; checked when the dealer confirms

    status, _ = daemon.post("/api/confirm", {})
    assert status == 200
    state = daemon.get("/api/state")
    [fault] = state["faults"]
    assert fault["code"] == "payout-mismatch" and fault["title"] == "Payout mismatch"
    assert "Seat 6 home plate payout: 20 paid where 40 is owed (underpaid by 20)" in fault["message"]
    [problem] = camera(state)["last_check"]["problems"]
    assert (problem["kind"], problem["owed"], problem["seen"]) == ("underpay", 40, 20)
    status, refused = daemon.post("/api/rounds", {"seats": [{"seat": 6, "wagers": {"first": 20}}]})
    assert status == 409 and "play is stopped" in refused["error"]
    assert [f["code"] for f in journal_faults(daemon)] == ["payout-mismatch"]

    status, _ = daemon.post(
        f"/api/faults/{fault['id']}/clear",
        {"action": "dismiss", "reason": "paid the missing 20", "name": "Kim"},
        token=SUPERVISOR,
    )
    assert status == 200
    assert daemon.post("/api/rounds", {"seats": [{"seat": 6, "wagers": {"first": 20}}]})[0] == 201


def test_a_hand_over_a_wager_is_no_alert_but_a_knocked_camera_stops_play_until_recalibrated(daemon: Daemon) -> None:
    place(daemon, {"seat3.first": [R] * 4}, hands=[{"over": "seat3.first"}])
    state = daemon.wait_for(
        "the hand over seat 3",
        lambda s: camera(s).get("zones", {}).get("seat3.first", {}).get("state") == "blocked",
        timeout=WAIT_S,
    )
    assert state["faults"] == [] and not camera(state)["proposal"]["ready"]
    assert "Seat 3 first base (blocked" in camera(state)["proposal"]["why_not"]

    place(daemon, {}, bump=True)
    state = daemon.wait_for("the camera-moved fault", lambda s: s["blocked"], timeout=WAIT_S)
    [fault] = state["faults"]
    assert fault["code"] == "camera-bumped" and fault["title"] == "Camera moved"
    assert "recalibrates the camera" in fault["message"] and camera(state)["status"] == "bumped"
    clear = {"action": "dismiss", "reason": "camera checked", "name": "Kim"}
    status, refused = daemon.post(f"/api/faults/{fault['id']}/clear", clear, token=SUPERVISOR)
    assert status == 409 and "recalibrate it first" in refused["error"]

    # The supervisor recalibrates the camera where it now stands; then the fault can go.
    answer = daemon.post(
        "/api/camera/recalibrate", {"reason": "camera knocked; put back", "name": "Lee"}, token=SUPERVISOR
    )
    assert answer[0] == 202
    daemon.wait_for("the camera back in service", lambda s: camera(s)["status"] == "ok", timeout=WAIT_S)
    assert daemon.post(f"/api/faults/{fault['id']}/clear", clear, token=SUPERVISOR)[0] == 200
    assert not daemon.get("/api/state")["blocked"]
    assert [f["code"] for f in journal_faults(daemon)] == []
    journal = Journal(daemon.state_dir / "journal.sqlite3", readonly=True)
    recalibrations = [e.body for e in journal.entries() if e.kind == "camera-recalibrated"]
    assert recalibrations == [{"by": "supervisor:Lee", "reason": "camera knocked; put back"}]  # in the audit trail


# -- the same rules without the camera in the loop: views handed straight to a Table ----------


def seen(table: Table, zones: dict[str, int]) -> None:
    """The camera settles on these zone values (every other zone of seats 1 and 2 empty)."""
    spots = ("first", "second", "third", "home", "three_outs", "poker_bonus")
    view = {f"seat{n}.{spot}": 0 for n in (1, 2) for spot in spots}
    view |= {f"seat{n}.{spot}.payout": 0 for n in (1, 2) for spot in ("home", "three_outs")}
    view |= zones
    table.scene_seen(
        {"camera": "ok", "why": "", "zones": {z: {"state": "ok", "value": v} for z, v in view.items()}, "pucks": {}}
    )


def memory_table() -> Table:
    return Table(Journal(":memory:"), game="grand-slam", rules={})


def card(table: Table, text: str) -> None:
    table.card(parse_card(text), {"via": "test"})


def test_stacks_the_dealer_moves_late_or_in_another_order_are_no_past_posting() -> None:
    table = memory_table()
    seen(table, {"seat1.first": 25, "seat1.second": 10, "seat1.third": 5})
    table.open_from_camera("dealer")
    card(table, "2C")  # first base to third: third holds 30
    card(table, "5H")  # second base to third: third holds 40
    # The dealer moves the second-base stack first, then the first-base one.
    seen(table, {"seat1.first": 25, "seat1.second": 0, "seat1.third": 15})
    seen(table, {"seat1.first": 0, "seat1.second": 0, "seat1.third": 40})
    assert table.faults == {}
    card(table, "KD")  # the whole stack at third is out: the dealer takes it
    seen(table, {"seat1.third": 0})
    assert table.faults == {} and snapshot(table)["round_status"] == "settled"


def test_a_wager_taken_back_before_its_card_is_past_posting_and_replays_from_the_journal() -> None:
    journal = Journal(":memory:")
    table = Table(journal, game="grand-slam", rules={})
    seen(table, {"seat1.first": 10, "seat1.second": 10})
    table.open_from_camera("dealer")
    card(table, "5H")  # first base to second: second holds 20 once the dealer moves it
    seen(table, {"seat1.first": 0, "seat1.second": 0})  # the player pulls the second-base wager
    [fault] = table.faults.values()
    assert fault.code == "past-posting"
    assert fault.message.startswith(
        "Seat 1 second base: the wager changed from 10 to nothing after the first card (the round has 10 or 20 there)"
    )
    again = Table(journal, game="grand-slam", rules={})
    assert [f.to_json() for f in again.faults.values()] == [fault.to_json()]
    assert snapshot(again)["camera"] == snapshot(table)["camera"]


def test_an_overpayment_and_a_losing_side_bet_left_on_the_felt_are_a_payout_mismatch() -> None:
    table = memory_table()
    seen(table, {"seat1.first": 10, "seat1.second": 10, "seat1.third": 10, "seat1.three_outs": 5})
    assert prompt(table) == (
        "Camera sees seat 1 first base 10, second base 10, third base 10, 3 outs insurance 5: "
        "press confirm to open the round"
    )
    table.button("confirm", "dealer")  # nothing else to confirm: it opens the proposed round
    assert snapshot(table)["round"] == 1
    for text in ("3H", "3D", "3C"):  # each base home: 30 owed; the insurance lost
        card(table, text)
    seen(table, {"seat1.home": 30, "seat1.home.payout": 40, "seat1.three_outs": 5})
    assert snapshot(table)["camera"]["payouts"] == [
        {"seat": 1, "zone": "seat1.home.payout", "owed": 30, "seen": 40, "state": "over"}
    ]
    table.button("confirm", "dealer")
    [fault] = table.faults.values()
    assert fault.code == "payout-mismatch"
    assert "Seat 1 home plate payout: 40 paid where 30 is owed (overpaid by 10)" in fault.message
    assert "Seat 1 3 outs insurance: a losing wager (5) is still on the felt" in fault.message
