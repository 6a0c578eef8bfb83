"""The lamps' view in the table's state (`devices.lamps`, what the dealer screen's lamp panel shows)
says what the lamps mean after every change, as it was made afresh each time; while nothing changed
it is the same document (controller/app/daemon.py's `_LampsView`: the live feed's snapshot asks
for it after every entry)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.app.daemon import _lamps_json, _LampsView
from drivers.indicators import BaseIndicators
from drivers.pins import load_pin_map, make_pin_factory

SEVEN = load_pin_map(name="seven-seat-595")


@pytest.fixture
def lamps() -> Iterator[BaseIndicators]:
    with BaseIndicators.from_pin_map(SEVEN, pin_factory=make_pin_factory(simulated=True), run_blinker=False) as made:
        yield made


def test_the_lamps_view_follows_every_change_and_is_made_again_only_then(lamps: BaseIndicators) -> None:
    view = _LampsView(lamps, [8])

    def fresh() -> dict[str, object]:
        return _lamps_json(lamps.snapshot()) | {"unwired_seats": [8]}

    first = view()
    assert first == fresh() == {"wagers": [], "next_card": None, "fault": False, "unwired_seats": [8]}
    assert view() is first  # nothing changed: the same document
    steps = [
        lambda: lamps.show_wager("seat3.first"),
        lambda: lamps.show_wager("seat1.second"),
        lambda: lamps.next_card("seat3.first"),
        lambda: lamps.next_card("seat1.second"),
        lambda: lamps.fault(),
        lambda: lamps.clear_fault(),
        lambda: lamps.remove_wager("seat3.first"),
        lambda: lamps.clear(),
    ]
    seen = [first]
    for step in steps:
        step()
        now = view()
        assert now == fresh()
        assert now != seen[-1]  # each step changed what the lamps mean, and the view says so
        assert view() is now
        seen.append(now)
    assert seen[3]["next_card"] == "3:first" and seen[2]["wagers"] == ["1:second", "3:first"]
    assert seen[5]["fault"] is True and seen[6]["fault"] is False
