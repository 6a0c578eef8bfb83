"""`GET /metrics`: the table in Prometheus's text format (controller/adapters/metrics.py says what is in it).

Open to the table's own network like the other reads: it holds counts and sizes, never a card
of a round in play, a wager or a token.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from controller.api.deps import Rt
from controller.api.routes import table_call

router = APIRouter()


@router.get("/metrics", include_in_schema=False)
async def metrics(rt: Rt) -> Response:
    # Collected on the table's loop: the counts are read where they are kept.
    media_type, text = await table_call(rt, "metrics")
    return Response(text, media_type=media_type)
