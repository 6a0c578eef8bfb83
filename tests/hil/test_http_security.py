"""The daemon's HTTP edge as a process: HTTPS with a certificate made as hardware/install.md makes
it (checked by the client against the test CA, never with checks turned off), the Secure session
cookie and HSTS, the live feed refused to a page from another site, a LAN address without TLS refused, and X-Forwarded-For believed only from a configured
proxy (so rotating it neither dodges the login limiter nor writes a forged address in the audit)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from controller.journal.log import Journal
from controller.testing import DEALER, SUPERVISOR, TABLECTL, free_port

CONFIG = """
[table]
id = "GS-TLS"
game = "grand-slam"
[http]
{http}
"""


def make_certificates(where: Path) -> dict[str, Path]:
    """A test CA and a table certificate for 127.0.0.1 / localhost, by hardware/install.md's commands."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=where, check=True, capture_output=True, timeout=60)

    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "3650",
        "-subj", "/CN=Test tables CA", "-keyout", "ca.key", "-out", "ca.crt",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", "/CN=localhost", "-keyout", "table.key", "-out", "table.csr",
    )
    (where / "table.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    openssl(
        "x509", "-req", "-in", "table.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "825", "-extfile", "table.ext", "-out", "table.crt",
    )
    return {"ca": where / "ca.crt", "cert": where / "table.crt", "key": where / "table.key"}


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_certificates(tmp_path_factory.mktemp("tls"))


class Served:
    """`tablectl run --sim` with an [http] section, reached over HTTP or HTTPS."""

    def __init__(self, workdir: Path, http: str, *, host: str = "127.0.0.1", ca: Path | None = None) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.host = host
        self.ca = ca
        (workdir / "table.toml").write_text(CONFIG.format(http=http))
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        return [
            *TABLECTL, "run", "--sim", "--config", str(self.workdir / "table.toml"),
            "--state-dir", str(self.workdir / "state"), "--http", f"{self.host}:{self.port}",
        ]

    def env(self) -> dict[str, str]:
        env = {**os.environ, "TABLECTL_DEALER_TOKEN": DEALER, "TABLECTL_SUPERVISOR_TOKEN": SUPERVISOR}
        env.pop("NOTIFY_SOCKET", None)
        return env

    def start(self) -> None:
        log = open(self.workdir / "daemon.log", "wb")  # noqa: SIM115 - kept for the process
        self.proc = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=self.env())
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, (self.workdir / "daemon.log").read_text()
            try:
                self.request("GET", "/api/health")
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"no answer within 30 s: {(self.workdir / 'daemon.log').read_text()}")

    def connection(self) -> http.client.HTTPConnection:
        if self.ca is None:
            return http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
        context = ssl.create_default_context(cafile=str(self.ca))  # verifies the chain and the name
        return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=5, context=context)

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        conn = self.connection()
        try:
            data = json.dumps(body) if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), json.loads(response.read() or b"null")
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=15)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for s in started:
        s.stop()


def served_over_tls(tmp_path: Path, certificates: dict[str, Path], served: list[Served]) -> Served:
    """A daemon serving HTTPS with the test CA's certificate, started (and stopped by `served`)."""
    section = f'tls_cert = "{certificates["cert"]}"\ntls_key = "{certificates["key"]}"'
    daemon = Served(tmp_path, section, ca=certificates["ca"])
    served.append(daemon)
    daemon.start()
    return daemon


def login_entries(workdir: Path) -> list[dict[str, Any]]:
    journal = Journal(workdir / "state" / "journal.sqlite3", readonly=True)
    try:
        return [e.body for e in journal.entries() if e.kind == "login"]
    finally:
        journal.close()


def test_the_screens_are_served_over_https_with_a_secure_cookie(
    tmp_path: Path, certificates: dict[str, Path], served: list[Served]
) -> None:
    daemon = served_over_tls(tmp_path, certificates, served)
    status, headers, body = daemon.request("POST", "/api/login", {"token": DEALER})
    assert status == 200 and body == {"role": "dealer"}
    cookie = headers["set-cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie
    # Plain HTTP to the TLS port gets no answer a browser would take.
    plain = http_client_plain(daemon.port)
    assert plain is None or plain >= 400
    # A client that does not trust the table's CA refuses the certificate (checks stay on).
    with pytest.raises(ssl.SSLCertVerificationError):
        conn = http.client.HTTPSConnection("127.0.0.1", daemon.port, timeout=5, context=ssl.create_default_context())
        conn.request("GET", "/api/health")


def test_over_https_every_answer_keeps_the_browser_on_https_and_a_page_from_another_site_gets_no_live_feed(
    tmp_path: Path, certificates: dict[str, Path], served: list[Served]
) -> None:
    daemon = served_over_tls(tmp_path, certificates, served)
    status, headers, _ = daemon.request("POST", "/api/login", {"token": SUPERVISOR})
    assert status == 200 and headers["strict-transport-security"] == "max-age=31536000"
    for path in ("/api/health", "/api/state", "/api/rounds/9223372036854775808"):
        status, headers, _ = daemon.request("GET", path)
        assert headers["strict-transport-security"] == "max-age=31536000", (path, status)
    headers_cookie = daemon.request("POST", "/api/login", {"token": SUPERVISOR})[1]["set-cookie"]
    cookie = headers_cookie.split(";")[0]  # tablectl_session=...: what the browser sends back
    own = f"https://127.0.0.1:{daemon.port}"
    # The table's own page with its cookie gets the feed; a page elsewhere with the same cookie does not.
    got, code = asyncio.run(open_feed(daemon, own, cookie, {"after": 0}))
    assert code is None and got[-1]["type"] == "state"
    for foreign in ("https://evil.example", f"http://127.0.0.1:{daemon.port}", f"https://127.0.0.1:{daemon.port + 1}"):
        got, code = asyncio.run(open_feed(daemon, foreign, cookie, {"after": 0}))
        assert code == 4403 and len(got) == 1 and got[0]["type"] == "error", (foreign, got)
        assert got[0]["error"].startswith("the live feed is for this table's own screens, not a page from")
    # A refusal whose words are long in bytes still closes with its code (a close reason is 123 bytes at most).
    got, code = asyncio.run(open_feed(daemon, own, cookie, {"after": 0, "\u00fc" * 100: 1}))
    assert code == 4400 and got[0]["error"].startswith("unknown key")


async def open_feed(
    daemon: Served, origin: str, cookie: str, hello: dict[str, Any]
) -> tuple[list[dict[str, Any]], int | None]:
    """What a browser page at `origin` gets from the live feed: the messages up to the state, and
    the close code if the table closed it first."""
    assert daemon.ca is not None
    context = ssl.create_default_context(cafile=str(daemon.ca))
    got: list[dict[str, Any]] = []
    async with connect(
        f"wss://127.0.0.1:{daemon.port}/api/ws",
        ssl=context,
        origin=Origin(origin),
        additional_headers={"Cookie": cookie},
        open_timeout=10,
        close_timeout=5,
    ) as ws:
        with contextlib.suppress(ConnectionClosed):  # a page sends it on open, not knowing it is refused
            await ws.send(json.dumps(hello))
        try:
            while not got or got[-1]["type"] != "state":
                got.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        except ConnectionClosed as exc:
            return got, exc.rcvd.code if exc.rcvd is not None else None
    return got, None


def http_client_plain(port: int) -> int | None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", "/api/health")
        return conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def test_a_lan_address_without_tls_is_refused_unless_the_operator_chose_plain_http(
    tmp_path: Path, served: list[Served]
) -> None:
    refused = Served(tmp_path, "", host="0.0.0.0")
    done = subprocess.run(refused.command(), env=refused.env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 78
    assert "http.host: 0.0.0.0 is reachable from other machines" in done.stderr and "tls_cert" in done.stderr
    (tmp_path / "plain").mkdir()
    chosen = Served(tmp_path / "plain", "allow_plain_http = true", host="0.0.0.0")
    served.append(chosen)
    chosen.start()
    _, headers, body = chosen.request("GET", "/api/health")
    assert body == {"status": "ok"} and "strict-transport-security" not in headers  # no HTTPS to keep to


def test_a_forged_forwarded_address_neither_dodges_the_limiter_nor_reaches_the_audit(
    tmp_path: Path, served: list[Served]
) -> None:
    daemon = Served(tmp_path, "")
    served.append(daemon)
    daemon.start()
    for i in range(4):
        status, _, _ = daemon.request("POST", "/api/login", {"token": "guess-guess-guess"}, {"X-Forwarded-For": f"198.51.100.{i}"})
        assert status == 401
    _, _, audit = daemon.request("GET", "/api/audit", headers={"Authorization": f"Bearer {SUPERVISOR}"})
    assert [row["who"] for row in audit["audit"]] == ["someone at 127.0.0.1"] * 4
    assert daemon.request("POST", "/api/login", {"token": "guess-guess-guess"}, {"X-Forwarded-For": "198.51.100.9"})[0] == 401
    # The fifth failure locks the real peer out, whatever address it claims next.
    for i in range(3):
        status, headers, body = daemon.request("POST", "/api/login", {"token": DEALER}, {"X-Forwarded-For": f"203.0.113.{i}"})
        assert status == 429 and "127.0.0.1" in body["error"] and int(headers["retry-after"]) > 0
        daemon.request("POST", "/api/login", {"token": "guess-guess-guess"}, {"X-Forwarded-For": f"203.0.113.{i}"})
    daemon.stop()
    entries = login_entries(tmp_path)
    assert {e["client"] for e in entries} == {"127.0.0.1"}
    # Five failures journaled one by one, then the lock-out once: not the tries made while locked out.
    assert entries == [{"client": "127.0.0.1", "ok": False}] * 5 + [{"client": "127.0.0.1", "ok": False, "locked_out": 30}]


def test_a_configured_proxy_is_believed_about_the_client_it_forwards(tmp_path: Path, served: list[Served]) -> None:
    daemon = Served(tmp_path, 'trusted_proxies = ["127.0.0.1"]')
    served.append(daemon)
    daemon.start()
    status, _, _ = daemon.request("POST", "/api/login", {"token": "guess-guess-guess"}, {"X-Forwarded-For": "203.0.113.7"})
    assert status == 401
    daemon.stop()
    assert login_entries(tmp_path) == [{"client": "203.0.113.7", "ok": False}]
