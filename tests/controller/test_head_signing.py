"""The chain's head is signed at a round's end, in the dealer's paying time, never while a round
is dealt (issue 31: nothing here slows the card path; controller/app/daemon.py, HeadSigner)."""

from __future__ import annotations

import asyncio
import threading
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


class SlowKey:
    """The table's key, its signing held on a gate (to see the loop go on meanwhile), noting the
    thread each signature is made on."""

    def __init__(self) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.started = threading.Event()
        self.gate = threading.Event()
        self.threads: list[threading.Thread] = []

    def sign(self, data: bytes) -> bytes:
        self.threads.append(threading.current_thread())
        self.started.set()
        self.gate.wait(30)
        return self.key.sign(data)

    def public_key(self) -> Any:
        return self.key.public_key()


class HeadJournaled:
    """A listener: set once a chain-head entry is told."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def update(self, table: Table, entry: Any, effects: tuple[Any, ...]) -> None:
        if entry.kind == "chain-head":
            self.event.set()

    def redrive(self, table: Table) -> None:
        return


def test_the_signature_is_made_off_the_loop_which_goes_on_meanwhile_and_a_moved_chain_is_signed_again(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        table = Table(journal, game="grand-slam", rules={}, simulated=True)
        key = SlowKey()
        told = HeadJournaled()
        table.listeners.append(told)

        async def main() -> int:
            signer = HeadSigner(table, key, asyncio.get_running_loop())
            table.open_round(ROUND, by="dealer")
            table.void(by="supervisor", reason="misdeal")
            signer.sign()
            await asyncio.to_thread(key.started.wait, 30)
            # The worker signs (held); the loop journals an input meanwhile: the chain moves.
            moved = table.access("login", {"who": "supervisor", "ok": True})
            assert heads(table) == []
            key.gate.set()
            await told.event.wait()
            return moved.seq

        moved = asyncio.run(main())
        assert heads(table) == [moved], "the head signed before the chain moved was journaled"
        assert len(key.threads) == 2 and threading.main_thread() not in key.threads
        head = table.journal.last_of_kinds(("chain-head",), 1)[0]
        assert head.seq == moved + 1 and head.body["chain"] != ""
    finally:
        journal.close()
