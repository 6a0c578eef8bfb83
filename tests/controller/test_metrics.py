"""`GET /metrics`: the table in Prometheus's text format, read by prometheus-client's own parser:
cards read and the card-to-lamp histogram, rounds, faults by kind, the journal's size, the
camera's frames and their time, and the floor's backlog."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from controller.adapters.metrics import TableMetrics
from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.engine.cards import parse_card
from controller.journal.log import Journal
from controller.table import Table

DEALER, SUPERVISOR = "d" * 20, "s" * 20


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _table(tmp_path: Path) -> Table:
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, table_id="GS-09", simulated=True)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 10}}]}, by="dealer")
    for text in ["KD"]:  # seat 1 is out on its first card: the round settles
        table.card(parse_card(text), {"via": "test"})
    table.open_round({"seats": [{"seat": 2, "wagers": {"first": 10}}]}, by="dealer")
    table.void(by="supervisor:Kim", reason="card exposed")
    table.raise_fault("shoe-silent", "The shoe stopped answering.")
    return table


def test_metrics_reads_the_table_and_counts_cards_with_their_latency(tmp_path: Path) -> None:
    table = _table(tmp_path)
    feed = SimpleNamespace(reads=12, dropped=3, read_seconds=0.096)
    metrics = TableMetrics(table, floor_acked=lambda: 2, camera=lambda: feed)
    for seconds in (0.003, 0.004, 0.2):
        metrics.card_read(seconds)
    client = TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, SUPERVISOR), metrics=metrics)))
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {SUPERVISOR}"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=")
    got: dict[Any, float] = samples(answer.text)
    assert got[("tablectl_cards_read_total", ())] == 3
    assert got[("tablectl_card_to_lamp_seconds_count", ())] == 3
    assert got[("tablectl_card_to_lamp_seconds_bucket", (("le", "0.005"),))] == 2
    assert got[("tablectl_card_to_lamp_seconds_bucket", (("le", "0.2"),))] == 3
    assert got[("tablectl_rounds_total", (("status", "settled"),))] == 1
    assert got[("tablectl_rounds_total", (("status", "void"),))] == 1
    assert got[("tablectl_faults_total", (("kind", "shoe-silent"),))] == 1
    assert got[("tablectl_faults_open", ())] == 1
    assert got[("tablectl_journal_bytes", ())] > 4096
    assert got[("tablectl_journal_entries", ())] == table.journal.last_seq
    assert got[("tablectl_floor_backlog_entries", ())] == table.journal.last_seq - 2
    assert got[("tablectl_camera_frames_read_total", ())] == 12
    assert got[("tablectl_camera_frames_skipped_total", ())] == 3
    assert got[("tablectl_camera_frame_read_seconds_count", ())] == 12
    assert abs(got[("tablectl_camera_frame_read_seconds_sum", ())] - 0.096) < 1e-9
    assert got[("tablectl_table", (("game", "grand-slam"), ("simulated", "true"), ("table", "GS-09")))] == 1


def test_metrics_without_a_daemon_still_reads_the_table_and_has_no_floor_or_camera(tmp_path: Path) -> None:
    client = TestClient(create_app(Runtime(table=_table(tmp_path), tokens=Tokens(DEALER, SUPERVISOR))))
    got = samples(client.get("/metrics", headers={"Authorization": f"Bearer {SUPERVISOR}"}).text)
    assert got[("tablectl_cards_read_total", ())] == 0
    assert got[("tablectl_rounds_total", (("status", "settled"),))] == 1
    assert not any(name.startswith(("tablectl_floor", "tablectl_camera")) for name, _ in got)


def test_the_cards_and_their_latency_read_as_prometheus_clients_own_counter_and_histogram(tmp_path: Path) -> None:
    """TableMetrics counts the cards as plain numbers (prometheus_client loaded at the first
    scrape only); the scrape says what prometheus_client's Counter and Histogram, fed the same
    cards, say: every sample, each bucket's bound counted in it, the times of creation aside."""
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

    from controller.adapters.metrics import CARD_TO_LAMP, CARDS, LATENCY_BUCKETS

    reference = CollectorRegistry(auto_describe=True)
    counter = Counter(*CARDS, registry=reference)
    histogram = Histogram(*CARD_TO_LAMP, buckets=LATENCY_BUCKETS, registry=reference)
    metrics = TableMetrics(_table(tmp_path))
    for seconds in (0.0, 0.001, 0.002, 0.0021, 0.005, 0.05, 0.3, 5.0, 5.1, 60.0, 0.004, 0.004):
        counter.inc()
        histogram.observe(seconds)
        metrics.card_read(seconds)

    def cards(text: bytes) -> dict[Any, float]:
        return {key: value for key, value in samples(text.decode()).items() if key[0].startswith("tablectl_card")}

    ours, theirs = cards(generate_latest(metrics.registry)), cards(generate_latest(reference))
    created = [key for key in theirs if key[0].endswith("_created")]
    assert len(created) == 2 and all(key in ours for key in created)
    assert {k: v for k, v in ours.items() if k not in created} == {k: v for k, v in theirs.items() if k not in created}
    assert ours[("tablectl_card_to_lamp_seconds_bucket", (("le", "0.002"),))] == 3
