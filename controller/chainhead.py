"""Signed chain heads: the part of the journal's proof that leaves the Pi.

At each round's end the table signs where its hash chain stands (sequence, chain value, time)
with its own Ed25519 key and journals the signature as a `chain-head` entry, which the floor
publisher sends with the rest. The floor store recomputes the chain over every entry it holds
(`ChainWalk`, with the journal's own `link`) and checks each head against it and its signature
against the key the table first signed with. Someone who rewrites the journal on the Pi, and
recomputes every CRC, the chain and `journal.head`, cannot change what the floor already holds:
the next head, or the next entry, forks from it. Made with `cryptography`, never by hand.

    key = table_key(Path("/var/lib/tablectl/table.key"))     # made on first use, mode 0600
    body = sign_head(key, "GS-01", seq=52, chain="9f0c...", at="2026-12-01T08:00:00.000Z")
    problem = head_problem(body, "GS-01", pinned=None)      # None: a good head
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from controller.journal import GENESIS, link

KIND = "chain-head"
KEY_MODE = 0o600


def _message(table_id: str, seq: int, chain: str, at: str) -> bytes:
    return f"tablectl chain head\x1f{table_id}\x1f{seq}\x1f{chain}\x1f{at}".encode()


def table_key(path: Path) -> Ed25519PrivateKey:
    """The table's signing key at `path`, made (readable by the service's user only) if missing.
    OSError or ValueError when it cannot be read or made."""
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
        return key
    if path.stat().st_mode & 0o077:
        raise ValueError(f"{path}: the table's signing key is readable by others; chmod 600 it")
    loaded = serialization.load_pem_private_key(data, password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"{path}: the table's signing key is not an Ed25519 key")
    return loaded


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def sign_head(key: Ed25519PrivateKey, table_id: str, *, seq: int, chain: str, at: str) -> dict[str, Any]:
    """The body of a `chain-head` entry: where the chain stands after entry `seq`, signed."""
    signature = key.sign(_message(table_id, seq, chain, at))
    return {"seq": seq, "chain": chain, "at": at, "key": public_hex(key), "sig": signature.hex()}


def head_problem(body: Mapping[str, Any], table_id: str, pinned: str | None) -> str | None:
    """What is wrong with a `chain-head` body for table `table_id` (None: a good signature by
    the `pinned` key, or by any key when none is pinned yet)."""
    try:
        seq, chain, at, key, sig = (body[k] for k in ("seq", "chain", "at", "key", "sig"))
        public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(str(key)))
        public.verify(bytes.fromhex(str(sig)), _message(table_id, int(seq), str(chain), str(at)))
    except (KeyError, ValueError, TypeError):
        return "a chain head that cannot be read"
    except InvalidSignature:
        return f"the chain head's signature is bad (head at entry {body.get('seq')})"
    if pinned is not None and key != pinned:
        return f"the chain head is signed by another key ({str(key)[:16]}...) than the table's ({pinned[:16]}...)"
    return None


def body_text(body: Mapping[str, Any]) -> str:
    return json.dumps(body, separators=(",", ":"), sort_keys=True)  # as the journal writes it


@dataclass
class ChainWalk:
    """The hash chain recomputed over a table's entries as the floor receives them in order.

    `add` takes the next entry and returns what is wrong with it (a gap, a head that forks from
    the chain or has a bad signature), or None; `seq`/`chain` are where the walk stands, `key`
    the table's key (pinned at its first signed head)."""

    table_id: str
    seq: int = 0
    chain: str = GENESIS
    key: str | None = None

    def add(self, seq: int, at: str, round_no: int | None, kind: str, body: Mapping[str, Any]) -> str | None:
        text = body_text(body)
        if seq != self.seq + 1:
            lost = body.get("lost") if kind == "journal-loss" else None
            if not (isinstance(lost, list) and lost == [self.seq + 1, seq - 1]):
                return f"a gap: entry {self.seq + 1} is missing (next is {seq})"
            self.chain = str(body.get("head_hash", self.chain))  # an accepted loss, as the journal allows
        if kind == KIND:
            problem = head_problem(body, self.table_id, self.key)
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
