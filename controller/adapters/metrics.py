"""What a fleet's Prometheus scrapes from a table: `GET /metrics` (controller/api/routes/metrics.py).

Counted as things happen (since the daemon started): cards read from the shoe, and the time from
the shoe's reader handing a card over until the lamps show it (the journal's fsync'd commit and
the engine included). Read from the table when Prometheus asks: rounds settled and voided and
faults by kind (the table's meters, rebuilt from the journal, so they keep counting across
restarts), the journal's size on disk and its last entry, the camera's frames read and the time
spent reading them, and how many journal entries the floor broker has not acknowledged yet.

    metrics = TableMetrics(table)
    metrics.card_read(seconds=0.004)
    text = generate_latest(metrics.registry)   # the exposition format, for GET /metrics
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

    from controller.table import Table

#: Card to lamp, in seconds: a table feels a card as slow from about 100 ms; a pty run takes ~4 ms.
LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
CARDS = ("tablectl_cards_read", "Cards read from the shoe and journaled since the daemon started.")
CARD_TO_LAMP = (
    "tablectl_card_to_lamp_seconds",
    "From the shoe's reader handing a card over to the lamps showing it (journal commit included).",
)


class TableMetrics:
    """The table's Prometheus registry (its own, not the process-wide default one).

    The cards and their latency are counted here as plain numbers; prometheus_client (with the
    wsgiref, http.server and urllib.request it imports, about 2.5 MB of a process's memory) is
    loaded when the registry is first asked for, at the first scrape: a table nobody scrapes
    never loads it. What it says is what prometheus_client's own Counter and Histogram would
    (tests/controller/test_metrics.py)."""

    def __init__(
        self,
        table: Table,
        *,
        floor_acked: Callable[[], int] | None = None,
        camera: Callable[[], Any] | None = None,
    ) -> None:
        self.table = table
        self.floor_acked = floor_acked
        self.camera = camera
        self.created = time.time()
        self.cards = 0
        self.card_seconds = 0.0
        self.card_buckets = [0] * (len(LATENCY_BUCKETS) + 1)  # each bucket's own count, the last +Inf's
        self._registry: CollectorRegistry | None = None

    def card_read(self, seconds: float) -> None:
        self.cards += 1
        self.card_seconds += seconds
        self.card_buckets[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1  # le: a bound counts its own

    @property
    def registry(self) -> CollectorRegistry:
        """The registry to expose (`generate_latest`), made on first use."""
        if self._registry is None:
            from prometheus_client import CollectorRegistry

            registry = CollectorRegistry(auto_describe=True)
            registry.register(_CardCollector(self))
            table = self.table
            labels = {"table": table.table_id, "game": table.game_name}
            registry.register(_TableCollector(table, labels, self.floor_acked, self.camera))
            self._registry = registry
        return self._registry


class _CardCollector:
    """The cards read and their card-to-lamp histogram, as prometheus_client's Counter and
    Histogram would say them."""

    def __init__(self, metrics: TableMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.utils import floatToGoString

        m = self.metrics
        yield CounterMetricFamily(*CARDS, value=m.cards, created=m.created)
        cumulative, buckets = 0, []
        for bound, count in zip((*LATENCY_BUCKETS, float("inf")), m.card_buckets, strict=True):
            cumulative += count
            buckets.append((floatToGoString(bound), float(cumulative)))  # type: ignore[no-untyped-call]
        histogram = HistogramMetricFamily(*CARD_TO_LAMP, buckets=buckets, sum_value=m.card_seconds)
        histogram.add_sample(f"{CARD_TO_LAMP[0]}_created", {}, m.created)
        yield histogram


class _TableCollector:
    """Everything read from the table at scrape time, on the table's own loop."""

    def __init__(
        self,
        table: Table,
        labels: dict[str, str],
        floor_acked: Callable[[], int] | None,
        camera: Callable[[], Any] | None,
    ) -> None:
        self.table = table
        self.labels = labels
        self.floor_acked = floor_acked
        self.camera = camera

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, SummaryMetricFamily

        table = self.table
        names, values = list(self.labels), list(self.labels.values())
        info = GaugeMetricFamily("tablectl_table", "The table this daemon runs (1).", labels=[*names, "simulated"])
        info.add_metric([*values, "true" if table.simulated else "false"], 1)
        yield info
        rounds = CounterMetricFamily("tablectl_rounds", "Rounds finished, by how they ended.", labels=["status"])
        rounds.add_metric(["settled"], table.meters.rounds)
        rounds.add_metric(["void"], table.meters.voids)
        yield rounds
        faults = CounterMetricFamily("tablectl_faults", "Faults raised, by kind.", labels=["kind"])
        for kind, count in sorted(table.meters.faults.items()):
            faults.add_metric([kind], count)
        yield faults
        yield GaugeMetricFamily("tablectl_faults_open", "Faults latched now (play stopped).", value=len(table.faults))
        path = Path(table.journal.path)
        size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
        yield GaugeMetricFamily("tablectl_journal_bytes", "The journal's size on disk (with its WAL).", value=size)
        last = table.journal.last_seq
        yield GaugeMetricFamily("tablectl_journal_entries", "The journal's last entry number.", value=last)
        if self.floor_acked is not None:
            yield GaugeMetricFamily(
                "tablectl_floor_backlog_entries",
                "Journal entries the floor broker has not acknowledged yet.",
                value=max(0, last - self.floor_acked()),
            )
        feed = self.camera() if self.camera is not None else None
        if feed is not None:
            frames = CounterMetricFamily("tablectl_camera_frames_read", "Camera frames read by vision.")
            frames.add_metric([], feed.reads)
            yield frames
            yield CounterMetricFamily(
                "tablectl_camera_frames_skipped", "Camera frames skipped while a read went on.", value=feed.dropped
            )
            timing = SummaryMetricFamily("tablectl_camera_frame_read_seconds", "Time spent reading camera frames.")
            timing.add_metric([], count_value=feed.reads, sum_value=feed.read_seconds)
            yield timing
