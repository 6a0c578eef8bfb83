"""The game adapter is real: a fourth game ("high card", the distribution
`tests/fixtures/high_card_game/`) installed beside tablectl and found by its `tablectl.games`
entry point alone, never named in the product's code, settles round files through `tablectl
replay` and plays on a simulated table: rounds open, cards arrive over the simulated shoe's pty,
the lamps and the pole display follow, and rounds settle."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.testing import TABLECTL, Daemon
from tests.hil.conftest import display_text, drain
from tests.installed import HIGH_CARD, install, on_path

ROOT = Path(__file__).resolve().parents[2]

ROUND = {
    "game": "high-card",
    "rules": {},
    "wagers": [{"seat": 2, "amount": 10}, {"seat": 5, "amount": 25}],
    "cards": ["KH", "4C", "9S"],
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory the fourth game's distribution is installed into (once for this file)."""
    return install(HIGH_CARD, tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="module")
def env(site: Path) -> dict[str, str]:
    """What a subprocess needs to find the fourth game: its installed directory on the path."""
    return on_path(site)


def _tablectl(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TABLECTL, *args], input=stdin, capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT)


def test_the_product_never_names_the_fourth_game() -> None:
    """No code outside the game's distribution knows it (only docs mention the fixture): its own
    entry point is the one place that names it."""
    hits = subprocess.run(
        ["git", "grep", "-l", "-e", "high-card", "-e", "HighCard", "-e", "tests.games", "--", "*.py", "*.js", "*.html", "*.toml", ":!tests"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert hits.returncode == 1 and hits.stdout == "", hits.stdout


def test_tablectl_replay_settles_a_high_card_round_file(env: dict[str, str]) -> None:
    out = _tablectl(env, "replay", "-", stdin=json.dumps(ROUND))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "game": "high-card",
        "dealer": "9S",
        "seats": [
            {"seat": 2, "card": "KH", "amount": 10, "result": "won", "paid": 10, "net": 10},
            {"seat": 5, "card": "4C", "amount": 25, "result": "lost", "paid": 0, "net": -25},
        ],
    }


def test_tablectl_replay_refuses_a_bad_high_card_round_file_in_one_line(env: dict[str, str]) -> None:
    bad = {**ROUND, "wagers": [{"seat": 9, "amount": 10}]}
    out = _tablectl(env, "replay", "-", stdin=json.dumps(bad))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "tablectl: refused: wagers[0].seat: seat 9: the table has seats 1 to 7"
    short = {**ROUND, "cards": ["KH"]}
    out = _tablectl(env, "replay", "-", stdin=json.dumps(short))
    assert out.returncode == 2
    assert "seat 5" in out.stderr and "another card" in out.stderr, out.stderr


def test_a_simulated_high_card_table_deals_and_settles_rounds_over_the_pty(
    tmp_path: Path, pty_display: tuple[int, str], env: dict[str, str]
) -> None:
    master, path = pty_display
    config = f'[table]\nid = "HC-1"\ngame = "high-card"\n[display]\nurl = "{path}"\ndialect = "cd5220"\n'
    config += '[indicators]\npin_map = "small-gpio"\n'
    daemon = Daemon(tmp_path, config, args=("--demo", "--demo-interval", "0.02"), env=env)
    daemon.start()
    wire = b""

    def settled(answer: dict[str, Any]) -> bool:
        nonlocal wire
        wire += drain(master)
        return sum(1 for r in answer["rounds"] if r["status"] == "settled") >= 3

    try:
        rounds = daemon.wait_for("three settled rounds", settled, timeout=60, path="/api/rounds?last=20")["rounds"]
        files = {r["round"]: daemon.get(f"/api/rounds/{r['round']}/file") for r in rounds if r["status"] == "settled"}
        pins = daemon.get("/api/sim/pins")["pins"]
        state = daemon.get("/api/state")
        wire += drain(master)
    finally:
        assert daemon.stop() == 0, daemon.log()
    assert state["game"] == "high-card" and state["game_info"]["title"] == "High card"
    for record in rounds:
        if record["status"] != "settled":
            continue
        assert len(record["cards"]) == len(record["settlement"]["seats"]) + 1
        out = _tablectl(env, "replay", "-", stdin=json.dumps(files[record["round"]]))
        assert out.returncode == 0 and json.loads(out.stdout) == record["settlement"], out.stderr
    with sqlite3.connect(daemon.state_dir / "journal.sqlite3") as db:
        sources = [json.loads(b)["source"] for (b,) in db.execute("SELECT body FROM entries WHERE kind = 'card'")]
    assert sources and all(s["via"] == "shoe" for s in sources)
    # The lamps: the seat whose card is next blinks its first lamp, so some lamp's mock pin was
    # switched on (at demo speed three rounds can settle within one blink, so a whole on-off
    # cycle is not asked for).
    assert any(any(state for _, state in history[1:]) for history in pins.values()), pins
    shown = display_text(wire)
    assert "DEAL SEAT" in shown and "DEAL THE DEALER" in shown, shown[:400]


def test_an_unknown_game_is_refused_naming_the_games(tmp_path: Path) -> None:
    """Without its distribution installed, the fourth game is unknown: the refusal names the games
    that are (tablectl's own, found by their entry points)."""
    out = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", "-"],
        input=json.dumps(ROUND),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "tablectl: refused: game: unknown game 'high-card'; the games are baseball-poker, grand-slam, jokers-22"
    ), out.stderr


@pytest.fixture
def pty_display() -> Any:
    master, slave = os.openpty()
    os.set_blocking(master, False)
    yield master, os.ttyname(slave)
    os.close(master)
    os.close(slave)


def test_tablectl_analyze_high_card_through_the_analysis_interface(env: dict[str, str]) -> None:
    """The fourth game's exact figures and its Monte Carlo, from its folder's analysis alone: the
    shared command finds them through the adapter, which is the only place that names them."""
    exact = _tablectl(env, "analyze", "high-card", "--json")
    assert exact.returncode == 0, exact.stderr
    doc = json.loads(exact.stdout)
    # Even money against the dealer's card: no edge; a push when the dealer's card has the
    # seat's rank: 23 of the 311 cards left in six decks.
    assert (doc["game"], doc["method"], doc["push"]) == ("high-card", "exact", "23/311")
    assert doc["wagers"]["high card"]["house_edge"] == "0"
    simulated = _tablectl(env, "analyze", "high-card", "--monte-carlo", "--rounds", "3000", "--seed", "4", "--json")
    assert simulated.returncode == 0, simulated.stderr
    figures = json.loads(simulated.stdout)
    wager = figures["wagers"]["high card"]
    assert wager["rounds"] == 3000 and abs(wager["house_edge"]) < 4 * wager["ci95"] / 1.96
    pushes = figures["distribution"]["high card"]["0"]
    assert abs(pushes - 23 / 311) < 4 * (23 / 311 * 288 / 311 / 3000) ** 0.5
    text = _tablectl(env, "analyze", "high-card")
    assert text.stdout.splitlines() == [
        "high-card (exact, 6 decks)",
        "  high card            house edge 0 = 0.0000%   sd per round 0.9623",
    ]


def test_a_game_without_an_analysis_is_refused_in_one_line_naming_it(tmp_path: Path, site: Path) -> None:
    """A fifth game (high card's rules and adapter under another name, in a distribution of its
    own) whose adapter gives no analysis: `tablectl analyze` refuses it in one line, naming it and
    the games it does analyse."""
    package = tmp_path / "plain_card"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rules.py").write_text(
        "from high_card.rules import HighCard\n\n\nclass PlainCard(HighCard):\n    name = 'plain-card'\n\n\n"
        "GAME = PlainCard()\n"
    )
    (package / "adapter.py").write_text(
        "from high_card.adapter import HighCardAdapter\n\nfrom .rules import GAME\n\n\n"
        "class PlainCardAdapter(HighCardAdapter):\n    name = 'plain-card'\n    title = 'Plain card'\n\n"
        "    def analysis(self):\n        return None\n\n\nADAPTER = PlainCardAdapter(GAME)\n"
    )
    info = tmp_path / "plain_card-1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plain-card\nVersion: 1\n")
    (info / "entry_points.txt").write_text("[tablectl.games]\nplain-card = plain_card\n")
    env = {**os.environ, **on_path(tmp_path, site)}
    for args in ([], ["--monte-carlo", "--rounds", "10"]):
        out = subprocess.run(
            [*TABLECTL, "analyze", "plain-card", *args], capture_output=True, text=True, env=env, cwd=ROOT
        )
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.strip().splitlines() == [
            "tablectl: refused: plain-card: Plain card has no analysis; "
            "tablectl analyze runs for baseball-poker, grand-slam, jokers-22, high-card"
        ]


def test_tablectl_recall_prints_a_high_card_round_in_its_adapters_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site: Path, env: dict[str, str]
) -> None:
    """`tablectl recall` asks the game's adapter for a round's lines: it no longer reads Grand
    Slam's settlement keys into every game's rounds (a high card round made it fail)."""
    from controller.engine.cards import parse_card
    from controller.journal.log import Journal
    from controller.table import Table

    monkeypatch.syspath_prepend(str(site))
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="high-card", rules={}, simulated=True)
    table.open_round({"wagers": [{"seat": 2, "amount": 10}, {"seat": 5, "amount": 25}]}, by="dealer")
    for card in ("KH", "4C", "9S"):
        table.card(parse_card(card), {"via": "test"})
    table.journal.close()
    out = _tablectl(env, "recall", "--sim", "--game", "high-card", "--state-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:] == [
        "  payouts: due (not confirmed yet)",  # the last round, its payouts not confirmed
        "  seat 2: won +10, card KH",
        "  seat 5: lost -25, card 4C",
    ]
    assert out.stdout.startswith("round 1  settled")


def test_a_game_from_elsewhere_gets_the_shared_round_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, site: Path
) -> None:
    """High card's rules are tablectl's `RoundGame` (controller/games/round_game.py) with its own
    hooks, as a shipped game's are: a card nobody is owed is ruled dead in the same words, an
    opening while a round is dealt, a void without who and why and an event it does not know are
    refused as a shipped game refuses them."""
    from controller.engine import get_game
    from controller.engine.base import RuleError, VoidRound
    from controller.engine.cards import parse_card
    from controller.games.jokers22.rules import Decision
    from controller.journal.log import Journal
    from controller.table import Table
    from controller.table.view import prompt

    monkeypatch.syspath_prepend(str(site))
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="high-card", rules={}, simulated=True)
    table.open_round({"wagers": [{"seat": 2, "amount": 10}]}, by="dealer")
    for card in ("KH", "9S", "5D"):
        table.card(parse_card(card), {"via": "test"})
    assert table.meters.dead_cards == 1 and table.state.dead_cards == (parse_card("5D"),)
    assert prompt(table).startswith("Dead card 5D (no seat is owed a card: the round is settled): set it aside.")
    table.journal.close()

    game = get_game("high-card")
    opening = game.parse_round_file({**ROUND, "cards": []}).open
    dealing, _ = game.apply(game.initial(), opening)
    for event, says in [
        (opening, "round: a round is already being dealt; settle or void it first"),
        (VoidRound(by=" ", reason="spilt drink"), "void: voiding a round needs who voids it and why"),
        (Decision(spot=2, action="hit"), "event: High card has no event 'jokers-22.decision'"),
    ]:
        with pytest.raises(RuleError) as refused:
            game.apply(dealing, event)
        assert str(refused.value) == says
