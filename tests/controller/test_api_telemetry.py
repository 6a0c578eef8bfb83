"""The API sends nothing of the table's to OpenTelemetry: FastAPI's own tracing, metrics and logs of
each request are off (controller/api/app.py), even with a provider set in the process, as one
configured from a Pi's environment would be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from opentelemetry import metrics, trace

from controller.api.app import create_app
from controller.api.auth import Tokens
from controller.api.runtime import Runtime
from controller.journal.log import Journal
from controller.table import Table

DEALER = "dealer-token-0123456789"


class Asked(trace.TracerProvider, metrics.MeterProvider):
    """A configured provider that writes down every tracer and meter asked of it."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        self.asked.append("tracer")
        return trace.NoOpTracer()

    def get_meter(self, *args: Any, **kwargs: Any) -> metrics.Meter:
        self.asked.append("meter")
        return metrics.NoOpMeter("fastapi")


def test_a_configured_provider_gets_no_span_or_metric_of_the_apis_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = Asked()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: provider)
    table = Table(Journal(tmp_path / "j.sqlite3"), game="grand-slam", rules={}, simulated=True)
    client = TestClient(create_app(Runtime(table=table, tokens=Tokens(DEALER, "supervisor-token-0123456789"))))
    headers = {"Authorization": f"Bearer {DEALER}"}
    assert client.get("/api/health").status_code == 200
    assert client.get("/api/state", headers=headers).status_code == 200
    with client.websocket_connect("/api/ws") as ws:
        ws.send_json({"after": 0, "token": DEALER})
        assert ws.receive_json()["type"] in ("state", "entry", "entries")
    assert provider.asked == []
