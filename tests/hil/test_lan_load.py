"""A busy, hostile table network while the simulated dealer deals: `tablectl run --sim --demo` as a
process, attacked through its real HTTP and WebSocket interface from three processes at once (this
one and two `python -m benchmarks.lan_load attack`), each with several threads doing a fixed,
seeded list of mixed requests (benchmarks/lan_load.py ACTIONS): wrong bearer tokens on reads and
on POST /api/confirm, wrong and right logins, WebSocket hellos with wrong and right tokens, reads
with the dealer's token (state, rounds), /api/health and /api/openapi.json without one, and the
dealer's POST /api/confirm. Wrong credentials come from other loopback addresses (127.N.x.y), a
fresh one every few tries, so the per-address login limiter locks each out in turn and many
failed logins are journaled while the shoe's cards are; right ones from 127.0.0.1.

One session (module fixture): deal until a card is in; attack (cards keep coming); deal a few more
cards after it (or stop at a latched fault); stop the daemon; then check, each in its own test,
that cards were journaled while the attack ran, the dealer dealt on after it (CARDS_AFTER cards
within DEALING_WAIT_S, at a step every 0.05 s, unless a fault stopped play: the one bound that
decides a verdict, and only a daemon that stopped dealing gets near it), no answer was a server
error, every request got an answer, the daemon stopped with exit 0,
`tablectl journal verify` passes, every frame the simulated shoe sent was journaled exactly once
(the journal's card entries and other shoe messages carry the shoe's (session, seq); in one
session each must be the one after the last, on the protocol's 1..255 ring: none twice, none
skipped), no fault was raised (no `fault` entry), and the daemon starts again on the same state
dir with its background journal check passing (where its devices report one), no fault, a
clean stop and the journal verifying again.

What cannot be checked from outside: a frame the shoe sent that the table had not journaled when
it was stopped (the shoe would send it again; the simulated shoe goes with the daemon), so the
last frame is not known to be missing. Every wait is on an event with a bound; the verdict
depends on no clock: the attack is a fixed number of requests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchmarks import lan_load
from controller.journal.log import Journal
from controller.testing import ROOT, TABLECTL, Daemon

CONFIG = '[table]\nid = "LAN-LOAD-1"\ngame = "grand-slam"\n'
DEMO = ["--demo", "--demo-interval", "0.05", "--seed", "28"]
PROCESSES = 2  # attacker processes besides this one
THREADS = 6  # threads in each attacking process, this one's too
REQUESTS = 800  # each attacking process's share: 2,400 in all
CARDS_AFTER = 5  # cards dealt after the attack before the daemon is stopped (unless it stopped play)
WAIT_S = 120.0  # the bound on every wait; none is a timing assertion
#: The bound on waiting for CARDS_AFTER cards after the attack: the dealer steps every 0.05 s.
DEALING_WAIT_S = 30.0
SEQUENCED = ("session", "seq")


@dataclass
class Session:
    attacks: list[dict[str, Any]] = field(default_factory=list)
    seq_at_attack: tuple[int, int] = (0, 0)
    dealing_after: str = ""
    exit_code: int | str | None = None
    log: str = ""
    verify: subprocess.CompletedProcess[str] | None = None
    entries: list[dict[str, Any]] | None = None
    journal_error: str = ""  # why the journal would not open as it was left, if it would not
    restart: dict[str, Any] = field(default_factory=dict)


def _cards_read(daemon: Daemon) -> int:
    return int(daemon.metric("tablectl_cards_read_total"))


def _until(daemon: Daemon, what: str, check: Callable[[], bool]) -> None:
    """Poll until `check()` holds (an event; WAIT_S only bounds the wait)."""
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {daemon.log()[-1500:]}")
        time.sleep(0.05)


class Attacker:
    """`python -m benchmarks.lan_load attack` as its own process: ready, go, its summary."""

    def __init__(self, port: int, net: int, seed: int) -> None:
        args = ["--port", str(port), "--requests", str(REQUESTS), "--threads", str(THREADS), "--net", str(net)]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.lan_load", "attack", *args, "--seed", str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    def ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert json.loads(line or "{}").get("ready") is True, f"attacker not ready: {line!r}"

    def go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def result(self) -> dict[str, Any]:
        out, err = self.proc.communicate(timeout=WAIT_S)
        assert self.proc.returncode == 0 and out.strip(), f"attacker failed ({self.proc.returncode}): {err[-2000:]}"
        result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _attack(daemon: Daemon, session: Session) -> None:
    attackers = [Attacker(daemon.port, net=22 + n, seed=2 + n) for n in range(PROCESSES)]
    try:
        for attacker in attackers:
            attacker.ready()
        first = daemon.get("/api/state", timeout=WAIT_S)["journal_seq"]
        for attacker in attackers:
            attacker.go()
        session.attacks.append(lan_load.attack(daemon.port, requests=REQUESTS, threads=THREADS, net=21, seed=1))
        session.attacks.extend(attacker.result() for attacker in attackers)
        session.seq_at_attack = (first, daemon.get("/api/state", timeout=WAIT_S)["journal_seq"])
    finally:
        for attacker in attackers:
            attacker.kill()


def _deal_on(daemon: Daemon) -> str:
    """After the attack: 'dealt' once CARDS_AFTER more cards are journaled, 'blocked: ...' if the
    table stops play first (a latched fault, checked by its own test), or what the table said
    when neither happened within DEALING_WAIT_S (the simulated dealer stopped)."""
    dealt = _cards_read(daemon)
    deadline = time.monotonic() + DEALING_WAIT_S
    while True:
        state = daemon.get("/api/state", timeout=WAIT_S)
        if _cards_read(daemon) >= dealt + CARDS_AFTER:
            return "dealt"
        if state["blocked"]:
            return f"blocked: {[f['code'] for f in state['faults']]}"
        if time.monotonic() > deadline:
            return (
                f"no card for {DEALING_WAIT_S:g} s after the attack and play not stopped: awaiting "
                f"{state['awaiting']}, prompt {state['prompt']!r}, shoe {state['shoe']}"
            )
        time.sleep(0.05)


def _verify(daemon: Daemon) -> subprocess.CompletedProcess[str]:
    """`tablectl journal verify` on the daemon's state dir (the full check)."""
    config, state = str(daemon.config), str(daemon.state_dir)
    return subprocess.run(
        [*TABLECTL, "journal", "verify", "--sim", "--config", config, "--state-dir", state],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=WAIT_S,
    )


def _journal_check_done(state: dict[str, Any]) -> bool:
    """The start-up's background journal check has run, or the table reports none to wait for."""
    check = state.get("devices", {}).get("journal", {}).get("check")
    return check != "running"


def _restart(daemon: Daemon) -> dict[str, Any]:
    """Start again on the same state dir; once its background journal check has run (when the
    table's devices report one), what the table says; stop; the full check again."""
    out: dict[str, Any] = {}
    try:
        daemon.start(timeout=WAIT_S)
    except AssertionError as exc:
        out["start"] = str(exc)[-2000:]
        daemon.stop()
        return out
    try:
        state = daemon.wait_for("the background journal check", _journal_check_done, timeout=WAIT_S)
        out["journal_check"] = state.get("devices", {}).get("journal", {})
        out["faults"] = [f"{f['code']}: {f['message']}" for f in state["faults"]]
        out["health"] = daemon.get("/api/health", timeout=WAIT_S)["status"]
    except AssertionError as exc:
        out["start"] = str(exc)[-2000:]
    finally:
        try:
            out["exit_code"] = daemon.stop()
        except AssertionError as exc:
            out["exit_code"] = str(exc)
        out["log"] = daemon.log()
    out["verify"] = _verify(daemon)
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    journal = Journal(path, readonly=True)
    try:
        return [e.to_json() for e in journal.entries()]
    finally:
        journal.close()


def _journal(path: Path, session: Session) -> None:
    """The journal's entries; if it will not open where it is (its head file disagrees, say: the
    verify test reports that), read from a copy without the head file, as a backup is read, so
    the entries can still be checked."""
    try:
        session.entries = _read(path)
        return
    except Exception as exc:  # reported by the tests, not here
        session.journal_error = f"{type(exc).__name__}: {exc}"
    copy = path.parent.parent / "journal-without-head"
    copy.mkdir()
    for part in path.parent.glob(f"{path.name}*"):
        shutil.copy2(part, copy / part.name)
    try:
        session.entries = _read(copy / path.name)
    except Exception as exc:
        session.journal_error += f"; without its head file too: {type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    workdir = Path(tmp_path_factory.mktemp("lan-load"))
    daemon = Daemon(workdir, CONFIG, args=DEMO)
    result = Session()
    daemon.start(timeout=WAIT_S)
    try:
        _until(daemon, "the simulated dealer's first card", lambda: _cards_read(daemon) > 0)
        _attack(daemon, result)
        result.dealing_after = _deal_on(daemon)
    finally:
        try:
            result.exit_code = daemon.stop()
        except AssertionError as exc:
            result.exit_code = str(exc)
        result.log = daemon.log()
    result.verify = _verify(daemon)
    _journal(daemon.state_dir / "journal.sqlite3", result)
    result.restart = _restart(daemon)
    yield result


# -- the checks -------------------------------------------------------------------------------------


def _entries(session: Session) -> list[dict[str, Any]]:
    assert session.entries is not None, f"the journal cannot be read: {session.journal_error}"
    return session.entries


def test_the_attack_ran_in_full_while_the_dealer_dealt(session: Session) -> None:
    assert [a["requests"] for a in session.attacks] == [REQUESTS] * (PROCESSES + 1)
    first, last = session.seq_at_attack
    cards = [e for e in _entries(session) if e["kind"] == "card" and first < e["seq"] <= last]
    assert cards, f"no card was journaled between entries {first} and {last}, while the attack ran"


def test_the_dealer_deals_on_after_the_attack(session: Session) -> None:
    """Dealing goes on, or play stopped for a fault (which test_no_fault_was_raised reports)."""
    assert session.dealing_after == "dealt" or session.dealing_after.startswith("blocked"), session.dealing_after


def test_no_answer_is_a_server_error(session: Session) -> None:
    found: Counter[str] = Counter()
    for attack in session.attacks:
        found.update(lan_load.server_errors(attack))
    examples = [e for a in session.attacks for e in a["server_errors"]][:5]
    assert not found, f"server errors: {dict(found)}; for example: {examples}"


def test_every_request_got_an_answer(session: Session) -> None:
    """No connection dropped without an answer, no live feed cut without a close frame."""
    errors: Counter[str] = Counter()
    for attack in session.attacks:
        for action, counted in attack["errors"].items():
            for what, n in counted.items():
                errors[f"{action}: {what}"] += n
        for action, answers in attack["answers"].items():
            if "ws no close frame" in answers:
                errors[f"{action}: the feed was cut without a close frame"] += answers["ws no close frame"]
    assert not errors, dict(errors)


def test_the_daemon_stopped_cleanly(session: Session) -> None:
    assert session.exit_code == 0, session.log


def test_journal_verify_passes(session: Session) -> None:
    verify = session.verify
    assert verify is not None
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_every_frame_the_shoe_sent_was_journaled_exactly_once(session: Session) -> None:
    entries = _entries(session)
    cards = [e for e in entries if e["kind"] == "card"]
    assert cards, "the simulated dealer dealt no card"
    unsourced = [e["seq"] for e in cards if not all(k in e["body"].get("source", {}) for k in SEQUENCED)]
    assert not unsourced, f"card entries without the shoe's (session, seq): {unsourced[:10]}"
    problems = frame_problems(entries)
    assert not problems, f"{len(problems)} problems, first: {problems[:10]}"


def test_no_fault_was_raised(session: Session) -> None:
    faults = [
        f"entry {e['seq']}: {e['body'].get('code')}: {e['body'].get('message')}"
        for e in _entries(session)
        if e["kind"] == "fault"
    ]
    assert not faults, faults[:5]


def test_the_daemon_restarts_cleanly_on_the_same_state_dir(session: Session) -> None:
    restart = session.restart
    assert "start" not in restart, restart["start"]
    assert restart["journal_check"].get("check", "passed") == "passed", restart["journal_check"]
    assert restart["faults"] == [], restart["faults"]
    assert restart["health"] == "ok"
    assert restart["exit_code"] == 0, restart["log"]
    verify = restart["verify"]
    assert verify.returncode == 0, verify.stdout + verify.stderr


# -- the shoe's frames in the journal ------------------------------------------------------------------


def next_seq(seq: int) -> int:
    """The shoe protocol's next sequence number: 1, 2, ... 255, 1 (hardware/shoe-protocol.md)."""
    return seq % 255 + 1


def frame_problems(entries: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the journaled shoe frames, in journal order: within a shoe session each
    must be the frame after the last one journaled (none twice, none skipped); a session the table
    has not seen starts at frame 1, and an ended session never comes back."""
    problems: list[str] = []
    sessions: set[int] = set()
    last: tuple[int, int] | None = None  # (session, seq)
    for entry in entries:
        source = entry["body"].get("source") if isinstance(entry["body"], dict) else None
        if not isinstance(source, dict) or not all(k in source for k in SEQUENCED):
            continue
        session, seq = int(source["session"]), int(source["seq"])
        where = f"entry {entry['seq']} ({entry['kind']})"
        if last is None or last[0] != session:
            if session in sessions:
                problems.append(f"{where}: shoe session {session} again after another session")
            elif seq != 1:
                problems.append(f"{where}: shoe session {session} begins at frame {seq}: frames before it missing")
            sessions.add(session)
        elif seq == last[1]:
            problems.append(f"{where}: frame {seq} of session {session} journaled twice")
        elif seq != next_seq(last[1]):
            problems.append(f"{where}: frame {seq} of session {session} follows frame {last[1]}: a gap")
        last = (session, seq)
    return problems


def test_frame_problems_names_a_repeat_a_gap_and_a_session_that_does_not_begin_at_1() -> None:
    def frame(n: int, session: int, seq: int) -> dict[str, Any]:
        return {"seq": n, "kind": "card", "body": {"source": {"session": session, "seq": seq}}}

    good = [frame(1, 7, 254), frame(2, 7, 255), frame(3, 7, 1), frame(4, 8, 1), frame(5, 8, 2)]
    assert frame_problems([frame(0, 7, 1), *[frame(n, 7, s) for n, s in enumerate(range(2, 254), 10)]]) == []
    assert frame_problems(good) == ["entry 1 (card): shoe session 7 begins at frame 254: frames before it missing"]
    assert frame_problems([frame(1, 7, 1), frame(2, 7, 1)]) == ["entry 2 (card): frame 1 of session 7 journaled twice"]
    assert frame_problems([frame(1, 7, 1), frame(2, 7, 3)]) == [
        "entry 2 (card): frame 3 of session 7 follows frame 1: a gap"
    ]
    assert frame_problems([frame(1, 7, 1), frame(2, 8, 1), frame(3, 7, 2)]) == [
        "entry 3 (card): shoe session 7 again after another session"
    ]
