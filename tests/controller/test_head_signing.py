"""The chain's head is signed at a round's end, in the dealer's paying time, never while a round
is dealt (issue 31: nothing here slows the card path; controller/app/daemon.py, HeadSigner)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.app.config import parse
from controller.app.daemon import Daemon as TableDaemon
from controller.app.daemon import HeadSigner
from controller.journal.log import Journal
from controller.table import Table
from controller.testing import PATIENCE_S
from drivers.shoe.events import CardRead

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


def test_a_card_waiting_on_the_loop_when_the_signature_comes_back_is_journaled_before_the_signed_head(
    tmp_path: Path,
) -> None:
    """The shoe's thread hands a dead card (on the loop's queue, then counted handed, as the
    daemon's shoe thread does) just as the worker's signature comes back, so that the card is
    queued behind the signer's callback: the card is journaled first (it does not wait for the
    head's commit), and the head journaled after it signs the chain with the card in it."""
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        table = Table(journal, game="grand-slam", rules={}, simulated=True)
        key = SlowKey()
        told = HeadJournaled()
        table.listeners.append(told)
        shoe = {"handed": 0, "taken": 0}
        workers = Recording(1)

        async def main() -> int:
            loop = asyncio.get_running_loop()
            loop.set_default_executor(workers)
            signer = HeadSigner(table, key, loop, waiting=lambda: shoe["handed"] > shoe["taken"])
            table.open_round(ROUND, by="dealer")
            table.void(by="supervisor", reason="misdeal")
            card = next(iter(table.shoe.remaining_cards()))
            signer.sign()
            dealt: asyncio.Future[int] = loop.create_future()

            def take() -> None:  # the card, on the loop, as the daemon takes the shoe's event
                shoe["taken"] += 1
                dealt.set_result(table.card(card, {"via": "test shoe"}).seq)

            def hand() -> None:  # runs right after the signature is back on the loop (the turn before the signer's)
                loop.call_soon(take)
                shoe["handed"] += 1

            def busy() -> None:  # the loop at work as the worker's signature comes back
                assert key.started.wait(30)
                (signing,) = workers.futures
                back = threading.Event()
                signing.add_done_callback(lambda _: back.set())  # after asyncio's: posted to the loop
                key.gate.set()
                assert back.wait(30)
                loop.call_soon(hand)

            loop.call_soon(busy)
            card_seq = await dealt
            await told.event.wait()
            return card_seq

        card_seq = asyncio.run(main())
        head = table.journal.last_of_kinds(("chain-head",), 1)[0]
        assert head.seq == card_seq + 1, "the signed head was journaled before the card that waited"
        assert heads(table) == [card_seq], "the head journaled does not sign the chain with the card in it"
    finally:
        journal.close()


class Recording(ThreadPoolExecutor):
    """The loop's default executor, keeping each job's future (to know when a signature is back)."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers)
        self.futures: list[Future[Any]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future


def test_the_daemon_counts_a_card_of_the_shoes_as_waiting_from_its_hand_over_until_the_loop_takes_it(
    tmp_path: Path,
) -> None:
    """What the signer asks (HeadSigner.waiting): the daemon's shoe thread counts a card handed
    before it is on the loop's queue, and the loop counts it taken when it runs it."""
    config = parse({}, "the test's", simulated=True)
    daemon = TableDaemon(config, simulated=True, state_dir=tmp_path, host="127.0.0.1", port=0)
    daemon.table = table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={}, simulated=True)
    try:
        card = next(iter(table.shoe.remaining_cards()))

        async def main() -> tuple[bool, bool]:
            daemon.loop = loop = asyncio.get_running_loop()
            before = daemon._shoe_waiting()

            def busy() -> None:  # the loop at work (as with a head's commit) as the shoe hands a card
                deadline = time.monotonic() + PATIENCE_S
                while not daemon._shoe_waiting():  # the card handed, behind this on the loop's queue
                    assert time.monotonic() < deadline, "a card handed by the shoe's thread is not seen waiting"
                    time.sleep(0.001)

            loop.call_soon(busy)
            await asyncio.to_thread(daemon._from_shoe_thread, CardRead(card, 1, 1, b"\x10" + str(card).encode()))
            return before, daemon._shoe_waiting()

        assert asyncio.run(main()) == (False, False)  # nothing waits before, nor once it is taken
        assert table.journal.last_of_kinds(("card",), 1)[0].body["card"] == str(card)
    finally:
        table.journal.close()
