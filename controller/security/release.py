"""A signed release: the manifest of every file a built wheel installs, signed with the release key.

`make release` builds the wheel and calls `sign_wheel`; the install bundle calls it too. The
manifest is `MANIFEST.sha256` in the wheel's `.dist-info` folder, in `sha256sum`'s own format
(`<sha256>  <path>`, one file a line, paths relative to the folder the wheel installs into,
sorted by their bytes), so a regulator checks an installed copy with `sha256sum -c`. Its
signature, `MANIFEST.sha256.sig`, is the raw 64-byte Ed25519 signature of the manifest's bytes,
which `openssl pkeyutl -verify -rawin` checks with the release key's public half
(hardware/authentication.md). Every file of the wheel is listed but RECORD, which pip rewrites at
install, and the manifest and its signature themselves. A copy of both is written beside the
wheel: the master list a regulator keeps.

The release key is never in the repository: it is a PEM Ed25519 private key (`openssl genpkey
-algorithm ed25519`) kept by whoever signs releases, named on the command line.

    python -m controller.security.release --key /secure/release.key dist/tablectl-0.1.0-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

MANIFEST = "MANIFEST.sha256"
SIGNATURE = "MANIFEST.sha256.sig"
#: Paths the standard-tools procedure reads with `cut` and `xargs` (hardware/authentication.md):
#: nothing that a shell or xargs would split or unquote.
SAFE_PATH = re.compile(r"[A-Za-z0-9._+/-]+")


class ReleaseError(RuntimeError):
    """A wheel or key that cannot make a signed release; the text names the file and why."""


@dataclass(frozen=True)
class SignedRelease:
    wheel: Path  # the wheel, rewritten with the manifest and its signature inside
    manifest: Path  # the copy beside the wheel (<wheel>.manifest.sha256)
    signature: Path  # and its signature (<wheel>.manifest.sha256.sig)
    files: int  # how many files the manifest lists


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The release key at `path` (PEM, Ed25519); ReleaseError saying what is wrong with it."""
    # cryptography is loaded when a key is: the table's process reads MANIFEST and SIGNATURE from here.
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except OSError as exc:
        raise ReleaseError(f"{path}: the release key cannot be read: {exc.strerror or exc}") from None
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise ReleaseError(f"{path}: not a PEM private key without a passphrase: {exc}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ReleaseError(f"{path}: the release key must be Ed25519 (openssl genpkey -algorithm ed25519)")
    return key


def manifest_text(files: Sequence[tuple[str, bytes]]) -> str:
    """The manifest of `files` ((path, content) pairs): `sha256sum`'s lines, sorted by path."""
    lines = []
    for path, data in sorted(files, key=lambda f: f[0].encode()):
        if not SAFE_PATH.fullmatch(path):
            raise ReleaseError(f"{path}: a name the regulator's procedure cannot read (only A-Z a-z 0-9 . _ + / -)")
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {path}\n")
    return "".join(lines)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def sign_wheel(wheel: Path, key_path: Path) -> SignedRelease:
    """Write the manifest of `wheel` into its `.dist-info`, signed with the release key at
    `key_path`, and a copy of both beside the wheel. The wheel is rewritten in place (its RECORD
    lists the two new files). Signing a wheel signed before replaces its manifest."""
    key = load_private_key(key_path)
    try:
        with zipfile.ZipFile(wheel) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
            contents = {i.filename: zf.read(i) for i in infos}
    except (OSError, zipfile.BadZipFile) as exc:
        raise ReleaseError(f"{wheel}: not a wheel that can be read: {exc}") from None
    records = [name for name in contents if name.endswith(".dist-info/RECORD") and name.count("/") == 1]
    if len(records) != 1:
        raise ReleaseError(f"{wheel}: not a wheel (no single .dist-info/RECORD)")
    info_dir = records[0].rsplit("/", 1)[0]
    own = {f"{info_dir}/RECORD", f"{info_dir}/{MANIFEST}", f"{info_dir}/{SIGNATURE}"}
    listed = [(name, data) for name, data in contents.items() if name not in own]
    text = manifest_text(listed)
    manifest = text.encode()
    signature = key.sign(manifest)
    record = "".join(_record_line(name, data) for name, data in listed)
    record += _record_line(f"{info_dir}/{MANIFEST}", manifest) + _record_line(f"{info_dir}/{SIGNATURE}", signature)
    record += f"{info_dir}/RECORD,,\n"
    with tempfile.NamedTemporaryFile(dir=wheel.parent, prefix=".signing-", suffix=".whl", delete=False) as tmp:
        out = Path(tmp.name)
    try:
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for info in infos:
                if info.filename not in own:
                    zf.writestr(info, contents[info.filename])
            zf.writestr(f"{info_dir}/{MANIFEST}", manifest)
            zf.writestr(f"{info_dir}/{SIGNATURE}", signature)
            zf.writestr(f"{info_dir}/RECORD", record)
        out.replace(wheel)
    finally:
        out.unlink(missing_ok=True)
    beside = wheel.with_name(f"{wheel.name}.manifest.sha256")
    beside.write_bytes(manifest)
    sig_beside = wheel.with_name(f"{beside.name}.sig")
    sig_beside.write_bytes(signature)
    return SignedRelease(wheel, beside, sig_beside, len(listed))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m controller.security.release", description="sign built wheels: write and sign their manifest"
    )
    parser.add_argument("--key", type=Path, required=True, metavar="FILE", help="the release key (PEM, Ed25519)")
    parser.add_argument("wheels", nargs="+", type=Path, metavar="WHEEL")
    args = parser.parse_args(argv)
    for wheel in args.wheels:
        try:
            done = sign_wheel(wheel, args.key)
        except ReleaseError as exc:
            print(f"release: {exc}", file=sys.stderr)
            return 2
        print(f"release: {done.wheel}: {done.files} files in its signed manifest; master list {done.manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
