"""`tablectl rollback` where tablectl was not installed from a bundle (a checkout, a bench): there
is no installed release's install.sh to run, so it refuses in one line, saying where it looked and
how a checkout goes back, and changes nothing. Going back on an installed table is tested with the
bundle itself, in tests/install/test_install.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_rollback_without_a_bundle_install_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "opt/tablectl").mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "rollback", "--root", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"tablectl: refused: no {tmp_path}/opt/tablectl/current/bundle/install.sh: tablectl is not installed from a "
        "bundle here, so there is no release to go back to (a checkout goes back with git: hardware/install.md, A3)"
    ]
    assert sorted(tmp_path.rglob("*")) == before
