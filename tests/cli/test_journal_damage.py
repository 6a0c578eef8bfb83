"""A damaged journal file is a fault in one plain line, never a traceback (issue 28, point 5).

A real journal is made by dealing rounds through the table (with one round left open, so its
entries are still in the -wal, as a power cut leaves them); then bytes are flipped and files cut
short at seeded random places. For each case `tablectl journal verify` and `tablectl recall` (run
in-process, through the command line's own entry function) and the table's start-up either answer
exactly what they answer on the undamaged journal, or exit 78 with one line on stderr naming the
file and what to do. No case may end in a traceback, exit 1, a different answer, or a changed file.
A few cases go through `tablectl run` itself in a subprocess.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from controller.cli.main import main
from controller.cli.synth import synthesize
from controller.engine.cards import parse_card
from controller.journal.log import Journal, JournalCorrupt
from controller.table import Table
from controller.testing import free_port

FILES = ("journal.sqlite3", "journal.sqlite3-wal", "journal.head")
TOKENS = {"TABLECTL_DEALER_TOKEN": "d" * 24, "TABLECTL_SUPERVISOR_TOKEN": "s" * 24}


@dataclass
class Outcome:
    code: int
    out: str
    err: str


def tablectl(*argv: str) -> Outcome:
    """`tablectl ARGV` in this process: its exit code, standard output and standard error. Any
    exception other than SystemExit escapes, so a traceback fails the test."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Outcome(code, out.getvalue(), err.getvalue())


def commands(state: Path) -> dict[str, list[str]]:
    where = ["--sim", "--state-dir", str(state)]
    return {
        "verify": ["journal", "verify", *where],
        "recall": ["recall", "--json", "--last", "100", *where],
        "recall-open": ["recall", "--json", "--round", "13", *where],
    }


def writers(state: Path) -> dict[str, list[str]]:
    """The journal commands that write to a journal that passes its checks."""
    where = ["--sim", "--state-dir", str(state)]
    return {
        "rebuild": ["journal", "rebuild", *where],
        "retain": ["journal", "retain", "--days", "0.0001", *where],
        "accept-loss": ["journal", "accept-loss", "--by", "pit boss", "--reason", "test", *where],
    }


def files(state: Path) -> dict[str, bytes | None]:
    return {name: (state / name).read_bytes() if (state / name).exists() else None for name in FILES}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal of 12 dealt rounds and a 13th left open (its entries only in the -wal), copied as a
    power cut would leave it: the database, its -wal and the head file."""
    live = tmp_path_factory.mktemp("live")
    journal = synthesize(live, 12, seed=11, durable=True)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 10, "second": 10}}]}, by="dealer")
    table.card(parse_card("5H"), {"via": "shoe", "session": 99, "seq": 1})
    copy = tmp_path_factory.mktemp("journal")
    for name in FILES:
        shutil.copyfile(live / name, copy / name)
    journal.close()
    assert (copy / "journal.sqlite3-wal").stat().st_size > 0  # the open round is in the -wal
    return copy


@pytest.fixture(scope="module")
def expected(made: Path) -> dict[str, Any]:
    """What each command answers on the undamaged journal, and the state the table starts in."""
    answers = {name: tablectl(*argv) for name, argv in commands(made).items()}
    assert all(a.code == 0 for a in answers.values()), answers
    assert "hash chain, head file and snapshots all pass" in answers["verify"].out
    assert json.loads(answers["recall-open"].out)[0]["status"] == "open"  # round 13, from the -wal
    scratch = made.parent / "scratch"
    shutil.copytree(made, scratch)
    journal = Journal(scratch / "journal.sqlite3")
    state = Table(journal, game="grand-slam", rules={}, simulated=True).snapshot_state()
    journal.close()
    return {"answers": answers, "state": state}


def assert_damage_said(outcome: Outcome, state: Path, what: str) -> None:
    lines = outcome.err.strip().splitlines()
    assert outcome.code == 78, (what, outcome)
    assert len(lines) == 1 and "Traceback" not in outcome.err, (what, outcome.err)
    assert str(state / "journal.sqlite3") in lines[0] or str(state / "journal.head") in lines[0], (what, lines)
    assert "What to do" in lines[0] or "tablectl journal rebuild" in lines[0], (what, lines)


def damage(rng: random.Random, state: Path) -> str:
    """One seeded damage: a flipped bit or a cut, mostly in the database, sometimes in the -wal or
    the head file."""
    roll = rng.random()
    name = FILES[0] if roll < 0.8 else FILES[1] if roll < 0.95 else FILES[2]
    path = state / name
    data = bytearray(path.read_bytes())
    where = rng.randrange(len(data))
    if rng.random() < 0.15:
        path.write_bytes(bytes(data[:where]))
        return f"{name} cut to {where} bytes"
    bit = rng.randrange(8)
    data[where] ^= 1 << bit
    path.write_bytes(bytes(data))
    return f"{name} byte {where} bit {bit} flipped"


def test_a_damaged_journal_is_a_fault_in_one_line_or_the_right_answer_never_a_traceback(
    made: Path, expected: dict[str, Any], tmp_path: Path
) -> None:
    rng = random.Random(2028)
    said = answered = 0
    for case in range(120):
        state = tmp_path / f"case-{case}"
        shutil.copytree(made, state)
        what = damage(rng, state)
        before = files(state)
        for name, argv in commands(state).items():
            outcome = tablectl(*argv)
            if outcome.code == 0:
                right = expected["answers"][name].out.replace(str(made), str(state))
                assert outcome.out == right, f"{what}: {name} answered differently on a damaged journal"
                answered += 1
            else:
                assert_damage_said(outcome, state, f"{what}: {name}")
                said += 1
            assert files(state) == before, f"{what}: {name} changed the journal's files"
        # The table's own start-up (tablectl run): the state the undamaged journal gives, or refused
        # as damaged with nothing written.
        try:
            journal = Journal(state / "journal.sqlite3")
        except JournalCorrupt as exc:
            assert str(state) in str(exc), (what, exc)
            assert files(state) == before, f"{what}: start-up changed the journal's files"
            said += 1
        else:
            try:
                table = Table(journal, game="grand-slam", rules={}, simulated=True)
                assert table.snapshot_state() == expected["state"], f"{what}: the table started in another state"
                answered += 1
            except JournalCorrupt as exc:
                assert str(state) in str(exc), (what, exc)
                said += 1
            finally:
                journal.close()
        shutil.rmtree(state)
    assert said > 50 and answered > 50  # both outcomes were exercised


def another_journals_wal(tmp_path: Path, state: Path) -> None:
    other = tmp_path / "other"
    journal = synthesize(other, 3, seed=5, durable=True)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    table.open_round({"seats": [{"seat": 2, "wagers": {"first": 5, "second": 5}}]}, by="dealer")
    for suffix in ("-wal", "-shm"):
        shutil.copyfile(other / f"journal.sqlite3{suffix}", state / f"journal.sqlite3{suffix}")
    journal.close()


def foreign_sqlite(state: Path) -> None:
    (state / "journal.sqlite3").unlink()
    (state / "journal.sqlite3-wal").unlink()
    db = sqlite3.connect(state / "journal.sqlite3")
    db.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    db.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
    db.commit()
    db.close()


DAMAGES = {
    "cut to 32768 bytes (issue 28)": lambda tmp, state: (state / "journal.sqlite3").write_bytes(
        (state / "journal.sqlite3").read_bytes()[:32768]
    ),
    "empty": lambda tmp, state: (state / "journal.sqlite3").write_bytes(b""),
    "not a SQLite file": lambda tmp, state: (state / "journal.sqlite3").write_text("[table]\ngame = 'grand-slam'\n"),
    "another program's SQLite database": lambda tmp, state: foreign_sqlite(state),
    "another journal's -wal and -shm": another_journals_wal,
}


@pytest.mark.parametrize("how", list(DAMAGES))
def test_each_kind_of_damaged_file_is_refused_by_every_command_and_left_as_it_is(
    made: Path, tmp_path: Path, how: str
) -> None:
    state = tmp_path / "state"
    shutil.copytree(made, state)
    DAMAGES[how](tmp_path, state)
    before = files(state)
    for name, argv in {**commands(state), **writers(state)}.items():
        assert_damage_said(tablectl(*argv), state, f"{how}: {name}")
        assert files(state) == before, f"{how}: {name} changed the journal's files"
    address = f"127.0.0.1:{free_port()}"
    run = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--sim", "--state-dir", str(state), "--http", address],
        capture_output=True,
        text=True,
        env={**TOKENS, "PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
        timeout=60,
        check=False,
    )
    assert_damage_said(Outcome(run.returncode, run.stdout, run.stderr), state, f"{how}: run")
    assert "cannot start" in run.stderr
    assert files(state) == before  # nothing written, the -wal neither merged nor deleted
