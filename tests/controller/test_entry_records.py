"""Every kind of entry the table writes reads back as a record of its own (issue 29 point 1: one
frozen record type per entry kind, matched, not string-compared): the record-only kinds too
(dealers' sign-in, rating sessions, installs, the accepted configuration, signed chain heads).
`OtherEntry` is left for kinds a later release might write."""

from __future__ import annotations

import ast
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.journal import entries as records
from controller.journal.log import Journal
from controller.security.chainhead import KIND as CHAIN_HEAD
from controller.table import Table, TableSetup, TableState, parse_entry
from controller.table.snapshots import snapshot_state

ROOT = Path(__file__).resolve().parents[2]


def _kinds_the_table_writes() -> set[str]:
    """The string literals `Table` commits as kinds (read from its source, so a new kind added
    there without a record fails here)."""
    tree = ast.parse((ROOT / "controller/table/table.py").read_text())
    kinds = {CHAIN_HEAD, "journal-restored"}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("_commit", "_roster_entry")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            kinds.add(node.args[0].value)
    kinds.update(("login", "camera-recalibrated"))  # `access(kind, ...)`: the two its type allows
    return kinds


def test_every_kind_the_table_writes_has_a_record_of_its_own() -> None:
    known = {cls.kind for cls in _records()}
    missing = _kinds_the_table_writes() - known
    assert not missing, f"kinds written by controller/table/table.py with no record in entries.py: {missing}"


def _records() -> list[type[records.TableEntry]]:
    found: list[type[records.TableEntry]] = []
    todo = list(records.TableEntry.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.kind and cls is not records.OtherEntry:
            found.append(cls)
    return found


def test_the_record_only_entries_a_table_writes_read_back_as_their_records(tmp_path: Path) -> None:
    table = Table(Journal(tmp_path / "journal.sqlite3"), game="grand-slam", rules={})
    try:
        table.dealer_list([{"id": "D7", "name": "Ann"}], by="super", reason="the evening shift")
        table.dealer_sign_in("d7", by="dealer")
        table.rating_session("open", 3, "P-0042", by="super")
        table.rating_session("close", 3, None, by="super")
        table.software_installed(
            {"action": "upgraded", "version": "0.2.0", "manifest_sha256": "ab" * 32, "by": "ops", "previous": "0.1.0"}
        )
        table.config_accepted({"file": "/etc/tablectl/table.toml", "sha256": "cd" * 32, "by": "super", "reason": "new"})
        table.sign_head(Ed25519PrivateKey.generate())
        table.dealer_sign_out(by="dealer")
        written = list(table.journal.entries())
    finally:
        table.journal.close()
    read = [parse_entry(entry) for entry in written]
    assert not [r for r in read if isinstance(r, records.OtherEntry)]
    assert [type(r).kind for r in read] == [e.kind for e in written]
    by_kind = {type(r).kind: r for r in read}
    assert isinstance(by_kind["dealer-in"], records.DealerSignedIn) and by_kind["dealer-in"].dealer == "D7"
    assert isinstance(by_kind["rating-open"], records.RatingOpened)
    assert (by_kind["rating-open"].place, by_kind["rating-open"].player) == (3, "P-0042")
    installed = by_kind["software-install"]
    assert isinstance(installed, records.SoftwareInstalled)
    assert (installed.action, installed.version, installed.previous) == ("upgraded", "0.2.0", "0.1.0")
    head = by_kind[CHAIN_HEAD]
    assert isinstance(head, records.ChainHeadSigned) and head.head_seq == head.seq - 1


def test_a_kind_from_a_later_release_still_reads_and_changes_nothing(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "journal.sqlite3")
    try:
        entry = journal.append("tip-jar", {"amount": 5}, None)
    finally:
        journal.close()
    record = parse_entry(entry)
    assert isinstance(record, records.OtherEntry) and record.name == "tip-jar"
    state = TableState.initial(TableSetup.of("grand-slam", {}))
    before = snapshot_state(state)
    state, effects = state.apply(record)
    assert effects == () and snapshot_state(state) == before
