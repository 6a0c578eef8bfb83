"""`tablectl doctor`: check that this machine can run the table, and say what to fix.

Each check gives a `Check` whose message a person at the table can act on: what is wrong,
where, and what to do. The checks repair nothing and create nothing (a missing journal is
reported, not created), and never crash: a check that fails unexpectedly reports itself as an
error.

    checks = run_checks(Path("/etc/tablectl/table.toml"), simulated=False, state_dir=None)
    print(format_report(checks))
    sys.exit(1 if has_errors(checks) else 0)

Every path doctor reads (/dev, /sys, the device-tree model, vcgencmd) comes from a `Host`, so
tests run the same checks against fake trees in a temporary directory.
"""

from __future__ import annotations

import dataclasses
import errno
import importlib
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from controller.app import config as table_config
from controller.journal.log import Journal, JournalCorrupt

Severity = Literal["error", "warning", "info"]

JOURNAL_FILE = "journal.sqlite3"
SERVICE_STATE_DIR = Path("/var/lib/tablectl")
SIM_STATE_DIR = Path(".tablectl-sim")  # `tablectl run --sim` with no config: a journal a game, in <game>/
MB = 1024 * 1024
DISK_WARNING_BYTES = 500 * MB
DISK_ERROR_BYTES = 50 * MB
MIN_TOKEN_LENGTH = 16
ROLES = ("dealer", "supervisor")

# get_throttled bits, with the meanings Raspberry Pi documents for `vcgencmd get_throttled`.
# Bits 0-3 are the state now; bits 16-19 are sticky until the next boot.
THROTTLE_FLAGS: dict[int, str] = {
    0: "under-voltage detected now",
    1: "ARM frequency capped now",
    2: "CPU throttled now",
    3: "soft temperature limit active now",
    16: "under-voltage has occurred since boot",
    17: "ARM frequency capping has occurred since boot",
    18: "throttling has occurred since boot",
    19: "soft temperature limit has occurred since boot",
}
_UNDER_VOLTAGE_BITS = (1 << 0) | (1 << 16)
_SLOWED_BITS = (0b0110) | (0b0110 << 16)  # ARM frequency capped, throttled
_SOFT_TEMP_BITS = (1 << 3) | (1 << 19)

# Video nodes every Pi has for its codecs and ISP, camera or not.
_PI_INTERNAL_VIDEO = ("bcm2835-codec", "bcm2835-isp", "pispbe", "rpi-hevc-dec")


@dataclass(frozen=True)
class Check:
    """One finding: `ok` False means something to fix; `severity` says how urgent."""

    name: str
    ok: bool
    severity: Severity
    message: str


def _free_bytes(path: Path) -> int:
    return shutil.disk_usage(path).free


def _module_available(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@dataclass(frozen=True)
class Host:
    """Where doctor looks. The defaults are the real machine; tests point them at tmp_path."""

    dev: Path = Path("/dev")
    sysfs: Path = Path("/sys")
    device_tree_model: Path = Path("/proc/device-tree/model")
    vcgencmd: str | None = field(default_factory=lambda: shutil.which("vcgencmd"))
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    # Where tablectl.service's LoadCredential= takes the token files from.
    credentials_dir: Path = Path("/etc/tablectl/credentials")
    free_bytes: Callable[[Path], int] = _free_bytes
    module_available: Callable[[str], bool] = _module_available


def run_checks(
    config_path: Path | None,
    *,
    simulated: bool,
    state_dir: Path | None,
    host: Host | None = None,
    game: str | None = None,
) -> list[Check]:
    """Run every check, in the order a person would fix things, and return the findings (`game`:
    a simulated table's game, whose journal is checked, instead of the configuration's)."""
    host = host or Host()
    checks: list[Check] = []
    loaded = _guard("config", lambda: _check_config(config_path, simulated, game))
    checks += loaded.checks
    config = loaded.config
    if config is not None:
        checks += _guard("shoe port", lambda: [_check_port("shoe", "shoe.url", config.shoe.url, config)]).checks
        checks += _guard(
            "display port", lambda: [_check_port("display", "display.url", config.display.url, config)]
        ).checks
        checks += _guard("pin map", lambda: [_check_pin_map(config, simulated)]).checks
    factory = (config.indicators.pin_factory if config is not None else None) or host.environ.get(
        "GPIOZERO_PIN_FACTORY", "lgpio"
    )
    checks += _guard("GPIO", lambda: _check_gpio(host, simulated, factory)).checks
    checks += _guard("power supply", lambda: [_check_power(host)]).checks
    checks += _guard("camera", lambda: [_check_camera(host)]).checks
    chosen_dir = state_dir or Path(config.state_dir if config is not None else SERVICE_STATE_DIR)
    if simulated and state_dir is None and config is not None and config.source.startswith("built-in"):
        chosen_dir = SIM_STATE_DIR / config.game
    # Only the configured directory must suit the service; --state-dir may point at a copy.
    for_service = state_dir is None and not simulated
    checks += _guard("state directory", lambda: _check_state_dir(chosen_dir, for_service)).checks
    checks += _guard("camera health", lambda: [c for c in [_check_camera_health(chosen_dir)] if c]).checks
    checks += _guard("disk space", lambda: [_check_disk(chosen_dir, host)]).checks
    checks += _guard("journal", lambda: [_check_journal(chosen_dir / JOURNAL_FILE, state_dir is None)]).checks
    checks += _guard("journal size", lambda: [_check_journal_size(chosen_dir / JOURNAL_FILE, config)]).checks
    checks += _guard("API tokens", lambda: _check_tokens(host, simulated)).checks
    return checks


def has_errors(checks: list[Check]) -> bool:
    """True when the table cannot run until something is fixed (`tablectl doctor` exits 1)."""
    return any(not check.ok and check.severity == "error" for check in checks)


def format_report(checks: list[Check]) -> str:
    """The report a person reads: one block per check, then a one-line verdict."""
    name_width = max((len(check.name) for check in checks), default=0) + 2
    lines: list[str] = []
    for check in checks:
        label = "ok" if check.ok else check.severity.upper()
        head = f"{label:<9}{check.name:<{name_width}}"
        lines += textwrap.wrap(
            check.message,
            width=max(100, len(head) + 40),
            initial_indent=head,
            subsequent_indent=" " * len(head),
            break_long_words=False,
            break_on_hyphens=False,
        )
    errors = sum(1 for c in checks if not c.ok and c.severity == "error")
    warnings = sum(1 for c in checks if not c.ok and c.severity == "warning")
    if errors:
        counts = f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
        verdict = f"{counts}: the table cannot run until every ERROR is fixed."
    elif warnings:
        verdict = f"No errors; {_count(warnings, 'warning')} to look at."
    else:
        verdict = "All checks passed."
    return "\n".join([*lines, "", verdict]) + "\n"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass
class _Outcome:
    checks: list[Check]
    config: table_config.Config | None = None


def _guard(name: str, run: Callable[[], Any]) -> _Outcome:
    """Run one check; an unexpected exception becomes an error finding, never a crash."""
    try:
        result = run()
    except Exception as exc:
        return _Outcome(
            [
                Check(
                    name,
                    False,
                    "error",
                    f"the {name} check itself failed ({type(exc).__name__}: {exc}); "
                    "this is a tablectl bug: report it with this output",
                )
            ]
        )
    return result if isinstance(result, _Outcome) else _Outcome(list(result))


# --- configuration -------------------------------------------------------------------------


def _check_config(path: Path | None, simulated: bool, game: str | None = None) -> _Outcome:
    try:
        config = table_config.load(path, simulated=simulated)
        if game is not None:  # --game with --sim: the simulated table of that game
            config = dataclasses.replace(config, game=game)
    except table_config.ConfigError as exc:
        return _Outcome(
            [
                Check(
                    "config",
                    False,
                    "error",
                    f"{exc}. Fix it (hardware/install.md shows an example) and run doctor again.",
                )
            ]
        )
    mode = "simulated table" if simulated else "real table"
    return _Outcome(
        [Check("config", True, "info", f"{config.source}: table {config.table_id}, {config.game}, {mode}")], config
    )


# --- serial ports --------------------------------------------------------------------------


def _check_port(device: str, key: str, url: str | None, config: table_config.Config) -> Check:
    name = f"{device} port"
    if url is None:
        return Check(name, True, "info", f"no port configured: the simulated table runs a simulated {device}")
    baudrate = config.shoe.baudrate if device == "shoe" else config.display.baudrate
    fix_key = f"{key} in {config.source}"
    if url.startswith("/") and not os.path.exists(url):
        return Check(name, False, "error", _missing_port_advice(device, url, fix_key))
    import serial  # pyserial: imported here so that doctor still reports everything else without it

    try:
        port = serial.serial_for_url(url, do_not_open=True, baudrate=baudrate, timeout=0.5, write_timeout=0.5)
        # Exclusive: a port the running table holds is reported as busy instead of shared.
        port.exclusive = True
    except (ValueError, serial.SerialException) as exc:
        return Check(
            name,
            False,
            "error",
            f"{url}: not a port address pyserial understands ({exc}). Use a device path such as "
            f"/dev/tablectl-{device} or /dev/serial/by-id/..., or a URL such as socket://host:port; set {fix_key}.",
        )
    try:
        port.open()
    except (OSError, serial.SerialException) as exc:
        code = getattr(exc, "errno", None)
        if code in (errno.EACCES, errno.EPERM):
            return Check(
                name,
                False,
                "error",
                f"{url}: permission denied. The user running tablectl must be in the dialout group: "
                "sudo usermod -aG dialout tablectl (the service gets it from SupplementaryGroups=dialout), "
                "then log in again; run doctor as that user: sudo -u tablectl tablectl doctor.",
            )
        if code in (errno.EBUSY, errno.EAGAIN):
            return Check(
                name,
                False,
                "warning",
                f"{url}: in use by another program. Is the table already running (systemctl status tablectl)? "
                "Stop it to check this port.",
            )
        if code == errno.ENOENT:
            return Check(name, False, "error", _missing_port_advice(device, url, fix_key))
        return Check(
            name,
            False,
            "error",
            f"{url}: cannot be opened ({exc}). Check the cable and the adapter; dmesg | tail shows USB errors.",
        )
    port.close()
    return Check(
        name,
        True,
        "info",
        f"{url}: opened at {baudrate} baud and closed again (the {device} answers when the table starts)",
    )


def _missing_port_advice(device: str, url: str, fix_key: str) -> str:
    parent = Path(url).parent
    if "/serial/by-id/" in url:
        if parent.is_dir():
            present = sorted(p.name for p in parent.iterdir())
            listing = f"adapters plugged in now ({parent}): {', '.join(present) or 'none'}"
        else:
            listing = f"no USB serial adapter is plugged in at all ({parent} does not exist)"
        return (
            f"{url} does not exist: the {device} is unplugged or its adapter has another name; {listing}. "
            f"Put the right name in {fix_key}, or install systemd/99-tablectl.rules and use /dev/tablectl-{device}. "
            "The user running tablectl also needs the dialout group."
        )
    return (
        f"{url} does not exist: the {device} is unplugged, or a USB adapter changed its name when re-plugged "
        f"(ttyUSB0 becomes ttyUSB1). Name it by a stable path in {fix_key}: /dev/serial/by-id/... or "
        f"/dev/tablectl-{device} from systemd/99-tablectl.rules."
    )


# --- pin map and GPIO ------------------------------------------------------------------------


def _check_pin_map(config: table_config.Config, simulated: bool) -> Check:
    try:
        pins = importlib.import_module("drivers.pins")
        loader = pins.load_pin_map
        default_file = pins.DEFAULT_PIN_FILE
    except (ImportError, AttributeError) as exc:
        return Check(
            "pin map",
            False,
            "warning",
            f"the pin map loader (drivers.pins) is not complete in this installation ({exc}), so the lamp "
            "wiring was not checked; reinstall tablectl.",
        )
    path = Path(config.indicators.pin_file or default_file)
    try:
        pin_map = loader(path, config.indicators.pin_map)
    except ValueError as exc:
        return Check(
            "pin map",
            False,
            "error",
            f"{exc}. Fix the pin file, or choose another map with indicators.pin_map in {config.source}.",
        )
    unwired = pin_map.unwired(config.seats)
    if unwired:
        outcome = "a simulated table shows no lamp there" if simulated else "the table will not start"
        return Check(
            "pin map",
            False,
            "warning" if simulated else "error",
            f"{path} [{pin_map.name}] has no lamps for seat {', '.join(map(str, unwired))} of the table's "
            f"{config.seats} (table.seats): {outcome}. Choose a map that wires every seat with "
            f"indicators.pin_map in {config.source} (eight-seat-595 for 8 seats).",
        )
    lamps = "shift registers" if pin_map.lamps == "shift-register" else "GPIO pins"
    return Check("pin map", True, "info", f"{path} [{pin_map.name}]: {len(pin_map.seats)} seats, lamps on {lamps}")


def _pi_model(host: Host) -> str | None:
    try:
        model = host.device_tree_model.read_bytes().decode(errors="replace").strip("\0\n ")
    except OSError:
        return None
    return model if "Raspberry Pi" in model else None


def _check_gpio(host: Host, simulated: bool, factory: str) -> list[Check]:
    model = _pi_model(host)
    if model is None:
        return [
            Check(
                "GPIO",
                True,
                "info",
                "not a Raspberry Pi: no GPIO header here, so base lamps and buttons are simulated (--sim)",
            )
        ]
    chips = sorted(host.dev.glob("gpiochip*"))
    if not chips:
        return [
            Check(
                "GPIO",
                False,
                "error",
                f"{model}: no {host.dev}/gpiochip* devices, so no lamp or button can be driven. Update Raspberry Pi OS "
                "(sudo apt full-upgrade) and reboot.",
            )
        ]
    denied = [str(chip) for chip in chips if not os.access(chip, os.R_OK | os.W_OK)]
    checks: list[Check] = []
    if denied:
        checks.append(
            Check(
                "GPIO",
                False,
                "error",
                f"{', '.join(denied)}: this user cannot open them for reading and writing. Add the user running "
                "tablectl to the gpio group: sudo usermod -aG gpio tablectl (the service gets it from "
                "SupplementaryGroups=gpio).",
            )
        )
    else:
        checks.append(Check("GPIO", True, "info", f"{model}: {', '.join(c.name for c in chips)} can be opened"))
    if not simulated and factory.strip().lower() == "lgpio" and not host.module_available("lgpio"):
        checks.append(
            Check(
                "GPIO library",
                False,
                "error",
                "the lgpio library is not visible to tablectl's Python, and gpiozero needs it on this Pi: "
                "sudo apt install python3-lgpio, and create the venv with python3 -m venv --system-site-packages "
                "(hardware/install.md).",
            )
        )
    return checks


# --- power supply --------------------------------------------------------------------------


def _throttled_path(host: Host) -> Path:
    return host.sysfs / "devices/platform/soc/soc:firmware/get_throttled"


def _read_throttled(host: Host) -> tuple[int | None, str]:
    """The get_throttled bits and where they came from, or (None, why they could not be read)."""
    problems: list[str] = []
    if host.vcgencmd:
        try:
            done = subprocess.run(
                [host.vcgencmd, "get_throttled"], capture_output=True, text=True, timeout=5, check=False
            )
            text = done.stdout.strip()
            if done.returncode == 0 and text.startswith("throttled="):
                return int(text.removeprefix("throttled="), 16), "vcgencmd get_throttled"
            problems.append(f"vcgencmd said {(done.stderr or text).strip()!r}")
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            problems.append(f"vcgencmd failed: {exc}")
    path = _throttled_path(host)
    try:
        return int(path.read_text(encoding="ascii").strip(), 16), str(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: {exc}")
    return None, "; ".join(problems)


def decode_throttled(value: int) -> list[str]:
    """The documented meanings of the bits set in a get_throttled value, lowest bit first."""
    return [meaning for bit, meaning in THROTTLE_FLAGS.items() if value & (1 << bit)]


def _check_power(host: Host) -> Check:
    if _pi_model(host) is None:
        return Check("power supply", True, "info", "not a Raspberry Pi: no under-voltage or throttling flags to read")
    value, source = _read_throttled(host)
    if value is None:
        return Check(
            "power supply",
            False,
            "warning",
            f"the under-voltage and throttling flags could not be read ({source}), so a weak power supply would "
            "go unnoticed.",
        )
    flags = decode_throttled(value)
    if not flags:
        return Check("power supply", True, "info", f"no under-voltage or throttling since boot ({source}: {value:#x})")
    advice: list[str] = []
    if value & _UNDER_VOLTAGE_BITS:
        advice.append(
            "Use the official Raspberry Pi power supply on a short cable, and power the shoe and the display "
            "from their own supply or a powered USB hub: under-voltage causes serial timeouts and SD card corruption."
        )
    # Capping and throttling follow under-voltage too; only the temperature bits prove heat.
    if value & _SOFT_TEMP_BITS or (value & _SLOWED_BITS and not value & _UNDER_VOLTAGE_BITS):
        advice.append("Give the Pi a heatsink and air under the table: a hot Pi slows the table loop.")
    severity: Severity = "error" if value & 1 else "warning"
    return Check("power supply", False, severity, f"{source} = {value:#x}: {'; '.join(flags)}. {' '.join(advice)}")


# --- camera --------------------------------------------------------------------------------


def _check_camera(host: Host) -> Check:
    cameras: list[str] = []
    for node in sorted(host.dev.glob("video*"), key=lambda p: (len(p.name), p.name)):
        try:
            label = (host.sysfs / "class/video4linux" / node.name / "name").read_text(errors="replace").strip()
        except OSError:
            label = ""
        if label.startswith(_PI_INTERNAL_VIDEO):
            continue
        cameras.append(f"{node} ({label})" if label else str(node))
    if not cameras:
        return Check(
            "camera",
            False,
            "warning",
            f"no camera found (no camera among {host.dev}/video*). The table runs without one (no wager "
            "proposals or payout checks); to use one, plug in the overhead camera, check v4l2-ctl "
            "--list-devices and add a [camera] section (hardware/install.md).",
        )
    return Check("camera", True, "info", f"found {', '.join(cameras)}")


def _check_camera_health(state_dir: Path) -> Check | None:
    """What the running table last measured of its camera (controller/camera/feed.py writes it
    when a fault comes or goes): a soft lens, a shaking mount, a compressed stream, with the
    figures. None when no camera has reported to this state directory."""
    from controller.camera.feed import HEALTH_FILE

    path = state_dir / HEALTH_FILE
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return Check("camera health", False, "warning", f"{path}: cannot be read ({exc})")
    if not isinstance(record, dict) or not isinstance(record.get("faults"), list):
        return Check("camera health", False, "warning", f"{path}: not a camera health record (no faults list)")
    when = record.get("measured_at")
    stamp = (
        time.strftime("%Y-%m-%d %H:%M", time.localtime(when)) if isinstance(when, int | float) else "an unknown time"
    )
    figures = []
    if isinstance(record.get("blur_px"), int | float):
        figures.append(f"{record['blur_px']:.1f} px blur at the markers")
    if isinstance(record.get("shake_px"), int | float):
        figures.append(f"markers moving {record['shake_px']:.1f} px frame to frame")
    quality = record.get("jpeg_quality")
    figures.append(f"JPEG quality about {quality}" if isinstance(quality, int) else "no JPEG seen")
    measured = f"measured by the running table at {stamp}: {', '.join(figures)}"
    faults = [f for f in record["faults"] if isinstance(f, dict) and isinstance(f.get("words"), str)]
    if not faults:
        return Check("camera health", True, "info", measured)
    # the table runs (the reader says "unsure"), but the payout check is not there: fix it soon
    return Check("camera health", False, "warning", "; ".join(f["words"] for f in faults) + f" ({measured})")


# --- state directory, disk, journal --------------------------------------------------------


def _check_state_dir(state_dir: Path, for_service: bool) -> list[Check]:
    checks = [_state_dir_access(state_dir)]
    if for_service and state_dir.resolve() != SERVICE_STATE_DIR:
        checks.append(
            Check(
                "state directory",
                False,
                "warning",
                f"{state_dir} is not {SERVICE_STATE_DIR}: tablectl.service (ProtectSystem=strict) can only write "
                f'{SERVICE_STATE_DIR}, so its journal writes would fail. Use state.dir = "{SERVICE_STATE_DIR}", '
                f"or add ReadWritePaths={state_dir} to the service with systemctl edit tablectl.",
            )
        )
    return checks


def _state_dir_access(state_dir: Path) -> Check:
    if not state_dir.exists():
        return Check(
            "state directory",
            True,
            "info",
            f"{state_dir} does not exist yet: it is created at the first start (by StateDirectory= for the service)",
        )
    if not state_dir.is_dir():
        return Check("state directory", False, "error", f"{state_dir} is not a directory: move that file away.")
    if not os.access(state_dir, os.W_OK | os.X_OK):
        return Check(
            "state directory",
            False,
            "error",
            f"{state_dir}: this user cannot write here, so the journal cannot be written. "
            f"Run: sudo chown -R tablectl:tablectl {state_dir}",
        )
    return Check("state directory", True, "info", f"{state_dir} is writable")


def _check_disk(state_dir: Path, host: Host) -> Check:
    where = state_dir
    while not where.exists() and where != where.parent:
        where = where.parent
    free = host.free_bytes(where)
    text = f"{free // MB} MB free on the disk holding {state_dir}"
    if free < DISK_ERROR_BYTES:
        return Check(
            "disk space",
            False,
            "error",
            f"only {text}: the journal cannot grow and the table will stop. Free space (sudo apt clean; "
            "sudo journalctl --vacuum-size=50M) or move to a larger SD card.",
        )
    if free < DISK_WARNING_BYTES:
        return Check(
            "disk space",
            False,
            "warning",
            f"only {text}: free some space soon (sudo apt clean; sudo journalctl --vacuum-size=50M).",
        )
    return Check("disk space", True, "info", text)


def _check_journal(path: Path, live: bool = True) -> Check:
    """The full check; `live` is the table's own journal (with its head file), not a copy."""
    if not path.exists():
        return Check("journal", True, "info", f"no journal yet at {path}: the table creates it at its first start")
    # SQLite's WAL mode needs to write beside the file even to read it; without that it reports
    # "unable to open", which must not be mistaken for a damaged journal.
    if not (os.access(path, os.R_OK | os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)):
        return Check(
            "journal",
            False,
            "error",
            f"{path}: this user cannot open the journal to check it. Run doctor as the service's user: "
            "sudo -u tablectl /opt/tablectl/current/bin/tablectl doctor",
        )
    try:
        journal = Journal(path, require_head=live)
    except JournalCorrupt as exc:
        return Check(
            "journal",
            False,
            "error",
            f"{exc}. The table must not play on it: restore the journal from a good copy; never delete it "
            "(hardware/install.md, backing up the journal).",
        )
    try:
        entries = journal.check()  # the full check: SQLite's integrity, every entry, the hash chain
    except JournalCorrupt as exc:
        return Check("journal", False, "error", f"{exc}. The table must not play on it: restore a good copy.")
    finally:
        journal.close()
    return Check(
        "journal",
        True,
        "info",
        f"{path}: {entries} entries; integrity, checksums, sequence, hash chain "
        + ("and head file all pass" if live else "all pass (a copy: no head file beside it to compare)"),
    )


def _check_journal_size(path: Path, config: Any) -> Check:
    """What the journal and its archive take on disk, and how retention bounds it."""
    from controller.journal.log import journal_disk_usage

    if not path.exists():
        return Check("journal size", True, "info", "no journal yet")
    use = journal_disk_usage(path)
    days = config.retain_days if config is not None else 90.0
    archive = Path(config.archive_dir) if config is not None and config.archive_dir else path.parent / "archive"
    extra = "" if archive == path.parent / "archive" else f"; archive at {archive}"
    bound = (
        f"rounds older than {days:g} days are exported to the archive and leave the live journal "
        "(about 350 bytes an entry: some 7 MB a day at 21,000 entries a day)"
        if days > 0
        else "retention is off (state.retain_days = 0): the live journal grows with every round"
    )
    text = (
        f"live journal {use['database'] // MB} MB (+ {use['wal'] // 1024} KB WAL), archive "
        f"{use['archive'] // MB} MB{extra}; {bound}"
    )
    return Check("journal size", days > 0, "info" if days > 0 else "warning", text)


# --- API tokens ----------------------------------------------------------------------------


def _check_tokens(host: Host, simulated: bool) -> list[Check]:
    checks: list[Check] = []
    values: dict[str, str] = {}
    for role in ROLES:
        check, value = _check_token(role, host, simulated)
        checks.append(check)
        if value is not None:
            values[role] = value
    if values.get("dealer") is not None and values.get("dealer") == values.get("supervisor"):
        checks.append(
            Check(
                "API tokens",
                False,
                "error",
                "the dealer and supervisor tokens are the same, so a dealer could act as a supervisor: "
                "give each its own.",
            )
        )
    # The read-only surveillance role is optional: checked when its token is there.
    variable = "TABLECTL_SURVEILLANCE_TOKEN"
    credential = host.credentials_dir / "surveillance-token"
    if variable in host.environ or f"{variable}_FILE" in host.environ or credential.exists():
        check, value = _check_token("surveillance", host, simulated)
        checks.append(check)
        if value is not None and value in (values.get("dealer"), values.get("supervisor")):
            checks.append(
                Check("API tokens", False, "error", "the surveillance token is another role's: give it its own.")
            )
    else:
        checks.append(Check("surveillance token", True, "info", f"{variable} not set: nobody has that role"))
    return checks


def _check_token(role: str, host: Host, simulated: bool) -> tuple[Check, str | None]:
    name = f"{role} token"
    variable = f"TABLECTL_{role.upper()}_TOKEN"
    if variable in host.environ:
        return _token_strength(name, role, variable, host.environ[variable].strip())
    file_text = host.environ.get(f"{variable}_FILE")
    if file_text:
        return _token_file(name, role, Path(file_text), f"{variable}_FILE={file_text}")
    credential = host.credentials_dir / f"{role}-token"
    if credential.exists():
        return _token_file(name, role, credential, f"{credential} (loaded by tablectl.service)")
    if simulated:
        return Check(name, True, "info", f"{variable} not set: the simulated table makes a random one at start"), None
    return (
        Check(
            name,
            False,
            "error",
            f"no {role} token: a real table refuses to start without one. Create {credential} with "
            f"install -m 0400 (hardware/install.md), or set {variable}_FILE.",
        ),
        None,
    )


def _token_file(name: str, role: str, path: Path, where: str) -> tuple[Check, str | None]:
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError as exc:
        return Check(name, False, "error", f"{where}: the {role} token file cannot be found ({exc.strerror})."), None
    if mode & 0o077:
        return (
            Check(
                name,
                False,
                "error",
                f"{path} can be read or changed by other users (mode {mode:04o}): anyone on the Pi could take the "
                f"{role} token. Run: sudo chmod 0400 {path}",
            ),
            None,
        )
    try:
        value = path.read_text(encoding="utf-8").strip()
    except PermissionError:
        return (
            Check(
                name,
                True,
                "info",
                f"{where}: only its owner can read it (mode {mode:04o}); run doctor as root to check its length",
            ),
            None,
        )
    except (OSError, UnicodeDecodeError) as exc:
        return Check(name, False, "error", f"{where}: the {role} token file cannot be read ({exc})."), None
    return _token_strength(name, role, where, value)


def _token_strength(name: str, role: str, where: str, value: str) -> tuple[Check, str | None]:
    if len(value) < MIN_TOKEN_LENGTH:
        return (
            Check(
                name,
                False,
                "error",
                f"{where}: the {role} token has {len(value)} characters; use at least {MIN_TOKEN_LENGTH}, e.g. "
                "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'",
            ),
            value,
        )
    return Check(name, True, "info", f"{where}: set, {len(value)} characters"), value
