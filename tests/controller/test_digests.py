"""The API's process hashes with the interpreter's own SHA-1 and SHA-256, never OpenSSL's (issue 35
point 5: the first OpenSSL digest a process uses leaves about 1 MB of libcrypto in its memory), and
its answers are the ones OpenSSL's digests give: a screen's WebSocket handshake is accepted with
RFC 6455's answer, and a browser session's cookie (its id hashed, its proof an HMAC of the role's
token) still names its role, across a restart that keeps the sessions file too.

The real `tablectl run --sim`: a sitecustomize on its PYTHONPATH writes down, by process, every call
of OpenSSL's hash constructors and HMAC (`_hashlib`'s, which hashlib and hmac use; the table's
process makes them: the journal's hash chain)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from controller.api.auth import Sessions, _key
from controller.api.digests import sha1, sha256, websocket_accept
from controller.testing import DEALER, Daemon, hooked_env

SITECUSTOMIZE = """
import functools, os

if os.environ.get("DIGESTS_CALLED"):
    import _hashlib

    def _counted(name, openssl):
        @functools.wraps(openssl)
        def call(*args, **kwargs):
            with open(os.path.join(os.environ["DIGESTS_CALLED"], f"{os.getpid()}.txt"), "a") as out:
                out.write(name + "\\n")
            return openssl(*args, **kwargs)
        return call

    for name in [n for n in dir(_hashlib) if n.startswith("openssl_")] + ["new", "hmac_new", "hmac_digest"]:
        if callable(getattr(_hashlib, name, None)):
            setattr(_hashlib, name, _counted(name, getattr(_hashlib, name)))

    import hmac

    # hmac tells OpenSSL's constructors by their type (`_functype`, from openssl_sha256 as it
    # imports); the wrappers are Python functions, so it is given back the type the real ones have
    hmac._functype = type(len)
"""


def test_the_digests_are_openssls() -> None:
    for data in (b"", b"abc", bytes(range(256)) * 9):
        assert sha1(data).hexdigest() == hashlib.sha1(data).hexdigest()
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        assert hmac.new(b"session", data, sha256).hexdigest() == hmac.new(b"session", data, "sha256").hexdigest()
    # RFC 6455 section 1.3's example handshake.
    assert websocket_accept("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    assert _key("a-session-id") == hashlib.sha256(b"a-session-id").hexdigest()


def _screen_reads_the_state(port: int, cookie: str) -> str:
    async def one() -> str:
        headers = {"Cookie": f"{Sessions.COOKIE}={cookie}"}
        async with connect(f"ws://127.0.0.1:{port}/api/ws", additional_headers=headers) as ws:
            await ws.send(json.dumps({}))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "state":
                    return str(message["type"])

    return asyncio.run(one())


def test_the_apis_process_uses_no_openssl_digest(tmp_path: Path) -> None:
    called = tmp_path / "called"
    daemon = Daemon(tmp_path, '[table]\nid = "T-1"\n', env=hooked_env(tmp_path, SITECUSTOMIZE, DIGESTS_CALLED="called"))
    apis = []
    for start in range(2):  # the sessions file kept: the cookie still names the dealer after a restart
        daemon.spawn()
        try:
            daemon.wait_ready()
            apis.append(daemon.api_pid())
            with httpx.Client(base_url=daemon.url) as client:
                if start == 0:
                    login = client.post("/api/login", json={"token": DEALER})
                    assert login.status_code == 200 and login.json() == {"role": "dealer"}
                    cookie = login.cookies[Sessions.COOKIE]
                client.cookies.set(Sessions.COOKIE, cookie)
                assert client.get("/api/whoami").json()["role"] == "dealer"
            assert _screen_reads_the_state(daemon.port, cookie) == "state"
        finally:
            code = daemon.stop()
        assert code == 0, daemon.log()
    assert daemon.proc is not None
    for api in apis:
        assert not (called / f"{api}.txt").exists(), f"the API's process used OpenSSL's {(called / f'{api}.txt').read_text().split()}"
    assert (called / f"{daemon.proc.pid}.txt").read_text(), "the table's process was watched too"
