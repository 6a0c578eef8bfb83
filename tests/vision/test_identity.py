"""The speed work changes no reading (issue 35, point 4): the frames of tests/vision/identity.py's
small set (tuning seeds: the robustness benchmark's conditions read cold, and the speed
benchmark's still / one wager changes / cold sequence) read exactly as the reader at main's head
read them before the speed work (tests/vision/identity_golden.json, generated then: every zone's
state, value, chips bottom to top and reason, the pucks, the camera's check, and which zones were
read afresh)."""

from __future__ import annotations

import json

from .identity import GOLDEN, differences, readings


def test_the_readings_are_those_before_the_speed_work() -> None:
    golden = json.loads(GOLDEN.read_text())
    now = readings("small", evidence=False)
    assert sorted(now) == sorted(golden)
    assert differences(golden, now, evidence=False) == []
