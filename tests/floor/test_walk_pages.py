"""The store's chain walk reads what it has not walked in bounded pages (store.WALK_MOST) and
decodes only the chain heads' bodies: a table whose mark jumps by a day is walked whole, a head
on any page checked, without holding the day in memory (issue 32: a consumer grew by 24-37 MB
while the store took catch-up pages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.floor import store as store_module
from controller.floor.store import StoredEntry, open_store
from controller.security.chainhead import fingerprint, public_hex, table_key

from .conftest import SITE, deal_rounds, make_table


def _plain(tmp_path: Path, table_id: str, rounds: int) -> list[StoredEntry]:
    """A table's entries, `rounds` rounds dealt, no head signed."""
    table = make_table(tmp_path / table_id, table_id)
    deal_rounds(table, rounds)
    return [StoredEntry(SITE, table_id, e.seq, "boot-1", e.at, e.round, e.kind, e.body) for e in table.journal.entries()]


def _journal(tmp_path: Path, heads: int) -> tuple[list[StoredEntry], str]:
    """A table's entries, `heads` rounds each closed by a signed chain head, and its key's fingerprint."""
    table = make_table(tmp_path / "state")
    key = table_key(tmp_path / "state" / "table.key")
    for _ in range(heads):
        deal_rounds(table, 1)
        table.sign_head(key)
    entries = [StoredEntry(SITE, "GS-01", e.seq, "boot-1", e.at, e.round, e.kind, e.body) for e in table.journal.entries()]
    return entries, fingerprint(public_hex(key))


def test_a_mark_that_jumps_is_walked_page_by_page_through_every_head(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "WALK_MOST", 3)
    entries, enrolled = _journal(tmp_path, 3)
    heads = [e.seq for e in entries if e.kind == "chain-head"]
    assert len(entries) > 4 * 3 and len(heads) == 3
    pages: list[int] = []
    read = store_module.FloorStore._json_rows

    def spied(self: store_module.FloorStore, sql: str, *args: object, **kwargs: object) -> list[list[object]]:
        rows = read(self, sql, *args, **kwargs)  # type: ignore[arg-type]
        if "CROSS JOIN LATERAL" in sql:  # the walk's read-back (PostgreSQL; SQLite's cursor gives a row at a time)
            pages.append(len(rows))
        return rows

    monkeypatch.setattr(store_module.FloorStore, "_json_rows", spied)
    store = open_store(store_url)
    try:
        store.enroll(SITE, "GS-01", enrolled, "test")
        store.add(entries[1:])  # all but the first: nothing contiguous, nothing walked
        assert store.history(SITE, "GS-01")["seq"] == 0
        store.add(entries[:1])  # the mark jumps to the end: the walk reads the rest back, 3 at a time
        assert store.history(SITE, "GS-01") == {"seq": entries[-1].seq, "chain": store.history(SITE, "GS-01")["chain"],
                                                "head_seq": heads[-1], "alerts": []}  # fmt: skip
        if store.dialect == "postgresql":
            assert len(pages) >= (len(entries) - 1) // 3 and max(pages) <= 3, pages
    finally:
        store.close()


def test_a_forged_head_on_a_later_page_is_the_floors_alert_and_the_walk_stops_before_it(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "WALK_MOST", 3)
    entries, enrolled = _journal(tmp_path, 3)
    last = max(n for n, e in enumerate(entries) if e.kind == "chain-head")
    forged = entries[last]
    entries[last] = StoredEntry(forged.site, forged.table, forged.seq, forged.boot, forged.at, forged.round,
                                forged.kind, {**forged.body, "chain": "f" * 32})  # fmt: skip
    store = open_store(store_url)
    try:
        store.enroll(SITE, "GS-01", enrolled, "test")
        store.add(entries[1:])
        store.add(entries[:1])
        assert store.alerts(SITE, "GS-01") == [(forged.seq, store.alerts(SITE, "GS-01")[0][1])]
        assert "signature is bad" in store.alerts(SITE, "GS-01")[0][1]
        assert store.history(SITE, "GS-01")["seq"] == forged.seq - 1
    finally:
        store.close()


def test_marks_of_several_tables_that_jump_together_are_read_back_a_page_at_a_time_each_entry_once(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two tables' marks jump in one batch (another consumer stored the rest): the read-back takes
    the tables in turn, each table's range cut to what fits a page of WALK_MOST, and gives each
    entry it walks once; both tables are walked whole. (What the pages cost PostgreSQL at a
    floor's size is the floor_scale benchmark's: the read-back cut by a LIMIT read every range
    whole first, and was planned as a parallel scan of the store.)"""
    monkeypatch.setattr(store_module, "WALK_MOST", 4)
    tables = {name: _plain(tmp_path, name, 3) for name in ("GS-01", "GS-02")}
    read = store_module.FloorStore._json_rows
    pages: list[list[tuple[str, int]]] = []

    def spied(self: store_module.FloorStore, sql: str, *args: object, **kwargs: object) -> list[list[object]]:
        rows = read(self, sql, *args, **kwargs)  # type: ignore[arg-type]
        if "CROSS JOIN LATERAL" in sql:
            pages.append([(str(r[1]), int(r[2])) for r in rows])  # type: ignore[call-overload]
        return rows

    monkeypatch.setattr(store_module.FloorStore, "_json_rows", spied)
    store = open_store(store_url)
    try:
        store.add([e for entries in tables.values() for e in entries[1:]])  # nothing contiguous yet
        store.add([entries[0] for entries in tables.values()])  # both marks jump to their ends
        for name, entries in tables.items():
            assert store.history(SITE, name)["seq"] == entries[-1].seq, name
            assert store.history(SITE, name)["alerts"] == [], name
        if store.dialect == "postgresql":
            read_back = [row for page in pages for row in page]
            assert max(len(page) for page in pages) <= 4, pages
            wanted = sorted((name, e.seq) for name, entries in tables.items() for e in entries)
            assert sorted(read_back) == wanted, pages  # each entry the walk needs, once
            assert [page[0][0] for page in pages] == sorted(page[0][0] for page in pages), pages  # in turn
    finally:
        store.close()
