"""What the program reads at run time is package data found through importlib.resources (so a
wheel installed anywhere has it), and an operator's own files still override it by path.
`.ci/wheel-check` proves the same from a wheel installed outside the checkout."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from controller.api.app import STATIC
from drivers.pins import DEFAULT_PIN_FILE, load_pin_map
from vision.layout import LAYOUTS_DIR, Layout, resolve_layout_path


def test_the_pin_maps_layouts_and_screens_are_package_data() -> None:
    assert Path(str(resources.files("hardware").joinpath("pins.toml"))) == DEFAULT_PIN_FILE
    assert Path(str(resources.files("hardware").joinpath("layouts"))) == LAYOUTS_DIR
    assert Path(str(resources.files("controller.api").joinpath("static"))) == STATIC
    assert (STATIC / "dealer.html").is_file() and (STATIC / "supervisor.html").is_file()
    assert load_pin_map(DEFAULT_PIN_FILE, "small-gpio").seats
    assert Layout.load("grand-slam-7").name


def test_an_operators_own_files_override_the_shipped_ones_by_path(tmp_path: Path) -> None:
    own_pins = tmp_path / "pins.toml"
    own_pins.write_text(DEFAULT_PIN_FILE.read_text(encoding="utf-8").replace("[small-gpio", "[our-wiring"), encoding="utf-8")
    assert load_pin_map(own_pins, "our-wiring").source.startswith(str(own_pins))
    own_layout = tmp_path / "felt.toml"
    own_layout.write_text((LAYOUTS_DIR / "grand-slam-7.toml").read_text(encoding="utf-8"), encoding="utf-8")
    assert resolve_layout_path(own_layout) == own_layout
    assert resolve_layout_path("grand-slam-7") == LAYOUTS_DIR / "grand-slam-7.toml"
