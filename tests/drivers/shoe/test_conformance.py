"""`tablectl shoe-check` against the simulated shoe: all pass when it keeps the protocol, and
with each deliberate firmware bug exactly the case that checks that rule fails."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import tty
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

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


def sim(rig: list[SimulatedShoe], link: str, *bugs: FirmwareBug) -> SimulatedShoe:
    shoe = SimulatedShoe(seed=5, link=link, auto_deal=True, misread_every=4, bugs=bugs,
                         **SHOE_TIMING)
    rig.append(shoe)
    shoe.start()
    return shoe


def test_every_bug_is_caught_by_a_case_the_kit_has() -> None:
    assert {bug.catches for bug in FirmwareBug} <= set(CASES)
    assert set(CASES) <= {bug.catches for bug in FirmwareBug}  # and every case catches a bug


@pytest.mark.native_timing(
    "the kit judges each shoe's resend and reply timing in 0.15 s steps, eleven simulated shoes at "
    "once in one process: under qemu (about 7x slower) the replies come late (a pi-check run failed "
    "it for the new-session-on-hello shoe)"
)
def test_each_firmware_bug_fails_exactly_the_case_that_checks_its_rule(
    rig: list[SimulatedShoe], tmp_path: Path
) -> None:
    # One simulated shoe per bug, each on its own pty, checked side by side: the kit mostly
    # waits on the line, so eleven runs take the time of one.
    def check(bug: FirmwareBug) -> list[Result]:
        return run_cases(str(tmp_path / bug.value), timing=TIMING)

    for bug in FirmwareBug:
        sim(rig, str(tmp_path / bug.value), bug)
    with ThreadPoolExecutor(max_workers=len(FirmwareBug)) as pool:
        runs = dict(zip(FirmwareBug, pool.map(check, FirmwareBug), strict=True))
    wrong = {}
    for bug, results in runs.items():
        failed = [r.case for r in results if not r.passed]
        whys = [r.why for r in results if not r.passed]
        if failed != [bug.catches] or not all(whys):
            wrong[bug.value] = "\n  ".join(r.line for r in results)
    assert not wrong, "\n".join(f"--bug {bug}:\n  {lines}" for bug, lines in wrong.items())


def test_shoe_check_passes_a_correct_sim_shoe_and_writes_junit(tmp_path: Path, link: str) -> None:
    shoe = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "sim-shoe", "--link", link, "--auto-deal",
         "--misread-every", "4", "--heartbeat", str(HEARTBEAT), "--retransmit", str(RETRANSMIT),
         "--nak-holdoff", str(HOLDOFF)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert shoe.stdout is not None
        assert shoe.stdout.readline().startswith("ok SIMULATED shoe on")
        junit = tmp_path / "shoe.xml"
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "shoe-check", link, "--junit", str(junit),
             "--heartbeat", str(HEARTBEAT), "--retransmit", str(RETRANSMIT),
             "--nak-holdoff", str(HOLDOFF), "--wait", str(WAIT)],
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
    assert [line.split(":")[0] for line in lines[:-1]] == [f"pass {name}" for name in CASES]
    assert lines[-1] == f"{len(CASES)} of {len(CASES)} cases passed on {link}"
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == (str(len(CASES)), "0")
    assert [case.get("name") for case in suite.iter("testcase")] == list(CASES)


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


def _scripted_shoe(first: bytes, resend: bytes, stop: threading.Event) -> tuple[str, threading.Thread]:
    """A shoe on a pty that writes `first` in one write, then `resend` every RETRANSMIT s until the
    host sends anything (its ACK: the only frame the host sends in the case) or it is stopped."""
    master, slave = os.openpty()
    tty.setraw(slave)

    def run() -> None:
        os.write(master, first)
        while not stop.is_set():
            if select.select([master], [], [], RETRANSMIT)[0]:
                os.read(master, 64)
                break
            os.write(master, resend)
        stop.wait(2.0)
        os.close(master)

    thread = threading.Thread(target=run, daemon=True)
    return os.ttyname(slave), thread


@pytest.mark.parametrize("late_copy_first", [True, False])
def test_a_late_copy_of_the_acked_frame_read_with_the_next_is_judged_by_its_place_on_the_line(
    late_copy_first: bool,
) -> None:
    # The ACK of MISREAD 12 crossed a resend of it: the shoe's copy and its next frame, CARD 13,
    # arrive in one read, so they share a time. A copy before CARD 13 keeps one frame in flight
    # (the kit had failed a conforming shoe on it under load); a copy after CARD 13 does not.
    misread = encode_frame(12, MessageType.MISREAD, bytes([MisreadReason.UNREADABLE]))
    card = encode_frame(13, MessageType.CARD, b"6D")
    stop = threading.Event()
    path, thread = _scripted_shoe(misread + card if late_copy_first else card + misread, card, stop)
    host = Host(path, 115200, TIMING, lambda _: None)
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
        stop.set()
        thread.join(WAIT)
        host.close()
