"""A dealer's down as it happens on the screens (Chromium at 1280x800, the daemon as a process):
the supervisor types the dealer list on the supervisor screen; the dealer screen, logged in
with the dealer token, asks the dealer to sign in by itself, refuses an id not on the list in
words, takes the dealer's own id however it is cased and says who is dealing; the round then
dealt is that dealer's in the supervisor's Dealers table and its down; the supervisor opens a
rating session with a player id typed into the rating slip (Enter, as a barcode scanner ends a
scan) and it shows in the ratings."""

from __future__ import annotations

from playwright.sync_api import expect

from controller.analytics.edges import edges_for
from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import Screens

ROUND_BODY = {"seats": [{"seat": 2, "wagers": {"first": 10, "second": 5}}]}


def test_a_dealer_signs_in_and_deals_their_down(daemon: Daemon, screens: Screens) -> None:
    # The house edges the panel rates with, worked out once into the table's state directory as
    # the first rating would (seconds of CPU: not what this test is about).
    edges_for("grand-slam", {}, cache_dir=daemon.state_dir)
    sup = screens.open("/supervisor", "supervisor")
    screens.login(sup, SUPERVISOR)
    s = sup.page
    s.fill("#dealer-list", "A17 Ann Lee\nB22 Bo Chen")
    s.click("#dealer-list-save")
    expect(s.locator("#dealer-list-done")).to_have_text("Dealer list saved: 2 dealers")

    dealer = screens.open("/", "dealer")
    dealer.expected.append(r"status of 422 .*/api/dealers/sign-in")  # the wrong id, below
    screens.login(dealer, DEALER)
    d = dealer.page
    expect(d.locator("#dealer-dialog")).to_be_visible()  # nobody is signed in: the screen asks
    expect(d.locator("#dealer-on")).to_have_text("No dealer signed in")
    d.fill("#dealer-code", "Z99")
    d.press("#dealer-code", "Enter")
    expect(d.locator("#dealer-error")).to_contain_text("'Z99' is not on this table's dealer list")
    expect(d.locator("#dealer-dialog")).to_be_visible()
    d.fill("#dealer-code", "a17")
    d.click("#dealer-submit")
    expect(d.locator("#dealer-dialog")).to_be_hidden()
    expect(d.locator("#dealer-on")).to_have_attribute("data-dealer", "A17")
    expect(d.locator("#dealer-on")).to_have_text("Dealer A17 \u00b7 Ann Lee")

    daemon.deal(ROUND_BODY, ["5H", "2C", "9S"])
    assert daemon.post("/api/confirm", {})[0] == 200
    s.click("#pace-refresh")
    row = s.locator('#dealer-figures tbody tr[data-dealer="A17"]')
    expect(row.locator('[data-key="rounds"]')).to_have_text("1")
    expect(row.locator('[data-key="name"]')).to_have_text("Ann Lee")
    expect(s.locator('#downs tbody tr[data-dealer="A17"] [data-key="rounds"]')).to_have_text("1")
    expect(s.locator("#dealer-on-duty")).to_contain_text("On now: A17 (Ann Lee)")

    s.fill("#slip-place", "2")
    s.fill("#slip-player", "P-1001")
    s.press("#slip-player", "Enter")
    expect(s.locator("#slip-done")).to_have_text("Place 2: session opened for P-1001")
    expect(s.locator('#ratings tbody tr[data-place="2"]').filter(has_text="P-1001")).to_have_count(1)
