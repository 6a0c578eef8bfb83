"""What every test shares: hypothesis runs the same examples on every CI run (CI=true), so a
landing's result can be reproduced; elsewhere each run explores new ones."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI") == "true":
    settings.load_profile("ci")
