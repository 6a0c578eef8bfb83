"""The CLI contract: render a scene, read the frame back, get the scene's values."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from vision import cli

SCENE = {
    "zones": {"seat1.first": [25, 25, 25, 25], "seat5.second": [500, 500, 500], "seat6.poker_bonus": [5] * 20},
    "pucks": {"blind": "seat3.puck"},
    "noise": 2.0,
    "blur": 0.3,
    "seed": 7,
}


def call(add: object, run: object, argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add(parser)  # type: ignore[operator]
    return run(parser.parse_args(argv))  # type: ignore[operator, no-any-return]


def test_render_then_read_gives_back_the_scenes_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene, frame = tmp_path / "scene.json", tmp_path / "frame.png"
    scene.write_text(json.dumps(SCENE))
    assert call(cli.add_render_arguments, cli.run_render, [str(scene), str(frame)]) == 0
    assert call(cli.add_read_arguments, cli.run_read, [str(frame)]) == 0  # calibrates from the same frame
    out = json.loads(capsys.readouterr().out)
    assert out["zones"]["seat1.first"]["value"] == 100
    assert out["zones"]["seat5.second"]["stacks"] == [{"chips": [500, 500, 500], "count": 3, "value": 1500}]
    assert out["zones"]["seat6.poker_bonus"]["value"] == 100
    assert out["zones"]["seat2.third"]["value"] == 0
    assert out["pucks"] == {"blind": "seat3.puck"}
    assert out["blocked"] == [] and out["camera"]["bumped"] is False


def test_calibrate_writes_the_calibration_and_the_annotated_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scene, frame, camera = tmp_path / "scene.json", tmp_path / "frame.png", tmp_path / "camera.json"
    scene.write_text(json.dumps({"zones": {}}))
    call(cli.add_render_arguments, cli.run_render, [str(scene), str(frame), "--camera-out", str(camera)])
    cal, annotated = tmp_path / "cal.json", tmp_path / "zones.png"
    argv = [str(frame), "--out", str(cal), "--annotated", str(annotated), "--camera", str(camera)]
    assert call(cli.add_calibrate_arguments, cli.run_calibrate, argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["reprojection_error_mm"] < 1.0
    assert cal.is_file() and annotated.is_file()
    assert call(cli.add_read_arguments, cli.run_read, [str(frame), "--calibration", str(cal)]) == 0
    assert json.loads(capsys.readouterr().out)["zones"]["seat4.first"]["value"] == 0


@pytest.fixture(scope="module")
def table_frame(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("frame")
    scene, frame = folder / "scene.json", folder / "frame.png"
    scene.write_text("{}")
    assert call(cli.add_render_arguments, cli.run_render, [str(scene), str(frame)]) == 0
    return frame


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["absent.png"], "absent.png: no such image file"),
        (["NOT_AN_IMAGE"], "not an image OpenCV can read"),
        (["FRAME", "--layout", "no-such-layout"], "no such layout file"),
        (["FRAME", "--calibration", "absent.json"], "no such calibration file"),
    ],
)
def test_read_refuses_bad_input_with_one_line_and_exit_2(
    tmp_path: Path, table_frame: Path, capsys: pytest.CaptureFixture[str], argv: list[str], why: str
) -> None:
    not_an_image = tmp_path / "scene.png"
    not_an_image.write_text("hello")
    argv = [{"NOT_AN_IMAGE": str(not_an_image), "FRAME": str(table_frame)}.get(a, a) for a in argv]
    assert call(cli.add_read_arguments, cli.run_read, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tablectl vision read: ") and why in err and err.count("\n") == 1


def test_render_refuses_a_scene_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scene = tmp_path / "scene.json"
    scene.write_text(json.dumps({"zones": {"seat3.first": [25, "red"]}}))
    assert call(cli.add_render_arguments, cli.run_render, [str(scene), str(tmp_path / "x.png")]) == 2
    assert "zones.seat3.first: must be a list of chip values" in capsys.readouterr().err
