"""No loss goes unseen: a deleted or damaged write-ahead file, a database restored from an older
copy, or a missing head file stops the table at start saying what was lost and what to do; the
numbers already written are never used again."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli.main import main
from controller.cli.synth import synthesize
from controller.journal.audit import audit
from controller.journal.log import Journal, JournalCorrupt
from controller.table import Table
from controller.testing import free_port

# A daemon killed with entries still in the write-ahead file (nothing closes or checkpoints it).
WRITER = """
import os, sys
from controller.journal.log import Journal
journal = Journal(sys.argv[1])
journal.checkpoint()
for n in range(int(sys.argv[2])):
    journal.append("card", {"card": "AS", "n": n}, round_no=1)
os._exit(0)
"""


def _killed_writer(path: Path, entries: int) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(path), str(entries)], check=True)


def test_a_deleted_wal_is_a_blocking_fault_naming_the_lost_entries_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    _killed_writer(path, 80)
    assert path.with_name("journal.sqlite3-wal").stat().st_size > 0
    path.with_name("journal.sqlite3-wal").unlink()  # a backup that copied only journal.sqlite3
    path.with_name("journal.sqlite3-shm").unlink()
    for _ in range(2):  # and again at the next start: nothing is ever quietly accepted
        with pytest.raises(JournalCorrupt) as refused:
            Journal(path)
        words = str(refused.value)
        assert "80 journal entries lost" in words and "entries 1 to 80 are gone" in words
        assert "-wal file beside it was deleted or damaged" in words
        assert "restore journal.sqlite3 together with its -wal and -shm files" in words
        assert "no sequence number already written is ever used again" in words
    # No copy holds them: a supervisor records the loss, and numbering goes on after the lost ones.
    assert (
        main(
            [
                "journal",
                "accept-loss",
                "--sim",
                "--state-dir",
                str(tmp_path),
                "--by",
                "Ann (supervisor)",
                "--reason",
                "SD card replaced; no backup after 03:00",
            ]
        )
        == 0
    )
    journal = Journal(path)
    assert journal.append("card", {"card": "KD"}).seq == 82  # 1-80 lost, 81 says so
    assert journal.check() == 2
    table = Table(journal, game="grand-slam", rules={})
    assert audit(journal, 5)[-1]["what"] == "accepted that journal entries 1 to 80 are lost for good"
    assert table.journal is journal and not table.blocked


def _frames_end(wal: bytes) -> int:
    """Where the write-ahead file's frames end: its file is kept longer (WAL_RESERVE), and what
    follows its last frame (zeros, or an earlier round's frames) has another salt than its header."""
    page = struct.unpack(">I", wal[8:12])[0]
    salts, end = wal[16:24], 32
    while end + 24 + page <= len(wal) and wal[end + 8 : end + 16] == salts:
        end += 24 + page
    return end


def test_one_damaged_byte_near_the_end_of_the_wal_is_caught_and_one_past_its_frames_changes_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite3"
    _killed_writer(path, 20)
    wal = path.with_name("journal.sqlite3-wal")
    kept = wal.read_bytes()
    end = _frames_end(kept)
    assert end < len(kept)  # the file is longer than its frames
    data = bytearray(kept)
    data[end + 100] ^= 0xFF  # past the last frame: no entry is there
    wal.write_bytes(bytes(data))
    reader = Journal(path, readonly=True)
    assert reader.last_seq == 20 and reader.check() == 20
    reader.close()
    data[end - 100] ^= 0xFF  # in the last frame: the last entry's commit
    wal.write_bytes(bytes(data))
    with pytest.raises(JournalCorrupt, match=r"1 journal entry lost: .* entries 20 to 20 are gone"):
        Journal(path)


def test_a_database_restored_from_an_older_copy_is_caught(tmp_path: Path) -> None:
    synthesize(tmp_path / "state", 5, seed=1).close()
    path = tmp_path / "state" / "journal.sqlite3"
    shutil.copy(path, tmp_path / "old.sqlite3")  # last night's backup
    more = synthesize(tmp_path / "state", 3, seed=2)
    written = more.last_seq
    more.close()
    shutil.copy(tmp_path / "old.sqlite3", path)
    with pytest.raises(JournalCorrupt, match=rf"entries \d+ to {written} are gone"):
        Journal(path)


def test_a_copy_of_another_journal_with_as_many_entries_is_caught(tmp_path: Path) -> None:
    synthesize(tmp_path / "a", 4, seed=1).close()
    synthesize(tmp_path / "b", 4, seed=9).close()
    a, b = Journal(tmp_path / "a" / "journal.sqlite3"), Journal(tmp_path / "b" / "journal.sqlite3")
    b.close()
    while a.last_seq < b.last_seq:
        a.append("button", {"button": "confirm", "by": "dealer"})
    a.close()
    shutil.copy(tmp_path / "b" / "journal.sqlite3", tmp_path / "a" / "journal.sqlite3")
    with pytest.raises(JournalCorrupt, match="is not the entry that was written"):
        Journal(tmp_path / "a" / "journal.sqlite3")


def test_a_missing_head_file_is_refused(tmp_path: Path) -> None:
    synthesize(tmp_path, 2, seed=1).close()
    (tmp_path / "journal.head").unlink()
    with pytest.raises(JournalCorrupt, match="the head file is missing"):
        Journal(tmp_path / "journal.sqlite3")


def test_the_head_file_follows_every_entry(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    for n in range(5):
        journal.append("card", {"card": "AS", "n": n})
    assert journal.head is not None
    mark = journal.head.read()
    assert mark is not None and (mark.seq, mark.hash) == (5, journal.chain)
    journal.close()
    assert Journal(tmp_path / "journal.sqlite3").append("card", {"card": "KD"}).seq == 6


def test_tablectl_run_on_a_journal_that_lost_entries_refuses_and_says_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    _killed_writer(path, 5)
    path.with_name("journal.sqlite3-wal").unlink()
    env = {"TABLECTL_DEALER_TOKEN": "d" * 24, "TABLECTL_SUPERVISOR_TOKEN": "s" * 24, "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "run",
            "--sim",
            "--state-dir",
            str(tmp_path),
            "--http",
            f"127.0.0.1:{free_port()}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert run.returncode == 78  # systemd does not restart into it (RestartPreventExitStatus)
    assert "cannot start" in run.stderr and "5 journal entries lost" in run.stderr and "What to do" in run.stderr


def test_a_backup_made_with_sqlites_online_backup_checks_clean_with_the_doctor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    synthesize(tmp_path / "state", 3, seed=1).close()
    (tmp_path / "check").mkdir()
    source = sqlite3.connect(tmp_path / "state" / "journal.sqlite3")
    copy = sqlite3.connect(tmp_path / "check" / "journal.sqlite3")
    source.backup(copy)  # what `sqlite3 ... ".backup FILE"` does (hardware/install.md, step 13)
    source.close()
    copy.close()
    main(["doctor", "--sim", "--state-dir", str(tmp_path / "check")])
    report = " ".join(capsys.readouterr().out.split())
    assert "entries; integrity, checksums, sequence, hash chain all pass (a copy" in report, report


def test_a_head_file_write_torn_by_a_power_cut_leaves_the_entry_before(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    for n in range(4):
        journal.append("card", {"card": "AS", "n": n})
    journal.close()
    head = tmp_path / "journal.head"
    assert head.stat().st_size == 512  # two fixed slots: writing it never needs free space
    data = bytearray(head.read_bytes())
    data[5] ^= 0xFF  # entry 4's slot (even seq: the first) half written
    head.write_bytes(bytes(data))
    reopened = Journal(tmp_path / "journal.sqlite3")  # entry 3's slot says 3: the database has 4, fine
    assert reopened.last_seq == 4 and reopened.append("card", {"card": "KD"}).seq == 5


def test_a_power_cut_losing_a_signed_heads_unsynced_head_file_write_is_recovered_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    import controller.journal.head as head_module

    path = tmp_path / "journal.sqlite3"
    journal = Journal(path)
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}, by="dealer")
    table.void(by="supervisor", reason="misdeal")
    before = (tmp_path / "journal.head").read_bytes()  # what the disk holds: the round's end, fsync'd
    synced: list[int] = []
    for call in ("fsync", "fdatasync"):  # either would make the head file durable on its own
        real = getattr(head_module.os, call)
        monkeypatch.setattr(head_module.os, call, lambda fd, real=real: (synced.append(fd), real(fd))[1])
    signed = table.sign_head(Ed25519PrivateKey.generate())
    assert synced == [], "the chain head's head file was fsync'd on its own"
    assert journal.head is not None and journal.head.read() == head_module.HeadMark(
        signed.seq, journal.chain, signed.at
    )
    journal.close()
    # The power cut: the head file's write was in the page cache only; the entry itself was committed.
    (tmp_path / "journal.head").write_bytes(before)
    reopened = Journal(path)  # the head one entry behind: harmless, as any head written late
    assert reopened.last_seq == signed.seq and reopened.check() == signed.seq
    assert reopened.head is not None and reopened.head.read() is not None
    assert reopened.head.read().seq == signed.seq  # brought up to the database at start
    nxt = reopened.append("card", {"card": "KD"})
    assert nxt.seq == signed.seq + 1
    reopened.close()
    # The next entry's head was fsync'd: a database that then loses entries is caught as before.
    shutil.copy(path, tmp_path / "old.sqlite3")
    again = Journal(path)
    again.append("card", {"card": "QD"})
    again.close()
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    shutil.copy(tmp_path / "old.sqlite3", path)
    with pytest.raises(JournalCorrupt, match=r"entries \d+ to \d+ are gone"):
        Journal(path)


def test_a_power_cut_before_a_signed_head_without_its_own_fsync_is_on_disk_starts_healthy_without_it(
    tmp_path: Path,
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from controller.journal.log import utc_now
    from controller.security.chainhead import sign_head

    state = tmp_path / "state"
    journal = Journal(state / "journal.sqlite3")
    table = Table(journal, game="grand-slam", rules={}, simulated=True)
    table.open_round({"seats": [{"seat": 1, "wagers": {"first": 10}}], "blind_seat": None}, by="dealer")
    table.void(by="supervisor", reason="misdeal")
    ended = journal.last_seq
    wal = state / "journal.sqlite3-wal"
    on_disk = wal.read_bytes()  # every entry so far fsync'd
    body = sign_head(Ed25519PrivateKey.generate(), table.table_id, seq=ended, chain=journal.chain, at=utc_now())
    head = table.journal_head(body, durable=False)  # committed, not fsync'd
    assert wal.read_bytes() != on_disk and journal.durable_seq == ended
    # The power cut: what the disk holds is the files as they were before the signed head's commit
    # (its WAL frames were in the page cache only); the head file was not written for it.
    cut = tmp_path / "after-the-cut"
    cut.mkdir()
    for name in ("journal.sqlite3", "journal.head"):
        shutil.copy(state / name, cut / name)
    (cut / "journal.sqlite3-wal").write_bytes(on_disk)
    journal.close()
    back = Journal(cut / "journal.sqlite3")  # no loss reported: nothing said it was written
    try:
        assert back.last_seq == ended and back.check() == ended
        again = back.append("button", {"button": "confirm", "by": "dealer"})
        assert again.seq == head.seq  # its number written again: no one outside the Pi had seen it
    finally:
        back.close()
