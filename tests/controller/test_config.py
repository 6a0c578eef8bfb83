"""The table's TOML config: every refusal names the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.app.config import ConfigError, load


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_a_simulated_table_without_a_file_runs_on_defaults() -> None:
    config = load(None, simulated=True)
    assert config.source.startswith("built-in defaults") and config.game == "grand-slam" and config.camera is None


def test_a_full_config_is_read(tmp_path: Path) -> None:
    config = load(
        write(
            tmp_path,
            '[table]\nid = "GS-07"\ngame = "jokers-22"\n[rules]\ndecks = 8\n[shoe]\nurl = "/dev/ttyUSB0"\n'
            '[display]\nurl = "/dev/ttyUSB1"\ndialect = "dmd"\n[http]\nport = 8080\n[camera]\ndevice = 0\n'
            'calibration = "/var/lib/tablectl/camera.json"\nfps = 5\n',
        ),
        simulated=False,
    )
    assert (config.table_id, config.game, config.rules, config.http.port) == ("GS-07", "jokers-22", {"decks": 8}, 8080)
    assert config.camera is not None and config.camera.backend == "opencv" and config.camera.fps == 5


@pytest.mark.parametrize(
    ("text", "simulated", "says"),
    [
        ('[table]\ngame = "blackjack"\n', True, "table.game: must be one of baseball-poker, grand-slam, jokers-22"),
        ("[shoe]\nbaudrate = 1234\n", True, "shoe.baudrate: must be one of"),
        ("[shoe]\nspeed = 1\n", True, "shoe.speed: unknown key"),
        ("[lights]\non = true\n", True, "lights: unknown section"),
        ("[http]\nport = 70000\n", True, "http.port: must be a whole number from 1 to 65535"),
        ('[table]\nid = "x"\n', False, "shoe.url: a real table needs the shoe's serial port"),
        (
            '[camera]\nbackend = "simulated"\n[shoe]\nurl = "/dev/a"\n[display]\nurl = "/dev/b"\n',
            False,
            "camera.backend: a live table needs a real camera",
        ),
        (
            '[camera]\nbackend = "opencv"\ndevice = 0\n',
            True,
            "camera.calibration: a real camera needs its calibration file",
        ),
        ("[camera]\ndevice = -3\n", True, "camera.device"),
        ("[camera]\nfps = 100\n", True, "camera.fps: must be a number from 0.2 to 30"),
        ("this is = not toml [", True, "not valid TOML"),
    ],
)
def test_refusals_name_the_file_and_the_key(tmp_path: Path, text: str, simulated: bool, says: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path, simulated=simulated)
    assert str(info.value).startswith(f"{path}: ") and says in str(info.value), str(info.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such configuration file"):
        load(tmp_path / "nope.toml", simulated=True)
