"""`tablectl doctor`: the findings a person reads, against fake /dev and /sys trees in tmp_path."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import serial

from controller.camera.feed import HEALTH_FILE
from controller.cli.doctor import Check, Host, decode_throttled, format_report, has_errors, run_checks
from controller.journal.log import Journal

GB = 1024**3
MB = 1024**2
GOOD_TOKENS = {
    "TABLECTL_DEALER_TOKEN": "dealer-0123456789abcdef",
    "TABLECTL_SUPERVISOR_TOKEN": "super-0123456789abcdef",
}


@pytest.fixture
def host(tmp_path: Path) -> Host:
    """A machine that is not a Pi, has no camera, plenty of disk and both tokens set."""
    (tmp_path / "dev").mkdir()
    (tmp_path / "sys").mkdir()
    return Host(
        dev=tmp_path / "dev",
        sysfs=tmp_path / "sys",
        device_tree_model=tmp_path / "model",
        vcgencmd=None,
        environ=dict(GOOD_TOKENS),
        credentials_dir=tmp_path / "credentials",
        free_bytes=lambda _path: 10 * GB,
        module_available=lambda _name: True,
    )


@pytest.fixture
def pty_path() -> Iterator[str]:
    """A real serial device node (a pty) that pyserial can open."""
    controller_fd, device_fd = os.openpty()
    yield os.ttyname(device_fd)
    os.close(device_fd)
    os.close(controller_fd)


def write_config(tmp_path: Path, shoe: str, display: str, extra: str = "") -> Path:
    path = tmp_path / "table.toml"
    path.write_text(
        f'[table]\nid = "GS-01"\n[shoe]\nurl = "{shoe}"\n[display]\nurl = "{display}"\n'
        f'[state]\ndir = "{tmp_path / "state"}"\n{extra}',
        encoding="utf-8",
    )
    return path


def as_pi(host: Host, model: str = "Raspberry Pi Zero 2 W Rev 1.0") -> Host:
    host.device_tree_model.write_bytes(model.encode() + b"\0")  # the device tree ends it with NUL
    return host


def named(checks: list[Check], name: str) -> list[Check]:
    return [check for check in checks if check.name == name]


def one(checks: list[Check], name: str) -> Check:
    found = named(checks, name)
    assert len(found) == 1, f"expected one {name!r} finding, got {found}"
    return found[0]


def sim_checks(host: Host, tmp_path: Path) -> list[Check]:
    return run_checks(None, simulated=True, state_dir=tmp_path / "state", host=host)


# --- configuration and ports ---------------------------------------------------------------


def test_a_bad_config_value_is_reported_with_file_and_key(tmp_path: Path, host: Host) -> None:
    path = tmp_path / "table.toml"
    path.write_text("[shoe]\nbaudrate = 1234\n", encoding="utf-8")
    checks = run_checks(path, simulated=True, state_dir=tmp_path / "state", host=host)
    config = one(checks, "config")
    assert not config.ok and config.severity == "error"
    assert f"{path}: shoe.baudrate: must be one of" in config.message
    assert has_errors(checks)
    assert not named(checks, "shoe port"), "ports cannot be checked without a config"


def test_a_missing_by_id_port_lists_the_adapters_that_are_plugged_in(tmp_path: Path, host: Host, pty_path: str) -> None:
    by_id = tmp_path / "dev" / "serial" / "by-id"
    by_id.mkdir(parents=True)
    (by_id / "usb-Prolific_PL2303-if00-port0").symlink_to(pty_path)
    shoe = by_id / "usb-FTDI_FT232R_USB_UART_A10KXYZ-if00-port0"
    config = write_config(tmp_path, str(shoe), pty_path)
    port = one(run_checks(config, simulated=False, state_dir=None, host=host), "shoe port")
    assert not port.ok and port.severity == "error"
    assert f"{shoe} does not exist" in port.message
    assert "usb-Prolific_PL2303-if00-port0" in port.message
    assert f"shoe.url in {config}" in port.message
    assert "99-tablectl.rules" in port.message and "dialout" in port.message


def test_no_by_id_folder_means_no_usb_serial_adapter_at_all(tmp_path: Path, host: Host, pty_path: str) -> None:
    shoe = tmp_path / "dev" / "serial" / "by-id" / "usb-FTDI-if00-port0"
    config = write_config(tmp_path, str(shoe), pty_path)
    port = one(run_checks(config, simulated=False, state_dir=None, host=host), "shoe port")
    assert "no USB serial adapter is plugged in at all" in port.message


def test_a_missing_ttyusb_name_gets_advice_about_renaming(tmp_path: Path, host: Host, pty_path: str) -> None:
    display = tmp_path / "dev" / "ttyUSB7"
    config = write_config(tmp_path, pty_path, str(display))
    port = one(run_checks(config, simulated=False, state_dir=None, host=host), "display port")
    assert not port.ok and port.severity == "error"
    assert "ttyUSB0 becomes ttyUSB1" in port.message and "/dev/tablectl-display" in port.message


def test_a_port_that_opens_is_ok(tmp_path: Path, host: Host, pty_path: str) -> None:
    config = write_config(tmp_path, pty_path, pty_path)
    checks = run_checks(config, simulated=False, state_dir=None, host=host)
    shoe = one(checks, "shoe port")
    assert shoe.ok
    assert shoe.message.startswith(f"{pty_path}: opened at 115200 baud")
    assert one(checks, "display port").message.startswith(f"{pty_path}: opened at 9600 baud")


def test_a_port_held_by_the_running_table_is_reported_busy(tmp_path: Path, host: Host, pty_path: str) -> None:
    running_table = serial.Serial(pty_path, exclusive=True)
    try:
        config = write_config(tmp_path, pty_path, "loop://")
        port = one(run_checks(config, simulated=False, state_dir=None, host=host), "shoe port")
    finally:
        running_table.close()
    assert not port.ok and port.severity == "warning"
    assert "in use by another program" in port.message and "systemctl status tablectl" in port.message


def test_an_address_pyserial_does_not_know_is_an_error(tmp_path: Path, host: Host, pty_path: str) -> None:
    config = write_config(tmp_path, pty_path, "usb://display")
    port = one(run_checks(config, simulated=False, state_dir=None, host=host), "display port")
    assert not port.ok and port.severity == "error"
    assert "usb://display: not a port address pyserial understands" in port.message


# --- pin map and GPIO ------------------------------------------------------------------------


def test_the_shipped_pin_map_loads(tmp_path: Path, host: Host) -> None:
    pin_map = one(sim_checks(host, tmp_path), "pin map")
    assert pin_map.ok
    assert "[seven-seat-595]: 7 seats, lamps on shift registers" in pin_map.message


def test_a_pin_off_the_header_is_reported_with_the_file(tmp_path: Path, host: Host) -> None:
    pins = tmp_path / "pins.toml"
    pins.write_text(
        '[bar]\nlamps = "gpio"\nstatus = 40\nbuttons = { confirm = 5 }\n[bar.seats]\n'
        "1 = { first = 17, second = 27, third = 22, home = 23 }\n",
        encoding="utf-8",
    )
    config = tmp_path / "table.toml"
    config.write_text(f'[indicators]\npin_map = "bar"\npin_file = "{pins}"\n', encoding="utf-8")
    pin_map = one(run_checks(config, simulated=True, state_dir=tmp_path, host=host), "pin map")
    assert not pin_map.ok and pin_map.severity == "error"
    assert str(pins) in pin_map.message and "40 is not a BCM GPIO pin" in pin_map.message
    assert "indicators.pin_map" in pin_map.message


def test_off_a_pi_gpio_is_only_information(tmp_path: Path, host: Host) -> None:
    gpio = one(sim_checks(host, tmp_path), "GPIO")
    assert gpio.ok and gpio.severity == "info" and "not a Raspberry Pi" in gpio.message


def test_a_pi_without_gpio_character_devices_is_an_error(tmp_path: Path, host: Host) -> None:
    gpio = one(sim_checks(as_pi(host), tmp_path), "GPIO")
    assert not gpio.ok and gpio.severity == "error"
    assert gpio.message.startswith("Raspberry Pi Zero 2 W Rev 1.0: no ") and "gpiochip*" in gpio.message


def test_a_pi_with_gpio_chips_lists_them(tmp_path: Path, host: Host) -> None:
    for chip in ("gpiochip0", "gpiochip1"):
        (host.dev / chip).touch()
    gpio = one(sim_checks(as_pi(host), tmp_path), "GPIO")
    assert gpio.ok and "gpiochip0, gpiochip1 can be opened" in gpio.message


def test_a_real_table_on_a_pi_without_lgpio_says_how_to_install_it(tmp_path: Path, host: Host) -> None:
    (host.dev / "gpiochip0").touch()
    pi = replace(as_pi(host), module_available=lambda name: name != "lgpio")
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "loop://"\n[display]\nurl = "loop://"\n', encoding="utf-8")
    library = one(run_checks(config, simulated=False, state_dir=tmp_path, host=pi), "GPIO library")
    assert not library.ok and library.severity == "error"
    assert "python3-lgpio" in library.message and "--system-site-packages" in library.message


# --- power supply --------------------------------------------------------------------------


def test_throttled_bits_decode_to_the_documented_meanings() -> None:
    # 0x50005 = bits 0, 2, 16, 18 (Raspberry Pi's documentation of get_throttled).
    assert decode_throttled(0x50005) == [
        "under-voltage detected now",
        "CPU throttled now",
        "under-voltage has occurred since boot",
        "throttling has occurred since boot",
    ]
    assert decode_throttled(0) == []


def test_under_voltage_now_from_sysfs_is_an_error_with_power_supply_advice(tmp_path: Path, host: Host) -> None:
    flags = host.sysfs / "devices/platform/soc/soc:firmware/get_throttled"
    flags.parent.mkdir(parents=True)
    flags.write_text("50005\n")  # the firmware driver writes bare hex
    power = one(sim_checks(as_pi(host), tmp_path), "power supply")
    assert not power.ok and power.severity == "error"
    assert power.message.startswith(f"{flags} = 0x50005: under-voltage detected now; CPU throttled now;")
    assert "official Raspberry Pi power supply" in power.message
    assert "heatsink" not in power.message  # throttling here follows the under-voltage


def test_past_soft_temperature_limit_from_vcgencmd_is_a_warning_about_cooling(tmp_path: Path, host: Host) -> None:
    vcgencmd = tmp_path / "vcgencmd"
    vcgencmd.write_text('#!/bin/sh\n[ "$1" = get_throttled ] && echo throttled=0x80000\n')
    vcgencmd.chmod(0o755)
    power = one(sim_checks(replace(as_pi(host), vcgencmd=str(vcgencmd)), tmp_path), "power supply")
    assert not power.ok and power.severity == "warning"
    assert "vcgencmd get_throttled = 0x80000: soft temperature limit has occurred since boot" in power.message
    assert "heatsink" in power.message


def test_a_clean_power_record_is_ok(tmp_path: Path, host: Host) -> None:
    vcgencmd = tmp_path / "vcgencmd"
    vcgencmd.write_text("#!/bin/sh\necho throttled=0x0\n")
    vcgencmd.chmod(0o755)
    power = one(sim_checks(replace(as_pi(host), vcgencmd=str(vcgencmd)), tmp_path), "power supply")
    assert power.ok and "no under-voltage or throttling since boot" in power.message


def test_unreadable_power_flags_on_a_pi_are_a_warning(tmp_path: Path, host: Host) -> None:
    power = one(sim_checks(as_pi(host), tmp_path), "power supply")
    assert not power.ok and power.severity == "warning"
    assert "could not be read" in power.message


# --- camera --------------------------------------------------------------------------------


def test_no_camera_is_a_warning_not_an_error(tmp_path: Path, host: Host) -> None:
    checks = sim_checks(host, tmp_path)
    camera = one(checks, "camera")
    assert not camera.ok and camera.severity == "warning"
    assert camera.message.startswith("no camera found")


def test_the_pi_codec_nodes_are_not_mistaken_for_a_camera(tmp_path: Path, host: Host) -> None:
    for node, label in (("video10", "bcm2835-codec-decode"), ("video13", "bcm2835-isp")):
        (host.dev / node).touch()
        (host.sysfs / "class/video4linux" / node).mkdir(parents=True)
        (host.sysfs / "class/video4linux" / node / "name").write_text(label + "\n")
    assert one(sim_checks(host, tmp_path), "camera").message.startswith("no camera found")


def test_a_usb_camera_is_found_by_name(tmp_path: Path, host: Host) -> None:
    (host.dev / "video0").touch()
    (host.sysfs / "class/video4linux/video0").mkdir(parents=True)
    (host.sysfs / "class/video4linux/video0/name").write_text("HD Pro Webcam C920\n")
    camera = one(sim_checks(host, tmp_path), "camera")
    assert camera.ok and camera.message == f"found {host.dev / 'video0'} (HD Pro Webcam C920)"


# --- state directory, disk space, journal --------------------------------------------------


@pytest.mark.parametrize(
    ("free", "ok", "severity", "start"),
    [
        (30 * MB, False, "error", "only 30 MB free"),
        (300 * MB, False, "warning", "only 300 MB free"),
        (2 * GB, True, "info", "2048 MB free"),
    ],
)
def test_disk_space_warns_below_500_mb_and_fails_below_50_mb(
    tmp_path: Path, host: Host, free: int, ok: bool, severity: str, start: str
) -> None:
    disk = one(sim_checks(replace(host, free_bytes=lambda _p: free), tmp_path), "disk space")
    assert (disk.ok, disk.severity) == (ok, severity)
    assert disk.message.startswith(start)


def test_a_real_table_whose_state_dir_the_service_cannot_write_gets_a_warning(
    tmp_path: Path, host: Host, pty_path: str
) -> None:
    config = write_config(tmp_path, pty_path, pty_path)
    state = named(run_checks(config, simulated=False, state_dir=None, host=host), "state directory")
    assert any(not c.ok and "ProtectSystem=strict" in c.message and "ReadWritePaths" in c.message for c in state)


def test_a_journal_file_that_is_not_a_database_is_an_error_that_forbids_deleting_it(tmp_path: Path, host: Host) -> None:
    journal_file = tmp_path / "state" / "journal.sqlite3"
    journal_file.parent.mkdir()
    journal_file.write_bytes(b"the dealer's shopping list, not a journal" * 200)
    journal = one(sim_checks(host, tmp_path), "journal")
    assert not journal.ok and journal.severity == "error"
    assert journal.message.startswith(f"{journal_file}: ")
    assert "restore the journal from a good copy; never delete it" in journal.message
    assert journal_file.exists()


def test_a_tampered_journal_entry_is_named_in_the_report(tmp_path: Path, host: Host) -> None:
    path = tmp_path / "state" / "journal.sqlite3"
    written = Journal(path)
    written.append("card", {"card": "AS"}, round_no=1)
    written.close()
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER entries_no_update")
    db.execute("""UPDATE entries SET body='{"card":"KS"}' WHERE seq=1""")
    db.commit()
    db.close()
    journal = one(sim_checks(host, tmp_path), "journal")
    assert not journal.ok
    assert "entry 1 (card) does not match its checksum" in journal.message


def test_a_sound_journal_reports_its_entry_count(tmp_path: Path, host: Host) -> None:
    written = Journal(tmp_path / "state" / "journal.sqlite3")
    written.append("round-opened", {}, round_no=1)
    written.append("card", {"card": "AS"}, round_no=1)
    written.close()
    journal = one(sim_checks(host, tmp_path), "journal")
    assert journal.ok and "2 entries" in journal.message


def test_doctor_does_not_create_a_journal_that_is_not_there(tmp_path: Path, host: Host) -> None:
    journal = one(sim_checks(host, tmp_path), "journal")
    assert journal.ok and "no journal yet" in journal.message
    assert not (tmp_path / "state").exists()


# --- API tokens ----------------------------------------------------------------------------


def real_checks(host: Host, tmp_path: Path) -> list[Check]:
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "loop://"\n[display]\nurl = "loop://"\n', encoding="utf-8")
    return run_checks(config, simulated=False, state_dir=tmp_path / "state", host=host)


def test_a_world_readable_token_file_is_an_error(tmp_path: Path, host: Host) -> None:
    token_file = tmp_path / "dealer-token"
    token_file.write_text("a-long-enough-dealer-token\n")
    token_file.chmod(0o644)
    env = {"TABLECTL_DEALER_TOKEN_FILE": str(token_file), "TABLECTL_SUPERVISOR_TOKEN": "s" * 20}
    dealer = one(real_checks(replace(host, environ=env), tmp_path), "dealer token")
    assert not dealer.ok and dealer.severity == "error"
    assert f"{token_file} can be read or changed by other users (mode 0644)" in dealer.message
    assert f"chmod 0400 {token_file}" in dealer.message


def test_an_owner_only_token_file_of_good_length_is_ok(tmp_path: Path, host: Host) -> None:
    token_file = tmp_path / "dealer-token"
    token_file.write_text("a-long-enough-dealer-token\n")
    token_file.chmod(0o400)
    env = {"TABLECTL_DEALER_TOKEN_FILE": str(token_file), "TABLECTL_SUPERVISOR_TOKEN": "s" * 20}
    checks = real_checks(replace(host, environ=env), tmp_path)
    assert one(checks, "dealer token").ok
    assert "26 characters" in one(checks, "dealer token").message


def test_a_short_token_is_an_error_naming_the_variable(tmp_path: Path, host: Host) -> None:
    env = {"TABLECTL_DEALER_TOKEN": "12345", "TABLECTL_SUPERVISOR_TOKEN": "s" * 20}
    dealer = one(real_checks(replace(host, environ=env), tmp_path), "dealer token")
    assert not dealer.ok
    assert dealer.message.startswith("TABLECTL_DEALER_TOKEN: the dealer token has 5 characters; use at least 16")


def test_a_real_table_without_tokens_is_told_where_to_put_them(tmp_path: Path, host: Host) -> None:
    checks = real_checks(replace(host, environ={}), tmp_path)
    supervisor = one(checks, "supervisor token")
    assert not supervisor.ok and supervisor.severity == "error"
    assert f"Create {host.credentials_dir / 'supervisor-token'} with install -m 0400" in supervisor.message
    assert has_errors(checks)


def test_a_simulated_table_without_tokens_is_fine(tmp_path: Path, host: Host) -> None:
    dealer = one(sim_checks(replace(host, environ={}), tmp_path), "dealer token")
    assert dealer.ok and "makes a random one" in dealer.message


def test_the_service_credential_files_are_checked_when_no_variable_is_set(tmp_path: Path, host: Host) -> None:
    host.credentials_dir.mkdir()
    for role in ("dealer", "supervisor"):
        (host.credentials_dir / f"{role}-token").write_text(f"{role}-token-0123456789\n")
        (host.credentials_dir / f"{role}-token").chmod(0o600)
    (host.credentials_dir / "supervisor-token").chmod(0o640)
    checks = real_checks(replace(host, environ={}), tmp_path)
    assert one(checks, "dealer token").ok
    supervisor = one(checks, "supervisor token")
    assert not supervisor.ok and "(mode 0640)" in supervisor.message


def test_the_same_token_for_dealer_and_supervisor_is_an_error(tmp_path: Path, host: Host) -> None:
    env = {"TABLECTL_DEALER_TOKEN": "same-token-for-both", "TABLECTL_SUPERVISOR_TOKEN": "same-token-for-both"}
    tokens = one(real_checks(replace(host, environ=env), tmp_path), "API tokens")
    assert not tokens.ok and "a dealer could act as a supervisor" in tokens.message


def test_a_missing_token_file_is_an_error(tmp_path: Path, host: Host) -> None:
    env = {"TABLECTL_DEALER_TOKEN_FILE": str(tmp_path / "nope"), "TABLECTL_SUPERVISOR_TOKEN": "s" * 20}
    dealer = one(real_checks(replace(host, environ=env), tmp_path), "dealer token")
    assert not dealer.ok and "cannot be found" in dealer.message


# --- the report ----------------------------------------------------------------------------


def test_a_check_that_crashes_becomes_an_error_instead_of_stopping_doctor(tmp_path: Path, host: Host) -> None:
    def broken(_path: Path) -> int:
        raise RuntimeError("statvfs exploded")

    checks = sim_checks(replace(host, free_bytes=broken), tmp_path)
    disk = one(checks, "disk space")
    assert not disk.ok and disk.severity == "error"
    assert "the disk space check itself failed (RuntimeError: statvfs exploded)" in disk.message
    assert named(checks, "journal"), "the checks after it still ran"


def test_the_report_labels_each_finding_and_ends_with_a_verdict() -> None:
    checks = [
        Check("config", True, "info", "table.toml: table GS-01"),
        Check("camera", False, "warning", "no camera found"),
        Check("journal", False, "error", "entry 3 is missing"),
    ]
    lines = format_report(checks).splitlines()
    assert lines[0].split() == ["ok", "config", "table.toml:", "table", "GS-01"]
    assert lines[1].split()[:2] == ["WARNING", "camera"]
    assert lines[2].split()[:2] == ["ERROR", "journal"]
    assert lines[-1] == "1 error, 1 warning: the table cannot run until every ERROR is fixed."
    assert has_errors(checks)


def test_a_report_without_errors_says_so() -> None:
    warning_only = [Check("camera", False, "warning", "no camera found")]
    assert format_report(warning_only).splitlines()[-1] == "No errors; 1 warning to look at."
    assert not has_errors(warning_only)
    assert format_report([Check("config", True, "info", "fine")]).splitlines()[-1] == "All checks passed."


def test_long_messages_wrap_under_their_own_column() -> None:
    message = "word " * 60
    lines = format_report([Check("journal", False, "error", message.strip())]).splitlines()
    body = [line for line in lines if line.strip() and not line.startswith(("ERROR", "1 error"))]
    assert body and all(line.startswith(" " * len("ERROR    journal  ")) for line in body)
    assert all(len(line) <= 100 for line in lines)


def test_the_surveillance_token_is_optional_but_checked_when_set(tmp_path: Path, host: Host) -> None:
    absent = one(real_checks(host, tmp_path), "surveillance token")
    assert absent.ok and "nobody has that role" in absent.message
    short = {**GOOD_TOKENS, "TABLECTL_SURVEILLANCE_TOKEN": "short"}
    assert not one(real_checks(replace(host, environ=short), tmp_path), "surveillance token").ok
    same = {**GOOD_TOKENS, "TABLECTL_SURVEILLANCE_TOKEN": GOOD_TOKENS["TABLECTL_DEALER_TOKEN"]}
    tokens = one(real_checks(replace(host, environ=same), tmp_path), "API tokens")
    assert not tokens.ok and "the surveillance token is another role's" in tokens.message


def test_the_running_tables_camera_fault_is_in_doctor_with_its_figures(tmp_path: Path, host: Host) -> None:
    state = tmp_path / "state"
    assert named(sim_checks(host, tmp_path), "camera health") == []  # no camera has reported here
    state.mkdir(exist_ok=True)
    words = "out of focus: 1.6 px blur at the markers (the reader needs at most 1.45 px): refocus the lens"
    record = {
        "measured_at": 1_790_000_000,
        "blur_px": 1.63,
        "shake_px": 0.0,
        "jpeg_quality": None,
        "compressed": False,
        "faults": [{"kind": "focus", "level": "fault", "figure": 1.63, "words": words}],
    }
    (state / HEALTH_FILE).write_text(json.dumps(record))
    check = one(sim_checks(host, tmp_path), "camera health")
    assert not check.ok and check.severity == "warning"
    assert check.message.startswith(words + " (measured by the running table at ")
    assert "1.6 px blur at the markers, markers moving 0.0 px frame to frame, no JPEG seen" in check.message
    (state / HEALTH_FILE).write_text(json.dumps({**record, "blur_px": 0.8, "faults": []}))
    fine = one(sim_checks(host, tmp_path), "camera health")
    assert fine.ok and "0.8 px blur at the markers" in fine.message
