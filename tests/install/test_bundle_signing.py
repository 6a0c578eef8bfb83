"""The bundle's signed release (issues 31 and 33): with the release key, the tablectl wheel in the
bundle carries its signed manifest and the bundle's top has a copy of the manifest and its
signature, which the release key's public half verifies with the standard tool (openssl); without
a key there is none. On a small wheel, without building a whole bundle."""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from deploy.bundle import BundleError, signed_manifest


def _wheel(path: Path) -> Path:
    files = {"controller/__init__.py": b"", "controller/table.py": b"X = 1\n"}
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in files.items()
    )
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("tablectl-0.1.0.dist-info/METADATA", "Name: tablectl\nVersion: 0.1.0\n")
        zf.writestr("tablectl-0.1.0.dist-info/RECORD", record + "tablectl-0.1.0.dist-info/RECORD,,\n")
    return path


def test_a_bundle_made_with_the_release_key_carries_the_signed_manifest(tmp_path: Path) -> None:
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed: the regulator's check is done with it (hardware/authentication.md)")
    private = Ed25519PrivateKey.generate()
    key, public = tmp_path / "release.key", tmp_path / "release-key.pub"
    key.write_bytes(
        private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    stage = tmp_path / "stage"
    (stage / "wheels").mkdir(parents=True)
    wheel = _wheel(stage / "wheels" / "tablectl-0.1.0-py3-none-any.whl")

    assert signed_manifest(stage, wheel, None) is None  # no key: no signed manifest

    manifest = signed_manifest(stage, wheel, key)
    assert manifest == stage / "MANIFEST.sha256"
    assert sorted(p.name for p in (stage / "wheels").iterdir()) == [wheel.name]  # only wheels for pip there
    lines = manifest.read_text().splitlines()
    assert f"{hashlib.sha256(b'X = 1' + bytes([10])).hexdigest()}  controller/table.py" in lines
    with zipfile.ZipFile(wheel) as zf:
        assert zf.read("tablectl-0.1.0.dist-info/MANIFEST.sha256") == manifest.read_bytes()
    checked = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(public), "-rawin",
         "-in", str(manifest), "-sigfile", str(stage / "MANIFEST.sha256.sig")],
        capture_output=True, text=True, check=False,
    )
    assert checked.returncode == 0 and "Verified Successfully" in checked.stdout, checked.stderr

    (tmp_path / "not-a-key").write_text("nothing")
    with pytest.raises(BundleError, match="signing the release"):
        signed_manifest(stage, wheel, tmp_path / "not-a-key")
