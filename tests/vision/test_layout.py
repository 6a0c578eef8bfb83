"""Layout files: the shipped Grand Slam layout, and refusals that name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.layout import LAYOUTS_DIR, Layout, LayoutError

SHIPPED = (LAYOUTS_DIR / "grand-slam-7.toml").read_text()


def test_the_grand_slam_layout_has_every_zone_of_every_seat(layout: Layout) -> None:
    spots = ["first", "second", "third", "home", "three_outs", "poker_bonus"]
    for seat in range(1, 8):
        for spot in spots:
            assert layout.zones[f"seat{seat}.{spot}"].kind == "wager"
            assert layout.zones[f"seat{seat}.{spot}.payout"].kind == "payout"
        assert layout.zones[f"seat{seat}.puck"].kind == "puck"
    assert len(layout.zones) == 7 * 13
    assert layout.pucks.ids["blind"] not in layout.markers
    assert len(layout.markers) >= 4


def test_a_layout_is_found_by_name_or_by_path(tmp_path: Path) -> None:
    copy = tmp_path / "copy.toml"
    copy.write_text(SHIPPED)
    assert Layout.load(copy).zones.keys() == Layout.load("grand-slam-7").zones.keys()


@pytest.mark.parametrize(
    ("old", "new", "key", "why"),
    [
        ('"seat3.first" = {', '"seat3.frist.x" = {', 'zones."seat3.frist.x"', "a zone name is"),
        (
            '"seat3.first" = { x = 580.0, y = 560.0',
            '"seat3.first" = { x = 640.0, y = 560.0',
            'zones."seat3.first.payout"',
            "too close to seat3.first",
        ),
        ('"seat2.home" = {', '"seat2.homeplate" = {', 'zones."seat2.home.payout"', "needs its wager zone seat2.home"),
        (
            "corners = [[20.0, 75.0], [80.0, 75.0]",
            "corners = [[20.0, 75.0], [90.0, 75.0]",
            "markers.marker[0].corners",
            "square",
        ),
        (
            "corners = [[20.0, 75.0], [80.0, 75.0], [80.0, 15.0], [20.0, 15.0]]",
            "corners = [[20.0, 15.0], [80.0, 15.0], [80.0, 75.0], [20.0, 75.0]]",
            "markers.marker[0].corners",
            "clockwise",
        ),
        ("blind = 40", "blind = 3", "pucks.blind", "calibration marker's"),
        ("blind = 40", "on_off = 41", "pucks.blind", "missing"),
        ('colour = "#7a2a8a"', 'colour = "#1f4e8c"', "chips", "500 chip's colour is too close to the felt"),
        ('colour = "#7a2a8a"', 'colour = "#1c1c1f"', "chips", "100 and 500 chips' colours are too close"),
        ("max_stack_chips = 20", "max_stack_chips = 0", "layout.max_stack_chips", "must be a whole number"),
        ('"seat1.first" = { x = 140.0', '"seat1.first" = { x = 10.0', 'zones."seat1.first"', "must lie on the felt"),
    ],
)
def test_a_bad_layout_is_refused_naming_file_and_key(tmp_path: Path, old: str, new: str, key: str, why: str) -> None:
    assert old in SHIPPED
    path = tmp_path / "bad.toml"
    path.write_text(SHIPPED.replace(old, new, 1))
    with pytest.raises(LayoutError) as refused:
        Layout.load(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: {key}")
    assert why in message


def test_a_file_that_is_not_toml_or_not_there_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("[layout\nname = 1")
    with pytest.raises(LayoutError, match="not valid TOML"):
        Layout.load(path)
    with pytest.raises(LayoutError, match="no such layout file"):
        Layout.load(tmp_path / "absent.toml")


def test_the_across_mount_gives_each_half_a_camera_facing_the_dealers_and_leaves_the_two_camera_mount_as_it_was() -> (
    None
):
    from vision.layout import MOUNTS, views_of

    two = MOUNTS["two-camera"]
    assert views_of(two) == {"grand-slam-7-left": ("left",), "grand-slam-7-right": ("right",)}
    assert [(p.position, p.look_at, p.hfov_deg) for p in two] == [
        ((470.0, -1000.0, 1600.0), (470.0, 500.0, 0.0), 44.0),
        ((1340.0, -1000.0, 1600.0), (1340.0, 500.0, 0.0), 44.0),
    ]
    across = MOUNTS["across"]
    assert views_of(across) == {
        "grand-slam-7-left": ("left", "left across"),
        "grand-slam-7-right": ("right", "right across"),
    }
    whole = Layout.load("grand-slam-7")
    for dealer, facing in zip(across[::2], across[1::2], strict=True):
        assert dealer in two and facing.layout == dealer.layout
        x, y, z = facing.position
        # over the players' side: 1000 mm beyond the felt's far edge, 1600 mm up, aimed at the same half
        assert (x, y - whole.depth_mm, z) == (dealer.position[0], 1000.0, 1600.0)
        assert facing.look_at == (dealer.look_at[0], whole.depth_mm - dealer.look_at[1], 0.0)
    # the same zone names in the two views' layout: the table joins them zone by zone
    for name in views_of(across):
        assert set(Layout.load(name).zones) <= set(whole.zones)
