"""hardware/install.md's developer appendix (a git checkout): its upgrade installs exactly the
version pulled, and its "Going back" installs the one before (issue 30, item 13): a plain `git pull` then `pip install '.[pi]'` reused setuptools'
`build/lib`, so a module deleted upstream stayed installed.

The guide's own lines are run, in a clone standing in for /opt/tablectl/src: A1's install of
version A, then A2's `git` and `pip` lines after version B removed a module and a layout and
added a module, then the `git` and `pip` lines of A3, going back. (The bundle's upgrade and roll
back: tests/install/.) The lines that need a Pi (systemd,
the doctor as the service's user) are not run; `sudo` is dropped (the test runs as whoever runs
it), and pip is this test's own, pointed at the clone's venv with --python and --no-deps: what is
checked is which of tablectl's files are installed, not its dependencies, which stay as they are.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "hardware" / "install.md"
#: What version B removes upstream, and what it adds.
REMOVED = ("controller/cli/synth.py", "hardware/layouts/grand-slam-7.toml")
ADDED = "controller/added_in_b.py"
#: The guide's lines run here: the ones that change the checkout or the venv.
RUN = re.compile(r"^sudo (git |rm |\.venv/bin/pip )")


def guide_lines(heading: str) -> list[str]:
    """The indented command lines of the first code block under `heading` that RUN selects, sudo
    dropped."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(heading)
    block: list[str] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break  # the next section
        if line.startswith("    "):
            block.append(line.strip())
        elif block and line.strip():
            break  # the block ended
    picked = [line.removeprefix("sudo ") for line in block if RUN.match(line)]
    assert picked, f"no git or pip line under {heading!r} in {GUIDE}"
    return picked


def run(lines: list[str], opt: Path) -> None:
    """Each line as bash runs it in `opt`, with `.venv/bin/pip` this test's pip on the clone's venv."""
    pip = shlex.join([sys.executable, "-m", "pip", "--python", str(opt / ".venv" / "bin" / "python")])
    for line in lines:
        command = line.replace(".venv/bin/pip install", f"{pip} install --quiet --no-deps", 1)
        done = subprocess.run(["bash", "-c", command], cwd=opt, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=120,
    )


def installed(opt: Path) -> set[str]:
    """tablectl's files in the venv, as paths in the checkout (compiled files left out)."""
    (site,) = (opt / ".venv" / "lib").glob("python3*/site-packages")
    return {
        str(p.relative_to(site))
        for top in ("controller", "drivers", "vision", "hardware")
        for p in (site / top).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_upgrade_installs_exactly_the_new_version_and_going_back_the_old(tmp_path: Path) -> None:
    upstream, opt = tmp_path / "upstream", tmp_path / "opt" / "tablectl"
    git(tmp_path, "clone", "--quiet", str(ROOT), str(upstream))
    git(tmp_path, "clone", "--quiet", str(upstream), str(opt))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(opt / ".venv")], check=True, timeout=120)

    step4 = [line for line in guide_lines("### A1. Install tablectl from a checkout") if "pip install" in line]
    run(step4, opt)  # version A, as A1 installs it
    version_a = installed(opt)
    assert set(REMOVED) <= version_a and ADDED not in version_a
    assert (opt / "build").is_dir()  # what a plain reinstall would build from again

    for path in REMOVED:
        (upstream / path).unlink()
    (upstream / ADDED).write_text('"""Only in version B."""\n', encoding="utf-8")
    git(upstream, "add", "-A")
    git(upstream, "commit", "--quiet", "-m", "version B: a module and a layout removed, a module added")

    upgrade = guide_lines("### A2. Upgrade a checkout")
    assert any(line.startswith("git pull") for line in upgrade), upgrade
    run(upgrade, opt)
    version_b = installed(opt)
    assert not set(REMOVED) & version_b, "files removed upstream are still installed after the upgrade"
    assert ADDED in version_b
    assert version_b == (version_a - set(REMOVED)) | {ADDED}

    run(guide_lines("### A3. Going back on a checkout"), opt)
    assert installed(opt) == version_a, "going back did not install the version run before the upgrade"
