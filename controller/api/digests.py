"""SHA-1 and SHA-256 from the interpreter's own implementations (CPython's `_sha1`, and `_sha256`,
`_sha2` from 3.12), not OpenSSL's, for the few bytes the API's process hashes: a screen's WebSocket
handshake key (its Sec-WebSocket-Accept answer) and a browser session's id and proof
(controller/api/auth.py). The first use of an OpenSSL digest in a process runs OpenSSL's algorithm
fetching, about 1 MB of libcrypto's pages, which then stays in that process's memory (RSS) for good;
the API's process is forked after `hashlib` was imported (controller/api/launch.py), so with these
it never touches them (issue 35 point 5). The same digests (tests/controller/test_digests.py);
hashlib's (OpenSSL's) where the interpreter was built without its own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import _Hash

#: RFC 6455's GUID, appended to a client's Sec-WebSocket-Key before it is hashed.
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def _own(name: str, modules: tuple[str, ...]) -> Callable[..., _Hash]:
    for module in modules:
        try:
            found: Callable[..., _Hash] = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
        return found
    fallback: Callable[..., _Hash] = getattr(hashlib, name)
    return fallback


#: `sha1(data)`, `sha256(data)`: hash objects as hashlib's (digest, hexdigest, update, copy), and
#: usable as hmac's digestmod (hmac then computes the HMAC itself, with these).
sha1 = _own("sha1", ("_sha1",))
sha256 = _own("sha256", ("_sha2", "_sha256"))


def websocket_accept(key: str) -> str:
    """The Sec-WebSocket-Accept answer to a client's Sec-WebSocket-Key (RFC 6455 section 4.2.2),
    as websockets' own `accept_key` computes it."""
    return base64.b64encode(sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()


def _sha256_in_python(data: bytes = b"") -> _Hash:
    return sha256(data)


def hmac_sha256(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 of `message` under `key`, hex, with the interpreter's SHA-256. Given hmac as a
    Python function: for a built-in constructor such as `sha256` itself, hmac first asks OpenSSL's
    `hmac_new`, which refuses it (an exception raised and caught on every call); for a function it
    computes the HMAC itself at once."""
    return hmac.new(key, message, _sha256_in_python).hexdigest()
