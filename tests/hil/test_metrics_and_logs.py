"""A running simulated table as a fleet sees it: `GET /metrics` counts the cards the shoe sent over
its pty with their card-to-lamp latency, and under systemd (INVOCATION_ID set) every log line is
`<priority>text` with no timestamp of its own, uvicorn's included."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from controller.testing import SUPERVISOR, Daemon


def test_metrics_count_the_demo_tables_cards_and_the_log_is_journalds(tmp_path: Path) -> None:
    daemon = Daemon(tmp_path, "[table]\nid = \"MET-1\"\n", args=("--demo", "--demo-interval", "0.02"), env={"INVOCATION_ID": "0f5e"})
    daemon.start()
    try:
        daemon.wait_for("a settled round", lambda a: any(r["status"] == "settled" for r in a["rounds"]), timeout=60, path="/api/rounds")
        scrape = urllib.request.Request(
            f"http://127.0.0.1:{daemon.port}/metrics", headers={"Authorization": f"Bearer {SUPERVISOR}"}
        )
        with urllib.request.urlopen(scrape, timeout=5) as answer:
            text = answer.read().decode()
        cards = daemon.get("/api/state")
    finally:
        assert daemon.stop() == 0, daemon.log()
    got: dict[str, Any] = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}
    assert got["tablectl_cards_read_total"] >= 1
    assert got["tablectl_card_to_lamp_seconds_count"] == got["tablectl_cards_read_total"]
    assert 0 < got["tablectl_card_to_lamp_seconds_sum"] / got["tablectl_card_to_lamp_seconds_count"] < 1.0
    assert got["tablectl_journal_bytes"] > 0 and got["tablectl_journal_entries"] >= 1
    assert cards["game"] == "grand-slam"
    lines = [line for line in daemon.log().splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("<")]
    assert any(re.match(r"<6>SIMULATED INFO SIMULATED table MET-1 \(grand-slam\) ready: dealer screen http://127\.0\.0\.1:\d+/ supervisor screen http://127\.0\.0\.1:\d+/supervisor", line) for line in ours), lines[:5]
    # Every log line carries its priority and no time of its own (the token lines are printed, not logged).
    logged = [line for line in lines if not line.startswith(("SIMULATED table: no API tokens", "  dealer token", "  supervisor token"))]
    assert logged and all(re.match(r"<[2-7]>", line) for line in logged), logged[:5]
    assert not any(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", line) for line in logged), logged[:5]
