"""`tablectl shoe-check` against the simulated shoe: all pass when it keeps the protocol, and
with each deliberate firmware bug exactly the case that checks that rule fails."""

from __future__ import annotations

import math
import os
import select
import subprocess
import sys
import threading
import time
import tty
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from drivers.shoe.clock import SharedClock
from drivers.shoe.conformance import (
    CASES,
    CaseFailed,
    Host,
    Received,
    Result,
    Timing,
    retransmit_until_acked,
    run_cases,
)
from drivers.shoe.protocol import Frame, MessageType, MisreadReason, encode_frame
from drivers.shoe.simulated import FirmwareBug, SimulatedShoe

from .conftest import WAIT

REPO = Path(__file__).resolve().parents[3]
# Faster than the protocol's defaults (1.0, 0.25, 0.05) so the kit runs in about two seconds;
# the kit is told the same timings, as an engineer tells it what the firmware was built with. How
# long it waits for the next card is only a backstop (the auto-dealing shoe deals at once).
HEARTBEAT, RETRANSMIT, HOLDOFF = 0.2, 0.15, 0.02
TIMING = Timing(heartbeat=HEARTBEAT, retransmit=RETRANSMIT, nak_holdoff=HOLDOFF, wait=WAIT)
SHOE_TIMING = {"heartbeat_interval": HEARTBEAT, "retransmit_interval": RETRANSMIT,
               "nak_holdoff": HOLDOFF}


@pytest.fixture
def rig() -> Iterator[list[SimulatedShoe]]:
    shoes: list[SimulatedShoe] = []
    yield shoes
    for shoe in shoes:
        shoe.stop()


def sim(
    rig: list[SimulatedShoe], link: str, *bugs: FirmwareBug, clock: SharedClock | None = None
) -> SimulatedShoe:
    shoe = SimulatedShoe(seed=5, link=link, auto_deal=True, misread_every=4, bugs=bugs,
                         clock=clock, **SHOE_TIMING)
    rig.append(shoe)
    shoe.start()
    return shoe


def test_every_bug_is_caught_by_a_case_the_kit_has() -> None:
    assert {bug.catches for bug in FirmwareBug} <= set(CASES)
    assert set(CASES) <= {bug.catches for bug in FirmwareBug}  # and every case catches a bug


def test_each_firmware_bug_fails_exactly_the_case_that_checks_its_rule(
    rig: list[SimulatedShoe], tmp_path: Path
) -> None:
    # One simulated shoe per bug, and one without, each on its own pty, checked side by side.
    # Each shares its clock with the kit checking it (drivers/shoe/clock.py): time moves only
    # when both sides are done with the present instant, so the verdicts on resend and reply
    # timing in 0.15 s steps are the same on a quiet machine and at a load of 20 on 2 cores.
    shoes: list[FirmwareBug | None] = [None, *FirmwareBug]
    clocks = {bug: SharedClock() for bug in shoes}

    def check(bug: FirmwareBug | None) -> list[Result]:
        return run_cases(str(tmp_path / _name(bug)), timing=TIMING, clock=clocks[bug])

    for bug in shoes:
        sim(rig, str(tmp_path / _name(bug)), *([bug] if bug else []), clock=clocks[bug])
    with ThreadPoolExecutor(max_workers=len(shoes)) as pool:
        runs = dict(zip(shoes, pool.map(check, shoes), strict=True))
    wrong = {}
    for bug, results in runs.items():
        failed = [r.case for r in results if not r.passed]
        whys = [r.why for r in results if not r.passed]
        if failed != ([bug.catches] if bug else []) or not all(whys) or len(results) != len(CASES):
            wrong[_name(bug)] = "\n  ".join(r.line for r in results)
    assert not wrong, "\n".join(f"--bug {bug}:\n  {lines}" for bug, lines in wrong.items())


def _name(bug: FirmwareBug | None) -> str:
    return bug.value if bug else "no-bug"


class _StalledShoe(SimulatedShoe):
    """A correct shoe whose thread is not scheduled for STALL s before each resend on its timer,
    as on a machine at a load of 20: on real time the kit fails it ("0.30 s between resends")."""

    def _resend(self, why: str) -> None:
        if why == "on timeout":
            time.sleep(STALL)  # not a wait: the stall itself, what a busy machine does to a thread
        super()._resend(why)


STALL = 2 * RETRANSMIT  # longer than the kit allows between resends (1.6 steps)


def test_a_correct_shoe_on_the_shared_clock_passes_however_late_its_thread_runs(
    rig: list[SimulatedShoe], link: str
) -> None:
    clock = SharedClock()
    shoe = _StalledShoe(seed=5, link=link, auto_deal=True, clock=clock, **SHOE_TIMING)
    rig.append(shoe)
    shoe.start()
    (result,) = run_cases(link, timing=TIMING, cases=["retransmit-until-acked"], clock=clock)
    assert result.passed, result.line


# The cases that judge no interval, only that an answer comes. Two processes cannot share a clock:
# `tablectl shoe-check` judges a shoe on real time, so the CLI is run on these, with a shoe that
# resends every 0.5 s (an answer is awaited 0.75 s or more, time for a busy machine's stalls);
# that a correct shoe passes all ten cases is shown on the shared clock above.
UNTIMED = ["hello-and-session", "card-framing", "misread-framing", "duplicate-after-lost-ack",
           "reconnect-with-frame-in-flight", "damaged-host-frames", "sequence-wrap"]


def test_shoe_check_passes_a_correct_sim_shoe_and_writes_junit(tmp_path: Path, link: str) -> None:
    shoe = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "sim-shoe", "--link", link, "--auto-deal",
         "--misread-every", "4", "--heartbeat", "1", "--retransmit", "0.5",
         "--nak-holdoff", str(HOLDOFF)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert shoe.stdout is not None
        assert shoe.stdout.readline().startswith("ok SIMULATED shoe on")
        junit = tmp_path / "shoe.xml"
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "shoe-check", link, "--junit", str(junit),
             "--heartbeat", "1", "--retransmit", "0.5",
             "--nak-holdoff", str(HOLDOFF), "--wait", str(WAIT), *(f"--case={c}" for c in UNTIMED)],
            cwd=REPO, capture_output=True, text=True, timeout=3 * WAIT,
        )
    finally:
        shoe.terminate()
        shoe.wait(WAIT)
        for stream in (shoe.stdin, shoe.stdout):
            if stream is not None:
                stream.close()
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split(":")[0] for line in lines[:-1]] == [f"pass {name}" for name in UNTIMED]
    assert lines[-1] == f"{len(UNTIMED)} of {len(UNTIMED)} cases passed on {link}"
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == (str(len(UNTIMED)), "0")
    assert [case.get("name") for case in suite.iter("testcase")] == UNTIMED


def test_shoe_check_exits_1_and_junit_names_the_failure(
    tmp_path: Path, rig: list[SimulatedShoe], link: str
) -> None:
    sim(rig, link, FirmwareBug.NO_HEARTBEAT)
    junit = tmp_path / "shoe.xml"
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "shoe-check", link, "--junit", str(junit),
         "--case", "heartbeat-timing", "--case", "card-framing", "--heartbeat", str(HEARTBEAT),
         "--retransmit", str(RETRANSMIT), "--wait", str(WAIT)],
        cwd=REPO, capture_output=True, text=True, timeout=3 * WAIT,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("FAIL heartbeat-timing: 0 HEARTBEAT in")
    assert done.stdout.splitlines()[1].startswith("pass card-framing")
    (failure,) = ET.parse(junit).getroot().iter("failure")
    assert "HEARTBEAT" in (failure.get("message") or "")


def test_shoe_check_on_a_port_that_does_not_exist_says_so_and_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "shoe-check", str(tmp_path / "no-shoe")],
        cwd=REPO, capture_output=True, text=True, timeout=WAIT,
    )
    assert done.returncode == 2
    assert f"cannot open the shoe at {tmp_path / 'no-shoe'}" in done.stderr


def _scripted_shoe(
    first: bytes, resend: bytes, clock: SharedClock
) -> tuple[str, threading.Thread, Callable[[], None]]:
    """A shoe on a pty that writes `first` in one write, then `resend` every RETRANSMIT s of the
    clock it shares with the kit until the host sends anything (its ACK: the only frame the host
    sends in the case), then nothing more until `halt` is called, which ends it."""
    master, slave = os.openpty()
    tty.setraw(slave)
    wake_r, wake_w = os.pipe()
    stop = threading.Event()
    clock.attach(lambda: os.write(wake_w, b"x"))

    def run() -> None:
        clock.shoe_write(master, first)
        due = clock.now() + RETRANSMIT
        while not stop.is_set():
            ready = select.select([master, wake_r], [], [], clock.shoe_wait(clock.now(), due))[0]
            clock.shoe_woke()
            if wake_r in ready:
                os.read(wake_r, 64)
            if master in ready:
                clock.shoe_read(len(os.read(master, 64)))
                due = math.inf  # acknowledged: it sends nothing more
            elif clock.now() >= due:
                clock.shoe_write(master, resend)
                due += RETRANSMIT

    thread = threading.Thread(target=run, daemon=True)

    def halt() -> None:
        stop.set()
        os.write(wake_w, b"x")
        thread.join(WAIT)
        for fd in (master, slave, wake_r, wake_w):
            os.close(fd)

    return os.ttyname(slave), thread, halt


@pytest.mark.parametrize("late_copy_first", [True, False])
def test_a_late_copy_of_the_acked_frame_read_with_the_next_is_judged_by_its_place_on_the_line(
    late_copy_first: bool,
) -> None:
    # The ACK of MISREAD 12 crossed a resend of it: the shoe's copy and its next frame, CARD 13,
    # arrive in one read, so they share a time. A copy before CARD 13 keeps one frame in flight
    # (the kit had failed a conforming shoe on it under load); a copy after CARD 13 does not.
    # The scripted shoe shares its clock with the kit, so its resends are judged on its own time.
    misread = encode_frame(12, MessageType.MISREAD, bytes([MisreadReason.UNREADABLE]))
    card = encode_frame(13, MessageType.CARD, b"6D")
    clock = SharedClock()
    path, thread, halt = _scripted_shoe(misread + card if late_copy_first else card + misread, card, clock)
    host = Host(path, 115200, TIMING, lambda _: None, clock)
    host.open()
    try:
        host.acked = Received(0.0, Frame(12, MessageType.MISREAD, bytes([MisreadReason.UNREADABLE])))
        thread.start()
        if late_copy_first:
            assert "resends of CARD SEQ 13 (6D)" in retransmit_until_acked(host)
        else:
            with pytest.raises(CaseFailed, match="MISREAD SEQ 12 came while CARD SEQ 13"):
                retransmit_until_acked(host)
    finally:
        halt()
        host.close()
