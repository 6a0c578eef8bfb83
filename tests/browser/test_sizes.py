"""Sizes at arm's length (issue 30, item 9): the dealer screen at 1280x800 in Chromium, in each game
and at each step of a round (wagers being placed, cards being dealt, a player deciding, the
settlement or showdown, the payouts being made, and the next round's panel with the last round
still on the felt), measured in the DOM:

- every card rank shown is 14 px or more: its computed font size as drawn (an SVG drawing's
  scale included) and its rendered box, and nothing of another card over it;
- no label is clipped: every piece of text shown lies inside the window and inside the drawing
  it belongs to, clear of the header and the SIMULATED banner, is what the browser finds at its
  centre and both ends (nothing drawn over it), and no box cuts its text off (scrollWidth and
  scrollHeight within clientWidth and clientHeight where the box hides its overflow).

The event log keeps its newest line whole; older lines give way at the bottom of the column. The
screen is measured at rest, as the dealer reads it once a card has landed: with the browser's
"reduce motion" (nothing glides; the prompt must still be fitted to its box) and every animation
ended."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from controller.testing import DEALER, Daemon

from .conftest import ARTIFACTS, Screens

MIN_RANK_PX = 14.0

# Run in the page: what is too small or clipped on the dealer screen as it stands now.
MEASURE = r"""async (minRank) => {
  // At rest: the card just read has landed (with reduced motion each animation ends at once).
  await Promise.all(document.getAnimations().map((a) => a.finished.catch(() => null)));
  const problems = [];
  const ranks = [];
  const vw = window.innerWidth, vh = window.innerHeight;
  const shown = (el) => {
    if (!el.getClientRects().length) return false;
    for (let e = el; e && e.nodeType === 1; e = e.parentElement || e.parentNode) {
      const cs = getComputedStyle(e);
      if (cs.display === "none" || cs.visibility === "hidden" || Number(cs.opacity) === 0) return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const name = (el) => {
    const id = el.id ? `#${el.id}` : "";
    const cls = (el.getAttribute("class") || "").trim().split(/\s+/).filter(Boolean).map((c) => `.${c}`).join("");
    const where = el.closest("[data-seat], [data-spot]");
    const at = where ? ` in ${where.dataset.seat ? "seat " + where.dataset.seat : "spot " + where.dataset.spot}` : "";
    return `${el.tagName.toLowerCase()}${id}${cls}${at} "${(el.textContent || "").trim().slice(0, 40)}"`;
  };
  const fmt = (r) => `[${r.left.toFixed(0)},${r.top.toFixed(0)} ${r.width.toFixed(0)}x${r.height.toFixed(0)}]`;
  const meets = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  const scaleOf = (el) => {
    if (!(el instanceof SVGGraphicsElement)) return 1;
    const m = el.getScreenCTM();
    return m ? Math.hypot(m.a, m.b) : 1;
  };
  // A shape one sees through (no fill, or a faint tint such as a frame round the hand to play).
  const seeThrough = (e) => {
    if (!(e instanceof SVGGeometryElement)) return false;
    const cs = getComputedStyle(e);
    if (cs.fill === "none") return true;
    const tint = cs.fill.match(/^rgba\([^)]*,\s*([\d.]+)\)$/);
    return (tint ? Number(tint[1]) : 1) * Number(cs.fillOpacity) * Number(cs.opacity) <= 0.35;
  };
  // What shows at a point over `el` instead of it (null when `el` does), with its own
  // "pointer-events: none" lifted so that the browser finds it.
  const hit = (el, x, y) => {
    const before = el.style.pointerEvents;
    el.style.pointerEvents = "auto";
    const found = document.elementsFromPoint(x, y);
    el.style.pointerEvents = before;
    for (const f of found) {
      if (f === el || el.contains(f)) return null;
      if (!seeThrough(f)) return f;
    }
    return document.documentElement;
  };

  // --- card ranks ----------------------------------------------------------------------------------
  for (const rank of document.querySelectorAll(".card .rank, .mini-card .mini-rank, .mini-card .corner-rank, .read-card .corner-rank")) {
    if (!shown(rank) || !(rank.textContent || "").trim()) continue;
    const px = parseFloat(getComputedStyle(rank).fontSize) * scaleOf(rank);
    const box = rank.getBoundingClientRect();
    ranks.push(px);
    if (px < minRank - 0.05) problems.push(`rank ${name(rank)} is ${px.toFixed(1)} px`);
    if (box.height < minRank - 0.05) problems.push(`rank ${name(rank)} is drawn ${box.height.toFixed(1)} px tall ${fmt(box)}`);
    const card = rank.closest(".card, .mini-card, .read-card");
    const over = hit(rank, box.left + box.width / 2, box.top + box.height / 2);
    if (over && !card.contains(over)) problems.push(`rank ${name(rank)} is covered by ${name(over)} ${fmt(box)}`);
  }

  // --- labels --------------------------------------------------------------------------------------
  const header = document.querySelector("header.bar");
  const banner = document.getElementById("simulated-banner");
  const tops = [header, banner].filter((e) => e && shown(e));
  const skip = "script, style, title, option, select, tspan, #event-log li:not(:first-child), #event-log li:not(:first-child) *";
  const labels = [...document.querySelectorAll("body *")].filter((el) => {
    if (el.matches(skip)) return false;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const svgText = el instanceof SVGTextElement && (el.textContent || "").trim();
    return (own || svgText) && shown(el);
  });
  for (const el of labels) {
    const r = el.getBoundingClientRect();
    if (r.left < -1 || r.top < -1 || r.right > vw + 1 || r.bottom > vh + 1) {
      problems.push(`label ${name(el)} leaves the window ${fmt(r)}`);
      continue;
    }
    for (const top of tops) {
      if (!top.contains(el) && meets(r, top.getBoundingClientRect())) problems.push(`label ${name(el)} runs under ${name(top)} ${fmt(r)}`);
    }
    const svg = el instanceof SVGElement ? el.ownerSVGElement : null;
    if (svg && !inside(r, svg.getBoundingClientRect())) {
      problems.push(`label ${name(el)} is cut by the edge of the drawing ${fmt(r)} in ${fmt(svg.getBoundingClientRect())}`);
      continue;
    }
    let cut = null;
    for (let a = el.parentElement; a && a !== document.body && !cut; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (a instanceof HTMLElement && (cs.overflowX !== "visible" || cs.overflowY !== "visible") && !inside(r, a.getBoundingClientRect())) cut = a;
    }
    if (cut) {
      problems.push(`label ${name(el)} is cut by the edge of ${name(cut)} ${fmt(r)} in ${fmt(cut.getBoundingClientRect())}`);
      continue;
    }
    const y = r.top + r.height / 2;
    const inset = Math.min(4, r.width / 4);
    for (const x of [r.left + inset, r.left + r.width / 2, r.right - inset]) {
      const over = hit(el, x, y);
      if (over) {
        problems.push(`label ${name(el)} is covered by ${name(over)} at ${x.toFixed(0)},${y.toFixed(0)} ${fmt(r)}`);
        break;
      }
    }
    if (!svg) {
      const cs = getComputedStyle(el);
      const clipsX = cs.overflowX !== "visible", clipsY = cs.overflowY !== "visible";
      if ((clipsX && el.scrollWidth > el.clientWidth + 1) || (clipsY && el.scrollHeight > el.clientHeight + 1)) {
        problems.push(`label ${name(el)} is cut off: ${el.scrollWidth}x${el.scrollHeight} in ${el.clientWidth}x${el.clientHeight} at ${cs.fontSize}`);
      }
    }
  }
  return { problems, ranks: ranks.length, smallest: ranks.length ? Math.min(...ranks) : null, labels: labels.length };
}"""

SYMBOLS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}
CARD_NOTATION = re.compile(r"\b(?:10|[2-9TJQKA])[CDHS]\b")


def in_words(text: str) -> str:
    """A sentence from the table as the screens write it (cards as 5♦, 10♥)."""
    return CARD_NOTATION.sub(lambda m: f"{'10' if m[0][0] in 'T1' else m[0][0]}{SYMBOLS[m[0][-1]]}", text)


@dataclass
class Measured:
    phase: str
    problems: list[str]
    ranks: int
    smallest: float | None


class Table:
    """The dealer screen of one simulated table, its round driven through the API (the screen follows
    the live feed), measured at each step."""

    def __init__(self, daemon: Daemon, page: Page, game: str) -> None:
        self.daemon = daemon
        self.page = page
        self.game = game
        self.measured: list[Measured] = []

    def caught_up(self) -> dict[str, Any]:
        """The table's state, once the screen shows it (its prompt, round and last card)."""
        state: dict[str, Any] = self.daemon.get("/api/state", token=DEALER)  # as the dealer sees it
        page = self.page
        expect(page.locator("#prompt")).to_have_text(in_words(state["prompt"]))
        if state["round"]:
            expect(page.locator("#round-info")).to_have_text(f"Round {state['round']} \u00b7 {state['round_status']}")
        if CARD_NOTATION.fullmatch(state["last_card"] or ""):  # not "face-down card"
            expect(page.locator(f'#last-card .card[data-card="{state["last_card"]}"]')).to_have_count(1)
        return state

    def measure(self, phase: str) -> None:
        self.caught_up()
        result = self.page.evaluate(MEASURE, MIN_RANK_PX)
        self.measured.append(Measured(phase, result["problems"], result["ranks"], result["smallest"]))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / f"sizes-{self.game}-{len(self.measured):02d}-{phase.replace(' ', '-')}.png"
        self.page.screenshot(path=str(shot), animations="disabled")

    def draw(self, count: int = 1) -> dict[str, Any]:
        """Pull `count` cards from the simulated shoe, each read and journaled before the next."""
        state: dict[str, Any] = {}
        for _ in range(count):
            seq = self.daemon.get("/api/state")["journal_seq"]
            status, said = self.daemon.post("/api/sim/draw", {"count": 1})
            assert status == 200, said
            state = self.daemon.wait_for("the card read", lambda s, seq=seq: s["journal_seq"] > seq)
        return state

    def decide(self, body: dict[str, Any]) -> None:
        self.daemon.wait_for("the table to ask a decision", lambda s: s["awaiting"]["kind"] == "decision")
        status, said = self.daemon.post("/api/decisions", body)
        assert status == 200, said

    def pay_out(self) -> None:
        """Measure each payout step the prompt walks through, confirming each, until the next round."""
        for _ in range(20):
            state = self.caught_up()
            if not re.match(r"(Pay|Take|Push|Return)\b", state["prompt"]):
                break
            self.measure(f"paying: {state['prompt']}")
            seq = state["journal_seq"]
            status, said = self.daemon.post("/api/confirm", {})
            assert status == 200, said
            self.daemon.wait_for("the confirm", lambda s, seq=seq: s["journal_seq"] > seq)
        self.measure("next round, the last one on the felt")


# --- the three games' rounds -------------------------------------------------------------------------

GRAND_SLAM = """
[table]
id = "SIZES-GS"
"""
# Every seat bets the three bases; seats 1 and 7 (the arc's two ends, nearest the rail) get a 4 on
# first base, a Grand Slam, so their GRAND SLAM label stands above them into the next round.
GS_SEATS = [{"seat": s, "wagers": {"first": 25, "second": 25, "third": 25}} for s in range(1, 8)]
GS_SHOE = ["4H", "6C", "TD", "8S", "KC", "7H", "4S"] + ["2D", "9C", "5S", "TC", "3H", "8D", "QC", "JS", "6H", "9D"] * 3


def grand_slam(table: Table) -> None:
    table.measure("wagers being placed")
    status, said = table.daemon.post("/api/rounds", {"seats": GS_SEATS})
    assert status == 201, said
    assert table.daemon.post("/api/sim/shoe", {"cards": GS_SHOE})[0] == 200
    table.draw(3)
    table.measure("dealing")
    for _ in range(60):
        if table.caught_up()["awaiting"]["kind"] != "card":
            break
        table.draw()
    table.measure("settled")
    table.pay_out()


JOKERS_22 = """
[table]
id = "SIZES-J22"
game = "jokers-22"
"""
# As tests/browser/test_jokers22_screen.py deals it: ann splits 8s on spot 1, bob doubles on 11 on
# spot 2; the banker makes 24 and every player wins.
J22_ROUND = {
    "banker": {"stake": 500},
    "spots": [
        {"spot": 1, "wagers": [{"player": "ann", "amount": 50}]},
        {"spot": 2, "wagers": [{"player": "bob", "amount": 20}]},
    ],
}
J22_SHOE = ["8H", "5C", "9S", "8D", "6D", "2C", "TC", "3H", "KD", "9H", "7C", "8S"]


def jokers_22(table: Table) -> None:
    table.measure("wagers being placed")
    status, said = table.daemon.post("/api/rounds", J22_ROUND)
    assert status == 201, said
    assert table.daemon.post("/api/sim/shoe", {"cards": J22_SHOE})[0] == 200
    table.draw(3)
    table.measure("dealing")
    table.draw(2)
    table.measure("a player deciding")
    table.decide({"spot": 1, "action": "split"})
    table.draw(4)
    table.decide({"spot": 2, "action": "double"})
    table.draw(3)
    table.daemon.wait_for("round 1 to settle", lambda s: s["round_status"] == "settled")
    table.measure("settled")
    table.pay_out()


BASEBALL_POKER = """
[table]
id = "SIZES-BB"
game = "baseball-poker"
[rules]
ante = 1
small_bet = 2
big_bet = 4
"""
# As tests/browser/test_baseball_screen.py plays it: a rainout on 4th street, a re-deal, seat 4 all
# in with two wild cards, a side pot, seat 2 folding, and a showdown of best fives.
BB_PLAYERS = [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}, {"seat": 4, "stack": 12}]
BB_SHOE = ["TS", "JC", "8C", "5D", "6S", "AD", "JS", "5S", "TH", "8D", "QS"]
BB_SHOE += ["KD", "8H", "9C", "KC", "7S", "5H", "6C", "TD", "3H", "7D", "2C", "7H"]
BB_SHOE += ["AC", "QD", "6H", "AH", "5C", "2D", "KH", "KS"]
BB_STEPS: list[Any] = [
    7, "dealing", 2, "a player deciding", [(2, "bring-in"), (4, "call"), (1, "call")], 2, "after a rainout",
    9, [(4, "bring-in"), (1, "complete"), (2, "raise"), (4, "call"), (1, "call")],
    3, [(4, "bring-in"), (1, "call"), (2, "call")],
    3, [(4, "complete"), (1, "raise"), (2, "call")],
    3, "6th street", [(1, "complete"), (2, "fold")],
    2,
]  # fmt: skip


def baseball_poker(table: Table) -> None:
    table.measure("players being seated")
    status, said = table.daemon.post("/api/rounds", {"players": BB_PLAYERS})
    assert status == 201, said
    assert table.daemon.post("/api/sim/shoe", {"cards": BB_SHOE})[0] == 200
    for step in BB_STEPS:
        if isinstance(step, int):
            table.draw(step)
        elif isinstance(step, str):
            table.measure(step)
        else:
            for seat, action in step:
                table.decide({"seat": seat, "action": action})
    table.daemon.wait_for("the hand to settle", lambda s: s["round_status"] == "settled")
    table.measure("showdown")
    table.pay_out()


GAMES: dict[str, tuple[str, Callable[[Table], None]]] = {
    "grand-slam": (GRAND_SLAM, grand_slam),
    "jokers-22": (JOKERS_22, jokers_22),
    "baseball-poker": (BASEBALL_POKER, baseball_poker),
}


@pytest.fixture(params=list(GAMES))
def game(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def daemon(tmp_path: Path, game: str) -> Iterator[Daemon]:
    """The conftest's simulated table, playing `game` (overrides its `daemon`)."""
    yield from Daemon(tmp_path, GAMES[game][0]).serve()


def test_every_card_rank_is_14_px_or_more_and_no_label_is_clipped_at_every_step_of_a_round(
    game: str, daemon: Daemon, screens: Screens
) -> None:
    dealer = screens.open("/", "dealer")
    page = dealer.page
    # Measured at rest, as the dealer reads it once a card has landed and the chips have moved.
    page.emulate_media(reduced_motion="reduce")
    screens.login(dealer, DEALER)
    table = Table(daemon, page, game)
    GAMES[game][1](table)

    phases = [m.phase for m in table.measured]
    assert any(p.startswith("paying") for p in phases), phases
    problems = [f"{m.phase}: {p}" for m in table.measured for p in m.problems]
    assert not problems, "\n".join(problems)
    # The cards were there to be measured: the card just read from the first card on, and the
    # round's cards on the felt at its end.
    assert all(m.ranks > 0 for m in table.measured[1:]), [(m.phase, m.ranks) for m in table.measured]
