"""The chain's head is signed at a round's end, in the dealer's paying time, never while a round
is dealt (issue 31: nothing here slows the card path; controller/app/daemon.py, HeadSigner)."""

from __future__ import annotations

from pathlib import Path

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
