"""The real daemon on the floor: `tablectl run --sim` with a [floor] section publishes its journal
to a real Mosquitto, and a SIGTERM leaves the table marked offline."""

from __future__ import annotations

from pathlib import Path

from controller.testing import Daemon

from .conftest import WAIT_S, Mosquitto, Subscriber, entries_taken


def test_the_daemon_publishes_every_entry_and_says_when_it_goes_offline(mosquitto: Mosquitto, tmp_path: Path) -> None:
    subscriber = Subscriber(mosquitto.broker).start()
    daemon = Daemon(
        tmp_path,
        f'[table]\nid = "GS-FLOOR"\n[floor]\nbroker = "mqtt://127.0.0.1:{mosquitto.port}"\nsite = "test-site"\n',
    )
    try:
        daemon.start()
        assert daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})[0] == 201
        assert daemon.post("/api/sim/shoe", {"cards": ["5H", "9C", "3S"]})[0] == 200
        assert daemon.post("/api/sim/draw", {"count": 3})[0] == 200
        assert subscriber.wait_for(lambda s: any(m.kind == "settlement" for m in s.parsed()), WAIT_S)
        # The round's end: the table signs its chain's head (controller/security/chainhead.py), entry 5.
        assert subscriber.wait_for(lambda s: 5 in entries_taken(s), WAIT_S)
        assert entries_taken(subscriber) == [1, 2, 3, 4, 5]  # the opening, three cards, the head: in order, once
        head = next(m for m in subscriber.parsed("entry") if m.seq == 5).payload
        assert head["kind"] == "chain-head" and head["body"]["seq"] == 4 and len(head["body"]["sig"]) == 128
        online = [m for m in subscriber.parsed("status")]
        assert online and online[-1].payload["status"] == "online"
        assert {(m.site, m.table) for m in subscriber.parsed()} == {("test-site", "GS-FLOOR")}
        assert daemon.stop() == 0, daemon.log()
        assert subscriber.wait_for(lambda s: s.parsed("status")[-1].payload["status"] == "offline", WAIT_S)
    finally:
        if daemon.proc and daemon.proc.poll() is None:
            daemon.kill()
        subscriber.stop()
