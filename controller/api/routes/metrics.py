"""`GET /metrics`: the table in Prometheus's text format (controller/metrics.py says what is in it).

Open to the table's own network like the other reads: it holds counts and sizes, never a card
of a round in play, a wager or a token.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from controller.api.deps import Rt
from controller.metrics import TableMetrics

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(rt: Rt) -> Response:
    if rt.metrics is None:
        rt.metrics = TableMetrics(rt.table)
    return Response(generate_latest(rt.metrics.registry), media_type=CONTENT_TYPE_LATEST)
