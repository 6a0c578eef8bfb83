"""The arithmetic of benchmarks/bench_daemon.py's breakdown, without a daemon: each card's stamps
matched to the card the shoe sent, the journal's disk calls placed inside its INSERT, and each
stage the time from the stamp before."""

from __future__ import annotations

from typing import Any

from benchmarks.bench_daemon import STAGES, CardTiming, Session, _breakdown, _place_disk_calls

MS = 1e-3
FSYNC, FDATASYNC, PWRITE = 1, 2, 3


def stamps(card: str, sent: float) -> dict[str, Any]:
    """A card's stamps, one stage after another 0.1 ms apart from `sent`, the INSERT's window
    from `insert` to `committed`, with the fsync's stage 0.5 ms long."""
    record: dict[str, Any] = {"card": card, "open": False}
    at = sent
    for name, key, _ in STAGES:
        at += 0.5 * MS if name == "fsync" else 0.1 * MS
        record[key] = at
    record["insert"] = record["encoded"] + 0.01 * MS
    record["card_done"] = record["latch"] + 0.2 * MS
    return record


def disk_calls(record: dict[str, Any]) -> list[tuple[int, int, float, float]]:
    """What sync_stamps.c would log around the record: the WAL's writes and fdatasync inside the
    INSERT, a second write after the first, and the head file's fsync after the lamps."""
    return [
        (PWRITE, 5, record["wal_write"], record["wal_write"] + 0.005 * MS),
        (PWRITE, 5, record["wal_write"] + 0.01 * MS, record["wal_write"] + 0.02 * MS),
        (FDATASYNC, 5, record["sync"], record["synced"]),
        (FSYNC, 7, record["latch"] + 0.1 * MS, record["latch"] + 0.15 * MS),
    ]


def session(sent: list[tuple[str, float]], records: list[dict[str, Any]], calls: Any) -> Session:
    timings = [CardTiming(card, at, at + 5 * MS, at + 6 * MS, False) for card, at in sent]
    return Session(timings, 1, {}, {}, 1, 0, [], 0.0, stages=records, disk_calls=calls)


def test_each_stage_is_the_time_from_the_stamp_before_and_the_disk_calls_land_inside_the_insert() -> None:
    first, second = stamps("AS", 1.0), stamps("7C", 2.0)
    calls = disk_calls(first) + disk_calls(second)
    placed = [{k: v for k, v in r.items() if k not in ("wal_write", "sync", "synced")} for r in (first, second)]
    got = _breakdown(session([("AS", 1.0), ("7C", 2.0)], placed, calls))
    assert got["cards"] == 2 and got["disk_stamps"] is True
    stages = got["stages"]
    assert stages["fsync"]["p50_ms"] == 0.5 and stages["wal_write"]["p50_ms"] == 0.1
    assert all(stages[name]["p50_ms"] == 0.1 for name, _, _ in STAGES if name != "fsync")
    assert stages["total_sent_to_latch"]["p50_ms"] == round(0.1 * (len(STAGES) - 1) + 0.5, 3)
    assert stages["after_lamps"]["p50_ms"] == 0.2
    assert placed[0]["syncs"] == 1  # the head file's fsync after the lamps is not the commit's


def test_a_card_is_matched_to_its_own_stamps_when_the_same_card_comes_again() -> None:
    early, late = stamps("AS", 1.0), stamps("AS", 3.0)
    late["latch"] += 1.0 * MS  # the second ace's lamps took a millisecond longer
    got = _breakdown(session([("AS", 1.0), ("AS", 3.0)], [early, late], None))
    assert got["cards"] == 2 and got["disk_stamps"] is False
    shift = got["stages"]["shift_out"]
    assert (shift["p50_ms"], shift["max_ms"]) == (0.6, 1.1)  # 0.1 and 1.1: each ace its own stamps
    assert "sqlite_insert_commit" in got["stages"] and "fsync" not in got["stages"]


def test_a_card_without_a_latch_is_left_out_and_none_at_all_says_why() -> None:
    unlit = stamps("KD", 1.0)
    del unlit["latch"]
    got = _breakdown(session([("KD", 1.0)], [unlit], None))
    assert got["cards"] == 0 and "no card had every stamp" in got["why"]


def test_disk_calls_outside_every_insert_are_left_alone() -> None:
    record = stamps("9H", 1.0)
    outside = [(FDATASYNC, 5, record["committed"] + 1 * MS, record["committed"] + 2 * MS)]
    _place_disk_calls([record := {k: v for k, v in record.items() if k not in ("sync", "synced")}], outside)
    assert "sync" not in record and "synced" not in record
