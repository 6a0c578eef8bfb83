"""The live floor view at a casino's size (issue 32, point 5): the CPU one refresh of
`tablectl floor` costs with 1,000 tables on the board, against the goal of 50 ms.

The board is filled as the view fills it: 1,000 tables' messages in the floor's published schema
(hardware/floor.md: retained status with a pit, meters, faults on every 97th table, a tenth of
them offline, then entries) given to `FloorBoard.take` as paho hands them over. Measured in CPU
time of this thread (time.thread_time), median of 50 refreshes each:

  terminal  `render`: the whole board, 1,000 lines, faulted tables first (what --once prints; on
            a terminal it is also cut to the screen's height, which is cheaper)
  pit       `render --pit`: one pit of four (250 tables)
  page      what `tablectl floor --http` answers the page each time it asks: `board_json` encoded
  take      one entry message taken into the board (1,000 tables at one entry a second: 1,000 a
            second), CPU per message over 20,000
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from controller.floor.view import FloorBoard, board_json, render

TABLES = 1000
REFRESHES = 50
GOAL_MS = 50.0
SILENT = {"id": 40, "code": "shoe-silent", "title": "Shoe silent", "message": "The shoe has been silent for 3 s"}


def _message(table: str, topic_kind: str, **fields: Any) -> tuple[str, bytes]:
    payload = {"v": 1, "site": "main-floor", "table": table, "boot": "b1", **fields}
    return f"tablectl/main-floor/{table}/{topic_kind}", json.dumps(payload).encode()


def fill(board: FloorBoard) -> None:
    for n in range(TABLES):
        table = f"T{n:04d}"
        board.take(*_message(table, "status", status="offline" if n % 10 == 7 else "online", game="grand-slam",
                             pit=f"pit-{n % 4}", at="2026-01-05T21:00:00.000Z"))  # fmt: skip
        meters = {"rounds": 400 + n, "total_wagered": 84_500 + n, "total_paid": 80_000}
        board.take(*_message(table, "meters", seq=1, game="grand-slam", meters=meters))
        if n % 97 == 3:
            board.take(*_message(table, "fault", seq=1, raised=[SILENT], cleared=[], open=[SILENT]))
        board.take(*_message(table, "entry", seq=2, at="2026-01-05T21:04:31.120Z", round=401, kind="card",
                             body={"card": "AS"}))  # fmt: skip


def _cpu_ms(work: Any) -> float:
    times = []
    for _ in range(REFRESHES):
        started = time.thread_time()
        work()
        times.append((time.thread_time() - started) * 1000)
    return round(statistics.median(times), 2)


def run() -> dict[str, Any]:
    board = FloorBoard()
    fill(board)
    header = f"tablectl floor: mqtts://floor:8883 (connected), {len(board.tables)} table(s)"
    text = render(board, header)
    assert len(text.splitlines()) == TABLES + 3, "the board does not hold every table"
    terminal = _cpu_ms(lambda: render(board, header))
    pit = _cpu_ms(lambda: render(board, header, pit="pit-2"))
    page = _cpu_ms(lambda: json.dumps(board_json(board, header), separators=(",", ":")).encode())
    messages = [
        _message(
            f"T{n % TABLES:04d}",
            "entry",
            seq=3 + n // TABLES,
            at="2026-01-05T21:04:32.000Z",
            round=402,
            kind="card",
            body={"card": "KD"},
        )
        for n in range(20 * TABLES)
    ]
    started = time.thread_time()
    for topic, data in messages:
        board.take(topic, data)
    take_us = (time.thread_time() - started) / len(messages) * 1e6
    return {
        "name": "floor_view",
        "what": (
            f"tablectl floor with {TABLES:,} tables on the board, CPU a refresh (median of {REFRESHES}): the whole "
            f"board as text {terminal} ms, one pit of four {pit} ms, the web page's board as JSON {page} ms; "
            f"taking one entry message {take_us:.1f} us (1,000 tables at one entry a second: "
            f"{take_us * TABLES / 1000:.1f} ms of CPU a second)"
        ),
        "reference": f"the goal: a refresh under {GOAL_MS:g} ms of CPU at {TABLES:,} tables",
        "ratio": round(max(terminal, page) / GOAL_MS, 3),
        "tables": TABLES,
        "refresh_text_ms": terminal,
        "refresh_one_pit_ms": pit,
        "refresh_page_json_ms": page,
        "take_entry_us": round(take_us, 2),
        "bytes_page_json": len(json.dumps(board_json(board, header), separators=(",", ":"))),
    }
