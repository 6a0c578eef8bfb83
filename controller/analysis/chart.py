"""A PNG bar chart of the distribution of net results (OpenCV draws it; imported only here)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any


def distribution_chart(doc: dict[str, Any], path: Path, width: int = 960, height: int = 540) -> None:
    """One panel per wager: the probability of each net result per round."""
    import cv2
    import numpy as np

    series = _series(doc)
    image = np.full((height, width, 3), 255, np.uint8)
    cv2.putText(
        image,
        f"{doc['game']}: net result per round ({doc['method']})",
        (16, 28),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.7,
        (0, 0, 0),
        1,
        cv2.LINE_AA,
    )
    panel_w = (width - 32) // max(len(series), 1)
    top, bottom = 50, height - 40
    for i, (name, points) in enumerate(series.items()):
        x0 = 16 + i * panel_w
        cv2.putText(image, name, (x0 + 4, top + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (60, 60, 60), 1, cv2.LINE_AA)
        peak = max(p for _, p in points) or 1.0
        bar_w = max((panel_w - 16) // max(len(points), 1), 2)
        for j, (net, p) in enumerate(points):
            x = x0 + 8 + j * bar_w
            h = int((bottom - top - 30) * p / peak)
            colour = (60, 140, 60) if net > 0 else (60, 60, 200) if net < 0 else (150, 150, 150)
            cv2.rectangle(image, (x, bottom - h), (x + bar_w - 2, bottom), colour, -1)
            if len(points) <= 12:
                cv2.putText(image, str(net), (x, bottom + 16), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    if not cv2.imwrite(str(path), image):
        raise ValueError(f"--chart {path}: cannot write the PNG there")


def _series(doc: dict[str, Any]) -> dict[str, list[tuple[int, float]]]:
    if "distribution" in doc:  # Monte Carlo: frequencies
        return {name: [(int(n), float(p)) for n, p in dist.items()] for name, dist in doc["distribution"].items()}
    out = {}
    for group in ("wagers", "side_bets"):
        for name, w in doc.get(group, {}).items():
            out[name] = [(int(n), float(Fraction(p))) for n, p in w["distribution"].items()]
    return out
