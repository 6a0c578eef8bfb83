"""`GET /metrics`: the table in Prometheus's text format (controller/metrics.py says what is in it).

Open to the table's own network like the other reads: it holds counts and sizes, never a card
of a round in play, a wager or a token.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from controller.api.deps import Rt
from controller.api.errors import ApiError
from controller.api.routes import table_call

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(rt: Rt) -> Response:
    registry = rt.metrics.registry if rt.metrics is not None else None
    if registry is None:
        raise ApiError("not-found", "this table keeps no metrics")
    # Collected on the table's loop: the counts are read where they are kept.
    text = await table_call(rt, lambda _table: generate_latest(registry))
    return Response(text, media_type=CONTENT_TYPE_LATEST)
