"""A full disk under the running daemon: its state directory is a real 2 MB tmpfs, filled to the
last byte while a round is dealt. The round's cards are journaled to its end (the write-ahead file
keeps its blocks: controller/journal/log.py, WAL_RESERVE), and at the round's end the fault is said
in plain words on the API, the pole display and the status lamp, once in the log; every POST
answers 503 with a JSON error; the card the shoe holds meanwhile is journaled when space returns,
and the fault clears itself."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from controller.cli.synth import synthesize
from controller.journal.log import Journal
from controller.testing import DEALER, TABLECTL, Daemon, free_port
from tests.disk import fill, small_disk

from .conftest import SimShoe, display_text, drain

WORDS = "the journal cannot be written: the disk is full; no card is being accepted"

CONFIG = """
[table]
id = "DISK-1"
[shoe]
url = "{link}"
heartbeat_timeout = 2.0
[display]
url = "{display}"
"""


def test_a_disk_full_inside_a_round_is_a_plain_fault_everywhere_at_its_end_and_clears_itself_with_the_held_card(
    tmp_path: Path, pty_display: tuple[int, str]
) -> None:
    master, display = pty_display
    with small_disk(tmp_path / "state") as state_dir:
        shoe = SimShoe(tmp_path / "shoe-link", "--seed", "7")
        daemon = Daemon(tmp_path, CONFIG.format(link=tmp_path / "shoe-link", display=display))
        try:
            daemon.start()
            seats = {"seats": [{"seat": s, "wagers": {"first": 10, "second": 10, "third": 5}} for s in (1, 2, 3)]}
            assert daemon.post("/api/rounds", seats)[0] == 201
            before = daemon.get("/api/state")["journal_seq"]
            filler = fill(state_dir)
            drawn: list[str] = []
            while daemon.get("/api/state")["round_status"] == "open":  # the round dealt to its end
                assert len(drawn) < 40, drawn
                drawn += shoe.command("draw 1").split()[2:]
                taken = before + len(drawn)
                daemon.wait_for("the card", lambda s, taken=taken: s["journal_seq"] >= taken)
            state = daemon.wait_for("the disk-full fault", lambda s: any(f["code"] == "disk-full" for f in s["faults"]))
            assert state["prompt"].startswith(f"STOP: {WORDS}") and state["journal_seq"] == before + len(drawn)
            assert daemon.get("/api/health")["status"] == "fault"
            assert state["devices"]["lamps"]["fault"] is True  # the status lamp
            for path, body in (("/api/rounds", seats), ("/api/confirm", {}), ("/api/login", {"token": "x"})):
                status, answer = daemon.post(path, body)
                assert status == 503 and answer["kind"] == "unavailable" and WORDS in answer["error"], (path, answer)
            held = shoe.command("draw 1").split()[2:]  # a card after the round: not taken while the disk is full
            time.sleep(1.0)  # the shoe offers it again and again meanwhile
            assert daemon.get("/api/state")["journal_seq"] == before + len(drawn)
            assert "DISK FULL" in display_text(drain(master)).upper()

            filler.unlink()
            daemon.wait_for("the held card", lambda s: not s["blocked"] and s["journal_seq"] >= before + len(drawn) + 2)
            assert daemon.post("/api/login", {"token": DEALER})[0] == 200  # journaled again
            assert daemon.stop() == 0
        finally:
            if daemon.proc and daemon.proc.poll() is None:
                daemon.proc.kill()
            shoe.stop()
        log = daemon.logfile.read_text(errors="replace")
        assert log.count(WORDS) == 1, log  # once, however often the shoe offered the card again
        assert "Traceback" not in log
        journal = Journal(state_dir / "journal.sqlite3", readonly=True)
        after = list(journal.entries(after=before))
        journal.close()
    assert [e.kind for e in after[: len(drawn)]] == ["card"] * len(drawn)  # none refused inside the round
    assert after[len(drawn)].kind == "journal-restored" and after[len(drawn)].body["refused"] >= 4
    assert [e.body["card"] for e in after if e.kind == "card"] == drawn + held  # in the shoe's order, once each


def test_a_table_started_again_on_a_full_disk_shows_the_journal_fault_from_its_first_answer(tmp_path: Path) -> None:
    """The table lost power (its -wal and -shm left) and the disk is full when it starts again.
    Before, it said healthy ("ok", no fault) until its first input failed to be journaled: start-up
    only read the journal. Now start-up checks that it can be written."""
    with small_disk(tmp_path / "state") as state_dir:
        daemon = Daemon(tmp_path, '[table]\nid = "DISK-2"\n', state_dir=state_dir)
        try:
            daemon.start()
            seats = {"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}]}
            assert daemon.post("/api/rounds", seats)[0] == 201
            daemon.kill()  # a power cut
            filler = fill(state_dir)
            daemon.start()
            assert daemon.get("/api/health")["status"] == "fault"  # its first answer, before any input
            state = daemon.get("/api/state")
            assert state["blocked"] and state["prompt"].startswith(f"STOP: {WORDS}"), state["prompt"]
            status, answer = daemon.post("/api/confirm", {})
            assert status == 503 and WORDS in answer["error"], answer

            filler.unlink()  # space returns: the fault clears itself, and says so in the journal
            daemon.wait_for("the fault to clear", lambda s: not s["blocked"])
            assert daemon.get("/api/health")["status"] == "ok"
            assert daemon.stop() == 0
        finally:
            if daemon.proc and daemon.proc.poll() is None:
                daemon.proc.kill()
        log = daemon.logfile.read_text(errors="replace")
        assert log.count(WORDS) == 1 and "Traceback" not in log, log
        journal = Journal(state_dir / "journal.sqlite3", readonly=True)
        kinds = [e.kind for e in journal.entries()]
        journal.close()
    assert kinds[-1] == "journal-restored" and kinds.count("round-open") == 1


def test_a_disk_too_full_to_open_the_journal_is_said_as_full_not_as_damage(tmp_path: Path) -> None:
    """Stopped cleanly, the table leaves no -shm; on a full disk SQLite cannot make one and says
    "disk I/O error". That was reported as a damaged journal to restore from a copy (exit 78, never
    restarted); it is a full disk, and systemd may start the table again once space is freed."""
    with small_disk(tmp_path / "state") as state_dir:
        synthesize(state_dir, 2, seed=2, durable=True).close()
        before = (state_dir / "journal.sqlite3").read_bytes()
        fill(state_dir)
        run = subprocess.run(
            [*TABLECTL, "run", "--sim", "--state-dir", str(state_dir), "--http", f"127.0.0.1:{free_port()}"],
            capture_output=True,
            text=True,
            env={**os.environ, "TABLECTL_DEALER_TOKEN": "d" * 24, "TABLECTL_SUPERVISOR_TOKEN": "s" * 24},
            timeout=60,
            check=False,
        )
        assert run.returncode == 75, run.stderr  # EX_TEMPFAIL: not in RestartPreventExitStatus
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and WORDS in lines[0] and "restore" not in lines[0], run.stderr
        assert (state_dir / "journal.sqlite3").read_bytes() == before
