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
        ('[camera]\nfresh_frames = "yes"\n', True, "camera.fresh_frames"),
        (
            '[camera]\nbackend = "opencv"\ndevice = 0\ncalibration = "c.json"\nfresh_frames = true\n',
            True,
            "camera.fresh_frames: only the simulated camera makes its frames, not opencv",
        ),
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


#: A table.toml with every section, a [floor] and a camera; its state directory is {state}.
EVERY_SECTION = (
    '[table]\nid = "GS-07"\ngame = "jokers-22"\nseats = 6\n[rules]\ndecks = 8\n[shoe]\nurl = "/dev/ttyUSB0"\n'
    'heartbeat_timeout = 2\n[display]\nurl = "/dev/ttyUSB1"\ndialect = "dmd"\n[indicators]\npin_map = "seven-seat-595"\n'
    '[http]\nport = 8080\ntrusted_proxies = ["10.0.0.5"]\n[camera]\ndevice = 0\n'
    'calibration = "/var/lib/tablectl/camera.json"\nfps = 5\n[security]\nverify_every = 12\n'
    '[floor]\nbroker = "mqtts://floor.lan"\nsite = "main-floor"\npit = "pit-3"\nkeepalive = 60\n'
    '[state]\ndir = "{state}"\nretain_days = 30\n'
)


def test_the_form_the_daemon_kept_reads_as_the_file_does_and_only_for_its_bytes_and_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`remember_checked` (the daemon, at start) keeps what table.toml reads as in the state
    directory; `load` then gives the same configuration without the file's models, for exactly
    those bytes and that code, and still checks what the models cannot say. Anything else is read
    by the models again."""
    import controller.app.config as config

    state = tmp_path / "state"
    state.mkdir()
    path = write(tmp_path, EVERY_SECTION.format(state=state))
    fresh = load(path, simulated=False)
    no_shoe = tmp_path / "no-shoe.toml"
    no_shoe.write_text(EVERY_SECTION.format(state=state).replace('url = "/dev/ttyUSB0"\n', ""))
    with pytest.raises(ConfigError, match=r"shoe\.url: a real table needs"):
        load(no_shoe, simulated=False)
    assert config.remember_checked(no_shoe, state)

    def models(*_: object, **__: object) -> None:
        raise AssertionError("read by the models")

    monkeypatch.setattr(config, "parse", models)
    with pytest.raises(ConfigError, match=r"shoe\.url: a real table needs"):  # a live table: checked on the kept form
        load(no_shoe, simulated=False)
    with pytest.raises(AssertionError, match="read by the models"):  # kept for another file
        load(path, simulated=False)
    monkeypatch.undo()
    assert config.remember_checked(path, state)
    monkeypatch.setattr(config, "parse", models)
    assert load(path, simulated=False) == fresh  # from the kept form, [floor] and camera too
    kept = state / config.CHECKED_FILE
    text = kept.read_text()
    kept.write_text(text.replace('"code": "', '"code": "0'))  # another version of the code kept it
    with pytest.raises(AssertionError, match="read by the models"):
        load(path, simulated=False)
    kept.write_text(text)
    path.write_text(EVERY_SECTION.format(state=state).replace("GS-07", "GS-08"))  # the file edited since
    with pytest.raises(AssertionError, match="read by the models"):
        load(path, simulated=False)


def test_a_daemon_started_again_on_the_same_file_keeps_its_form_without_the_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`remember_checked` at each start: the file's models read it only when the kept form is not of
    these very bytes and this code (a first start, the file edited, another version), and the kept
    form then reads as the file does; the same file again is not read by the models at all."""
    import controller.app.config as config
    import vision.documents

    state = tmp_path / "state"
    state.mkdir()
    path = write(tmp_path, EVERY_SECTION.format(state=state))
    fresh = load(path, simulated=False)
    assert config.remember_checked(path, state)
    kept = (state / config.CHECKED_FILE).read_text()

    def models(*_: object, **__: object) -> None:
        raise AssertionError("read by the models")

    monkeypatch.setattr(vision.documents, "check", models)
    assert config.remember_checked(path, state)  # started again: nothing to check
    assert (state / config.CHECKED_FILE).read_text() == kept
    assert load(path, simulated=False) == fresh
    path.write_text(EVERY_SECTION.format(state=state).replace("GS-07", "GS-08"))  # edited since
    with pytest.raises(AssertionError, match="read by the models"):
        config.remember_checked(path, state)
    (state / config.CHECKED_FILE).write_text(kept.replace('"code": "', '"code": "0'))  # another version kept it
    path.write_text(EVERY_SECTION.format(state=state))
    with pytest.raises(AssertionError, match="read by the models"):
        config.remember_checked(path, state)
    monkeypatch.undo()
    path.write_text(EVERY_SECTION.format(state=state).replace("port = 8080", "port = 70000"))
    with pytest.raises(ConfigError, match=r"http\.port: must be a whole number from 1 to 65535"):
        load(path, simulated=False)  # a bad file still gives the error naming the key
    assert not config.remember_checked(path, state)


def test_a_file_the_models_refuse_or_json_cannot_keep_leaves_no_form(tmp_path: Path) -> None:
    import controller.app.config as config

    state = tmp_path / "state"
    state.mkdir()
    for text in ("[http]\nport = 70000\n", "[rules]\nopened = 2026-12-02T10:00:00Z\n"):
        assert not config.remember_checked(write(tmp_path, f'[state]\ndir = "{state}"\n' + text), state)
        assert not (state / config.CHECKED_FILE).exists()
