"""The real daemon on the floor: `tablectl run --sim` with a [floor] section publishes its journal
to a real Mosquitto, and a SIGTERM leaves the table marked offline."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .conftest import WAIT_S, Mosquitto, Subscriber, entries_taken

DEALER = "floor-dealer-token-0123456789"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _post(port: int, path: str, body: dict) -> dict:  # type: ignore[type-arg]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {DEALER}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as r:
        return dict(json.loads(r.read()))


def test_the_daemon_publishes_every_entry_and_says_when_it_goes_offline(mosquitto: Mosquitto, tmp_path: Path) -> None:
    subscriber = Subscriber(mosquitto.broker).start()
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nid = "GS-FLOOR"\n[floor]\nbroker = "mqtt://127.0.0.1:{mosquitto.port}"\nsite = "test-site"\n'
    )
    port = _port()
    env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": "floor-super-token-0123456789"}
    daemon = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "run",
            "--sim",
            "--config",
            str(config),
            "--state-dir",
            str(tmp_path / "state"),
            "--http",
            f"127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and daemon.poll() is None, "the daemon did not start"
                time.sleep(0.05)
        _post(port, "/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})
        _post(port, "/api/sim/shoe", {"cards": ["5H", "9C", "3S"]})
        _post(port, "/api/sim/draw", {"count": 3})
        assert subscriber.wait_for(lambda s: any(m.kind == "settlement" for m in s.parsed()), WAIT_S)
        assert entries_taken(subscriber) == [1, 2, 3, 4]  # the opening and three cards, in order, once
        online = [m for m in subscriber.parsed("status")]
        assert online and online[-1].payload["status"] == "online"
        assert {(m.site, m.table) for m in subscriber.parsed()} == {("test-site", "GS-FLOOR")}
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=15) == 0
        assert subscriber.wait_for(lambda s: s.parsed("status")[-1].payload["status"] == "offline", WAIT_S)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        subscriber.stop()
