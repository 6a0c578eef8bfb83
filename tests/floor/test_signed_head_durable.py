"""A signed chain head is committed without its own fsync (issue 31: its commit is off the card
path's way between rounds) and reaches the floor only once it is on disk: a power cut before then
takes it back, and the floor must never have seen an entry the table could write again."""

from __future__ import annotations

import threading
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.adapters.floor.publisher import MARK_KEY, FloorPublisher
from controller.journal.log import utc_now
from controller.security.chainhead import sign_head

from .conftest import WAIT_S, Mosquitto, Subscriber, deal_rounds, entries_taken, floor_config, make_table


def test_a_signed_head_not_yet_on_disk_is_not_sent_to_the_floor_until_it_is(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    table = make_table(tmp_path)
    journal = table.journal
    asked: list[tuple[int, int]] = []  # (the journal's last entry, what is on disk) each time the pump asks
    changed = threading.Condition()

    def durable() -> int:
        seq = journal.durable_seq
        with changed:
            asked.append((journal.last_seq, seq))
            changed.notify_all()
        return seq

    publisher = FloorPublisher(
        floor_config(mosquitto.broker),
        journal.path,
        table_id=table.table_id,
        game=table.game_name,
        rules=table.rules_doc,
        mark=lambda seq: journal.set_meta(MARK_KEY, str(seq)),
        meta=journal.set_meta,
        reconnect_max_s=1,
        durable=durable,
    )
    table.listeners.append(publisher)
    journal.durable_watchers.append(lambda seq: publisher.redrive(table))  # as the daemon wires it
    subscriber = Subscriber(mosquitto.broker).start()
    publisher.start()
    try:
        deal_rounds(table, 1)
        before = journal.last_seq
        assert publisher.wait_acked(before, WAIT_S)
        body = sign_head(Ed25519PrivateKey.generate(), table.table_id, seq=before, chain=journal.chain, at=utc_now())
        head = table.journal_head(body, durable=False)
        assert head.seq == before + 1 and journal.durable_seq == before
        assert journal.head is not None and journal.head.read().seq == before  # type: ignore[union-attr]
        with changed:  # two passes of the publisher's pump since: the first has sent all it would
            assert changed.wait_for(lambda: sum(1 for last, _ in asked if last == head.seq) >= 2, WAIT_S)
        assert publisher.status()["sent"] == before, "a signed head not yet on disk was sent to the floor"
        assert head.seq not in entries_taken(subscriber)
        journal.flush()  # as the signer's worker thread does, then the loop:
        journal.made_durable(head.seq)
        assert journal.durable_seq == head.seq
        assert journal.head.read().seq == head.seq  # type: ignore[union-attr]
        assert publisher.wait_acked(head.seq, WAIT_S)
        assert subscriber.wait_for(lambda s: head.seq in entries_taken(s))
        # The next entry is committed (and fsync'd) as before, and sent at once.
        table.button("confirm", by="dealer")
        assert journal.durable_seq == journal.last_seq == head.seq + 1
        assert publisher.wait_acked(head.seq + 1, WAIT_S)
    finally:
        publisher.stop()
        subscriber.stop()
        journal.close()
