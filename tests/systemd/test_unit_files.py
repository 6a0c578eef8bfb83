"""The systemd unit and udev rules an operator installs: systemd accepts them, and they say what
the table needs (notify + watchdog, the sandbox, the devices, the tokens the daemon reads)."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from controller.api.auth import load_tokens

SYSTEMD = Path(__file__).resolve().parents[2] / "systemd"
UNIT = SYSTEMD / "tablectl.service"
RULES = SYSTEMD / "99-tablectl.rules"
EXEC_START = "/opt/tablectl/current/bin/tablectl run --config /etc/tablectl/table.toml"


class _Repeated(dict[str, Any]):
    """A section that keeps every value of a repeated key (DeviceAllow=, Environment=, ...)."""

    def __setitem__(self, key: str, value: Any) -> None:
        # configparser stores each raw value as a one-item list while reading: extend instead.
        if isinstance(value, list) and key in self:
            self[key].extend(value)
        else:
            super().__setitem__(key, value)


def read_unit(path: Path = UNIT) -> dict[str, dict[str, list[str]]]:
    parser = configparser.ConfigParser(
        strict=False, interpolation=None, dict_type=_Repeated, delimiters=("=",), empty_lines_in_values=False
    )
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # directives are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return {
        section: {key: parser.get(section, key).split("\n") for key in parser.options(section)}
        for section in parser.sections()
    }


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    assert tool is not None, (
        "systemd-analyze is missing: install the Debian package 'systemd' (apt-get install -y systemd); "
        + ("CI must install it in .ci/run" if os.environ.get("CI") == "true" else "then run the tests again")
    )
    # verify also checks that ExecStart's program exists; the real one lives on the Pi, so a stub
    # stands in at a path under tmp_path and every other line is verified as shipped.
    stub = tmp_path / "opt/tablectl/current/bin/tablectl"
    stub.parent.mkdir(parents=True)
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = UNIT.read_text(encoding="utf-8")
    assert text.count(EXEC_START) == 1
    unit = tmp_path / "tablectl.service"
    unit.write_text(text.replace("/opt/tablectl/current/bin/tablectl", str(stub)), encoding="utf-8")
    done = subprocess.run(
        [tool, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    # Unknown directives and bad values are only warnings (exit 0), so the output must be silent too.
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if "tablectl.service" in line]
    assert done.returncode == 0 and complaints == [], done.stdout + done.stderr


def test_the_unit_is_a_notify_service_with_a_watchdog_that_restarts_on_failure() -> None:
    service = read_unit()["Service"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]
    assert service["ExecStart"] == [EXEC_START]
    assert service["WatchdogSec"] == ["10"]
    assert service["Restart"] == ["on-failure"]
    assert service["RestartSec"] == ["2"]
    # cli.py exits 2 for a refused config and 78 for a damaged journal or missing tokens.
    assert set(service["RestartPreventExitStatus"][0].split()) == {"2", "78"}


def test_the_unit_runs_as_tablectl_with_the_device_groups_and_its_own_directories() -> None:
    service = read_unit()["Service"]
    assert service["User"] == ["tablectl"] and service["Group"] == ["tablectl"]
    assert set(service["SupplementaryGroups"][0].split()) == {"gpio", "dialout", "video"}
    assert service["StateDirectory"] == ["tablectl"]  # /var/lib/tablectl, where the journal lives
    assert service["ConfigurationDirectory"] == ["tablectl"]
    # lgpio writes its notification pipes into the working directory: it must be writable.
    assert service["RuntimeDirectory"] == ["tablectl"] and service["WorkingDirectory"] == ["/run/tablectl"]


def test_the_unit_is_sandboxed() -> None:
    service = read_unit()["Service"]
    for directive, value in {
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "NoNewPrivileges": "yes",
        "ProtectKernelTunables": "yes",
        "ProtectKernelModules": "yes",
        "DevicePolicy": "closed",
    }.items():
        assert service[directive] == [value], directive
    assert set(service["RestrictAddressFamilies"][0].split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    assert "MemoryMax" in service and "LimitNOFILE" in service and "TimeoutStopSec" in service


def test_the_unit_allows_exactly_the_table_devices() -> None:
    allowed = {entry.split()[0]: entry.split()[1] for entry in read_unit()["Service"]["DeviceAllow"]}
    # Kernel driver names as listed in /proc/devices on a Pi.
    assert allowed == {
        "char-ttyUSB": "rw",
        "char-ttyACM": "rw",
        "char-ttyAMA": "rw",
        "char-ttyS": "rw",
        "char-gpiochip": "rw",
        "char-video4linux": "rw",
        "char-media": "rw",  # libcamera (the Raspberry Pi camera, backend = "picamera2")
        "char-dma_heap": "rw",
    }


def test_the_memory_limit_fits_a_pi_zero_2_w() -> None:
    service = read_unit()["Service"]
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    limit = service["MemoryMax"][0]
    assert limit[-1] in units
    assert int(limit[:-1]) * units[limit[-1]] < 512 * 1024**2 * 0.75  # room left for the OS


def test_the_credentials_systemd_loads_are_the_token_files_the_daemon_reads(tmp_path: Path) -> None:
    service = read_unit()["Service"]
    loaded = dict(entry.split(":", 1) for entry in service["LoadCredential"])
    assert set(loaded) == {"dealer-token", "supervisor-token"}
    assert all(source.startswith("/etc/tablectl/credentials/") for source in loaded.values())
    # systemd copies each credential to $CREDENTIALS_DIRECTORY/<name>; %d is that directory.
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    for name in loaded:
        (credentials / name).write_text(f"{name}-0123456789abcdef\n")
    env = dict(entry.split("=", 1) for entry in service["Environment"])
    env = {key: value.replace("%d", str(credentials)) for key, value in env.items()}
    tokens = load_tokens(simulated=False, env=env)
    assert (tokens.dealer, tokens.supervisor) == ("dealer-token-0123456789abcdef", "supervisor-token-0123456789abcdef")
    assert not tokens.generated


def test_the_unit_starts_at_boot() -> None:
    assert read_unit()["Install"]["WantedBy"] == ["multi-user.target"]


# --- udev rules ----------------------------------------------------------------------------

_RULE_KEY = re.compile(r'^(?P<key>[A-Z_]+(\{[A-Za-z_]+\})?)(?P<op>==|!=|\+=|:=|=)"(?P<value>[^"]*)"$')


def udev_rules() -> list[dict[str, str]]:
    rules: list[dict[str, str]] = []
    for line in RULES.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        rule: dict[str, str] = {}
        for part in line.split(", "):
            found = _RULE_KEY.match(part.strip())
            assert found, f"not a udev key: {part!r} in {line!r}"
            rule[found["key"] + found["op"]] = found["value"]
        rules.append(rule)
    return rules


def test_udev_rules_give_stable_names_to_the_shoe_and_the_display() -> None:
    rules = udev_rules()
    assert sorted(rule["SYMLINK+="] for rule in rules) == ["tablectl-display", "tablectl-shoe"]
    for rule in rules:
        assert rule["SUBSYSTEM=="] == "tty"
        assert rule["GROUP="] == "dialout" and rule["MODE="] == "0660"
        assert {"ATTRS{idVendor}==", "ATTRS{idProduct}==", "ATTRS{serial}=="} <= set(rule)


def test_udev_placeholders_are_marked_for_the_operator() -> None:
    for rule in udev_rules():
        for key in ("ATTRS{idVendor}==", "ATTRS{idProduct}==", "ATTRS{serial}=="):
            assert rule[key] == "FIXME", f"{key} should be a FIXME placeholder in the shipped file"
    text = RULES.read_text(encoding="utf-8")
    assert "udevadm info" in text and "udevadm control --reload" in text
