"""`tablectl rollback`: go back one release on a table installed from a bundle (issue 33).

It runs the installed release's own installer, `/opt/tablectl/current/bundle/install.sh
--rollback`, and answers with its words and its exit code: that script switches `current` to the
previous release, restarts the service, waits for /api/health and switches back when the release
does not come up; it refuses while a round is open, and before a journal schema the previous
release cannot read. The logic lives in that one place, not here as a second copy: the installer
is shell and must work where Python cannot help (a release whose venv is broken is rolled back by
`install.sh --rollback` alone), and every installed release carries its own copy
(releases/<version>/bundle/install.sh), so this command and the installer never disagree.

Exit codes are the installer's: 0 done, 1 failed (the release that was current serves again when
the previous one did not come up), 2 refused before anything changed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

EXIT_REFUSED = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--health-timeout", type=int, metavar="S",
        help="how long the previous release has to come up healthy (install.sh's 90 s)",
    )  # fmt: skip
    parser.add_argument(
        "--migrate-journal", action="store_true",
        help="go back even though the two releases' journal schemas differ (install.sh says how)",
    )  # fmt: skip
    parser.add_argument(
        "--root", type=Path, default=Path("/"), metavar="DIR",
        help="the tree tablectl is installed in (/; a staging tree, a test's scratch root)",
    )  # fmt: skip


def installer(root: Path) -> Path:
    """The installed release's install.sh: the one `current` points at."""
    return root / "opt/tablectl/current/bundle/install.sh"


def run(args: argparse.Namespace) -> int:
    script = installer(args.root)
    if not script.is_file():
        print(
            f"tablectl: refused: no {script}: tablectl is not installed from a bundle here, so there is no "
            "release to go back to (a checkout goes back with git: hardware/install.md, A3)",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    if os.geteuid() != 0:
        print(
            "tablectl: refused: going back a release switches /opt/tablectl and restarts the service: "
            "run it as root: sudo tablectl rollback",
            file=sys.stderr,
        )
        return EXIT_REFUSED
    command = [str(script), "--rollback"]
    if args.health_timeout is not None:
        command += ["--health-timeout", str(args.health_timeout)]
    if args.migrate_journal:
        command.append("--migrate-journal")
    if args.root != Path("/"):
        command += ["--root", str(args.root)]
    print(f"tablectl rollback: {' '.join(command)} (the installed release's installer)", flush=True)
    return subprocess.run(command, check=False).returncode
