"""Software authentication: the code that runs is the release that was signed.

The check reads the signed manifest of the installed release (controller/security/release.py writes it
into the wheel's `.dist-info`), checks its signature with the release key's public half that
this machine trusts (`[security] release_key`, root's file, never the package's own), then hashes
every file it lists where Python imports them from, and looks for files in the release's folders
that it does not list (a module dropped in beside the others) and for compiled bytecode that Python
could run instead of the authenticated source (`_bytecode`). It gives one result per component,
the SHA-256 of the whole program (every listed file's bytes, concatenated in the manifest's
order) and, given a verifier's seed, the HMAC-SHA256 of the same bytes under the seed: the
procedure hardware/authentication.md does with `cut`, `xargs cat`, `sha256sum` and `openssl dgst`
on the verifier's own copy.

A copy of the code with no manifest beside it (a checkout, an editable install) is not a release:
its result is `ok = None`, "unsigned"; a live table does not play on it (controller/app/daemon.py).

    report = authenticate(Path("/etc/tablectl/release-key.pub"), seed=bytes.fromhex("5eed"))
    report.ok, report.failed_files(), report.digest, report.hmac
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import controller
from controller.security.release import MANIFEST, SIGNATURE

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

#: Where a table trusts the release key's public half (root's, readable by all; install.md).
DEFAULT_RELEASE_KEY = Path("/etc/tablectl/release-key.pub")
CHUNK = 1 << 16


class SeedError(ValueError):
    """A --seed that is not a verifier's seed: even-length hex, 1 to 64 bytes."""


def parse_seed(text: str) -> bytes:
    """A verifier's seed from hex (as `openssl dgst -macopt hexkey:` takes it)."""
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise SeedError(f"--seed {text}: give the seed as hexadecimal digits, an even number of them") from None
    if not 1 <= len(seed) <= 64:
        raise SeedError(f"--seed {text}: a seed is 1 to 64 bytes (2 to 128 hex digits), not {len(seed)}")
    return seed


@dataclass
class Component:
    """A part of the release (the code of one package, the screens, ...) and what failed in it."""

    name: str
    files: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    passed: str = ""  # what a pass says, when not the count of files

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "files": self.files,
            "failed": [{"file": f, "why": why} for f, why in self.failed],
        }


@dataclass
class Report:
    """One run of the check. `ok`: True passed, False failed, None not a signed release."""

    ok: bool | None
    root: str  # the folder the code is imported from
    version: str | None = None
    manifest: str | None = None
    components: list[Component] = field(default_factory=list)
    digest: str | None = None
    seed: str | None = None
    hmac: str | None = None
    problem: str | None = None  # why there was nothing to check file by file (unsigned, no key)
    # The process that ran the check, when not the caller's own (controller/security/checker.py):
    # its pid, nice value and CPU seconds, or "failed" saying how it ended without an answer.
    process: dict[str, Any] | None = None

    def failed_files(self) -> list[str]:
        return [f for c in self.components for f, _ in c.failed]

    def summary(self) -> str:
        """One line: what the table shows as the fault's message and the journal keeps."""
        if self.ok:
            return f"software authenticated: tablectl {self.version}, program sha256 {self.digest}"
        if self.ok is None:
            return f"software not authenticated: {self.problem}"
        failed = [f"{f} ({why})" for c in self.components for f, why in c.failed]
        return "software authentication failed: " + (", ".join(failed) or str(self.problem))

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "root": self.root,
            "version": self.version,
            "manifest": self.manifest,
            "components": [c.to_json() for c in self.components],
            "digest": self.digest,
            "seed": self.seed,
            "hmac": self.hmac,
            "problem": self.problem,
            "summary": self.summary(),
        } | ({"process": self.process} if self.process is not None else {})

    @classmethod
    def from_json(cls, doc: Any) -> Report:
        """The report `to_json` made (in the check's own process); ValueError for anything else."""
        try:
            components = [
                Component(str(c["name"]), int(c["files"]), [(str(f["file"]), str(f["why"])) for f in c["failed"]])
                for c in doc["components"]
            ]
            ok = doc["ok"]
            if ok not in (True, False, None) or (ok is True and any(c.failed for c in components)):
                raise ValueError(f"ok is {ok!r}")
            text = {k: doc[k] if doc[k] is None else str(doc[k])
                    for k in ("version", "manifest", "digest", "seed", "hmac", "problem")}  # fmt: skip
            process = doc.get("process")
            return cls(ok=ok, root=str(doc["root"]), components=components,
                       process=dict(process) if process is not None else None, **text)  # fmt: skip
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a software check's report: {exc!r}") from None

    def lines(self) -> Iterator[str]:
        """What `tablectl verify` prints: one line per component, then the digests and the result."""
        where = f"tablectl {self.version} in {self.root}" if self.version else f"the code in {self.root}"
        yield f"{where}" + (f" (manifest {self.manifest})" if self.manifest else "")
        for c in self.components:
            if c.ok:
                yield f"pass  {c.name}: {c.passed or f'{c.files} files'}"
            for name, why in c.failed:
                yield f"FAIL  {c.name}: {name}: {why}"
        if self.digest is not None:
            yield f"program sha256: {self.digest}"
        if self.hmac is not None:
            yield f"program hmac-sha256 under seed {self.seed}: {self.hmac}"
        yield self.summary()


def installed_root() -> Path:
    """The folder the running code is imported from (site-packages for an installed release)."""
    return Path(controller.__file__).resolve().parent.parent


def _component(path: str, info_dir: str) -> str:
    if path.startswith(f"{info_dir}/"):
        return f"release record ({info_dir})"
    if path.startswith("controller/api/static/"):
        return "screens (controller/api/static)"
    if path.startswith("hardware/"):
        return "pin maps and layouts (hardware)"
    top = path.split("/", 1)[0]
    return f"code ({top})"


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The release key's public half (PEM, Ed25519); ValueError saying what is wrong."""
    # cryptography is loaded when a release is checked, not with this module: a checkout (no signed
    # release) never loads it, and the table's process does not hold it for nothing.
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except FileNotFoundError:
        raise ValueError(
            f"the release key {path} is not installed on this machine (hardware/authentication.md)"
        ) from None
    except OSError as exc:
        raise ValueError(f"the release key {path} cannot be read: {exc.strerror or exc}") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ValueError(f"the release key {path} is not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"the release key {path} is not an Ed25519 key")
    return key


def _manifest_lines(text: str, where: Path) -> list[tuple[str, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        digest, sep, path = line.partition("  ")
        if not sep or len(digest) != 64 or not path or path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"{where}: line {n} is not a manifest line (<sha256>  <path>)")
        out.append((path, digest))
    return out


def authenticate(release_key: Path, seed: bytes | None = None, root: Path | None = None) -> Report:
    """Check the release installed at `root` (default: where the running code comes from)."""
    root = root or installed_root()
    report = Report(ok=False, root=str(root), seed=seed.hex() if seed is not None else None)
    found = sorted(root.glob(f"tablectl-*.dist-info/{MANIFEST}"))
    if not found:
        report.ok = None
        report.problem = (
            f"{root} holds no signed release (no tablectl-*.dist-info/{MANIFEST}): a checkout or editable "
            "install, not an installed release"
        )
        return report
    if len(found) > 1:
        report.problem = f"{root} holds more than one release's manifest: {', '.join(p.parent.name for p in found)}"
        report.components.append(Component("release signature", failed=[(found[0].parent.name, report.problem)]))
        return report
    manifest_path = found[0]
    info_dir = manifest_path.parent.name
    report.manifest = f"{info_dir}/{MANIFEST}"
    report.version = info_dir.removeprefix("tablectl-").removesuffix(".dist-info")
    signed = f"the manifest verifies with the release key {release_key}"
    signature = Component("release signature", files=1, passed=signed)
    report.components.append(signature)
    manifest = manifest_path.read_bytes()
    from cryptography.exceptions import InvalidSignature

    try:
        load_public_key(release_key).verify((manifest_path.parent / SIGNATURE).read_bytes(), manifest)
    except ValueError as exc:
        signature.failed.append((report.manifest, str(exc)))
    except FileNotFoundError:
        signature.failed.append((f"{info_dir}/{SIGNATURE}", "missing: the manifest is not signed"))
    except InvalidSignature:
        signature.failed.append((report.manifest, f"its signature does not verify with the release key {release_key}"))
    try:
        listed = _manifest_lines(manifest.decode("utf-8"), manifest_path)
    except (UnicodeDecodeError, ValueError) as exc:
        signature.failed.append((report.manifest, str(exc)))
        report.problem = "the manifest cannot be read"
        return report
    components: dict[str, Component] = {}
    whole = hashlib.sha256()
    keyed = hmac.new(seed, digestmod=hashlib.sha256) if seed is not None else None
    for path, expected in listed:
        component = components.setdefault(_component(path, info_dir), Component(_component(path, info_dir)))
        component.files += 1
        file_hash = hashlib.sha256()
        try:
            with open(root / path, "rb") as f:
                while chunk := f.read(CHUNK):
                    file_hash.update(chunk)
                    whole.update(chunk)
                    if keyed is not None:
                        keyed.update(chunk)
        except FileNotFoundError:
            component.failed.append((path, "missing"))
            continue
        except OSError as exc:
            component.failed.append((path, f"cannot be read: {exc.strerror or exc}"))
            continue
        if file_hash.hexdigest() != expected:
            component.failed.append((path, "changed"))
    names = {path for path, _ in listed}
    for extra in _unlisted(root, names, info_dir):
        name = _component(extra, info_dir)
        components.setdefault(name, Component(name)).failed.append((extra, "not in the release"))
    failed = {path for c in components.values() for path, _ in c.failed}
    for pyc, source, why in _bytecode(root, names, info_dir):
        if source in failed and source != pyc:
            continue  # the source itself is named: its bytecode (Python recompiles it) says no more
        name = _component(source, info_dir)
        components.setdefault(name, Component(name)).failed.append((pyc, why))
    report.components.extend(components.values())
    report.digest = whole.hexdigest()
    report.hmac = keyed.hexdigest() if keyed is not None else None
    report.ok = all(c.ok for c in report.components)
    return report


def _unlisted(root: Path, listed: set[str], info_dir: str) -> Iterator[str]:
    """Files in the release's own folders that the manifest does not list (a module dropped in
    beside the others), the compiled bytecode in `__pycache__` aside: `_bytecode` checks that."""
    for top in _tops(listed, info_dir):
        for folder, dirs, files in os.walk(root / top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = (Path(folder) / name).relative_to(root).as_posix()
                if path not in listed:
                    yield path


def _tops(listed: set[str], info_dir: str) -> list[str]:
    return sorted({p.split("/", 1)[0] for p in listed if "/" in p and not p.startswith(f"{info_dir}/")})


#: `<module>.<tag>.pyc` or `<module>.<tag>.opt-<n>.pyc`, as Python names a module's bytecode.
_PYC = re.compile(r"(?P<stem>[^.]+)\.(?P<tag>[^.]+)(?:\.opt-(?P<opt>[12]))?\.pyc")


def _bytecode(root: Path, listed: set[str], info_dir: str) -> Iterator[tuple[str, str, str]]:
    """Every file in a `__pycache__` folder of the release that Python could run instead of the
    authenticated source, as (the file, its source, why). Python imports a module's `.pyc` without
    reading the source when the `.pyc` is a timestamp one whose recorded mtime and size match the
    source's (both are easy to fake), or an unchecked-hash one; a checked-hash one only when its
    recorded source hash matches the source, but the code in it is not tied to that hash. So each
    `.pyc` must be checked-hash (installs compile so: hardware/install.md), record the hash of its
    authenticated source, and hold exactly the code that source compiles to. Any other file there,
    or a `.pyc` of no listed module or for another Python, is not part of the release."""
    tag = sys.implementation.cache_tag
    to_compare: list[tuple[str, str, int]] = []
    for top in _tops(listed, info_dir):
        for folder, dirs, files in os.walk(root / top):
            dirs.sort()
            if Path(folder).name != "__pycache__":
                continue
            dirs[:] = []  # nothing of the release is below a __pycache__
            for name in sorted(files):
                path = (Path(folder) / name).relative_to(root).as_posix()
                found = _PYC.fullmatch(name)
                source = f"{Path(path).parent.parent.as_posix()}/{found['stem']}.py" if found else ""
                if found is None or source not in listed:
                    yield path, path, "not in the release"
                elif found["tag"] != tag:
                    yield path, source, f"bytecode for another Python ({found['tag']}; this one is {tag})"
                else:
                    why = _header_problem(root / path, root / source)
                    if why is not None:
                        yield path, source, why
                    else:
                        to_compare.append((path, source, int(found["opt"] or 0)))
    for path, source in _other_code(root, to_compare):
        yield path, source, "holds other code than its source compiles to"


def _header_problem(pyc: Path, source: Path) -> str | None:
    try:
        with open(pyc, "rb") as f:
            header = f.read(16)
        code = source.read_bytes()
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if len(header) < 16 or header[:4] != importlib.util.MAGIC_NUMBER:
        return "not bytecode of this Python"
    flags = int.from_bytes(header[4:8], "little")
    if flags != 0b11:  # hash-based, checked against the source at every import
        kind = "an unchecked-hash" if flags == 0b01 else "a timestamp"
        return f"{kind} .pyc: Python may run it instead of the source (installs compile in checked-hash mode)"
    if header[8:16] != importlib.util.source_hash(code):
        return "compiled from another source than the release's"
    return None


#: Run by this Python in a child process (compiling holds the interpreter's lock for as long as a
#: module takes, up to a tenth of a second: never on the table's loop): which of the given
#: (.pyc, source, optimize) hold other code than the source compiles to.
_COMPARE = """
import json, marshal, sys
other = []
for pyc, source, optimize in json.load(sys.stdin):
    try:
        with open(pyc, "rb") as f:
            held = marshal.loads(f.read()[16:])
        with open(source, "rb") as f:
            same = held == compile(f.read(), source, "exec", dont_inherit=True, optimize=optimize)
    except Exception:
        same = False
    if not same:
        other.append(pyc)
json.dump(other, sys.stdout)
"""


def _other_code(root: Path, items: list[tuple[str, str, int]]) -> list[tuple[str, str]]:
    """The (.pyc, source) of `items` whose code is not what the source compiles to (all of them
    when the comparison cannot be made)."""
    if not items:
        return []
    sources = dict((pyc, source) for pyc, source, _ in items)
    request = json.dumps([(str(root / pyc), str(root / source), opt) for pyc, source, opt in items])
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", _COMPARE], input=request, capture_output=True,
                              text=True, timeout=600, check=True)  # fmt: skip
        other = {Path(p).relative_to(root).as_posix() for p in json.loads(done.stdout)}
    except (OSError, subprocess.SubprocessError, ValueError):
        other = set(sources)
    return [(pyc, sources[pyc]) for pyc, _, _ in items if pyc in other]
