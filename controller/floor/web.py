"""`tablectl floor --broker URL --http [HOST:]PORT`: the live view as a web page, for a pit boss's
screen. The same board as the terminal's (view.py: the same rows, faulted tables first, then
offline ones), read from the same subscription, so the page shows only what the view's broker
account may read: log the view in as `floor-view` (hardware/floor.md), which reads the general
topics only, where no card is face up that the dealer's screen keeps face down.

Read-only: GET and HEAD only (any other method answers 405), no cookie, no form, nothing it serves
changes anything. Bound to 127.0.0.1 unless told otherwise (a screen on the same machine). Any
other address needs `--http-password-file`: the page then asks for a password (HTTP Basic,
any user name, the file's first line), compared in constant time; serve it through a TLS proxy on
a shared network, since plain HTTP carries the password readable. Every answer carries a strict
Content-Security-Policy (scripts and styles from the page itself, fetches to itself only), no
framing, no referrer and no caching.

    page = FloorPage.from_args(subscription, "127.0.0.1:8090", None)
    page.serve_forever()    # until SIGTERM or Ctrl+C
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import json
import signal
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from controller.adapters.floor.config import FloorConfigError, read_password
from controller.floor.view import FloorSubscription, _header, board_json

STATIC = {
    "/": ("floor.html", "text/html; charset=utf-8"),
    "/floor.js": ("floor.js", "text/javascript; charset=utf-8"),
    "/floor.css": ("floor.css", "text/css; charset=utf-8"),
}
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def parse_listen(text: str) -> tuple[str, int]:
    """`[HOST:]PORT` (host 127.0.0.1 when left out); FloorConfigError says what is wrong."""
    host, _, port = text.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise FloorConfigError(f"--http {text}: write [HOST:]PORT with a port from 1 to 65535")
    return host, int(port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class FloorPage:
    """The page's HTTP server over one subscription's board."""

    def __init__(
        self,
        subscription: FloorSubscription,
        host: str,
        port: int,
        password: str | None,
        *,
        pit: str | None = None,
        sort: str = "pit",
    ) -> None:
        if password is None and not _loopback(host):
            raise FloorConfigError(
                f"--http {host}:{port}: a page served beyond this machine needs --http-password-file "
                "(and a TLS proxy in front of it on a shared network)"
            )
        self.subscription = subscription
        self.password = password
        self.pit, self.sort = pit, sort  # --pit and --sort: the page shows what the terminal would
        self.files = {path: (resources.files("controller.floor").joinpath("static", name).read_bytes(), kind)
                      for path, (name, kind) in STATIC.items()}  # fmt: skip
        page = self

        class Handler(_Handler):
            owner = page

        try:
            self.server = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            raise FloorConfigError(f"--http {host}:{port}: cannot listen there: {exc.strerror or exc}") from None
        self.server.daemon_threads = True
        self.url = f"http://{host}:{self.server.server_address[1]}/"

    @classmethod
    def from_args(
        cls, subscription: FloorSubscription, listen: str, password_file: str | None, **shown: Any
    ) -> FloorPage:
        host, port = parse_listen(listen)
        password = read_password(password_file, "--http-password-file") if password_file else None
        return cls(subscription, host, port, password, **shown)

    def board(self) -> bytes:
        with self.subscription.lock:
            doc = board_json(self.subscription.board, _header(self.subscription), pit=self.pit, sort=self.sort)
        return json.dumps(doc, separators=(",", ":")).encode()

    def serve_forever(self) -> int:
        """Serve until SIGTERM or Ctrl+C; 0."""
        stop = threading.Event()

        def on_signal(signum: int, frame: Any) -> None:
            stop.set()
            threading.Thread(target=self.server.shutdown, daemon=True).start()

        previous = signal.signal(signal.SIGTERM, on_signal)
        guarded = " (password)" if self.password is not None else ""
        print(f"tablectl floor: the floor page, read-only{guarded}, on {self.url}", flush=True)
        try:
            self.server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.server.server_close()
        return 0

    def allowed(self, authorization: str | None) -> bool:
        if self.password is None:
            return True
        scheme, _, value = (authorization or "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _user, _, given = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        return hmac.compare_digest(given.encode(), self.password.encode())


class _Handler(BaseHTTPRequestHandler):
    owner: FloorPage
    server_version = "tablectl-floor"
    sys_version = ""

    def do_GET(self) -> None:
        if not self.owner.allowed(self.headers.get("Authorization")):
            self._send(HTTPStatus.UNAUTHORIZED, b"a password is needed\n", "text/plain; charset=utf-8",
                       {"WWW-Authenticate": 'Basic realm="tablectl floor", charset="UTF-8"'})  # fmt: skip
            return
        path = self.path.split("?", 1)[0]
        if path == "/api/floor":
            self._send(HTTPStatus.OK, self.owner.board(), "application/json")
        elif path == "/favicon.ico":  # browsers ask; the page has none
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif path in self.owner.files:
            body, kind = self.owner.files[path]
            self._send(HTTPStatus.OK, body, kind)
        else:
            self._send(HTTPStatus.NOT_FOUND, b"not found\n", "text/plain; charset=utf-8")

    do_HEAD = do_GET  # the same answer without its body: `_send` leaves it out

    def _refuse(self) -> None:
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"the floor page is read-only\n", "text/plain; charset=utf-8",
                   {"Allow": "GET"})  # fmt: skip

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

    def _send(self, status: HTTPStatus, body: bytes, kind: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**HEADERS, "Content-Type": kind, "Content-Length": str(len(body)), **(extra or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # a page polled every two seconds would fill the log; refusals are answered, not logged
