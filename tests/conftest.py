"""What every test shares: hypothesis runs the same examples on every CI run (CI=true), so a
landing's result can be reproduced; elsewhere each run explores new ones. No example is timed
(hypothesis's 200 ms deadline failed a decoder property at a load of 15 on 2 cores): speed is
measured by benchmarks/ only."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("untimed", deadline=None)
settings.register_profile("ci", parent=settings.get_profile("untimed"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("CI") == "true" else "untimed")
