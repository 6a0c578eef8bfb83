"""A camera layout's name and zoned seats read without vision (controller/camera/plain.py), held to
`vision.layout.Layout.load` on every shipped layout and every table size; a layout that is not
plainly right is left to `Layout.load` (None), never read otherwise than it reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.camera.plain import read_plainly
from hardware import shipped
from vision.layout import Layout, LayoutError

SHIPPED = sorted(p.stem for p in shipped("layouts").glob("*.toml"))


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_layout_reads_plainly_as_vision_reads_it(name: str) -> None:
    plain, layout = read_plainly(name), Layout.load(name)
    assert plain is not None
    assert (plain.name, plain.source) == (layout.name, layout.source)
    for seats in range(1, 10):
        assert plain.seats_without_zones(seats) == layout.seats_without_zones(seats), seats


def test_a_layout_given_by_path_reads_the_same_and_one_missing_seats_says_which(tmp_path: Path) -> None:
    text = shipped("layouts", "grand-slam-7.toml").read_text()
    cut = tmp_path / "six.toml"
    cut.write_text("\n".join(line for line in text.splitlines() if not line.startswith('"seat7.')) + "\n")
    plain, layout = read_plainly(cut), Layout.load(cut)
    assert plain is not None and plain.source == layout.source == str(cut)
    assert plain.seats_without_zones(7) == layout.seats_without_zones(7) == [7]


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t.replace('"seat1.home" =', '"seat0.home" ='),  # a zone name vision refuses
        lambda t: t.replace('name = "grand-slam-7"', "name = 7"),
        lambda t: t.replace("[zones]", "[zones_]"),
        lambda t: t + "\n[zones\n",  # not TOML
    ],
)
def test_a_layout_not_plainly_right_is_left_to_vision(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "damaged.toml"
    path.write_text(damage(shipped("layouts", "grand-slam-7.toml").read_text()))  # type: ignore[operator]
    assert read_plainly(path) is None
    with pytest.raises(LayoutError):
        Layout.load(path)


def test_a_missing_layout_is_left_to_vision_which_names_it(tmp_path: Path) -> None:
    assert read_plainly(tmp_path / "none.toml") is None
    with pytest.raises(LayoutError, match="no such layout file"):
        Layout.load(tmp_path / "none.toml")
