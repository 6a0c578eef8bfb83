"""Signed chain heads: the part of the journal's proof that leaves the Pi.

At each round's end the table signs where its hash chain stands (sequence, chain value, time)
with its own Ed25519 key and journals the signature as a `chain-head` entry, which the floor
publisher sends with the rest. The floor store recomputes the chain over every entry it holds
(`ChainWalk`, with the journal's own `link`) and checks each head against it and its signature
against the key enrolled for the table on the floor (`tablectl floor enroll`, by its fingerprint:
never a key learned from the feed). Someone who rewrites the journal on the Pi, and
recomputes every CRC, the chain and `journal.head`, cannot change what the floor already holds:
the next head, or the next entry, forks from it. Made with `cryptography`, never by hand.

    key = table_key(Path("/var/lib/tablectl/table.key"))     # made on first use, mode 0600 (+ table.pub)
    fingerprint(public_hex(key))                             # "sha256:..." what the floor enrols
    body = sign_head(key, "GS-01", seq=52, chain="9f0c...", at="2026-12-01T08:00:00.000Z")
    problem = head_problem(body, "GS-01", enrolled="sha256:...")   # None: a good head
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from controller.journal.log import GENESIS, link

log = logging.getLogger("tablectl.chainhead")

KIND = "chain-head"
KEY_MODE = 0o600
#: The public half beside the key (`<key>.pub`: table.key -> table.pub), readable by all: what an
#: operator reads (or `tablectl verify` prints) to enrol the table on the floor.
PUBLIC_MODE = 0o644
FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")


class KeyTextError(ValueError):
    """Not a table's public key or fingerprint; the words say what was given and what is taken."""


def fingerprint(public: str) -> str:
    """The fingerprint of a table's public key (raw Ed25519, hex): "sha256:" and the SHA-256 of its
    32 bytes in hex, as `openssl pkey -pubin -in table.pub -outform DER | tail -c 32 | sha256sum`."""
    return "sha256:" + hashlib.sha256(bytes.fromhex(public)).hexdigest()


def public_path(key_path: Path) -> Path:
    return key_path.with_suffix(".pub")


def read_fingerprint(text: str) -> str:
    """A fingerprint from what an operator gives: a fingerprint (`sha256:<64 hex>`), the public key
    as 64 hex digits, or a PEM public key (a table's `table.pub`). KeyTextError saying what is wrong."""
    text = text.strip()
    if text.lower().startswith("sha256:"):
        if not FINGERPRINT.fullmatch(text.lower()):
            raise KeyTextError(f"{text[:80]!r}: a fingerprint is sha256: and 64 hex digits")
        return text.lower()
    if "-----BEGIN" in text:
        try:
            loaded = serialization.load_pem_public_key(text.encode())
        except (ValueError, TypeError) as exc:
            raise KeyTextError(f"not a PEM public key: {exc}") from None
        if not isinstance(loaded, Ed25519PublicKey):
            raise KeyTextError("not an Ed25519 public key (a table's table.pub is one)")
        return fingerprint(loaded.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex())
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        return fingerprint(text.lower())
    raise KeyTextError(
        f"{text[:80]!r}: give the table's fingerprint (sha256:<64 hex digits>, as `tablectl verify` prints it), "
        "its public key in hex, or its table.pub file"
    )


def write_public(key: Ed25519PrivateKey, path: Path) -> None:
    """Write the key's public half (PEM) to `path`, readable by all, unless it is there already
    (a `table.pub` of another key, left from a key made before, is replaced)."""
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        if path.read_bytes() == pem:
            return
    except FileNotFoundError:
        pass
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(pem)
    tmp.chmod(PUBLIC_MODE)
    os.replace(tmp, path)


def _message(table_id: str, seq: int, chain: str, at: str) -> bytes:
    return f"tablectl chain head\x1f{table_id}\x1f{seq}\x1f{chain}\x1f{at}".encode()


def table_key(path: Path) -> Ed25519PrivateKey:
    """The table's signing key at `path`, made (readable by the service's user only) if missing,
    its public half beside it (`public_path`). OSError or ValueError when it cannot be read or made."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, KEY_MODE)
        try:
            os.fchmod(fd, KEY_MODE)
            os.write(fd, pem)
            os.fsync(fd)
        finally:
            os.close(fd)
        write_public(key, public_path(path))
        return key
    if path.stat().st_mode & 0o077:
        raise ValueError(f"{path}: the table's signing key is readable by others; chmod 600 it")
    loaded = serialization.load_pem_private_key(data, password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"{path}: the table's signing key is not an Ed25519 key")
    try:
        write_public(loaded, public_path(path))  # a key made before table.pub was, or a stale table.pub
    except OSError as exc:  # a key kept where the service may not write: `tablectl verify` reads the key
        log.warning("cannot write the table key's public half %s: %s", public_path(path), exc.strerror or exc)
    return loaded


def fingerprint_at(key_path: Path) -> str | None:
    """The fingerprint of the table's key at `key_path`: from the key itself, or, for a user who may
    not read it, from its public half beside it (`table.pub`, readable by all, which the table
    rewrites from the key at each start); None when there is no key. ValueError when the file there
    is not a table's key."""
    try:
        loaded = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except FileNotFoundError:
        return None
    except PermissionError:
        public = public_path(key_path)
        try:
            return read_fingerprint(public.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, KeyTextError) as exc:
            raise ValueError(f"{key_path} may not be read by this user, and {public}: {exc}") from None
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{key_path}: {exc}") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"{key_path}: not an Ed25519 key")
    return fingerprint(public_hex(loaded))


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def sign_head(key: Ed25519PrivateKey, table_id: str, *, seq: int, chain: str, at: str) -> dict[str, Any]:
    """The body of a `chain-head` entry: where the chain stands after entry `seq`, signed."""
    signature = key.sign(_message(table_id, seq, chain, at))
    return {"seq": seq, "chain": chain, "at": at, "key": public_hex(key), "sig": signature.hex()}


def head_problem(body: Mapping[str, Any], table_id: str, enrolled: str | None) -> str | None:
    """What is wrong with a `chain-head` body for table `table_id` (None: a good signature by the
    key whose fingerprint is `enrolled` for the table on the floor; no key is good when none is)."""
    try:
        seq, chain, at, key, sig = (body[k] for k in ("seq", "chain", "at", "key", "sig"))
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(str(key)))
        public.verify(bytes.fromhex(str(sig)), _message(table_id, int(seq), str(chain), str(at)))
    except (KeyError, ValueError, TypeError):
        return "a chain head that cannot be read"
    except InvalidSignature:
        return f"the chain head's signature is bad (head at entry {body.get('seq')})"
    signer = fingerprint(str(key))
    if enrolled is None:
        return (
            f"table {table_id} has no key enrolled on the floor: its chain head is signed by key "
            f"{signer}. If that is the table's own key (`tablectl verify` on the table prints it), enrol it: "
            f"tablectl floor enroll --table {table_id} --key {signer}"
        )
    if signer != enrolled:
        return (
            f"the chain head is signed by key {signer}, not by the key enrolled for table {table_id} "
            f"({enrolled}): the table's key was changed or another machine signs as the table. A new key is a "
            "re-enrolment: tablectl floor enroll --replace"
        )
    return None


def body_text(body: Mapping[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"), sort_keys=True)  # as the journal writes it


@dataclass
class ChainWalk:
    """The hash chain recomputed over a table's entries as the floor receives them in order.

    `add` takes the next entry and returns what is wrong with it (a gap, a head that forks from
    the chain, has a bad signature or is signed by a key not `enrolled` for the table), or None;
    `seq`/`chain` are where the walk stands, `key` the key of the last good head."""

    table_id: str
    seq: int = 0
    chain: str = GENESIS
    key: str | None = None
    enrolled: str | None = None  # the fingerprint enrolled for the table on the floor

    def add(
        self, seq: int, at: str, round_no: int | None, kind: str, body: Mapping[str, Any], text: str | None = None
    ) -> str | None:
        """`text`: the body as the journal writes it (`body_text`), when the caller has it already."""
        text = body_text(body) if text is None else text
        if seq != self.seq + 1:
            lost = body.get("lost") if kind == "journal-loss" else None
            if not (isinstance(lost, list) and lost == [self.seq + 1, seq - 1]):
                return f"a gap: entry {self.seq + 1} is missing (next is {seq})"
            self.chain = str(body.get("head_hash", self.chain))  # an accepted loss, as the journal allows
        if kind == KIND:
            problem = head_problem(body, self.table_id, self.enrolled)
            if problem is not None:
                return problem
            if int(body["seq"]) != self.seq or body["chain"] != self.chain:
                return (
                    f"a fork: the table signed entry {body['seq']} with chain {str(body['chain'])[:12]}..., but the "
                    f"entries the floor holds give {self.chain[:12]}... there"
                )
            self.key = str(body["key"])
        self.chain = link(self.chain, seq, at, round_no, kind, text)
        self.seq = seq
        return None
