"""The chain's head is signed at a round's end, in the dealer's paying time, never while a round
is dealt (issue 31: nothing here slows the card path; controller/app/daemon.py, HeadSigner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.app.daemon import HeadSigner
from controller.journal.log import Journal
from controller.table import Table

ROUND = {"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}


def heads(table: Table) -> list[int]:
    """The seq each chain-head entry signed."""
    return [int(e.body["seq"]) for e in table.journal.last_of_kinds(("chain-head",), 100)]


def test_a_round_opened_before_the_last_ones_head_was_signed_has_it_signed_at_its_own_end(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        table = Table(journal, game="grand-slam", rules={}, simulated=True)
        signer = HeadSigner(table, Ed25519PrivateKey.generate(), None)
        table.open_round(ROUND, by="dealer")
        table.void(by="supervisor", reason="misdeal")
        first_end = journal.last_seq
        table.open_round(ROUND, by="dealer")  # before the signer's timer (SIGN_AFTER_S) came
        signer.sign()
        assert heads(table) == [], "signed while a round was dealt"
        table.void(by="supervisor", reason="misdeal")
        signer.sign()  # the second round's end: one head, after both rounds
        assert heads(table) == [journal.last_seq - 1] and journal.last_seq - 1 > first_end
        signer.sign()  # between rounds: the head as it stands
        assert heads(table) == [first_end + 2, first_end + 3]
    finally:
        journal.close()


class Told:
    """An output that notes every entry it is told of."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def update(self, table: Table, entry: Any, effects: tuple[Any, ...]) -> None:
        self.kinds.append(entry.kind)

    def redrive(self, table: Table) -> None:
        return


def test_a_signed_head_changes_no_lamp_or_pole_display_and_the_screens_get_only_the_journals_new_head(
    tmp_path: Path,
) -> None:
    from controller.api.side import table_side

    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        lamps = Told()
        table = Table(journal, game="grand-slam", rules={}, simulated=True, outputs=[lamps])
        sent: list[Any] = []
        gate = table_side(table, None, deliver=lambda tick, message: sent.append(message[0]))
        assert gate.commands.feed is not None
        gate.commands.feed.count = 1  # a screen listens
        signer = HeadSigner(table, Ed25519PrivateKey.generate(), None)
        table.open_round(ROUND, by="dealer")
        table.void(by="supervisor", reason="misdeal")
        before = gate.describe(table)
        signer.sign()
        assert heads(table) == [journal.last_seq - 1]
        assert lamps.kinds == ["round-open", "void"], "the lamps or the pole display were told of the signed head"
        assert sent[-1]["kind"] == "chain-head"
        assert sent[-1]["changes"] == [[["journal_seq"], journal.last_seq]]
        after = gate.describe(table)
        assert after == {**before, "journal_seq": journal.last_seq}
        table.open_round(ROUND, by="dealer")  # the next entry that shows something is told as before
        assert lamps.kinds[-1] == "round-open" and gate.describe(table)["round_status"] == "open"
    finally:
        journal.close()
