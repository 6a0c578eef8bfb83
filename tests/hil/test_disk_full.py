"""A full disk under the running daemon: its state directory is a real 2 MB tmpfs, filled to the
last byte while a round is dealt. The fault is said in plain words on the API, the pole display
and the status lamp, once in the log; every POST answers 503 with a JSON error; the cards the
shoe holds meanwhile are journaled in order when space returns, and the fault clears itself."""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks.rig import Daemon
from controller.journal import Journal
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


def test_a_full_disk_is_a_plain_fault_everywhere_and_clears_itself_with_the_held_cards_in_order(
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
            drawn = shoe.command("draw 3").split()[2:]
            state = daemon.wait_for("the disk-full fault", lambda s: any(f["code"] == "disk-full" for f in s["faults"]))
            assert state["prompt"].startswith(f"STOP: {WORDS}") and state["journal_seq"] == before
            assert daemon.get("/api/health")["status"] == "fault"
            assert state["devices"]["lamps"]["fault"] is True  # the status lamp
            for path, body in (("/api/rounds", seats), ("/api/confirm", {}), ("/api/login", {"token": "x"})):
                status, answer = daemon.post(path, body)
                assert status == 503 and answer["kind"] == "unavailable" and WORDS in answer["error"], (path, answer)
            time.sleep(1.0)  # the shoe offers its first card again and again meanwhile
            assert "DISK FULL" in display_text(drain(master)).upper()

            filler.unlink()
            daemon.wait_for("the held cards", lambda s: not s["blocked"] and s["journal_seq"] >= before + 4, timeout=15)
            assert daemon.post("/api/confirm", {})[0] == 200
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
    assert after[0].kind == "journal-restored" and after[0].body["refused"] >= 5
    assert [e.body["card"] for e in after if e.kind == "card"] == drawn  # in the shoe's order, once each
