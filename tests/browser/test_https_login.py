"""The dealer logs in over HTTPS in Chromium: the table's certificate made as hardware/install.md
makes it, signed by a test CA the browser is told to trust (by that CA's public key, not by
turning certificate checks off: a browser without it refuses the page), the session cookie
Secure, and the live feed over wss://."""

from __future__ import annotations

import base64
import hashlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Error

from controller.testing import DEALER
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.hil.test_http_security import Served, make_certificates


def spki_hash(certificate: Path) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of a certificate, as Chromium names a trusted key."""
    der = subprocess.run(
        ["openssl", "x509", "-in", str(certificate), "-noout", "-pubkey"], capture_output=True, check=True, timeout=30
    ).stdout
    key = subprocess.run(
        ["openssl", "pkey", "-pubin", "-outform", "der"], input=der, capture_output=True, check=True, timeout=30
    ).stdout
    return base64.b64encode(hashlib.sha256(key).digest()).decode()


@pytest.fixture
def tls(tmp_path: Path) -> Iterator[tuple[Served, dict[str, Path]]]:
    (tmp_path / "tls").mkdir()
    certs = make_certificates(tmp_path / "tls")
    section = f'tls_cert = "{certs["cert"]}"\ntls_key = "{certs["key"]}"'
    daemon = Served(tmp_path, section, ca=certs["ca"])
    daemon.start()
    try:
        yield daemon, certs
    finally:
        daemon.stop()


def test_the_dealer_logs_in_over_https_and_the_feed_is_live(browser: Browser, tls: tuple[Served, dict[str, Path]]) -> None:
    daemon, certs = tls
    url = f"https://127.0.0.1:{daemon.port}/"
    # Without the test CA the browser refuses the table's certificate: the checks are on.
    stranger = browser.new_page()
    try:
        with pytest.raises(Error, match="ERR_CERT_AUTHORITY_INVALID"):
            stranger.goto(url)
    finally:
        stranger.close()
    # Trusted by the key of the certificate the table presents (Chromium has no per-run CA store
    # without NSS tools); the Python client of tests/hil/test_http_security.py checks the same
    # certificate's chain to the CA and its name with verification on.
    trusting = browser.browser_type.launch(
        executable_path=str(CHROMIUM),
        args=[*CHROMIUM_ARGS, f"--ignore-certificate-errors-spki-list={spki_hash(certs['cert'])}"],
    )
    try:
        context = trusting.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.locator("#login").wait_for(state="visible")
        page.fill("#token", DEALER)
        page.locator("#login-form button[type=submit]").click()
        page.locator("#login").wait_for(state="hidden")
        page.locator('#connection[data-status="live"]').wait_for()  # the WebSocket, over wss://
        assert page.evaluate("location.protocol") == "https:"
        cookie = next(c for c in context.cookies() if c["name"] == "tablectl_session")
        assert cookie["secure"] and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        assert page.locator("#prompt").inner_text().strip()
        assert not errors
    finally:
        trusting.close()
