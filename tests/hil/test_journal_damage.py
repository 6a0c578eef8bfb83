"""Damage deep in the journal, behind the last snapshot, where start-up does not read: the daemon
starts (start-up checks the head file, the tail and the last snapshot), and the full check it runs
in the background right after finds the damage and stops play with a fault naming the entry."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from controller.cli.synth import synthesize
from controller.testing import Daemon


def test_damage_behind_the_last_snapshot_is_found_by_the_background_check_and_stops_play(tmp_path: Path) -> None:
    synthesize(tmp_path / "state", 6, seed=8).close()
    db = sqlite3.connect(tmp_path / "state" / "journal.sqlite3")
    db.execute("DROP TRIGGER entries_no_update")
    db.execute("""UPDATE entries SET body = replace(body, '"by":"synth-dealer"', '"by":"someone"') WHERE seq = 1""")
    db.commit()
    db.close()
    daemon = Daemon(tmp_path, '[table]\nid = "DAMAGE-1"\n')
    try:
        daemon.start()
        state = daemon.wait_for(
            "the background check's fault", lambda s: any(f["code"] == "journal-damaged" for f in s["faults"])
        )
        fault = next(f for f in state["faults"] if f["code"] == "journal-damaged")
        assert "entry 1 (round-open) does not match its checksum" in fault["message"]
        assert "restore the journal from a good copy" in fault["message"] and fault["actions"] == []
        assert state["blocked"] and daemon.get("/api/health")["status"] == "fault"
        assert state["devices"]["journal"]["check"] == "failed"
    finally:
        daemon.stop()
