"""Shoe path latency and decoder throughput.

Latency: a CARD frame written to the device side of a real pty until `ShoeReader` hands the
decoded card to its callback (the table's side), over 2000 cards; compared with the time the
same frame takes on the wire at 115200 baud (10 bits a byte). Throughput: `Decoder.feed` plus
`parse_shoe_message` on a long stream read in 64-byte chunks, in frames per second.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
import tty
from typing import Any

from controller.engine.cards import STANDARD_DECK
from drivers.shoe.events import CardRead, Connected, DriverEvent
from drivers.shoe.protocol import (
    CardMessage,
    Decoder,
    Frame,
    Hello,
    encode_message,
    next_seq,
    parse_shoe_message,
)
from drivers.shoe.serial_backend import ShoeReader

CARDS = 2000
BAUD = 115200
THROUGHPUT_FRAMES = 100_000


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def measure_latency(cards: int = CARDS) -> list[float]:
    """Seconds from os.write of each CARD frame to the reader's callback getting the card."""
    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    arrived = threading.Event()
    handed_over: list[float] = []
    connected = threading.Event()

    def on_event(event: DriverEvent) -> None:
        if isinstance(event, CardRead):
            handed_over.append(time.perf_counter())
            arrived.set()
        elif isinstance(event, Connected):
            connected.set()

    reader = ShoeReader(os.ttyname(slave), on_event, heartbeat_timeout=30.0)
    latencies: list[float] = []
    try:
        reader.start()
        deadline = time.monotonic() + 10
        while not connected.is_set():  # answer the reader's HELLO request
            if time.monotonic() > deadline:
                raise RuntimeError("the shoe reader never connected to the benchmark pty")
            os.write(master, encode_message(Hello(1, "BENCH", "bench")))
            connected.wait(0.2)
        seq = 0
        for i in range(cards):
            seq = next_seq(seq)
            frame = encode_message(CardMessage(seq, STANDARD_DECK[i % 52]))
            _drain(master)  # the reader's ACKs
            arrived.clear()
            sent = time.perf_counter()
            os.write(master, frame)
            if not arrived.wait(5):
                raise RuntimeError(f"card {i} never reached the callback")
            latencies.append(handed_over[-1] - sent)
    finally:
        reader.stop()
        os.close(master)
        os.close(slave)
    return latencies


def measure_decoder(frames: int = THROUGHPUT_FRAMES) -> float:
    """Frames decoded and parsed per second from a stream read 64 bytes at a time."""
    stream = b"".join(
        encode_message(CardMessage(i % 255 + 1, STANDARD_DECK[i % 52])) for i in range(frames)
    )
    chunks = [stream[i : i + 64] for i in range(0, len(stream), 64)]
    decoder = Decoder()
    count = 0
    started = time.perf_counter()
    for chunk in chunks:
        for item in decoder.feed(chunk):
            if isinstance(item, Frame):
                parse_shoe_message(item)
                count += 1
    elapsed = time.perf_counter() - started
    if count != frames:
        raise RuntimeError(f"decoded {count} frames of {frames}")
    return count / elapsed


def run() -> dict[str, Any]:
    latencies = measure_latency()
    frame_bytes = len(encode_message(CardMessage(1, STANDARD_DECK[0])))
    line_time = frame_bytes * 10 / BAUD
    p50 = statistics.median(latencies)
    p99 = _percentile(latencies, 0.99)
    decoder_rate = measure_decoder()
    line_rate = BAUD / 10 / frame_bytes
    return {
        "name": "shoe",
        "what": (
            f"CARD frame written to a pty until ShoeReader hands the card over (software path; "
            f"a pty has no wire delay), p99 over {len(latencies)} cards (lower is better); "
            "decoder throughput in frames/s (higher is better)"
        ),
        "reference": (
            f"the line time of one {frame_bytes}-byte CARD frame at {BAUD} baud "
            f"({line_time * 1e3:.3f} ms); ratio = p99 latency / line time"
        ),
        "ratio": p99 / line_time,
        "results": {
            "cards": len(latencies),
            "p50_ms": round(p50 * 1e3, 4),
            "p99_ms": round(p99 * 1e3, 4),
            "max_ms": round(max(latencies) * 1e3, 4),
            "line_time_ms": round(line_time * 1e3, 4),
            "p50_over_line_time": round(p50 / line_time, 3),
            "decoder_frames_per_s": round(decoder_rate),
            "line_frames_per_s_at_115200": round(line_rate),
            "decoder_over_line_rate": round(decoder_rate / line_rate, 1),
        },
    }
