"""The arithmetic of benchmarks/bench_api_load.py and the bookkeeping of benchmarks/lan_load.py,
without a daemon: histogram quantiles from bucket counts, what counts as a server error, the
loopback addresses strangers come from."""

from __future__ import annotations

import math

import pytest

from benchmarks import lan_load
from benchmarks.bench_api_load import _buckets, _exceptions, quantile

INF = math.inf


def test_a_quantile_is_interpolated_within_the_bucket_it_falls_in() -> None:
    # 100 samples: 50 at or under 5 ms, 40 more under 10 ms, 10 more under 20 ms.
    buckets = [(0.005, 50.0), (0.01, 90.0), (0.02, 100.0), (INF, 100.0)]
    assert quantile(buckets, 0.5) == pytest.approx(0.005)
    assert quantile(buckets, 0.7) == pytest.approx(0.0075)  # 20 of the 40 between 5 and 10 ms
    assert quantile(buckets, 0.99) == pytest.approx(0.019)
    assert quantile([(0.002, 4.0), (INF, 4.0)], 0.5) == pytest.approx(0.001)  # from 0 in the first


def test_a_quantile_in_the_open_bucket_is_infinite_and_none_without_samples() -> None:
    assert quantile([(5.0, 1.0), (INF, 2.0)], 0.99) == INF
    assert quantile([(5.0, 0.0), (INF, 0.0)], 0.5) is None
    assert quantile([], 0.5) is None


def test_buckets_are_read_from_the_exposition_in_order() -> None:
    sample = {
        'tablectl_card_to_lamp_seconds_bucket{le="0.01"}': 3.0,
        'tablectl_card_to_lamp_seconds_bucket{le="+Inf"}': 4.0,
        'tablectl_card_to_lamp_seconds_bucket{le="0.002"}': 1.0,
        "tablectl_card_to_lamp_seconds_count": 4.0,
    }
    assert _buckets(sample, "tablectl_card_to_lamp_seconds") == [(0.002, 1.0), (0.01, 3.0), (INF, 4.0)]


def test_the_daemon_logs_exceptions_are_counted_by_their_last_line() -> None:
    log = (
        "Traceback (most recent call last):\n  File x\nsqlite3.IntegrityError: UNIQUE constraint failed: entries.seq\n"
        "    | sqlite3.IntegrityError: UNIQUE constraint failed: entries.seq\n"
        "2026-12-02 INFO nothing: here\n"
    )
    assert _exceptions(log) == {"sqlite3.IntegrityError: UNIQUE constraint failed: entries.seq": 2}


def test_server_errors_are_5xx_and_feeds_closed_for_an_internal_error() -> None:
    summary = {
        "answers": {
            "state": {"200": 3, "500": 2, "503": 1},
            "login_bad": {"401": 5, "429": 9},
            "ws_bad": {"ws 4401": 1, "ws 1011": 1, "ws http 500": 1, "ws no close frame": 1},
        }
    }
    assert lan_load.server_errors(summary) == {
        "state 500": 2,
        "state 503": 1,
        "ws_bad ws 1011": 1,
        "ws_bad ws http 500": 1,
    }


def test_strangers_come_from_loopback_addresses_other_than_the_good_clients() -> None:
    addresses = {lan_load.address(21, n) for n in range(2000)}
    assert len(addresses) == 2000
    assert all(a.startswith("127.21.") for a in addresses) and "127.0.0.1" not in addresses
    with pytest.raises(ValueError):
        lan_load.address(0, 1)


def test_an_attack_plan_is_the_same_for_the_same_seed_and_mixes_every_action() -> None:
    plan = lan_load._plan(7, 800)
    assert plan == lan_load._plan(7, 800)
    assert set(plan) == set(lan_load.ACTIONS)
