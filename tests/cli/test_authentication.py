"""Software authentication (issue 31): a signed release installed from its wheel into a fresh venv.

The wheel is built from this checkout and signed with a throwaway release key made in a temp dir
(`python -m controller.security.release`, what `make release` runs); the venv borrows only the test venv's
third-party packages (a .pth line: its editable tablectl is never seen), so what runs and what is
checked is the installed copy. Unchanged, `tablectl verify` passes and its seeded HMAC is what
hardware/authentication.md's procedure gives with sha256sum, cut, xargs and openssl; with one
byte changed in one installed module and one static screen file, `tablectl verify` fails naming
both, and `tablectl run --sim` starts with play stopped by the fault that names them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from importlib._bootstrap_external import (  # type: ignore[attr-defined]
    _code_to_hash_pyc,
    _code_to_timestamp_pyc,
)
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.testing import SUPERVISOR, Daemon

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "hardware" / "authentication.md"
SEED = "5eed0fc0ffee"
TABLE_PY = "controller/table/table.py"
DEALER_JS = "controller/api/static/js/dealer.js"
FAULTS_PY = "controller/table/faults.py"
FAULTS_PYC = f"controller/table/__pycache__/faults.{sys.implementation.cache_tag}.pyc"
VISIBILITY_PY = "controller/table/visibility.py"
VISIBILITY_PYC = f"controller/table/__pycache__/visibility.{sys.implementation.cache_tag}.pyc"


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        message = f"{name} is missing (the regulator's standard tools: coreutils, openssl)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


class Release:
    """A signed wheel installed into a fresh venv."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.key = base / "release.key"
        self.public = base / "release-key.pub"
        private = Ed25519PrivateKey.generate()
        self.key.write_bytes(
            private.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        self.public.write_bytes(
            private.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        self.wheel = self.build("0.1.0")
        self.venv = base / "venv"
        run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)])
        python = self.venv / "bin" / "python"
        self.site = Path(
            subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True, text=True, check=True,
            ).stdout.strip()
        )  # fmt: skip
        self.install(self.wheel)
        # The dependencies (FastAPI, paho, OpenCV...) from the test's venv, tablectl not among them.
        (self.site / "zz-test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        self.tablectl = self.venv / "bin" / "tablectl"
        self.config = base / "table.toml"
        self.config.write_text(f'[security]\nrelease_key = "{self.public}"\n')

    def build(self, version: str) -> Path:
        """A signed wheel of this checkout as `version` (`make release`'s two steps)."""
        src = self.base / f"src-{version}"
        src.mkdir()
        for name in ("controller", "drivers", "vision", "hardware"):
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "README.md", src / "README.md")
        pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        (src / "pyproject.toml").write_text(pyproject.replace('version = "0.1.0"', f'version = "{version}"', 1))
        dist = self.base / f"dist-{version}"
        run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(dist), str(src)])
        (wheel,) = dist.glob("tablectl-*.whl")
        run([sys.executable, "-m", "controller.security.release", "--key", str(self.key), str(wheel)], cwd=ROOT)
        return wheel

    def install(self, wheel: Path) -> None:
        """As deploy/install.sh installs (hardware/install.md): pip without its own compile step,
        then every module compiled in checked-hash mode."""
        python = self.venv / "bin" / "python"
        run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-compile",
             str(wheel)])  # fmt: skip
        run([str(python), "-m", "compileall", "-q", "-f", "--invalidation-mode", "checked-hash", str(self.site)])

    def tablectl_(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.tablectl), *args], capture_output=True, text=True, timeout=120,
                              env=clean_env(), cwd=self.base)  # fmt: skip

    def verify(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.tablectl), "verify", "--sim", "--config", str(self.config), "--state-dir",
             str(self.base / "no-journal"), *args],
            capture_output=True, text=True, timeout=120, env=clean_env(), cwd=self.base,
        )  # fmt: skip

    def change_one_byte(self, path: str) -> None:
        target = self.site / path
        data = bytearray(target.read_bytes())
        data[40] ^= 0x01
        target.write_bytes(bytes(data))


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH: the installed copy runs, never this checkout."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run(argv: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=cwd)
    assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])


@pytest.fixture
def release(tmp_path: Path) -> Iterator[Release]:
    yield Release(tmp_path)


def guide_commands(heading: str) -> list[str]:
    """The indented command lines of the first code block under `heading` in the guide."""
    text = GUIDE.read_text(encoding="utf-8")
    block: list[str] = []
    for line in text[text.index(heading) :].splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("    "):
            block.append(line.strip())
        elif block and line.strip():
            break
    assert block, f"no commands under {heading!r} in {GUIDE}"
    return block


def test_an_unchanged_release_passes_and_its_seeded_hmac_is_the_standard_tools_one(release: Release) -> None:
    done = release.verify("--seed", SEED)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"tablectl 0.1.0 in {release.site}" in done.stdout
    assert "FAIL" not in done.stdout
    assert re.search(r"^pass  screens \(controller/api/static\): \d+ files$", done.stdout, re.M)
    ours = re.search(rf"^program hmac-sha256 under seed {SEED}: ([0-9a-f]{{64}})$", done.stdout, re.M)
    digest = re.search(r"^program sha256: ([0-9a-f]{64})$", done.stdout, re.M)
    assert ours and digest, done.stdout
    # The regulator's procedure, as the guide writes it, on its own copy: the wheel unpacked.
    tool("openssl"), tool("sha256sum"), tool("xargs")
    copy = release.base / "regulator"
    run([sys.executable, "-m", "zipfile", "-e", str(release.wheel), str(copy)])
    env = {"PATH": "/usr/bin:/bin", "SEED": SEED, "KEY": str(release.public), "LC_ALL": "C"}
    outputs = []
    for line in guide_commands("## 2. Check a copy with standard tools"):
        shell = subprocess.run(["bash", "-c", line], cwd=copy, capture_output=True, text=True, env=env, timeout=60)
        assert shell.returncode == 0, (line, shell.stdout, shell.stderr)
        outputs.append(shell.stdout)
    said = "".join(outputs)
    assert "Signature Verified Successfully" in said
    assert re.search(rf"^{digest.group(1)}  -$", said, re.M), said
    assert re.search(rf"= {ours.group(1)}$", said, re.M), said
    as_json = json.loads(release.verify("--seed", SEED, "--json").stdout)
    assert as_json["ok"] is True and as_json["hmac"] == ours.group(1) and as_json["digest"] == digest.group(1)


def test_one_changed_byte_in_a_module_and_a_screen_fails_naming_both_and_the_table_does_not_open(
    release: Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release.change_one_byte(TABLE_PY)
    release.change_one_byte(DEALER_JS)
    done = release.verify()
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"FAIL  code (controller): {TABLE_PY}: changed" in done.stdout
    assert f"FAIL  screens (controller/api/static): {DEALER_JS}: changed" in done.stdout
    assert f"software authentication failed: {TABLE_PY} (changed), {DEALER_JS} (changed)" in done.stdout
    # The table starts with play stopped by the fault naming both files.
    monkeypatch.delenv("PYTHONPATH", raising=False)
    (tmp_path / "table").mkdir()
    daemon = Daemon(tmp_path / "table", f'[security]\nrelease_key = "{release.public}"\n',
                    argv=[str(release.tablectl)])  # fmt: skip
    try:
        daemon.start(timeout=60)
        state = daemon.get("/api/state")
        faults = [f for f in state["faults"] if f["code"] == "software-authentication"]
        assert len(faults) == 1, state["faults"]
        assert faults[0]["title"] == "Software auth failed"
        assert f"software authentication failed: {TABLE_PY} (changed), {DEALER_JS} (changed)" in faults[0]["message"]
        status, answer = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})
        assert status == 409 and "play is stopped" in answer["error"], answer
        audit = daemon.get("/api/audit")["audit"]
        assert any("software authentication (start-up): FAILED" in a["what"] for a in audit), audit
        # On demand by the API, journaled too, and still failing.
        status, answer = daemon.post("/api/verify", {"seed": SEED}, token=SUPERVISOR)
        assert status == 200 and answer["ok"] is False and answer["root"] == str(release.site), answer
        assert daemon.get("/api/audit")["audit"][-1]["what"] == "software authentication (on demand by the API): FAILED"
        # `tablectl verify` beside the running table: the table, which alone writes its journal, is
        # asked to check itself, and journals it.
        beside = subprocess.run(
            [str(release.tablectl), "verify", "--config", str(daemon.config), "--state-dir", str(daemon.state_dir),
             "--sim", "--http", f"127.0.0.1:{daemon.port}"],
            capture_output=True, text=True, timeout=120, env={**clean_env(), "TABLECTL_SURVEILLANCE_TOKEN": "",
                                                               "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR},
        )  # fmt: skip
        assert beside.returncode == 1, beside.stdout + beside.stderr
        seq = daemon.get("/api/state")["journal_seq"]
        assert f"journal: the running table checked itself too (FAILED) and journaled it as entry {seq}" in beside.stdout
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_planted_bytecode_with_other_code_is_named_and_the_table_does_not_open(
    release: Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An attacker with a shell leaves every .py as it is and drops bytecode that Python would import
    # instead: a timestamp .pyc recording the genuine source's mtime and size, holding other code.
    source = release.site / FAULTS_PY
    assert (release.site / FAULTS_PYC).exists()  # the install compiled it (checked-hash)
    planted = compile(source.read_bytes() + b"\nPLANTED = True\n", str(source), "exec")
    stat = source.stat()
    (release.site / FAULTS_PYC).write_bytes(_code_to_timestamp_pyc(planted, int(stat.st_mtime), stat.st_size))
    python = release.venv / "bin" / "python"
    loaded = subprocess.run([str(python), "-c", "import controller.table.faults as f; print(f.PLANTED)"],
                            capture_output=True, text=True, env=clean_env(), cwd=release.base)  # fmt: skip
    assert loaded.stdout.strip() == "True", loaded.stderr  # Python does run it instead of the source
    # And a checked-hash .pyc that records the genuine source's hash (so Python takes it) with other code.
    genuine = (release.site / VISIBILITY_PY).read_bytes()
    crafted = compile(genuine + b"\nPLANTED = True\n", str(release.site / VISIBILITY_PY), "exec")
    (release.site / VISIBILITY_PYC).write_bytes(_code_to_hash_pyc(crafted, importlib.util.source_hash(genuine), True))
    done = release.verify()
    assert done.returncode == 1, done.stdout + done.stderr
    said = f"FAIL  code (controller): {FAULTS_PYC}: a timestamp .pyc: Python may run it instead of the source"
    assert said in done.stdout
    assert f"FAIL  code (controller): {VISIBILITY_PYC}: holds other code than its source compiles to" in done.stdout
    assert "pass  code (controller)" not in done.stdout and done.stdout.count("FAIL") == 2, done.stdout
    assert f"software authentication failed: {FAULTS_PYC} (a timestamp .pyc" in done.stdout
    monkeypatch.delenv("PYTHONPATH", raising=False)
    (tmp_path / "table").mkdir()
    daemon = Daemon(tmp_path / "table", f'[security]\nrelease_key = "{release.public}"\n',
                    argv=[str(release.tablectl)])  # fmt: skip
    try:
        daemon.start(timeout=60)
        faults = [f for f in daemon.get("/api/state")["faults"] if f["code"] == "software-authentication"]
        assert len(faults) == 1 and f"software authentication failed: {FAULTS_PYC}" in faults[0]["message"], faults
        status, answer = daemon.post("/api/rounds", {"seats": [{"seat": 1, "wagers": {"first": 10}}]})
        assert status == 409 and "play is stopped" in answer["error"], answer
    finally:
        assert daemon.stop() == 0, daemon.log()


def test_installs_and_upgrades_are_journaled_and_listed_by_recall_and_the_configuration_panel(
    release: Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "table"
    home.mkdir()
    config = f'[security]\nrelease_key = "{release.public}"\nverify_every = 0.01\n'  # 36 s: the shortest
    (home / "table.toml").write_text(config)
    where = ["--sim", "--config", str(home / "table.toml"), "--state-dir", str(home / "state")]
    done = release.tablectl_("software", "record", "--action", "installed", "--by", "alice", *where)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "installed tablectl 0.1.0" in done.stdout and "by alice" in done.stdout
    # An upgrade that bypassed the install step: the table records it at its next start.
    release.install(release.build("0.1.1"))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    daemon = Daemon(home, config, argv=[str(release.tablectl)])
    try:
        daemon.start(timeout=60)
        installs = daemon.get("/api/config")["software"]
        assert installs["version"] == "0.1.1"
        lines = list(installs["installs"].values())
        assert len(lines) == 2 and "installed tablectl 0.1.0" in lines[0] and "by alice" in lines[0]
        assert "upgraded tablectl 0.1.1 (was 0.1.0)" in lines[1] and "found at start" in lines[1]
        assert daemon.get("/api/state")["faults"] == []  # the upgrade is the signed release: it plays
        # The configuration is checked against the digest accepted (at the first start here): a
        # change stops play until a supervisor accepts it.
        with daemon.config.open("a") as f:
            f.write("# changed by someone\n")
        status, answer = daemon.post("/api/verify", {}, token=SUPERVISOR)
        assert status == 200 and answer["ok"] is False, answer
        assert f"software authentication failed: {daemon.config} (changed since the supervisor accepted it)" == answer["summary"]
        assert [f["code"] for f in daemon.get("/api/state")["faults"]] == ["software-authentication"]
        status, answer = daemon.post("/api/config/accept", {"reason": "comment added", "name": "bob"}, token=SUPERVISOR)
        assert status == 200 and answer["check"]["ok"] is True, answer
        assert daemon.get("/api/state")["faults"] == []
        audit = [a["what"] for a in daemon.get("/api/audit")["audit"]]
        assert any(w.startswith(f"accepted the configuration {daemon.config}") for w in audit), audit
        # And every [security] verify_every hours by itself, journaled like the others.
        daemon.wait_for("the periodic check", path="/api/audit", timeout=150, check=lambda a: any(
            row["what"] == "software authentication (every 0.01 h): passed" for row in a["audit"]))  # fmt: skip
    finally:
        assert daemon.stop() == 0, daemon.log()
    listed = release.tablectl_("recall", "--software", *where)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert len(rows) == 2, listed.stdout
    digest = hashlib.sha256((release.site / "tablectl-0.1.1.dist-info" / "MANIFEST.sha256").read_bytes()).hexdigest()
    assert "upgraded tablectl 0.1.1 (was 0.1.0)" in rows[1] and f"manifest sha256 {digest}" in rows[1]
