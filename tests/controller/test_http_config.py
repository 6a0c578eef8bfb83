"""The [http] keys of TLS, plain HTTP and proxies: each mistake named by file and key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from controller.app.config import ConfigError, HttpConfig, check_listen, parse


def http(section: dict[str, Any]) -> HttpConfig:
    return parse({"http": section}, "table.toml", simulated=True).http


def test_tls_needs_both_files_and_they_must_exist(tmp_path: Path) -> None:
    cert, key = tmp_path / "t.crt", tmp_path / "t.key"
    cert.write_text("x")
    key.write_text("x")
    assert http({"tls_cert": str(cert), "tls_key": str(key)}).tls
    with pytest.raises(ConfigError, match=r"table.toml: http.tls_key: TLS needs both"):
        http({"tls_cert": str(cert)})
    with pytest.raises(ConfigError, match=r"http.tls_cert: .*/nope.crt: no such file \(hardware/install.md"):
        http({"tls_cert": str(tmp_path / "nope.crt"), "tls_key": str(key)})


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"allow_plain_http": "yes"}, "http.allow_plain_http: must be true or false, not 'yes'"),
        ({"trusted_proxies": "10.0.0.1"}, "http.trusted_proxies: must be a list of addresses"),
        ({"trusted_proxies": ["10.0.0.1", "proxy.lan"]}, "http.trusted_proxies[1]: must be an IP address or network"),
        ({"proxies": []}, "http.proxies: unknown key"),
    ],
)
def test_bad_http_keys_are_named(section: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]")):
        http(section)


def test_only_loopback_may_go_without_tls_unless_the_operator_says_so() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        check_listen(host, HttpConfig(), "table.toml")
    with pytest.raises(ConfigError, match=re.escape("table.toml: http.host: 10.0.20.11 is reachable from other machines")):
        check_listen("10.0.20.11", HttpConfig(), "table.toml")
    check_listen("10.0.20.11", http({"allow_plain_http": True}), "table.toml")
    assert http({"trusted_proxies": ["10.0.0.0/24"]}).trusted_proxies == ("10.0.0.0/24",)
