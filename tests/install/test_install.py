"""The offline bundle and its install.sh, as an operator runs them (issue 33), on x86_64.

`make bundle`'s builder (deploy/bundle.py) makes the linux-x86_64 bundle once for this file; two
newer versions are the same source with the version bumped (0.1.1), and one of them broken on
purpose (0.1.2: its API does not import, so the daemon never answers; and its journal schema is
one higher, so installing it is first refused until --migrate-journal says to go ahead). Each install runs the
bundle's own install.sh as root with the network OFF (a network namespace with only a loopback
device, which every install, the table's daemon and this file's requests to it share) into a
scratch root (`install.sh --root`): a directory with its own etc/passwd, etc/group and
run/systemd/system. systemd is replaced by a RECORDED STUB, tests/install/systemctl: it logs every
call, and its `start`/`restart` runs the unit's command (`/opt/tablectl/current/bin/tablectl run`)
from the scratch root on its config, journal and tokens, returning once the table answers or dies
as a Type=notify start does. What is real: the checksums, pip installing only from the bundle's
wheels, the venv, the user and groups (useradd --prefix), the links, the unit and udev files, the
daemon of each release and its /api/health. The Python 3.13 install uses pyenv's CPython 3.13 (or
TABLECTL_PYTHON313) as Raspberry Pi OS Trixie's; the refused Python 3.12 is a stand-in script
install.sh asks only for its version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUB = Path(__file__).with_name("systemctl")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
NEWER, BROKEN = "0.1.1", "0.1.2"
SCHEMA = int(re.findall(r"^SCHEMA_VERSION = (\d+)$", (ROOT / "controller/journal/log.py").read_text(), re.MULTILINE)[0])
DEALER, SUPERVISOR = "dealer-token-for-install-tests", "supervisor-token-for-install-tests"
HOST_PYTHON = "{}.{}".format(*sys.version_info[:2])


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}


def need(tool: str) -> None:
    if shutil.which(tool) is None or os.geteuid() != 0:
        message = (f"{tool} is missing (Debian: util-linux, iproute2)" if os.geteuid() == 0
                   else "the install tests run as root (useradd, network namespaces)")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def netns() -> Iterator[str]:
    """A network namespace with only a loopback device, held open by a `sleep` this fixture ends."""
    for tool in ("unshare", "nsenter", "ip", "setarch", "useradd"):
        need(tool)
    holder = subprocess.Popen(
        ["unshare", "--net", "sh", "-c", "ip link set lo up && echo up && exec sleep infinity"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "up\n", "no network namespace"
        ns = f"/proc/{holder.pid}/ns/net"
        yield ns
    finally:
        holder.kill()
        holder.wait(timeout=60)


def build(source: Path, out: Path, *pythons: str) -> Path:
    args = [sys.executable, str(ROOT / "deploy" / "bundle.py"), "--platform", "linux-x86_64",
            "--source", str(source), "--out", str(out)] + [a for p in pythons for a in ("--python", p)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    (tarball,) = out.glob("*.tar.gz")
    return tarball


def unpack(tarball: Path) -> Path:
    # As the operator does (hardware/install.md), with tar itself; Debian's Python 3.11.2 has no
    # extraction filters to ask tarfile for.
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(tarball.parent)], check=True)
    return tarball.parent / tarball.name.removesuffix(".tar.gz") / "install.sh"


def source_copy(dest: Path, version: str) -> Path:
    """This checkout's files (as the builder takes them) with another version in pyproject.toml."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, timeout=120).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    pyproject = dest / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace(f'version = "{VERSION}"', f'version = "{version}"', 1), encoding="utf-8")
    return dest


@dataclass
class Bundles:
    tarball: Path  # the x86_64 bundle of this checkout, as `make bundle` writes it
    base: Path  # its install.sh, unpacked
    newer: Path
    broken: Path


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory, netns: str) -> Bundles:
    tmp = tmp_path_factory.mktemp("bundles")
    tarball = build(ROOT, tmp / "base")
    newer = build(source_copy(tmp / "src-newer", NEWER), tmp / "newer", HOST_PYTHON)
    broken_src = source_copy(tmp / "src-broken", BROKEN)
    with (broken_src / "controller/api/app.py").open("a", encoding="utf-8") as app:
        app.write('\nraise RuntimeError("tablectl 0.1.2 is broken on purpose (tests/install)")\n')
    journal = broken_src / "controller/journal/log.py"
    journal.write_text(journal.read_text().replace(f"SCHEMA_VERSION = {SCHEMA}\n", f"SCHEMA_VERSION = {SCHEMA + 1}\n"))
    broken = build(broken_src, tmp / "broken", HOST_PYTHON)
    return Bundles(tarball, unpack(tarball), unpack(newer), unpack(broken))


class Scratch:
    """A scratch root: what install.sh and the stub systemd see as /."""

    def __init__(self, path: Path, netns: str) -> None:
        self.path, self.netns = path, netns
        (path / "etc").mkdir(parents=True)
        (path / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
        (path / "etc/group").write_text("root:x:0:\ndialout:x:20:\nvideo:x:44:\n")
        (path / "etc/shadow").write_text("root:*::0:99999:7:::\n")
        (path / "etc/gshadow").write_text("root:*::\n")
        (path / "run/systemd/system").mkdir(parents=True)  # systemd "runs" here
        (path / "bin").mkdir()
        shutil.copy2(STUB, path / "bin" / "systemctl")

    def env(self) -> dict[str, str]:
        """The test's environment less its Python settings (PYTHONPATH would put this checkout before
        the installed release), with the stub systemctl first on PATH."""
        return {**clean_env(), "STUB_ROOT": str(self.path), "PATH": f"{self.path / 'bin'}:{os.environ['PATH']}"}

    def install(
        self, script: Path, *args: str, arch: str | None = None, wrap: tuple[str, ...] = (), path: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """install.sh with the network off (the namespace has only loopback), run through `wrap` if
        given, with another PATH if given."""
        command = ["nsenter", f"--net={self.netns}", *wrap, *(["setarch", arch] if arch else []), str(script),
                   "--root", str(self.path), "--health-timeout", "120", *args]
        env = self.env() | ({"PATH": path} if path else {})
        return subprocess.run(command, env=env, cwd=self.path, capture_output=True, text=True, timeout=1200)

    def tablectl(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The installed release's `tablectl`, as the operator runs it, with the network off."""
        command = ["nsenter", f"--net={self.netns}", str(self.path / "opt/tablectl/current/bin/tablectl"), *args]
        return subprocess.run(command, env=self.env(), cwd=self.path, capture_output=True, text=True, timeout=1200)

    def systemctl(self, *args: str) -> int:
        command = ["nsenter", f"--net={self.netns}", str(self.path / "bin/systemctl"), *args]
        return subprocess.run(command, env=self.env(), cwd=self.path, timeout=300).returncode

    def api(self, method: str, path: str, token: str, body: object = None) -> tuple[int, dict[str, object]]:
        """One request to the table in the namespace, as a screen would send it."""
        code = (
            "import json, sys, urllib.request, urllib.error\n"
            "m, url, token, body = sys.argv[1:5]\n"
            "req = urllib.request.Request(url, method=m, data=body.encode() if body != 'null' else None,"
            " headers={'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json'})\n"
            "try:\n    r = urllib.request.urlopen(req, timeout=30); print(r.status, r.read().decode())\n"
            "except urllib.error.HTTPError as e:\n    print(e.code, e.read().decode())\n"
        )
        done = subprocess.run(["nsenter", f"--net={self.netns}", sys.executable, "-c", code, method,
                               f"http://127.0.0.1:8000{path}", token, json.dumps(body)],
                              capture_output=True, text=True, timeout=120, check=True)
        status, _, text = done.stdout.partition(" ")
        return int(status), json.loads(text)

    def serving(self, status: str = "ok") -> str:
        code, health = self.api("GET", "/api/health", SUPERVISOR)
        assert code == 200 and health["status"] == status, health
        return str(health["version"])

    def wait_health(self, status: str) -> None:
        """Until /api/health answers `status` (each request is the pace; 60 s is a backstop only)."""
        deadline = time.monotonic() + 60
        while self.api("GET", "/api/health", SUPERVISOR)[1]["status"] != status:
            assert time.monotonic() < deadline, f"/api/health never answered {status!r}"

    def releases(self) -> list[str]:
        return sorted(p.name for p in (self.path / "opt/tablectl/releases").iterdir())

    def current(self) -> str:
        return os.readlink(self.path / "opt/tablectl/current")

    def configure(self) -> None:
        """What the operator writes after the first install (install.md, steps 5-7)."""
        etc = self.path / "etc/tablectl"
        (etc / "table.toml").write_text(
            f'[table]\nid = "TEST-1"\ngame = "grand-slam"\n\n[http]\nhost = "127.0.0.1"\nport = 8000\n\n'
            f'[state]\ndir = "{self.path}/var/lib/tablectl"\n'
        )
        (etc / "credentials").mkdir(mode=0o700)
        for name, token in (("dealer-token", DEALER), ("supervisor-token", SUPERVISOR)):
            (etc / "credentials" / name).write_text(token + "\n")
            (etc / "credentials" / name).chmod(0o400)

    def tree(self) -> dict[str, tuple[int, str]]:
        """Every file and link under the root (the stub's own log aside): mode and content hash."""
        out = {}
        for p in sorted(self.path.rglob("*")):
            rel = str(p.relative_to(self.path))
            if rel == "systemctl.log":
                continue
            if p.is_symlink():
                out[rel] = (0, os.readlink(p))
            elif p.is_file():
                out[rel] = (p.stat().st_mode, hashlib.sha256(p.read_bytes()).hexdigest())
        return out


@pytest.fixture
def scratch(tmp_path: Path, netns: str) -> Iterator[Scratch]:
    root = Scratch(tmp_path / "root", netns)
    yield root
    root.systemctl("stop", "tablectl")  # the daemon the stub started, if any, by its PID


def test_two_builds_of_one_commit_are_the_same_bundle(bundles: Bundles, tmp_path: Path) -> None:
    again = build(ROOT, tmp_path)

    def sums(tarball: Path) -> str:
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(tarball.name.removesuffix(".tar.gz") + "/SHA256SUMS")
            assert member is not None
            return member.read().decode()

    assert sums(again) == sums(bundles.tarball)  # the same files, each the same (the file list and hashes)
    assert again.read_bytes() == bundles.tarball.read_bytes()  # and the archive itself, byte for byte
    with tarfile.open(again) as tar:
        names = tar.getnames()
    top = again.name.removesuffix(".tar.gz")
    for part in ("install.sh", "probe.py", "SHA256SUMS", "BUNDLE", "install.md", "systemd/tablectl.service",
                 "systemd/99-tablectl.rules", f"wheels/tablectl-{VERSION}-py3-none-any.whl"):
        assert f"{top}/{part}" in names
    wheels = [n.rsplit("/", 1)[1] for n in names if n.endswith(".whl")]
    for python in ("cp311", "cp313"):  # Bookworm's and Trixie's Python
        assert any("numpy-" in n and f"-{python}-manylinux" in n for n in wheels), wheels
    # Every compiled dependency for both: what has a cp311 build has its cp313 one (abi3 and pure
    # wheels serve both as they are).
    cp311 = {n.split("-")[0] for n in wheels if "-cp311-cp311-" in n}
    cp313 = {n.split("-")[0] for n in wheels if "-cp313-cp313-" in n}
    assert cp311 and cp311 == cp313, (cp311, cp313)
    # And every wheel is pinned (deploy/constraints.txt): an unpinned one changes when its project
    # releases, and two builds of one commit would differ.
    pins = {line.split("==")[0].replace("-", "_").lower(): line.split("==")[1]
            for line in (ROOT / "deploy/constraints.txt").read_text().splitlines() if "==" in line}
    for wheel in wheels:
        name, version = wheel.split("-")[:2]
        if name != "tablectl":
            assert pins.get(name.lower()) == version, f"{wheel}: not pinned in deploy/constraints.txt"


def test_a_fresh_install_and_the_same_bundle_again(bundles: Bundles, scratch: Scratch) -> None:
    done = scratch.install(bundles.base)
    assert done.returncode == 0, done.stdout + done.stderr
    for line in ("every file matches SHA256SUMS", "user tablectl: created", "group gpio: created",
                 f"pip install --no-index --find-links wheels/ tablectl[pi]=={VERSION}",
                 f"current -> releases/{VERSION}", "then: systemctl enable --now tablectl"):
        assert line in done.stdout, done.stdout
    root = scratch.path
    assert "tablectl:x:" in (root / "etc/passwd").read_text()
    groups = {line.split(":")[0]: line.split(":")[3] for line in (root / "etc/group").read_text().splitlines()}
    assert all("tablectl" in groups[g].split(",") for g in ("gpio", "dialout", "video")), groups
    assert scratch.current() == f"releases/{VERSION}"
    release = root / "opt/tablectl/releases" / VERSION
    assert "include-system-site-packages = true" in (release / "pyvenv.cfg").read_text()
    unit = (root / "etc/systemd/system/tablectl.service").read_text()
    assert "ExecStart=/opt/tablectl/current/bin/tablectl run --config /etc/tablectl/table.toml" in unit
    assert (root / "etc/udev/rules.d/99-tablectl.rules").is_file()
    assert (root / "var/lib/tablectl").is_dir() and (root / "etc/tablectl").is_dir()
    version = subprocess.run([str(release / "bin/python"), "-c", "import importlib.metadata as m, controller;"
                              "print(m.version('tablectl'), controller.__file__)"],
                             capture_output=True, text=True, check=True, timeout=120, env=clean_env(),
                             cwd=root).stdout.split()
    assert version[0] == VERSION and version[1].startswith(str(release)), version  # not this checkout
    # Compiled in checked-hash mode, the only bytecode `tablectl verify` accepts (issue 31).
    pycs = list(Path(version[1]).parent.glob("__pycache__/*.pyc"))
    assert pycs and all(p.read_bytes()[4:8] == b"\x03\0\0\0" for p in pycs), pycs

    before = scratch.tree()
    (root / "systemctl.log").unlink()
    again = scratch.install(bundles.base)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "installed already from this bundle: kept as it is" in again.stdout
    assert f"tablectl {VERSION} is current already" in again.stdout
    assert scratch.tree() == before
    assert not (root / "systemctl.log").exists()  # no call to systemd at all: nothing restarted


@pytest.mark.slow  # three releases, each started and waited for
def test_upgrade_refused_mid_round_kept_with_a_device_fault_rolled_back_when_unhealthy_and_by_hand(
    bundles: Bundles, scratch: Scratch
) -> None:
    assert scratch.install(bundles.base).returncode == 0
    scratch.configure()
    assert scratch.systemctl("enable", "--now", "tablectl") == 0 and scratch.systemctl("start", "tablectl") == 0
    assert scratch.serving() == VERSION
    status, opened = scratch.api("POST", "/api/rounds", DEALER, {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None})
    assert status == 201, opened
    journal = scratch.path / "var/lib/tablectl/journal.sqlite3"

    # A round is being dealt: the upgrade is refused before anything changes.
    refused = scratch.install(bundles.newer)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "round 1 is open: upgrade between rounds only" in refused.stderr
    assert scratch.current() == f"releases/{VERSION}" and scratch.serving() == VERSION

    status, _ = scratch.api("POST", "/api/rounds/current/void", SUPERVISOR, {"reason": "upgrade test"})
    assert status == 200
    _, health = scratch.api("GET", "/api/health", SUPERVISOR)
    seq = int(str(health["journal_seq"]))

    # The shoe is unplugged: a latched fault of the table (a device's), not of the software.
    status, _ = scratch.api("POST", "/api/sim/fault", SUPERVISOR, {"fault": "drop"})
    assert status == 200
    scratch.wait_health("fault")
    # Two older releases, as earlier installs left them (hard-linked copies, installed days ago).
    releases = scratch.path / "opt/tablectl/releases"
    for old, days in (("0.0.8", 2), ("0.0.9", 1)):
        shutil.copytree(releases / VERSION, releases / old, symlinks=True, copy_function=os.link)
        (releases / old / ".bundle-digest").unlink()
        (releases / old / ".bundle-digest").write_text("an older bundle\n")
        os.utime(releases / old / ".bundle-digest", (time.time() - days * 86400,) * 2)

    upgraded = scratch.install(bundles.newer)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert f"upgrading tablectl {VERSION} -> {NEWER}" in upgraded.stdout
    # Healthy: its software is up; the fault it answers with is the shoe's, which going back would not mend.
    assert (f"healthy: http://127.0.0.1:8000/api/health answers from tablectl {NEWER}, its software up; play is "
            "stopped by latched faults of the table, not of the release: Shoe disconnected (shoe-disconnected)"
            ) in upgraded.stdout, upgraded.stdout
    assert scratch.current() == f"releases/{NEWER}" and scratch.serving("fault") == NEWER
    # The last 3 releases are kept (current, previous and the newest other), the older one removed.
    assert "removed release 0.0.8: an old one past the last 3" in upgraded.stdout
    assert scratch.releases() == sorted(["0.0.9", VERSION, NEWER])
    _, health = scratch.api("GET", "/api/health", SUPERVISOR)
    assert int(str(health["journal_seq"])) >= seq and journal.is_file()  # the same journal, read on
    assert scratch.api("GET", "/api/rounds/1", SUPERVISOR)[1]["status"] == "void"
    _, state = scratch.api("GET", "/api/state", SUPERVISOR)
    faults = state["faults"]
    assert isinstance(faults, list) and faults, state
    for fault in faults:
        cleared, _ = scratch.api("POST", f"/api/faults/{fault['id']}/clear", SUPERVISOR,
                                 {"action": "dismiss", "reason": "the shoe is plugged in again"})
        assert cleared == 200
    scratch.wait_health("ok")

    # A release that would convert the journal says so before it switches, and switches nothing.
    told = scratch.install(bundles.broken)
    assert told.returncode == 2, told.stdout + told.stderr
    assert (f"tablectl {BROKEN} converts the journal from schema {SCHEMA} to {SCHEMA + 1} when it starts, and {NEWER}"
            " cannot read it after that") in told.stderr
    assert scratch.current() == f"releases/{NEWER}" and scratch.serving() == NEWER

    failed = scratch.install(bundles.broken, "--migrate-journal")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"rolling back to tablectl {NEWER}" in failed.stdout
    assert f"tablectl {BROKEN} did not become healthy within 120 s: rolled back, tablectl {NEWER} is serving again" in failed.stderr
    assert scratch.current() == f"releases/{NEWER}" and scratch.serving() == NEWER
    assert os.readlink(scratch.path / "opt/tablectl/previous") == f"releases/{VERSION}"

    # Going back by hand, `tablectl rollback`: refused while a round is being dealt, then done.
    status, opened = scratch.api("POST", "/api/rounds", DEALER, {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None})
    assert status == 201, opened
    refused = scratch.tablectl("rollback", "--root", str(scratch.path), "--health-timeout", "120")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "install: REFUSED: round 2 is open: upgrade between rounds only" in refused.stderr
    assert scratch.current() == f"releases/{NEWER}" and scratch.serving() == NEWER
    status, _ = scratch.api("POST", "/api/rounds/current/void", SUPERVISOR, {"reason": "rollback test"})
    assert status == 200

    back = scratch.tablectl("rollback", "--root", str(scratch.path), "--health-timeout", "120")
    assert back.returncode == 0, back.stdout + back.stderr
    assert (f"tablectl rollback: {scratch.path}/opt/tablectl/current/bundle/install.sh --rollback --health-timeout 120"
            f" --root {scratch.path} (the installed release's installer)") in back.stdout
    assert f"tablectl {NEWER} -> tablectl {VERSION}" in back.stdout
    assert f"healthy: http://127.0.0.1:8000/api/health answers ok from tablectl {VERSION}" in back.stdout
    assert f"install: done: tablectl {VERSION} is current" in back.stdout
    assert scratch.current() == f"releases/{VERSION}" and scratch.serving() == VERSION
    assert scratch.api("GET", "/api/rounds/1", SUPERVISOR)[1]["status"] == "void"  # the journal kept

    # install.sh --rollback of the release now current goes forward again; going back removes no release.
    forward = scratch.install(scratch.path / "opt/tablectl/current/bundle/install.sh", "--rollback")
    assert forward.returncode == 0, forward.stdout + forward.stderr
    assert f"tablectl {VERSION} -> tablectl {NEWER}" in forward.stdout
    assert scratch.current() == f"releases/{NEWER}" and scratch.serving() == NEWER
    assert scratch.releases() == sorted(["0.0.9", VERSION, NEWER, BROKEN])


def test_a_bundle_for_another_architecture_is_refused(bundles: Bundles, scratch: Scratch) -> None:
    done = scratch.install(bundles.base, arch="i686")  # a 32-bit personality: uname -m says i686
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"install: REFUSED: this bundle is for x86_64 and this machine is i686: use tablectl-{VERSION}-linux-i686.tar.gz"
        " (a Pi needs 64-bit Raspberry Pi OS: aarch64)"
    ]
    assert not (scratch.path / "opt").exists() and "tablectl" not in (scratch.path / "etc/passwd").read_text()


def test_a_changed_bundle_is_refused(bundles: Bundles, scratch: Scratch, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(bundles.base.parent, copy, copy_function=os.link)  # hard links: no 100 MB copy
    (copy / "install.md").unlink()
    (copy / "install.md").write_text("changed\n")
    done = scratch.install(copy / "install.sh")
    assert done.returncode == 2
    assert "install: REFUSED: the bundle is damaged or was changed: install.md: FAILED" in done.stderr
    assert not (scratch.path / "opt").exists()


def no_systemctl_path(tmp_path: Path) -> str:
    """A PATH with every command of this machine but systemctl: a machine without systemd."""
    bin_dir = tmp_path / "no-systemd-bin"
    bin_dir.mkdir()
    for directory in [*os.environ["PATH"].split(os.pathsep), "/usr/sbin", "/usr/bin", "/sbin", "/bin"]:
        if not os.path.isdir(directory) or Path(directory).resolve() == bin_dir:
            continue
        for tool in os.listdir(directory):
            if tool != "systemctl" and not (bin_dir / tool).exists():
                (bin_dir / tool).symlink_to(Path(directory) / tool)
    return str(bin_dir)


REFUSALS = {
    "disk too small": (
        r"install: REFUSED: not enough disk space for {root}/opt/tablectl: \d+ MB free on {root}/opt, \d+ MB needed: "
        r"remove releases no longer needed from {root}/opt/tablectl/releases/ \(never current or previous\) or free space"
    ),
    "no systemd": (
        r"install: REFUSED: no systemd \(systemctl not found\): tablectl runs as a systemd service; install on "
        r"Raspberry Pi OS"
    ),
    "systemd not running": (
        r"install: REFUSED: systemd is not running here \(no /run/systemd/system: a chroot or container\?\): install "
        r"on the booted Pi, or add --no-start"
    ),
    "python 3.12": (
        r"install: REFUSED: {python} is Python 3.12 and this bundle has wheels for Python 3.11 and 3.13 \(Raspberry "
        r"Pi OS Bookworm has 3.11, Trixie 3.13\): install on one of those, or name such a Python with --python"
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_machine_that_cannot_take_the_bundle_is_refused_in_one_line(
    bundles: Bundles, scratch: Scratch, tmp_path: Path, case: str
) -> None:
    root = scratch.path
    wrap: tuple[str, ...] = ()
    path = None
    args: list[str] = []
    python = tmp_path / "python3.12"
    if case == "disk too small":  # /opt on a 16 MB file system of its own, in a mount namespace of its own
        (root / "opt").mkdir()
        wrap = ("unshare", "--mount", "sh", "-c", 'mount -t tmpfs -o size=16m tmpfs "$0" && exec "$@"',
                str(root / "opt"))
    elif case == "no systemd":
        path = no_systemctl_path(tmp_path)
    elif case == "systemd not running":
        (root / "run/systemd/system").rmdir()
    else:  # a stand-in for a Python 3.12: install.sh asks the Python only for its version before it refuses
        python.write_text("#!/bin/sh\necho 3.12\n")
        python.chmod(0o755)
        args = ["--python", str(python)]
    before = scratch.tree()
    done = scratch.install(bundles.base, *args, wrap=wrap, path=path)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert re.fullmatch(REFUSALS[case].format(root=re.escape(str(root)), python=re.escape(str(python))), lines[0]), lines
    assert scratch.tree() == before  # nothing made or changed: no user, no release, no link
    assert "tablectl" not in (root / "etc/passwd").read_text()


def python313() -> Path:
    """A CPython 3.13 (Raspberry Pi OS Trixie's) on this x86_64 machine: pyenv's, or python3.13."""
    for found in (os.environ.get("TABLECTL_PYTHON313"), "/root/.pyenv/versions/3.13.0/bin/python3.13",
                  shutil.which("python3.13")):
        if found and os.access(found, os.X_OK):
            return Path(found)
    message = "no Python 3.13 here (set TABLECTL_PYTHON313, or pyenv install 3.13.0)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.slow  # a venv filled by pip for each Python, and the table started on both
def test_python_3_13_after_a_system_upgrade_makes_the_release_again_and_runs_the_table(
    bundles: Bundles, scratch: Scratch, tmp_path: Path
) -> None:
    python = python313()
    release = scratch.path / "opt/tablectl/releases" / VERSION
    site = release / "lib/python3.13/site-packages"
    # Installed on Bookworm (the system's Python 3.11) and serving.
    assert scratch.install(bundles.base).returncode == 0
    scratch.configure()
    assert scratch.systemctl("start", "tablectl") == 0 and scratch.serving() == VERSION

    # The system is now Trixie (Python 3.13): the same bundle again. Not under a running table...
    refused = scratch.install(bundles.base, "--python", str(python))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"install: REFUSED: release {VERSION} is current and was made for Python 3.11, and {python} is Python 3.13: "
        "stop the table between rounds (systemctl stop tablectl) and run this again to make it for Python 3.13"
    ]
    assert scratch.serving() == VERSION and not site.exists()
    # ...and with it stopped, the release is made again for 3.13, from the bundle's cp313 wheels.
    assert scratch.systemctl("stop", "tablectl") == 0
    done = scratch.install(bundles.base, "--python", str(python))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"x86_64, Python 3.13 ({python})" in done.stdout
    assert (f"release {VERSION} was made for Python 3.11 and {python} is Python 3.13 (an upgraded system): made again"
            " for 3.13") in done.stdout
    (numpy_wheel,) = site.glob("numpy-*.dist-info/WHEEL")  # the bundle holds cp311 ones beside them
    assert "Tag: cp313-cp313-manylinux" in numpy_wheel.read_text()
    assert not (release / "lib/python3.11").exists()
    loaded = subprocess.run(
        [str(release / "bin/python"), "-c", "import sys, numpy, cv2, pydantic_core, websockets, cffi, "
         "cryptography.hazmat.bindings._rust; print(sys.version_info[:2] == (3, 13), numpy.__file__)"],
        capture_output=True, text=True, timeout=120, env=clean_env(), cwd=scratch.path,
    )
    assert loaded.returncode == 0 and loaded.stdout.split() == ["True", str(site / "numpy/__init__.py")], loaded

    # The installed command, as the operator runs it after an install: it answers on 3.13.
    verify = scratch.tablectl("verify", "--state-dir", str(tmp_path))
    assert verify.returncode == 1, verify.stdout + verify.stderr  # an unsigned bundle: not a signed release
    assert f"the code in {site}" in verify.stdout
    assert "software not authenticated" in verify.stdout and "MANIFEST.sha256" in verify.stdout, verify.stdout

    # And the table itself runs on it, on the journal it kept: the unit's command, as systemd starts it.
    assert scratch.systemctl("start", "tablectl") == 0, (scratch.path / "tablectl.stub.log").read_text()
    assert scratch.serving() == VERSION
