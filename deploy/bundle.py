"""`make bundle`: an offline, reproducible install bundle of tablectl for one platform (issue 33).

    python deploy/bundle.py --platform linux-aarch64 [--source DIR] [--out dist]

writes `dist/tablectl-<version>-<platform>.tar.gz`, one directory `tablectl-<version>-<platform>/`:

    install.sh              the installer (deploy/install.sh); needs no network
    probe.py                what install.sh asks the running table (deploy/probe.py)
    wheels/                 the tablectl wheel and every dependency as a wheel for the platform,
                            for CPython 3.11 (Bookworm) and 3.13 (Trixie), and pip to install them
    systemd/                tablectl.service and 99-tablectl.rules
    install.md              hardware/install.md, the guide
    BUNDLE                  version, platform, Pythons, source commit, journal schema (key=value)
    SHA256SUMS              sha256sum of every other file; install.sh checks it before anything
    MANIFEST.signed         the signed release manifest of issue 31, once `tablectl verify` exists

Reproducible: the dependencies are pinned (deploy/constraints.txt, the build backend too), every
time stamp is the source commit's (SOURCE_DATE_EPOCH), and the archive is written in sorted order
with owner root and no gzip time, so two builds of one commit give the same bytes. Downloading
needs the package index; the bundle then installs with none.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONSTRAINTS = HERE / "constraints.txt"
#: The CPython versions a bundle carries wheels for: Raspberry Pi OS Bookworm's and Trixie's.
PYTHONS = ("3.11", "3.13")
#: platform -> (uname -m on the target, the manylinux tags pip may pick, newest first). Bookworm
#: has glibc 2.36, Trixie 2.41: every wheel up to manylinux_2_36 runs on both.
PLATFORMS: dict[str, tuple[str, list[str]]] = {
    arch_platform: (
        arch,
        [f"manylinux_2_{minor}_{arch}" for minor in range(36, 16, -1)] + [f"manylinux2014_{arch}"],
    )
    for arch_platform, arch in (("linux-aarch64", "aarch64"), ("linux-x86_64", "x86_64"))
}
#: What `.[pi]` adds on each platform. pip evaluates the extra's marker (platform_machine) on the
#: machine that downloads, not the target, so the platform's share of the extra is named here and
#: downloaded on its own (for each Python that has a wheel of it).
PI_EXTRA = {"aarch64": ["lgpio"], "x86_64": []}


class BundleError(Exception):
    pass


def say(message: str) -> None:
    print(f"bundle: {message}", flush=True)


def source_files(source: Path) -> list[str]:
    """The files of the source tree: git's tracked and untracked-but-not-ignored files in a
    checkout (no .venv, build/ or dist/ leftovers), every file otherwise."""
    if (source / ".git").exists():
        out = subprocess.run(
            ["git", "-C", str(source), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True, capture_output=True, timeout=120,
        ).stdout.decode()
        return sorted(name for name in out.split("\0") if name and (source / name).is_file())
    skip = {".git", ".venv", "build", "dist", "__pycache__"}
    return sorted(
        str(p.relative_to(source)) for p in source.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(source).parts)
    )


def source_epoch(source: Path) -> tuple[int, str]:
    """SOURCE_DATE_EPOCH and the commit (with `+changes` when the tree differs from it)."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"]), os.environ.get("TABLECTL_SOURCE_COMMIT", "unknown")
    if not (source / ".git").exists():
        return 315532800, "unknown"  # 1980-01-01, the earliest time a zip file can hold
    git = ["git", "-C", str(source)]
    epoch = int(subprocess.run([*git, "log", "-1", "--format=%ct"], check=True, capture_output=True,
                               text=True, timeout=60).stdout.strip())
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True,
                            timeout=60).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], check=True,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    return epoch, commit + ("+changes" if dirty else "")


def pip_env(epoch: int) -> dict[str, str]:
    """A clean environment for pip: none of the host's pip configuration (its own indexes, find-links
    or constraints would change what is downloaded), the index's certificates and proxies kept."""
    env = {key: os.environ[key] for key in ("PATH", "HOME", "http_proxy", "https_proxy", "no_proxy",
                                             "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE")
           if key in os.environ}
    cert = os.environ.get("PIP_CERT") or ("/etc/ssl/certs/ca-certificates.crt"
                                          if Path("/etc/ssl/certs/ca-certificates.crt").is_file() else "")
    if cert:
        env["PIP_CERT"] = cert
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               PIP_CONSTRAINT=str(CONSTRAINTS), SOURCE_DATE_EPOCH=str(epoch), PYTHONHASHSEED="0")
    return env


def run_pip(args: list[str], env: dict[str, str], what: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], env=env, capture_output=True, text=True,
                          timeout=1800)
    if done.returncode != 0:
        raise BundleError(f"{what} failed (pip exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def journal_schema(source: Path) -> int:
    """The journal schema the release writes (controller/journal/log.py SCHEMA_VERSION): install.sh
    says so before it switches to a release whose schema differs from the running one's."""
    text = (source / "controller" / "journal" / "log.py").read_text(encoding="utf-8")
    found = re.search(r"^SCHEMA_VERSION = (\d+)$", text, re.MULTILINE)
    if found is None:
        raise BundleError(f"{source}/controller/journal.py: no SCHEMA_VERSION line")
    return int(found.group(1))


def signed_manifest(stage: Path, wheel: Path, release_key: Path | None) -> Path | None:
    """Issue 31's signed release: with the release key, the tablectl wheel gets the manifest of
    every file it installs, signed, inside it (controller/security/release.py's `sign_wheel`, what `make
    release` does), and a copy of the manifest and its signature goes to the bundle's top as
    `MANIFEST.sha256` and `MANIFEST.sha256.sig`, before SHA256SUMS is written (so the checksum file
    covers them). Without a key there is none, and BUNDLE says so (`signed_manifest=none`): a live
    table installed from such a bundle stops with "Software auth failed" (a simulated one plays)."""
    if release_key is None:
        return None
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from controller.security.release import ReleaseError, sign_wheel

    try:
        signed = sign_wheel(wheel, release_key)
    except ReleaseError as err:
        raise BundleError(f"signing the release: {err}") from None
    manifest = stage / "MANIFEST.sha256"
    signed.manifest.replace(manifest)
    signed.signature.replace(stage / "MANIFEST.sha256.sig")
    say(f"signed the tablectl wheel's manifest ({signed.files} files) with {release_key}")
    return manifest


def build(
    platform: str, source: Path, out: Path, pythons: tuple[str, ...] = PYTHONS, release_key: Path | None = None
) -> Path:
    if platform not in PLATFORMS:
        raise BundleError(f"--platform {platform}: one of {', '.join(PLATFORMS)}")
    arch, tags = PLATFORMS[platform]
    pyproject = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    version = str(pyproject["project"]["version"])
    epoch, commit = source_epoch(source)
    env = pip_env(epoch)
    name = f"tablectl-{version}-{platform}"
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.tar.gz"
    with tempfile.TemporaryDirectory(prefix="tablectl-bundle-") as tmp:
        src, stage = Path(tmp) / "src", Path(tmp) / name
        for rel in source_files(source):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, src / rel)
        wheels = stage / "wheels"
        wheels.mkdir(parents=True)

        say(f"tablectl {version} ({commit}): building its wheel")
        run_pip(["wheel", "--no-deps", "--no-cache-dir", "--wheel-dir", str(wheels), str(src)], env,
                "building the tablectl wheel")
        (wheel,) = wheels.glob("tablectl-*.whl")
        pins = [line.split("==")[0] for line in CONSTRAINTS.read_text().splitlines() if "==" in line]
        extra = [pkg for pkg in PI_EXTRA[arch] if pkg in pins]
        platform_args = ["--only-binary=:all:", "--dest", str(wheels), "--implementation", "cp",
                         *[arg for tag in tags for arg in ("--platform", tag)]]
        lgpio_pythons = []
        for python in pythons:
            abi = "cp" + python.replace(".", "")
            python_args = ["--python-version", python, "--abi", abi, "--abi", "abi3", "--abi", "none"]
            say(f"downloading every dependency as a {platform} wheel for Python {python}")
            run_pip(["download", *platform_args, *python_args, f"tablectl @ {wheel.as_uri()}", "pip"],
                    env, f"downloading the {platform} wheels for Python {python}")
            if extra:
                try:  # PyPI's lgpio 0.2.2.0 has wheels for 3.11 only: 3.13 takes Trixie's python3-lgpio
                    run_pip(["download", *platform_args, *python_args, "--no-deps", *extra], env, "")
                    lgpio_pythons.append(python)
                except BundleError:
                    say(f"no {' '.join(extra)} wheel for Python {python}: install.sh takes the system's there")

        shutil.copy2(HERE / "install.sh", stage / "install.sh")
        shutil.copy2(HERE / "probe.py", stage / "probe.py")
        (stage / "systemd").mkdir()
        for unit in ("tablectl.service", "99-tablectl.rules"):
            shutil.copy2(src / "systemd" / unit, stage / "systemd" / unit)
        shutil.copy2(src / "hardware" / "install.md", stage / "install.md")
        manifest = signed_manifest(stage, wheel, release_key)
        (stage / "BUNDLE").write_text(
            "".join(f"{key}={value}\n" for key, value in (
                ("name", "tablectl"), ("version", version), ("platform", platform), ("arch", arch),
                ("pythons", " ".join(pythons)), ("commit", commit), ("source_date_epoch", epoch),
                ("journal_schema", journal_schema(src)),
                ("lgpio_pythons", " ".join(lgpio_pythons) if arch == "aarch64" else "not needed"),
                ("signed_manifest", manifest.name if manifest else "none"),
            )),
            encoding="utf-8",
        )
        files = sorted(str(p.relative_to(stage)) for p in stage.rglob("*") if p.is_file())
        (stage / "SHA256SUMS").write_text(
            "".join(f"{hashlib.sha256((stage / f).read_bytes()).hexdigest()}  {f}\n" for f in files),
            encoding="utf-8",
        )
        write_archive(stage, target, epoch)
    count = sum(1 for line in CONSTRAINTS.read_text().splitlines() if "==" in line)
    say(f"wrote {target} ({target.stat().st_size // 2**20} MiB; dependencies pinned by "
        f"{CONSTRAINTS.relative_to(REPO)}, {count} pins)")
    return target


def write_archive(stage: Path, target: Path, epoch: int) -> None:
    """A tar.gz the same byte for byte from the same files: sorted, owner root, one time stamp."""

    def entry(path: Path) -> tarfile.TarInfo:
        info = tarfile.TarInfo(str(path.relative_to(stage.parent)))
        info.mtime, info.uid, info.gid, info.uname, info.gname = epoch, 0, 0, "root", "root"
        if path.is_dir():
            info.type, info.mode = tarfile.DIRTYPE, 0o755
        else:
            info.size = path.stat().st_size
            info.mode = 0o755 if os.access(path, os.X_OK) or path.name == "install.sh" else 0o644
        return info

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for path in [stage, *sorted(stage.rglob("*"))]:
            info = entry(path)
            if info.isdir():
                tar.addfile(info)
            else:
                with path.open("rb") as f:
                    tar.addfile(info, f)
    part = target.with_name(target.name + ".part")
    with part.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write(raw.getvalue())
    part.replace(target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bundle", description=__doc__.split("\n")[0])
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS),
                        help="linux-aarch64 (a Pi) or linux-x86_64 (a test bench); repeat for both")
    parser.add_argument("--source", type=Path, default=REPO, help="the tablectl tree to bundle (this checkout)")
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="where the bundle is written (dist/)")
    parser.add_argument("--python", action="append", choices=PYTHONS,
                        help="only this CPython's wheels (both by default; the tests' smaller bundles)")
    parser.add_argument("--release-key", type=Path, metavar="FILE",
                        help="sign the release with this key (Ed25519 PEM; hardware/authentication.md); "
                             "without it the bundle has no signed manifest and a live table will not open on it")
    args = parser.parse_args(argv)
    try:
        for platform in args.platform or ["linux-aarch64", "linux-x86_64"]:
            build(platform, args.source.resolve(), args.out.resolve(), tuple(args.python or PYTHONS), args.release_key)
    except BundleError as err:
        print(f"bundle: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
