"""What the browser holds and shows around logging in: a token goes to the server and nowhere
else (not the URL, not web storage, not a script-readable cookie), a wrong token and a dealer's
token on the supervisor screen are refused in plain words, and the Content-Security-Policy is in
force (the rig's violation watch sees an injected inline script refused)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from controller.testing import DEALER, SUPERVISOR, Daemon

from .conftest import Screens

WRONG = "not-the-token-0123456789"


def storage(page: Page) -> str:
    """Everything the page can read back later: web storage and script-visible cookies."""
    return str(
        page.evaluate(
            "JSON.stringify({local: {...localStorage}, session: {...sessionStorage}, cookie: document.cookie})"
        )
    )


def test_a_token_is_posted_once_and_kept_nowhere_the_page_can_read(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    dealer.expected.append(r"status of 401 .*/api/login")  # the wrong token's refusal
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#login-heading")).to_have_text("Dealer login")

    page.fill("#token", WRONG)
    page.locator("#login-form button[type=submit]").click()
    expect(page.locator("#login-error")).to_have_text("the token is not valid for this table")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#token")).to_have_value("")

    screens.login(dealer, DEALER)
    expect(page.locator("#token")).to_have_value("")
    assert page.url == f"{daemon.url}/"
    kept = storage(page)
    assert DEALER not in kept and WRONG not in kept and "tablectl_session" not in kept, kept
    (session,) = [c for c in page.context.cookies() if c["name"] == "tablectl_session"]
    assert session["httpOnly"] is True and session["sameSite"] == "Strict"
    assert DEALER not in session["value"]
    # The screen works on the session: a dealer's action goes through.
    expect(page.locator("#wager-panel")).to_be_visible()
    page.locator('#wager-rows input[data-seat="2"][data-bet="first"]').fill("5")
    page.click("#open-round")
    expect(page.locator("#prompt")).to_have_text("Deal to seat 2, first base")


def test_the_supervisor_screen_refuses_the_dealer_token(daemon: Daemon, screens: Screens) -> None:
    supervisor = screens.open("/supervisor", "supervisor")
    page = supervisor.page
    expect(page.locator("#login-heading")).to_have_text("Supervisor login")
    page.fill("#token", DEALER)
    page.press("#token", "Enter")
    expect(page.locator("#login-error")).to_have_text(
        "This screen needs the supervisor's token, or surveillance's to watch (the dealer's token opens the dealer screen)."
    )
    expect(page.locator("#login")).to_be_visible()
    # The dealer's session is ended at once, not left behind on the supervisor's screen.
    assert page.context.request.get(f"{daemon.url}/api/whoami").json() == {"role": None}
    assert page.context.request.get(f"{daemon.url}/api/audit").status == 401
    expect(page.locator("#audit tbody tr")).to_have_count(0)

    screens.login(supervisor, SUPERVISOR)
    assert page.url == f"{daemon.url}/supervisor"
    kept = storage(page)
    assert SUPERVISOR not in kept and DEALER not in kept, kept
    # Now the audit trail shows, with the dealer's login among the entries.
    expect(page.locator("#audit tbody tr", has_text="dealer at 127.0.0.1")).to_have_count(1)
    expect(page.locator("#config dd").first).to_be_visible()


def test_the_screens_policy_refuses_inline_script_and_the_rig_sees_it(daemon: Daemon, screens: Screens) -> None:
    dealer = screens.open("/", "dealer")
    screens.login(dealer, DEALER)
    assert dealer.csp_violations == []  # the screen's own scripts and styles break no rule
    dealer.expected.append(r"^Executing inline script violates .*directive .script-src")  # Chromium's own report
    directive = dealer.page.evaluate(
        """() => new Promise((resolve) => {
          document.addEventListener("securitypolicyviolation", (e) => resolve(e.violatedDirective), {once: true});
          const s = document.createElement("script");
          s.textContent = "window.inlineRan = true";
          document.body.append(s);
        })"""
    )
    assert str(directive).startswith("script-src")
    assert dealer.page.evaluate("window.inlineRan === undefined") is True
    # The rig's watch (which fails every other test on a violation) saw this one.
    assert len(dealer.csp_violations) == 1 and dealer.csp_violations[0].startswith("script-src"), dealer.csp_violations
    dealer.csp_violations.clear()
